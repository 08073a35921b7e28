//! The orchestrator: inputs once, then one worker process per (engine, grammar, tokenizer),
//! each under a time limit, with a progress line per run.
//!
//! A peer tries the original grammar first; when its build fails and the adapted copy differs,
//! it runs the adapted copy, and the run says so (`grammar_copy`, with the original's error).
//! munch always runs the original.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use munch_vocab::Vocabulary;

use super::engines::{self, is_munch};
use super::inputs::{self, Budget, GrammarInput};
use super::job::{read_json, write_json, GrammarKind, Job, Text, WorkerResult};
use super::results::{
    GrammarInfo, InstanceCounts, Machine, Results, Run, Settings, Status, TokenizerInfo,
};
use super::stats::{cdf, common_steps, Latency};
use super::xgrammar;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where results, plots and the work files go.
    pub out: PathBuf,
    /// Grammar names.
    pub grammars: Vec<String>,
    /// Tokenizer names.
    pub tokenizers: Vec<String>,
    /// Engine names.
    pub engines: Vec<String>,
    /// Texts per grammar.
    pub max_files: usize,
    /// Largest Go or Java file taken, bytes.
    pub max_file_bytes: u64,
    /// Step budget per (grammar, tokenizer).
    pub budget: Budget,
    /// Time limit of one run.
    pub timeout: Duration,
}

/// Rejection reasons kept per run.
const REJECTIONS_KEPT: usize = 3;

/// The work folder under `out`, made if needed.
pub(crate) fn work_dir(out: &Path) -> Result<PathBuf, String> {
    let work = out.join("work");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    Ok(work)
}

/// Empty results stamped with munch's version, the time and the machine.
pub(crate) fn new_results(settings: Settings) -> Results {
    Results {
        munch_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        machine: machine(),
        settings,
        ..Results::default()
    }
}

/// XGrammar's Python when `engines` has it; where it cannot be had, a note says why.
pub(crate) fn xgrammar_python(engines: &[String], results: &mut Results) -> Option<PathBuf> {
    if !engines.iter().any(|e| e == "xgrammar") {
        return None;
    }
    match xgrammar::python() {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("peers: XGrammar is unavailable: {e}");
            results.notes.push(format!("XGrammar unavailable: {e}"));
            None
        }
    }
}

/// A tokenizer of the run: its vocabulary, its `tokenizer.json` and the vocabulary file the
/// workers read (written into `work`), recorded in `results`.
pub(crate) fn prepare_tokenizer(
    name: &str,
    work: &Path,
    results: &mut Results,
) -> Result<(Vocabulary, PathBuf, PathBuf), String> {
    let vocab = Vocabulary::load(name).map_err(|e| format!("{name}: {e}"))?;
    let tokenizer_json =
        munch_vocab::fetch::tokenizer_path(name).map_err(|e| format!("{name}: {e}"))?;
    results.tokenizers.push(TokenizerInfo {
        name: name.to_string(),
        vocab_size: vocab.len(),
    });
    let vocab_path = work.join(format!("vocab-{name}.json"));
    write_json(&vocab_path, &inputs::vocab_file(&vocab))?;
    Ok((vocab, tokenizer_json, vocab_path))
}

/// Runs the benchmark; progress goes to stderr.
pub fn run(config: &Config) -> Result<Results, String> {
    let work = work_dir(&config.out)?;
    let mut results = new_results(Settings {
        max_files: config.max_files,
        max_tokens_per_text: config.budget.max_tokens_per_text,
        max_tokens: config.budget.max_tokens,
        timeout_s: config.timeout.as_secs(),
    });
    results.notes.push(format!(
        "texts: the first files of each corpus that munch's parser accepts under the original \
         grammar; limits: at most {} texts per grammar, {} tokens per text, {} tokens per grammar and \
         tokenizer; {} s per run",
        config.max_files,
        config.budget.max_tokens_per_text,
        config.budget.max_tokens,
        config.timeout.as_secs()
    ));
    results.notes.push(
        "llguidance is the crate at 1.7.0, the newest release that can link with glrmask 0.5.0 \
         (both pin derivre exactly)"
            .to_string(),
    );
    let python = xgrammar_python(&config.engines, &mut results);
    let mut grammars = Vec::new();
    for name in &config.grammars {
        eprintln!("peers: grammar {name}");
        let g = inputs::grammar(name)?;
        // Candidates, of which the first that munch's parser accepts are kept.
        let pool = inputs::text_files(g.language, config.max_files * 6, config.max_file_bytes)?;
        let (files, skipped) = inputs::accepted_by_munch(&g.original, &pool, config.max_files)?;
        if skipped > 0 {
            results.notes.push(format!(
                "{name}: {skipped} candidate texts passed over because munch's parser rejects \
                 them under SynCode's grammar"
            ));
        }
        results.grammars.push(GrammarInfo {
            name: name.clone(),
            source: format!("SynCode {}", munch_grammars::syncode::VERSION),
            adapted: match &g.adapted {
                Ok(a) => a.summary(),
                Err(e) => format!("no adapted copy: {e}"),
            },
            texts: files
                .iter()
                .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect(),
        });
        grammars.push((g, files));
    }
    let total = config.tokenizers.len() * grammars.len() * config.engines.len();
    let started = Instant::now();
    let mut done = 0;
    for tokenizer in &config.tokenizers {
        eprintln!("peers: tokenizer {tokenizer}");
        let (vocab, tokenizer_json, vocab_path) =
            prepare_tokenizer(tokenizer, &work, &mut results)?;
        for (grammar, files) in &grammars {
            let texts = inputs::tokenize(&vocab, files, config.budget)?;
            let steps: usize = texts.iter().map(|t| t.tokens.len() + 1).sum();
            let first = results.runs.len();
            let mut raws = Vec::new();
            for engine in &config.engines {
                done += 1;
                eprint!(
                    "peers: [{done}/{total}] {engine} × {} × {tokenizer} ({} texts, {steps} \
                     steps) … ",
                    grammar.name,
                    texts.len()
                );
                let job = Job {
                    engine: engine.clone(),
                    grammar: grammar.name.clone(),
                    grammar_text: grammar.original.clone(),
                    grammar_kind: GrammarKind::Lark,
                    tokenizer: tokenizer.clone(),
                    tokenizer_json: tokenizer_json.clone(),
                    vocab_file: vocab_path.clone(),
                    texts: texts.clone(),
                };
                let (run, raw) =
                    run_engine(config, &work, python.as_deref(), job, grammar, vocab.len());
                eprintln!(
                    "{} ({:.0} s in all)",
                    progress_line(&run),
                    started.elapsed().as_secs_f64()
                );
                results.runs.push(run);
                raws.push(raw);
            }
            set_common(&mut results.runs[first..], &raws);
        }
    }
    Ok(results)
}

