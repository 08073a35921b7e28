//! Exact masks under Python's indenter: [`IndentFix`].

use std::sync::{Arc, OnceLock, RwLock};

use ahash::AHashMap;
use munch_lexer::{LexState, TerminalId};
use munch_vocab::{TokenId, TrieNode, Vocabulary};

use super::{set_eos, MaskMut, TokenMask};
use crate::parser::{indent_bracket_delta, Head, NlAction, Parser, ParserState, ShiftCache};

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
///   the parser) over each token's bytes ([`needs_context`]), and answered again by committing
///   them, as the [`Oracle`](super::Oracle) does. Outside brackets, a newline completed at a
///   token's last byte changes nothing while the lexeme can still grow (the head reading on is
///   live exactly when the masker says), so these are the tokens that complete a newline
///   before their last byte (`":\n    x"`), or hold one inside brackets: a few hundred to a
///   few thousand.
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
///
/// # What is computed once
///
/// Both passes over the vocabulary are memoised, so that a mask costs work in proportion to
/// the classes of tokens whose answer the context may change, not to the vocabulary:
///
/// - Only a lexeme that begins with one of a few bytes (`"\n"`, `"\r"`, `"#"` in both
///   python.lark files) can become the newline terminal. A token without such a byte, read from
///   a head whose lexeme cannot become one, never needs the context; the tokens that hold one
///   are listed once, and [`needs_context`] runs on those alone.
/// - Per set of heads (lexer configuration and bracket depth), the tokens that need the
///   context are put in classes the parser cannot tell apart ([`signature`]: the lexemes each
///   path of the lexer completes, with the newline widths the indenter reads, and where it
///   ends; inside brackets `"\n"`, `"\n    "` and `"\n\n  "` are one class). A mask commits
///   one token per class, and none where a prefix of it before its first newline byte is
///   itself a token the masker refused; classes sharing that prefix share its commit.
/// - From a head inside a would-be newline lexeme, how a token reads (the lexeme ends at its
///   first byte, stays open to its end, or ends after a prefix of spaces, tabs and newlines) is
///   a function of the head's lexer state. The vocabulary is grouped once per such state by
///   that reading: tokens that stay inside, by the state they leave; tokens that end it, by
///   their prefix (which gives the width, hence the indenter's action) and the state where it
///   ends. A mask then costs one bit-set operation per group: the common group, a space and a
///   word (`" return"`), is the mask of the heads that completed the newline with that action,
///   ANDed with the group.
pub struct IndentFix {
    /// Bytes that can begin a lexeme which may become the newline terminal ([`nl_bytes`]).
    nl_bytes: [bool; 256],
    /// The text tokens holding one of [`IndentFix::nl_bytes`], made on first use for the
    /// masker's vocabulary (a masker has one).
    candidates: OnceLock<TokenList>,
    /// Per set of heads (lexer configuration, bracket depth): the tokens [`needs_context`]
    /// names, in classes of equal [`signature`].
    memo: RwLock<AHashMap<Vec<HeadKey>, Classes>>,
    /// Per lexer state inside a would-be newline lexeme: the vocabulary grouped by how a head
    /// there reads it.
    line_starts: RwLock<AHashMap<LexState, Arc<LineStart>>>,
}

/// A list of token ids, shared.
type TokenList = Arc<[TokenId]>;

/// A head's lexer configuration and bracket depth.
type HeadKey = (LexConfig, u32);

/// Tokens that the parser cannot tell apart from some heads, in classes.
type Classes = Arc<[Class]>;

/// Tokens with one [`signature`] from some heads: all allowed or none.
struct Class {
    /// Their trie nodes, in preorder; the first one's token is committed for all.
    nodes: Box<[TrieNode]>,
    /// Tokens spelling prefixes of the first one before its first newline byte (none when
    /// some head's lexeme may become the newline): one refused refuses the class. Refused
    /// means its commit failed at a byte, or it ended where no head is live; a head with an
    /// empty lexeme is live after any shift in a reduced grammar, and one inside a lexeme that
    /// no terminal it may become can follow stays so until it dies: neither recovers.
    guards: Box<[TokenId]>,
    /// Where the first token's first newline byte is: its commit is split there, and the
    /// first part shared by the classes of one mask.
    split: usize,
    /// A token that no class holds (so the masker's answer for it is exact) with the same
    /// signature as the class: the first part alone or followed by a space (`"),"` for
    /// `"),\n    "` inside brackets, `" "` for `"\n  "`). Its bit answers the class.
    equivalent: Option<TokenId>,
}

