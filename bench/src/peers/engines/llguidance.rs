//! llguidance through its crate: a `ParserFactory` over munch's token bytes, one `Matcher` per
//! text (a deep clone of the one built for the grammar).

use std::sync::Arc;
use std::time::Instant;

use llguidance::api::TopLevelGrammar;
use llguidance::earley::SlicedBiasComputer;
use llguidance::toktrie::{
    ApproximateTokEnv, InferenceCapabilities, SimpleVob, TokEnv, TokRxInfo, TokTrie,
};
use llguidance::{Matcher, ParserFactory};

use super::{rss_now_mib, trace_texts};
use crate::peers::job::{GrammarKind, Job, VocabFile, WorkerResult};
use crate::peers::trace::Session;

/// The crate version this harness links (see bench/Cargo.toml for why it is pinned).
pub(crate) const VERSION: &str = "1.7.0";

struct LlgSession {
    matcher: Matcher,
    mask: Option<SimpleVob>,
}

impl Session for LlgSession {
    fn fill_mask(&mut self) -> Result<(), String> {
        // A stopped parser (a complete sentence with no possible extension) allows only EOS,
        // as llguidance's own bitmask filling does; `compute_mask` would fail there.
        self.mask = Some(
            self.matcher
                .compute_mask_or_eos()
                .map_err(|e| e.to_string())?,
        );
        Ok(())
    }

    fn allows(&self, token: u32) -> bool {
        self.mask
            .as_ref()
            .is_some_and(|m| (token as usize) < m.len() && m.is_allowed(token))
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.matcher.consume_token(token).map_err(|e| e.to_string())
    }

    fn is_accepting(&mut self) -> bool {
        self.matcher.is_accepting().unwrap_or(false)
    }
}

pub(super) fn run(
    slicer: bool,
    job: &Job,
    vocab: &VocabFile,
    result: &mut WorkerResult,
) -> Result<(), String> {
    result.engine_version = format!("llguidance {VERSION} (crate)");
    result.settings = format!(
        "no_forcing, allow_initial_skip; slicer {}; 1 thread",
        if slicer { "on" } else { "off" }
    );
    let started = Instant::now();
    // llguidance marks special tokens with a leading 0xFF byte.
    let mut words: Vec<Vec<u8>> = vocab
        .token_bytes()?
        .into_iter()
        .map(|b| b.unwrap_or_default())
        .collect();
    for (id, name) in &vocab.specials {
        if let Some(word) = words.get_mut(*id as usize) {
            *word = [&[0xFF][..], name.as_bytes()].concat();
        }
    }
    let eos = vocab.eos.first().copied().unwrap_or(0);
    let info = TokRxInfo::new(words.len() as u32, eos);
    let env: TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
    let slices = if slicer {
        SlicedBiasComputer::general_slices()
    } else {
        Vec::new()
    };
    let mut factory = ParserFactory::new(&env, InferenceCapabilities::default(), &slices)
        .map_err(|e| e.to_string())?;
    factory.quiet();
    result.prepare_s = started.elapsed().as_secs_f64();
    result.rss_before_build_mib = rss_now_mib();
    let started = Instant::now();
    // A schema goes through llguidance's Lark front end too (`%json`), so that both kinds take
    // the same options; its JSON options are the defaults (flexible whitespace, schema order).
    let grammar = match job.grammar_kind {
        GrammarKind::Lark => job.grammar_text.clone(),
        GrammarKind::JsonSchema => format!("start: %json {}", job.grammar_text),
    };
    let text =
        format!("%llguidance {{\"no_forcing\": true, \"allow_initial_skip\": true}}\n{grammar}");
    let parser = factory
        .create_parser(TopLevelGrammar::from_lark(text))
        .map_err(|e| e.to_string())?;
    let matcher = Matcher::new(Ok(parser));
    if let Some(e) = matcher.get_error() {
        return Err(e);
    }
    result.build_s = started.elapsed().as_secs_f64();
    trace_texts(
        &job.texts,
        || {
            Ok(Box::new(LlgSession {
                matcher: matcher.deep_clone(),
                mask: None,
            }))
        },
        result,
    )
}
