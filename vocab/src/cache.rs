//! Where munch keeps what it fetches once: real tokenizers and reference grammars.
//!
//! `$MUNCH_CACHE` if set, else `$XDG_CACHE_HOME/munch`, else `$HOME/.cache/munch`, else
//! `.munch-cache` in the working directory.

use std::path::PathBuf;

/// The cache directory (not created).
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MUNCH_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("munch");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache").join("munch");
    }
    PathBuf::from(".munch-cache")
}
