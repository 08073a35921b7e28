//! # munch-masker-wda
//!
//! The weighted-automaton masker: one deterministic automaton, compiled offline from the LR
//! tables and the vocabulary, reads the parser's stack from the top and outputs the allowed
//! token classes. At mask time nothing is parsed and the vocabulary is never looped over: a
//! mask is one table step per GSS node read (usually one to three nodes), unions of class sets,
//! and the expansion of the final set into mask words.
//!
//! ## Contents
//!
//! - [`WdaMasker`]: build ([`WdaMasker::new`]), save and load ([`WdaMasker::save`],
//!   [`WdaMasker::load`]), and the [`Masker`] implementation (`fill_mask` equals
//!   [`munch_glr::mask::Oracle`]).
//! - [`LazyWdaMasker`]: the same automaton determinised on demand — the token classes up
//!   front (tens of milliseconds for a programming language), a lexer point's spans and items
//!   the first time a mask starts there, each state and transition the first time a mask reads
//!   it, in a cache shared by threads with a capacity, a clear count and a
//!   fallback masker for when it thrashes ([`LazyStats`]). Same masks; no artifact.
//! - [`WdaConfig`]: the build's budgets; [`WdaBuildError`] names the one exceeded, and the engine
//!   falls back to another masker. [`WdaLoadError`] says why an artifact was refused.
//! - [`WdaStats`]: the automaton's size and build time.
//!
//! ## Example
//!
//! ```
//! use std::sync::Arc;
//! use munch_glr::lark::{load, LoadConfig};
//! use munch_glr::mask::{Masker, Oracle};
//! use munch_glr::parser::{Parser, ParserConfig, ParserState};
//! use munch_vocab::Vocabulary;
//! use munch_masker_wda::{WdaConfig, WdaMasker};
//!
//! let grammar = load(b"start: \"[\" (NUM (\",\" NUM)*)? \"]\"\nNUM: /[0-9]+/\n", &LoadConfig::default())?;
//! let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default())?);
//! let tokens = ["[", "]", ",", "1", "23", "[1", "1,", "],", "x"];
//! let vocab = Arc::new(Vocabulary::from_token_bytes(
//!     tokens.iter().map(|t| Some(t.as_bytes().to_vec())).collect(),
//!     vec![],
//! )?);
//! let wda = WdaMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &WdaConfig::default())?;
//! let mut state = ParserState::new(Arc::clone(&parser));
//! state.commit_bytes(b"[1")?;
//! let mask = wda.mask(&mut wda.create_cache(), &state);
//! let oracle = Oracle::new(Arc::clone(&vocab));
//! assert_eq!(mask, oracle.mask(&mut oracle.create_cache(), &state));
//! // "1," continues the number and opens the next one; "[" cannot come here.
//! assert!(mask.iter().any(|t| vocab.token_bytes(t) == Some(b"1,")));
//! assert!(!mask.iter().any(|t| vocab.token_bytes(t) == Some(b"[")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## How it is built
//!
//! It is the PSC idea — one classifier of the parser stack for all tokens — built the
//! weighted-automata way:
//!
//! 1. **Terminal side** (`lexical`): [`TokenSpans`](munch_tokens::TokenSpans) gives, per
//!    lexer point, the span every token class realises (lexemes completed inside the token and
//!    the open lexeme). Spans become chains of *continuations* (what may follow a terminal
//!    inside the token); each point's spans become its initial weighted item set, weights
//!    being class sets.
//! 2. **Templates** (`template`): per terminal and LR state, the summary of every GLR run that
//!    takes the terminal — reductions read top-down as *exits* (pop `r` more, then goto on
//!    `A`), conflicts included — as the least fixpoint of a finite monotone system, which is
//!    exact for right recursion, unit cycles, ε-rules and hidden left recursion. The run before
//!    the terminal's shift is summarised per terminal; what the continuation does after it,
//!    per continuation and pushed state.
//! 3. **Parser DWA** (`determinize`, `minimize`): the weighted subset construction over exits,
//!    with interned weights and sparse transitions (a default per state), computed only for
//!    inputs a GSS can give; Moore minimisation; per state the classes still undecided, so that
//!    the run stops reading as soon as they are all in the mask.
//! 4. **Run** (`dwa`): a search over (automaton state, GSS node) pairs from every head, union of
//!    outputs over *blocks* (classes the automaton never tells apart), expansion to mask words by
//!    `munch_tokens`' engine ([`munch_tokens::Expander`], the one every masker uses, built over the
//!    blocks when the automaton is built or loaded). End of sequence is a pseudo-class read the
//!    same way: the control `($, FIN)` started from every head whose lexeme is empty, taken by the
//!    LR tables' accept action, so no parser reduction is simulated at mask time.
//!
//! ## Why the masks are exact
//!
//! For one head `(node, lexer point)`, a token is allowed iff its span's lexemes can be taken
//! by the GLR parser from some stack below the node and the open lexeme can then still complete
//! a terminal the stack can shift (or an ignored one): that is what `commit` followed by the
//! liveness test does, and the mask is the union over heads. The summaries are the exact least
//! solution of the equations of every parser run (every table action, no bound on chain
//! length); a state of the automaton is the exact set of pending exits with the classes riding
//! on them, so a path's output is exactly the classes for which some run on that stack
//! succeeds, and the union over the GSS's paths is the head's answer. Pruning only ever drops
//! what cannot succeed (a continuation's terminal that no state after the previous shift has
//! an action on; inputs no GSS path can give), minimisation keeps the output of every input,
//! and blocks merge only classes every weight treats alike. End of sequence is the same
//! argument for the span "empty lexeme, then `$`": the templates take `$` through the LR
//! tables' reductions under `$` and their accept action, which is what
//! `ParserState::is_accepting` simulates on each head whose lexeme is empty. The module docs
//! hold the details; the tests check `fill_mask` against the oracle at every step of synthetic
//! grammars, of random grammars, and against the trie masker on real files.
//!
//! One difference in principle: `commit` can also fail on its own budgets (`max_heads`,
//! `max_nodes_per_step`), which the oracle then reports as a refused token; the automaton knows
//! nothing of those budgets (they do not bind on ordinary inputs).

