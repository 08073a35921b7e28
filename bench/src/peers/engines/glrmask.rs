//! glrmask through its crate: one `Constraint` for the grammar and vocabulary, one
//! `ConstraintState` per text.

use std::time::Instant;

use glrmask::{ConstraintState, Grammar, Vocab};

use super::{rss_now_mib, trace_texts};
use crate::peers::job::{GrammarKind, Job, VocabFile, WorkerResult};
use crate::peers::trace::Session;

/// The crate version this harness links.
pub(crate) const VERSION: &str = "0.5.0";

struct GlrSession<'a> {
    state: ConstraintState<'a>,
    mask: Vec<u32>,
}

impl Session for GlrSession<'_> {
    fn fill_mask(&mut self) -> Result<(), String> {
        self.state.fill_mask(&mut self.mask);
        Ok(())
    }

    fn allows(&self, token: u32) -> bool {
        self.mask
            .get(token as usize / 32)
            .is_some_and(|w| w >> (token % 32) & 1 == 1)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        if self.state.commit_token(token) {
            Ok(())
        } else {
            Err("glrmask refused the token".to_string())
        }
    }

    fn is_accepting(&mut self) -> bool {
        self.state.is_accepting()
    }
}

pub(super) fn run(job: &Job, vocab: &VocabFile, result: &mut WorkerResult) -> Result<(), String> {
    result.engine_version = format!("glrmask {VERSION} (crate)");
    result.settings = "mask strategy Auto; 1 thread (RAYON_NUM_THREADS=1)".to_string();
    let started = Instant::now();
    let entries: Vec<(u32, Vec<u8>)> = vocab
        .token_bytes()?
        .into_iter()
        .enumerate()
        .filter_map(|(id, b)| Some((id as u32, b?)))
        .collect();
    let vocab = Vocab::new(entries);
    result.prepare_s = started.elapsed().as_secs_f64();
    result.rss_before_build_mib = rss_now_mib();
    let started = Instant::now();
    let grammar = match job.grammar_kind {
        GrammarKind::Lark => Grammar::from_lark(&job.grammar_text),
        GrammarKind::JsonSchema => Grammar::from_json_schema(&job.grammar_text),
    }
    .map_err(|e| e.to_string())?;
    let constraint = grammar.compile(&vocab).map_err(|e| e.to_string())?;
    result.build_s = started.elapsed().as_secs_f64();
    let words = constraint.mask_len();
    trace_texts(
        &job.texts,
        || {
            Ok(Box::new(GlrSession {
                state: constraint.start(),
                mask: vec![0; words],
            }))
        },
        result,
    )
}
