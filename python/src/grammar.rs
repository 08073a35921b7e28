//! `munch.Grammar`: a grammar source and its start rule, checked when compiled.

use std::path::PathBuf;

use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;

use munch::{Grammar, Postlex};

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
    /// ``postlex="python"`` runs Lark's ``PythonIndenter`` on the terminals (``_INDENT`` and
    /// ``_DEDENT`` from the newline terminal ``_NEWLINE`` or ``_NL``), as Lark's ``postlex=``.
    /// A literal that a regex also matches (a keyword and ``NAME``) is read as the regex where
    /// the parser cannot take the literal, as Lark's contextual lexer reads it (``_`` is a name
    /// outside Python's ``case`` patterns), and a literal that spells copies of a shorter one
    /// as those copies where the parser cannot take it (``from ... import x``);
    /// ``reserved_literals=True`` reads both as themselves everywhere (Lark's
    /// ``lexer="basic"``), which keeps keywords reserved and builds the ``"wda"`` masker
    /// faster. ``prefer_shift=True`` resolves every shift/reduce conflict by shifting, as
    /// Lark's LALR parser does (a text that needs the reduction is refused, as in Lark); by
    /// default both are kept and the grammar's whole language is taken.
    #[staticmethod]
    #[pyo3(signature = (text, start="start", postlex=None, *, reserved_literals=false, prefer_shift=false))]
    fn from_lark(
        text: &str,
        start: &str,
        postlex: Option<&str>,
        reserved_literals: bool,
        prefer_shift: bool,
    ) -> PyResult<PyGrammar> {
        Ok(PyGrammar {
            grammar: Grammar::lark(text)
                .with_start(start)
                .with_postlex(parse_postlex(postlex)?)
                .with_contextual_literals(!reserved_literals)
                .with_prefer_shift(prefer_shift),
        })
    }

    /// The Lark grammar in the file at ``path``, starting at rule ``start``, with the
    /// post-lexer ``postlex``, ``reserved_literals`` and ``prefer_shift`` (see ``from_lark``);
    /// errors name the file.
    #[staticmethod]
    #[pyo3(signature = (path, start="start", postlex=None, *, reserved_literals=false, prefer_shift=false))]
    fn from_file(
        path: PathBuf,
        start: &str,
        postlex: Option<&str>,
        reserved_literals: bool,
        prefer_shift: bool,
    ) -> PyResult<PyGrammar> {
        let postlex = parse_postlex(postlex)?;
        if !path.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "no grammar file {}",
                path.display()
            )));
        }
        let grammar = Grammar::lark_file(&path).map_err(compile_error)?;
        Ok(PyGrammar {
            grammar: grammar
                .with_start(start)
                .with_postlex(postlex)
                .with_contextual_literals(!reserved_literals)
                .with_prefer_shift(prefer_shift),
        })
    }

    /// The grammar of the JSON texts valid under a JSON Schema (a ``str`` of JSON or a ``dict``),
    /// exactly: a keyword munch cannot compile exactly raises ``munch.GrammarError`` naming it
    /// and its JSON pointer, unless ``lenient`` (then ``relaxations`` lists what was dropped).
    ///
    /// Options: ``whitespace`` ``"flexible"`` (runs of at most ``max_whitespace`` characters
    /// between tokens, the default) or ``"compact"``; ``item_separator``/``key_separator``
    /// (``","``/``":"``, or with whitespace such as ``", "``); ``property_order``
    /// ``"schema"`` (declared order, the default) or ``"any"``.
    #[staticmethod]
    #[pyo3(signature = (schema, *, whitespace="flexible", max_whitespace=16, item_separator=",", key_separator=":", property_order="schema", lenient=false))]
    #[allow(clippy::too_many_arguments)]
    fn from_json_schema(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        whitespace: &str,
        max_whitespace: usize,
        item_separator: &str,
        key_separator: &str,
        property_order: &str,
        lenient: bool,
    ) -> PyResult<PyGrammar> {
        let text: String = match schema.extract::<String>() {
            Ok(s) => s,
            Err(_) => py
                .import("json")?
                .call_method1("dumps", (schema,))?
                .extract()?,
        };
        let whitespace = match whitespace {
            "compact" => munch::Whitespace::Compact,
            "flexible" => munch::Whitespace::Flexible {
                max_run: max_whitespace,
            },
            w => {
                return Err(PyValueError::new_err(format!(
                    "whitespace must be \"compact\" or \"flexible\", not {w:?}"
                )))
            }
        };
        let property_order = match property_order {
            "schema" => munch::PropertyOrder::Schema,
            "any" => munch::PropertyOrder::Any,
            o => {
                return Err(PyValueError::new_err(format!(
                    "property_order must be \"schema\" or \"any\", not {o:?}"
                )))
            }
        };
        let options = munch::SchemaOptions {
            whitespace,
            item_separator: item_separator.to_string(),
            key_separator: key_separator.to_string(),
            property_order,
            lenient,
            ..munch::SchemaOptions::default()
        };
        let grammar = py
            .allow_threads(|| Grammar::from_json_schema(text.as_str(), &options))
            .map_err(compile_error)?;
        Ok(PyGrammar { grammar })
    }

    /// The grammar whose sentences are the whole matches of a regex (ECMA-262 syntax, as JSON
    /// Schema's ``pattern``).
    #[staticmethod]
    fn from_regex(pattern: &str) -> PyResult<PyGrammar> {
        let grammar = Grammar::from_regex(pattern).map_err(compile_error)?;
        Ok(PyGrammar { grammar })
    }

    /// What a ``lenient`` JSON Schema compile dropped: ``(pointer, keyword, reason)`` tuples.
    #[getter]
    fn relaxations(&self) -> Vec<(String, String, String)> {
        self.grammar
            .relaxations()
            .iter()
            .map(|r| (r.pointer.clone(), r.keyword.clone(), r.reason.clone()))
            .collect()
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

    /// The post-lexer: ``"python"`` or ``None``.
    #[getter]
    fn postlex(&self) -> Option<&'static str> {
        match self.grammar.postlex() {
            Postlex::Python => Some("python"),
            _ => None,
        }
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

/// ``postlex=`` as Lark spells it: ``None`` or ``"python"``.
fn parse_postlex(postlex: Option<&str>) -> PyResult<Postlex> {
    match postlex {
        None => Ok(Postlex::None),
        Some("python") => Ok(Postlex::Python),
        Some(other) => Err(PyValueError::new_err(format!(
            "unknown postlex {other:?}: use \"python\" or None"
        ))),
    }
}
