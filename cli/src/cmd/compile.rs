//! `munch compile GRAMMAR --tokenizer TOK --masker M [-o FILE]`: build a masker and report its
//! cost.
//!
//! Prints one JSON line:
//! `{"masker","grammar","tokenizer","build_s","parser_s","masker_s","peak_rss_bytes","lexer_states","lr_states",...}`,
//! then the masker's own sizes where it has tables (the spanner: `token_classes`,
//! `realisable_spans`, `table_entries`, `table_bytes`, ...).
//! `build_s` is the time from the grammar's text to a ready masker: the parser (the grammar
//! loaded, its lexer DFA and LR automaton: `parser_s`) plus the masker's own tables (`masker_s`,
//! from the compiled grammar and the loaded vocabulary); loading the tokenizer is not counted (it
//! is shared by every masker and cached). `peak_rss_bytes` is the process's peak resident set
//! (`VmHWM`), so it includes the tokenizer; `null` where the system does not report it.
//!
//! `-o FILE` writes the compiled masker (`Compiled::save`), for maskers with an artifact format
//! (`wda`; for the others it is refused before any work, with exit code 2), then loads the bytes
//! written (`Compiled::load`) and adds `"artifact_bytes"` and `"load_s"` to the line: the file is checked
//! to load, and the cost of loading the masker is measured against `masker_s` (the parser, built
//! again for the load, is not counted in `load_s`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use munch::{Compiled, Config, MaskerKind};

use super::CliError;

/// Arguments of `munch compile`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: super::MaskArgs,
    /// The masker to build (trie, spanner, wda, oracle).
    #[arg(long)]
    masker: String,
    /// Write the compiled masker here (maskers with an artifact format only).
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// The most bytes a table masker's build may hold at once (the token spans' tables, then
    /// the spanner's tables or the wda's construction and tables; the vocabulary and parser
    /// not included); a build that needs more fails with an error naming the budget.
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<usize>,
    /// Build the wda on demand: the lexical side now, each automaton state the first time a
    /// mask reads it (in a cache of 256 MiB by default; with `--max-memory`, the lexical side
    /// and the cache together stay within it). With the trie: no
    /// token classes, the walk over every token (nothing built beyond the parser). Same masks.
    #[arg(long)]
    lazy: bool,
}

/// `compile`'s line, fields in the documented order.
#[derive(serde::Serialize)]
struct CompileLine<'a> {
    masker: &'a str,
    grammar: &'a str,
    tokenizer: &'a str,
    build_s: f64,
    parser_s: f64,
    masker_s: f64,
    peak_rss_bytes: Option<u64>,
    lexer_states: usize,
    lr_states: usize,
    #[serde(flatten)]
    stats: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    load_s: Option<f64>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let kind: MaskerKind = args.masker.parse()?;
    if let Some(path) = &args.output {
        if args.lazy {
            return Err(format!(
                "a wda built on demand (--lazy) has no artifact: nothing can be written to {}",
                path.display()
            )
            .into());
        }
        if !kind.has_artifact() {
            return Err(format!(
                "masker `{kind}` has no artifact format: nothing can be written to {}",
                path.display()
            )
            .into());
        }
    }
    let (grammar, vocab) = args.input.load()?;
    // The masker asked for, or an error: a measurement of another masker would mislead.
    let config = Config::new()
        .parser(args.input.grammar.parser_config())
        .masker(kind)
        .fallback(None)
        .max_memory(args.max_memory)
        .lazy(args.lazy);
    let compiled = super::compile(&grammar, Arc::clone(&vocab), &config)?;
    let stats = compiled.stats();
    let mut line = CompileLine {
        masker: compiled.masker_kind().name(),
        grammar: &args.input.grammar.grammar,
        tokenizer: vocab.name(),
        build_s: (stats.parser_time + stats.masker_time).as_secs_f64(),
        parser_s: stats.parser_time.as_secs_f64(),
        masker_s: stats.masker_time.as_secs_f64(),
        peak_rss_bytes: munch::stats::peak_rss_bytes(),
        lexer_states: stats.lexer_states,
        lr_states: stats.lr_states,
        stats: stats.masker.clone(),
        artifact_bytes: None,
        load_s: None,
    };
    if let Some(path) = &args.output {
        // The artifact is made in memory, then written: a failed write (a full disk, a folder,
        // a path without permission) is named as one, and what is loaded back is what was
        // written, wherever it went (`-o /dev/null` included).
        let mut bytes = Vec::new();
        compiled.save(&mut bytes)?;
        std::fs::write(path, &bytes)
            .map_err(|e| format!("cannot write the artifact to {}: {e}", path.display()))?;
        let loaded = Compiled::load(
            &grammar,
            Arc::clone(&vocab),
            kind,
            &mut bytes.as_slice(),
            &config,
        )?;
        line.load_s = Some(loaded.stats().masker_time.as_secs_f64());
        line.artifact_bytes = Some(bytes.len() as u64);
    }
    println!(
        "{}",
        serde_json::to_string(&line).expect("the line serializes")
    );
    Ok(ExitCode::SUCCESS)
}
