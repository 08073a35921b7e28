//! Shared helpers: the masker with the default configuration, a synthetic vocabulary, and the
//! step-by-step comparison of the weighted-automaton masker with a reference masker.

#![allow(dead_code)]

use std::sync::Arc;

use munch_glr::mask::{MaskCache, Masker, TokenMask};
use munch_glr::parser::{Parser, ParserState};
use munch_masker_wda::{LazyWdaMasker, WdaConfig, WdaMasker};
use munch_testkit::generate::XorShift;
use munch_testkit::vocab;
use munch_vocab::{TokenId, Vocabulary};

pub fn wda(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> WdaMasker {
    WdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &WdaConfig::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The on-demand automaton with the default configuration.
pub fn lazy(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> LazyWdaMasker {
    LazyWdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &WdaConfig::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The on-demand automaton without the preparing thread: each lexer point is made by the
/// first mask that starts there, or, with `ahead`, by [`LazyWdaMasker::prepare_points`] before
/// any mask.
pub fn lazy_points(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>, ahead: bool) -> LazyWdaMasker {
    let config = WdaConfig {
        prepare_in_background: false,
        ..WdaConfig::default()
    };
    let l = LazyWdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &config)
        .unwrap_or_else(|e| panic!("{e}"));
    if ahead {
        l.prepare_points();
        let stats = l.stats();
        assert_eq!(stats.prepared_points, stats.lexer_points, "{stats:?}");
    }
    l
}

/// The on-demand automaton with a cache of `capacity` bytes that never gives up (so that
/// tests see it cleared and refilled, not replaced by its fallback).
pub fn lazy_small(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>, capacity: usize) -> LazyWdaMasker {
    let config = WdaConfig {
        cache_capacity: capacity,
        min_clears: usize::MAX,
        ..WdaConfig::default()
    };
    LazyWdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &config)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every single byte, the maskers' corner words ([`vocab::corners`]), words that repeat `a`,
/// `b`, `x`, `y` and parentheses, then `extra`; the last id is EOS.
pub fn synthetic_vocab(extra: &[&[u8]]) -> Arc<Vocabulary> {
    let mut words = vocab::corners();
    words.extend_from_slice(&[
        b"))", b"((", b"()", b"ab", b"ba", b"aab", b"abc", b"a b", b" a", b"x,", b",x", b"xx",
        b"yx", b"xy",
    ]);
    words.extend_from_slice(extra);
    vocab::bytes_and(&words)
}

/// The first disagreement between two masks, rendered.
pub fn compare(
    vocab: &Vocabulary,
    a: &TokenMask,
    b: &TokenMask,
    names: (&str, &str),
    prefix: &[u8],
    step: usize,
) -> Result<(), String> {
    match a.first_difference(b) {
        None => Ok(()),
        Some(t) => Err(format!(
            "step {step}: token {t} {:?} after {:?}: {} {} / {} {}",
            String::from_utf8_lossy(vocab.token_bytes(t).unwrap_or(b"<special>")),
            String::from_utf8_lossy(prefix),
            names.0,
            a.contains(t),
            names.1,
            b.contains(t),
        )),
    }
}

/// `wda` and `reference` over one parser state: each step fills their masks and compares them,
/// then commits a token.
struct Walk<'a> {
    wda: &'a dyn Masker,
    reference: &'a dyn Masker,
    vocab: &'a Arc<Vocabulary>,
    caches: (MaskCache, MaskCache),
    /// The wda's mask, then the reference's.
    masks: (TokenMask, TokenMask),
    state: ParserState,
    prefix: Vec<u8>,
    /// The steps compared so far.
    compared: usize,
}

impl<'a> Walk<'a> {
    fn new(
        wda: &'a dyn Masker,
        reference: &'a dyn Masker,
        parser: &Arc<Parser>,
        vocab: &'a Arc<Vocabulary>,
    ) -> Self {
        Walk {
            wda,
            reference,
            vocab,
            caches: (wda.create_cache(), reference.create_cache()),
            masks: (TokenMask::new(vocab.len()), TokenMask::new(vocab.len())),
            state: ParserState::new(Arc::clone(parser)),
            prefix: Vec::new(),
            compared: 0,
        }
    }

    /// Fills the wda's mask and, when `check`, the reference's, and compares them (showing the
    /// last `shown` bytes of the text so far).
    fn fill(&mut self, check: bool, step: usize, shown: usize) -> Result<(), String> {
        let (wm, rm) = &mut self.masks;
        self.wda.fill_mask(&mut self.caches.0, &self.state, wm);
        if !check {
            return Ok(());
        }
        self.reference
            .fill_mask(&mut self.caches.1, &self.state, rm);
        self.compared += 1;
        let tail = &self.prefix[self.prefix.len().saturating_sub(shown)..];
        let names = (self.wda.name(), self.reference.name());
        compare(self.vocab, wm, rm, names, tail, step)
    }

    /// Commits `t` and appends its bytes to the text.
    fn commit(&mut self, t: TokenId) -> Result<(), String> {
        self.state
            .commit_token(self.vocab, t)
            .map_err(|e| e.to_string())?;
        self.prefix
            .extend_from_slice(self.vocab.token_bytes(t).unwrap());
        Ok(())
    }
}

/// Teacher-forces `text` and compares `wda` with `reference` at every `every`-th step; panics
/// at the first difference. Returns the number of steps compared.
pub fn teacher_forced(
    wda: &dyn Masker,
    reference: &dyn Masker,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    text: &str,
    every: usize,
) -> usize {
    let tokens = vocab.encode(text).unwrap();
    let mut walk = Walk::new(wda, reference, parser, vocab);
    for step in 0..=tokens.len() {
        let check = step % every == 0 || step == tokens.len();
        walk.fill(check, step, usize::MAX)
            .unwrap_or_else(|e| panic!("{e}"));
        let Some(&t) = tokens.get(step) else { break };
        assert!(
            walk.masks.0.contains(t),
            "step {step}: forced token {t} {:?} masked out after {:?}",
            String::from_utf8_lossy(vocab.token_bytes(t).unwrap()),
            String::from_utf8_lossy(&walk.prefix)
        );
        walk.commit(t).unwrap();
    }
    walk.compared
}

/// A random walk: at each step compare the masks, then commit a random allowed text token
/// (stopping at EOS-only states). `seed` replays the walk.
pub fn random_walk(
    wda: &dyn Masker,
    reference: &dyn Masker,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    seed: u64,
    steps: usize,
) -> usize {
    let mut walk = Walk::new(wda, reference, parser, vocab);
    let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for step in 0..steps {
        walk.fill(true, step, usize::MAX)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let allowed: Vec<TokenId> = walk
            .masks
            .0
            .iter()
            .filter(|&t| !vocab.is_special(t))
            .collect();
        if allowed.is_empty() {
            break;
        }
        let t = allowed[rng.below(allowed.len())];
        walk.commit(t)
            .unwrap_or_else(|e| panic!("seed {seed} step {step}: allowed token refused: {e}"));
    }
    walk.compared
}

/// Teacher-forces the bytes of `text` as encoded by `vocab`, comparing `wda` with `reference`
/// at every step, until the text ends or the grammar rejects it (real files may use what a
/// grammar does not cover). Returns the number of steps compared.
pub fn teacher_forced_until_rejected(
    wda: &dyn Masker,
    reference: &dyn Masker,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    text: &str,
    label: &str,
) -> usize {
    let tokens = vocab.encode(text).unwrap();
    let mut walk = Walk::new(wda, reference, parser, vocab);
    for step in 0..=tokens.len() {
        walk.fill(true, step, 60)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let Some(&t) = tokens.get(step) else { break };
        if walk.commit(t).is_err() {
            break;
        }
    }
    walk.compared
}

/// Files with `extension` under `dir` (recursively), at most `max_bytes` each, sorted, then
/// `n` of them evenly spread.
pub fn corpus(
    dir: &std::path::Path,
    extension: &str,
    n: usize,
    max_bytes: u64,
) -> Vec<std::path::PathBuf> {
    munch_testkit::files::spread(
        &munch_testkit::files::files_under(dir, extension, max_bytes),
        n,
    )
}
