//! `munch.compile` and `munch.CompiledGrammar`: a grammar × a tokenizer × a masker, shared by
//! every matcher of that grammar.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

use pyo3::prelude::*;

use munch::{Compiled, Config, MaskerKind};

use crate::errors::{compile_error, CompileError};
use crate::grammar::PyGrammar;
use crate::tokenizer::PyTokenizer;

/// A grammar compiled for a tokenizer with one masker (``munch.compile``): built once, shared
/// by every ``Matcher`` of that grammar, from any thread.
#[pyclass(module = "munch", name = "CompiledGrammar", frozen)]
pub struct PyCompiled {
    pub compiled: Compiled,
    /// The model's logits width (the tokenizer's ``vocab_size``).
    pub vocab_size: usize,
    pub tokenizer: Py<PyTokenizer>,
}

fn masker_kind(name: &str) -> PyResult<MaskerKind> {
    name.parse::<MaskerKind>().map_err(compile_error)
}

/// Compiles ``grammar`` for ``tokenizer``.
///
/// ``masker``: ``"wda"`` (fastest masks; built ahead, seconds for a programming language;
/// ``save``/``load`` keep it), ``"spanner"``, ``"trie"`` (builds in milliseconds) or
/// ``"oracle"`` (brute force, for checking). Every masker computes the same masks.
/// ``fallback``: the masker built instead when the first one's build fails (a memory budget, a
/// grammar shape it does not support; ``CompiledGrammar.fell_back`` then says why), or
/// ``None`` to raise instead. ``max_memory``: the most bytes a table masker's build may hold.
/// ``lazy``: build the ``wda`` on demand (milliseconds up front, each automaton state the first
/// time a mask reads it, tables and cache within ``max_memory``; same masks, no ``save``), or the
/// ``trie`` without token classes (the walk over every token, nothing built beyond the parser).
/// ``background``: return once the parser is built, masking with the trie walk over every token
/// (no tables: the first mask in about 0.2 ms) while a thread builds ``masker``; matchers switch
/// to it when it is ready (same masks). ``CompiledGrammar.wait()`` waits for it.
///
/// Raises ``GrammarError`` for an invalid grammar (with ``file:line:column`` and a caret) and
/// ``CompileError`` when no masker could be built. The GIL is released while compiling.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // one per keyword argument of `munch.compile`
#[pyo3(
    signature = (grammar, tokenizer, masker="wda", fallback=Some("trie"), max_memory=None, lazy=false, background=false),
    text_signature = "(grammar, tokenizer, masker='wda', fallback='trie', max_memory=None, lazy=False, background=False)"
)]
pub fn compile(
    py: Python<'_>,
    grammar: PyRef<'_, PyGrammar>,
    tokenizer: Bound<'_, PyTokenizer>,
    masker: &str,
    fallback: Option<&str>,
    max_memory: Option<usize>,
    lazy: bool,
    background: bool,
) -> PyResult<PyCompiled> {
    let config = Config::new()
        .masker(masker_kind(masker)?)
        .fallback(fallback.map(masker_kind).transpose()?)
        .max_memory(max_memory)
        .lazy(lazy)
        .background(background);
    let tok = tokenizer.get();
    let vocab = tok.vocab.clone();
    let grammar = grammar.grammar.clone();
    let compiled = py
        .allow_threads(|| Compiled::new(&grammar, vocab, &config))
        .map_err(compile_error)?;
    Ok(PyCompiled {
        compiled,
        vocab_size: tok.vocab_size,
        tokenizer: tokenizer.unbind(),
    })
}

