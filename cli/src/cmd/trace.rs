//! `munch trace GRAMMAR --tokenizer TOK --masker M1[,M2...] [--oracle | --oracle-sample N]
//! [--seed S] [--masks-out FILE] FILE...`: teacher-forced mask traces.
//!
//! Each file is tokenized with the tokenizer's own encoding (no special tokens) and walked token
//! by token with [`munch::teacher::Teacher`], one matcher per listed masker (the maskers share
//! one parser). A **step** is one position where masks are computed: before each token, and once
//! more at the end (so a file of `n` tokens has `n + 1` steps). At every step every listed
//! masker fills its mask (each timed), the masks are compared with each other and, at the chosen
//! steps, with the oracle's for the same text; the file's next token must be allowed by every
//! masker, and is then accepted (the first matcher's accept timed: `commit`). At the end the text
//! must be a sentence, and each mask must allow EOS exactly where the text is one.
//!
//! stdout's last line is one JSON object:
//! `{"files","steps","rejected","mismatches","first_mismatch","maskers","build_ms","first_mask_us","commit"}`, where
//! `rejected` counts files whose forced token was masked out or refused, or whose end is not a
//! sentence (one stderr line each says why), and `mismatches` counts steps where the masks
//! disagree; `build_ms` is each masker's build (the first one's includes nothing of the parser)
//! and `first_mask_us` its first mask, the cold start a new grammar's first request pays
//! (`--lazy`: the lexical side in the build, the automaton's first states in the first masks).
//! Exit code 0 iff both are 0, 1 otherwise, 2 for usage, grammar, tokenizer or file
//! errors.
//!
//! With `--masks-out FILE`, FILE gets one JSON line per step of every file, for the first
//! (reference) masker: `{"file","step","allowed","sha256"}`, where `allowed` counts the tokens
//! the mask allows and `sha256` is the hex SHA-256 of its `ceil(V / 32)` `u32` words (V: the
//! vocabulary's size) in little-endian bytes, the bitmask layout of vLLM, XGrammar and
//! llguidance. Other programs (the Python package's tests) compare their masks with it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::ser::SerializeMap;
use serde::Serialize;
use sha2::{Digest, Sha256};

use munch::glr::mask::MaskCache;
use munch::glr::parser::ParserConfig;
use munch::stats::{us, Summary, SummaryUs};
use munch::teacher::{Outcome, Step, Teacher};
use munch::{Compiled, Config, Grammar, MaskerKind, TokenId, TokenMask, Vocabulary};

use super::CliError;

