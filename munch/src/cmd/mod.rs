//! One module per subcommand. Each `run` returns the exit code, or a usage/input error that
//! `main` prints and turns into exit code 2.

pub mod check;
pub mod compile;
pub mod demo;
pub mod generate;
pub mod parse;
pub mod trace;
pub mod vocab;

/// An error that ends a command with exit code 2 (bad usage, bad grammar, unreadable input).
pub type CliError = Box<dyn std::error::Error>;
