//! The run's inputs: SynCode's grammars (with their adapted copies), the texts of each
//! language, and their token sequences under a tokenizer within the step budget.

use std::path::{Path, PathBuf};

use munch_vocab::Vocabulary;

use super::adapt::{adapt, Adapted};
use super::job::{encode_hex, Text, VocabFile};
use munch_conformance::corpus::{self, Language};

/// The grammars of the default run.
pub const GRAMMARS: &[&str] = &["json", "sql", "go", "java"];
/// The tokenizers of the default run, 32k to 262k ids.
pub const TOKENIZERS: &[&str] = &["llama2", "llama3", "qwen3", "gemma3"];

/// A grammar with its adapted copy.
#[derive(Clone, Debug)]
pub struct GrammarInput {
    /// SynCode's name (`json`).
    pub name: String,
    /// The language of its texts.
    pub language: Language,
    /// SynCode's text.
    pub original: String,
    /// The adapted copy, or why there is none.
    pub adapted: Result<Adapted, String>,
}

/// SynCode's grammar `name` (fetched once into the cache) and its adapted copy.
pub fn grammar(name: &str) -> Result<GrammarInput, String> {
    let language = match name {
        "json" => Language::Json,
        "sql" => Language::Sql,
        "go" => Language::Go,
        "java" => Language::Java,
        other => {
            return Err(format!(
                "no texts for grammar {other:?}: use json, sql, go, java"
            ))
        }
    };
    let original = munch_grammars::syncode::grammar(name).map_err(|e| e.to_string())?;
    let adapted = adapt(&original).map_err(|e| e.to_string());
    Ok(GrammarInput {
        name: name.to_string(),
        language,
        original,
        adapted,
    })
}

/// Up to `max_files` texts of `language`: munch's JSON and SQL corpora, Go and Java files from
/// the conformance corpus (Debian's sources, at most `max_bytes` each).
pub fn text_files(
    language: Language,
    max_files: usize,
    max_bytes: u64,
) -> Result<Vec<PathBuf>, String> {
    match language {
        Language::Json => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars/corpus/json");
            let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            // Numeric order (0.json, 1.json, …, 10.json).
            all.sort_by_key(|p| {
                let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                (stem.parse::<u64>().unwrap_or(u64::MAX), p.clone())
            });
            all.truncate(max_files);
            Ok(all)
        }
        other => corpus::files(other, max_files, max_bytes).map_err(|e| e.to_string()),
    }
}

/// The first `n` of `files` that munch's parser accepts under grammar `text` (the reference
/// texts: an engine's refusal then says something about the engine), and how many were passed
/// over.
pub fn accepted_by_munch(
    text: &str,
    files: &[PathBuf],
    n: usize,
) -> Result<(Vec<PathBuf>, usize), String> {
    use munch_glr::parser::{Parser, ParserConfig, ParserState};
    use std::sync::Arc;
    let config = munch_glr::lark::LoadConfig::default();
    let grammar = munch_glr::lark::load(text.as_bytes(), &config).map_err(|e| e.to_string())?;
    let parser =
        Arc::new(Parser::new(&grammar, &ParserConfig::default()).map_err(|e| e.to_string())?);
    let mut kept = Vec::new();
    let mut skipped = 0;
    for file in files {
        if kept.len() == n {
            break;
        }
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut state = ParserState::new(Arc::clone(&parser));
        if state.commit_bytes(&bytes).is_ok() && state.is_accepting() {
            kept.push(file.clone());
        } else {
            skipped += 1;
        }
    }
    Ok((kept, skipped))
}

/// The step budget of one (grammar, tokenizer) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The most tokens taken from one text (a longer one is cut and marked truncated).
    pub max_tokens_per_text: usize,
    /// The most tokens over all texts (texts past it are left out; the last one may be cut).
    pub max_tokens: usize,
}

/// The token sequences of `files` under `vocab`, within `budget`.
pub fn tokenize(
    vocab: &Vocabulary,
    files: &[PathBuf],
    budget: Budget,
) -> Result<Vec<Text>, String> {
    let mut out = Vec::new();
    let mut total = 0;
    for file in files {
        if total >= budget.max_tokens {
            break;
        }
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut tokens: Vec<u32> = vocab
            .encode(&text)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .iter()
            .map(|t| t.as_u32())
            .collect();
        let cap = budget.max_tokens_per_text.min(budget.max_tokens - total);
        let truncated = tokens.len() > cap;
        tokens.truncate(cap);
        total += tokens.len();
        out.push(Text {
            name: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            tokens,
            truncated,
            expect_valid: None,
        });
    }
    Ok(out)
}

/// The vocabulary file every engine reads.
pub fn vocab_file(vocab: &Vocabulary) -> VocabFile {
    let len = vocab.len();
    VocabFile {
        name: vocab.name().to_string(),
        tokens: (0..len)
            .map(|i| {
                vocab
                    .token_bytes(munch_vocab::TokenId::from_usize(i))
                    .map(encode_hex)
            })
            .collect(),
        eos: vocab.eos().iter().map(|t| t.as_u32()).collect(),
        specials: (0..len)
            .filter_map(|i| {
                let id = munch_vocab::TokenId::from_usize(i);
                vocab.special_name(id).map(|n| (id.as_u32(), n.to_string()))
            })
            .collect(),
    }
}
