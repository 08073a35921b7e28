//! `munch check GRAMMAR [--conflicts]`.

use std::process::ExitCode;

use munch::glr::parser::{Parser, ParserConfig};
use munch::Grammar;

use super::CliError;

/// Arguments of `munch check`.
#[derive(clap::Args)]
pub struct Args {
    /// A Lark grammar: a file, `builtin:NAME` or `syncode:NAME`.
    grammar: String,
    /// Also print every LR conflict (state, lookahead, competing items), before the JSON line.
    #[arg(long)]
    conflicts: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    // The loaded grammar's own sizes are printed even when its parser cannot be built, so the
    // grammar is loaded once here and the parser built from it (what `Grammar::build_parser`
    // does in one call).
    let grammar = Grammar::from_arg(&args.grammar)?.load()?;
    let mut line = serde_json::json!({
        "grammar": args.grammar,
        "terminals": grammar.terminal_len(),
        "ignored": grammar.terminals.iter().filter(|t| t.ignored).count(),
        "rules": grammar.rule_len(),
        "patternless": grammar
            .terminals_without_pattern()
            .map(|(t, _)| grammar.terminal(t).name.clone())
            .collect::<Vec<_>>(),
    });
    match Parser::new(&grammar, &ParserConfig::default()) {
        Ok(parser) => {
            if args.conflicts {
                print!("{}", parser.tables().render_conflicts());
            }
            line["lexer_states"] = parser.lexer().state_len().into();
            line["productions"] = parser.cfg().productions().len().into();
            line["lr_states"] = parser.lr_state_len().into();
            line["conflicts"] = parser.conflicts().len().into();
        }
        // The grammar loads but cannot be parsed with (Python's `%declare`d indentation
        // terminals, a budget): say so in the line rather than failing the check.
        Err(e) => line["parser_error"] = e.to_string().into(),
    }
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}
