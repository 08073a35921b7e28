//! What the examples share: loading a grammar and a vocabulary from the command line.

use std::sync::Arc;

use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig};
use munch_vocab::Vocabulary;

/// The parser of `grammar` (a `.lark` file's path, or a SynCode grammar's name: json, sql, go,
/// java, ...) and the vocabulary of `tokenizer` (a `tokenizer.json` path or a tokenizer's
/// name: llama3, gemma3, ...). Exits with a message on any error.
pub fn parser_and_vocab(grammar: &str, tokenizer: &str) -> (Arc<Parser>, Arc<Vocabulary>) {
    let source = if std::path::Path::new(grammar).exists() {
        std::fs::read_to_string(grammar).unwrap_or_else(|e| fail(&format!("{grammar}: {e}")))
    } else {
        munch_grammars::syncode::grammar(grammar)
            .unwrap_or_else(|e| fail(&format!("SynCode grammar {grammar}: {e}")))
    };
    let grammar = load(source.as_bytes(), &LoadConfig::default())
        .unwrap_or_else(|e| fail(&format!("grammar: {e}")));
    let parser = Parser::new(&grammar, &ParserConfig::default())
        .unwrap_or_else(|e| fail(&format!("parser: {e}")));
    let vocab = Vocabulary::load(tokenizer)
        .unwrap_or_else(|e| fail(&format!("tokenizer {tokenizer}: {e}")));
    (Arc::new(parser), Arc::new(vocab))
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}
