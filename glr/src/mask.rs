//! The [`Masker`] trait and its contract, and the [`Oracle`] that meets it by brute force.
//!
//! A [`Masker`] fills a [`MaskMut`] (a row of an engine's `[batch, ceil(V/32)]` bitmask; the
//! mask types live in `munch_tokens` and are re-exported here, since the trait names them) for
//! a [`ParserState`]; every masker meets the one contract stated on the trait, and the
//! conformance suite checks that they return identical masks.

use std::any::Any;
use std::sync::Arc;

pub use munch_tokens::{MaskMut, TokenMask};
use munch_vocab::Vocabulary;

use crate::parser::{Head, ParserState};

/// Computes the tokens allowed after a parser state.
///
/// # The contract
///
/// For a state reached by committing text `w`, a text token `v` (one with bytes in the
/// vocabulary) is allowed iff committing `v`'s bytes to the state succeeds and leaves it
/// **live**: some head of the GSS, together with its lexer configuration, can still go on — its
/// partial lexeme can be completed to a terminal the parser can shift (after reductions), or to an
/// `%ignore`d terminal, or its lexeme is empty and some terminal can be shifted. In other words
/// `v` is allowed iff `state.clone()` followed by `commit_token(v)` is `Ok` and
/// [`ParserState::is_live`] holds after it. An end-of-sequence token is allowed iff
/// [`ParserState::is_accepting`] holds now; other special tokens are never allowed.
///
/// The mask is a pure function of the state's text (not of how it was committed: byte by byte,
/// token by token, after rollbacks). Maskers may memoise and precompute anything, but must
/// return exactly this set for every state of every grammar and vocabulary; `Cache` is scratch
/// owned by the caller so that a compiled masker stays immutable and shareable between threads.
pub trait Masker: Send + Sync {
    /// A short name (`trie`, `oracle`, ...).
    fn name(&self) -> &str;

    /// The vocabulary this masker was built for.
    fn vocabulary(&self) -> &Vocabulary;

    /// Fresh scratch space for [`Masker::fill_mask`]; one per thread.
    fn create_cache(&self) -> MaskCache;

    /// Sets `mask` (over [`Vocabulary::len`] tokens) to exactly the allowed tokens of `state`.
    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>);

    /// [`Masker::fill_into`] an owned mask.
    fn fill_mask(&self, cache: &mut MaskCache, state: &ParserState, mask: &mut TokenMask) {
        self.fill_into(cache, state, mask.as_mut());
    }

    /// The allowed tokens of `state` in a new mask (allocates; hot loops use `fill_mask`).
    fn mask(&self, cache: &mut MaskCache, state: &ParserState) -> TokenMask {
        let mut mask = TokenMask::new(self.vocabulary().len());
        self.fill_mask(cache, state, &mut mask);
        mask
    }
}

/// Caller-owned scratch space of one masker (its memo tables), made by
/// [`Masker::create_cache`].
pub struct MaskCache(Box<dyn Any + Send>);

impl MaskCache {
    /// Wraps a masker's own cache type.
    pub fn new<T: Any + Send>(inner: T) -> Self {
        MaskCache(Box::new(inner))
    }

    /// The masker's own cache.
    ///
    /// # Panics
    /// When the cache was made by a different kind of masker: a cache belongs to the masker that
    /// created it.
    pub fn get_mut<T: Any + Send>(&mut self) -> &mut T {
        self.0
            .downcast_mut()
            .expect("a MaskCache was passed to a masker that did not create it")
    }
}

/// The exact oracle: the contract computed by brute force.
///
/// For every text token: clone the state, commit the token, test liveness. Obviously right and
/// slow (one commit per vocabulary entry); every other masker is checked against it. It lives
/// beside the trait, not in the conformance crate, because `munch trace --oracle` uses it too.
pub struct Oracle {
    vocab: Arc<Vocabulary>,
}

impl Oracle {
    /// An oracle over `vocab`.
    pub fn new(vocab: Arc<Vocabulary>) -> Self {
        Oracle { vocab }
    }
}

impl Masker for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(())
    }

    fn fill_into(&self, _cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        mask.clear();
        for (id, bytes) in self.vocab.text_tokens() {
            if state.allows(bytes) {
                mask.insert(id);
            }
        }
        set_eos(&self.vocab, state, &mut mask);
    }
}

/// Sets the end-of-sequence tokens of `vocab` in `mask` iff `state` accepts now, as the contract
/// requires of every masker.
pub fn set_eos(vocab: &Vocabulary, state: &ParserState, mask: &mut MaskMut<'_>) {
    if state.is_accepting() {
        for &eos in vocab.eos() {
            mask.insert(eos);
        }
    }
}

