//! `munch check GRAMMAR [--conflicts]`: the grammar's sizes as one JSON line; exit code 2 when
//! the grammar cannot be loaded or its parser cannot be built (the line then says why).

use std::process::ExitCode;

use munch::glr::parser::Parser;

use super::CliError;

/// Arguments of `munch check`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    grammar: super::GrammarArg,
    /// Also print every LR conflict (state, lookahead, competing items), before the JSON line.
    #[arg(long)]
    conflicts: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    // The loaded grammar's own sizes are printed even when its parser cannot be built, so the
    // grammar is loaded once here and the parser built from it (what `Grammar::build_parser`
    // does in one call).
    let source = args.grammar.named()?;
    let grammar = source.load()?;
    let mut line = serde_json::json!({
        "grammar": args.grammar.grammar,
        "terminals": grammar.terminal_len(),
        "ignored": grammar.terminals.iter().filter(|t| t.ignored).count(),
        "rules": grammar.rule_len(),
        "patternless": grammar
            .terminals_without_pattern()
            .map(|(t, _)| grammar.terminal(t).name.clone())
            .collect::<Vec<_>>(),
    });
    let mut code = ExitCode::SUCCESS;
    let config = source.parser_config(&args.grammar.parser_config());
    match Parser::new(&grammar, &config) {
        Ok(parser) => {
            if args.conflicts {
                print!("{}", parser.tables().render_conflicts());
            }
            line["lexer_states"] = parser.lexer().state_len().into();
            line["stand_ins"] = parser.lexer().stand_ins().len().into();
            // Literals read as copies of a shorter one where the parser cannot take them.
            line["split_literals"] = parser
                .split_literals()
                .iter()
                .map(|s| {
                    format!(
                        "{} = {} x{}",
                        parser.terminal_name(s.long),
                        parser.terminal_name(s.short),
                        s.copies
                    )
                })
                .collect::<Vec<_>>()
                .into();
            line["productions"] = parser.cfg().productions().len().into();
            line["lr_states"] = parser.lr_state_len().into();
            line["conflicts"] = parser.conflict_len().into();
        }
        // The grammar loads but cannot be parsed with (a `%declare`d terminal nothing
        // produces, a budget): the line says why, and the check fails as `parse` would.
        Err(e) => {
            line["parser_error"] = source.parser_error(&grammar, e).to_string().into();
            code = ExitCode::from(2);
        }
    }
    println!("{line}");
    Ok(code)
}