/// Gives each traced run its mask latency on the steps every traced run made
/// ([`common_steps`]), when at least two runs traced.
fn set_common(runs: &mut [Run], raws: &[Option<WorkerResult>]) {
    let traced: Vec<(usize, Vec<usize>, &[u64])> = runs
        .iter()
        .zip(raws)
        .enumerate()
        .filter_map(|(i, (run, raw))| {
            let raw = raw.as_ref().filter(|_| run.status == Status::Ok)?;
            let steps = raw.texts.iter().map(|t| t.steps).collect();
            Some((i, steps, raw.mask_ns.as_slice()))
        })
        .collect();
    if traced.len() < 2 {
        return;
    }
    let traces: Vec<(&[usize], &[u64])> = traced.iter().map(|t| (&t.1[..], t.2)).collect();
    for ((i, _, _), common) in traced.iter().zip(common_steps(&traces)) {
        runs[*i].mask_common = common.and_then(|ns| Latency::from_ns(&ns));
    }
}

/// One engine on one grammar and tokenizer, with the adapted copy if the original fails.
fn run_engine(
    config: &Config,
    work: &Path,
    python: Option<&Path>,
    job: Job,
    grammar: &GrammarInput,
    vocab_size: usize,
) -> (Run, Option<WorkerResult>) {
    let (run, raw) = run_worker(config.timeout, work, python, &job, "original", vocab_size);
    if run.status != Status::BuildError || is_munch(&job.engine) {
        return (run, raw);
    }
    let Ok(adapted) = &grammar.adapted else {
        return (run, raw);
    };
    if !adapted.changed() {
        return (run, raw);
    }
    let original_error = run.error.clone().unwrap_or_default();
    let job = Job {
        grammar_text: adapted.text.clone(),
        ..job
    };
    let (mut run, raw) = run_worker(config.timeout, work, python, &job, "adapted", vocab_size);
    let first_line = original_error.lines().next().unwrap_or("").to_string();
    run.error = Some(match run.error.take() {
        Some(e) => format!("{e} (the original was refused too: {first_line})"),
        None => format!("the original was refused: {first_line}"),
    });
    (run, raw)
}

