//! Prints the Lark grammar a JSON Schema compiles to: `cargo run -p munch-schema --example lark --
//! SCHEMA.json [--compact]` (the default profile unless `--compact`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: lark SCHEMA.json [--compact]");
        return ExitCode::from(2);
    };
    let options = match args.next().as_deref() {
        Some("--compact") => munch_schema::SchemaOptions::compact(),
        _ => munch_schema::SchemaOptions::default(),
    };
    let compiled = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| munch_schema::compile_str(&text, &options).map_err(|e| e.to_string()));
    match compiled {
        Ok(compiled) => {
            print!("{}", compiled.lark());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{path}: {err}");
            ExitCode::from(2)
        }
    }
}