/// A head's lexer configuration: state, inhibitor, lexeme empty.
type LexConfig = (LexState, Option<LexState>, bool);

/// The most sets of heads whose classes [`IndentFix`] remembers before it starts over (a
/// set's classes take tens of kilobytes with a 128k vocabulary; real texts meet a few dozen
/// sets).
const INDENT_FIX_MEMO_LEN: usize = 512;

/// The most line-start groupings [`IndentFix`] remembers before it starts over (a grammar's
/// newline terminal is read in a handful of lexer states).
const LINE_START_MEMO_LEN: usize = 64;

/// How a head inside a would-be newline lexeme reads one token.
enum Walk {
    /// The lexeme ends at the first byte: the head contributes nothing.
    Boundary,
    /// The whole token stays inside the lexeme, which ends in this lexer state.
    Inside(LexState),
    /// The lexeme ends after `len` bytes, in this lexer state.
    Ends { len: usize, state: LexState },
}

/// The vocabulary as read by a head inside a would-be newline lexeme in one lexer state.
struct LineStart {
    /// Tokens that stay inside the lexeme, by the lexer state they leave it in.
    inside: Vec<(LexState, TokenSet)>,
    /// Tokens that end the lexeme after a prefix, by (prefix, lexer state where it ends).
    ends: Vec<EndGroup>,
}

/// The tokens that end a would-be newline lexeme after the same prefix, in the same state.
struct EndGroup {
    /// The lexeme's part of each token: its width decides the indenter's action.
    prefix: Box<[u8]>,
    /// The lexer state where the lexeme ends.
    state: LexState,
    kind: EndKind,
}

enum EndKind {
    /// The lexeme is not the newline terminal alone (ties, or an ignored terminal): each token
    /// is committed.
    General(Vec<TokenId>),
    /// The lexeme is the newline terminal. Indexed by whether the heads that complete it are
    /// outside brackets: the tokens that one bit of those heads' mask from a fresh lexeme
    /// answers ([`same_as_ignored`]), and the others, answered one by one.
    Newline {
        fresh: [TokenSet; 2],
        each: [Vec<TokenId>; 2],
    },
}

/// A set of tokens: listed when few, bits when many (then a mask costs a pass over words, not
/// a test per token).
enum TokenSet {
    List(Vec<TokenId>),
    Bits(TokenMask),
}

impl TokenSet {
    fn new(tokens: Vec<TokenId>, vocab_len: usize) -> TokenSet {
        // A word of bits costs about what a listed token does.
        if tokens.len() > vocab_len / 32 {
            let mut bits = TokenMask::new(vocab_len);
            for &t in &tokens {
                bits.insert(t);
            }
            TokenSet::Bits(bits)
        } else {
            TokenSet::List(tokens)
        }
    }

    /// Adds every token of the set to `mask`.
    fn add_to(&self, mask: &mut MaskMut<'_>) {
        match self {
            TokenSet::List(tokens) => tokens.iter().for_each(|&t| mask.insert(t)),
            TokenSet::Bits(bits) => mask.union_with(bits),
        }
    }

    /// Adds to `mask` the tokens of the set that `filter` holds.
    fn add_within(&self, mask: &mut MaskMut<'_>, filter: &TokenMask) {
        match self {
            TokenSet::List(tokens) => {
                for &t in tokens {
                    if filter.contains(t) {
                        mask.insert(t);
                    }
                }
            }
            TokenSet::Bits(bits) => {
                let words = mask.words_mut().iter_mut();
                for (m, (&a, &b)) in words.zip(bits.words().iter().zip(filter.words())) {
                    *m |= a & b;
                }
            }
        }
    }