// All APIs need docs: this crate's types are what the engine wires in.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

mod artifact;
mod bits;
mod blocks;
mod build;
mod determinize;
mod dwa;
mod error;
mod kmaps;
mod lazy;
mod lexical;
mod minimize;
mod points;
mod template;

#[cfg(test)]
mod template_tests;

use std::sync::Arc;

use munch_glr::mask::{IndentFix, MaskCache, MaskMut, Masker};
use munch_glr::parser::{Parser, ParserState};
use munch_tokens::SpansConfig;
use munch_vocab::Vocabulary;

pub use error::{LoadKind, WdaBudget, WdaBuildError, WdaLoadError};
pub use lazy::{LazyStats, LazyWdaMasker};

/// Budgets of [`WdaMasker::new`]. The defaults are sized for the ≤ 2 GiB build target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WdaConfig {
    /// The most automaton states the subset construction may create. Default 4,000,000.
    pub max_states: usize,
    /// The most transitions it may create. Default 60,000,000.
    pub max_edges: usize,
    /// The most heap bytes the eager build may hold at once: the token spans' build (every
    /// table it allocates, charged before it is allocated; held to the lower of this and
    /// [`SpansConfig::max_bytes`]), then the token spans, continuations and initial items, the
    /// summaries, item sets, maps, weights and automaton of the construction, minimisation,
    /// and the run-time tables (approximate: each table at its capacity).
    /// [`WdaStats::heap_bytes`] never exceeds it. The [`LazyWdaMasker`] is held to it as a
    /// whole: the spans' build, then the tables it keeps, and its cache in what they leave
    /// (see [`LazyWdaMasker::new`]). Default 1.5 GiB.
    pub max_memory: usize,
    /// The most continuations (what may follow a terminal inside a token) the spans may need.
    /// Default 20,000,000.
    pub max_continuations: usize,
    /// Budgets of the token-spans build.
    pub spans: SpansConfig,
    /// [`LazyWdaMasker`] only: the most heap bytes its cache of states, transitions and
    /// summaries may hold (approximate); reaching it clears the cache. Lowered to half of what
    /// the tables kept leave of [`max_memory`](WdaConfig::max_memory). Default 256 MiB.
    pub cache_capacity: usize,
    /// [`LazyWdaMasker`] only: the clears after which a cache that thrashes (fewer than
    /// [`min_masks_per_clear`](WdaConfig::min_masks_per_clear) masks answered since the last
    /// clear) gives up to the fallback masker. Default 3.
    pub min_clears: usize,
    /// [`LazyWdaMasker`] only: see [`min_clears`](WdaConfig::min_clears). Default 64.
    pub min_masks_per_clear: usize,
    /// [`LazyWdaMasker`] only: once built, prepare its lexer points on a thread of its own
    /// (each point's spans and continuations, most of a point's first-use cost), at the
    /// lowest priority: the points the start point leads to first (the first mask makes the
    /// start point itself), then the points prepared ones lead to (and first those led to by
    /// a point a mask had to make); a mask that needs a point not
    /// prepared yet makes it itself, never waiting for the thread. The thread takes a core's
    /// idle time until every point is made (`bench/PERFORMANCE.md` has how long) and stops
    /// when the masker is dropped. Default true.
    pub prepare_in_background: bool,
}

