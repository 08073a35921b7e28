//! `munch.Matcher`: one sequence's constraint, and the batch fill over many matchers.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use munch::batch::Pool;
use munch::{Matcher, MatcherErrorKind};

use crate::bitmask::Bitmask;
use crate::compiled::PyCompiled;
use crate::errors::{matcher_error, value_error};

/// One sequence's constraint: the text accepted so far under a compiled grammar.
///
/// At every decoding step: ``fill_next_token_bitmask`` writes the allowed next tokens into a
/// row of the bitmask, the logits are masked (``munch.apply_token_bitmask_inplace``), and the
/// sampled token is accepted with ``accept_token``. Stop tokens (the tokenizer's EOS ids, or
/// ``stop_token_ids``) are allowed exactly where the text so far is a sentence of the grammar,
/// and accepting one terminates the matcher.
///
/// A refused call (``accept_token`` returning ``False``, an exception) leaves the matcher as it
/// was.
#[pyclass(module = "munch", name = "Matcher")]
pub struct PyMatcher {
    /// Behind a mutex only because Python objects must be `Sync`: calls take `&mut self` (the
    /// object's borrow flag) and reach the matcher with `get_mut`, without locking.
    matcher: Mutex<Matcher>,
    vocab_size: usize,
    compiled: Py<PyCompiled>,
}

/// A token id from Python: any integer (``int``, numpy or 0-d torch integers), checked against
/// the logits width.
fn token_id(obj: &Bound<'_, PyAny>, vocab_size: usize) -> PyResult<u32> {
    let id: i64 = obj.extract().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            value_error(format!("token id {obj} is out of range"))
        } else {
            e
        }
    })?;
    check_id(id, vocab_size)
}

fn check_id(id: i64, vocab_size: usize) -> PyResult<u32> {
    if id < 0 || id as u64 >= vocab_size as u64 {
        return Err(value_error(format!(
            "token id {id} is out of range: the vocabulary has {vocab_size} tokens"
        )));
    }
    Ok(id as u32)
}

/// A sequence of token ids from Python (a list, tuple, numpy array or 1-d tensor), checked.
fn token_ids(obj: &Bound<'_, PyAny>, vocab_size: usize) -> PyResult<Vec<u32>> {
    let mut ids = Vec::new();
    for item in obj.try_iter()? {
        ids.push(token_id(&item?, vocab_size)?);
    }
    Ok(ids)
}

/// Whether a refusal is an answer (`False`) rather than an exception: the token or text cannot
/// come next, or the matcher has already terminated.
fn refused(kind: &MatcherErrorKind) -> bool {
    matches!(
        kind,
        MatcherErrorKind::Rejected { .. }
            | MatcherErrorKind::SpecialToken(_)
            | MatcherErrorKind::Terminated
            | MatcherErrorKind::UnknownToken { .. }
    )
}

impl PyMatcher {
    fn wrap(matcher: Matcher, vocab_size: usize, compiled: Py<PyCompiled>) -> PyMatcher {
        PyMatcher {
            matcher: Mutex::new(matcher),
            vocab_size,
            compiled,
        }
    }

