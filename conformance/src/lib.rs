//! # munch-conformance
//!
//! What proves munch right: real-file corpora, agreement with Lark (the reference for what a Lark
//! grammar accepts), and — as the maskers arrive — the exact oracle and cross-checks of every
//! masker on one corpus.

#![deny(missing_docs)]

pub mod corpus;
pub mod lark;
