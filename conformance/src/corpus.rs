//! Real source files for agreement and conformance runs, fetched once into the cache.
//!
//! Real programs are external work, so they are fetched, never committed: Go from Debian's
//! `golang-1.19-src`, Java from Debian's `openjdk-17-source` (its `src.zip`), JSON from the Go
//! sources' test data. Packages are fetched with `apt-get download` (after `apt-get update` if
//! the package lists are empty) and unpacked with `dpkg-deb`; SQL queries are munch's own, under
//! `grammars/corpus/sql/`.
//!
//! Selection is deterministic: files sorted by path, filtered by size, then evenly spaced, so a
//! run is reproducible. Go files keep only the text from their `package` clause on, because
//! SynCode's Go grammar reads a comment at the very start of a file as a statement terminator and
//! would reject every file for that alone (this is SynCode's grammar, not a lexing difference).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use munch_testkit::files::spread;
use munch_vocab::cache::cache_dir;

/// Why a corpus could not be had.
#[derive(Debug)]
pub struct CorpusError(String);

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CorpusError {}

impl CorpusError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        CorpusError(message.into())
    }
}

fn err(message: impl Into<String>) -> CorpusError {
    CorpusError::new(message)
}

/// A language of the real-file corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Go source files.
    Go,
    /// Java source files.
    Java,
    /// JSON documents.
    Json,
    /// SQL queries (munch's own).
    Sql,
}

impl Language {
    /// The SynCode grammar that describes this language.
    pub fn syncode_grammar(self) -> &'static str {
        match self {
            Language::Go => "go",
            Language::Java => "java",
            Language::Json => "json",
            Language::Sql => "sql",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Language::Go => "go",
            Language::Java => "java",
            Language::Json => "json",
            Language::Sql => "sql",
        }
    }
}

/// Up to `n` real files of `language`, at most `max_bytes` each, evenly spread over the source,
/// as paths in the cache (or in the repository for SQL).
pub fn files(language: Language, n: usize, max_bytes: u64) -> Result<Vec<PathBuf>, CorpusError> {
    let mut all = match language {
        Language::Go => collect(&unpacked_deb("golang-1.19-src")?, "go", max_bytes)?,
        Language::Java => collect(&java_sources()?, "java", max_bytes)?,
        Language::Json => collect(&unpacked_deb("golang-1.19-src")?, "json", max_bytes)?,
        Language::Sql => collect(&sql_dir(), "sql", max_bytes)?,
    };
    all.sort();
    let picked = spread(&all, n);
    if language != Language::Go {
        return Ok(picked);
    }
    let out = cache_dir().join("corpus").join("go");
    std::fs::create_dir_all(&out).map_err(|e| err(format!("{}: {e}", out.display())))?;
    picked
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let text = std::fs::read_to_string(path)
                .map_err(|e| err(format!("{}: {e}", path.display())))?;
            let from = text.find("\npackage ").map(|at| at + 1).unwrap_or(0);
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("file");
            let target = out.join(format!("{i:04}_{stem}.{}", language.extension()));
            std::fs::write(&target, &text[from..])
                .map_err(|e| err(format!("{}: {e}", target.display())))?;
            Ok(target)
        })
        .collect()
}

/// munch's own SQL queries.
pub fn sql_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars/corpus/sql")
}

fn collect(root: &Path, extension: &str, max_bytes: u64) -> Result<Vec<PathBuf>, CorpusError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension)
                && meta.len() > 0
                && meta.len() <= max_bytes
            {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The unpacked contents of Debian package `package`, fetching it on first use.
fn unpacked_deb(package: &str) -> Result<PathBuf, CorpusError> {
    let root = cache_dir().join("debian").join(package);
    let unpacked = root.join("root");
    if unpacked.join(".complete").is_file() {
        return Ok(unpacked);
    }
    std::fs::create_dir_all(&root).map_err(|e| err(format!("{}: {e}", root.display())))?;
    let deb = match find_deb(&root, package) {
        Some(deb) => deb,
        None => {
            if !apt_download(&root, package) {
                // A fresh machine may have empty package lists.
                let _ = Command::new("apt-get").args(["update", "-qq"]).status();
                if !apt_download(&root, package) {
                    return Err(err(format!(
                        "`apt-get download {package}` failed: the real-file corpus needs \
                         Debian's package tools and its package registry"
                    )));
                }
            }
            find_deb(&root, package)
                .ok_or_else(|| err(format!("apt-get download {package} left no .deb")))?
        }
    };
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&unpacked)
        .status()
        .map_err(|e| err(format!("running dpkg-deb: {e}")))?;
    if !status.success() {
        return Err(err(format!("dpkg-deb -x {} failed", deb.display())));
    }
    std::fs::write(unpacked.join(".complete"), b"")
        .map_err(|e| err(format!("{}: {e}", unpacked.display())))?;
    Ok(unpacked)
}

fn apt_download(dir: &Path, package: &str) -> bool {
    Command::new("apt-get")
        .args(["download", "-qq", package])
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success())
}

fn find_deb(dir: &Path, package: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "deb")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{package}_")))
        })
}

/// The JDK's own Java sources (`java.base/java/{util,lang}`), unzipped from the Debian package's
/// `src.zip`.
fn java_sources() -> Result<PathBuf, CorpusError> {
    let out = cache_dir().join("corpus").join("java");
    if out.join(".complete").is_file() {
        return Ok(out);
    }
    let deb = unpacked_deb("openjdk-17-source")?;
    let zip = deb.join("usr/lib/jvm/openjdk-17/lib/src.zip");
    if !zip.is_file() {
        return Err(err(format!("{} is missing", zip.display())));
    }
    std::fs::create_dir_all(&out).map_err(|e| err(format!("{}: {e}", out.display())))?;
    // `unzip` is not on every machine; Python's zipfile module is (pip needs Python anyway).
    let status = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             names = [n for n in z.namelist() if n.startswith(('java.base/java/util/', 'java.base/java/lang/')) and n.endswith('.java')]\n\
             z.extractall(sys.argv[2], names)",
        ])
        .arg(&zip)
        .arg(&out)
        .status()
        .map_err(|e| err(format!("running python3: {e}")))?;
    if !status.success() {
        return Err(err(format!(
            "extracting Java sources from {} failed",
            zip.display()
        )));
    }
    std::fs::write(out.join(".complete"), b"")
        .map_err(|e| err(format!("{}: {e}", out.display())))?;
    Ok(out)
}
