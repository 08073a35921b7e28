//! [`SpansBuildError`]: why [`TokenSpans::build`](super::TokenSpans::build) gave up.

use std::fmt;

/// Which budget of a [`SpansConfig`](super::SpansConfig) a build exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpansBudget {
    /// [`SpansConfig::max_classes`](super::SpansConfig::max_classes).
    Classes,
    /// [`SpansConfig::max_spans`](super::SpansConfig::max_spans).
    Spans,
    /// [`SpansConfig::max_work`](super::SpansConfig::max_work).
    Work,
    /// [`SpansConfig::max_fork_work`](super::SpansConfig::max_fork_work).
    ForkWork,
    /// [`SpansConfig::max_bytes`](super::SpansConfig::max_bytes).
    Bytes,
    /// Not configurable: the distinct sequences of emitted lexemes one word can name (2^32
    /// divided by the number of lexemes, rounded up to a power of two).
    Sequences,
}

impl SpansBudget {
    /// The name of the configuration field.
    pub fn name(self) -> &'static str {
        match self {
            SpansBudget::Classes => "max_classes",
            SpansBudget::Spans => "max_spans",
            SpansBudget::Work => "max_work",
            SpansBudget::ForkWork => "max_fork_work",
            SpansBudget::Bytes => "max_bytes",
            SpansBudget::Sequences => "sequence ids",
        }
    }
}

/// A [`TokenSpans`](super::TokenSpans) build that exceeded one of its budgets.
///
/// Names the budget and its limit; the build stops as soon as the count passes the limit, so
/// a huge grammar or vocabulary costs at most about one budget's worth of time and memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpansBuildError {
    budget: SpansBudget,
    limit: u64,
}

impl SpansBuildError {
    pub(crate) fn new(budget: SpansBudget, limit: u64) -> Self {
        SpansBuildError { budget, limit }
    }

    /// The budget that was exceeded.
    pub fn budget(&self) -> SpansBudget {
        self.budget
    }

    /// Its configured limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

impl fmt::Display for SpansBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.budget {
            SpansBudget::Classes => "token classes",
            SpansBudget::Spans => "distinct spans",
            SpansBudget::Work => "trie-walk steps",
            SpansBudget::ForkWork => "lexer steps of the readings a token's bytes may have",
            SpansBudget::Bytes => "bytes of tables in memory",
            SpansBudget::Sequences => "sequences of emitted lexemes",
        };
        write!(
            f,
            "token spans: more than {} {what} (budget `{}`)",
            self.limit,
            self.budget.name()
        )
    }
}

impl std::error::Error for SpansBuildError {}
