//! `munch generate GRAMMAR --tokenizer TOK --masker M [--fallback M2] [--max-memory BYTES]
//! [--seed S] [-n N] [--max-tokens K]`:
//! random constrained sampling.
//!
//! Each sample starts a [`Matcher`] at the start of the text and repeatedly asks it for the
//! allowed tokens. When an end-of-sequence token is allowed (the text is a sentence), the
//! sample ends there with probability [`EOS_PROBABILITY`] (and always when no text token is
//! allowed); otherwise the next token is drawn uniformly among the allowed text tokens and
//! accepted. Everything is drawn from one generator seeded by `--seed`, so a seed gives the
//! same texts every time.
//!
//! stdout: one JSON string per finished sample, then
//! `{"samples":N,"finished":N,"dead_ends":N,"truncated":N}`. A **dead end** is an empty mask
//! before the text is a sentence; **truncated** samples hit `--max-tokens`. Neither is printed
//! as a text (each gets a stderr line). Every finished text is parsed again from scratch; a text
//! that does not parse, or an allowed token the matcher refuses, is a bug: exit code 1.
//!
//! If `--masker`'s build fails (a budget, a grammar shape it does not support), `--fallback`
//! builds that masker instead, and stderr says so.

use std::process::ExitCode;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use munch::parse::parse_text;
use munch::{Compiled, Config, MaskerKind, Matcher, TokenMask, Vocabulary};

use super::CliError;

/// The probability of ending a sample when the grammar allows it to end. Uniform sampling
/// would almost never pick the one EOS token among thousands; 0.2 keeps samples short while
/// still letting them go on past their first possible end.
pub(crate) const EOS_PROBABILITY: f64 = 0.2;

/// Arguments of `munch generate`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: super::MaskArgs,
    /// The masker (trie, spanner, wda, oracle).
    #[arg(long, default_value = "trie")]
    masker: String,
    /// Seed of the sampling.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of samples.
    #[arg(short = 'n', default_value_t = 5)]
    n: usize,
    /// Tokens per sample at most.
    #[arg(long, default_value_t = 256)]
    max_tokens: usize,
    /// The masker to use when `--masker`'s build fails (a budget hit, a grammar shape it does
    /// not support); stderr says so.
    #[arg(long, value_name = "MASKER")]
    fallback: Option<String>,
    /// The most bytes a table masker's build may hold at once (the token spans' tables, then
    /// the spanner's tables or the wda's construction and tables; the vocabulary and parser
    /// not included).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<usize>,
    /// Build the wda on demand: the lexical side now, each automaton state the first time a
    /// mask reads it (in a cache of 256 MiB by default; with `--max-memory`, the lexical side
    /// and the cache together stay within it). With the trie: no
    /// token classes, the walk over every token (nothing built beyond the parser). Same masks.
    #[arg(long)]
    lazy: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let kind: MaskerKind = args.masker.parse()?;
    let fallback = match &args.fallback {
        Some(name) => Some(name.parse::<MaskerKind>()?),
        None => None,
    };
    let (grammar, vocab) = args.input.load()?;
    let config = Config::new()
        .parser(args.input.grammar.parser_config())
        .masker(kind)
        .fallback(fallback)
        .max_memory(args.max_memory)
        .lazy(args.lazy);
    let compiled = super::compile(&grammar, vocab, &config)?;
    let parser = compiled.parser();
    let mut sampler = Sampler::new(&compiled);
    let mut rng = StdRng::seed_from_u64(args.seed);
    let (mut finished, mut dead_ends, mut truncated, mut bugs) = (0, 0, 0, 0);
    for i in 0..args.n {
        let sample = sampler.sample(&mut rng, args.max_tokens);
        let shown = String::from_utf8_lossy(&sample.text);
        match &sample.end {
            Ending::Finished => {
                finished += 1;
                println!("{}", serde_json::Value::from(shown.as_ref()));
                if let Err(r) = parse_text(parser, &sample.text) {
                    bugs += 1;
                    eprintln!(
                        "sample {i}: BUG: the finished text does not parse (byte {}: {})",
                        r.offset, r.message
                    );
                } else if std::str::from_utf8(&sample.text).is_err() {
                    eprintln!("sample {i}: the text is not UTF-8; printed lossily");
                }
            }
            Ending::DeadEnd => {
                dead_ends += 1;
                eprintln!("sample {i}: dead end (no token allowed) after {shown:?}");
            }
            Ending::Truncated => {
                truncated += 1;
                eprintln!("sample {i}: truncated at {} tokens", args.max_tokens);
            }
            Ending::Refused(why) => {
                bugs += 1;
                eprintln!("sample {i}: BUG: an allowed token is refused: {why}");
            }
        }
    }
    let line = GenerateLine {
        samples: args.n,
        finished,
        dead_ends,
        truncated,
    };
    println!(
        "{}",
        serde_json::to_string(&line).expect("the summary serializes")
    );
    Ok(if bugs == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `generate`'s summary line, fields in the documented order.
#[derive(serde::Serialize)]
struct GenerateLine {
    samples: usize,
    finished: usize,
    dead_ends: usize,
    truncated: usize,
}

/// How a sample ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// EOS was chosen: the text is a sentence.
    Finished,
    /// No token was allowed before the text was a sentence.
    DeadEnd,
    /// The token budget ran out.
    Truncated,
    /// The matcher refused a token its own mask allowed (a masker bug).
    Refused(String),
}

