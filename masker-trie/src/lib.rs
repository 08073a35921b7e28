//! # munch-masker-trie
//!
//! The reference masker: a depth-first walk of the vocabulary's byte trie that lexes each token
//! speculatively from every head of the parser state, prunes a subtree as soon as its prefix is
//! dead, and marks the tokens whose bytes leave the state live. Cheap to build (nothing beyond
//! the vocabulary's trie), exact by construction, and the masker the others are checked against
//! besides the oracle.
//!
//! ## How a walk goes
//!
//! The trie is stored in preorder, so the walk is a linear scan over node indices that jumps
//! past a dead node's subtree. For each prefix it keeps a [`Frame`]:
//!
//! - **Inside the lexeme** (the common case): every head's stack is unchanged and only its lexer
//!   state moves, one DFA lookup per byte. The prefix is live iff some head's lexer state can
//!   still complete a terminal that head's stack can shift (or an ignored one): one bitset
//!   intersection, against the head's shiftable set computed once per mask.
//! - **Past a lexeme boundary** (a byte that does not extend a completed lexeme, so a terminal
//!   must reach the parser): the walk commits the prefix to a clone of the real
//!   [`ParserState`] and continues the subtree with real commits, one byte per node. This is the
//!   parser's own code path, so it cannot disagree with `commit`.
//!
//! Keeping the completed-but-extendable lexeme pending instead of forking an inhibited branch is
//! equivalent for liveness: the inhibited branch is live iff its terminal is shiftable, and that
//! terminal is in the pending state's reachable set.

#![deny(missing_docs)]

use std::sync::Arc;

use smallvec::SmallVec;

use munch_glr::mask::{set_eos, MaskCache, Masker, TokenMask};
use munch_glr::parser::{Parser, ParserState, ShiftCache};
use munch_lexer::dfa::TerminalSet;
use munch_lexer::vocab::{TrieNode, Vocabulary};
use munch_lexer::LexState;

/// The trie masker. Immutable, `Send + Sync`.
pub struct TrieMasker {
    parser: Arc<Parser>,
    vocab: Arc<Vocabulary>,
    /// The `%ignore`d terminals: reaching one keeps a head live.
    ignored: TerminalSet,
}

impl TrieMasker {
    /// A trie masker for `parser`'s grammar over `vocab`. Building costs nothing beyond the
    /// vocabulary's trie, which the vocabulary already holds.
    pub fn new(parser: Arc<Parser>, vocab: Arc<Vocabulary>) -> Self {
        let terminals = parser.terminal_len();
        let mut ignored = TerminalSet::new(terminals);
        for t in (0..terminals).map(munch_lexer::TerminalId::from_usize) {
            if parser.is_ignored(t) {
                ignored.insert(t);
            }
        }
        TrieMasker {
            parser,
            vocab,
            ignored,
        }
    }
}

/// Where the walk stands after a prefix.
#[derive(Clone)]
enum Frame {
    /// Every surviving head is inside its lexeme: `(head index, lexer state)`.
    Lexing(SmallVec<[(u32, LexState); 2]>),
    /// Past a lexeme boundary: the real parser state after the prefix.
    Parsing(ParserState),
}

/// One head of the state being masked, as the fast path needs it.
struct HeadInfo {
    lex: LexState,
    inhibitor: Option<LexState>,
    /// Terminals this head's stack can shift, plus the ignored ones.
    goes_on: TerminalSet,
}

/// Scratch space of [`TrieMasker`].
struct Cache {
    shift: ShiftCache,
    heads: Vec<HeadInfo>,
    /// `frames[d]`: the frame after the first `d` bytes of the current path.
    frames: Vec<Frame>,
    /// The bytes of the current path.
    path: Vec<u8>,
}

impl Masker for TrieMasker {
    fn name(&self) -> &str {
        "trie"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(Cache {
            shift: ShiftCache::new(),
            heads: Vec::new(),
            frames: Vec::new(),
            path: Vec::new(),
        })
    }

