//! The errors of the front door: [`CompileError`] (making a [`crate::Compiled`]) and
//! [`MatcherError`] (a [`crate::Matcher`]'s calls). Each is an opaque struct with a public
//! kind, as in regex-automata, so that callers can match on what went wrong and print the rest.

use std::fmt;

use munch_glr::lark::GrammarError;
use munch_glr::parser::{CommitError, ParserBuildError, ParserBuildErrorKind};
use munch_vocab::{TokenId, VocabError};

use crate::compiled::MaskerKind;

/// Why a grammar could not be compiled for a vocabulary.
#[derive(Debug)]
pub struct CompileError {
    kind: CompileErrorKind,
}

/// The reason behind a [`CompileError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum CompileErrorKind {
    /// No file, built-in or SynCode grammar has this name.
    UnknownGrammar(String),
    /// Reading or fetching a file failed.
    Io(String),
    /// The grammar text is invalid (located: `file:line:column`, the line and a caret).
    Grammar(Box<GrammarError>),
    /// A JSON Schema or regex constraint that cannot be compiled exactly (naming the keyword and
    /// its JSON pointer), or is malformed.
    Schema(munch_schema::SchemaError),
    /// The grammar loads but its parser cannot be built (a budget, a terminal without pattern).
    Parser(ParserBuildError),
    /// A JSON Schema's grammar whose lexer cannot be built within its budgets: one terminal's
    /// pattern passes one (a long `maxLength`), or the strings together make too many states
    /// (counted strings beside formats): the subschemas those strings come from.
    SchemaLexer {
        /// The schema's name (`schema:FILE`, `<schema>`).
        schema: String,
        /// The subschemas: the one the terminal was written for, or, for a budget of the
        /// whole lexer, every one whose strings some keyword shapes (their JSON pointers and
        /// those keywords), those that count characters first, then those a pattern or
        /// format spells.
        origins: Vec<munch_schema::TerminalOrigin>,
        /// The parser's error.
        source: Box<ParserBuildError>,
    },
    /// The tokenizer could not be loaded.
    Vocabulary(VocabError),
    /// No masker has this name (`trie`, `spanner`, `wda`, `oracle`).
    UnknownMasker(String),
    /// The masker exists but its cargo feature is off in this build.
    MaskerNotCompiled {
        /// The masker's name.
        name: &'static str,
    },
    /// The masker's build failed (a budget, a grammar shape it does not support), and there was
    /// no fallback, or the fallback failed too.
    Build {
        /// The masker.
        masker: MaskerKind,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The masker's build failed and so did its fallback's: both errors, in the order tried.
    FallbackFailed {
        /// Why the masker asked for was not built.
        wanted: Box<CompileError>,
        /// Why the fallback was not built either.
        fallback: Box<CompileError>,
    },
    /// The masker has no artifact format (only the wda has one).
    NoArtifact(MaskerKind),
    /// An artifact could not be written or read back (corrupt, or made for another grammar or
    /// vocabulary).
    Artifact(Box<dyn std::error::Error + Send + Sync>),
}

