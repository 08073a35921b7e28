//! `munch vocab TOKENIZER`.

use std::process::ExitCode;

use munch::Vocabulary;

use super::CliError;

/// Arguments of `munch vocab`.
#[derive(clap::Args)]
pub struct Args {
    /// A `tokenizer.json` path, or one of llama2, llama3, qwen3, gemma3, gptoss.
    tokenizer: String,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let vocab = Vocabulary::load(&args.tokenizer)?;
    let line = serde_json::json!({
        "tokenizer": vocab.name(),
        "tokens": vocab.len(),
        "text_tokens": vocab.text_tokens().count(),
        "eos": vocab.eos().iter().map(|t| t.as_u32()).collect::<Vec<_>>(),
        "max_token_bytes": vocab.max_token_bytes(),
        "trie_nodes": vocab.trie().node_len(),
    });
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}
