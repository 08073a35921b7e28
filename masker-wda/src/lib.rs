//! # munch-masker-wda
//!
//! (work in progress)

// All APIs need docs: this crate's types are what the engine wires in.
#![deny(missing_docs)]

mod bits;
mod template;

#[cfg(test)]
mod template_tests;
