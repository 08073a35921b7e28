//! masker-wda
