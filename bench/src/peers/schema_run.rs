//! The JSON Schema workload: every engine compiles each schema of `bench/schemas/` with its own
//! JSON Schema front end (munch's `Grammar::from_json_schema`, llguidance's `%json`, glrmask's
//! `Grammar::from_json_schema`, XGrammar's `Grammar.from_json_schema`) and is teacher-forced
//! along the schema's instances in `bench/schemas/instances/` (written and labelled by the
//! `jsonschema` validator: `bench/schema_instances.py`).
//!
//! Per engine: schemas compiled (coverage), build time and time to first mask (build and the
//! first mask, one compile per schema in a fresh worker), mask latency over every step of every
//! instance, and correctness: valid instances accepted, invalid ones rejected. The runs reuse
//! the grammar workload's workers ([`super::run::run_worker`]), one process per (engine,
//! schema, tokenizer).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use munch_vocab::Vocabulary;
use serde::Deserialize;

use super::job::{GrammarKind, Job, Text};
use super::results::{InstanceCounts, Results, Run, Settings, Status};
use super::run::{new_results, prepare_tokenizer, run_worker, work_dir, xgrammar_python};
use super::stats::Latency;
use super::table::fmt_us;
use crate::schemas::percentile;

/// What to run.
#[derive(Clone, Debug)]
pub struct SchemaConfig {
    /// Where the results and work files go.
    pub out: PathBuf,
    /// The folder of schemas (`NAME.json`) with their instances in `instances/NAME.json`.
    pub schemas: PathBuf,
    /// Tokenizer names.
    pub tokenizers: Vec<String>,
    /// Engine names.
    pub engines: Vec<String>,
    /// Time limit of one run (build and trace).
    pub timeout: Duration,
}

/// One schema with its labelled instances.
#[derive(Clone, Debug)]
pub struct SchemaInput {
    /// The file stem (`order`).
    pub name: String,
    /// The schema's text.
    pub text: String,
    /// Instances the validator accepts, as JSON texts.
    pub valid: Vec<String>,
    /// Instances it rejects: what was broken, and the text.
    pub invalid: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct InstancesFile {
    valid: Vec<String>,
    invalid: Vec<InvalidInstance>,
}

#[derive(Deserialize)]
struct InvalidInstance {
    why: String,
    text: String,
}

/// The schemas of `dir` (sorted by name) and their instances; a schema without an instances
/// file is an error (run `bench/schema_instances.py`).
pub fn schema_inputs(dir: &Path) -> Result<Vec<SchemaInput>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let instances = dir.join("instances").join(format!("{name}.json"));
            let file: InstancesFile = super::job::read_json(&instances)?;
            Ok(SchemaInput {
                name,
                text,
                valid: file.valid,
                invalid: file.invalid.into_iter().map(|i| (i.why, i.text)).collect(),
            })
        })
        .collect()
}

/// The instances of `schema` as token sequences of `vocab`, valid ones first.
pub fn instance_texts(vocab: &Vocabulary, schema: &SchemaInput) -> Result<Vec<Text>, String> {
    let labelled = schema
        .valid
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("{}: valid {i}", schema.name), t, true))
        .chain(
            schema
                .invalid
                .iter()
                .map(|(why, t)| (format!("{}: invalid ({why})", schema.name), t, false)),
        );
    labelled
        .map(|(name, text, valid)| {
            let tokens = vocab
                .encode(text)
                .map_err(|e| format!("{name}: {e}"))?
                .iter()
                .map(|t| t.as_u32())
                .collect();
            Ok(Text {
                name,
                tokens,
                truncated: false,
                expect_valid: Some(valid),
            })
        })
        .collect()
}

/// What [`run`] measured: the runs (their `grammar` is the schema's name) and each run's raw
/// mask latencies, ns, which the pooled statistics need.
pub struct SchemaRuns {
    /// The runs, with the settings and the machine.
    pub results: Results,
    /// Per run (same index), every mask's latency.
    pub mask_ns: Vec<Vec<u64>>,
}

