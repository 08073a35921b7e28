//! The native module `munch._munch` of the Python package `munch`: PyO3 bindings of munch's
//! front door (`Grammar`, `Compiled`, `Matcher`, batch fills).
//!
//! The pure-Python package (`munch/__init__.py`) re-exports these classes and adds the bitmask
//! helpers for numpy and torch (`allocate_token_bitmask`, `apply_token_bitmask_inplace`) and
//! the transformers integration (`munch.hf`). Bitmasks are written in place into the caller's
//! array with the GIL released ([`bitmask`]); Rust errors become the exceptions of [`errors`].

// All APIs need docs!
#![deny(missing_docs)]
// Unsafe code writes bitmasks into the caller's arrays (`bitmask`): every block with its
// `SAFETY:` comment.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

use pyo3::prelude::*;

mod bitmask;
mod compiled;
mod errors;
mod grammar;
mod matcher;
mod tokenizer;

/// The module's Rust allocations (grammars, maskers, masks) go through mimalloc (see
/// `munch::alloc`, set up when the module is imported); Python's own objects are unaffected.
#[global_allocator]
static ALLOCATOR: munch::alloc::MiMalloc = munch::alloc::MiMalloc;

/// munch's native module: grammar-constrained decoding masks.
#[pymodule]
fn _munch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    munch::alloc::configure();
    m.add_class::<tokenizer::PyTokenizer>()?;
    m.add_class::<grammar::PyGrammar>()?;
    m.add_class::<compiled::PyCompiled>()?;
    m.add_class::<matcher::PyMatcher>()?;
    m.add_function(wrap_pyfunction!(compiled::compile, m)?)?;
    m.add_function(wrap_pyfunction!(matcher::fill_next_token_bitmask_batch, m)?)?;
    m.add_function(wrap_pyfunction!(matcher::accept_token_batch, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    Ok(())
}