    /// The tokens of the set, in id order.
    fn iter(&self) -> Box<dyn Iterator<Item = TokenId> + '_> {
        match self {
            TokenSet::List(tokens) => Box::new(tokens.iter().copied()),
            TokenSet::Bits(bits) => Box::new(bits.iter()),
        }
    }
}

impl IndentFix {
    /// The fix for `parser`, when it has an indenter (`None` otherwise: masks need no fix).
    pub fn new(parser: &Parser) -> Option<IndentFix> {
        let nl = parser.indenter()?.newline();
        Some(IndentFix {
            nl_bytes: nl_bytes(parser, nl),
            candidates: OnceLock::new(),
            memo: Default::default(),
            line_starts: Default::default(),
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
    /// head inside a would-be newline) completes or ends inside a newline lexeme: one commit
    /// per class of tokens that the parser cannot tell apart ([`signature`]).
    fn recheck(&self, vocab: &Vocabulary, state: &ParserState, mask: &mut MaskMut<'_>) {
        let parser = state.parser();
        let classes = self.classes(parser, vocab, head_keys(state));
        let trie = vocab.trie();
        // The states after each class's first part, committed once per mask (`None`: refused).
        let mut firsts: AHashMap<&[u8], Option<ParserState>> = AHashMap::new();
        for class in classes.iter() {
            let Some(bytes) = trie
                .tokens_at(class.nodes[0])
                .first()
                .and_then(|&t| vocab.token_bytes(t))
            else {
                continue;
            };
            // A refused prefix refuses the token (the guards are no class's members, so the
            // masker's answer for them stands).
            if let Some(u) = class.equivalent {
                let allowed = mask.contains(u);
                set_class(trie, &class.nodes, allowed, mask);
                continue;
            }
            if !class.guards.iter().all(|&g| mask.contains(g)) {
                set_class(trie, &class.nodes, false, mask);
                continue;
            }
            let first = &bytes[..class.split];
            if !firsts.contains_key(first) {
                // From the longest first part committed before that begins this one (a commit
                // may be split anywhere: the mask contract reads the text, not the pieces).
                let after = match (1..first.len())
                    .rev()
                    .find_map(|k| Some((k, firsts.get(&first[..k])?)))
                {
                    Some((_, None)) => None,
                    Some((k, Some(s))) => s.after(&first[k..]),
                    None => state.after(first),
                };
                firsts.insert(first, after);
            }
            let allowed = firsts[first]
                .as_ref()
                .and_then(|s| s.after(&bytes[class.split..]))
                .is_some_and(|s| s.is_live());
            set_class(trie, &class.nodes, allowed, mask);
        }
    }

    /// The tokens whose answer from heads in `heads` the context may change
    /// ([`needs_context`]), as trie nodes in classes of equal [`signature`] (memoised).
    fn classes(&self, parser: &Parser, vocab: &Vocabulary, heads: Vec<HeadKey>) -> Classes {
        if let Some(classes) = recall(&self.memo, &heads) {
            return classes;
        }
        let trie = vocab.trie();
        let mut nodes: Vec<TrieNode> = Vec::new();
        for &(config, paren) in &heads {
            let needs = |bytes: &[u8]| needs_context(parser, config, paren == 0, bytes);
            if self.may_enter_newline(parser, config) {
                nodes.extend(
                    vocab
                        .text_tokens()
                        .filter(|&(_, bytes)| needs(bytes))
                        .filter_map(|(_, bytes)| trie.find(bytes)),
                );
            } else {
                nodes.extend(
                    self.candidates(vocab)
                        .iter()
                        .filter_map(|&t| vocab.token_bytes(t))
                        .filter(|bytes| needs(bytes))
                        .filter_map(|bytes| trie.find(bytes)),
                );
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        let mut by_signature: AHashMap<Signature, Vec<TrieNode>> = AHashMap::new();
        let mut alone: Vec<TrieNode> = Vec::new();
        for n in nodes {
            let Some(bytes) = trie
                .tokens_at(n)
                .first()
                .and_then(|&t| vocab.token_bytes(t))
            else {
                continue;
            };
            match signature(parser, &heads, bytes) {
                Some(sig) => by_signature.entry(sig).or_default().push(n),
                None => alone.push(n),
            }
        }
        // Guards hold when no head's lexeme may become the newline without one of `nl_bytes`:
        // then a token's prefix before its first such byte is no class's member.
        let guarded = !heads
            .iter()
            .any(|&(config, _)| self.may_enter_newline(parser, config));
        let mut classes: Vec<Class> = by_signature
            .into_iter()
            .map(|(sig, nodes)| (Some(sig), nodes))
            .chain(alone.into_iter().map(|n| (None, vec![n])))
            .map(|(sig, nodes)| {
                let bytes = trie
                    .tokens_at(nodes[0])
                    .first()
                    .and_then(|&t| vocab.token_bytes(t))
                    .unwrap_or_default();
                let split = bytes
                    .iter()
                    .position(|&b| self.nl_bytes[b as usize])
                    .unwrap_or(bytes.len());
                let mut guards = Vec::new();
                if guarded {
                    let mut n = trie.root();
                    for &b in &bytes[..split] {
                        let Some(c) = trie.child(n, b) else { break };
                        n = c;
                        guards.extend(trie.tokens_at(n).first().copied());
                    }
                }
                // The token's first part alone, or followed by a space, when it is a token the
                // masker answers exactly (no newline byte: no class holds it) and the parser
                // cannot tell it apart from the class.
                let first = &bytes[..split];
                let spaced = [first, b" "].concat();
                let equivalent = [first, &spaced[..]]
                    .into_iter()
                    .filter(|u| {
                        guarded
                            && sig.is_some()
                            && !u.is_empty()
                            && !u.iter().any(|&b| self.nl_bytes[b as usize])
                    })
                    .find_map(|u| {
                        let t = trie
                            .find(u)
                            .and_then(|n| trie.tokens_at(n).first().copied())?;
                        (signature(parser, &heads, u) == sig).then_some(t)
                    });
                Class {
                    nodes: nodes.into(),
                    guards: guards.into(),
                    split,
                    equivalent,
                }
            })
            .collect();
        classes.sort_unstable_by_key(|c| c.nodes[0]);
        let classes: Classes = classes.into();
        remember(&self.memo, heads, Arc::clone(&classes), INDENT_FIX_MEMO_LEN);
        classes
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
        let groups = self.line_start(&parser, vocab, head.lex_state());
        let mut cache = ShiftCache::new();
        let commit_each = |tokens: &mut dyn Iterator<Item = TokenId>, mask: &mut MaskMut<'_>| {
            for t in tokens {
                if allows(one, vocab, t) {
                    mask.insert(t);
                }
            }
        };
        for (end, tokens) in &groups.inside {
            // The head reading on is live exactly when the masker would say (the context only
            // adds bracket depth); a token it does not keep live is committed.
            let live = lexer.reachable(*end).iter().any(|u| {
                parser.is_ignored(u)
                    || (u == nl && ctx.paren_level() > 0)
                    || parser.can_shift(&node, u, &mut cache)
            });
            if live {
                tokens.add_to(mask);
            } else {
                commit_each(&mut tokens.iter(), mask);
            }
        }
        // Per (lexer state, action) where the lexeme ends: the heads that completed it, their
        // exact mask, the masker's mask of them reading whole tokens from a fresh lexeme,
        // whether they are outside brackets. None: nothing goes on.
        type After = Option<(ParserState, TokenMask, TokenMask, bool)>;
        let mut after: AHashMap<(LexState, NlAction), After> = Default::default();
        for group in &groups.ends {
            let (fresh, each) = match &group.kind {
                EndKind::General(tokens) => {
                    commit_each(&mut tokens.iter().copied(), mask);
                    continue;
                }
                EndKind::Newline { fresh, each } => (fresh, each),
            };
            let width = group
                .prefix
                .iter()
                .fold(ctx.clone(), |w, &b| w.read(b, false));
            let action = width.nl_action();
            if action == NlAction::Error {
                continue;
            }
            let entry = after.entry((group.state, action)).or_insert_with(|| {
                let mut s = one.clone();
                s.commit_bytes(&group.prefix).ok()?;
                // The heads that completed the lexeme (the one still reading it dies on the
                // rest's first byte).
                let s = s.restricted(|h| h.lexeme_is_empty());
                if s.head_len() == 0 {
                    return None;
                }
                // Their exact mask (the fix through the masker: their lexemes are empty, so no
                // line start again): a token's rest is looked up in it.
                let mut m = TokenMask::new(vocab.len());
                self.fill(vocab, &s, m.as_mut(), &mut *plain);
                // The same heads reading the whole token from a fresh lexeme: its leading
                // spaces and tabs become an ignored lexeme there.
                let fresh = s.without_inhibitors();
                let mut whole = TokenMask::new(vocab.len());
                plain(&fresh, whole.as_mut());
                let paren_zero = fresh.heads().all(|h| h.indent().paren_level() == 0);
                Some((s, m, whole, paren_zero))
            });
            let Some((s, m, whole, paren_zero)) = entry else {
                continue;
            };
            let side = usize::from(*paren_zero);
            fresh[side].add_within(mask, whole);
            let trie = vocab.trie();
            for &t in &each[side] {
                let Some(bytes) = vocab.token_bytes(t) else {
                    continue;
                };
                let rest = &bytes[group.prefix.len()..];
                let id = trie
                    .find(rest)
                    .and_then(|n| trie.tokens_at(n).first().copied());
                let allowed = match id {
                    Some(r) => m.contains(r),
                    None => s.allows(rest),
                };
                if allowed {
                    mask.insert(t);
                }
            }
        }
    }

    /// The vocabulary grouped by how a head inside a would-be newline lexeme in lexer state
    /// `s` reads each token (memoised).
    fn line_start(&self, parser: &Parser, vocab: &Vocabulary, s: LexState) -> Arc<LineStart> {
        if let Some(groups) = recall(&self.line_starts, &s) {
            return groups;
        }
        let lexer = parser.lexer();
        let start = (lexer.start(), None, true);
        let mut inside: AHashMap<LexState, Vec<TokenId>> = AHashMap::new();
        // (general tokens, fresh per side, each per side) per (prefix, state).
        type Sorted = (Vec<TokenId>, [Vec<TokenId>; 2], [Vec<TokenId>; 2]);
        let mut ends: AHashMap<(&[u8], LexState), Sorted> = AHashMap::new();
        let newline_alone = |state: LexState| {
            let nl = parser.indenter().map(|i| i.newline());
            lexer.accepted(state).len() == 1 && lexer.accepted(state).first().copied() == nl
        };
        for (t, bytes) in vocab.text_tokens() {
            match walk(parser, s, bytes) {
                Walk::Boundary => {}
                Walk::Inside(end) => inside.entry(end).or_default().push(t),
                Walk::Ends { len, state } => {
                    let (prefix, rest) = bytes.split_at(len);
                    let sorted = ends.entry((prefix, state)).or_default();
                    if !newline_alone(state) {
                        sorted.0.push(t);
                    } else if lexer.is_dead(lexer.next_inhibited(state, rest[0])) {
                        // The completed lexeme's look-ahead fails there, or no lexeme begins
                        // with that byte: never allowed.
                    } else {
                        let ignored = same_as_ignored(parser, prefix, rest[0]);
                        for (side, paren_zero) in [false, true].into_iter().enumerate() {
                            if ignored && !self.needs_context(parser, start, paren_zero, bytes) {
                                sorted.1[side].push(t);
                            } else {
                                sorted.2[side].push(t);
                            }
                        }
                    }
                }
            }
        }
        let n = vocab.len();
        let mut inside: Vec<(LexState, TokenSet)> = inside
            .into_iter()
            .map(|(end, tokens)| (end, TokenSet::new(tokens, n)))
            .collect();
        inside.sort_unstable_by_key(|&(end, _)| end);
        let mut ends: Vec<EndGroup> = ends
            .into_iter()
            .map(|((prefix, state), (general, [f0, f1], each))| EndGroup {
                prefix: prefix.into(),
                state,
                kind: if general.is_empty() {
                    EndKind::Newline {
                        fresh: [TokenSet::new(f0, n), TokenSet::new(f1, n)],
                        each,
                    }
                } else {
                    EndKind::General(general)
                },
            })
            .collect();
        ends.sort_unstable_by(|a, b| (&a.prefix, a.state).cmp(&(&b.prefix, b.state)));
        let groups = Arc::new(LineStart { inside, ends });
        remember(
            &self.line_starts,
            s,
            Arc::clone(&groups),
            LINE_START_MEMO_LEN,
        );
        groups
    }

    /// [`needs_context`], answered without reading the token when none of its bytes can begin
    /// a newline lexeme.
    fn needs_context(
        &self,
        parser: &Parser,
        config: LexConfig,
        paren_zero: bool,
        bytes: &[u8],
    ) -> bool {
        if !self.may_enter_newline(parser, config)
            && !bytes.iter().any(|&b| self.nl_bytes[b as usize])
        {
            return false;
        }
        needs_context(parser, config, paren_zero, bytes)
    }

    /// Whether a head in `config` is already inside a lexeme that may become the newline
    /// terminal without reading one of [`IndentFix::nl_bytes`] (its lexeme is under way and
    /// can still become it).
    fn may_enter_newline(&self, parser: &Parser, (s, _, _): LexConfig) -> bool {
        let lexer = parser.lexer();
        let nl = parser.indenter().map(|i| i.newline());
        s != lexer.start() && nl.is_some_and(|nl| lexer.reachable(s).contains(nl))
    }

    /// The text tokens of `vocab` that hold one of [`IndentFix::nl_bytes`].
    fn candidates(&self, vocab: &Vocabulary) -> &TokenList {
        self.candidates.get_or_init(|| {
            vocab
                .text_tokens()
                .filter(|(_, bytes)| bytes.iter().any(|&b| self.nl_bytes[b as usize]))
                .map(|(t, _)| t)
                .collect()
        })
    }
}

/// The value `memo` holds for `key`.
fn recall<K: std::hash::Hash + Eq, V: Clone>(memo: &RwLock<AHashMap<K, V>>, key: &K) -> Option<V> {
    memo.read().ok().and_then(|m| m.get(key).cloned())
}

/// Stores `value` for `key` in `memo`, which starts over when it holds `cap` entries.
fn remember<K: std::hash::Hash + Eq, V>(
    memo: &RwLock<AHashMap<K, V>>,
    key: K,
    value: V,
    cap: usize,
) {
    if let Ok(mut m) = memo.write() {
        if m.len() >= cap {
            m.clear();
        }
        m.insert(key, value);
    }
}

/// Sets or clears the tokens at trie nodes `nodes` in `mask`.
fn set_class(
    trie: &munch_vocab::TokenTrie,
    nodes: &[TrieNode],
    allowed: bool,
    mask: &mut MaskMut<'_>,
) {
    for &n in nodes {
        for &t in trie.tokens_at(n) {
            if allowed {
                mask.insert(t);
            } else {
                mask.remove(t);
            }
        }
    }
}

/// The distinct (lexer configuration, bracket depth) of `state`'s heads, sorted.
fn head_keys(state: &ParserState) -> Vec<HeadKey> {
    let mut heads: Vec<HeadKey> = state
        .heads()
        .map(|h| (config_of(h), h.indent().paren_level()))
        .collect();
    heads.sort_unstable();
    heads.dedup();
    heads
}

/// A head's lexer configuration.
fn config_of(h: Head<'_>) -> LexConfig {
    (h.lex_state(), h.inhibitor(), h.lexeme_is_empty())
}

/// The bytes `b` that can begin a lexeme which may become the newline terminal `nl`: from some
/// lexer state, reading `b` as the first byte of a new lexeme (plainly from the start state, or
/// on an inhibited branch) or going on from a lexeme that could not become `nl`, leads to a state
/// from which `nl` is reachable. A branch of [`needs_context`] that starts in a state from which
/// `nl` is not reachable can only reach it through such a byte.
fn nl_bytes(parser: &Parser, nl: TerminalId) -> [bool; 256] {
    let lexer = parser.lexer();
    let reaches = |s: LexState| lexer.reachable(s).contains(nl);
    let mut classes = vec![false; lexer.class_len()];
    for q in (0..lexer.state_len()).map(|i| LexState::from(i as u32)) {
        let entering = q == lexer.start() || !reaches(q);
        for (c, hit) in classes.iter_mut().enumerate() {
            let c = c as u8;
            *hit |= (entering && reaches(lexer.next_class(q, c)))
                || reaches(lexer.next_inhibited_class(q, c));
        }
    }
    std::array::from_fn(|b| classes[lexer.byte_class(b as u8) as usize])
}

/// Whether `prefix` (spaces and tabs), read from a fresh lexeme, is one `%ignore`d lexeme
/// that byte `next` ends without killing it: then a head reading `prefix` then `next...` from
/// a fresh lexeme goes on exactly as one that read `prefix` inside a newline lexeme and
/// completed it there.
fn same_as_ignored(parser: &Parser, prefix: &[u8], next: u8) -> bool {
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

/// What the parser sees of a token read from some heads: for each path of the lexer-only
/// walk, the head it starts from, the lexemes it completes (each as its lexer state, which
/// names its terminals, with the newline's width where the indenter reads it) and where it
/// ends. Two tokens with the same signature from the same heads are both allowed or both not:
/// a commit runs the parser along each path, and a head's GSS and indentation context after a
/// path depend only on the terminals and widths it shifts; liveness only on the head and the
/// final lexer configuration. Widths inside brackets are dropped (the indenter drops the
/// newline there), so `",\n"`, `",\n    "` and `",\n\n  "` share one. `None` when the walk
/// has more than [`SIGNATURE_PATHS`] paths (the token is then a class of its own).
fn signature(parser: &Parser, heads: &[HeadKey], bytes: &[u8]) -> Option<Signature> {
    let ind = parser.indenter()?;
    let nl = ind.newline();
    let lexer = parser.lexer();
    let normal = |b: Branch| -> Branch {
        let reads_width =
            !b.empty && b.depth.is_none_or(|d| d == 0) && lexer.reachable(b.state).contains(nl);
        if reads_width {
            b
        } else {
            Branch {
                width: 0,
                newline: false,
                ..b
            }
        }
    };
    let mut paths: Signature = heads
        .iter()
        .enumerate()
        .map(|(origin, &((state, inhibitor, empty), paren))| {
            let b = Branch {
                origin: origin as u32,
                state,
                inhibitor,
                empty,
                depth: Some(paren),
                width: 0,
                newline: false,
            };
            (normal(b), Events::new())
        })
        .collect();
    let mut next: Signature = Signature::new();
    for &byte in bytes {
        for (b, events) in &paths {
            let s = match b.inhibitor {
                Some(i) => lexer.next_inhibited(i, byte),
                None => lexer.next(b.state, byte),
            };
            if lexer.is_dead(s) {
                continue;
            }
            let (width, newline) = read_width(b, byte);
            if lexer.can_grow(s) {
                let grown = Branch {
                    state: s,
                    inhibitor: None,
                    empty: false,
                    width,
                    newline,
                    ..*b
                };
                next.push((normal(grown), events.clone()));
            }
            let accepted = lexer.accepted(s);
            if !accepted.is_empty() {
                let reads = accepted.contains(&nl) && b.depth.is_none_or(|d| d == 0);
                let mut events = events.clone();
                // An ignored lexeme, or a newline the indenter drops, leaves the head's node
                // and context as they were: the parser sees nothing.
                let unseen = accepted
                    .iter()
                    .all(|&t| parser.is_ignored(t) || (t == nl && b.depth.is_some_and(|d| d > 0)));
                if !unseen {
                    events.push(Event {
                        state: s,
                        width: reads.then_some((width, newline)),
                    });
                }
                let depth = if unseen {
                    b.depth
                } else if accepted.len() > 1 {
                    // A tie forks the parser: each terminal moves its own depth.
                    None
                } else {
                    indent_bracket_delta(ind, accepted[0], b.depth)
                };
                let fresh = Branch {
                    state: lexer.start(),
                    inhibitor: lexer.inhibits(s).then_some(s),
                    empty: true,
                    depth,
                    width: 0,
                    newline: false,
                    ..*b
                };
                next.push((fresh, events));
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.len() > SIGNATURE_PATHS {
            return None;
        }
        std::mem::swap(&mut paths, &mut next);
        next.clear();
    }
    // Where a path ends, only the head's liveness is asked, and some ends are live whatever
    // the parser says: a lexeme that may still become an ignored terminal (or a newline inside
    // brackets), and an empty lexeme. The latter because its head's node was made by a shift
    // (or is a head of the state, or its node after a lexeme the parser does not see), and in
    // a reduced grammar (every symbol derives some text; `cfg::reduce` makes it so) the stack
    // after a shift is a viable prefix, which some terminal continues or which the indenter's
    // final dedents accept: `is_head_live` holds. Such ends are one, whatever their state.
    for (b, _) in paths.iter_mut() {
        let live = b.empty
            || lexer
                .reachable(b.state)
                .iter()
                .any(|u| parser.is_ignored(u) || (u == nl && b.depth.is_some_and(|d| d > 0)));
        if live {
            *b = Branch {
                state: lexer.dead(),
                inhibitor: None,
                empty: false,
                depth: None,
                width: 0,
                newline: false,
                ..*b
            };
        }
    }
    paths.sort_unstable();
    paths.dedup();
    Some(paths)
}

/// The most paths [`signature`] follows.
const SIGNATURE_PATHS: usize = 64;

/// A token's [`signature`].
type Signature = smallvec::SmallVec<[(Branch, Events); 4]>;

/// The lexemes a path of [`signature`]'s walk completed.
type Events = smallvec::SmallVec<[Event; 4]>;

/// A branch of [`signature`]'s walk: the head it started from, its lexer configuration, the
/// bracket depth (`None`: unknown), and the width of its lexeme where the indenter may read it
/// (0 elsewhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Branch {
    origin: u32,
    state: LexState,
    inhibitor: Option<LexState>,
    empty: bool,
    depth: Option<u32>,
    width: u32,
    newline: bool,
}

/// A lexeme completed on a path of [`signature`]'s walk: the lexer state it ended in, and the
/// newline's (width, holds a `'\n'`) where the indenter reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Event {
    state: LexState,
    width: Option<(u32, bool)>,
}

/// The (width, holds a `'\n'`) of `b`'s lexeme after it reads `byte`, as
/// [`IndentCtx::read`](crate::parser::IndentCtx) counts them.
fn read_width(b: &Branch, byte: u8) -> (u32, bool) {
    let (w, newline) = if b.empty {
        (0, false)
    } else {
        (b.width, b.newline)
    };
    let width = match byte {
        b'\n' => 0,
        b' ' => w.saturating_add(1),
        b'\t' => w.saturating_add(crate::parser::TAB_LEN),
        _ => w,
    };
    (width, newline || byte == b'\n')
}

/// The contract for one token, by brute force.
fn allows(state: &ParserState, vocab: &Vocabulary, t: TokenId) -> bool {
    vocab
        .token_bytes(t)
        .is_some_and(|bytes| state.allows(bytes))
}

/// How a head in lexer state `s` (inside a lexeme) reads `bytes` while they extend its lexeme.
fn walk(parser: &Parser, mut s: LexState, bytes: &[u8]) -> Walk {
    let lexer = parser.lexer();
    for (i, &b) in bytes.iter().enumerate() {
        let next = lexer.next(s, b);
        if lexer.is_dead(next) {
            return if i == 0 {
                Walk::Boundary
            } else {
                Walk::Ends { len: i, state: s }
            };
        }
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
fn needs_context(parser: &Parser, config: LexConfig, paren_zero: bool, bytes: &[u8]) -> bool {
    let Some(ind) = parser.indenter() else {
        return false;
    };
    let nl = ind.newline();
    let lexer = parser.lexer();
    // (lexer state, inhibitor, lexeme empty, bracket depth when known: `None` is ≥ 1).
    type Branch = (LexState, Option<LexState>, bool, Option<u32>);
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

#[cfg(test)]
#[path = "indent_tests.rs"]
mod tests;