/// Arguments of `munch trace`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: super::MaskArgs,
    /// Maskers to trace, comma-separated (trie, spanner, wda, wda-lazy, oracle); the first is
    /// the reference the others are compared with. `wda-lazy` is the wda built on demand.
    #[arg(long, value_delimiter = ',', required = true)]
    masker: Vec<String>,
    /// Check every step against the oracle (one commit per vocabulary token per step: slow).
    #[arg(long, conflicts_with = "oracle_sample")]
    oracle: bool,
    /// Check N seeded-random steps of each file against the oracle.
    #[arg(long, value_name = "N")]
    oracle_sample: Option<usize>,
    /// Seed of the oracle step sampling.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the first masker's mask at every step to FILE, one JSON line each:
    /// `{"file","step","allowed","sha256"}` (SHA-256 of the mask's u32 words, little-endian).
    #[arg(long, value_name = "FILE")]
    masks_out: Option<PathBuf>,
    /// Build the wda on demand: the lexical side before the first mask, each automaton state
    /// the first time a mask reads it (the first masks pay for it); the trie without token
    /// classes (the walk over every token). Same masks.
    #[arg(long)]
    lazy: bool,
    /// Sleep this many microseconds after each step, outside the timings: the CPU time a
    /// model's forward pass leaves between two masks, which a masker's background work (the
    /// on-demand wda's preparing thread) may use.
    #[arg(long, value_name = "US", default_value_t = 0)]
    pause_us: u64,
    /// Text files to trace (UTF-8).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The most bytes read from each file (a trace keeps every step's timings and tokens, a
    /// few hundred bytes per input byte); a longer or endless input (/dev/zero) is an error
    /// naming this limit, read no further.
    #[arg(long, default_value_t = 4 << 20)]
    max_input_bytes: u64,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    // `(kind, lazy)`: `wda-lazy` is the wda built on demand, so that a trace can put it beside
    // the eager one.
    let mut kinds = Vec::with_capacity(args.masker.len());
    for (i, name) in args.masker.iter().enumerate() {
        kinds.push(match name.strip_suffix("-lazy") {
            Some(base @ "wda") => (base.parse::<MaskerKind>()?, true),
            _ => (name.parse::<MaskerKind>()?, args.lazy),
        });
        if args.masker[..i].contains(name) {
            return Err(format!("masker `{name}` is listed twice").into());
        }
    }
    let (grammar, vocab) = args.input.load()?;
    // Tokenize every file first, so that an unreadable one fails before any work.
    let mut inputs = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let name = file.display().to_string();
        let bytes =
            super::read_bounded(file, args.max_input_bytes).map_err(|e| format!("{name}: {e}"))?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            format!(
                "{name}: not UTF-8 (at byte {}): the tokenizer encodes text",
                e.valid_up_to()
            )
        })?;
        let tokens = vocab.encode(text).map_err(|e| format!("{name}: {e}"))?;
        inputs.push((name, tokens.iter().map(|t| t.as_u32()).collect::<Vec<_>>()));
    }
    let compiled = compile_all(&grammar, vocab, &kinds, args.input.grammar.parser_config())?;
    let check_oracle = args.oracle || args.oracle_sample.is_some_and(|n| n > 0);
    let mut tracer = Tracer::new(&compiled, check_oracle)?;
    tracer.set_file_total(inputs.len());
    tracer.record.pause = std::time::Duration::from_micros(args.pause_us);
    if let Some(path) = &args.masks_out {
        tracer.record.mask_log = Some(MaskLog::create(path)?);
    }
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut rejected = 0;
    for (name, tokens) in &inputs {
        let steps = tokens.len() + 1;
        let mut oracle_at = vec![args.oracle; steps];
        if let Some(n) = args.oracle_sample {
            for i in rand::seq::index::sample(&mut rng, steps, n.min(steps)) {
                oracle_at[i] = true;
            }
        }
        if let Outcome::Rejected { reason, .. } = tracer.trace(name, tokens, &oracle_at) {
            eprintln!("{name}: rejected: {reason}");
            rejected += 1;
        }
    }
    if let Some(log) = tracer.record.mask_log.take() {
        log.finish()?;
    }
    let record = &tracer.record;
    let line = TraceLine {
        files: inputs.len(),
        steps: record.steps,
        rejected,
        mismatches: record.mismatches,
        first_mismatch: record.first_mismatch.clone(),
        maskers: Named(
            tracer
                .summaries()
                .map(|(name, s)| (name.to_string(), s.map(|s| s.to_us())))
                .collect(),
        ),
        build_ms: Named(
            tracer
                .record
                .names
                .iter()
                .zip(&compiled)
                .map(|(name, c)| {
                    let ms = c.stats().masker_time.as_secs_f64() * 1e3;
                    (name.clone(), (ms * 1e3).round() / 1e3)
                })
                .collect(),
        ),
        first_mask_us: Named(
            tracer
                .record
                .names
                .iter()
                .zip(&tracer.record.mask_ns)
                .map(|(name, ns)| (name.clone(), ns.first().map(|&ns| us(ns as f64))))
                .collect(),
        ),
        commit: Summary::from_ns(&record.commit_ns).map(|s| CommitLine {
            p50_us: us(s.p50_ns as f64),
            p99_us: us(s.p99_ns as f64),
            max_us: us(s.max_ns as f64),
        }),
    };
    let line = serde_json::to_string(&line).expect("the summary serializes");
    println!("{line}");
    Ok(if rejected == 0 && record.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `grammar` compiled for `vocab` with each of `kinds` (at least one), in that order: the first
/// builds the parser, the others share it. No fallback: a trace of a masker other than the one
/// named would mislead.
fn compile_all(
    grammar: &Grammar,
    vocab: Arc<Vocabulary>,
    kinds: &[(MaskerKind, bool)],
    parser: ParserConfig,
) -> Result<Vec<Compiled>, CliError> {
    let config = |(kind, lazy)| {
        Config::new()
            .parser(parser.clone())
            .masker(kind)
            .fallback(None)
            .lazy(lazy)
    };
    let (&first, rest) = kinds.split_first().ok_or("no masker to build")?;
    let mut compiled = vec![super::compile(grammar, vocab, &config(first))?];
    for &kind in rest {
        compiled.push(compiled[0].with_masker(&config(kind))?);
    }
    Ok(compiled)
}

/// `trace`'s summary line, fields in the documented order.
#[derive(Serialize)]
struct TraceLine {
    files: usize,
    steps: usize,
    rejected: usize,
    mismatches: usize,
    first_mismatch: Option<Mismatch>,
    maskers: Named<Option<SummaryUs>>,
    build_ms: Named<f64>,
    first_mask_us: Named<Option<f64>>,
    commit: Option<CommitLine>,
}

/// Commit latency in `trace`'s summary.
#[derive(Serialize)]
struct CommitLine {
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
}

/// A disagreement between masks, as `trace` reports it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Mismatch {
    /// The file.
    file: String,
    /// The step (0: before the first token).
    step: usize,
    /// The lowest token id the masks disagree on.
    token: u32,
    /// Its bytes (lossily), or a special token's name.
    token_bytes: String,
    /// The last [`CONTEXT_BYTES`] bytes of text before the step (lossily).
    before: String,
    /// Whether the state accepts here (so whether EOS should be allowed).
    accepting: bool,
    /// Whether each masker allows the token.
    verdicts: Named<bool>,
}

