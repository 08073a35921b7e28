//! The offline build: lexical spans → terminal spans → classification per LR state → tables
//! per (point, LR state).
//!
//! Every table the build holds, from the lexical spans' build (held to the lower of its own
//! budget and this one) to the last interned set, is charged to
//! [`SpannerConfig::max_table_bytes`] as it grows ([`Charge`]); tables whose size is known
//! beforehand are charged before they are allocated, and the simulator's arena is capped to the
//! bytes the budget allows. So a build whose tables would exceed the budget stops with an error
//! naming it while it holds about the budget, and [`SpannerStats::heap_bytes`] (a part of what
//! was charged) never exceeds it.

use std::sync::Arc;
use std::time::Instant;

use ahash::AHashMap;
use munch_glr::lr::{ClassTables, LrState};
use munch_glr::parser::Parser;
use munch_tokens::{ClassId, ClassSet, PointId, SpanId, SpansBudget, TokenSpans};
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
    // Everything below reads the tables' classes: states and terminals no run tells apart are
    // one (a keyword set's thousands of terminals and states are a handful).
    let lr = Arc::new(ClassTables::new(Arc::clone(&parser)));
    let tables = lr.tables();
    let lr_states = tables.state_len();

    progress(Progress::at("spans", 0, 1));
    // The spans' build is held to the lower of its own budget and the spanner's.
    let mut spans_config = config.spans.clone();
    let tables_bind = config.max_table_bytes <= spans_config.max_bytes;
    if tables_bind {
        spans_config.max_bytes = config.max_table_bytes;
    }
    // Lexemes whose terminals are of the same classes are one: the tables read classes.
    let key = |t| lr.lexeme_key(t);
    let spans = TokenSpans::build_keyed(p.lexer(), &vocab, &spans_config, &key).map_err(|e| {
        if tables_bind && e.budget() == SpansBudget::Bytes {
            SpannerBuildError::budget("max_table_bytes", config.max_table_bytes as u64)
        } else {
            SpannerBuildError {
                kind: SpannerBuildErrorKind::Spans(e),
            }
        }
    })?;
    // The spans' build held at most this at once, before what is charged from here.
    let mut charge = Charge {
        max: config.max_table_bytes,
        peak: spans.build_bytes(),
    };
    let spans_bytes = spans.heap_bytes();
    charge.check(spans_bytes)?;

    // Terminal spans of every lexical span.
    progress(Progress::at("terminal spans", 0, spans.span_len()));
    let tau_of_span_bytes = spans.span_len().saturating_mul(8);
    charge.check(spans_bytes.saturating_add(tau_of_span_bytes))?;
    let mut taus = Taus::new(p, &lr);
    // Per span: its terminal span, and those of its forks (the other readings of a token
    // whose bytes are read several ways until more bytes decide: more lexemes, then a pending
    // state), in `fork_taus[fork_tau_start[i]..fork_tau_start[i + 1]]`.
    let mut tau_of_span: Vec<u32> = Vec::with_capacity(spans.span_len());
    let mut fork_tau_start: Vec<u32> = Vec::with_capacity(spans.span_len() + 1);
    let mut fork_taus: Vec<u32> = Vec::new();
    fork_tau_start.push(0);
    let mut emitted: Vec<munch_lexer::LexState> = Vec::new();
    for i in 0..spans.span_len() {
        if i % 4096 == 0 {
            charge
                .check(spans_bytes + tau_of_span_bytes + fork_taus.len() * 4 + taus.heap_bytes())?;
        }
        let span = spans.span(SpanId::from_usize(i));
        tau_of_span.push(taus.of_span(p, span.emitted, span.end).unwrap_or(NONE));
        for fork in span.forks {
            emitted.clear();
            emitted.extend_from_slice(span.emitted);
            emitted.extend_from_slice(&fork.lexemes);
            if let Some(tau) = taus.of_span(p, &emitted, fork.state) {
                fork_taus.push(tau);
            }
        }
        fork_tau_start.push(fork_taus.len() as u32);
    }
    let tau_of_span_bytes = tau_of_span_bytes + fork_taus.len() * 4;
    // Held from here to the end: the spans, their terminal spans and the trie's preorder.
    let order = Preorder::new(&taus);
    let held = spans_bytes + tau_of_span_bytes + taus.heap_bytes() + order.heap_bytes();
    charge.check(held)?;

    // Classification: per LR state, inverted to per terminal span. The arena holds at most
    // the nodes the byte budget has room for.
    let byte_nodes = config.max_table_bytes.saturating_sub(held) / Sim::NODE_BYTES;
    let (sim_nodes, sim_budget) = if byte_nodes < config.max_sim_nodes {
        (
            byte_nodes,
            ("max_table_bytes", config.max_table_bytes as u64),
        )
    } else {
        (
            config.max_sim_nodes,
            ("max_sim_nodes", config.max_sim_nodes as u64),
        )
    };
    let lookaheads = tables.eof_index() as usize + 1;
    let always_heads = taus
        .taus
        .len()
        .saturating_mul(std::mem::size_of::<Vec<u32>>());
    charge.check(held + lr_states * 8 + lookaheads * 5 + always_heads)?;
    let mut sim = Sim::new(lr_states, sim_nodes);
    let mut memo = ShiftMemo::new(lookaheads);
    // (LR state, trie node) → whether every span below is always accepted, for the nodes the
    // bare stack gets through.
    let mut alive = Alive::new(&taus, &order.pre);
    let mut out = StateClasses::default();
    let mut always_states: Vec<Vec<u32>> = vec![Vec::new(); taus.taus.len()];
    let mut always_bytes = always_heads;
    let mut always_pairs = 0;
    for s in 0..lr_states {
        if s % 64 == 0 {
            progress(Progress::at("classify", s, lr_states));
        }
        let state = LrState::new(s).expect("tables index their states");
        classify_state(&mut sim, tables, &taus, state, &mut memo, &mut out)
            .map_err(|SimBudget| SpannerBuildError::budget(sim_budget.0, sim_budget.1))?;
        if sim.closures > config.max_closures {
            return Err(SpannerBuildError::budget(
                "max_closures",
                config.max_closures,
            ));
        }
        for &tau in &out.always {
            let row = &mut always_states[tau as usize];
            let before = row.capacity();
            row.push(s as u32);
            always_bytes += (row.capacity() - before) * 4;
        }
        always_pairs += out.always.len();
        alive.push(&out, &order.pre);
        charge.check(
            held + always_bytes
                + alive.heap_bytes()
                + sim.heap_bytes()
                + memo.heap_bytes()
                + out.heap_bytes(),
        )?;
    }
    let closures = sim.closures;
    drop(sim);
    drop(memo);
    // Held from here to the end, besides the tables below.
    let held = held + always_bytes + alive.heap_bytes();

    // Per LR state, the lookaheads with an action: a span whose first terminal has none there
    // is rejected by every stack.
    let act_words = lookaheads.div_ceil(64);
    debug_assert_eq!(act_words, taus.lookahead_words());
    let acts_bytes = lr_states.saturating_mul(act_words).saturating_mul(8);
    charge.check(held.saturating_add(acts_bytes))?;
    let held = held + acts_bytes;
    let mut acts = vec![0u64; lr_states * act_words];
    for (s, row) in acts.chunks_mut(act_words).enumerate() {
        let state = LrState::new(s).expect("tables index their states");
        tables.add_state_lookaheads(state, row);
    }

    // Per point: its trie, and per LR state the classes of its always-accepted spans.
    let classes = spans.classes();
    let class_len = classes.len();
    let words = class_len.div_ceil(64);
    let mut t = Tables {
        sets: Vec::new(),
        pool: Vec::new(),
        dense: Vec::new(),
        class_len,
        words,
    };
    let points = spans.points().len();
    let entry_bytes = points.saturating_mul(lr_states).saturating_mul(4);
    charge.check(held.saturating_add(entry_bytes))?;
    let held = held + entry_bytes;
    let mut entry_of = vec![0u32; points * lr_states];
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
            progress(Progress::at("tables", q, points));
        }
        let pid = PointId::from_usize(q);
        // The point's terminal spans with their classes, grouped by sorting.
        pairs.clear();
        for c in 0..class_len {
            let c = ClassId::from_usize(c);
            if let Some(span) = spans.span_of(pid, c) {
                // A class with forks is allowed if some reading is: it is in each one's span.
                let i = span.as_usize();
                let forks = &fork_taus[fork_tau_start[i] as usize..fork_tau_start[i + 1] as usize];
                for &tau in std::iter::once(&tau_of_span[i]).chain(forks) {
                    if tau != NONE {
                        pairs.push((tau, c));
                    }
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
        let scratch_bytes = pairs.capacity() * 8
            + pair_classes.capacity() * 4
            + local.capacity() * std::mem::size_of::<(u32, &[ClassId])>()
            + rows.iter().map(|r| r.capacity() * 4).sum::<usize>()
            + rows.capacity() * std::mem::size_of::<Vec<u32>>();
        let point_held = held + tries.heap_bytes() + scratch_bytes;
        charge.check(point_held + t.heap_bytes())?;
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
        let mut index_keys = 0;
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
                    let set = t.add_set(&scratch);
                    index.insert(row.clone(), set);
                    index_keys += row.len() * 4;
                    let index_bytes =
                        index.capacity() * std::mem::size_of::<(Vec<u32>, u32)>() + index_keys;
                    charge.check(point_held + t.heap_bytes() + index_bytes)?;
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
        + t.heap_bytes();
    // A part of what was charged; checked again so that the stats can never exceed the budget.
    charge.check(heap_bytes)?;
    // Every mask expands classes: their tables are part of the build, not the first mask.
    spans.shared_classes().prepare_expansion();
    let stats = SpannerStats {
        points,
        lr_states: p.lr_state_len(),
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
        peak_bytes: charge.peak,
        build_s: started.elapsed().as_secs_f64(),
    };
    Ok(SpannerMasker {
        indent: munch_glr::mask::IndentFix::new(&parser).map(Arc::new),
        lr,
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

/// The bytes a build holds, charged to [`SpannerConfig::max_table_bytes`] at each step.
struct Charge {
    max: usize,
    /// The most bytes charged at once so far.
    peak: usize,
}

impl Charge {
    /// Records that the build holds (or is about to allocate up to) `bytes` in all; an error
    /// naming the budget if that is more than it allows.
    fn check(&mut self, bytes: usize) -> Result<(), SpannerBuildError> {
        self.peak = self.peak.max(bytes);
        if bytes > self.max {
            return Err(SpannerBuildError::budget(
                "max_table_bytes",
                self.max as u64,
            ));
        }
        Ok(())
    }
}

/// The always-accepted sets being interned.
struct Tables {
    sets: Vec<ClassList>,
    pool: Vec<ClassId>,
    dense: Vec<ClassSet>,
    class_len: usize,
    /// Words of a class bitset.
    words: usize,
}

impl Tables {
    fn heap_bytes(&self) -> usize {
        self.sets.capacity() * std::mem::size_of::<ClassList>()
            + self.pool.capacity() * 4
            + self.dense.capacity() * std::mem::size_of::<ClassSet>()
            + self.dense.len() * self.words * 8
    }

    /// Stores `set` as a list or a bitset, whichever is smaller; returns its index in `sets`.
    fn add_set(&mut self, set: &ClassSet) -> u32 {
        let count = set.count();
        let list = if count * 4 <= self.words * 8 {
            let lo = self.pool.len() as u32;
            self.pool.extend(set.iter());
            ClassList::Sparse {
                lo,
                hi: self.pool.len() as u32,
            }
        } else {
            debug_assert_eq!(set.len(), self.class_len);
            self.dense.push(set.clone());
            ClassList::Dense((self.dense.len() - 1) as u32)
        };
        self.sets.push(list);
        (self.sets.len() - 1) as u32
    }
}
