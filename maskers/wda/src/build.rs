//! The offline pipeline: token spans → continuations and initial item sets → summaries and
//! weighted subset construction → minimisation → compact run-time tables.
//!
//! The construction reads the LR tables' quotient ([`ClassTables`]): lexemes' terminals as
//! their classes and LR states as theirs, which gives the same masks (the quotient is a
//! homomorphism of the tables) from fewer items and inputs: 8,000 keywords under `(…)*` are
//! one terminal and a few states, SynCode's Go grammar has 449 classes of its 604 states and 55
//! of its 87 terminals. The minimal automaton's edges are then listed for each member of a
//! class, so that the run-time tables read a stack's own states; the on-demand automaton maps
//! each node's state to its class as it reads it.
//!
//! The eager build charges what it holds to [`WdaConfig::max_memory`] at each stage: the token
//! spans, continuations and initial items throughout; the summaries, item sets, maps, weights
//! and automaton while determinising; the automaton twice over (and the partition's
//! signatures) before minimising; the run-time tables at the end. A build that would exceed the
//! budget stops with [`WdaBudget::Memory`] as soon as a charge exceeds it, and the tables a
//! built masker reports ([`WdaStats::heap_bytes`](crate::WdaStats::heap_bytes)) never exceed
//! it.

use std::sync::Arc;
use std::time::Instant;

use munch_glr::parser::Parser;
use munch_tokens::{ClassId, SpansBudget, SpansBuildError, SpansConfig, TokenClasses, TokenSpans};
use munch_vocab::Vocabulary;

use crate::bits::{Bits, Weight, Weights, EMPTY};
use crate::blocks::{partition, Blocks};
use crate::determinize::{determinize, Dfa, Exceeded, Limits};
use crate::dwa::Dwa;
use crate::error::{WdaBudget, WdaBuildError};
use crate::lexical::Lexical;
use crate::minimize::{minimize, undecided};
use crate::template::{item, Item, Templates, FIN, INIT, TERMINAL_LIMIT};
use crate::WdaConfig;
use munch_glr::lr::ClassTables;

/// The lexical side of a build, shared by the eager build and the on-demand automaton: token
/// spans, continuations, every start's initial items, and the weights so far.
///
/// Weights are sets of *lexical blocks*, not of token classes: every weight the construction
/// makes is a union or difference of the lexical weights (the initial items' and the
/// end-of-sequence pseudo-class's), so classes that belong to exactly the same lexical weights
/// are never told apart, and one bit stands for each such block (Go with Llama 3: 4,947
/// classes, about half as many blocks), which halves every union and intern of the
/// construction.
pub(crate) struct Prepared {
    /// The LR tables the automaton reads (their classes).
    pub(crate) lr: Arc<ClassTables>,
    pub(crate) spans: TokenSpans,
    pub(crate) lexical: Lexical,
    /// Per start (every lexer point, then end of sequence): its items and its classes decided
    /// outright, as block weights.
    pub(crate) initial: Vec<(Vec<(Item, Weight)>, Weight)>,
    /// Weights over lexical blocks: the initial ones interned.
    pub(crate) weights: Weights,
    /// Classes → lexical blocks (`u32::MAX`: in no weight, never allowed).
    pub(crate) lex_blocks: Blocks,
    /// Text-token classes; class `class_len` is end of sequence.
    pub(crate) class_len: usize,
}

impl Prepared {
    /// The heap bytes held from here to the end of either build: the spans, the LR classes,
    /// the continuations, every point's initial items and the blocks (the weights apart).
    pub(crate) fn held_bytes(&self) -> usize {
        let items = |v: &[(Vec<(Item, Weight)>, Weight)]| {
            v.len() * 32 + v.iter().map(|(i, _)| i.capacity() * 16).sum::<usize>()
        };
        self.spans.heap_bytes()
            + self.lr.heap_bytes()
            + self.lexical.conts.heap_bytes()
            + self.lexical.points.capacity() * std::mem::size_of::<munch_tokens::LexPoint>()
            + items(&self.lexical.initial)
            + items(&self.initial)
            + self.lex_blocks.block_of.capacity() * 4
    }
}