/// Runs every engine on every schema and tokenizer; progress goes to stderr.
pub fn run(config: &SchemaConfig) -> Result<SchemaRuns, String> {
    let work = work_dir(&config.out)?;
    let schemas = schema_inputs(&config.schemas)?;
    let mut results = new_results(Settings {
        timeout_s: config.timeout.as_secs(),
        ..Settings::default()
    });
    results.notes.push(format!(
        "{} schemas of {}; instances written by bench/schema_instances.py and labelled by the \
         jsonschema validator (draft 2020-12); texts as json.dumps writes them, in schema \
         order; one compile per (engine, schema) in a fresh worker",
        schemas.len(),
        config.schemas.display()
    ));
    let python = xgrammar_python(&config.engines, &mut results);
    let mut mask_ns = Vec::new();
    let total = config.tokenizers.len() * schemas.len() * config.engines.len();
    let started = Instant::now();
    let mut done = 0;
    for tokenizer in &config.tokenizers {
        let (vocab, tokenizer_json, vocab_path) =
            prepare_tokenizer(tokenizer, &work, &mut results)?;
        for schema in &schemas {
            let texts = instance_texts(&vocab, schema)?;
            for engine in &config.engines {
                done += 1;
                let job = Job {
                    engine: engine.clone(),
                    grammar: schema.name.clone(),
                    grammar_text: schema.text.clone(),
                    grammar_kind: GrammarKind::JsonSchema,
                    tokenizer: tokenizer.clone(),
                    tokenizer_json: tokenizer_json.clone(),
                    vocab_file: vocab_path.clone(),
                    texts: texts.clone(),
                };
                let (run, result) = run_worker(
                    config.timeout,
                    &work,
                    python.as_deref(),
                    &job,
                    "original",
                    vocab.len(),
                );
                mask_ns.push(result.map(|r| r.mask_ns).unwrap_or_default());
                eprintln!(
                    "schemas: [{done}/{total}] {engine} × {} × {tokenizer}: {} ({:.0} s in all)",
                    schema.name,
                    verdict(&run),
                    started.elapsed().as_secs_f64()
                );
                results.runs.push(run);
            }
        }
    }
    Ok(SchemaRuns { results, mask_ns })
}

fn verdict(run: &Run) -> String {
    match (run.status, &run.instances) {
        (Status::Ok, Some(c)) => format!(
            "build {:.1} ms, first mask {:.0} µs, valid {}/{}, invalid rejected {}/{}",
            run.build_s * 1e3,
            run.first_mask_us.unwrap_or(0.0),
            c.valid_accepted,
            c.valid,
            c.invalid_rejected,
            c.invalid
        ),
        (status, _) => format!(
            "{status:?}: {}",
            run.error
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
        ),
    }
}

/// One engine's figures over every schema of a tokenizer.
#[derive(Clone, Debug, Default)]
pub struct EngineSummary {
    /// The engine.
    pub engine: String,
    /// The tokenizer.
    pub tokenizer: String,
    /// Schemas compiled (the run built and traced).
    pub compiled: usize,
    /// Schemas tried.
    pub schemas: usize,
    /// Build time per compiled schema, ms, sorted.
    pub build_ms: Vec<f64>,
    /// Build and first mask per compiled schema, ms, sorted.
    pub ttfm_ms: Vec<f64>,
    /// Every mask of every instance.
    pub mask: Option<Latency>,
    /// Answers on the instances of the compiled schemas.
    pub instances: InstanceCounts,
    /// The largest worker peak resident memory, MiB.
    pub peak_mib: f64,
    /// Why schemas were not compiled (schema: first line of the error).
    pub refused: Vec<String>,
}

/// Summarises the runs per (tokenizer, engine), in the order the runs came.
pub fn summarise(runs: &SchemaRuns) -> Vec<EngineSummary> {
    let mut out: Vec<(EngineSummary, Vec<u64>)> = Vec::new();
    for (run, ns) in runs.results.runs.iter().zip(&runs.mask_ns) {
        let i = match out
            .iter()
            .position(|(s, _)| s.engine == run.engine && s.tokenizer == run.tokenizer)
        {
            Some(i) => i,
            None => {
                out.push((
                    EngineSummary {
                        engine: run.engine.clone(),
                        tokenizer: run.tokenizer.clone(),
                        ..EngineSummary::default()
                    },
                    Vec::new(),
                ));
                out.len() - 1
            }
        };
        let (s, pooled) = &mut out[i];
        s.schemas += 1;
        s.peak_mib = s.peak_mib.max(run.peak_rss_mib);
        if run.status != Status::Ok {
            let why = run
                .error
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            s.refused.push(format!("{}: {why}", run.grammar));
            continue;
        }
        s.compiled += 1;
        s.build_ms.push(run.build_s * 1e3);
        s.ttfm_ms
            .push(run.build_s * 1e3 + run.first_mask_us.unwrap_or(0.0) / 1e3);
        if let Some(c) = &run.instances {
            let t = &mut s.instances;
            t.valid += c.valid;
            t.valid_accepted += c.valid_accepted;
            t.invalid += c.invalid;
            t.invalid_rejected += c.invalid_rejected;
            t.wrong.extend(c.wrong.iter().cloned());
        }
        pooled.extend_from_slice(ns);
    }
    out.into_iter()
        .map(|(mut s, pooled)| {
            s.build_ms.sort_by(f64::total_cmp);
            s.ttfm_ms.sort_by(f64::total_cmp);
            s.mask = Latency::from_ns(&pooled);
            s
        })
        .collect()
}