/// A JSON object whose keys keep their order (serde_json's own map sorts them).
#[derive(Clone, Debug)]
pub(crate) struct Named<T>(pub(crate) Vec<(String, T)>);

impl<T: Serialize> Serialize for Named<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// `--masks-out`: one line per step with the reference mask's size and hash.
pub(crate) struct MaskLog {
    path: String,
    out: BufWriter<File>,
    /// The first write error: the trace goes on, and [`MaskLog::finish`] reports it.
    error: Option<std::io::Error>,
}

/// One line of `--masks-out`, fields in the documented order.
#[derive(Serialize)]
struct MaskLine<'a> {
    file: &'a str,
    step: usize,
    allowed: usize,
    sha256: String,
}

impl<'a> MaskLine<'a> {
    /// The line of `mask` at `step` of `file`.
    fn new(file: &'a str, step: usize, mask: &TokenMask) -> MaskLine<'a> {
        let mut hash = Sha256::new();
        for word in &mask.words()[..mask.len().div_ceil(32)] {
            hash.update(word.to_le_bytes());
        }
        let sha256 = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        MaskLine {
            file,
            step,
            allowed: mask.count(),
            sha256,
        }
    }
}

impl MaskLog {
    /// Creates (or truncates) `path`.
    pub(crate) fn create(path: &Path) -> Result<MaskLog, CliError> {
        let name = path.display().to_string();
        let file = File::create(path).map_err(|e| format!("--masks-out {name}: {e}"))?;
        Ok(MaskLog {
            path: name,
            out: BufWriter::new(file),
            error: None,
        })
    }

    /// Writes the line of `mask` at `step` of `file`.
    fn write(&mut self, file: &str, step: usize, mask: &TokenMask) {
        if self.error.is_some() {
            return;
        }
        let line = serde_json::to_string(&MaskLine::new(file, step, mask))
            .expect("a mask line serializes");
        if let Err(e) = writeln!(self.out, "{line}") {
            self.error = Some(e);
        }
    }

