//! `munch.Tokenizer`: a vocabulary (every token id's exact bytes, the EOS ids) and the width
//! of the model's logits.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use munch::vocab::VocabErrorKind;
use munch::{TokenId, Vocabulary};

use crate::errors::{value_error, TokenizerError};

/// A tokenizer's vocabulary: the exact bytes each token id appends to the text, and its
/// end-of-sequence ids.
///
/// ``vocab_size`` is the width of the model's logits, which is often padded past the
/// tokenizer's own ids (``len(tokenizer)``); bitmask rows have ``ceil(vocab_size / 32)`` words
/// and the padded ids are never allowed.
///
/// Byte-level BPE (Llama 3, Qwen, GPT-style) and SentencePiece BPE with byte fallback (Llama 2,
/// Gemma) are supported; other tokenizers are refused with a ``TokenizerError`` rather than
/// guessed.
#[pyclass(module = "munch", name = "Tokenizer", frozen)]
pub struct PyTokenizer {
    pub vocab: Arc<Vocabulary>,
    pub vocab_size: usize,
}

impl PyTokenizer {
    fn new(vocab: Vocabulary, vocab_size: Option<usize>) -> PyResult<PyTokenizer> {
        let len = vocab.len();
        let vocab_size = vocab_size.unwrap_or(len);
        if vocab_size < len {
            return Err(value_error(format!(
                "vocab_size {vocab_size} is smaller than the tokenizer's {len} ids: vocab_size is \
                 the width of the model's logits, which must cover every token id"
            )));
        }
        Ok(PyTokenizer {
            vocab: Arc::new(vocab),
            vocab_size,
        })
    }
}

fn tokenizer_error(e: munch::vocab::VocabError) -> PyErr {
    TokenizerError::new_err(e.to_string())
}

