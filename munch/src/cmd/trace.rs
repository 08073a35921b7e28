//! `munch trace GRAMMAR --tokenizer TOK --masker M1[,M2...] [--oracle | --oracle-sample N]
//! [--seed S] FILE...`: teacher-forced mask traces.
//!
//! Each file is tokenized with the tokenizer's own encoding (no special tokens) and walked token
//! by token. A **step** is one position where masks are computed: before each token, and once
//! more at the end (so a file of `n` tokens has `n + 1` steps). At every step every listed
//! masker fills its mask (each `fill_mask` timed), the masks are compared with each other and,
//! at the chosen steps, with the oracle; the file's next token must be allowed by every masker,
//! and is then committed (timed). At the end the state must accept, and each mask must allow
//! EOS exactly then.
//!
//! stdout's last line is one JSON object:
//! `{"files","steps","rejected","mismatches","first_mismatch","maskers","commit"}`, where
//! `rejected` counts files whose forced token was masked out, whose commit failed or whose end
//! did not accept (one stderr line each says why), and `mismatches` counts steps where the masks
//! disagree. Exit code 0 iff both are 0, 1 otherwise, 2 for usage, grammar, tokenizer or file
//! errors.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::ser::SerializeMap;
use serde::Serialize;

use munch::stats::{us, Summary, SummaryUs};
use munch_glr::mask::{MaskCache, Masker, Oracle, TokenMask};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_lexer::vocab::Vocabulary;
use munch_lexer::TokenId;

use super::CliError;

/// Arguments of `munch trace`.
#[derive(clap::Args)]
pub struct Args {
    /// A Lark grammar: a file, `builtin:NAME` or `syncode:NAME`.
    grammar: String,
    /// The tokenizer: a `tokenizer.json` path, or one of llama2, llama3, qwen3, gemma3, gptoss.
    #[arg(long)]
    tokenizer: String,
    /// Maskers to trace, comma-separated (trie, spanner, wda, oracle); the first is the
    /// reference the others are compared with.
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
    /// Text files to trace (UTF-8).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    for (i, name) in args.masker.iter().enumerate() {
        munch::maskers::check(name)?;
        if args.masker[..i].contains(name) {
            return Err(format!("masker `{name}` is listed twice").into());
        }
    }
    let grammar = munch::input::load_grammar(&args.grammar)?;
    let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default())?);
    let vocab = Arc::new(Vocabulary::load(&args.tokenizer)?);
    // Tokenize every file first, so that an unreadable one fails before any work.
    let mut inputs = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let name = file.display().to_string();
        let bytes = std::fs::read(file).map_err(|e| format!("{name}: {e}"))?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            format!(
                "{name}: not UTF-8 (at byte {}): the tokenizer encodes text",
                e.valid_up_to()
            )
        })?;
        let tokens = vocab.encode(text).map_err(|e| format!("{name}: {e}"))?;
        inputs.push((name, tokens));
    }
    let mut maskers = Vec::with_capacity(args.masker.len());
    for name in &args.masker {
        maskers.push(munch::maskers::build(name, &parser, &vocab)?.masker);
    }
    let check_oracle = args.oracle || args.oracle_sample.is_some_and(|n| n > 0);
    let mut tracer = Tracer::new(Arc::clone(&vocab), maskers, check_oracle);
    tracer.set_file_total(inputs.len());
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
        if let Outcome::Rejected(why) = tracer.trace(name, &parser, tokens, &oracle_at) {
            eprintln!("{name}: rejected: {why}");
            rejected += 1;
        }
    }
    let line = TraceLine {
        files: inputs.len(),
        steps: tracer.steps,
        rejected,
        mismatches: tracer.mismatches,
        first_mismatch: tracer.first_mismatch.clone(),
        maskers: Named(
            tracer
                .summaries()
                .map(|(name, s)| (name.to_string(), s.map(|s| s.to_us())))
                .collect(),
        ),
        commit: Summary::from_ns(&tracer.commit_ns).map(|s| CommitLine {
            p50_us: us(s.p50_ns as f64),
            p99_us: us(s.p99_ns as f64),
            max_us: us(s.max_ns as f64),
        }),
    };
    let line = serde_json::to_string(&line).expect("the summary serializes");
    println!("{line}");
    Ok(if rejected == 0 && tracer.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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

/// How a traced file ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every token was allowed and committed, and the end accepts.
    Accepted,
    /// Why the file was rejected.
    Rejected(String),
}