impl CompileError {
    pub(crate) fn new(kind: CompileErrorKind) -> Self {
        CompileError { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &CompileErrorKind {
        &self.kind
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CompileErrorKind::UnknownGrammar(arg) => {
                let builtin: Vec<&str> = munch_grammars::BUILTIN.iter().map(|g| g.name).collect();
                write!(
                    f,
                    "no grammar {arg:?}: give a file path, `schema:FILE.json`, `regex:PATTERN`, `builtin:NAME` ({})",
                    builtin.join(", ")
                )?;
                #[cfg(feature = "syncode")]
                write!(
                    f,
                    " or `syncode:NAME` ({})",
                    munch_grammars::syncode::NAMES.join(", ")
                )?;
                Ok(())
            }
            CompileErrorKind::Io(message) => f.write_str(message),
            CompileErrorKind::Grammar(e) => e.fmt(f),
            CompileErrorKind::Schema(e) => e.fmt(f),
            // A located error starts with its `file:line:column`.
            CompileErrorKind::Parser(e) if e.span().is_some() => e.fmt(f),
            CompileErrorKind::Parser(e) => write!(f, "the grammar's parser: {e}"),
            CompileErrorKind::SchemaLexer {
                schema,
                origins,
                source,
            } => {
                // A few subschemas are named; the kind holds every one.
                const SHOWN: usize = 6;
                let mut at: Vec<String> = origins
                    .iter()
                    .take(SHOWN)
                    .map(|o| {
                        let keywords = match o.keywords.as_slice() {
                            [] => "the subschema".to_string(),
                            keywords => keywords
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", "),
                        };
                        format!("{keywords} at #{}", o.pointer)
                    })
                    .collect();
                if origins.len() > SHOWN {
                    at.push(format!("{} more", origins.len() - SHOWN));
                }
                let whose = if origins.len() == 1 { "its" } else { "their" };
                // The parser's error without the generated text's line and column.
                let why = match source.kind() {
                    ParserBuildErrorKind::Lexer(e) => e.to_string(),
                    _ => source.to_string(),
                };
                write!(
                    f,
                    "{schema}: {}: the lexer of {whose} strings exceeds munch's budgets: {why}",
                    at.join("; ")
                )
            }
            CompileErrorKind::Vocabulary(e) => e.fmt(f),
            CompileErrorKind::UnknownMasker(name) => write!(
                f,
                "unknown masker `{name}`: the maskers are {}",
                MaskerKind::ALL
                    .iter()
                    .map(|k| format!("`{}`", k.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            CompileErrorKind::MaskerNotCompiled { name } => write!(
                f,
                "masker `{name}` is not compiled in: rebuild munch with `--features {name}`"
            ),
            CompileErrorKind::Build { masker, source } => {
                write!(f, "masker `{masker}` could not be built: {source}")
            }
            CompileErrorKind::FallbackFailed { wanted, fallback } => {
                write!(f, "{wanted}; then the fallback: {fallback}")
            }
            CompileErrorKind::NoArtifact(masker) => {
                write!(
                    f,
                    "masker `{masker}` has no artifact format (the wda has one)"
                )
            }
            CompileErrorKind::Artifact(e) => write!(f, "artifact: {e}"),
        }
    }
}

impl std::error::Error for CompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CompileErrorKind::Grammar(e) => Some(e.as_ref()),
            CompileErrorKind::Schema(e) => Some(e),
            CompileErrorKind::Parser(e) => Some(e),
            CompileErrorKind::SchemaLexer { source, .. } => Some(source.as_ref()),
            CompileErrorKind::Vocabulary(e) => Some(e),
            CompileErrorKind::Build { source, .. } => Some(source.as_ref()),
            CompileErrorKind::FallbackFailed { wanted, .. } => Some(wanted.as_ref()),
            CompileErrorKind::Artifact(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<VocabError> for CompileError {
    fn from(e: VocabError) -> Self {
        CompileError::new(CompileErrorKind::Vocabulary(e))
    }
}

/// Why a [`crate::Matcher`] refused a call. The matcher is unchanged by a refused call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatcherError {
    kind: MatcherErrorKind,
}

/// The reason behind a [`MatcherError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatcherErrorKind {
    /// The id is not below the vocabulary's size.
    UnknownToken {
        /// The id given.
        token: u32,
        /// The vocabulary's size.
        vocab_len: usize,
    },
    /// The token is a special token (no text) and not a stop token: never allowed.
    SpecialToken(TokenId),
    /// The token's text cannot continue the text so far (it is not in the mask), or a stop
    /// token came where the text is not a sentence.
    Rejected {
        /// The token (`None` for [`crate::Matcher::accept_bytes`]).
        token: Option<TokenId>,
        /// Why, as the parser says it (the byte that failed, what was expected).
        reason: String,
    },
    /// A stop token was accepted: only `rollback` and `reset` are accepted now.
    Terminated,
    /// A commit budget of the parser was exceeded (`max_heads`, `max_nodes_per_step`).
    Budget(String),
    /// `rollback(n)` asked for more steps than were accepted.
    RollbackTooFar {
        /// Steps asked to undo.
        requested: usize,
        /// Steps that can be undone.
        available: usize,
    },
    /// `rollback(n)` reached past the steps the parser keeps (its budget `max_rollback`).
    RollbackPastLimit {
        /// Steps asked to undo.
        requested: usize,
        /// Steps that can be undone.
        available: usize,
        /// The budget `max_rollback`.
        limit: usize,
    },
    /// A bitmask row is shorter than the vocabulary needs.
    BitmaskTooShort {
        /// Words given.
        words: usize,
        /// Words needed: `ceil(vocab_len / 32)`.
        needed: usize,
    },
    /// A batch call's shapes do not agree (rows, indices, tokens).
    Batch(String),
}

impl MatcherError {
    pub(crate) fn new(kind: MatcherErrorKind) -> Self {
        MatcherError { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &MatcherErrorKind {
        &self.kind
    }

    pub(crate) fn from_commit(token: Option<TokenId>, e: CommitError) -> Self {
        use munch_glr::parser::CommitErrorKind as C;
        MatcherError::new(match e.kind() {
            C::Budget { .. } => MatcherErrorKind::Budget(e.to_string()),
            C::NotText(t) => MatcherErrorKind::SpecialToken(*t),
            _ => MatcherErrorKind::Rejected {
                token,
                reason: e.to_string(),
            },
        })
    }
}

impl fmt::Display for MatcherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            MatcherErrorKind::UnknownToken { token, vocab_len } => write!(
                f,
                "token id {token} is out of range: the vocabulary has {vocab_len} tokens"
            ),
            MatcherErrorKind::SpecialToken(t) => {
                write!(f, "token {t} is a special token and not a stop token")
            }
            MatcherErrorKind::Rejected { token, reason } => match token {
                Some(t) => write!(f, "token {t} is not allowed here: {reason}"),
                None => write!(f, "the bytes are not allowed here: {reason}"),
            },
            MatcherErrorKind::Terminated => f.write_str(
                "the matcher is terminated (a stop token was accepted): only rollback and reset \
                 are accepted",
            ),
            MatcherErrorKind::Budget(e) => f.write_str(e),
            MatcherErrorKind::RollbackTooFar {
                requested,
                available,
            } => write!(
                f,
                "cannot roll back {requested} steps: {available} were accepted"
            ),
            MatcherErrorKind::RollbackPastLimit {
                requested,
                available,
                limit,
            } => write!(
                f,
                "cannot roll back {requested} steps: the last {available} are kept (budget \
                 `max_rollback` ({limit}))"
            ),
            MatcherErrorKind::BitmaskTooShort { words, needed } => write!(
                f,
                "the bitmask row has {words} words; the vocabulary needs {needed}"
            ),
            MatcherErrorKind::Batch(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for MatcherError {}
