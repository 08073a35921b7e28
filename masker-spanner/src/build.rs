//! The offline build: lexical spans → terminal spans → classification per LR state → tables
//! per (point, LR state).

use std::sync::Arc;
use std::time::Instant;

use ahash::AHashMap;
use munch_glr::lr::LrState;
use munch_glr::parser::Parser;
use munch_lexer::spans::{ClassId, ClassSet, PointId, SpanId, TokenSpans};
use munch_lexer::vocab::Vocabulary;

use crate::classify::{classify_state, Class};
use crate::sim::{Preds, Sim, SimBudget};
use crate::tau::Taus;
use crate::{
    ClassList, Entry, Progress, SpannerBuildError, SpannerBuildErrorKind, SpannerConfig,
    SpannerMasker, SpannerStats,
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

    // Classification: per LR state, then inverted to per terminal span.
    let preds = Preds::new(tables);
    let mut sim = Sim::new(tables, &preds, config.max_sim_nodes);
    let lookaheads = tables.eof_index() as usize + 1;
    let mut by_tau: Vec<Vec<(u32, Class)>> = vec![Vec::new(); taus.taus.len()];
    let mut out = Vec::new();
    let (mut always_pairs, mut depends_pairs) = (0, 0);
    for s in 0..lr_states {
        if s % 64 == 0 {
            progress(Progress {
                stage: "classify",
                done: s,
                total: lr_states,
            });
        }
        out.clear();
        let state = LrState::new(s).expect("tables index their states");
        classify_state(&mut sim, &taus, state, lookaheads, &mut out).map_err(|SimBudget| {
            SpannerBuildError::budget("max_sim_nodes", config.max_sim_nodes as u64)
        })?;
        if sim.closures > config.max_closures {
            return Err(SpannerBuildError::budget(
                "max_closures",
                config.max_closures,
            ));
        }
        for &(tau, class) in &out {
            by_tau[tau as usize].push((s as u32, class));
            match class {
                Class::Always => always_pairs += 1,
                Class::Depends => depends_pairs += 1,
            }
        }
    }
    let closures = sim.closures;
    drop(sim);

    // Tables per (point, LR state).
    let classes = spans.classes();
    let class_len = classes.len();
    let words = class_len.div_ceil(64);
    let mut t = Tables {
        entries: vec![Entry {
            always: ClassList::Sparse { lo: 0, hi: 0 },
            depends_lo: 0,
            depends_hi: 0,
        }],
        depends: Vec::new(),
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
    // Per terminal span: its index in the current point's list (stamped by point).
    let mut local_of: Vec<(u32, u32)> = vec![(NONE, 0); taus.taus.len()];
    let mut rows: Vec<Vec<(u32, Class)>> = vec![Vec::new(); lr_states];
    let mut touched: Vec<u32> = Vec::new();
    let (mut table_entries, mut always_sets) = (0, 0);
    for q in 0..points {
        if q % 16 == 0 {
            progress(Progress {
                stage: "tables",
                done: q,
                total: points,
            });
        }
        let pid = PointId::from_usize(q);
        // The point's terminal spans with their classes.
        let mut local: Vec<(u32, Vec<ClassId>)> = Vec::new();
        for c in 0..class_len {
            let c = ClassId::from_usize(c);
            let Some(span) = spans.span_of(pid, c) else {
                continue;
            };
            let tau = tau_of_span[span.as_usize()];
            if tau == NONE {
                continue;
            }
            let (stamp, i) = local_of[tau as usize];
            let i = if stamp == q as u32 {
                i
            } else {
                local.push((tau, Vec::new()));
                let i = (local.len() - 1) as u32;
                local_of[tau as usize] = (q as u32, i);
                i
            };
            local[i as usize].1.push(c);
        }
        // Rows per LR state: `(local index, class)`, local indices ascending.
        for (i, (tau, _)) in local.iter().enumerate() {
            for &(s, class) in &by_tau[*tau as usize] {
                let row = &mut rows[s as usize];
                if row.is_empty() {
                    touched.push(s);
                }
                row.push((i as u32, class));
            }
        }
        let mut always_index: AHashMap<Vec<u32>, ClassList> = AHashMap::new();
        let mut entry_index: AHashMap<(Vec<u32>, Vec<u32>), u32> = AHashMap::new();
        let mut local_list: Vec<Option<ClassList>> = vec![None; local.len()];
        let mut scratch = ClassSet::new(class_len);
        for &s in &touched {
            let row = std::mem::take(&mut rows[s as usize]);
            let always: Vec<u32> = row
                .iter()
                .filter(|r| r.1 == Class::Always)
                .map(|r| r.0)
                .collect();
            let depends: Vec<u32> = row
                .iter()
                .filter(|r| r.1 == Class::Depends)
                .map(|r| r.0)
                .collect();
            rows[s as usize] = row;
            rows[s as usize].clear();
            let key = (always, depends);
            let e = match entry_index.get(&key) {
                Some(&e) => e,
                None => {
                    let list = match always_index.get(&key.0) {
                        Some(&list) => list,
                        None => {
                            scratch.clear();
                            for &i in &key.0 {
                                for &c in &local[i as usize].1 {
                                    scratch.insert(c);
                                }
                            }
                            let list = t.add_set(&scratch, words)?;
                            always_index.insert(key.0.clone(), list);
                            always_sets += 1;
                            list
                        }
                    };
                    let lo = t.depends.len() as u32;
                    for &i in &key.1 {
                        let l = match local_list[i as usize] {
                            Some(l) => l,
                            None => {
                                scratch.clear();
                                for &c in &local[i as usize].1 {
                                    scratch.insert(c);
                                }
                                let l = t.add_set(&scratch, words)?;
                                local_list[i as usize] = Some(l);
                                l
                            }
                        };
                        t.depends.push((local[i as usize].0, l));
                    }
                    t.bytes += key.1.len() * 12 + 16;
                    t.check()?;
                    t.entries.push(Entry {
                        always: list,
                        depends_lo: lo,
                        depends_hi: t.depends.len() as u32,
                    });
                    let e = (t.entries.len() - 1) as u32;
                    entry_index.insert(key, e);
                    e
                }
            };
            entry_of[q * lr_states + s as usize] = e;
            table_entries += 1;
        }
        touched.clear();
    }

    let heap_bytes = spans.heap_bytes()
        + taus.heap_bytes()
        + entry_of.capacity() * 4
        + t.entries.capacity() * std::mem::size_of::<Entry>()
        + t.depends.capacity() * std::mem::size_of::<(u32, ClassList)>()
        + t.pool.capacity() * 4
        + t.dense.len() * words * 8;
    let stats = SpannerStats {
        points,
        lr_states,
        token_classes: class_len,
        realisable_spans: spans.span_len(),
        terminal_spans: taus.taus.len(),
        always_pairs,
        depends_pairs,
        table_entries,
        always_sets,
        depends_items: t.depends.len(),
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
        entry_of,
        entries: t.entries,
        depends: t.depends,
        pool: t.pool,
        dense: t.dense,
        stats,
    })
}

/// The tables being filled, with their byte budget.
struct Tables {
    entries: Vec<Entry>,
    depends: Vec<(u32, ClassList)>,
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

    /// Stores `set` as a list or a bitset, whichever is smaller.
    fn add_set(&mut self, set: &ClassSet, words: usize) -> Result<ClassList, SpannerBuildError> {
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
        self.check()?;
        Ok(list)
    }
}
