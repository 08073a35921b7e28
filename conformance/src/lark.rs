//! Lark, the reference for what a Lark grammar accepts, run in a private virtualenv.
//!
//! The first use creates `cache_dir()/lark-venv` with `python3 -m venv` and installs the pinned
//! Lark release into it with pip; later uses reuse it. `scripts/lark_label.py` parses each file
//! with `Lark(grammar, parser=MODE)`, the contextual lexer for LALR and the basic one for
//! Earley, and reports acceptance.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::corpus::CorpusError;
use munch_vocab::cache::cache_dir;

/// The Lark release munch is compared with.
pub const LARK_VERSION: &str = "1.3.1";

/// Lark's parsing algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `parser='lalr'`: fast; resolves shift/reduce conflicts by shifting.
    Lalr,
    /// `parser='earley'`: the grammar's whole context-free language.
    Earley,
}

/// Lark's verdict on one file.
#[derive(Clone, Debug, Deserialize)]
pub struct Label {
    /// The file.
    pub file: PathBuf,
    /// Whether Lark parsed it.
    pub accepted: bool,
    /// Lark's message when it did not.
    pub error: Option<String>,
    /// The unexpected token `[type, value]`, when Lark's parser refused one.
    #[serde(default)]
    pub token: Option<(String, String)>,
    /// The character no terminal matched, when Lark's lexer stopped.
    #[serde(default)]
    pub char: Option<String>,
    /// That character's Unicode category in Lark's Python (`Cn`: unassigned there).
    #[serde(default)]
    pub char_category: Option<String>,
}

/// The virtualenv's Python, creating the virtualenv on first use.
pub fn python() -> Result<PathBuf, CorpusError> {
    // Tests of one process ask at once: one of them makes the virtualenv.
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _making = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = cache_dir().join("lark-venv");
    let python = venv.join("bin").join("python");
    let marker = venv.join(format!(".lark-{LARK_VERSION}"));
    if marker.is_file() {
        return Ok(python);
    }
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        &format!("lark=={LARK_VERSION}"),
    ]))?;
    std::fs::write(&marker, b"")
        .map_err(|e| CorpusError::new(format!("{}: {e}", marker.display())))?;
    Ok(python)
}

/// Lark's verdict on each file, in order.
pub fn label(grammar: &Path, mode: Mode, files: &[PathBuf]) -> Result<Vec<Label>, CorpusError> {
    label_with(grammar, mode, &[], files)
}

/// [`label`] with options of `scripts/lark_label.py` before the files: `["--start",
/// "file_input", "--postlex", "python"]` parses from `file_input` through Lark's
/// `PythonIndenter`.
pub fn label_with(
    grammar: &Path,
    mode: Mode,
    options: &[&str],
    files: &[PathBuf],
) -> Result<Vec<Label>, CorpusError> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lark_label.py");
    let mut labels = Vec::with_capacity(files.len());
    // Chunks keep the command line short.
    for chunk in files.chunks(200) {
        let output = Command::new(python()?)
            .arg(&script)
            .arg(grammar)
            .arg(match mode {
                Mode::Lalr => "lalr",
                Mode::Earley => "earley",
            })
            .args(options)
            .args(chunk)
            .output()
            .map_err(|e| CorpusError::new(format!("running Lark: {e}")))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        let header: serde_json::Value = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| {
                CorpusError::new(format!(
                    "Lark printed nothing: {}",
                    String::from_utf8_lossy(&output.stderr)
                ))
            })?;
        if let Some(e) = header.get("grammar_error") {
            return Err(CorpusError::new(format!("Lark refuses the grammar: {e}")));
        }
        for line in lines {
            let label: Label = serde_json::from_str(line)
                .map_err(|e| CorpusError::new(format!("bad line from Lark ({e}): {line}")))?;
            labels.push(label);
        }
    }
    if labels.len() != files.len() {
        return Err(CorpusError::new(format!(
            "Lark labelled {} of {} files",
            labels.len(),
            files.len()
        )));
    }
    Ok(labels)
}