    fn fill_mask(&self, cache: &mut MaskCache, state: &ParserState, mask: &mut TokenMask) {
        let cache: &mut Cache = cache.get_mut();
        mask.clear();
        self.prepare_heads(cache, state);
        let trie = self.vocab.trie();
        cache.frames.clear();
        cache.frames.push(Frame::Lexing(
            (0..cache.heads.len() as u32)
                .map(|h| (h, cache.heads[h as usize].lex))
                .collect(),
        ));
        cache.path.clear();
        let lexer = self.parser.lexer();
        let end = trie.node_len();
        let mut n = 1;
        while n < end {
            let node = TrieNode::new(n as u32);
            let depth = trie.depth(node);
            let byte = trie.byte(node);
            cache.frames.truncate(depth);
            cache.path.truncate(depth - 1);
            cache.path.push(byte);
            let next = match &cache.frames[depth - 1] {
                Frame::Lexing(heads) => {
                    self.step_lexing(&cache.heads, heads, depth, byte, lexer, state, &cache.path)
                }
                Frame::Parsing(parsed) => {
                    let mut next = parsed.clone();
                    match next.commit_bytes(&[byte]) {
                        Ok(()) if next.is_live() => Some(Frame::Parsing(next)),
                        _ => None,
                    }
                }
            };
            match next {
                Some(frame) => {
                    for &t in trie.tokens_at(node) {
                        mask.insert(t);
                    }
                    cache.frames.push(frame);
                    n += 1;
                }
                // Liveness is monotone: no extension of a dead prefix is live.
                None => n = trie.subtree_end(node).as_usize(),
            }
        }
        set_eos(&self.vocab, state, mask);
    }
}

impl TrieMasker {
    /// Fills `cache.heads` with each head's lexer configuration and the terminals its stack can
    /// take.
    fn prepare_heads(&self, cache: &mut Cache, state: &ParserState) {
        cache.shift.clear();
        cache.heads.clear();
        let terminals = self.parser.terminal_len();
        for head in state.heads() {
            let mut goes_on = self.ignored.clone();
            for t in (0..terminals).map(munch_lexer::TerminalId::from_usize) {
                if !goes_on.contains(t) && self.parser.can_shift(head.node(), t, &mut cache.shift) {
                    goes_on.insert(t);
                }
            }
            cache.heads.push(HeadInfo {
                lex: head.lex_state(),
                inhibitor: head.inhibitor(),
                goes_on,
            });
        }
    }

    /// The frame after `byte`, from a frame where every head is inside its lexeme; `None` when
    /// the prefix is dead.
    #[allow(clippy::too_many_arguments)]
    fn step_lexing(
        &self,
        infos: &[HeadInfo],
        heads: &[(u32, LexState)],
        depth: usize,
        byte: u8,
        lexer: &munch_lexer::dfa::Lexer,
        state: &ParserState,
        path: &[u8],
    ) -> Option<Frame> {
        let mut out: SmallVec<[(u32, LexState); 2]> = SmallVec::new();
        for &(h, s) in heads {
            let info = &infos[h as usize];
            if depth == 1 {
                if let Some(inhibitor) = info.inhibitor {
                    if lexer.extends(inhibitor, byte) {
                        // The inhibited terminal would have been a shorter match: this head dies.
                        continue;
                    }
                }
            }
            let next = lexer.next(s, byte);
            if lexer.is_dead(next) {
                if lexer.accepted(s).is_empty() {
                    continue;
                }
                // A terminal ends here and must reach the parser: switch to real commits.
                let mut parsed = state.clone();
                return match parsed.commit_bytes(path) {
                    Ok(()) if parsed.is_live() => Some(Frame::Parsing(parsed)),
                    _ => None,
                };
            }
            if lexer.reachable(next).intersects(&info.goes_on) {
                out.push((h, next));
            }
        }
        if out.is_empty() {
            None
        } else {
            Some(Frame::Lexing(out))
        }
    }
}