    /// Flushes the file; the first error writing it, if any.
    pub(crate) fn finish(mut self) -> Result<(), CliError> {
        let result = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        };
        result.map_err(|e| format!("--masks-out {}: {e}", self.path).into())
    }
}

/// The checking oracle: its masks are filled only at the steps chosen, from the state of the
/// teacher's first matcher (filling them at every step, as a teacher's lane, would cost one
/// commit per vocabulary token per step even where nobody looks).
struct OracleCheck {
    compiled: Compiled,
    cache: MaskCache,
    mask: TokenMask,
}

impl OracleCheck {
    /// The oracle for `compiled`'s grammar and vocabulary (sharing its parser).
    fn new(compiled: &Compiled) -> Result<OracleCheck, CliError> {
        let config = Config::new().masker(MaskerKind::Oracle).fallback(None);
        let compiled = compiled.with_masker(&config)?;
        Ok(OracleCheck {
            cache: compiled.masker().create_cache(),
            mask: TokenMask::new(compiled.vocabulary().len()),
            compiled,
        })
    }
}

/// Mismatches printed to stderr at most (all are counted).
const MISMATCHES_PRINTED: usize = 10;
/// Bytes of text before a mismatch shown in its report.
const CONTEXT_BYTES: usize = 80;

/// Teacher-forces token sequences through a set of maskers, comparing and timing them.
pub(crate) struct Tracer {
    teacher: Teacher,
    /// What the teacher's visitor records (apart from the teacher, which `run` borrows).
    pub(crate) record: Record,
}

/// The counts, timings and mismatches of a trace, updated at every step.
pub(crate) struct Record {
    vocab: Arc<Vocabulary>,
    /// The traced maskers' names, in the order of the teacher's masks.
    names: Vec<String>,
    /// Each traced masker's mask latencies, ns.
    mask_ns: Vec<Vec<u64>>,
    oracle: Option<OracleCheck>,
    /// Accept latencies of the first matcher, ns.
    pub(crate) commit_ns: Vec<u64>,
    /// Steps traced (mask positions, one per token plus one per file end).
    pub(crate) steps: usize,
    /// Steps where the masks disagree (with each other, the oracle, or the EOS rule).
    pub(crate) mismatches: usize,
    /// The first disagreement.
    pub(crate) first_mismatch: Option<Mismatch>,
    /// Where the reference masker's masks are logged, if anywhere.
    pub(crate) mask_log: Option<MaskLog>,
    /// Slept after each step (`--pause-us`).
    pub(crate) pause: std::time::Duration,
    /// The text of the current file before the current step.
    text: Vec<u8>,
    /// The steps of the current file.
    file_steps: usize,
    started: Instant,
    last_progress: Instant,
    files_done: usize,
    file_total: usize,
}

impl Tracer {
    /// A tracer of `compiled` (one grammar and vocabulary, several maskers; the first is the
    /// reference), with a checking oracle when `check_oracle` (none is made when the oracle is
    /// itself traced: it is compared at every step already).
    pub(crate) fn new(compiled: &[Compiled], check_oracle: bool) -> Result<Tracer, CliError> {
        let first = compiled.first().ok_or("no masker to trace")?;
        let teacher = Teacher::new(compiled);
        let traces_oracle = compiled
            .iter()
            .any(|c| c.masker_kind() == MaskerKind::Oracle);
        let oracle = if check_oracle && !traces_oracle {
            Some(OracleCheck::new(first)?)
        } else {
            None
        };
        let now = Instant::now();
        Ok(Tracer {
            record: Record {
                vocab: Arc::clone(first.vocabulary()),
                names: teacher.names().to_vec(),
                mask_ns: vec![Vec::new(); compiled.len()],
                oracle,
                commit_ns: Vec::new(),
                steps: 0,
                mismatches: 0,
                first_mismatch: None,
                mask_log: None,
                pause: std::time::Duration::ZERO,
                text: Vec::new(),
                file_steps: 0,
                started: now,
                last_progress: now,
                files_done: 0,
                file_total: 1,
            },
            teacher,
        })
    }

