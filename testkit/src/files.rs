//! Real files for tests and benchmarks: the files of one kind under a folder, and an even
//! spread of them.

use std::path::{Path, PathBuf};

/// The files with `extension` under `dir` (recursively), at most `max_bytes` each, sorted;
/// folders that cannot be read are passed over (none at all if `dir` cannot be read).
pub fn files_under(dir: &Path, extension: &str, max_bytes: u64) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == extension) && meta.len() <= max_bytes {
                all.push(p);
            }
        }
    }
    all.sort();
    all
}

/// `n` of `all`, evenly spread over it (all of it if it has no more than `n`).
pub fn spread(all: &[PathBuf], n: usize) -> Vec<PathBuf> {
    if all.len() <= n {
        return all.to_vec();
    }
    (0..n).map(|i| all[i * all.len() / n].clone()).collect()
}
