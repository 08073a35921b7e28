//! `munch.Grammar`: a grammar source and its start rule, checked when compiled.

use std::path::PathBuf;

use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;

use munch::Grammar;

use crate::errors::compile_error;

/// A grammar to compile: Lark text with its start rule, or one of munch's or SynCode's
/// grammars by name.
///
/// A ``Grammar`` only holds the text; ``munch.compile`` parses and checks it, and raises
/// ``munch.GrammarError`` with ``file:line:column``, the source line and a caret.
#[pyclass(module = "munch", name = "Grammar", frozen)]
#[derive(Clone)]
pub struct PyGrammar {
    pub grammar: Grammar,
}

#[pymethods]
impl PyGrammar {
    /// Lark grammar text starting at rule ``start``; errors name it ``<grammar>``.
    #[staticmethod]
    #[pyo3(signature = (text, start="start"))]
    fn from_lark(text: &str, start: &str) -> PyGrammar {
        PyGrammar {
            grammar: Grammar::lark(text).with_start(start),
        }
    }

    /// The Lark grammar in the file at ``path``, starting at rule ``start``; errors name the
    /// file.
    #[staticmethod]
    #[pyo3(signature = (path, start="start"))]
    fn from_file(path: PathBuf, start: &str) -> PyResult<PyGrammar> {
        if !path.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "no grammar file {}",
                path.display()
            )));
        }
        let grammar = Grammar::lark_file(&path).map_err(compile_error)?;
        Ok(PyGrammar {
            grammar: grammar.with_start(start),
        })
    }

    /// One of munch's own grammars by name (``json``, ``tricky``).
    #[staticmethod]
    fn builtin(name: &str) -> PyResult<PyGrammar> {
        let grammar = Grammar::builtin(name).map_err(compile_error)?;
        Ok(PyGrammar { grammar })
    }

    /// One of SynCode's grammars by name (``json go java sql c calc tiny prover9 invariants
    /// python``), fetched once into munch's cache.
    #[staticmethod]
    fn syncode(py: Python<'_>, name: &str) -> PyResult<PyGrammar> {
        let grammar = py
            .allow_threads(|| Grammar::syncode(name))
            .map_err(compile_error)?;
        Ok(PyGrammar { grammar })
    }

    /// The name errors give the grammar: a path, ``builtin:NAME``, ``syncode:NAME`` or
    /// ``<grammar>``.
    #[getter]
    fn name(&self) -> &str {
        self.grammar.name()
    }

    /// The start rule.
    #[getter]
    fn start(&self) -> &str {
        self.grammar.start()
    }

    /// The Lark source text.
    #[getter]
    fn text(&self) -> String {
        String::from_utf8_lossy(self.grammar.text()).into_owned()
    }

    fn __repr__(&self) -> String {
        format!(
            "munch.Grammar(name={:?}, start={:?})",
            self.grammar.name(),
            self.grammar.start()
        )
    }
}
