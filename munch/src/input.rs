//! Resolving a user's grammar and tokenizer arguments.

use std::fmt;
use std::path::Path;

use munch_glr::grammar::Grammar;
use munch_glr::lark::{self, GrammarError, LoadConfig};

/// A grammar's source text and the name to report it under.
#[derive(Clone, Debug)]
pub struct GrammarSource {
    /// A file path, `builtin:NAME` or `syncode:NAME`.
    pub name: String,
    /// The grammar text, as bytes (it may be invalid UTF-8: the loader reports that).
    pub text: Vec<u8>,
}

/// Why a grammar argument could not be resolved or loaded.
#[derive(Debug)]
pub enum InputError {
    /// The argument names no file, built-in grammar or SynCode grammar.
    NotFound(String),
    /// Reading or fetching failed.
    Io(String),
    /// The grammar text is invalid.
    Grammar(Box<GrammarError>),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::NotFound(arg) => write!(
                f,
                "no grammar {arg:?}: give a file path, `builtin:NAME` ({}) or `syncode:NAME` ({})",
                munch_grammars::BUILTIN
                    .iter()
                    .map(|g| g.name)
                    .collect::<Vec<_>>()
                    .join(", "),
                munch_grammars::syncode::NAMES.join(", ")
            ),
            InputError::Io(message) => f.write_str(message),
            InputError::Grammar(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for InputError {}

/// The grammar text for `arg`: an existing file, `builtin:NAME` (munch's own, also the bare name
/// when no such file exists) or `syncode:NAME` (fetched once into the cache).
pub fn grammar_source(arg: &str) -> Result<GrammarSource, InputError> {
    let path = Path::new(arg);
    if path.is_file() {
        let text = std::fs::read(path).map_err(|e| InputError::Io(format!("{arg}: {e}")))?;
        return Ok(GrammarSource {
            name: arg.to_string(),
            text,
        });
    }
    if let Some(name) = arg.strip_prefix("syncode:") {
        let text =
            munch_grammars::syncode::grammar(name).map_err(|e| InputError::Io(e.to_string()))?;
        return Ok(GrammarSource {
            name: arg.to_string(),
            text: text.into_bytes(),
        });
    }
    let name = arg.strip_prefix("builtin:").unwrap_or(arg);
    match munch_grammars::builtin(name) {
        Some(g) => Ok(GrammarSource {
            name: format!("builtin:{}", g.name),
            text: g.source.as_bytes().to_vec(),
        }),
        None => Err(InputError::NotFound(arg.to_string())),
    }
}

/// Loads the grammar named by `arg` (see [`grammar_source`]).
pub fn load_grammar(arg: &str) -> Result<Grammar, InputError> {
    let source = grammar_source(arg)?;
    let config = LoadConfig {
        file_name: source.name.clone(),
        ..LoadConfig::default()
    };
    lark::load(&source.text, &config).map_err(|e| InputError::Grammar(Box::new(e)))
}
