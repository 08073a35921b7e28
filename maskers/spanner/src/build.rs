//! The offline build: lexical spans → terminal spans → classification per LR state → tables
//! per (point, LR state).

use std::sync::Arc;
use std::time::Instant;

use ahash::AHashMap;
use munch_glr::lr::LrState;
use munch_glr::parser::Parser;
use munch_tokens::{ClassId, ClassSet, PointId, SpanId, TokenSpans};
use munch_vocab::Vocabulary;

use crate::classify::{classify_state, Alive, ShiftMemo, StateClasses};
use crate::points::{PointScratch, PointTries, Preorder};
use crate::sim::{Sim, SimBudget};
use crate::tau::Taus;
use crate::{
    ClassList, Progress, SpannerBuildError, SpannerBuildErrorKind, SpannerConfig, SpannerMasker,
    SpannerStats,
};

const NONE: u32 = u32::MAX;

pub(crate) fn build(
    parser: Arc<Parser>,
    vocab: Arc<Vocabulary>,
    config: &SpannerConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<SpannerMasker, SpannerBuildError> {
    let started = Instant::now();
    let p = &*parser;
    let tables = p.tables();
    let lr_states = tables.state_len();

    progress(Progress {
        stage: "spans",
        done: 0,
        total: 1,
    });
    let spans =
        TokenSpans::build(p.lexer(), &vocab, &config.spans).map_err(|e| SpannerBuildError {
            kind: SpannerBuildErrorKind::Spans(e),
        })?;

    // Terminal spans of every lexical span.
    progress(Progress {
        stage: "terminal spans",
        done: 0,
        total: spans.span_len(),
    });
    let mut taus = Taus::new(p);
    let tau_of_span: Vec<u32> = (0..spans.span_len())
        .map(|i| {
            let span = spans.span(SpanId::from_usize(i));
            taus.of_span(p, span.emitted, span.end).unwrap_or(NONE)
        })
        .collect();

    // Classification: per LR state, inverted to per terminal span.
    let mut sim = Sim::new(lr_states, config.max_sim_nodes);
    let lookaheads = tables.eof_index() as usize + 1;
    let mut memo = ShiftMemo::new(lookaheads);
    // (LR state, trie node) → whether every span below is always accepted, for the nodes the
    // bare stack gets through.
    let order = Preorder::new(&taus);
    let mut alive = Alive::new(&taus, &order.pre);
    let mut out = StateClasses::default();
    let mut always_states: Vec<Vec<u32>> = vec![Vec::new(); taus.taus.len()];
    let mut always_pairs = 0;
    for s in 0..lr_states {
        if s % 64 == 0 {
            progress(Progress {
                stage: "classify",
                done: s,
                total: lr_states,
            });
        }
        let state = LrState::new(s).expect("tables index their states");
        classify_state(&mut sim, tables, &taus, state, &mut memo, &mut out).map_err(
            |SimBudget| SpannerBuildError::budget("max_sim_nodes", config.max_sim_nodes as u64),
        )?;
        if sim.closures > config.max_closures {
            return Err(SpannerBuildError::budget(
                "max_closures",
                config.max_closures,
            ));
        }
        for &tau in &out.always {
            always_states[tau as usize].push(s as u32);
        }
        always_pairs += out.always.len();
        alive.push(&out, &order.pre);
    }
    let closures = sim.closures;
    drop(sim);

    // Per LR state, the lookaheads with an action: a span whose first terminal has none there
    // is rejected by every stack.
    let act_words = lookaheads.div_ceil(64);
    debug_assert_eq!(act_words, taus.lookahead_words());
    let mut acts = vec![0u64; lr_states * act_words];
    for s in 0..lr_states {
        let state = LrState::new(s).expect("tables index their states");
        for (k, _) in tables.state_actions(state) {
            let k = k as usize;
            acts[s * act_words + k / 64] |= 1 << (k % 64);
        }
    }

    // Per point: its trie, and per LR state the classes of its always-accepted spans.
    let classes = spans.classes();
    let class_len = classes.len();
    let words = class_len.div_ceil(64);
    let mut t = Tables {
        sets: Vec::new(),
        tries_bytes: 0,
        pool: Vec::new(),
        dense: Vec::new(),
        class_len,
        bytes: 0,
        max_bytes: config.max_table_bytes,
    };
    let points = spans.points().len();
    let mut entry_of = vec![0u32; points * lr_states];
    t.bytes += entry_of.len() * 4;
    t.check()?;
    let mut tries = PointTries::default();
    let mut point_scratch = PointScratch::default();
    let mut pairs: Vec<(u32, ClassId)> = Vec::new();
    let mut pair_classes: Vec<ClassId> = Vec::new();
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); lr_states];
    let mut touched: Vec<u32> = Vec::new();
    let mut table_entries = 0;
    let mut scratch = ClassSet::new(class_len);
    for q in 0..points {
        if q % 16 == 0 {
            progress(Progress {
                stage: "tables",
                done: q,
                total: points,
            });
        }
        let pid = PointId::from_usize(q);
        // The point's terminal spans with their classes, grouped by sorting.
        pairs.clear();
        for c in 0..class_len {
            let c = ClassId::from_usize(c);
            if let Some(span) = spans.span_of(pid, c) {
                let tau = tau_of_span[span.as_usize()];
                if tau != NONE {
                    pairs.push((tau, c));
                }
            }
        }
        pairs.sort_unstable();
        pair_classes.clear();
        pair_classes.extend(pairs.iter().map(|p| p.1));
        let mut local: Vec<(u32, &[ClassId])> = Vec::new();
        let mut at = 0;
        while at < pairs.len() {
            let tau = pairs[at].0;
            let mut end = at + 1;
            while end < pairs.len() && pairs[end].0 == tau {
                end += 1;
            }
            local.push((tau, &pair_classes[at..end]));
            at = end;
        }
        tries.push_point(&taus, &order, &local, &mut point_scratch);
        t.bytes = t
            .bytes
            .saturating_add(tries.heap_bytes().saturating_sub(t.tries_bytes));
        t.tries_bytes = tries.heap_bytes();
        // Per LR state: the point's always-accepted spans (local indices, ascending).
        for (i, (tau, _)) in local.iter().enumerate() {
            for &s in &always_states[*tau as usize] {
                let row = &mut rows[s as usize];
                if row.is_empty() {
                    touched.push(s);
                }
                row.push(i as u32);
            }
        }
        let mut index: AHashMap<Vec<u32>, u32> = AHashMap::new();
        for &s in &touched {
            let row = std::mem::take(&mut rows[s as usize]);
            let set = match index.get(&row) {
                Some(&set) => set,
                None => {
                    scratch.clear();
                    for &i in &row {
                        for &c in local[i as usize].1 {
                            scratch.insert(c);
                        }
                    }
                    let set = t.add_set(&scratch, words)?;
                    index.insert(row.clone(), set);
                    set
                }
            };
            rows[s as usize] = row;
            rows[s as usize].clear();
            entry_of[q * lr_states + s as usize] = set + 1;
            table_entries += 1;
        }
        touched.clear();
    }

    let state_bytes = alive.heap_bytes();
    let heap_bytes = spans.heap_bytes()
        + taus.heap_bytes()
        + tries.heap_bytes()
        + state_bytes
        + acts.capacity() * 8
        + entry_of.capacity() * 4
        + t.sets.capacity() * std::mem::size_of::<ClassList>()
        + t.pool.capacity() * 4
        + t.dense.len() * words * 8;
    let stats = SpannerStats {
        points,
        lr_states,
        token_classes: class_len,
        realisable_spans: spans.span_len(),
        terminal_spans: taus.taus.len(),
        trie_nodes: taus.nodes.len(),
        point_trie_nodes: tries.nodes.len(),
        always_pairs,
        table_entries,
        always_sets: t.sets.len(),
        closures,
        heap_bytes,
        build_s: started.elapsed().as_secs_f64(),
    };
    Ok(SpannerMasker {
        parser,
        vocab,
        spans,
        taus,
        lr_states,
        tries,
        alive,
        act_words,
        acts,
        entry_of,
        sets: t.sets,
        pool: t.pool,
        dense: t.dense,
        stats,
    })
}

