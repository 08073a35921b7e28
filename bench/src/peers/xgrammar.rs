//! XGrammar's Python environment: a virtualenv under munch's cache, made and filled with pip on
//! first use, and the command that runs `bench/xgrammar_trace.py` in it.
//!
//! Only the packages XGrammar's matcher needs are installed (`--no-deps`): its declared
//! dependencies `torch`, `triton` and `transformers` (several GiB) serve GPU kernels and
//! Hugging Face tokenizer objects, which the trace never uses; the script stands in for their
//! modules at import time (see the script).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages, pinned: XGrammar and what its matcher imports.
pub const PACKAGES: &[&str] = &[
    "xgrammar==0.2.8",
    "apache-tvm-ffi==0.1.15.post2",
    "numpy==2.4.6",
    "pydantic==2.14.3",
    "pydantic-core==2.50.4",
    "typing-extensions==4.16.0",
    "typing-inspection==0.4.5",
    "annotated-types==0.8.0",
];

/// The script, in the repository.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("xgrammar_trace.py")
}

fn venv_dir() -> PathBuf {
    munch_vocab::cache::cache_dir().join("peers-venv")
}

/// The virtualenv's Python, making the virtualenv and installing [`PACKAGES`] if needed.
pub fn python() -> Result<PathBuf, String> {
    let dir = venv_dir();
    let python = dir.join("bin/python");
    let stamp = dir.join(".packages");
    let wanted = PACKAGES.join("\n");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(python);
    }
    if !python.is_file() {
        eprintln!("peers: making a Python virtualenv in {}", dir.display());
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .map_err(|e| format!("running python3 -m venv: {e}"))?;
        if !status.success() {
            return Err(format!(
                "python3 -m venv {} failed ({status})",
                dir.display()
            ));
        }
    }
    eprintln!("peers: pip install --no-deps {}", PACKAGES.join(" "));
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--no-deps"])
        .args(PACKAGES)
        .status()
        .map_err(|e| format!("running pip: {e}"))?;
    if !status.success() {
        return Err(format!("pip install of XGrammar failed ({status})"));
    }
    std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(python)
}