/// The summary table (Markdown), with the wrong answers and the refusals under it.
pub fn summary_md(results: &Results, summaries: &[EngineSummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {} × {} (load average {:.1} at the start). {}.\n",
        results.machine.cpus,
        results.machine.cpu_model,
        results.machine.load_average,
        results.notes.join("; ")
    );
    out.push_str(
        "| tokenizer | engine | schemas compiled | build p50 ms | build p99 ms | first mask p50 ms \
         | first mask p99 ms | mask p50 µs | p99 | p99.9 | max | valid accepted | invalid \
         rejected | peak MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let ms = |x: f64| {
        if x.is_nan() {
            "—".to_string()
        } else if x < 10.0 {
            format!("{x:.2}")
        } else {
            format!("{x:.0}")
        }
    };
    for s in summaries {
        let (p50, p99, p999, max) = match &s.mask {
            Some(m) => (
                fmt_us(m.p50_us),
                fmt_us(m.p99_us),
                fmt_us(m.p999_us),
                fmt_us(m.max_us),
            ),
            None => Default::default(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {}/{} | {} | {} | {} | {} | {p50} | {p99} | {p999} | {max} | {}/{} | {}/{} \
             | {:.0} |",
            s.tokenizer,
            s.engine,
            s.compiled,
            s.schemas,
            ms(percentile(&s.build_ms, 5000)),
            ms(percentile(&s.build_ms, 9900)),
            ms(percentile(&s.ttfm_ms, 5000)),
            ms(percentile(&s.ttfm_ms, 9900)),
            s.instances.valid_accepted,
            s.instances.valid,
            s.instances.invalid_rejected,
            s.instances.invalid,
            s.peak_mib
        );
    }
    for s in summaries {
        if !s.instances.wrong.is_empty() {
            let _ = writeln!(
                out,
                "\n{} ({}) answered wrongly: {}.",
                s.engine,
                s.tokenizer,
                s.instances.wrong.join("; ")
            );
        }
        if !s.refused.is_empty() {
            let _ = writeln!(
                out,
                "\n{} ({}) did not compile: {}.",
                s.engine,
                s.tokenizer,
                s.refused.join("; ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::job::TextOutcome;

    fn run(engine: &str, schema: &str, ok: bool, build_s: f64) -> Run {
        Run {
            engine: engine.into(),
            grammar: schema.into(),
            tokenizer: "t".into(),
            status: if ok { Status::Ok } else { Status::BuildError },
            error: (!ok).then(|| "refused: keyword x\nmore".to_string()),
            build_s,
            first_mask_us: Some(500.0),
            instances: ok.then(|| InstanceCounts {
                valid: 2,
                valid_accepted: 2,
                invalid: 3,
                invalid_rejected: 2,
                wrong: vec![format!("{schema}: invalid (x)")],
            }),
            ..Run::default()
        }
    }

    #[test]
    fn summaries_pool_masks_count_answers_and_list_refusals() {
        let runs = SchemaRuns {
            results: Results {
                runs: vec![
                    run("a", "s1", true, 0.001),
                    run("b", "s1", false, 0.0),
                    run("a", "s2", true, 0.003),
                ],
                ..Results::default()
            },
            mask_ns: vec![vec![1000, 2000], vec![], vec![3000]],
        };
        let s = summarise(&runs);
        assert_eq!(s.len(), 2);
        let a = &s[0];
        assert_eq!((a.engine.as_str(), a.compiled, a.schemas), ("a", 2, 2));
        assert_eq!(a.mask.unwrap().count, 3);
        assert_eq!(a.mask.unwrap().max_us, 3.0);
        assert_eq!(a.build_ms, vec![1.0, 3.0]);
        assert_eq!(a.ttfm_ms, vec![1.5, 3.5]);
        assert_eq!(
            (a.instances.valid_accepted, a.instances.invalid_rejected),
            (4, 4)
        );
        assert_eq!(s[1].refused, vec!["s1: refused: keyword x".to_string()]);
        let md = summary_md(&runs.results, &s);
        assert!(md.contains("| t | a | 2/2 |"), "{md}");
        assert!(md.contains("b (t) did not compile: s1: refused: keyword x."));
    }

    #[test]
    fn instance_counts_compare_outcomes_with_labels() {
        let text = |name: &str, valid| Text {
            name: name.into(),
            tokens: vec![],
            truncated: false,
            expect_valid: Some(valid),
        };
        let outcome = |accepted| TextOutcome {
            name: String::new(),
            steps: 1,
            accepted,
            why: None,
        };
        let c = InstanceCounts::count(
            &[text("v", true), text("i1", false), text("i2", false)],
            &[outcome(true), outcome(true), outcome(false)],
        );
        assert_eq!(
            c,
            InstanceCounts {
                valid: 1,
                valid_accepted: 1,
                invalid: 2,
                invalid_rejected: 1,
                wrong: vec!["i1".into()],
            }
        );
    }

    #[test]
    fn the_committed_schemas_all_have_labelled_instances() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let schemas = schema_inputs(&dir).unwrap();
        assert!(schemas.len() >= 16);
        for s in &schemas {
            assert!(!s.valid.is_empty(), "{}", s.name);
            for t in s.valid.iter().chain(s.invalid.iter().map(|(_, t)| t)) {
                serde_json::from_str::<serde_json::Value>(t).unwrap();
            }
        }
    }
}