/// The tables being filled, with their byte budget.
struct Tables {
    sets: Vec<ClassList>,
    tries_bytes: usize,
    pool: Vec<ClassId>,
    dense: Vec<ClassSet>,
    class_len: usize,
    bytes: usize,
    max_bytes: usize,
}

impl Tables {
    fn check(&self) -> Result<(), SpannerBuildError> {
        if self.bytes > self.max_bytes {
            return Err(SpannerBuildError::budget(
                "max_table_bytes",
                self.max_bytes as u64,
            ));
        }
        Ok(())
    }

    /// Stores `set` as a list or a bitset, whichever is smaller; returns its index in `sets`.
    fn add_set(&mut self, set: &ClassSet, words: usize) -> Result<u32, SpannerBuildError> {
        let count = set.count();
        let list = if count * 4 <= words * 8 {
            let lo = self.pool.len() as u32;
            self.pool.extend(set.iter());
            self.bytes += count * 4;
            ClassList::Sparse {
                lo,
                hi: self.pool.len() as u32,
            }
        } else {
            debug_assert_eq!(set.len(), self.class_len);
            self.dense.push(set.clone());
            self.bytes += words * 8;
            ClassList::Dense((self.dense.len() - 1) as u32)
        };
        self.sets.push(list);
        self.bytes += std::mem::size_of::<ClassList>();
        self.check()?;
        Ok((self.sets.len() - 1) as u32)
    }
}