/// Token spans, continuations and initial item sets, over lexical blocks; the spans' build is
/// held to [`WdaConfig::max_memory`] too (both builds hold the spans to the end).
pub(crate) fn prepare(
    parser: &Arc<Parser>,
    vocab: &Vocabulary,
    config: &WdaConfig,
) -> Result<Prepared, WdaBuildError> {
    let lr = class_tables(parser)?;
    let t0 = Instant::now();
    let spans = build_spans(parser, &lr, vocab, config)?;
    if crate::determinize::debug() {
        eprintln!(
            "wda: token spans {:.3} s, {} bytes at most, {} kept",
            t0.elapsed().as_secs_f64(),
            spans.build_bytes(),
            spans.heap_bytes()
        );
    }
    let class_len = spans.classes().len();
    // At least one word per weight: with no classes at all (an empty vocabulary) a zero-word
    // interner could not tell its weights apart by position, and the tables expect one word.
    // Class `class_len` is end of sequence: a pseudo-class whose span is "the lexeme is empty
    // and the input ends", i.e. the control `($, FIN)`, read over the stack like any other.
    let eos_class = class_len;
    let mut weights = Weights::new((class_len + 1).div_ceil(64));
    let lexical =
        Lexical::build(&lr, &spans, &mut weights, config.max_continuations).map_err(|_| {
            WdaBuildError::budget(WdaBudget::Continuations, config.max_continuations as u64)
        })?;
    let mut eos_bits = Bits::new(weights.words());
    eos_bits.insert(eos_class);
    let eos_weight = weights.intern(eos_bits);
    // Every class set so far is lexical: refine the classes by them, and go on over blocks.
    let lex_blocks = partition(class_len + 1, weights.words(), weights.arena());
    let block_words = lex_blocks.len.div_ceil(64).max(1);
    let remapped = lex_blocks.remap(weights.words(), weights.arena());
    let mut bweights = Weights::new(block_words);
    let map: Vec<Weight> = remapped
        .chunks(block_words)
        .map(|w| bweights.intern_words(w))
        .collect();
    let mut initial: Vec<_> = lexical
        .initial
        .iter()
        .map(|(items, yes)| {
            let items = items.iter().map(|&(it, w)| (it, map[w as usize])).collect();
            (items, map[*yes as usize])
        })
        .collect();
    // The last start is end of sequence's, run from the heads whose lexeme is empty.
    initial.push((
        vec![(
            item(lr.tables().eof_index(), INIT, FIN),
            map[eos_weight as usize],
        )],
        EMPTY,
    ));
    Ok(Prepared {
        lr,
        spans,
        lexical,
        initial,
        weights: bweights,
        lex_blocks,
        class_len,
    })
}

/// The LR tables' quotient the automaton reads, if its terminals and codes fit the items.
pub(crate) fn class_tables(parser: &Arc<Parser>) -> Result<Arc<ClassTables>, WdaBuildError> {
    let lr = Arc::new(ClassTables::new(Arc::clone(parser)));
    // `$` is a terminal of the templates too (end of sequence is decided by the automaton).
    if lr.tables().eof_index() >= TERMINAL_LIMIT {
        return Err(WdaBuildError::too_large("terminals"));
    }
    if !Templates::codes_fit(lr.tables()) {
        return Err(WdaBuildError::too_large(
            "nonterminals × production lengths",
        ));
    }
    Ok(lr)
}

/// The token spans, their build held to [`SpansConfig::max_bytes`](munch_tokens::SpansConfig)
/// and to [`WdaConfig::max_memory`]: everything the build allocates is
/// charged before it is allocated, so a build past the lower of the two stops early with an
/// error naming it ([`WdaBudget::Memory`] when it is `max_memory`).
pub(crate) fn build_spans(
    parser: &Parser,
    lr: &ClassTables,
    vocab: &Vocabulary,
    config: &WdaConfig,
) -> Result<TokenSpans, WdaBuildError> {
    // Lexemes whose terminals are of the same classes are one: the construction reads classes.
    let key = |t| lr.lexeme_key(t);
    TokenSpans::build_keyed(parser.lexer(), vocab, &spans_config(config), &key)
        .map_err(|e| spans_error(config, e))
}

