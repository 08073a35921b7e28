//! The conformance corpus: every case under `conformance/cases/` through every masker and the
//! exact oracle (see `munch_conformance::suite` for the format and what a run checks).
//!
//! Cases are grouped by (grammar, tokenizer) so that each masker is built once per pair, and the
//! groups run on one thread per core, costliest first. A summary table goes to stderr (written
//! directly, so that `cargo test` shows it without `--nocapture`). Every disagreement and unmet
//! expectation is listed before the test fails.
//!
//! `MUNCH_CORPUS=go/` runs only the cases whose `GROUP/NAME` contains `go/`.

use std::io::Write;
use std::sync::{Arc, Mutex};

use munch::{Compiled, Config, MaskerKind};
use munch_conformance::suite::{self, Case, CaseReport, Disagreement, Resources};
use munch_glr::parser::Parser;
use munch_vocab::Vocabulary;

/// Every masker munch has but the oracle (the runner brings its own), compiled for one grammar
/// and vocabulary with its default budgets and no fallback, sharing one parser; or the builds
/// that failed (a failure is a finding here: the corpus holds SynCode's grammars with real
/// vocabularies and small synthetic cases, all of which every masker must handle).
fn maskers(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> Result<Vec<Compiled>, String> {
    let config = |kind| Config::new().masker(kind).fallback(None);
    let oracle = Compiled::from_parser(
        Arc::clone(parser),
        Arc::clone(vocab),
        &config(MaskerKind::Oracle),
    )
    .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for &kind in MaskerKind::ALL {
        if kind == MaskerKind::Oracle {
            continue;
        }
        match oracle.with_masker(&config(kind)) {
            Ok(m) => out.push(m),
            Err(e) => failed.push(format!("{kind}: {e}")),
        }
        // The wda determinised on demand too (`wda-lazy`): the same masks, computed as the
        // walk reads them.
        if kind.name() == "wda" {
            match oracle.with_masker(&config(kind).lazy(true)) {
                Ok(m) => out.push(m),
                Err(e) => failed.push(format!("{kind} (lazy): {e}")),
            }
        }
    }
    if failed.is_empty() {
        Ok(out)
    } else {
        Err(failed.join("; "))
    }
}

/// The oracle's budget per (grammar, tokenizer) group, in commits (one per vocabulary token per
/// oracle step): every step on the synthetic vocabularies, one to a dozen steps on 32k–262k
/// vocabularies, where an oracle step costs about a second. The oracle also runs at every
/// refused token, whatever the budget.
const ORACLE_COMMITS_PER_GROUP: usize = 1_000_000;

/// Cases that share a grammar and a tokenizer, so that their maskers are built once.
struct Group {
    cases: Vec<Case>,
    cost: usize,
}

fn groups(cases: Vec<Case>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for case in cases {
        let cost = case.vocab.len() * (case.tokens.len() + 1);
        let same = |g: &Group| {
            Arc::ptr_eq(&g.cases[0].parser, &case.parser)
                && Arc::ptr_eq(&g.cases[0].vocab, &case.vocab)
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => {
                g.cost += cost;
                g.cases.push(case);
            }
            None => groups.push(Group {
                cases: vec![case],
                cost,
            }),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.cost));
    groups
}

/// The group's results, or why its maskers could not be built.
fn run_group(group: &Group) -> Result<Vec<Result<CaseReport, Disagreement>>, String> {
    let first = &group.cases[0];
    let built = maskers(&first.parser, &first.vocab)
        .map_err(|e| format!("{} with {}: {e}", first.id, first.tokenizer))?;
    let steps: Vec<usize> = group.cases.iter().map(|c| c.tokens.len() + 1).collect();
    let periods = suite::oracle_periods(first.vocab.len(), &steps, ORACLE_COMMITS_PER_GROUP);
    Ok(group
        .cases
        .iter()
        .zip(periods)
        .map(|(case, every)| suite::run(case, &built, every))
        .collect())
}

#[test]
fn every_masker_agrees_with_the_oracle_on_the_corpus() {
    let filter = std::env::var("MUNCH_CORPUS").unwrap_or_default();
    let files = suite::load_dir(&suite::cases_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut resources = Resources::new();
    let mut cases = Vec::new();
    for file in &files {
        for spec in &file.cases {
            if spec.id().contains(&filter) {
                cases.extend(
                    spec.expand(&mut resources)
                        .unwrap_or_else(|e| panic!("{e}")),
                );
            }
        }
    }
    assert!(!cases.is_empty(), "no case matches MUNCH_CORPUS={filter:?}");
    let queue = Mutex::new(groups(cases));
    let results = Mutex::new(Vec::new());
    let build_failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                // The queue is sorted by cost, costliest first.
                let next = {
                    let mut q = queue.lock().unwrap();
                    if q.is_empty() {
                        None
                    } else {
                        Some(q.remove(0))
                    }
                };
                let Some(group) = next else { break };
                match run_group(&group) {
                    Ok(out) => results.lock().unwrap().extend(out),
                    Err(e) => build_failures.lock().unwrap().push(e),
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let build_failures = build_failures.into_inner().unwrap();
    assert!(
        build_failures.is_empty(),
        "maskers that did not build:\n{}",
        build_failures.join("\n")
    );
    let mut reports: Vec<CaseReport> = Vec::new();
    let mut failures: Vec<Disagreement> = Vec::new();
    for r in results {
        match r {
            Ok(report) => reports.push(report),
            Err(d) => failures.push(d),
        }
    }
    reports.sort_by(|a, b| (&a.id, a.tokenizer.to_string()).cmp(&(&b.id, b.tokenizer.to_string())));
    let mut out = String::from("\nconformance corpus\n");
    out.push_str(&suite::summary_table(&reports));
    for f in &failures {
        out.push_str(&format!("\nFAILED {f}"));
    }
    // Written directly so that the table shows without `--nocapture`.
    let _ = std::io::stderr().write_all(out.as_bytes());
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        failures.len() + reports.len(),
        failures
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The shipped case files are well-formed, and each synthetic vocabulary and each SynCode
/// grammar the corpus is meant to cover appears in it.
#[test]
fn the_corpus_covers_what_it_should() {
    let files = suite::load_dir(&suite::cases_dir()).unwrap_or_else(|e| panic!("{e}"));
    let specs: Vec<_> = files.iter().flat_map(|f| &f.cases).collect();
    for name in suite::SYNTHETIC {
        let t = suite::TokenizerRef::Synthetic(name.to_string());
        assert!(
            specs.iter().any(|s| s.tokenizers.contains(&t)),
            "no case uses synthetic:{name}"
        );
    }
    for grammar in ["json", "go", "java", "sql", "c", "python"] {
        let g = suite::GrammarRef::Syncode(grammar.to_string());
        for tokenizer in ["llama2", "llama3", "qwen3", "gemma3", "gptoss"] {
            let t = suite::TokenizerRef::Real(tokenizer.to_string());
            assert!(
                specs
                    .iter()
                    .any(|s| s.grammar == g && s.tokenizers.contains(&t)),
                "no case runs syncode:{grammar} with {tokenizer}"
            );
        }
    }
    assert!(specs
        .iter()
        .any(|s| matches!(s.expect, suite::Expect::Reject { .. })));
}
