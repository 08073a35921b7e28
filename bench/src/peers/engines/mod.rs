//! The engines: munch's maskers, llguidance and glrmask in a Rust worker, XGrammar in Python.
//!
//! | name | what | settings |
//! |---|---|---|
//! | `munch-NAME` | each masker of this build but the oracle (`munch::MaskerKind::ALL`: `munch-trie`, …) | 1 thread |
//! | `munch-NAME-bg` | the same built in the background (`Config::background`): the trie walk masks until it is ready | the build on its own thread |
//! | `llguidance` | the `llguidance` crate's `Matcher` | `no_forcing`, slicer on (its general slices), 1 thread |
//! | `llguidance-noslicer` | the same | `no_forcing`, slicer off, 1 thread |
//! | `glrmask` | the `glrmask` crate's `Constraint` | default mask strategy (`Auto`), 1 rayon thread |
//! | `xgrammar` | PyPI `xgrammar` through `bench/xgrammar_trace.py` | 1 thread, cache off |
//!
//! Every engine reads the same token bytes (munch's vocabulary, written to the job's vocabulary
//! file) and is forced along the same token ids.

mod glrmask;
mod llguidance;
mod munch;

use super::job::{Job, Text, VocabFile, WorkerResult};
use super::trace::{trace, Session, Timings};

/// The peers' names, after munch's maskers.
pub const PEERS: &[&str] = &["llguidance", "llguidance-noslicer", "glrmask", "xgrammar"];

/// Every engine this build can run: munch's compiled maskers, the same built in the
/// background (`-bg`), then the peers.
pub fn available() -> Vec<String> {
    let kinds: Vec<::munch::MaskerKind> = ::munch::MaskerKind::ALL
        .iter()
        .copied()
        .filter(|&k| k != ::munch::MaskerKind::Oracle)
        .collect();
    let mut out: Vec<String> = kinds.iter().map(|k| format!("munch-{k}")).collect();
    out.extend(kinds.iter().map(|k| format!("munch-{k}-bg")));
    // The wda built on demand (`Config::lazy`): the cold start of a grammar per request.
    if kinds.contains(&::munch::MaskerKind::Wda) {
        out.push("munch-wda-lazy".to_string());
    }
    out.extend(PEERS.iter().map(|p| p.to_string()));
    out
}

/// Whether `engine` is one of munch's maskers.
pub fn is_munch(engine: &str) -> bool {
    engine.starts_with("munch-")
}

/// Runs a Rust engine's job in this process (the worker side).
pub fn run_in_process(job: &Job, vocab: &VocabFile) -> WorkerResult {
    let mut result = WorkerResult::default();
    let outcome = if let Some(kind) = job.engine.strip_prefix("munch-") {
        munch::run(kind, job, &mut result)
    } else {
        match job.engine.as_str() {
            "llguidance" => llguidance::run(true, job, vocab, &mut result),
            "llguidance-noslicer" => llguidance::run(false, job, vocab, &mut result),
            "glrmask" => glrmask::run(job, vocab, &mut result),
            other => Err(format!("engine {other:?} does not run in a Rust worker")),
        }
    };
    if let Err(e) = outcome {
        result.error = Some(e);
    }
    result.peak_rss_mib = ::munch::stats::peak_rss_bytes().map_or(0.0, mib);
    result
}

/// Bytes as MiB.
pub fn mib(bytes: u64) -> f64 {
    (bytes as f64 / (1024.0 * 1024.0) * 10.0).round() / 10.0
}

/// The resident memory now (`VmRSS`), MiB; 0 where the system does not say.
pub fn rss_now_mib() -> f64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0.0;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |kib| mib(kib * 1024))
}

/// Traces every text of the job with a fresh session from `start`.
fn trace_texts<'a>(
    texts: &[Text],
    mut start: impl FnMut() -> Result<Box<dyn Session + 'a>, String>,
    result: &mut WorkerResult,
) -> Result<(), String> {
    let mut timings = Timings::default();
    for text in texts {
        let mut session = start()?;
        result
            .texts
            .push(trace(session.as_mut(), text, &mut timings));
    }
    result.mask_ns = timings.mask_ns;
    result.commit_ns = timings.commit_ns;
    Ok(())
}