/// One worker process for `job` under `timeout`: the run, and the worker's raw measurements
/// when it wrote them.
pub(crate) fn run_worker(
    timeout: Duration,
    work: &Path,
    python: Option<&Path>,
    job: &Job,
    copy: &str,
    vocab_size: usize,
) -> (Run, Option<WorkerResult>) {
    let mut run = Run {
        engine: job.engine.clone(),
        grammar: job.grammar.clone(),
        grammar_copy: copy.to_string(),
        tokenizer: job.tokenizer.clone(),
        vocab_size,
        texts: job.texts.len(),
        ..Run::default()
    };
    let stem = format!("{}-{}-{}-{copy}", job.engine, job.grammar, job.tokenizer);
    let job_path = work.join(format!("job-{stem}.json"));
    let result_path = work.join(format!("result-{stem}.json"));
    let _ = std::fs::remove_file(&result_path);
    if let Err(e) = write_json(&job_path, job) {
        run.status = Status::Crashed;
        run.error = Some(e);
        return (run, None);
    }
    let mut command = if job.engine == "xgrammar" {
        let Some(python) = python else {
            run.status = Status::Crashed;
            run.error = Some("XGrammar's Python environment is unavailable".to_string());
            return (run, None);
        };
        let mut c = Command::new(python);
        c.arg(xgrammar::script());
        c
    } else {
        match std::env::current_exe() {
            Ok(exe) => {
                let mut c = Command::new(exe);
                c.arg("--worker");
                c
            }
            Err(e) => {
                run.status = Status::Crashed;
                run.error = Some(format!("cannot find the harness binary: {e}"));
                return (run, None);
            }
        }
    };
    command
        .arg(&job_path)
        .arg(&result_path)
        // One thread for every engine (glrmask builds with rayon; XGrammar's compiler and
        // numpy honour these too).
        .env("RAYON_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let outcome = wait_with_timeout(command, timeout);
    run.wall_s = started.elapsed().as_secs_f64();
    match outcome {
        Err(e) => {
            run.status = Status::Crashed;
            run.error = Some(e);
            return (run, None);
        }
        Ok(Exit::TimedOut) => {
            run.status = Status::Timeout;
            run.error = Some(format!("stopped after {} s", timeout.as_secs()));
            return (run, None);
        }
        Ok(Exit::Done { success, stderr }) => {
            if !success || !result_path.is_file() {
                run.status = Status::Crashed;
                run.error = Some(format!("the worker died: {}", tail(&stderr, 600)));
                return (run, None);
            }
        }
    }
    let result = match read_json::<WorkerResult>(&result_path) {
        Ok(result) => {
            fill(&mut run, &result, &job.texts);
            Some(result)
        }
        Err(e) => {
            run.status = Status::Crashed;
            run.error = Some(e);
            None
        }
    };
    let _ = std::fs::remove_file(&result_path);
    (run, result)
}

/// Copies a worker's measurements into the run, with the statistics.
fn fill(run: &mut Run, result: &WorkerResult, texts: &[Text]) {
    run.engine_version = result.engine_version.clone();
    run.settings = result.settings.clone();
    run.prepare_s = round3(result.prepare_s);
    // Microseconds: a schema compiles in about one.
    run.build_s = (result.build_s * 1e6).round() / 1e6;
    run.rss_before_build_mib = result.rss_before_build_mib;
    run.peak_rss_mib = result.peak_rss_mib;
    if let Some(e) = &result.error {
        run.status = Status::BuildError;
        run.error = Some(e.clone());
        return;
    }
    run.status = Status::Ok;
    run.texts = texts.len();
    run.texts_accepted = result.texts.iter().filter(|t| t.accepted).count();
    run.steps = result.texts.iter().map(|t| t.steps).sum();
    run.rejections = result
        .texts
        .iter()
        .filter_map(|t| t.why.as_ref().map(|w| format!("{}: {w}", t.name)))
        .take(REJECTIONS_KEPT)
        .collect();
    run.mask = Latency::from_ns(&result.mask_ns);
    run.commit = Latency::from_ns(&result.commit_ns);
    run.mask_cdf = cdf(&result.mask_ns);
    run.first_mask_us = result.mask_ns.first().map(|&ns| ns as f64 / 1e3);
    if texts.iter().any(|t| t.expect_valid.is_some()) {
        run.instances = Some(InstanceCounts::count(texts, &result.texts));
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The progress line's verdict on one run.
fn progress_line(run: &Run) -> String {
    let copy = if run.grammar_copy == "adapted" {
        " [adapted copy]"
    } else {
        ""
    };
    match (run.status, &run.mask) {
        (Status::Ok, Some(mask)) => format!(
            "build {:.2} s, mask p50 {:.1} µs p99 {:.1} µs max {:.0} µs, {}/{} texts accepted{copy}",
            run.build_s, mask.p50_us, mask.p99_us, mask.max_us, run.texts_accepted, run.texts
        ),
        (status, _) => format!(
            "{status:?}: {}{copy}",
            run.error
                .as_deref()
                .map(|e| tail(e, 300))
                .unwrap_or_default()
        ),
    }
}

/// The end of `s`, at most `n` bytes, on one line.
fn tail(s: &str, n: usize) -> String {
    let s = s.trim();
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].replace('\n', " | ")
}

enum Exit {
    Done { success: bool, stderr: String },
    TimedOut,
}

/// Runs `command`, killing it (by its own id) past `timeout`.
fn wait_with_timeout(mut command: Command, timeout: Duration) -> Result<Exit, String> {
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the worker: {e}"))?;
    // Drain stderr on a thread so that a chatty worker never blocks on a full pipe.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            use std::io::Read;
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let stderr = reader.join().unwrap_or_default();
                return Ok(Exit::Done {
                    success: status.success(),
                    stderr: format!("{status}; {stderr}"),
                });
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                return Ok(Exit::TimedOut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the worker: {e}")),
        }
    }
}

fn machine() -> Machine {
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model,
        load_average,
    }
}

/// The worker side: runs the job in `job_path` and writes its result to `result_path`.
pub fn worker(job_path: &Path, result_path: &Path) -> Result<(), String> {
    let job: Job = read_json(job_path)?;
    let vocab = read_json(&job.vocab_file)?;
    let result = engines::run_in_process(&job, &vocab);
    write_json(result_path, &result)
}
