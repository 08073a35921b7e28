//! The package's exceptions and how munch's Rust errors become them.
//!
//! Every exception munch raises on its own account is a [`MunchError`], itself a `ValueError`:
//! what was handed to munch (a grammar, a tokenizer file, a token id, a bitmask) was wrong.
//! Its message is the Rust error's text, so a grammar error keeps its `file:line:column`, the
//! source line and the caret. Files that cannot be opened raise the usual `OSError`s.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use munch::CompileErrorKind;

create_exception!(
    munch,
    MunchError,
    PyValueError,
    "Base of munch's exceptions (a ValueError): the message is the Rust error's text."
);
create_exception!(
    munch,
    GrammarError,
    MunchError,
    "The grammar is invalid or unknown; the message locates it (`file:line:column`, the line \
     and a caret)."
);
create_exception!(
    munch,
    TokenizerError,
    MunchError,
    "The tokenizer could not be loaded (unsupported model, invalid file, unknown EOS token)."
);
create_exception!(
    munch,
    CompileError,
    MunchError,
    "The grammar could not be compiled for the tokenizer (a masker's build or budget, an \
     artifact made for another grammar or tokenizer)."
);
create_exception!(
    munch,
    MatcherError,
    MunchError,
    "A matcher refused a call (rolling back further than accepted, a parser budget, a batch's \
     shapes)."
);

/// A [`munch::CompileError`] as the exception that fits its kind. A `GrammarError` carries
/// `subschemas`: for a JSON Schema refused at some of its subschemas, their
/// `(pointer, keywords)` (the keyword that cannot be compiled exactly, or those shaping the
/// strings whose lexer exceeds a budget); otherwise an empty list.
pub fn compile_error(e: munch::CompileError) -> PyErr {
    let message = e.to_string();
    match e.kind() {
        CompileErrorKind::Grammar(_)
        | CompileErrorKind::Schema(_)
        | CompileErrorKind::Parser(_)
        | CompileErrorKind::SchemaLexer { .. }
        | CompileErrorKind::UnknownGrammar(_) => {
            let subschemas: Vec<(String, Vec<String>)> = match e.kind() {
                CompileErrorKind::Schema(s) => vec![(
                    s.pointer().to_string(),
                    s.keyword().map(str::to_string).into_iter().collect(),
                )],
                CompileErrorKind::SchemaLexer { origins, .. } => origins
                    .iter()
                    .map(|o| {
                        let keywords = o.keywords.iter().map(|k| k.to_string()).collect();
                        (o.pointer.clone(), keywords)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let err = GrammarError::new_err(message);
            Python::with_gil(|py| {
                // Setting an attribute on a fresh exception object only fails without memory.
                let _ = err.value(py).setattr("subschemas", subschemas);
            });
            err
        }
        CompileErrorKind::Vocabulary(_) => TokenizerError::new_err(message),
        CompileErrorKind::Io(_) => PyOSError::new_err(message),
        _ => CompileError::new_err(message),
    }
}

/// A [`munch::MatcherError`] as a [`MatcherError`].
pub fn matcher_error(e: munch::MatcherError) -> PyErr {
    MatcherError::new_err(e.to_string())
}

/// A `ValueError` about the arguments.
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// Registers the exceptions in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MunchError", py.get_type::<MunchError>())?;
    m.add("GrammarError", py.get_type::<GrammarError>())?;
    m.add("TokenizerError", py.get_type::<TokenizerError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("MatcherError", py.get_type::<MatcherError>())?;
    Ok(())
}