    /// How many files the run will trace, for progress lines.
    pub(crate) fn set_file_total(&mut self, total: usize) {
        self.record.file_total = total;
    }

    /// Each traced masker's name and latency summary, in the order given.
    pub(crate) fn summaries(&self) -> impl Iterator<Item = (&str, Option<Summary>)> + '_ {
        let r = &self.record;
        r.names
            .iter()
            .zip(&r.mask_ns)
            .map(|(name, ns)| (name.as_str(), Summary::from_ns(ns)))
    }

    /// Traces `tokens` (the text of `file`) from the start of the text; the oracle, if any,
    /// checks step `i` iff `oracle_at[i]` (missing entries: no).
    pub(crate) fn trace(&mut self, file: &str, tokens: &[u32], oracle_at: &[bool]) -> Outcome {
        self.run(tokens, oracle_at, |record, step, with_oracle| {
            record.visit(file, step, step.masks, with_oracle)
        })
    }

    /// [`Tracer::trace`], with `visit` called at every step (with whether the oracle checks it).
    fn run(
        &mut self,
        tokens: &[u32],
        oracle_at: &[bool],
        mut visit: impl FnMut(&mut Record, &Step<'_>, bool),
    ) -> Outcome {
        let record = &mut self.record;
        record.text.clear();
        record.file_steps = tokens.len() + 1;
        let outcome = self.teacher.run(tokens, |step| {
            let with_oracle = oracle_at.get(step.index).copied().unwrap_or(false);
            visit(record, step, with_oracle);
        });
        record.files_done += 1;
        outcome
    }
}

impl Record {
    /// Records one step of `file`: its times, the oracle's mask where `with_oracle`, and the
    /// comparison of `masks` (the step's own; tests hand in edited ones).
    fn visit(&mut self, file: &str, step: &Step<'_>, masks: &[TokenMask], with_oracle: bool) {
        if !self.pause.is_zero() {
            std::thread::sleep(self.pause);
        }
        self.progress(file, step.index);
        for (ns, &t) in self.mask_ns.iter_mut().zip(step.mask_ns) {
            ns.push(t);
        }
        if let Some(t) = step.accept_ns {
            self.commit_ns.push(t);
        }
        let with_oracle = match &mut self.oracle {
            Some(o) if with_oracle => {
                o.compiled
                    .masker()
                    .fill_mask(&mut o.cache, step.matcher.state(), &mut o.mask);
                true
            }
            _ => false,
        };
        self.steps += 1;
        if let (Some(log), Some(mask)) = (&mut self.mask_log, masks.first()) {
            log.write(file, step.index, mask);
        }
        self.compare(
            file,
            step.index,
            masks,
            step.matcher.is_accepting(),
            with_oracle,
        );
        if let Some(bytes) = step
            .next
            .and_then(|t| self.vocab.token_bytes(TokenId::from(t)))
        {
            self.text.extend_from_slice(bytes);
        }
    }

    /// Compares the masks of this step; counts and reports a disagreement.
    fn compare(
        &mut self,
        file: &str,
        step: usize,
        masks: &[TokenMask],
        accepting: bool,
        with_oracle: bool,
    ) {
        let mut named: Vec<(&str, &TokenMask)> =
            self.names.iter().map(String::as_str).zip(masks).collect();
        if with_oracle {
            if let Some(oracle) = &self.oracle {
                named.push(("oracle", &oracle.mask));
            }
        }
        let Some(&(_, reference)) = named.first() else {
            return;
        };
        let mut token = named[1..]
            .iter()
            .filter_map(|(_, m)| reference.first_difference(m))
            .min();
        if token.is_none() {
            // The masks agree; they must still allow EOS exactly when the text is a sentence.
            token = self
                .vocab
                .eos()
                .iter()
                .copied()
                .find(|&eos| named.iter().any(|(_, m)| m.contains(eos) != accepting));
        }
        let Some(token) = token else {
            return;
        };
        let report = Mismatch {
            file: file.to_string(),
            step,
            token: token.as_u32(),
            token_bytes: munch::teacher::token_text(&self.vocab, token.as_u32()),
            before: tail(&self.text, CONTEXT_BYTES),
            accepting,
            verdicts: Named(
                named
                    .iter()
                    .map(|(name, m)| (name.to_string(), m.contains(token)))
                    .collect(),
            ),
        };
        self.mismatches += 1;
        if self.mismatches <= MISMATCHES_PRINTED {
            eprintln!(
                "{file}: mismatch: {}",
                serde_json::to_string(&report).expect("a mismatch serializes")
            );
        }
        if self.first_mismatch.is_none() {
            self.first_mismatch = Some(report);
        }
    }

