//! # munch-bench
//!
//! munch's benchmark against the field, apart from the crates that prove munch right
//! (`munch-conformance`):
//!
//! - `peers` (cargo feature `peers`): munch's maskers, llguidance, glrmask and XGrammar side by
//!   side on SynCode's grammars and real tokenizers; the `peers` binary runs it and writes
//!   `bench/results/` and the README's table.
//!
//! `bench/PERFORMANCE.md` keeps the figures and the comparisons worth keeping.

#![deny(missing_docs)]

#[cfg(feature = "peers")]
pub mod peers;
pub mod schemas;

/// Every benchmark binary allocates with mimalloc, set up by `munch::alloc::configure` first
/// thing in `main`, as the `munch` command and the Python module do.
#[global_allocator]
static ALLOCATOR: munch::alloc::MiMalloc = munch::alloc::MiMalloc;
