//! Batch calls: many matchers' bitmask rows filled, and tokens accepted, on a thread pool.
//!
//! An engine's bitmask is one `[batch, words]` array; [`fill_next_token_bitmask`] gives each
//! matcher its row (or the row `indices` names) and fills them in parallel with rayon. The
//! results are exactly those of the matchers' own calls one by one: each matcher is touched by
//! one thread, and rows are disjoint (two matchers naming one row is an error, not a race).
//!
//! The free functions run on rayon's global pool (or the pool the caller is `install`ed in);
//! a [`Pool`] has its own number of threads.

use std::borrow::BorrowMut;

use rayon::prelude::*;

use crate::error::{MatcherError, MatcherErrorKind};
use crate::matcher::Matcher;

/// A thread pool for batch calls.
pub struct Pool {
    pool: rayon::ThreadPool,
}

impl Pool {
    /// A pool of `threads` threads (`0`: one per core).
    pub fn new(threads: usize) -> Result<Pool, MatcherError> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("munch-batch-{i}"))
            .build()
            .map(|pool| Pool { pool })
            .map_err(|e| batch_error(format!("cannot start a thread pool: {e}")))
    }

    /// Its number of threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// [`fill_next_token_bitmask`] on this pool.
    pub fn fill_next_token_bitmask<M: BorrowMut<Matcher> + Send>(
        &self,
        matchers: &mut [M],
        bitmask: &mut [u32],
        row_words: usize,
        indices: Option<&[usize]>,
    ) -> Result<(), MatcherError> {
        self.pool
            .install(|| fill_next_token_bitmask(matchers, bitmask, row_words, indices))
    }

    /// [`accept_token`] on this pool.
    pub fn accept_token<M: BorrowMut<Matcher> + Send>(
        &self,
        matchers: &mut [M],
        tokens: &[u32],
    ) -> Result<Vec<Result<(), MatcherError>>, MatcherError> {
        self.pool.install(|| accept_token(matchers, tokens))
    }
}

/// Fills the bitmask rows of `matchers` in parallel: `bitmask` is `[rows, row_words]`, row
/// major; matcher `i` fills row `indices[i]` (row `i` without `indices`). Rows no matcher names
/// are left as they are. Each row is what [`Matcher::fill_next_token_bitmask`] writes.
pub fn fill_next_token_bitmask<M: BorrowMut<Matcher> + Send>(
    matchers: &mut [M],
    bitmask: &mut [u32],
    row_words: usize,
    indices: Option<&[usize]>,
) -> Result<(), MatcherError> {
    if row_words == 0 || !bitmask.len().is_multiple_of(row_words) {
        return Err(batch_error(format!(
            "a bitmask of {} words is not made of rows of {row_words} words",
            bitmask.len()
        )));
    }
    let mut rows: Vec<Option<&mut [u32]>> = bitmask.chunks_mut(row_words).map(Some).collect();
    let row_len = rows.len();
    let mut work: Vec<(&mut M, &mut [u32])> = Vec::with_capacity(matchers.len());
    match indices {
        Some(indices) => {
            if indices.len() != matchers.len() {
                return Err(batch_error(format!(
                    "{} matchers and {} indices",
                    matchers.len(),
                    indices.len()
                )));
            }
            for (m, &i) in matchers.iter_mut().zip(indices) {
                let row = rows
                    .get_mut(i)
                    .ok_or_else(|| {
                        batch_error(format!(
                            "row {i} is out of range: the bitmask has {row_len}"
                        ))
                    })?
                    .take()
                    .ok_or_else(|| batch_error(format!("row {i} is named twice")))?;
                work.push((m, row));
            }
        }
        None => {
            if matchers.len() > row_len {
                return Err(batch_error(format!(
                    "{} matchers and {row_len} bitmask rows",
                    matchers.len()
                )));
            }
            for (m, row) in matchers.iter_mut().zip(rows.iter_mut()) {
                work.push((m, row.take().expect("each row is taken once")));
            }
        }
    }
    work.into_par_iter()
        .with_max_len(1)
        .map(|(m, row)| m.borrow_mut().fill_next_token_bitmask(row))
        .collect::<Result<(), MatcherError>>()
}

/// Accepts `tokens[i]` in `matchers[i]`, in parallel: each matcher's own result (a refused token
/// leaves that matcher unchanged and the others go on). Fails as a whole only when the lengths
/// differ.
pub fn accept_token<M: BorrowMut<Matcher> + Send>(
    matchers: &mut [M],
    tokens: &[u32],
) -> Result<Vec<Result<(), MatcherError>>, MatcherError> {
    if tokens.len() != matchers.len() {
        return Err(batch_error(format!(
            "{} matchers and {} tokens",
            matchers.len(),
            tokens.len()
        )));
    }
    Ok(matchers
        .par_iter_mut()
        .with_max_len(1)
        .zip(tokens.par_iter())
        .map(|(m, &t)| m.borrow_mut().accept_token(t))
        .collect())
}

fn batch_error(message: String) -> MatcherError {
    MatcherError::new(MatcherErrorKind::Batch(message))
}
