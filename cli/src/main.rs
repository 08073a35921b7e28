//! The `munch` command-line tool.

// One unsafe block (SIGPIPE's disposition, in `main`), with its `SAFETY:` comment.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// See `munch::alloc`: mimalloc, set up by `configure` first thing in `main`.
#[global_allocator]
static ALLOCATOR: munch::alloc::MiMalloc = munch::alloc::MiMalloc;

/// Grammar-constrained decoding: token masks for LLM output under a Lark grammar.
#[derive(Parser)]
#[command(name = "munch", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load a grammar and print its sizes as one JSON line.
    Check(cmd::check::Args),
    /// Load a tokenizer and print its sizes as one JSON line.
    Vocab(cmd::vocab::Args),
    /// Parse files with a grammar: one JSON line per file, then a summary.
    Parse(cmd::parse::Args),
    /// Teacher-force files through maskers: compare masks (and the oracle), time them.
    Trace(cmd::trace::Args),
    /// Build a masker and print its build time, peak memory and sizes as one JSON line.
    Compile(cmd::compile::Args),
    /// Sample random texts under the grammar: one JSON string per line, then a summary.
    Generate(cmd::generate::Args),
    /// The main job: constrained generation with a real grammar and tokenizer.
    Demo(cmd::demo::Args),
}

fn main() -> ExitCode {
    munch::alloc::configure();
    // Rust ignores SIGPIPE, so printing to a reader that has gone (`munch check G --conflicts |
    // head`) would panic; the default action ends the process quietly, as Unix tools do.
    #[cfg(unix)]
    // SAFETY: called first thing on the main thread, before any other thread exists; setting
    // a signal's disposition to its default touches no Rust state.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Vocab(args) => cmd::vocab::run(args),
        Command::Parse(args) => cmd::parse::run(args),
        Command::Trace(args) => cmd::trace::run(args),
        Command::Compile(args) => cmd::compile::run(args),
        Command::Generate(args) => cmd::generate::run(args),
        Command::Demo(args) => cmd::demo::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
