//! `munch parse GRAMMAR FILE...`: one JSON line per file, then a summary line.
//!
//! Exit code 0 iff every file is accepted, 1 if any is rejected, 2 for usage or grammar errors.

use std::process::ExitCode;

use munch::parse::{line_column, parse_text};

use super::CliError;

/// Arguments of `munch parse`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    grammar: super::GrammarArg,
    /// Files to parse.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
    /// The most bytes read from each file; a longer file (or an endless one, such as
    /// /dev/zero) is an error naming this limit, read no further.
    #[arg(long, default_value_t = 64 << 20)]
    max_input_bytes: u64,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let parser = args
        .grammar
        .named()?
        .build_parser(&args.grammar.parser_config())?;
    let mut accepted = 0;
    for file in &args.files {
        let verdict = match super::read_bounded(file, args.max_input_bytes) {
            Ok(text) => parse_text(&parser, &text).map_err(|r| {
                let (line, column) = line_column(&text, r.offset);
                serde_json::json!({"line": line, "column": column, "message": r.message})
            }),
            Err(e) => Err(serde_json::json!({"line": 0, "column": 0, "message": e})),
        };
        accepted += usize::from(verdict.is_ok());
        let line = serde_json::json!({
            "file": file.display().to_string(),
            "accepted": verdict.is_ok(),
            "error": verdict.err(),
        });
        println!("{line}");
    }
    println!(
        "{}",
        serde_json::json!({"accepted": accepted, "total": args.files.len()})
    );
    Ok(if accepted == args.files.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