impl Default for WdaConfig {
    fn default() -> Self {
        WdaConfig {
            max_states: 4_000_000,
            max_edges: 60_000_000,
            max_memory: 3 << 29,
            max_continuations: 20_000_000,
            spans: SpansConfig::default(),
            cache_capacity: 256 << 20,
            min_clears: 3,
            min_masks_per_clear: 64,
            prepare_in_background: true,
        }
    }
}

/// Size and build time of a [`WdaMasker`].
#[derive(Clone, Debug, PartialEq)]
pub struct WdaStats {
    /// States of the minimal automaton (the dead state included).
    pub states: usize,
    /// Its transitions (one default per state plus the listed ones).
    pub edges: usize,
    /// Distinct class sets its transitions and states carry.
    pub distinct_weights: usize,
    /// Heap bytes of the compiled tables.
    pub heap_bytes: usize,
    /// Seconds the build took (0 for a loaded masker).
    pub build_s: f64,
    /// Token classes (text tokens grouped by identical lexical behaviour).
    pub token_classes: usize,
    /// Blocks: groups of token classes the automaton never tells apart (its weights are sets
    /// of blocks).
    pub blocks: usize,
}

/// The cost of one mask, from [`WdaMasker::profile`].
#[derive(Clone, Debug, PartialEq)]
pub struct MaskProfile {
    /// Microseconds reading the stack.
    pub run_us: f64,
    /// Microseconds writing the mask words.
    pub expand_us: f64,
    /// The same again, the fastest of 20 (tables in the CPU's caches), without the result
    /// cache.
    pub hot_expand_us: f64,
    /// How the hot expansion went (from nothing or from a base), and its estimated cost.
    pub base: String,
    /// (automaton state, GSS node) pairs read.
    pub pairs: usize,
    /// Distinct weights ORed.
    pub weights: usize,
    /// Estimated word operations of a fresh expansion of the result.
    pub fresh_cost: usize,
    /// Blocks in the mask.
    pub blocks: usize,
    /// Whether the expansion was a recent result's copy.
    pub cache_hit: bool,
    /// How the mask was expanded ([`munch_tokens::Expanded`]: `Repeat`, or `Scratch`, `Entry`
    /// or `Base` with the estimated cost).
    pub how: String,
}

/// The weighted-automaton masker. Immutable, `Send + Sync`; share it with `Arc`.
///
/// A cache ([`Masker::create_cache`], one per thread) keeps recent masks by class set: about
/// 1 MiB (at least 64 masks), allocated and written when it is made, so that no mask pays a
/// first-touch page fault.
pub struct WdaMasker {
    /// Exact answers for the tokens the indentation context decides (`postlex = python`).
    indent: Option<Arc<IndentFix>>,
    parser: Arc<Parser>,
    vocab: Arc<Vocabulary>,
    dwa: dwa::Dwa,
    build_s: f64,
}

impl WdaMasker {
    /// Compiles the automaton of `parser`'s grammar over `vocab`.
    ///
    /// Errors: a budget of `config` exceeded (the error names it), or the token-spans build's.
    pub fn new(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &WdaConfig,
    ) -> Result<WdaMasker, WdaBuildError> {
        let (dwa, build_s) = build::build(&parser, &vocab, config)?;
        Ok(WdaMasker {
            indent: IndentFix::new(&parser).map(Arc::new),
            parser,
            vocab,
            dwa,
            build_s,
        })
    }