/// Exact masks under Python's indenter (`postlex = python`), for every masker.
///
/// # Which answers the indentation context decides
///
/// A head's indentation context (its stack of widths, bracket depth, and the width of the
/// newline lexeme it is reading; see [`crate::parser::IndentCtx`]) enters a commit in two
/// places only: when a newline lexeme completes (the indenter's `NL`, `_INDENT`, `_DEDENT`s,
/// nothing inside brackets, or a dead branch on an inconsistent dedent), and when the text ends
/// inside a lexeme that may still become a newline (live inside brackets). Bracket terminals
/// change the depth, which only a later newline reads. A masker reads the GSS and the lexer
/// configurations, not the contexts: it treats the newline terminal as any other. So the
/// masker's answer is exact for every token whose lexing completes no newline lexeme and does
/// not end inside one, and [`IndentFix::fill`] splits the work:
///
/// - **Heads between lexemes or inside another lexeme** go to the masker, as a state of their
///   own. The tokens whose answer the context may change are found by running the lexer (not
///   the parser) over each token's bytes, once per lexer configuration and memoised (a
///   vocabulary pass costs a few milliseconds), and answered again by committing them, as the
///   [`Oracle`] does. Outside brackets, a newline completed at a token's last byte changes
///   nothing while the lexeme can still grow (the head reading on is live exactly when the
///   masker says), so these are the tokens that complete a newline before their last byte
///   (`":\n    x"`), or hold one inside brackets: a few hundred to a few thousand.
/// - **Heads inside a lexeme that may become the newline** (after `"\n"`, inside a comment
///   that Lark's `_NEWLINE` absorbs) are answered from each token's walk through that one
///   lexeme. When the lexeme ends at the token's first byte the head contributes nothing (the
///   completion was handed over with the byte before, by a sibling head the masker sees).
///   When it does not end, the growing head is live exactly when the masker would say (the
///   context only adds bracket depth). When it ends after a prefix at width `w`, the
///   indenter's action for `w` decides: an inconsistent dedent allows nothing; otherwise the
///   heads that completed the newline with that action (one commit and masker calls per
///   distinct action: same level, indent, dedent to each level) decide the rest of the token.
///   When the prefix is spaces and tabs that a fresh lexeme reads as one `%ignore`d lexeme
///   (both python.lark files ignore `[\t \f]+`), the token itself is looked up in the mask of
///   those heads with no inhibitor: the common case, a line's indentation and its first word
///   in one token (`"    return"`), costs a bit test. Otherwise the rest is committed.
pub struct IndentFix {
    /// Per (lexer configuration, outside brackets): the tokens [`needs_context`] names.
    memo: std::sync::RwLock<ahash::AHashMap<(LexConfig, bool), TokenList>>,
}

/// A list of token ids, shared.
type TokenList = Arc<[munch_vocab::TokenId]>;

/// A head's lexer configuration: state, inhibitor, lexeme empty.
type LexConfig = (munch_lexer::LexState, Option<munch_lexer::LexState>, bool);

/// The most lexer configurations [`IndentFix`] remembers before it starts over.
const INDENT_FIX_MEMO_LEN: usize = 4096;

/// How a head inside a would-be newline lexeme reads one token.
enum Walk {
    /// The lexeme ends at the first byte: the head contributes nothing.
    Boundary,
    /// The whole token stays inside the lexeme, which ends in this lexer state.
    Inside(munch_lexer::LexState),
    /// The lexeme ends after `len` bytes, in this lexer state, at this width.
    Ends {
        len: usize,
        state: munch_lexer::LexState,
        width: crate::parser::IndentCtx,
    },
}

impl IndentFix {
    /// The fix for `parser`, when it has an indenter (`None` otherwise: masks need no fix).
    pub fn new(parser: &crate::parser::Parser) -> Option<IndentFix> {
        parser.indenter()?;
        Some(IndentFix {
            memo: Default::default(),
        })
    }

