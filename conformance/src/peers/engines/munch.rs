//! munch's maskers through the facade (`munch::maskers::build`).

use std::sync::Arc;
use std::time::Instant;

use munch_glr::lark::{self, LoadConfig};
use munch_glr::mask::{MaskCache, Masker, TokenMask};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_lexer::vocab::Vocabulary;
use munch_lexer::TokenId;

use super::{rss_now_mib, trace_texts};
use crate::peers::job::{Job, WorkerResult};
use crate::peers::trace::Session;

struct MunchSession<'a> {
    masker: &'a dyn Masker,
    vocab: &'a Vocabulary,
    cache: MaskCache,
    mask: TokenMask,
    state: ParserState,
}

impl Session for MunchSession<'_> {
    fn fill_mask(&mut self) -> Result<(), String> {
        self.masker
            .fill_mask(&mut self.cache, &self.state, &mut self.mask);
        Ok(())
    }

    fn allows(&self, token: u32) -> bool {
        (token as usize) < self.mask.len() && self.mask.contains(TokenId::from(token))
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.state
            .commit_token(self.vocab, TokenId::from(token))
            .map_err(|e| e.to_string())
    }

    fn is_accepting(&mut self) -> bool {
        self.state.is_accepting()
    }
}

pub(super) fn run(kind: &str, job: &Job, result: &mut WorkerResult) -> Result<(), String> {
    result.engine_version = format!("munch {}", env!("CARGO_PKG_VERSION"));
    result.settings = format!("masker {kind}; 1 thread");
    let started = Instant::now();
    let vocab = Arc::new(Vocabulary::load(&job.tokenizer).map_err(|e| e.to_string())?);
    result.prepare_s = started.elapsed().as_secs_f64();
    result.rss_before_build_mib = rss_now_mib();
    let started = Instant::now();
    let config = LoadConfig {
        file_name: format!("{}.lark", job.grammar),
        ..LoadConfig::default()
    };
    let grammar = lark::load(job.grammar_text.as_bytes(), &config).map_err(|e| e.to_string())?;
    let parser =
        Arc::new(Parser::new(&grammar, &ParserConfig::default()).map_err(|e| e.to_string())?);
    let built = munch::maskers::build(kind, &parser, &vocab).map_err(|e| e.to_string())?;
    result.build_s = started.elapsed().as_secs_f64();
    let masker = built.masker.as_ref();
    trace_texts(
        &job.texts,
        || {
            Ok(Box::new(MunchSession {
                masker,
                vocab: &vocab,
                cache: masker.create_cache(),
                mask: TokenMask::new(vocab.len()),
                state: ParserState::new(Arc::clone(&parser)),
            }))
        },
        result,
    )
}
