//! Prints the Lark grammar a JSON Schema compiles to: `cargo run -p munch-schema --example lark --
//! SCHEMA.json [--flexible]` (the compact profile by default).

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: lark SCHEMA.json [--flexible]");
    let options = match args.next().as_deref() {
        Some("--flexible") => munch_schema::SchemaOptions::default(),
        _ => munch_schema::SchemaOptions::compact(),
    };
    let text = std::fs::read_to_string(&path).expect("readable schema file");
    match munch_schema::compile_str(&text, &options) {
        Ok(compiled) => print!("{}", compiled.lark()),
        Err(err) => {
            eprintln!("{path}: {err}");
            std::process::exit(2);
        }
    }
}