    /// A progress line on stderr at most every two seconds, once a run has taken that long.
    fn progress(&mut self, file: &str, step: usize) {
        let now = Instant::now();
        if now.duration_since(self.last_progress).as_secs() >= 2 {
            self.last_progress = now;
            eprintln!(
                "trace: {file}: step {step}/{} (file {}/{}), {:.0} s",
                self.file_steps,
                self.files_done + 1,
                self.file_total,
                now.duration_since(self.started).as_secs_f64()
            );
        }
    }
}

/// The last `n` bytes of `text` (or fewer, starting at a UTF-8 character boundary), lossily.
fn tail(text: &[u8], n: usize) -> String {
    let mut start = text.len().saturating_sub(n);
    // Skip continuation bytes so the excerpt does not open with a replacement character.
    while start < text.len() && start > 0 && text[start] & 0xC0 == 0x80 {
        start += 1;
    }
    String::from_utf8_lossy(&text[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON grammar with the oracle, over a vocabulary of every byte, a few words, and EOS
    /// (last).
    fn oracle() -> Compiled {
        let vocab = munch_testkit::vocab::bytes_and(&["true", "null", ", "]);
        let config = Config::new().masker(MaskerKind::Oracle).fallback(None);
        Compiled::new(&Grammar::builtin("json").unwrap(), vocab, &config).unwrap()
    }

    fn encode(compiled: &Compiled, text: &str) -> Vec<u32> {
        let tokens = compiled.vocabulary().encode(text).unwrap();
        tokens.iter().map(|t| t.as_u32()).collect()
    }

    /// Traces `tokens` with traced masker `lane` wrong on purpose, named `dropping`: its masks
    /// never allow `dropped`.
    fn trace_dropping(
        tracer: &mut Tracer,
        tokens: &[u32],
        oracle_at: &[bool],
        lane: usize,
        dropped: u32,
    ) -> Outcome {
        tracer.record.names[lane] = "dropping".to_string();
        tracer.run(tokens, oracle_at, |record, step, with_oracle| {
            let mut masks = step.masks.to_vec();
            masks[lane].remove(TokenId::from(dropped));
            record.visit("f.json", step, &masks, with_oracle);
        })
    }

    #[test]
    fn agreeing_maskers_accept_a_sentence() {
        let c = oracle();
        let tokens = encode(&c, "[true, null]");
        let mut tracer = Tracer::new(&[c.clone(), c.clone()], true).unwrap();
        assert!(
            tracer.record.oracle.is_none(),
            "the oracle is traced already"
        );
        let all = vec![true; tokens.len() + 1];
        assert_eq!(tracer.trace("f", &tokens, &all), Outcome::Accepted);
        assert_eq!(tracer.record.steps, tokens.len() + 1);
        assert_eq!(tracer.record.mismatches, 0);
        assert_eq!(tracer.record.commit_ns.len(), tokens.len());
        let counts: Vec<usize> = tracer.summaries().map(|(_, s)| s.unwrap().count).collect();
        assert_eq!(counts, vec![tokens.len() + 1; 2]);
    }

    #[test]
    fn a_wrong_masker_is_reported_at_its_first_disagreement() {
        let c = oracle();
        // `,` (one byte), which the oracle allows after a value inside an array.
        let comma = encode(&c, ",")[0];
        let tokens = encode(&c, "[true, null]");
        let mut tracer = Tracer::new(&[c.clone(), c.clone()], false).unwrap();
        // The forced separator is the token `, `, so the file goes through.
        assert_eq!(
            trace_dropping(&mut tracer, &tokens, &[], 1, comma),
            Outcome::Accepted
        );
        let first = tracer.record.first_mismatch.clone().unwrap();
        assert_eq!(first.step, 2);
        assert_eq!(first.token, comma);
        assert_eq!(first.token_bytes, ",");
        assert_eq!(first.before, "[true");
        assert!(!first.accepting);
        assert_eq!(
            first.verdicts.0,
            vec![
                ("oracle".to_string(), true),
                ("dropping".to_string(), false)
            ]
        );
        // After `true` and after `null`.
        assert_eq!(tracer.record.mismatches, 2);
    }

    #[test]
    fn the_checking_oracle_runs_only_at_the_chosen_steps() {
        let c = oracle();
        let comma = encode(&c, ",")[0];
        let tokens = encode(&c, "[true, null]");
        // One traced masker (wrong), checked by the oracle.
        let mut tracer = Tracer::new(std::slice::from_ref(&c), false).unwrap();
        tracer.record.oracle = Some(OracleCheck::new(&c).unwrap());
        assert_eq!(
            trace_dropping(&mut tracer, &tokens, &[false; 64], 0, comma),
            Outcome::Accepted
        );
        assert_eq!(tracer.record.mismatches, 0, "never checked");
        let mut at = vec![false; tokens.len() + 1];
        at[1] = true;
        at[2] = true;
        trace_dropping(&mut tracer, &tokens, &at, 0, comma);
        assert_eq!(
            tracer.record.mismatches, 1,
            "step 1 agrees, step 2 does not"
        );
        let first = tracer.record.first_mismatch.as_ref().unwrap();
        assert_eq!(first.step, 2);
        assert_eq!(
            first.verdicts.0,
            vec![
                ("dropping".to_string(), false),
                ("oracle".to_string(), true)
            ]
        );
    }

    #[test]
    fn a_masked_out_token_rejects_the_file() {
        let c = oracle();
        let mut tracer = Tracer::new(std::slice::from_ref(&c), false).unwrap();
        match tracer.trace("f", &encode(&c, "[tru]"), &[]) {
            Outcome::Rejected { step, reason } => {
                assert_eq!(step, 4);
                assert!(reason.starts_with("step 4: token"), "{reason}");
                assert!(reason.contains("\"]\" (masked out)"), "{reason}");
            }
            Outcome::Accepted => panic!("`[tru]` accepted"),
        }
        match tracer.trace("g", &encode(&c, "[1"), &[]) {
            Outcome::Rejected { reason, .. } => {
                assert!(reason.contains("does not accept"), "{reason}")
            }
            Outcome::Accepted => panic!("`[1` accepted"),
        }
    }

    #[test]
    fn a_mask_line_hashes_the_little_endian_words() {
        // Tokens 0, 5 and 32 of 33: words [0x21, 0x1].
        let mut mask = TokenMask::new(33);
        for t in [0, 5, 32] {
            mask.insert(TokenId::from(t));
        }
        let line = MaskLine::new("f", 3, &mask);
        // hashlib.sha256(struct.pack('<2I', 0x21, 1)).hexdigest(), in Python.
        let expected = "54bd7331a34583ff6c77a6b5043cadfc4ab21eb7d183f7e1ee10aef04f341343";
        assert_eq!((line.step, line.allowed), (3, 3));
        assert_eq!(line.sha256, expected);
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            format!(r#"{{"file":"f","step":3,"allowed":3,"sha256":"{expected}"}}"#)
        );
    }

    #[test]
    fn tail_starts_at_a_character_boundary() {
        assert_eq!(tail(b"abcdef", 3), "def");
        assert_eq!(tail(b"ab", 80), "ab");
        // "λx": λ is two bytes; the last two bytes start inside it.
        assert_eq!(tail("aλx".as_bytes(), 2), "x");
        assert_eq!(tail("aλx".as_bytes(), 3), "λx");
    }
}