    /// The automaton's size and build time.
    pub fn stats(&self) -> WdaStats {
        WdaStats {
            states: self.dwa.state_len(),
            edges: self.dwa.edge_len(),
            distinct_weights: self.dwa.weight_len(),
            heap_bytes: self.dwa.heap_bytes(),
            build_s: self.build_s,
            token_classes: self.dwa.token_classes as usize,
            blocks: self.dwa.class_len as usize,
        }
    }

    /// Writes the compiled tables: a versioned, checksummed artifact that names the vocabulary
    /// ([`Vocabulary::fingerprint`]) and the grammar (a hash of the lexer and LR tables) it was
    /// built for. The format is described in the `artifact` module.
    pub fn save(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        artifact::save(
            &self.dwa,
            self.vocab.fingerprint(),
            artifact::grammar_fingerprint(&self.parser),
            w,
        )
    }

    /// Reads tables written by [`WdaMasker::save`] for `parser`'s grammar over `vocab`.
    ///
    /// Errors: the stream is not an artifact, has another format version, is truncated or
    /// corrupt (checksum), was built for another vocabulary or grammar, or is inconsistent — each
    /// a [`LoadKind`]. Never panics on any input.
    pub fn load(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        r: &mut impl std::io::Read,
    ) -> Result<WdaMasker, WdaLoadError> {
        let dwa = artifact::load(
            r,
            vocab.fingerprint(),
            artifact::grammar_fingerprint(&parser),
            vocab.len(),
            parser.lexer().state_len(),
            parser.lr_state_len(),
        )?;
        Ok(WdaMasker {
            indent: IndentFix::new(&parser).map(Arc::new),
            parser,
            vocab,
            dwa,
            build_s: 0.0,
        })
    }

    /// What the mask of `state` costs (for profiling): the same run as [`Masker::fill_mask`],
    /// timed in two parts, with its counts.
    pub fn profile(&self, cache: &mut MaskCache, state: &ParserState) -> MaskProfile {
        let cache: &mut dwa::RunCache = cache.get_mut();
        let t0 = std::time::Instant::now();
        self.dwa.run(cache, state);
        let t1 = std::time::Instant::now();
        let _ = self.dwa.take_eos(cache);
        let mut words = vec![0u32; self.vocab.len().div_ceil(32)];
        let t2 = std::time::Instant::now();
        let how = self.dwa.expand(cache, &mut words);
        let t3 = std::time::Instant::now();
        // The same expansion again, with the tables now in the CPU's caches (the result cache
        // is bypassed).
        // The fastest of a few: the expansion's own cost, tables in the CPU's caches.
        let mut hot = self.dwa.expand_uncached(cache, &mut words);
        let mut hot_us = f64::MAX;
        for _ in 0..20 {
            let t = std::time::Instant::now();
            hot = self.dwa.expand_uncached(cache, &mut words);
            hot_us = hot_us.min(t.elapsed().as_secs_f64() * 1e6);
        }
        let (used, cost) = self.dwa.used_profile(cache);
        MaskProfile {
            run_us: (t1 - t0).as_secs_f64() * 1e6,
            expand_us: (t3 - t2).as_secs_f64() * 1e6,
            hot_expand_us: hot_us,
            base: format!("{hot:?}"),
            pairs: cache.pairs,
            weights: used,
            fresh_cost: cost,
            blocks: self.dwa.acc_len(cache),
            cache_hit: how == munch_tokens::Expanded::Repeat,
            how: format!("{how:?}"),
        }
    }

    /// The grammar this masker was built for.
    pub fn parser(&self) -> &Arc<Parser> {
        &self.parser
    }
}

impl Masker for WdaMasker {
    fn name(&self) -> &str {
        "wda"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(self.dwa.create_cache())
    }

    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>) {
        IndentFix::fill_or_plain(self.indent.as_deref(), &self.vocab, state, mask, |s, m| {
            self.fill_plain(cache, s, m)
        })
    }
}

impl WdaMasker {
    /// The mask of `state` with the newline terminal read as any other (exact without a
    /// post-lexer; see [`IndentFix`]).
    fn fill_plain(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        let cache: &mut dwa::RunCache = cache.get_mut();
        self.dwa.run(cache, state);
        self.dwa.write_mask(cache, &self.vocab, &mut mask);
    }
}

// Compiled maskers are shared across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<WdaMasker>();
};