#[pymethods]
impl PyCompiled {
    /// Writes the compiled masker to ``path`` (only the ``wda`` has an artifact format), to be
    /// read back by ``CompiledGrammar.load`` with the same grammar and tokenizer.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let file = File::create(&path)?;
        py.allow_threads(|| {
            let mut w = BufWriter::new(file);
            self.compiled.save(&mut w).map_err(compile_error)?;
            w.flush()?;
            Ok(())
        })
    }

    /// Reads an artifact written by ``save`` for ``grammar`` and ``tokenizer`` (masker
    /// ``masker``); one made for another grammar or tokenizer, or corrupt, raises
    /// ``CompileError``.
    #[staticmethod]
    #[pyo3(signature = (path, grammar, tokenizer, masker="wda"))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        grammar: PyRef<'_, PyGrammar>,
        tokenizer: Bound<'_, PyTokenizer>,
        masker: &str,
    ) -> PyResult<PyCompiled> {
        let kind = masker_kind(masker)?;
        let file = File::open(&path)?;
        let tok = tokenizer.get();
        let vocab = tok.vocab.clone();
        let grammar = grammar.grammar.clone();
        let compiled = py
            .allow_threads(|| {
                let mut r = BufReader::new(file);
                Compiled::load(&grammar, vocab, kind, &mut r, &Config::default())
            })
            .map_err(|e| {
                let message = format!("{}: {e}", path.display());
                match e.kind() {
                    munch::CompileErrorKind::Artifact(_) => CompileError::new_err(message),
                    _ => compile_error(e),
                }
            })?;
        Ok(PyCompiled {
            compiled,
            vocab_size: tok.vocab_size,
            tokenizer: tokenizer.unbind(),
        })
    }

    /// What the compilation built and cost, as a dict: ``parser_ms``, ``masker_ms``,
    /// ``terminals``, ``lexer_states``, ``lr_states``, ``conflicts`` and the masker's own
    /// sizes.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = self.compiled.stats().to_json().to_string();
        py.import("json")?.call_method1("loads", (json,))
    }

    /// Waits for a background build (``compile(..., background=True)``), with the GIL
    /// released; raises ``CompileError`` if it failed (the masks then stay the exact trie
    /// walk's). Returns at once otherwise.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.compiled.wait().map_err(|e| e.to_string()))
            .map_err(CompileError::new_err)
    }

    /// Whether the masker asked for (or its fallback) is built: ``False`` only during a
    /// background build.
    #[getter]
    fn is_ready(&self) -> bool {
        self.compiled.is_ready()
    }

    /// The masker built: the one asked for, or the fallback when ``fell_back`` is set.
    #[getter]
    fn masker(&self) -> &'static str {
        self.compiled.masker_kind().name()
    }

    /// Why the masker asked for was not built and which was built instead, or ``None``.
    #[getter]
    fn fell_back(&self) -> Option<String> {
        self.compiled.fell_back().map(|f| f.to_string())
    }

    /// The model's logits width (the tokenizer's ``vocab_size``).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// Words of one bitmask row: ``ceil(vocab_size / 32)``.
    #[getter]
    fn bitmask_width(&self) -> usize {
        self.vocab_size.div_ceil(32)
    }

    /// The tokenizer it was compiled for.
    #[getter]
    fn tokenizer(&self, py: Python<'_>) -> Py<PyTokenizer> {
        self.tokenizer.clone_ref(py)
    }

    /// The grammar's name (a path, ``builtin:NAME``, ``syncode:NAME`` or ``<grammar>``).
    #[getter]
    fn grammar_name(&self) -> &str {
        self.compiled.grammar_name()
    }

    fn __repr__(&self) -> String {
        format!(
            "munch.CompiledGrammar(grammar={:?}, masker={:?}, vocab_size={})",
            self.compiled.grammar_name(),
            self.compiled.masker_kind().name(),
            self.vocab_size
        )
    }
}

impl PyCompiled {
    /// A handle on the same compiled grammar (one reference count).
    pub fn clone_ref(&self, py: Python<'_>) -> PyCompiled {
        PyCompiled {
            compiled: self.compiled.clone(),
            vocab_size: self.vocab_size,
            tokenizer: self.tokenizer.clone_ref(py),
        }
    }
}
