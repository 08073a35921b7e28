//! The one error type of the vocabulary module.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::TokenId;

/// Why a vocabulary could not be loaded, fetched or used to encode a text.
///
/// The error is a small box around a [`VocabErrorKind`], which carries the file, token id, byte
/// offset or budget involved. Its `Display` is one sentence that names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabError {
    kind: Box<VocabErrorKind>,
}

/// What went wrong, with the location involved.
///
/// `source` fields name the tokenizer: a file path, or the name given to
/// [`Vocabulary::from_tokenizer_json_bytes`](super::Vocabulary::from_tokenizer_json_bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VocabErrorKind {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A tokenizer file (or its `tokenizer_config.json`) holds more than
    /// [`Vocabulary::MAX_FILE_BYTES`](super::Vocabulary::MAX_FILE_BYTES); no more of it was
    /// read.
    FileTooLong {
        /// The file.
        path: PathBuf,
        /// The most bytes read from it.
        limit: u64,
    },
    /// The tokenizer file (or its `tokenizer_config.json`) is not valid JSON, or not the shape a
    /// Hugging Face tokenizer file has.
    InvalidJson {
        /// The tokenizer.
        source: String,
        /// 1-based line of the problem (0 when unknown).
        line: usize,
        /// 1-based column of the problem (0 when unknown).
        column: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// The tokenizer uses a model, normalizer, pre-tokenizer or decoder whose token bytes (or
    /// whose encoding) cannot be reproduced exactly, so it is refused rather than guessed.
    Unsupported {
        /// The tokenizer.
        source: String,
        /// The component and setting that cannot be mapped.
        reason: String,
    },
    /// The tokenizer's own encoder rewrites text (a normalizer or pre-tokenizer that drops or
    /// changes characters), so [`Vocabulary::encode`](super::Vocabulary::encode) cannot spell a
    /// text exactly with it. The tokens' bytes are exact, so the vocabulary loads and masks are
    /// unaffected; only encoding a text returns this.
    EncoderUnsupported {
        /// The tokenizer.
        source: String,
        /// The component and setting that rewrites text.
        reason: String,
    },
    /// One token's string cannot be turned into bytes.
    InvalidToken {
        /// The tokenizer.
        source: String,
        /// The token's id.
        id: u32,
        /// The token's string as the tokenizer file spells it.
        token: String,
        /// Why it cannot be mapped.
        reason: String,
    },
    /// Two tokens claim the same id.
    DuplicateId {
        /// The tokenizer.
        source: String,
        /// The id.
        id: u32,
    },
    /// A text token has no bytes: it could never advance a parser.
    EmptyToken {
        /// The tokenizer.
        source: String,
        /// The id.
        id: u32,
    },
    /// The vocabulary is larger than [`Vocabulary::MAX_LEN`](super::Vocabulary::MAX_LEN) ids,
    /// or its tokens hold more bytes in total than [`Vocabulary::MAX_TOTAL_BYTES`](super::Vocabulary::MAX_TOTAL_BYTES).
    TooLarge {
        /// The tokenizer.
        source: String,
        /// What exceeded the budget: `"ids"` or `"total token bytes"`.
        what: &'static str,
        /// The size asked for.
        given: u64,
        /// The budget.
        limit: u64,
    },
    /// A token is longer than [`Vocabulary::MAX_TOKEN_BYTES`](super::Vocabulary::MAX_TOKEN_BYTES).
    TokenTooLong {
        /// The tokenizer.
        source: String,
        /// The id.
        id: u32,
        /// Its length in bytes.
        len: usize,
        /// The budget.
        limit: usize,
    },
    /// An end-of-sequence id is out of range, or names a text token.
    InvalidEos {
        /// The tokenizer.
        source: String,
        /// The id.
        id: u32,
        /// Why it is refused.
        reason: String,
    },
    /// `tokenizer_config.json` names an `eos_token` that is not a special token of the
    /// tokenizer.
    EosNotFound {
        /// The tokenizer.
        source: String,
        /// The token's string.
        token: String,
    },
    /// The `tokenizers` library refused the file or failed to encode.
    Tokenizers {
        /// The tokenizer.
        source: String,
        /// The library's message.
        message: String,
    },
    /// No token sequence with exactly the text's bytes was found: the encoding of the text
    /// differs from it first at `offset`.
    Encode {
        /// The tokenizer.
        source: String,
        /// Byte offset in the text of the first byte not reproduced.
        offset: usize,
        /// What was found there.
        reason: String,
    },
    /// [`Vocabulary::load`](super::Vocabulary::load) with the `fetch` feature got neither an
    /// existing file nor a known name.
    UnknownName {
        /// The name or path given.
        name: String,
        /// The names that can be fetched.
        known: &'static [&'static str],
    },
    /// [`Vocabulary::load`](super::Vocabulary::load) without the `fetch` feature got something
    /// that is not a tokenizer file: loading a tokenizer by name needs the feature.
    NotAFile {
        /// The name or path given.
        name: String,
    },
    /// An external tool that fetching needs is not installed.
    ToolMissing {
        /// The tool (`npm` or `tar`).
        tool: &'static str,
        /// The operating system's message.
        message: String,
    },
    /// An external tool ran and failed.
    ToolFailed {
        /// The tool (`npm` or `tar`).
        tool: &'static str,
        /// The command line, for a person to re-run.
        command: String,
        /// Its exit status, when it exited.
        status: Option<i32>,
        /// The end of what it printed on stderr.
        stderr: String,
    },
}