    /// A masker's `fill_into`: `plain` (the masker's own computation) on `state` when there is
    /// no fix, else [`IndentFix::fill`] through it.
    pub fn fill_or_plain(
        fix: Option<&IndentFix>,
        vocab: &Vocabulary,
        state: &ParserState,
        mask: MaskMut<'_>,
        mut plain: impl FnMut(&ParserState, MaskMut<'_>),
    ) {
        match fix {
            Some(fix) => fix.fill(vocab, state, mask, &mut plain),
            None => plain(state, mask),
        }
    }

    /// Fills `mask` with exactly the allowed tokens of `state`, calling `plain` (the masker's
    /// own computation, which reads the newline terminal as any other) on states made of some
    /// of `state`'s heads (see the [type docs](IndentFix)).
    pub fn fill(
        &self,
        vocab: &Vocabulary,
        state: &ParserState,
        mut mask: MaskMut<'_>,
        plain: &mut dyn FnMut(&ParserState, MaskMut<'_>),
    ) {
        let parser = Arc::clone(state.parser());
        let Some(nl) = parser.indenter().map(|i| i.newline()) else {
            plain(state, mask);
            return;
        };
        let lexer = parser.lexer();
        let in_newline =
            |h: Head<'_>| !h.lexeme_is_empty() && lexer.reachable(h.lex_state()).contains(nl);
        let others = state.restricted(|h| !in_newline(h));
        if others.head_len() > 0 {
            plain(&others, mask.reborrow());
            self.recheck(vocab, &others, &mut mask);
        } else {
            mask.clear();
        }
        let inside: Vec<ParserState> = state
            .heads()
            .enumerate()
            .filter(|(_, h)| in_newline(*h))
            .map(|(i, _)| {
                let mut k = 0;
                state.restricted(|_| {
                    k += 1;
                    k - 1 == i
                })
            })
            .collect();
        for one in &inside {
            self.fill_inside(vocab, one, &mut mask, plain);
        }
        // Acceptance shifts the final `_DEDENT`s, which a masker's own test does not.
        for &eos in vocab.eos() {
            mask.remove(eos);
        }
        set_eos(vocab, state, &mut mask);
    }

    /// Answers again, by committing them, the tokens whose lexing from a head of `state` (no
    /// head inside a would-be newline) completes or ends inside a newline lexeme.
    fn recheck(&self, vocab: &Vocabulary, state: &ParserState, mask: &mut MaskMut<'_>) {
        let parser = state.parser();
        let mut configs: Vec<(LexConfig, bool)> = state
            .heads()
            .map(|h| {
                (
                    (h.lex_state(), h.inhibitor(), h.lexeme_is_empty()),
                    h.indent().paren_level() == 0,
                )
            })
            .collect();
        configs.sort_unstable();
        configs.dedup();
        let lists: Vec<Arc<[munch_vocab::TokenId]>> = configs
            .iter()
            .map(|&c| self.sensitive(parser, vocab, c))
            .collect();
        let several = lists.len() > 1;
        let mut seen: Vec<u64> = if several {
            vec![0; vocab.len().div_ceil(64)]
        } else {
            Vec::new()
        };
        for list in &lists {
            for &t in list.iter() {
                if several {
                    let (w, bit) = (t.as_usize() / 64, 1u64 << (t.as_usize() % 64));
                    if seen[w] & bit != 0 {
                        continue;
                    }
                    seen[w] |= bit;
                }
                if allows(state, vocab, t) {
                    mask.insert(t);
                } else {
                    mask.remove(t);
                }
            }
        }
    }

    /// Adds to `mask` the tokens allowed by `one`, a state whose one head is inside a lexeme
    /// that may become the newline terminal.
    fn fill_inside(
        &self,
        vocab: &Vocabulary,
        one: &ParserState,
        mask: &mut MaskMut<'_>,
        plain: &mut dyn FnMut(&ParserState, MaskMut<'_>),
    ) {
        let parser = Arc::clone(one.parser());
        let Some(head) = one.heads().next() else {
            return;
        };
        let (Some(nl), lexer) = (parser.indenter().map(|i| i.newline()), parser.lexer()) else {
            return;
        };
        let node = head.node().clone();
        let ctx = head.indent().clone();
        let mut cache = crate::parser::ShiftCache::new();
        let mut grows: ahash::AHashMap<munch_lexer::LexState, bool> = Default::default();
        // Per (lexer state, action) where the lexeme ends: the state of the sibling head(s) that
        // completed it, and their mask.
        // (the heads that completed it, their mask, their mask reading whole tokens from a
        // fresh lexeme, whether they are outside brackets).
        type After = Option<(ParserState, TokenMask, TokenMask, bool)>;
        let mut after: ahash::AHashMap<(munch_lexer::LexState, crate::parser::NlAction), After> =
            Default::default();
        for (t, bytes) in vocab.text_tokens() {
            let allowed = match walk(&parser, head.lex_state(), &ctx, bytes) {
                Walk::Boundary => false,
                Walk::Inside(end) => {
                    let live = *grows.entry(end).or_insert_with(|| {
                        lexer.reachable(end).iter().any(|u| {
                            parser.is_ignored(u)
                                || (u == nl && ctx.paren_level() > 0)
                                || parser.can_shift(&node, u, &mut cache)
                        })
                    });
                    live || allows(one, vocab, t)
                }
                Walk::Ends { len, state, width } => {
                    if lexer.accepted(state) != [nl] {
                        // Ties or an ignored terminal: the general case.
                        allows(one, vocab, t)
                    } else {
                        let action = width.nl_action();
                        if action == crate::parser::NlAction::Error {
                            false
                        } else {
                            let entry = after.entry((state, action)).or_insert_with(|| {
                                let mut s = one.clone();
                                s.commit_bytes(&bytes[..len]).ok()?;
                                // The heads that completed the lexeme (the one still reading
                                // it dies on the rest's first byte). None: nothing goes on.
                                let s = s.restricted(|h| h.lexeme_is_empty());
                                if s.head_len() == 0 {
                                    return None;
                                }
                                let mut m = TokenMask::new(vocab.len());
                                plain(&s, m.as_mut());
                                // The same heads reading the whole token from a fresh lexeme:
                                // its leading spaces and tabs become an ignored lexeme there.
                                let fresh = s.without_inhibitors();
                                let mut whole = TokenMask::new(vocab.len());
                                plain(&fresh, whole.as_mut());
                                let paren_zero =
                                    fresh.heads().all(|h| h.indent().paren_level() == 0);
                                Some((s, m, whole, paren_zero))
                            });
                            match entry {
                                None => false,
                                Some((s, m, whole, paren_zero)) => {
                                    let rest = &bytes[len..];
                                    if lexer.is_dead(lexer.next_inhibited(state, rest[0])) {
                                        // The completed lexeme's look-ahead fails there, or
                                        // no lexeme begins with that byte.
                                        continue;
                                    }
                                    if same_as_ignored(&parser, &bytes[..len], rest[0])
                                        && !needs_context(
                                            &parser,
                                            (lexer.start(), None, true),
                                            *paren_zero,
                                            bytes,
                                        )
                                    {
                                        if whole.contains(t) {
                                            mask.insert(t);
                                        }
                                        continue;
                                    }
                                    let trie = vocab.trie();
                                    let id = trie
                                        .find(rest)
                                        .and_then(|n| trie.tokens_at(n).first().copied());
                                    let simple = || {
                                        s.heads().all(|h| {
                                            !needs_context(
                                                &parser,
                                                (h.lex_state(), h.inhibitor(), h.lexeme_is_empty()),
                                                h.indent().paren_level() == 0,
                                                rest,
                                            )
                                        })
                                    };
                                    match id {
                                        Some(r) if simple() => m.contains(r),
                                        _ => s.allows(rest),
                                    }
                                }
                            }
                        }
                    }
                }
            };
            if allowed {
                mask.insert(t);
            }
        }
    }

    /// The tokens whose answer from a head in lexer configuration `config` (outside brackets
    /// when `paren_zero`) the context may change ([`needs_context`]; memoised).
    fn sensitive(
        &self,
        parser: &crate::parser::Parser,
        vocab: &Vocabulary,
        (config, paren_zero): (LexConfig, bool),
    ) -> Arc<[munch_vocab::TokenId]> {
        let config_key = (config, paren_zero);
        if let Some(list) = self
            .memo
            .read()
            .ok()
            .and_then(|m| m.get(&config_key).cloned())
        {
            return list;
        }
        let list: Arc<[munch_vocab::TokenId]> = vocab
            .text_tokens()
            .filter(|(_, bytes)| needs_context(parser, config, paren_zero, bytes))
            .map(|(t, _)| t)
            .collect();
        if let Ok(mut m) = self.memo.write() {
            if m.len() >= INDENT_FIX_MEMO_LEN {
                m.clear();
            }
            m.insert(config_key, Arc::clone(&list));
        }
        list
    }
}

/// Whether `prefix` (spaces and tabs), read from a fresh lexeme, is one `%ignore`d lexeme
/// that byte `next` ends without killing it: then a head reading `prefix` then `next...` from
/// a fresh lexeme goes on exactly as one that read `prefix` inside a newline lexeme and
/// completed it there.
fn same_as_ignored(parser: &crate::parser::Parser, prefix: &[u8], next: u8) -> bool {
    let lexer = parser.lexer();
    let mut s = lexer.start();
    for &b in prefix {
        if b != b' ' && b != b'\t' {
            return false;
        }
        s = lexer.next(s, b);
        if lexer.is_dead(s) || !lexer.accepted(s).iter().all(|&t| parser.is_ignored(t)) {
            return false;
        }
    }
    // Ends it: `next` is no part of it, so the lexeme after it begins with `next` alike.
    lexer.is_dead(lexer.next(s, next)) && !lexer.is_dead(lexer.next_inhibited(s, next))
}

/// The contract for one token, by brute force.
fn allows(state: &ParserState, vocab: &Vocabulary, t: munch_vocab::TokenId) -> bool {
    vocab
        .token_bytes(t)
        .is_some_and(|bytes| state.allows(bytes))
}

/// How a head in lexer state `s` (inside a lexeme) with context `ctx` reads `bytes` while they
/// extend its lexeme.
fn walk(
    parser: &crate::parser::Parser,
    mut s: munch_lexer::LexState,
    ctx: &crate::parser::IndentCtx,
    bytes: &[u8],
) -> Walk {
    let lexer = parser.lexer();
    let mut width = ctx.clone();
    for (i, &b) in bytes.iter().enumerate() {
        let next = lexer.next(s, b);
        if lexer.is_dead(next) {
            return if i == 0 {
                Walk::Boundary
            } else {
                Walk::Ends {
                    len: i,
                    state: s,
                    width,
                }
            };
        }
        width = width.read(b, false);
        s = next;
    }
    Walk::Inside(s)
}

/// Whether the context may change the answer for `bytes` from a head in lexer configuration
/// `config`, outside brackets when `paren_zero` (at depth ≥ 1 otherwise): running every branch
/// of the streaming lexer over the bytes (without the parser), some branch completes the
/// newline terminal where the indenter may act otherwise than a plain shift, or ends inside a
/// lexeme that may still become one inside brackets.
///
/// Outside brackets, a newline lexeme completed at the token's last byte that can still grow
/// changes nothing: the head that goes on reading it is live exactly when the masker says (it
/// can shift the newline, or go on to another terminal), and when it is not, no width makes the
/// newline shiftable either. A completion that the next byte of the token does not kill, or
/// inside brackets, needs the context.
fn needs_context(
    parser: &crate::parser::Parser,
    config: LexConfig,
    paren_zero: bool,
    bytes: &[u8],
) -> bool {
    use crate::parser::indent_bracket_delta;
    let Some(ind) = parser.indenter() else {
        return false;
    };
    let nl = ind.newline();
    let lexer = parser.lexer();
    // (lexer state, inhibitor, lexeme empty, bracket depth when known: `None` is ≥ 1).
    type Branch = (
        munch_lexer::LexState,
        Option<munch_lexer::LexState>,
        bool,
        Option<u32>,
    );
    let start_depth = paren_zero.then_some(0);
    let mut configs: smallvec::SmallVec<[Branch; 4]> =
        smallvec::smallvec![(config.0, config.1, config.2, start_depth)];
    let mut next: smallvec::SmallVec<[Branch; 4]> = smallvec::SmallVec::new();
    for (i, &b) in bytes.iter().enumerate() {
        for &(s, inh, _, depth) in &configs {
            let s = match inh {
                Some(i) => lexer.next_inhibited(i, b),
                None => lexer.next(s, b),
            };
            if lexer.is_dead(s) {
                continue;
            }
            if lexer.can_grow(s) && !next.contains(&(s, None, false, depth)) {
                next.push((s, None, false, depth));
            }
            let accepted = lexer.accepted(s);
            if accepted.contains(&nl) {
                let last = i + 1 == bytes.len();
                // (A character that may or may not extend it leaves the question open.)
                let killed = !last && lexer.is_dead(lexer.next_inhibited(s, bytes[i + 1]));
                if depth != Some(0) || !(killed || (last && lexer.can_grow(s))) {
                    return true;
                }
            }
            if !accepted.is_empty() {
                let mut depth = depth;
                for &t in accepted {
                    depth = indent_bracket_delta(ind, t, depth);
                }
                let c = (lexer.start(), lexer.inhibits(s).then_some(s), true, depth);
                if !next.contains(&c) {
                    next.push(c);
                }
            }
        }
        std::mem::swap(&mut configs, &mut next);
        next.clear();
        if configs.is_empty() {
            return false;
        }
    }
    configs
        .iter()
        .any(|&(s, _, empty, depth)| !empty && depth != Some(0) && lexer.reachable(s).contains(nl))
}

// The fix is shared by compiled maskers across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<IndentFix>();
};