#[pymethods]
impl PyTokenizer {
    /// Loads a Hugging Face ``tokenizer.json``, and the ``tokenizer_config.json`` beside it if
    /// there is one (its ``eos_token`` joins the EOS ids). ``vocab_size``: the model's logits
    /// width, when it is wider than the tokenizer.
    #[staticmethod]
    #[pyo3(signature = (path, vocab_size=None))]
    fn from_file(py: Python<'_>, path: PathBuf, vocab_size: Option<usize>) -> PyResult<Self> {
        if !path.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "no tokenizer file {}",
                path.display()
            )));
        }
        let vocab = py
            .allow_threads(|| Vocabulary::from_tokenizer_json(&path))
            .map_err(tokenizer_error)?;
        PyTokenizer::new(vocab, vocab_size)
    }

    /// Reads the contents of a ``tokenizer.json`` (``str`` or ``bytes``). ``eos_token``, the
    /// string of a special token, joins the EOS ids (as a ``tokenizer_config.json``'s would);
    /// ``name`` names the tokenizer in errors.
    #[staticmethod]
    #[pyo3(signature = (json, name="tokenizer.json", eos_token=None, vocab_size=None))]
    fn from_json(
        py: Python<'_>,
        json: &Bound<'_, PyAny>,
        name: &str,
        eos_token: Option<&str>,
        vocab_size: Option<usize>,
    ) -> PyResult<Self> {
        let json: Vec<u8> = if let Ok(s) = json.downcast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else if let Ok(b) = json.downcast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(value_error("json must be a str or bytes"));
        };
        let config = eos_token.map(|t| serde_json::json!({ "eos_token": t }).to_string());
        let vocab = py
            .allow_threads(|| {
                Vocabulary::from_tokenizer_json_bytes_with_config(
                    &json,
                    config.as_deref().map(str::as_bytes),
                    name,
                )
            })
            .map_err(tokenizer_error)?;
        PyTokenizer::new(vocab, vocab_size)
    }

    /// The vocabulary of a ``transformers`` tokenizer: a fast tokenizer's
    /// ``backend_tokenizer`` (its ``tokenizer.json``), with its ``eos_token`` among the EOS ids
    /// when that is a special token. ``vocab_size``: the model's logits width
    /// (``model.config.vocab_size``), often padded past the tokenizer's ids.
    #[staticmethod]
    #[pyo3(signature = (tokenizer, vocab_size=None))]
    fn from_huggingface(
        py: Python<'_>,
        tokenizer: &Bound<'_, PyAny>,
        vocab_size: Option<usize>,
    ) -> PyResult<Self> {
        let backend = tokenizer.getattr("backend_tokenizer").ok();
        let Some(backend) = backend.filter(|b| !b.is_none()) else {
            return Err(value_error(format!(
                "{} is not a fast tokenizer (no backend_tokenizer): load it with \
                 AutoTokenizer.from_pretrained(..., use_fast=True), or give its tokenizer.json \
                 to munch.Tokenizer.from_file",
                tokenizer.get_type().name()?
            )));
        };
        let json: String = backend.call_method0("to_str")?.extract()?;
        let name: String = tokenizer
            .getattr("name_or_path")
            .ok()
            .and_then(|n| n.extract::<String>().ok())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "huggingface tokenizer".to_string());
        let eos: Option<String> = tokenizer
            .getattr("eos_token")
            .ok()
            .and_then(|t| t.extract::<String>().ok());
        let load = |eos: Option<&str>| {
            let config = eos.map(|t| serde_json::json!({ "eos_token": t }).to_string());
            py.allow_threads(|| {
                Vocabulary::from_tokenizer_json_bytes_with_config(
                    json.as_bytes(),
                    config.as_deref().map(str::as_bytes),
                    &name,
                )
            })
        };
        let vocab = match load(eos.as_deref()) {
            // An eos_token that is plain text (no special token) cannot end a text: the
            // vocabulary's own EOS tokens do.
            Err(e) if matches!(e.kind(), VocabErrorKind::EosNotFound { .. }) => load(None),
            other => other,
        }
        .map_err(tokenizer_error)?;
        PyTokenizer::new(vocab, vocab_size)
    }

    /// The width of the model's logits: token ids are ``0 .. vocab_size``.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The end-of-sequence ids, ascending (Llama 3 has two); a matcher allows them exactly
    /// where the text so far is a sentence of the grammar.
    #[getter]
    fn eos_token_ids(&self) -> Vec<u32> {
        self.vocab.eos().iter().map(|t| t.as_u32()).collect()
    }

    /// The tokenizer's name (its file's directory or stem).
    #[getter]
    fn name(&self) -> &str {
        self.vocab.name()
    }

    /// The number of the tokenizer's own ids (``vocab_size`` may be larger).
    fn __len__(&self) -> usize {
        self.vocab.len()
    }

    /// The exact bytes token ``token_id`` appends to the text; ``None`` for special tokens and
    /// padded ids.
    fn token_bytes<'py>(
        &self,
        py: Python<'py>,
        token_id: i64,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if token_id < 0 || token_id as u64 >= self.vocab_size as u64 {
            return Err(value_error(format!(
                "token id {token_id} is out of range: the vocabulary has {} tokens",
                self.vocab_size
            )));
        }
        Ok(self
            .vocab
            .token_bytes(TokenId::from(token_id as u32))
            .map(|b| PyBytes::new(py, b)))
    }

    /// The bytes of ``token_ids`` one after another (special tokens spell nothing).
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        token_ids: Vec<i64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        for t in token_ids {
            if let Some(b) = self.token_bytes(py, t)? {
                out.extend_from_slice(b.as_bytes());
            }
        }
        Ok(PyBytes::new(py, &out))
    }

    /// Token ids whose bytes are exactly ``text``'s: the tokenizer's own encoding without
    /// special tokens, BOS or a dummy-prefix space.
    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        let ids = py
            .allow_threads(|| self.vocab.encode(text))
            .map_err(tokenizer_error)?;
        Ok(ids.into_iter().map(|t| t.as_u32()).collect())
    }

    fn __repr__(&self) -> String {
        format!(
            "munch.Tokenizer(name={:?}, tokens={}, vocab_size={}, eos_token_ids={:?})",
            self.vocab.name(),
            self.vocab.len(),
            self.vocab_size,
            self.eos_token_ids()
        )
    }
}