/// One masker being traced, with its scratch, its current mask and its timings.
struct Lane {
    masker: Box<dyn Masker>,
    cache: MaskCache,
    mask: TokenMask,
    ns: Vec<u64>,
}

impl Lane {
    fn new(masker: Box<dyn Masker>) -> Self {
        Lane {
            cache: masker.create_cache(),
            mask: TokenMask::new(masker.vocabulary().len()),
            masker,
            ns: Vec::new(),
        }
    }
}

/// Mismatches printed to stderr at most (all are counted).
const MISMATCHES_PRINTED: usize = 10;
/// Bytes of text before a mismatch shown in its report.
const CONTEXT_BYTES: usize = 80;

/// Teacher-forces token sequences through a set of maskers, comparing and timing them.
pub(crate) struct Tracer {
    vocab: Arc<Vocabulary>,
    lanes: Vec<Lane>,
    /// The checking oracle (not one of the traced maskers; its time is not reported).
    oracle: Option<Lane>,
    /// Commit latencies, ns.
    pub commit_ns: Vec<u64>,
    /// Steps traced (mask positions, one per token plus one per file end).
    pub steps: usize,
    /// Steps where the masks disagree (with each other, the oracle, or the EOS rule).
    pub mismatches: usize,
    /// The first disagreement.
    pub first_mismatch: Option<Mismatch>,
    started: Instant,
    last_progress: Instant,
    files_done: usize,
    file_total: usize,
}

impl Tracer {
    /// A tracer of `maskers` (the first is the reference), with a checking oracle when
    /// `check_oracle` (none is made when `oracle` is itself among the maskers: it is compared at
    /// every step already).
    pub(crate) fn new(
        vocab: Arc<Vocabulary>,
        maskers: Vec<Box<dyn Masker>>,
        check_oracle: bool,
    ) -> Self {
        let lanes: Vec<Lane> = maskers.into_iter().map(Lane::new).collect();
        let oracle = (check_oracle && lanes.iter().all(|l| l.masker.name() != "oracle"))
            .then(|| Lane::new(Box::new(Oracle::new(Arc::clone(&vocab)))));
        let now = Instant::now();
        Tracer {
            vocab,
            lanes,
            oracle,
            commit_ns: Vec::new(),
            steps: 0,
            mismatches: 0,
            first_mismatch: None,
            started: now,
            last_progress: now,
            files_done: 0,
            file_total: 1,
        }
    }

    /// How many files the run will trace, for progress lines.
    pub(crate) fn set_file_total(&mut self, total: usize) {
        self.file_total = total;
    }