/// The token side's budgets, its memory held to [`WdaConfig::max_memory`] too.
pub(crate) fn spans_config(config: &WdaConfig) -> SpansConfig {
    let mut spans = config.spans.clone();
    spans.max_bytes = spans.max_bytes.min(config.max_memory);
    spans
}

/// A token-side build's error ([`spans_config`]'s budgets): [`WdaBudget::Memory`] where that
/// was the memory budget that bound.
pub(crate) fn spans_error(config: &WdaConfig, e: SpansBuildError) -> WdaBuildError {
    if config.max_memory <= config.spans.max_bytes && e.budget() == SpansBudget::Bytes {
        WdaBuildError::budget(WdaBudget::Memory, config.max_memory as u64)
    } else {
        WdaBuildError::spans(e)
    }
}

/// Per block (`block_of(class)` gives a class's block, if any, among `blocks`): the runs
/// `(mask word, bits)` of its members, and every token of some block — what the expansion is
/// derived from.
pub(crate) fn block_runs(
    classes: &TokenClasses,
    vocab_len: usize,
    blocks: usize,
    block_of: impl Fn(usize) -> Option<u32>,
) -> (Vec<u32>, Vec<(u32, u32)>, Vec<u32>) {
    let word_len = vocab_len.div_ceil(32);
    // Per block: its classes (each one's members ascending), block `b`'s at
    // `of_block[class_start[b]..class_start[b + 1]]`, and how many tokens they hold.
    let mut class_start = vec![0usize; blocks + 1];
    let mut sizes = vec![0usize; blocks];
    for c in 0..classes.len() {
        if let Some(b) = block_of(c) {
            class_start[b as usize + 1] += 1;
            sizes[b as usize] += classes.members(ClassId::from_usize(c)).len();
        }
    }
    for b in 0..blocks {
        class_start[b + 1] += class_start[b];
    }
    let mut of_block = vec![ClassId::default(); class_start[blocks]];
    let mut fill = class_start.clone();
    for c in 0..classes.len() {
        if let Some(b) = block_of(c) {
            of_block[fill[b as usize]] = ClassId::from_usize(c);
            fill[b as usize] += 1;
        }
    }
    let mut all = vec![0u32; word_len];
    let mut run_start = Vec::with_capacity(blocks + 1);
    let mut runs: Vec<(u32, u32)> = Vec::new();
    // A block's members in ascending order: a single class's as they are; a large block's
    // through a bitmap of the vocabulary (one pass over its words, cheaper than sorting a
    // block of most of the vocabulary); a small one's sorted.
    let mut bitmap: Vec<u32> = Vec::new();
    let mut scratch: Vec<u32> = Vec::new();
    for (b, &size) in sizes.iter().enumerate() {
        let block = &of_block[class_start[b]..class_start[b + 1]];
        run_start.push(runs.len() as u32);
        let first = runs.len();
        let mut push = |w: u32, bits: u32| {
            all[w as usize] |= bits;
            let own = runs.len() > first;
            match runs.last_mut() {
                Some((lw, b)) if own && *lw == w => *b |= bits,
                _ => runs.push((w, bits)),
            }
        };
        let members = |c: &ClassId| classes.members(*c).iter().map(|t| t.as_u32());
        if let [c] = block {
            for t in members(c) {
                push(t / 32, 1 << (t % 32));
            }
        } else if size.saturating_mul(8) >= word_len {
            bitmap.resize(word_len, 0);
            for t in block.iter().flat_map(members) {
                bitmap[(t / 32) as usize] |= 1 << (t % 32);
            }
            for (w, bits) in bitmap.iter_mut().enumerate() {
                if *bits != 0 {
                    push(w as u32, std::mem::take(bits));
                }
            }
        } else {
            scratch.clear();
            scratch.extend(block.iter().flat_map(members));
            scratch.sort_unstable();
            for &t in &scratch {
                push(t / 32, 1 << (t % 32));
            }
        }
    }
    run_start.push(runs.len() as u32);
    (run_start, runs, all)
}