    fn get(&mut self) -> &mut Matcher {
        self.matcher.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Matcher> {
        self.matcher.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn answer(result: Result<(), munch::MatcherError>) -> PyResult<bool> {
        match result {
            Ok(()) => Ok(true),
            Err(e) if refused(e.kind()) => Ok(false),
            Err(e) => Err(matcher_error(e)),
        }
    }

    /// Checks that rows of `cols` words hold this matcher's mask.
    fn check_width(&self, cols: usize) -> PyResult<()> {
        // The tokenizer needs fewer words when the logits are padded past it, but a row
        // narrower than the logits' width is a bitmask allocated for another vocabulary.
        if cols < self.vocab_size.div_ceil(32) {
            return Err(value_error(format!(
                "the bitmask has {cols} words per row; this vocabulary needs \
                 ceil({} / 32) = {} (see munch.allocate_token_bitmask)",
                self.vocab_size,
                self.vocab_size.div_ceil(32)
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl PyMatcher {
    /// A matcher at the start of the text. ``stop_token_ids``: the ids that end the text
    /// (default: the tokenizer's EOS ids); an empty list means the text never ends.
    #[new]
    #[pyo3(signature = (compiled, stop_token_ids=None))]
    fn new(
        compiled: Bound<'_, PyCompiled>,
        stop_token_ids: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyMatcher> {
        let c = compiled.get();
        let matcher = match stop_token_ids {
            None => c.compiled.matcher(),
            Some(ids) => {
                let ids = token_ids(ids, c.vocab_size)?;
                Matcher::with_stop_tokens(&c.compiled, &ids).map_err(matcher_error)?
            }
        };
        Ok(PyMatcher::wrap(matcher, c.vocab_size, compiled.unbind()))
    }

    /// Writes the allowed next tokens into row ``index`` of ``bitmask`` (an int32 array of
    /// shape ``[batch, ceil(vocab_size / 32)]``, or one row ``[ceil(vocab_size / 32)]``): bit
    /// ``t % 32`` of word ``t / 32`` is set iff token ``t`` may come next; padded ids are 0.
    /// The row is written in place (numpy arrays, torch CPU tensors, any writable C-contiguous
    /// buffer), with the GIL released. After termination only the stop tokens are set.
    #[pyo3(signature = (bitmask, index=0))]
    fn fill_next_token_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        index: i64,
    ) -> PyResult<()> {
        let mut bitmask = Bitmask::new(bitmask)?;
        let row = bitmask.check_row(index)?;
        let cols = bitmask.cols;
        self.check_width(cols)?;
        let words = &mut bitmask.words()[row * cols..(row + 1) * cols];
        let matcher = self.get();
        py.allow_threads(|| matcher.fill_next_token_bitmask(words))
            .map_err(matcher_error)
    }

    /// Accepts ``token_id`` as the next token: ``True`` when it may come next (a stop token
    /// then terminates the matcher), ``False`` when it may not (and the matcher is unchanged),
    /// as the bitmask says. An id outside ``0 .. vocab_size`` raises ``ValueError``.
    fn accept_token(&mut self, token_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = self::token_id(token_id, self.vocab_size)?;
        PyMatcher::answer(self.get().accept_token(id))
    }

    /// Accepts ``token_ids`` one after another, all or none: ``False`` (and the matcher
    /// unchanged) when one of them may not come next.
    fn accept_tokens(&mut self, token_ids: &Bound<'_, PyAny>) -> PyResult<bool> {
        let ids = self::token_ids(token_ids, self.vocab_size)?;
        PyMatcher::answer(self.get().accept_tokens(&ids))
    }

    /// Accepts ``text`` (its UTF-8 bytes) whatever tokens would spell it, as one step for
    /// ``rollback``: ``False`` (and the matcher unchanged) when it cannot come next.
    fn accept_string(&mut self, text: &str) -> PyResult<bool> {
        PyMatcher::answer(self.get().accept_string(text))
    }

    /// ``accept_string`` of raw bytes.
    fn accept_bytes(&mut self, data: &[u8]) -> PyResult<bool> {
        PyMatcher::answer(self.get().accept_bytes(data))
    }

    /// How many of ``token_ids``, from the first, ``accept_tokens`` would accept, without
    /// accepting any (a speculative draft's accepted length). A stop token ends the count.
    fn validate_tokens(&mut self, py: Python<'_>, token_ids: &Bound<'_, PyAny>) -> PyResult<usize> {
        let ids = self::token_ids(token_ids, self.vocab_size)?;
        let matcher = self.get();
        Ok(py.allow_threads(move || matcher.validate_tokens(&ids)))
    }

    /// Undoes the last ``num_tokens`` accepted steps (tokens, the stop token, accepted strings)
    /// exactly. More than were accepted raises ``MatcherError``.
    #[pyo3(signature = (num_tokens=1))]
    fn rollback(&mut self, num_tokens: i64) -> PyResult<()> {
        if num_tokens < 0 {
            return Err(value_error(format!(
                "cannot roll back {num_tokens} steps: the count must be >= 0"
            )));
        }
        self.get()
            .rollback(num_tokens as usize)
            .map_err(matcher_error)
    }

    /// Back to the start of the text (the stop tokens stay).
    fn reset(&mut self) {
        self.get().reset();
    }

    /// An independent copy at the same text (beam search, parallel sampling).
    fn fork(&self, py: Python<'_>) -> PyMatcher {
        PyMatcher::wrap(
            self.lock().fork(),
            self.vocab_size,
            self.compiled.clone_ref(py),
        )
    }

    /// Whether the text so far is a sentence of the grammar (a stop token is allowed now).
    fn is_accepting(&self) -> bool {
        self.lock().is_accepting()
    }

    /// Whether a stop token was accepted.
    fn is_terminated(&self) -> bool {
        self.lock().is_terminated()
    }

    /// The text every continuation starts with (jump-forward decoding), up to its last whole
    /// UTF-8 character; empty when there is a choice or the text may end here.
    fn forced_string(&self) -> String {
        self.lock().forced_string()
    }

    /// The bytes every continuation starts with (``forced_string`` as bytes, uncut).
    fn forced_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.lock().forced_bytes())
    }

    /// The ids allowed next, ascending (what ``fill_next_token_bitmask`` sets; for tests and
    /// debugging, since it allocates).
    fn allowed_token_ids(&mut self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let mut words = vec![0u32; self.vocab_size.div_ceil(32)];
        let matcher = self.get();
        py.allow_threads(|| matcher.fill_next_token_bitmask(&mut words))
            .map_err(matcher_error)?;
        Ok((0..self.vocab_size as u32)
            .filter(|&t| words[t as usize / 32] >> (t % 32) & 1 == 1)
            .collect())
    }

    /// Steps ``rollback`` can undo: accepted tokens and strings, the stop token included.
    #[getter]
    fn num_accepted(&self) -> usize {
        self.lock().accepted_len()
    }

    /// The ids that end the text.
    #[getter]
    fn stop_token_ids(&self) -> Vec<u32> {
        self.lock().stop_tokens().collect()
    }

    /// The compiled grammar this matcher reads.
    #[getter]
    fn compiled(&self, py: Python<'_>) -> Py<PyCompiled> {
        self.compiled.clone_ref(py)
    }

    /// The model's logits width.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn __repr__(&self) -> String {
        let m = self.lock();
        format!(
            "munch.Matcher(grammar={:?}, accepted={}, terminated={})",
            m.compiled().grammar_name(),
            m.accepted_len(),
            m.is_terminated()
        )
    }
}

/// Thread pools by size, made once each: starting threads costs more than a batch fill.
static POOLS: Mutex<Vec<(usize, Arc<Pool>)>> = Mutex::new(Vec::new());

fn pool(threads: usize) -> PyResult<Arc<Pool>> {
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(Arc::clone(p));
    }
    let p = Arc::new(Pool::new(threads).map_err(matcher_error)?);
    pools.push((threads, Arc::clone(&p)));
    Ok(p)
}

/// Fills the bitmask rows of ``matchers`` in parallel, with the GIL released: matcher ``i``
/// fills row ``indices[i]`` (row ``i`` without ``indices``), exactly as its own
/// ``fill_next_token_bitmask`` would; rows no matcher names are left as they are.
/// ``threads``: the size of the thread pool (default: one thread per core). A matcher listed
/// twice, a row named twice or out of range, raise ``ValueError``.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, indices=None, threads=None))]
pub fn fill_next_token_bitmask_batch(
    py: Python<'_>,
    matchers: &Bound<'_, PyAny>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<&Bound<'_, PyAny>>,
    threads: Option<i64>,
) -> PyResult<()> {
    let mut bitmask = Bitmask::new(bitmask)?;
    let bound: Vec<Bound<'_, PyMatcher>> = matchers
        .try_iter()?
        .map(|m| -> PyResult<Bound<'_, PyMatcher>> {
            let m = m?;
            m.downcast::<PyMatcher>().cloned().map_err(|_| {
                value_error(format!(
                    "matchers must be munch.Matcher objects; got a {}",
                    m.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })
        })
        .collect::<PyResult<_>>()?;
    let mut refs = Vec::with_capacity(bound.len());
    for (i, m) in bound.iter().enumerate() {
        let r = m.try_borrow_mut().map_err(|_| {
            value_error(format!(
                "matcher {i} is listed twice, or is in use by another thread"
            ))
        })?;
        r.check_width(bitmask.cols)?;
        refs.push(r);
    }
    let indices = match indices {
        None => None,
        Some(obj) => {
            let mut v = Vec::new();
            for item in obj.try_iter()? {
                let i: i64 = item?.extract()?;
                v.push(bitmask.check_row(i)?);
            }
            Some(v)
        }
    };
    let pool = match threads {
        None => None,
        Some(n) if n >= 1 => Some(pool(n as usize)?),
        Some(n) => return Err(value_error(format!("threads must be >= 1; got {n}"))),
    };
    let mut ms: Vec<&mut Matcher> = refs.iter_mut().map(|r| r.get()).collect();
    let cols = bitmask.cols;
    let words = bitmask.words();
    py.allow_threads(|| match &pool {
        Some(pool) => pool.fill_next_token_bitmask(&mut ms, words, cols, indices.as_deref()),
        None => munch::batch::fill_next_token_bitmask(&mut ms, words, cols, indices.as_deref()),
    })
    .map_err(|e| match e.kind() {
        MatcherErrorKind::Batch(_) => value_error(e.to_string()),
        _ => matcher_error(e),
    })
}

/// Accepts ``token_ids[i]`` in ``matchers[i]`` for every ``i``, in parallel with the GIL
/// released: one ``bool`` per matcher, as its ``accept_token`` would answer.
#[pyfunction]
#[pyo3(signature = (matchers, token_ids, threads=None))]
pub fn accept_token_batch(
    py: Python<'_>,
    matchers: &Bound<'_, PyAny>,
    token_ids: &Bound<'_, PyAny>,
    threads: Option<i64>,
) -> PyResult<Vec<bool>> {
    let bound: Vec<Bound<'_, PyMatcher>> = matchers
        .try_iter()?
        .map(|m| -> PyResult<Bound<'_, PyMatcher>> {
            m?.downcast_into::<PyMatcher>()
                .map_err(|_| value_error("matchers must be munch.Matcher objects"))
        })
        .collect::<PyResult<_>>()?;
    let mut refs = Vec::with_capacity(bound.len());
    for (i, m) in bound.iter().enumerate() {
        refs.push(m.try_borrow_mut().map_err(|_| {
            value_error(format!(
                "matcher {i} is listed twice, or is in use by another thread"
            ))
        })?);
    }
    let mut ids = Vec::new();
    for (i, item) in token_ids.try_iter()?.enumerate() {
        let vocab_size = refs.get(i).map_or(usize::MAX, |r| r.vocab_size);
        ids.push(token_id(&item?, vocab_size)?);
    }
    if ids.len() != refs.len() {
        return Err(value_error(format!(
            "{} matchers and {} token ids",
            refs.len(),
            ids.len()
        )));
    }
    let pool = match threads {
        None => None,
        Some(n) if n >= 1 => Some(pool(n as usize)?),
        Some(n) => return Err(value_error(format!("threads must be >= 1; got {n}"))),
    };
    let mut ms: Vec<&mut Matcher> = refs.iter_mut().map(|r| r.get()).collect();
    let results = py
        .allow_threads(|| match &pool {
            Some(pool) => pool.accept_token(&mut ms, &ids),
            None => munch::batch::accept_token(&mut ms, &ids),
        })
        .map_err(|e| value_error(e.to_string()))?;
    results.into_iter().map(PyMatcher::answer).collect()
}
