//! SynCode's grammars, fetched once with `pip download --no-deps syncode==0.4.16` and unpacked
//! into the cache. They are external work: fetched, never committed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The SynCode release whose grammars munch is measured on.
pub const VERSION: &str = "0.4.16";

/// The grammars in that release.
pub const NAMES: &[&str] = &[
    "json",
    "go",
    "java",
    "sql",
    "c",
    "calc",
    "tiny",
    "prover9",
    "invariants",
    "python",
];

/// Why a SynCode grammar could not be had.
#[derive(Debug)]
pub struct FetchError {
    message: String,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FetchError {}

fn err(message: impl Into<String>) -> FetchError {
    FetchError {
        message: message.into(),
    }
}

/// The directory holding SynCode's `*.lark` files, fetching and unpacking the sdist on first
/// use.
pub fn grammar_dir() -> Result<PathBuf, FetchError> {
    let dir = sdist("syncode", VERSION)?.join("syncode/parsers/grammars");
    if dir.join("json.lark").is_file() {
        Ok(dir)
    } else {
        Err(err(format!(
            "the syncode {VERSION} sdist did not hold syncode/parsers/grammars"
        )))
    }
}

/// The unpacked source distribution of PyPI package `name` at `version`
/// (`cache_dir()/NAME-VERSION/NAME-VERSION`), fetched with `pip download --no-deps
/// --no-binary :all:` and unpacked on first use; later calls run nothing. Test data that ships
/// inside a Python package (SynCode's grammars, the JSON Schema Test Suite inside
/// `jsonschema`'s sdist) comes through here.
pub fn sdist(name: &str, version: &str) -> Result<PathBuf, FetchError> {
    let root = munch_vocab::cache::cache_dir().join(format!("{name}-{version}"));
    let dir = root.join(format!("{name}-{version}"));
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root)
        .map_err(|e| err(format!("cannot create cache {}: {e}", root.display())))?;
    let tarball = root.join(format!("{name}-{version}.tar.gz"));
    if !tarball.is_file() {
        let pip = find_pip().ok_or_else(|| {
            err(format!(
                "fetching {name} {version} needs `pip` (or `python3 -m pip`) on PATH"
            ))
        })?;
        let status = Command::new(&pip[0])
            .args(&pip[1..])
            .args(["download", "--no-deps", "--no-binary", ":all:", "-d"])
            .arg(&root)
            .arg(format!("{name}=={version}"))
            .status()
            .map_err(|e| err(format!("running pip: {e}")))?;
        if !status.success() || !tarball.is_file() {
            return Err(err(format!(
                "`pip download --no-deps {name}=={version}` failed ({status})"
            )));
        }
    }
    // Unpacked beside and renamed, so that the directory appears whole or not at all.
    let scratch = root.join(format!(".unpack-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| err(format!("cannot create {}: {e}", scratch.display())))?;
    let unpacked = unpack(&tarball, &scratch).and_then(|()| {
        match std::fs::rename(scratch.join(format!("{name}-{version}")), &dir) {
            Ok(()) => Ok(()),
            // Another process got there first.
            Err(_) if dir.is_dir() => Ok(()),
            Err(e) => Err(err(format!("{}: {e}", dir.display()))),
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    unpacked.map(|()| dir)
}

/// The source of SynCode's grammar `name` (one of [`NAMES`]).
pub fn grammar(name: &str) -> Result<String, FetchError> {
    if !NAMES.contains(&name) {
        return Err(err(format!(
            "unknown SynCode grammar {name:?}; known: {}",
            NAMES.join(", ")
        )));
    }
    let path = grammar_dir()?.join(format!("{name}.lark"));
    std::fs::read_to_string(&path).map_err(|e| err(format!("reading {}: {e}", path.display())))
}

fn find_pip() -> Option<Vec<String>> {
    let works = |cmd: &[&str]| {
        Command::new(cmd[0])
            .args(&cmd[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    [&["pip"][..], &["pip3"], &["python3", "-m", "pip"]]
        .into_iter()
        .find(|cmd| works(cmd))
        .map(|cmd| cmd.iter().map(|s| s.to_string()).collect())
}

fn unpack(tarball: &Path, into: &Path) -> Result<(), FetchError> {
    let status = Command::new("tar")
        .arg("xzf")
        .arg(tarball)
        .arg("-C")
        .arg(into)
        .status()
        .map_err(|e| err(format!("running tar: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(err(format!(
            "unpacking {} failed ({status})",
            tarball.display()
        )))
    }
}