/// Builds the tables; returns them and the build time in seconds.
#[allow(clippy::needless_range_loop)] // parallel per-state arrays
pub(crate) fn build(
    parser: &Arc<Parser>,
    vocab: &Vocabulary,
    config: &WdaConfig,
) -> Result<(Dwa, f64), WdaBuildError> {
    let t0 = Instant::now();
    let prepared = prepare(parser, vocab, config)?;
    // Held from here to the end.
    let held = prepared.held_bytes();
    let Prepared {
        lr,
        spans,
        lexical,
        initial,
        mut weights,
        lex_blocks,
        class_len,
    } = prepared;
    let eos_class = class_len;
    if crate::determinize::debug() {
        let items: Vec<usize> = lexical.initial.iter().map(|(i, _)| i.len()).collect();
        eprintln!(
            "wda: spans+lexical {:.2} s: {} classes in {} lexical blocks, {} spans, {} conts ({} bytes), {} weights, initial items total {} max {}",
            t0.elapsed().as_secs_f64(),
            class_len,
            lex_blocks.len,
            spans.span_len(),
            lexical.conts.len(),
            lexical.conts.heap_bytes(),
            weights.len(),
            items.iter().sum::<usize>(),
            items.iter().max().unwrap_or(&0)
        );
    }
    let memory = || WdaBuildError::budget(WdaBudget::Memory, config.max_memory as u64);
    let charge = |bytes: usize| {
        if bytes > config.max_memory {
            Err(memory())
        } else {
            Ok(())
        }
    };
    charge(held + weights.heap)?;
    let budget = |e: Exceeded| match e {
        Exceeded::States => WdaBuildError::budget(WdaBudget::States, config.max_states as u64),
        Exceeded::Edges => WdaBuildError::budget(WdaBudget::Edges, config.max_edges as u64),
        Exceeded::Memory => WdaBuildError::budget(WdaBudget::Memory, config.max_memory as u64),
    };
    let mut tpl = Templates::new(
        Arc::clone(&lr),
        Arc::clone(&lexical.conts),
        config.max_memory / 48,
    );
    charge(held + weights.heap + tpl.heap_bytes())?;
    let yes: Vec<u32> = initial.iter().map(|(_, yes)| *yes).collect();
    let (dfa, starts) = determinize(
        &mut tpl,
        &mut weights,
        initial,
        &Limits {
            max_states: config.max_states,
            max_edges: config.max_edges,
            max_heap: config.max_memory,
            held,
        },
    )
    .map_err(budget)?;
    let t_det = t0.elapsed().as_secs_f64();
    if crate::determinize::debug() {
        eprintln!(
            "wda: determinized at {t_det:.2} s: {} states, {} edges, summaries {:?}",
            dfa.state_len(),
            dfa.edge_len(),
            tpl.counts()
        );
    }
    drop(tpl);
    // Minimising holds the automaton, its partition's signatures (about its size again) and
    // the minimal automaton (at most its size).
    let dfa_bytes = Dfa::bytes_for(dfa.state_len(), dfa.edge_len());
    charge(held + weights.heap + dfa_bytes.saturating_mul(3))?;
    let (min, map) = minimize(&dfa);
    drop(dfa);
    // The automaton read classes of LR states: give each class's edges to its members.
    let min = match lr.members() {
        Some(members) => {
            let edges: usize = min
                .edges
                .iter()
                .flatten()
                .map(|&(x, _, _)| members[x as usize].len())
                .sum();
            charge(held + weights.heap + Dfa::bytes_for(min.state_len(), edges).saturating_mul(2))?;
            min.with_inputs(&members)
        }
        None => min,
    };
    let und = undecided(&min, &mut weights);
    if crate::determinize::debug() {
        eprintln!(
            "wda: minimized at {:.2} s: {} states",
            t0.elapsed().as_secs_f64(),
            min.state_len()
        );
    }

    // Keep only the weights the tables use, renumbered densely (0 stays empty).
    let mut renum: Vec<u32> = vec![u32::MAX; weights.len()];
    let mut kept: Vec<u32> = Vec::new();
    let mut keep = |w: u32, renum: &mut Vec<u32>| -> u32 {
        if renum[w as usize] == u32::MAX {
            renum[w as usize] = kept.len() as u32;
            kept.push(w);
        }
        renum[w as usize]
    };
    keep(EMPTY, &mut renum);
    let n = min.state_len();
    let mut default = Vec::with_capacity(n);
    let mut edge_start = Vec::with_capacity(n + 1);
    let mut edge_x = Vec::new();
    let mut edge_out = Vec::new();
    let mut undecided_w = Vec::with_capacity(n);
    for s in 0..n {
        let (dw, dt) = min.default[s];
        default.push((keep(dw, &mut renum), dt));
        edge_start.push(edge_x.len() as u32);
        for &(x, w, t) in &min.edges[s] {
            edge_x.push(x);
            edge_out.push((keep(w, &mut renum), t));
        }
        undecided_w.push(keep(und[s], &mut renum));
    }
    edge_start.push(edge_x.len() as u32);
    let lexer = parser.lexer();
    let none = (0u32, 0u32);
    let mut plain = vec![none; lexer.state_len()];
    let mut inhibited = vec![none; lexer.state_len()];
    for (i, point) in lexical.points.iter().enumerate() {
        let entry = (map[starts[i] as usize], keep(yes[i], &mut renum));
        match point.inhibitor {
            None => plain[point.state.as_usize()] = entry,
            Some(inh) => inhibited[inh.as_usize()] = entry,
        }
    }
    let words = weights.words();
    let arena = weights.into_arena();
    let mut flat = Vec::with_capacity(kept.len() * words);
    for &w in &kept {
        flat.extend_from_slice(&arena[w as usize * words..(w as usize + 1) * words]);
    }
    drop(arena);

    // The run-time tables work on blocks of lexical blocks the weights never tell apart.
    let blocks = partition(lex_blocks.len, words, &flat);
    let flat = blocks.remap(words, &flat);
    let block_words = blocks.len.div_ceil(64).max(1);
    let block_of = |c: usize| {
        let lb = lex_blocks.block_of[c];
        let b = blocks
            .block_of
            .get(lb as usize)
            .copied()
            .unwrap_or(u32::MAX);
        (b != u32::MAX).then_some(b)
    };
    let eos_block = block_of(eos_class).unwrap_or(u32::MAX);

    // The run-time tables so far, then the expansion's runs: per block, the mask words of its
    // members (at most one run per text token).
    let tables_bytes = (default.capacity() + edge_out.capacity() + plain.capacity()) * 8
        + inhibited.capacity() * 8
        + (edge_start.capacity() + edge_x.capacity() + undecided_w.capacity()) * 4
        + flat.capacity() * 8
        + blocks.block_of.capacity() * 4;
    let runs_bytes = vocab.len() * 8 + vocab.len().div_ceil(32) * 4 + (blocks.len + 1) * 4;
    charge(held + Dfa::bytes_for(min.state_len(), min.edge_len()) + tables_bytes + runs_bytes)?;
    drop(min);
    // Expansion: per block, the mask words of its members.
    let (run_start, runs, all) = block_runs(spans.classes(), vocab.len(), blocks.len, block_of);
    if crate::determinize::debug() {
        eprintln!(
            "wda: {} classes in {} blocks, {} runs",
            class_len,
            blocks.len,
            runs.len()
        );
    }

    let dwa = Dwa {
        class_len: blocks.len as u32,
        words: block_words as u32,
        token_classes: class_len as u32,
        weights: flat,
        default,
        edge_start,
        edge_x,
        edge_out,
        undecided: undecided_w,
        lex_start: lexer.start().as_u32(),
        eos: map[starts[lexical.points.len()] as usize],
        eos_block,
        plain,
        inhibited,
        vocab_len: vocab.len() as u32,
        run_start,
        runs,
        all,
        // The derived tables, made by `finish`.
        ..Dwa::default()
    }
    .finish();
    // The tables kept; what was charged before them was held with them.
    charge(held + dwa.heap_bytes())?;
    Ok((dwa, t0.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// `block_runs` against the runs read off each block's members in a sorted map, for
    /// blocks of one class, large blocks (read through the bitmap) and small ones (sorted).
    #[test]
    fn block_runs_are_each_blocks_members_by_word() {
        let parser = munch_testkit::grammar::parser(
            "start: (A | B | C | D)+\nA: /a+/\nB: /b[a-z]*/\nC: /[0-9]+/\nD: \" \"\n",
        );
        // 2,000 tokens (63 mask words): letters, digits and spaces in many combinations.
        let alphabet = [b'a', b'b', b'c', b'0', b'7', b' '];
        let tokens: Vec<Option<Vec<u8>>> = (1..=2000usize)
            .map(|mut n| {
                let mut t = Vec::new();
                while n > 0 {
                    t.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                Some(t)
            })
            .collect();
        let vocab = Vocabulary::from_token_bytes(tokens, Vec::new()).expect("vocabulary");
        let classes =
            TokenClasses::build(parser.lexer(), &vocab, &SpansConfig::default()).expect("classes");
        let len = classes.len();
        assert!(len >= 6, "only {len} classes");
        let largest = (0..len)
            .max_by_key(|&c| classes.members(ClassId::from_usize(c)).len())
            .expect("a class");
        // Block 0: the largest class with the next one (bitmap); block 1: the two smallest
        // classes but the last (sorted); every other class alone, the last in no block.
        let mut by_size: Vec<usize> = (0..len - 1).filter(|&c| c != largest).collect();
        by_size.sort_by_key(|&c| classes.members(ClassId::from_usize(c)).len());
        let (small_a, small_b) = (by_size[0], by_size[1]);
        let partner = by_size[by_size.len() - 1];
        let block_of = |c: usize| -> Option<u32> {
            if c == len - 1 && c != largest {
                None
            } else if c == largest || c == partner {
                Some(0)
            } else if c == small_a || c == small_b {
                Some(1)
            } else {
                Some(2 + c as u32)
            }
        };
        let blocks = 2 + len;
        let word_len = vocab.len().div_ceil(32);
        let big = classes.members(ClassId::from_usize(largest)).len()
            + classes.members(ClassId::from_usize(partner)).len();
        assert!(big * 8 >= word_len, "block 0 is not large");
        let small = classes.members(ClassId::from_usize(small_a)).len()
            + classes.members(ClassId::from_usize(small_b)).len();
        assert!(
            small * 8 < word_len,
            "block 1 is not small ({small} tokens)"
        );
        let (run_start, runs, all) = block_runs(&classes, vocab.len(), blocks, block_of);

        let mut expected_all = vec![0u32; word_len];
        for b in 0..blocks {
            let mut words: BTreeMap<u32, u32> = BTreeMap::new();
            for c in (0..len).filter(|&c| block_of(c) == Some(b as u32)) {
                for t in classes.members(ClassId::from_usize(c)) {
                    let t = t.as_u32();
                    *words.entry(t / 32).or_default() |= 1 << (t % 32);
                    expected_all[(t / 32) as usize] |= 1 << (t % 32);
                }
            }
            let got = &runs[run_start[b] as usize..run_start[b + 1] as usize];
            let expected: Vec<(u32, u32)> = words.into_iter().collect();
            assert_eq!(got, expected.as_slice(), "block {b}");
        }
        assert_eq!(all, expected_all);
    }
}
