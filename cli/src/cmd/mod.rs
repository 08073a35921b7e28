//! One module per subcommand. Each `run` returns the exit code, or a usage/input error that
//! `main` prints and turns into exit code 2.

use std::sync::Arc;

use munch::{Compiled, Config, Grammar, Vocabulary};

pub mod check;
pub mod compile;
pub mod demo;
pub mod generate;
pub mod parse;
pub mod trace;
pub mod vocab;

/// An error that ends a command with exit code 2 (bad usage, bad grammar, unreadable input).
pub type CliError = Box<dyn std::error::Error>;

/// Compiles `grammar` for `vocab` as `config` says; when the fallback masker was built instead
/// of the one asked for, says so on stderr.
pub fn compile(
    grammar: &Grammar,
    vocab: Arc<Vocabulary>,
    config: &Config,
) -> Result<Compiled, CliError> {
    let compiled = Compiled::new(grammar, vocab, config)?;
    if let Some(fell) = compiled.fell_back() {
        eprintln!("munch: {fell}");
    }
    Ok(compiled)
}
