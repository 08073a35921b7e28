//! [`SchemaError`]: why a schema or regex was not compiled.

use std::fmt;

/// Why a JSON Schema (or a regex constraint) could not be compiled into a grammar.
///
/// Every error names the JSON pointer of the schema location it is about (`""` is the root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    kind: SchemaErrorKind,
    pointer: String,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// The schema text is not JSON.
    Json(String),
    /// A keyword's value has the wrong shape (`"minimum": "x"`, `"required": 3`).
    Invalid {
        /// The keyword.
        keyword: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A keyword munch cannot compile exactly (and the `lenient` option was off, or it cannot
    /// be relaxed either).
    Unsupported {
        /// The keyword.
        keyword: String,
        /// Why it cannot be expressed exactly.
        reason: String,
    },
    /// A `$ref` that does not resolve to a location in this document.
    BadRef(String),
    /// A build budget was exceeded.
    Budget {
        /// The budget's name (an option of [`crate::SchemaOptions`]).
        budget: &'static str,
        /// Its value.
        limit: usize,
    },
    /// A `pattern` (or regex constraint) that munch's regex reader does not take.
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why.
        reason: String,
    },
}

impl SchemaError {
    pub(crate) fn new(kind: SchemaErrorKind, pointer: impl Into<String>) -> SchemaError {
        SchemaError {
            kind,
            pointer: pointer.into(),
        }
    }

    pub(crate) fn unsupported(pointer: &str, keyword: &str, reason: impl Into<String>) -> Self {
        SchemaError::new(
            SchemaErrorKind::Unsupported {
                keyword: keyword.to_string(),
                reason: reason.into(),
            },
            join(pointer, keyword),
        )
    }

    pub(crate) fn invalid(pointer: &str, keyword: &str, reason: impl Into<String>) -> Self {
        SchemaError::new(
            SchemaErrorKind::Invalid {
                keyword: keyword.to_string(),
                reason: reason.into(),
            },
            join(pointer, keyword),
        )
    }

    pub(crate) fn budget(budget: &'static str, limit: usize, pointer: &str) -> Self {
        SchemaError::new(SchemaErrorKind::Budget { budget, limit }, pointer)
    }

    /// What went wrong.
    pub fn kind(&self) -> &SchemaErrorKind {
        &self.kind
    }

    /// The JSON pointer of the offending keyword or schema (`""` for the root).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The keyword the error is about, when there is one.
    pub fn keyword(&self) -> Option<&str> {
        match &self.kind {
            SchemaErrorKind::Invalid { keyword, .. }
            | SchemaErrorKind::Unsupported { keyword, .. } => Some(keyword),
            SchemaErrorKind::BadRef(_) => Some("$ref"),
            SchemaErrorKind::Pattern { .. } => Some("pattern"),
            _ => None,
        }
    }

    /// Whether this is a keyword munch cannot express exactly (as opposed to a malformed
    /// schema or a budget).
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.kind,
            SchemaErrorKind::Unsupported { .. } | SchemaErrorKind::Pattern { .. }
        )
    }
}

/// `pointer` extended by one reference token, escaped as RFC 6901 says.
pub(crate) fn join(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "#".to_string()
        } else {
            format!("#{}", self.pointer)
        };
        match &self.kind {
            SchemaErrorKind::Json(e) => write!(f, "schema is not JSON: {e}"),
            SchemaErrorKind::Invalid { keyword, reason } => {
                write!(f, "invalid `{keyword}` at {at}: {reason}")
            }
            SchemaErrorKind::Unsupported { keyword, reason } => write!(
                f,
                "`{keyword}` at {at} cannot be compiled exactly: {reason} (the lenient option relaxes what can be relaxed)"
            ),
            SchemaErrorKind::BadRef(r) => write!(f, "`$ref` at {at}: cannot resolve {r:?} (only local references into this document are supported)"),
            SchemaErrorKind::Budget { budget, limit } => {
                write!(f, "schema at {at} exceeds the budget {budget} = {limit}")
            }
            SchemaErrorKind::Pattern { pattern, reason } => {
                write!(f, "pattern {pattern:?} at {at}: {reason}")
            }
        }
    }
}

impl std::error::Error for SchemaError {}
