//! The offline pipeline: token spans → continuations and initial item sets → summaries and
//! weighted subset construction → minimisation → compact run-time tables.

use std::time::Instant;

use munch_glr::parser::Parser;
use munch_tokens::{ClassId, TokenSpans};
use munch_vocab::Vocabulary;

use crate::bits::{Bits, Weights, EMPTY};
use crate::blocks::partition;
use crate::determinize::{determinize, Exceeded, Limits};
use crate::dwa::Dwa;
use crate::error::{WdaBudget, WdaBuildError};
use crate::lexical::Lexical;
use crate::minimize::{minimize, undecided};
use crate::template::{item, Templates, FIN, INIT, TERMINAL_LIMIT};
use crate::WdaConfig;

/// Builds the tables; returns them and the build time in seconds.
#[allow(clippy::needless_range_loop)] // parallel per-state arrays
pub(crate) fn build(
    parser: &Parser,
    vocab: &Vocabulary,
    config: &WdaConfig,
) -> Result<(Dwa, f64), WdaBuildError> {
    let t0 = Instant::now();
    // `$` is a terminal of the templates too (end of sequence is decided by the automaton).
    if parser.terminal_len() >= TERMINAL_LIMIT as usize
        || parser.tables().eof_index() >= TERMINAL_LIMIT
    {
        return Err(WdaBuildError::too_large("terminals"));
    }
    if !Templates::codes_fit(parser.tables()) {
        return Err(WdaBuildError::too_large(
            "nonterminals × production lengths",
        ));
    }
    let spans =
        TokenSpans::build(parser.lexer(), vocab, &config.spans).map_err(WdaBuildError::spans)?;
    let class_len = spans.classes().len();
    // At least one word per weight: with no classes at all (an empty vocabulary) a zero-word
    // interner could not tell its weights apart by position, and the tables expect one word.
    // Class `class_len` is end of sequence: a pseudo-class whose span is "the lexeme is empty
    // and the input ends", i.e. the control `($, FIN)`, read over the stack like any other.
    let eos_class = class_len;
    let mut weights = Weights::new((class_len + 1).div_ceil(64));
    let lexical =
        Lexical::build(parser, &spans, &mut weights, config.max_continuations).map_err(|_| {
            WdaBuildError::budget(WdaBudget::Continuations, config.max_continuations as u64)
        })?;
    if crate::determinize::debug() {
        let items: Vec<usize> = lexical.initial.iter().map(|(i, _)| i.len()).collect();
        eprintln!(
            "wda: spans+lexical {:.2} s: {} classes, {} spans, {} conts ({} bytes), {} weights, initial items total {} max {}",
            t0.elapsed().as_secs_f64(),
            class_len,
            spans.span_len(),
            lexical.conts.len(),
            lexical.conts.heap_bytes(),
            weights.len(),
            items.iter().sum::<usize>(),
            items.iter().max().unwrap_or(&0)
        );
    }
    let budget = |e: Exceeded| match e {
        Exceeded::States => WdaBuildError::budget(WdaBudget::States, config.max_states as u64),
        Exceeded::Edges => WdaBuildError::budget(WdaBudget::Edges, config.max_edges as u64),
        Exceeded::Memory => WdaBuildError::budget(WdaBudget::Memory, config.max_memory as u64),
    };
    let mut tpl = Templates::new(parser.tables(), &lexical.conts, config.max_memory / 48);
    let mut initial: Vec<_> = lexical
        .initial
        .iter()
        .map(|(items, yes)| (items.clone(), *yes))
        .collect();
    // The last start is end of sequence's, run from the heads whose lexeme is empty.
    let mut eos_bits = Bits::new(weights.words());
    eos_bits.insert(eos_class);
    let eos_weight = weights.intern(eos_bits);
    initial.push((
        vec![(item(parser.tables().eof_index(), INIT, FIN), eos_weight)],
        EMPTY,
    ));
    let yes: Vec<u32> = lexical.initial.iter().map(|(_, yes)| *yes).collect();
    let (dfa, starts) = determinize(
        &mut tpl,
        &mut weights,
        initial,
        &Limits {
            max_states: config.max_states,
            max_edges: config.max_edges,
            max_heap: config.max_memory,
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
    let (min, map) = minimize(&dfa);
    drop(dfa);
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

    // The run-time tables work on blocks of classes the weights never tell apart.
    let blocks = partition(class_len + 1, words, &flat);
    let flat = blocks.remap(words, &flat);
    let block_words = blocks.len.div_ceil(64).max(1);

    // Expansion: per block, the mask words of its members.
    let classes = spans.classes();
    let word_len = vocab.len().div_ceil(32);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); blocks.len];
    for c in 0..class_len {
        let b = blocks.block_of[c];
        if b != u32::MAX {
            members[b as usize].extend(
                classes
                    .members(ClassId::from_usize(c))
                    .iter()
                    .map(|t| t.as_u32()),
            );
        }
    }
    let mut all = vec![0u32; word_len];
    let mut run_start = Vec::with_capacity(blocks.len + 1);
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for m in &mut members {
        m.sort_unstable();
        run_start.push(runs.len() as u32);
        let first = runs.len();
        for &t in m.iter() {
            let (w, bit) = (t / 32, 1u32 << (t % 32));
            all[w as usize] |= bit;
            let own = runs.len() > first;
            match runs.last_mut() {
                Some((lw, bits)) if own && *lw == w => *bits |= bit,
                _ => runs.push((w, bit)),
            }
        }
    }
    run_start.push(runs.len() as u32);
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
        eos_block: blocks.block_of[eos_class],
        plain,
        inhibited,
        vocab_len: vocab.len() as u32,
        run_start,
        runs,
        all,
        expansion: Default::default(),
        packed: Vec::new(),
        plain_off: Vec::new(),
        inhibited_off: Vec::new(),
        eos_off: 0,
    }
    .finish();
    Ok((dwa, t0.elapsed().as_secs_f64()))
}
