//! [`WdaBuildError`] and [`WdaLoadError`]: why a masker could not be built or loaded.

use std::fmt;

use munch_tokens::SpansBuildError;

/// A budget of [`WdaConfig`](crate::WdaConfig).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WdaBudget {
    /// [`WdaConfig::max_states`](crate::WdaConfig::max_states): automaton states of the
    /// subset construction (before minimisation).
    States,
    /// [`WdaConfig::max_edges`](crate::WdaConfig::max_edges): transitions of the subset
    /// construction.
    Edges,
    /// [`WdaConfig::max_memory`](crate::WdaConfig::max_memory): heap bytes held by the
    /// build (token spans, summaries, item sets, weights, transitions, tables; approximate).
    Memory,
    /// [`WdaConfig::max_continuations`](crate::WdaConfig::max_continuations): distinct
    /// continuations (what may follow a terminal inside a token) the spans need.
    Continuations,
}

impl WdaBudget {
    /// The name of the configuration field.
    pub fn name(self) -> &'static str {
        match self {
            WdaBudget::States => "max_states",
            WdaBudget::Edges => "max_edges",
            WdaBudget::Memory => "max_memory",
            WdaBudget::Continuations => "max_continuations",
        }
    }
}

/// Why [`WdaMasker::new`](crate::WdaMasker::new) gave up. The engine falls back to another
/// masker; nothing is half-built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WdaBuildError {
    kind: BuildKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum BuildKind {
    Budget { budget: WdaBudget, limit: u64 },
    Spans(SpansBuildError),
    TooLarge(&'static str),
}

impl WdaBuildError {
    pub(crate) fn budget(budget: WdaBudget, limit: u64) -> Self {
        WdaBuildError {
            kind: BuildKind::Budget { budget, limit },
        }
    }

    pub(crate) fn too_large(what: &'static str) -> Self {
        WdaBuildError {
            kind: BuildKind::TooLarge(what),
        }
    }

    pub(crate) fn spans(e: SpansBuildError) -> Self {
        WdaBuildError {
            kind: BuildKind::Spans(e),
        }
    }

    /// The budget of [`WdaConfig`](crate::WdaConfig) that was exceeded, and its limit, if that
    /// is the reason.
    pub fn exceeded(&self) -> Option<(WdaBudget, u64)> {
        match self.kind {
            BuildKind::Budget { budget, limit } => Some((budget, limit)),
            BuildKind::Spans(_) | BuildKind::TooLarge(_) => None,
        }
    }

    /// The token-spans build error, if that is the reason.
    pub fn spans_error(&self) -> Option<&SpansBuildError> {
        match &self.kind {
            BuildKind::Spans(e) => Some(e),
            BuildKind::Budget { .. } | BuildKind::TooLarge(_) => None,
        }
    }
}

impl fmt::Display for WdaBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            BuildKind::Budget { budget, limit } => {
                let what = match budget {
                    WdaBudget::States => "automaton states",
                    WdaBudget::Edges => "automaton transitions",
                    WdaBudget::Memory => "bytes of build memory",
                    WdaBudget::Continuations => "continuations",
                };
                write!(
                    f,
                    "weighted-automaton masker: more than {limit} {what} (budget `{}`)",
                    budget.name()
                )
            }
            BuildKind::Spans(e) => write!(f, "weighted-automaton masker: {e}"),
            BuildKind::TooLarge(what) => {
                write!(
                    f,
                    "weighted-automaton masker: the grammar has too many {what}"
                )
            }
        }
    }
}

impl std::error::Error for WdaBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            BuildKind::Spans(e) => Some(e),
            BuildKind::Budget { .. } | BuildKind::TooLarge(_) => None,
        }
    }
}

/// Why [`WdaMasker::load`](crate::WdaMasker::load) refused an artifact. A refused artifact
/// leaves nothing behind; rebuild with [`WdaMasker::new`](crate::WdaMasker::new).
#[derive(Debug)]
pub struct WdaLoadError {
    kind: LoadKind,
}

/// The reason behind a [`WdaLoadError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadKind {
    /// Reading failed.
    Io(std::io::Error),
    /// The stream does not start with the artifact's magic bytes.
    NotAnArtifact,
    /// The artifact's format version is not this crate's.
    Version {
        /// The version in the artifact.
        found: u32,
        /// The version this crate reads.
        expected: u32,
    },
    /// The stream ended before the artifact did (`at`: bytes read).
    Truncated {
        /// Bytes read before the end.
        at: u64,
    },
    /// The checksum does not match the content: the file is corrupt.
    Checksum,
    /// The artifact was built for another vocabulary.
    Vocabulary {
        /// The fingerprint in the artifact.
        found: u64,
        /// The fingerprint of the vocabulary given.
        expected: u64,
    },
    /// The artifact was built for another grammar (or another build of its tables).
    Grammar {
        /// The fingerprint in the artifact.
        found: u64,
        /// The fingerprint of the parser given.
        expected: u64,
    },
    /// The content is inconsistent (an id out of range, a bad length) at byte `at` of the
    /// payload, although the checksum matched.
    Malformed {
        /// Offset in the payload.
        at: u64,
        /// What is wrong.
        what: &'static str,
    },
}

impl WdaLoadError {
    pub(crate) fn new(kind: LoadKind) -> Self {
        WdaLoadError { kind }
    }

    /// Why.
    pub fn kind(&self) -> &LoadKind {
        &self.kind
    }
}

impl fmt::Display for WdaLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("weighted-automaton artifact: ")?;
        match &self.kind {
            LoadKind::Io(e) => write!(f, "read failed: {e}"),
            LoadKind::NotAnArtifact => f.write_str("not a munch weighted-automaton artifact"),
            LoadKind::Version { found, expected } => {
                write!(f, "format version {found}, this build reads {expected}")
            }
            LoadKind::Truncated { at } => write!(f, "truncated after {at} bytes"),
            LoadKind::Checksum => f.write_str("checksum mismatch (corrupt file)"),
            LoadKind::Vocabulary { found, expected } => write!(
                f,
                "built for vocabulary {found:016x}, not for this one ({expected:016x})"
            ),
            LoadKind::Grammar { found, expected } => write!(
                f,
                "built for grammar {found:016x}, not for this one ({expected:016x})"
            ),
            LoadKind::Malformed { at, what } => write!(f, "malformed at payload byte {at}: {what}"),
        }
    }
}

impl std::error::Error for WdaLoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LoadKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