/// One sample: its text and how it ended.
pub(crate) struct Sample {
    pub(crate) text: Vec<u8>,
    pub(crate) end: Ending,
}

/// Draws samples through one matcher, reset for each, and one mask.
pub(crate) struct Sampler {
    matcher: Matcher,
    mask: TokenMask,
}

impl Sampler {
    pub(crate) fn new(compiled: &Compiled) -> Self {
        Sampler {
            matcher: compiled.matcher(),
            mask: TokenMask::new(compiled.vocabulary().len()),
        }
    }

    /// One sample of at most `max_tokens` tokens from the start of the text.
    pub(crate) fn sample(&mut self, rng: &mut impl Rng, max_tokens: usize) -> Sample {
        let matcher = &mut self.matcher;
        matcher.reset();
        let vocab = Arc::clone(matcher.compiled().vocabulary());
        let mut text = Vec::new();
        let mut tokens = 0;
        let end = loop {
            matcher
                .fill_next_token_mask(&mut self.mask)
                .expect("the mask is over the matcher's vocabulary");
            // A vocabulary without EOS can still end where the text is a sentence.
            let eos = vocab.eos().iter().copied().find(|&e| self.mask.contains(e));
            let can_end = if vocab.eos().is_empty() {
                matcher.is_accepting()
            } else {
                eos.is_some()
            };
            for &e in vocab.eos() {
                self.mask.remove(e);
            }
            let choices = self.mask.count();
            if can_end && (choices == 0 || rng.gen_bool(EOS_PROBABILITY)) {
                if let Some(eos) = eos {
                    // Ends the text as an engine does, by accepting the stop token.
                    if let Err(e) = matcher.accept_token(eos.as_u32()) {
                        break refused(&vocab, eos.as_u32(), &text, e);
                    }
                }
                break Ending::Finished;
            }
            if choices == 0 {
                break Ending::DeadEnd;
            }
            if tokens == max_tokens {
                break Ending::Truncated;
            }
            let k = rng.gen_range(0..choices);
            let token = self
                .mask
                .iter()
                .nth(k)
                .expect("k is below the mask's count");
            if let Err(e) = matcher.accept_token(token.as_u32()) {
                break refused(&vocab, token.as_u32(), &text, e);
            }
            text.extend_from_slice(vocab.token_bytes(token).unwrap_or_default());
            tokens += 1;
        };
        Sample { text, end }
    }
}

/// The ending of a sample whose matcher refused `token` after `text`.
fn refused(vocab: &Vocabulary, token: u32, text: &[u8], e: munch::MatcherError) -> Ending {
    let bytes = vocab
        .token_bytes(munch::TokenId::from(token))
        .unwrap_or_default();
    Ending::Refused(format!(
        "token {token} {:?} after {:?}: {e}",
        String::from_utf8_lossy(bytes),
        String::from_utf8_lossy(text)
    ))
}
