//! What the CLI's test files share: running the binary, a scratch directory per test and the
//! files written there.

// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `munch ARGS`: exit code, stdout, stderr.
pub fn munch(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_munch"))
        .args(args)
        .output()
        .expect("the munch binary runs");
    (
        out.status.code().expect("munch exits with a code"),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    )
}

/// A fresh directory for one test's files (named after the test file and the test).
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "munch-{}-{}-{test}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to `name` in `dir`; the file's path as an argument.
pub fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    s(&path)
}

/// A path as an argument.
pub fn s(p: &Path) -> String {
    p.display().to_string()
}
