//! munch's maskers through the front door: a [`Compiled`] grammar per masker and a [`Matcher`]
//! per text, filling one bitmask row as an inference engine does.

use std::sync::Arc;
use std::time::Instant;

use munch::{Compiled, Config, Grammar, MaskerKind, Matcher, SchemaOptions, Vocabulary};

use super::{rss_now_mib, trace_texts};
use crate::peers::job::{GrammarKind, Job, WorkerResult};
use crate::peers::trace::Session;

struct MunchSession {
    matcher: Matcher,
    /// The matcher's row of the bitmask: bit `t % 32` of word `t / 32` for token `t`.
    row: Vec<u32>,
}

impl Session for MunchSession {
    fn fill_mask(&mut self) -> Result<(), String> {
        self.matcher
            .fill_next_token_bitmask(&mut self.row)
            .map_err(|e| e.to_string())
    }

    fn allows(&self, token: u32) -> bool {
        self.row
            .get(token as usize / 32)
            .is_some_and(|w| w >> (token % 32) & 1 == 1)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.matcher.accept_token(token).map_err(|e| e.to_string())
    }

    fn is_accepting(&mut self) -> bool {
        self.matcher.is_accepting()
    }
}

pub(super) fn run(kind: &str, job: &Job, result: &mut WorkerResult) -> Result<(), String> {
    result.engine_version = format!("munch {}", env!("CARGO_PKG_VERSION"));
    let (kind, background) = match kind.strip_suffix("-bg") {
        Some(kind) => (kind, true),
        None => (kind, false),
    };
    let (kind, lazy) = match kind.strip_suffix("-lazy") {
        Some(kind) => (kind, true),
        None => (kind, false),
    };
    result.settings = if background {
        format!("masker {kind} built in the background, the trie walk masking until then")
    } else if lazy {
        format!(
            "masker {kind} built on demand, its states as masks reach them (no fallback); 1 thread"
        )
    } else {
        format!("masker {kind} (no fallback); 1 thread")
    };
    let kind: MaskerKind = kind
        .parse()
        .map_err(|e: munch::CompileError| e.to_string())?;
    let started = Instant::now();
    let vocab = Arc::new(Vocabulary::load(&job.tokenizer).map_err(|e| e.to_string())?);
    result.prepare_s = started.elapsed().as_secs_f64();
    result.rss_before_build_mib = rss_now_mib();
    let started = Instant::now();
    let grammar = match job.grammar_kind {
        GrammarKind::Lark => {
            Grammar::lark(job.grammar_text.clone()).with_name(format!("{}.lark", job.grammar))
        }
        // The default options: exact, whitespace runs of at most 16, schema order.
        GrammarKind::JsonSchema => {
            Grammar::from_json_schema(job.grammar_text.as_str(), &SchemaOptions::default())
                .map_err(|e| e.to_string())?
        }
    };
    let config = Config::new()
        .masker(kind)
        .fallback(None)
        .background(background)
        .lazy(lazy);
    let compiled = Compiled::new(&grammar, vocab, &config).map_err(|e| e.to_string())?;
    result.build_s = started.elapsed().as_secs_f64();
    trace_texts(
        &job.texts,
        || {
            Ok(Box::new(MunchSession {
                matcher: compiled.matcher(),
                row: vec![0; compiled.bitmask_words()],
            }))
        },
        result,
    )
}