impl VocabError {
    pub(crate) fn new(kind: VocabErrorKind) -> Self {
        Self {
            kind: Box::new(kind),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &VocabErrorKind {
        &self.kind
    }

    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        Self::new(VocabErrorKind::Io {
            path: path.into(),
            message: err.to_string(),
        })
    }

    /// The error of reading `path` with [`read_bounded`](crate::read_bounded).
    pub(crate) fn read(path: &Path, err: crate::ReadError) -> Self {
        match err {
            crate::ReadError::Io(e) => Self::io(path, &e),
            crate::ReadError::TooLong { limit } => Self::new(VocabErrorKind::FileTooLong {
                path: path.to_path_buf(),
                limit,
            }),
        }
    }

    pub(crate) fn json(source: &str, err: &serde_json::Error) -> Self {
        Self::new(VocabErrorKind::InvalidJson {
            source: source.to_owned(),
            line: err.line(),
            column: err.column(),
            message: err.to_string(),
        })
    }

    pub(crate) fn unsupported(source: &str, reason: impl Into<String>) -> Self {
        Self::new(VocabErrorKind::Unsupported {
            source: source.to_owned(),
            reason: reason.into(),
        })
    }

    pub(crate) fn encoder_unsupported(source: &str, reason: impl Into<String>) -> Self {
        Self::new(VocabErrorKind::EncoderUnsupported {
            source: source.to_owned(),
            reason: reason.into(),
        })
    }

    pub(crate) fn invalid_token(
        source: &str,
        id: u32,
        token: &str,
        reason: impl Into<String>,
    ) -> Self {
        Self::new(VocabErrorKind::InvalidToken {
            source: source.to_owned(),
            id,
            token: token.to_owned(),
            reason: reason.into(),
        })
    }

    pub(crate) fn invalid_eos(source: &str, id: TokenId, reason: impl Into<String>) -> Self {
        Self::new(VocabErrorKind::InvalidEos {
            source: source.to_owned(),
            id: id.as_u32(),
            reason: reason.into(),
        })
    }

    pub(crate) fn encode(source: &str, offset: usize, reason: impl Into<String>) -> Self {
        Self::new(VocabErrorKind::Encode {
            source: source.to_owned(),
            offset,
            reason: reason.into(),
        })
    }
}

impl fmt::Display for VocabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use VocabErrorKind::*;
        match &*self.kind {
            Io { path, message } => write!(f, "cannot access {}: {message}", path.display()),
            FileTooLong { path, limit } => write!(
                f,
                "{} is longer than {limit} bytes, the most munch reads from a tokenizer file",
                path.display()
            ),
            InvalidJson {
                source,
                line,
                column,
                message,
            } => write!(
                f,
                "{source} is not a valid tokenizer file (line {line}, column {column}): {message}"
            ),
            Unsupported { source, reason } => write!(
                f,
                "the tokenizer {source} cannot be mapped to exact bytes: {reason}"
            ),
            EncoderUnsupported { source, reason } => write!(
                f,
                "texts cannot be encoded exactly with the tokenizer {source} ({reason}); its \
                 tokens' bytes are exact, so masks are unaffected"
            ),
            InvalidToken {
                source,
                id,
                token,
                reason,
            } => write!(
                f,
                "token {id} ({token:?}) of {source} cannot be mapped to bytes: {reason}"
            ),
            DuplicateId { source, id } => {
                write!(f, "two tokens of {source} have the same id {id}")
            }
            EmptyToken { source, id } => {
                write!(f, "token {id} of {source} is a text token with no bytes")
            }
            TooLarge {
                source,
                what,
                given,
                limit,
            } => write!(
                f,
                "the vocabulary {source} has {given} {what}, over the budget of {limit}"
            ),
            TokenTooLong {
                source,
                id,
                len,
                limit,
            } => write!(
                f,
                "token {id} of {source} is {len} bytes long, over the budget of {limit} bytes"
            ),
            InvalidEos { source, id, reason } => {
                write!(
                    f,
                    "{id} cannot be an end-of-sequence token of {source}: {reason}"
                )
            }
            EosNotFound { source, token } => write!(
                f,
                "tokenizer_config.json of {source} names the eos_token {token:?}, which is not a \
                 special token of the tokenizer"
            ),
            Tokenizers { source, message } => {
                write!(f, "the tokenizers library failed on {source}: {message}")
            }
            Encode {
                source,
                offset,
                reason,
            } => write!(
                f,
                "{source} cannot encode the text exactly at byte offset {offset}: {reason}"
            ),
            UnknownName { name, known } => write!(
                f,
                "{name:?} is neither an existing tokenizer file nor a known tokenizer name \
                 (known: {})",
                known.join(", ")
            ),
            NotAFile { name } => write!(
                f,
                "{name:?} is not a tokenizer file (nor a directory holding a tokenizer.json); \
                 loading a tokenizer by name needs munch-vocab's `fetch` feature"
            ),
            ToolMissing { tool, message } => write!(
                f,
                "fetching a tokenizer needs `{tool}`, which could not be run: {message}"
            ),
            ToolFailed {
                tool,
                command,
                status,
                stderr,
            } => {
                match status {
                    Some(code) => write!(f, "`{command}` failed with exit status {code}")?,
                    None => write!(f, "`{command}` was killed by a signal")?,
                }
                if !stderr.is_empty() {
                    write!(f, "; {tool} said: {}", stderr.trim())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for VocabError {}