/// A grammar of Lark's own test suite that Lark loads.
#[derive(Clone, Debug, Deserialize)]
pub struct SuiteGrammar {
    /// The grammar, written out.
    pub file: PathBuf,
    /// The test file it comes from, and the line of the string.
    pub source: String,
    /// That line.
    pub line: u32,
    /// The parser Lark loaded it with (`lalr`, else `earley`).
    pub mode: String,
}

/// The unpacked [`LARK_VERSION`] source distribution (its `tests/` folder is Lark's test
/// suite), fetched once with pip into the cache.
fn suite_source() -> Result<PathBuf, CorpusError> {
    let root = cache_dir().join(format!("lark-src-{LARK_VERSION}"));
    let source = root.join(format!("lark-{LARK_VERSION}"));
    if !source.join("tests").is_dir() {
        std::fs::create_dir_all(&root)
            .map_err(|e| CorpusError::new(format!("{}: {e}", root.display())))?;
        run(Command::new(python()?)
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
            ])
            .arg(format!("lark=={LARK_VERSION}"))
            .arg("-d")
            .arg(&root))?;
        let sdist = root.join(format!("lark-{LARK_VERSION}.tar.gz"));
        run(Command::new("tar")
            .arg("xzf")
            .arg(&sdist)
            .arg("-C")
            .arg(&root))?;
    }
    Ok(source)
}

/// Runs one of this crate's scripts with Lark's Python on `args`; its standard output.
fn run_script(script: &str, args: &[&Path]) -> Result<String, CorpusError> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let output = Command::new(python()?)
        .arg(&script)
        .args(args)
        .output()
        .map_err(|e| CorpusError::new(format!("running Lark: {e}")))?;
    if !output.status.success() {
        return Err(CorpusError::new(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The grammars of Lark's test suite (the `tests/` folder of the [`LARK_VERSION`] source
/// distribution, fetched once with pip) that Lark itself loads, written out by
/// `scripts/lark_test_grammars.py` under the cache.
pub fn suite_grammars() -> Result<Vec<SuiteGrammar>, CorpusError> {
    let source = suite_source()?;
    let out = cache_dir()
        .join(format!("lark-src-{LARK_VERSION}"))
        .join("grammars");
    run_script("lark_test_grammars.py", &[&source.join("tests"), &out])?
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .map_err(|e| CorpusError::new(format!("bad line from Lark ({e}): {l}")))
        })
        .collect()
}

/// A parse that Lark's own test suite makes with its LALR parser, and Lark's verdict.
#[derive(Clone, Debug, Deserialize)]
pub struct SuiteParse {
    /// The parser's grammar, written out.
    pub grammar: PathBuf,
    /// The start rule parsed from.
    pub start: String,
    /// Lark's lexer: `basic` or `contextual`.
    pub lexer: String,
    /// The text.
    pub text: String,
    /// Whether Lark accepted it.
    pub accepted: bool,
}

/// Every distinct parse that Lark's test suite makes with `parser="lalr"` and one of Lark's
/// own lexers, with its verdict, recorded by `scripts/lark_test_parses.py` while the suite runs
/// (parsers with a post-lexer, lexer callbacks or options munch has no counterpart of are left
/// out; the script says which).
pub fn suite_parses() -> Result<Vec<SuiteParse>, CorpusError> {
    let source = suite_source()?;
    let out = cache_dir()
        .join(format!("lark-src-{LARK_VERSION}"))
        .join("parses");
    run_script("lark_test_parses.py", &[&source, &out])?;
    let path = out.join("parses.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CorpusError::new(format!("{}: {e}", path.display())))?;
    text.lines()
        .map(|l| {
            serde_json::from_str(l)
                .map_err(|e| CorpusError::new(format!("bad line from Lark ({e}): {l}")))
        })
        .collect()
}

fn run(command: &mut Command) -> Result<(), CorpusError> {
    let status = command
        .status()
        .map_err(|e| CorpusError::new(format!("running {command:?}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(CorpusError::new(format!("{command:?} failed ({status})")))
    }
}