    /// Each traced masker's name and latency summary, in the order given.
    pub(crate) fn summaries(&self) -> impl Iterator<Item = (&str, Option<Summary>)> + '_ {
        self.lanes
            .iter()
            .map(|l| (l.masker.name(), Summary::from_ns(&l.ns)))
    }

    /// Traces `tokens` (the text of `file`) from the start state of `parser`; the oracle, if
    /// any, checks step `i` iff `oracle_at[i]` (missing entries: no).
    pub(crate) fn trace(
        &mut self,
        file: &str,
        parser: &Arc<Parser>,
        tokens: &[TokenId],
        oracle_at: &[bool],
    ) -> Outcome {
        let outcome = self.trace_inner(file, parser, tokens, oracle_at);
        self.files_done += 1;
        outcome
    }

    fn trace_inner(
        &mut self,
        file: &str,
        parser: &Arc<Parser>,
        tokens: &[TokenId],
        oracle_at: &[bool],
    ) -> Outcome {
        let mut state = ParserState::new(Arc::clone(parser));
        let mut text: Vec<u8> = Vec::new();
        for step in 0..=tokens.len() {
            self.progress(file, step, tokens.len() + 1);
            for lane in &mut self.lanes {
                let at = Instant::now();
                lane.masker
                    .fill_mask(&mut lane.cache, &state, &mut lane.mask);
                lane.ns.push(at.elapsed().as_nanos() as u64);
            }
            let with_oracle = match &mut self.oracle {
                Some(oracle) if oracle_at.get(step).copied().unwrap_or(false) => {
                    oracle
                        .masker
                        .fill_mask(&mut oracle.cache, &state, &mut oracle.mask);
                    true
                }
                _ => false,
            };
            self.steps += 1;
            self.compare(file, step, &text, &state, with_oracle);
            let Some(&token) = tokens.get(step) else {
                break;
            };
            let shown = self.token_text(token);
            let refusers: Vec<&str> = self
                .lanes
                .iter()
                .filter(|l| !l.mask.contains(token))
                .map(|l| l.masker.name())
                .collect();
            let at = Instant::now();
            let committed = state.commit_token(&self.vocab, token);
            let elapsed = at.elapsed().as_nanos() as u64;
            match committed {
                Ok(()) if refusers.is_empty() => self.commit_ns.push(elapsed),
                Ok(()) => {
                    return Outcome::Rejected(format!(
                        "step {step}: token {token} {shown:?} is masked out by {} \
                         although its commit succeeds",
                        refusers.join(", ")
                    ))
                }
                Err(e) => {
                    let masked = if refusers.len() == self.lanes.len() {
                        "masked out".to_string()
                    } else if refusers.is_empty() {
                        "allowed by every masker".to_string()
                    } else {
                        format!("masked out by {}", refusers.join(", "))
                    };
                    return Outcome::Rejected(format!(
                        "step {step}: token {token} {shown:?} ({masked}) cannot be committed: {e}"
                    ));
                }
            }
            if let Some(bytes) = self.vocab.token_bytes(token) {
                text.extend_from_slice(bytes);
            }
        }
        if state.is_accepting() {
            Outcome::Accepted
        } else {
            Outcome::Rejected(format!(
                "the text ends after {} tokens where the grammar does not accept",
                tokens.len()
            ))
        }
    }

    /// Compares the masks of this step; counts and reports a disagreement.
    fn compare(
        &mut self,
        file: &str,
        step: usize,
        text: &[u8],
        state: &ParserState,
        with_oracle: bool,
    ) {
        let mut masks: Vec<(&str, &TokenMask)> = self
            .lanes
            .iter()
            .map(|l| (l.masker.name(), &l.mask))
            .collect();
        if with_oracle {
            if let Some(oracle) = &self.oracle {
                masks.push(("oracle", &oracle.mask));
            }
        }
        let Some(&(_, reference)) = masks.first() else {
            return;
        };
        let mut token = masks[1..]
            .iter()
            .filter_map(|(_, m)| reference.first_difference(m))
            .min();
        let accepting = state.is_accepting();
        if token.is_none() {
            // The masks agree; they must still allow EOS exactly when the state accepts.
            token = self
                .vocab
                .eos()
                .iter()
                .copied()
                .find(|&eos| masks.iter().any(|(_, m)| m.contains(eos) != accepting));
        }
        let Some(token) = token else {
            return;
        };
        self.mismatches += 1;
        let report = Mismatch {
            file: file.to_string(),
            step,
            token: token.as_u32(),
            token_bytes: self.token_text(token),
            before: tail(text, CONTEXT_BYTES),
            accepting,
            verdicts: Named(
                masks
                    .iter()
                    .map(|(name, m)| (name.to_string(), m.contains(token)))
                    .collect(),
            ),
        };
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

    /// A token's bytes as a (lossy) string, or a special token's name.
    fn token_text(&self, token: TokenId) -> String {
        match self.vocab.token_bytes(token) {
            Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            None => self
                .vocab
                .special_name(token)
                .map_or_else(|| format!("<special {token}>"), str::to_owned),
        }
    }

    /// A progress line on stderr at most every two seconds, once a run has taken that long.
    fn progress(&mut self, file: &str, step: usize, steps: usize) {
        let now = Instant::now();
        if now.duration_since(self.last_progress).as_secs() >= 2 {
            self.last_progress = now;
            eprintln!(
                "trace: {file}: step {step}/{steps} (file {}/{}), {:.0} s",
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

    /// The oracle, wrong on purpose: never allows `dropped`.
    struct Dropping {
        oracle: Oracle,
        dropped: TokenId,
    }

    impl Masker for Dropping {
        fn name(&self) -> &str {
            "dropping"
        }
        fn vocabulary(&self) -> &Vocabulary {
            self.oracle.vocabulary()
        }
        fn create_cache(&self) -> MaskCache {
            self.oracle.create_cache()
        }
        fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
            self.oracle.fill_into(cache, state, mask.reborrow());
            mask.remove(self.dropped);
        }
    }

    /// The JSON grammar's parser and a vocabulary of every byte, a few words, and EOS (last).
    fn setup() -> (Arc<Parser>, Arc<Vocabulary>) {
        let grammar = munch::input::load_grammar("builtin:json").unwrap();
        let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap());
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        for t in ["true", "null", ", "] {
            tokens.push(Some(t.as_bytes().to_vec()));
        }
        tokens.push(None);
        let eos = TokenId::from_usize(tokens.len() - 1);
        let vocab = Arc::new(Vocabulary::from_token_bytes(tokens, vec![eos]).unwrap());
        (parser, vocab)
    }

    fn oracle(vocab: &Arc<Vocabulary>) -> Box<dyn Masker> {
        Box::new(Oracle::new(Arc::clone(vocab)))
    }

    #[test]
    fn agreeing_maskers_accept_a_sentence() {
        let (parser, vocab) = setup();
        let tokens = vocab.encode("[true, null]").unwrap();
        let mut tracer = Tracer::new(
            Arc::clone(&vocab),
            vec![oracle(&vocab), oracle(&vocab)],
            true,
        );
        let all = vec![true; tokens.len() + 1];
        assert_eq!(tracer.trace("f", &parser, &tokens, &all), Outcome::Accepted);
        assert_eq!(tracer.steps, tokens.len() + 1);
        assert_eq!(tracer.mismatches, 0);
        assert_eq!(tracer.commit_ns.len(), tokens.len());
        let counts: Vec<usize> = tracer.summaries().map(|(_, s)| s.unwrap().count).collect();
        assert_eq!(counts, vec![tokens.len() + 1; 2]);
    }

    #[test]
    fn a_wrong_masker_is_reported_at_its_first_disagreement() {
        let (parser, vocab) = setup();
        // `,` (one byte), which the oracle allows after a value inside an array.
        let comma = vocab.encode(",").unwrap()[0];
        let wrong = Box::new(Dropping {
            oracle: Oracle::new(Arc::clone(&vocab)),
            dropped: comma,
        });
        let tokens = vocab.encode("[true, null]").unwrap();
        let mut tracer = Tracer::new(Arc::clone(&vocab), vec![oracle(&vocab), wrong], false);
        // The forced separator is the token `, `, so the file goes through.
        assert_eq!(
            tracer.trace("f.json", &parser, &tokens, &[]),
            Outcome::Accepted
        );
        let first = tracer.first_mismatch.clone().unwrap();
        assert_eq!(first.step, 2);
        assert_eq!(first.token, comma.as_u32());
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
        assert_eq!(tracer.mismatches, 2);
    }

    #[test]
    fn the_checking_oracle_runs_only_at_the_chosen_steps() {
        let (parser, vocab) = setup();
        let comma = vocab.encode(",").unwrap()[0];
        let wrong = Box::new(Dropping {
            oracle: Oracle::new(Arc::clone(&vocab)),
            dropped: comma,
        });
        let tokens = vocab.encode("[true, null]").unwrap();
        let mut tracer = Tracer::new(Arc::clone(&vocab), vec![wrong], true);
        assert_eq!(
            tracer.trace("f", &parser, &tokens, &[false; 64]),
            Outcome::Accepted
        );
        assert_eq!(tracer.mismatches, 0, "never checked");
        let mut at = vec![false; tokens.len() + 1];
        at[1] = true;
        at[2] = true;
        tracer.trace("f", &parser, &tokens, &at);
        assert_eq!(tracer.mismatches, 1, "step 1 agrees, step 2 does not");
        assert_eq!(tracer.first_mismatch.as_ref().unwrap().step, 2);
    }

    #[test]
    fn a_masked_out_token_rejects_the_file() {
        let (parser, vocab) = setup();
        let mut tracer = Tracer::new(Arc::clone(&vocab), vec![oracle(&vocab)], false);
        let tokens = vocab.encode("[tru]").unwrap();
        match tracer.trace("f", &parser, &tokens, &[]) {
            Outcome::Rejected(why) => {
                assert!(why.starts_with("step 4: token"), "{why}");
                assert!(why.contains("\"]\" (masked out)"), "{why}");
            }
            Outcome::Accepted => panic!("`[tru]` accepted"),
        }
        let tokens = vocab.encode("[1").unwrap();
        match tracer.trace("g", &parser, &tokens, &[]) {
            Outcome::Rejected(why) => assert!(why.contains("does not accept"), "{why}"),
            Outcome::Accepted => panic!("`[1` accepted"),
        }
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
