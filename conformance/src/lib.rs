//! # munch-conformance
//!
//! What proves munch right:
//!
//! - [`corpus`]: real-file corpora (Go, Java, JSON from Debian's sources; munch's own SQL).
//! - [`lark`]: agreement with Lark, the reference for what a Lark grammar accepts.
//! - [`suite`]: the conformance corpus — one format of cases under `conformance/cases/`, run by
//!   every masker and the exact oracle (`tests/corpus.rs`).

#![deny(missing_docs)]

pub mod corpus;
pub mod lark;
pub mod suite;
