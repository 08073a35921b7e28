//! masker-spanner
