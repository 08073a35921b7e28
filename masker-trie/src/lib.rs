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
//! past a dead node's subtree. Heads of the state are independent (the state after a token is
//! the union of what each head becomes), so the walk carries, per prefix, a small list of
//! configurations `(stack, lexer state)`:
//!
//! - **Inside a lexeme** (most bytes): only the lexer state moves, one DFA lookup. The
//!   configuration stays iff its lexer state can still complete a terminal that its stack can
//!   shift, or an ignored one: one bitset intersection against the stack's `goes_on` set.
//! - **At a lexeme boundary** (a byte that does not extend a completed lexeme): each tied
//!   terminal is shifted onto the stack with [`Parser::shift_from`] — speculative GSS nodes,
//!   memoised per (stack, terminal) for the whole mask — and the byte starts a new lexeme.
//!
//! A token is allowed iff some configuration survives its last byte. Keeping a completed but
//! extendable lexeme pending, instead of forking an inhibited branch as `commit` does, is
//! equivalent for liveness: the inhibited branch is live iff its terminal can be shifted, and
//! that terminal is in the pending lexer state's reachable set. The oracle cross-checks all of
//! this on every test corpus.

#![deny(missing_docs)]

use std::sync::Arc;

use smallvec::SmallVec;

use ahash::AHashMap;
use munch_glr::gss::GssNode;
use munch_glr::mask::{set_eos, MaskCache, Masker, TokenMask};
use munch_glr::parser::{Parser, ParserState, ShiftCache};
use munch_lexer::dfa::TerminalSet;
use munch_lexer::vocab::{TrieNode, Vocabulary};
use munch_lexer::{LexState, TerminalId};

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
        for t in (0..terminals).map(TerminalId::from_usize) {
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

/// A configuration of the walk: a stack (index into [`Cache::stacks`]) and a lexer state.
type Config = (u32, LexState);

/// A stack the walk can be on: a real head's node, or speculative nodes after shifting
/// terminals past a lexeme boundary.
struct Stack {
    frontier: SmallVec<[GssNode; 2]>,
    /// Terminals this stack can shift, plus the ignored ones: reaching one keeps a
    /// configuration live.
    goes_on: TerminalSet,
}

/// Scratch space of [`TrieMasker`], reused across masks.
struct Cache {
    shift: ShiftCache,
    stacks: Vec<Stack>,
    /// `(stack, terminal)` → the stack after shifting it (`None`: cannot be shifted).
    shifted: AHashMap<(u32, TerminalId), Option<u32>>,
    /// `frames[d]`: the configurations after the first `d` bytes of the current path.
    frames: Vec<SmallVec<[Config; 2]>>,
    /// Each base head's inhibitor: the first byte must not extend it.
    inhibitors: Vec<Option<LexState>>,
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
            stacks: Vec::new(),
            shifted: AHashMap::new(),
            frames: Vec::new(),
            inhibitors: Vec::new(),
        })
    }

    fn fill_mask(&self, cache: &mut MaskCache, state: &ParserState, mask: &mut TokenMask) {
        let cache: &mut Cache = cache.get_mut();
        mask.clear();
        cache.shift.clear();
        cache.stacks.clear();
        cache.shifted.clear();
        cache.inhibitors.clear();
        let mut base: SmallVec<[Config; 2]> = SmallVec::new();
        for head in state.heads() {
            let stack = self.push_stack(cache, SmallVec::from_elem(head.node().clone(), 1));
            base.push((stack, head.lex_state()));
            cache.inhibitors.push(head.inhibitor());
        }
        cache.frames.clear();
        cache.frames.push(base);
        let trie = self.vocab.trie();
        let end = trie.node_len();
        let mut next: SmallVec<[Config; 2]> = SmallVec::new();
        let mut n = 1;
        while n < end {
            let node = TrieNode::new(n as u32);
            let depth = trie.depth(node);
            cache.frames.truncate(depth);
            next.clear();
            self.step(cache, depth, trie.byte(node), &mut next);
            if next.is_empty() {
                // Liveness is monotone: no extension of a dead prefix is live.
                n = trie.subtree_end(node).as_usize();
                continue;
            }
            for &t in trie.tokens_at(node) {
                mask.insert(t);
            }
            cache.frames.push(next.clone());
            n += 1;
        }
        set_eos(&self.vocab, state, mask);
    }
}

impl TrieMasker {
    /// Adds a stack with its `goes_on` set; returns its index.
    fn push_stack(&self, cache: &mut Cache, frontier: SmallVec<[GssNode; 2]>) -> u32 {
        let mut goes_on = self.ignored.clone();
        for t in (0..self.parser.terminal_len()).map(TerminalId::from_usize) {
            if !goes_on.contains(t)
                && frontier
                    .iter()
                    .any(|n| self.parser.can_shift(n, t, &mut cache.shift))
            {
                goes_on.insert(t);
            }
        }
        cache.stacks.push(Stack { frontier, goes_on });
        (cache.stacks.len() - 1) as u32
    }

    /// The stack after shifting `t` onto `stack`, memoised for this mask.
    fn shift(&self, cache: &mut Cache, stack: u32, t: TerminalId) -> Option<u32> {
        if let Some(&known) = cache.shifted.get(&(stack, t)) {
            return known;
        }
        let mut frontier: SmallVec<[GssNode; 2]> = SmallVec::new();
        for node in cache.stacks[stack as usize].frontier.clone() {
            // A budget error means `commit` would refuse the token too: no stack.
            if let Ok(nodes) = self.parser.shift_from(&node, t) {
                for n in nodes {
                    if !frontier.iter().any(|f| f.id() == n.id()) {
                        frontier.push(n);
                    }
                }
            }
        }
        let result = (!frontier.is_empty()).then(|| self.push_stack(cache, frontier));
        cache.shifted.insert((stack, t), result);
        result
    }

    /// The configurations after `byte`, from those of `frames[depth - 1]`, into `out`.
    fn step(&self, cache: &mut Cache, depth: usize, byte: u8, out: &mut SmallVec<[Config; 2]>) {
        let lexer = self.parser.lexer();
        for i in 0..cache.frames[depth - 1].len() {
            let (stack, s) = cache.frames[depth - 1][i];
            if depth == 1 {
                if let Some(inhibitor) = cache.inhibitors[i] {
                    if lexer.extends(inhibitor, byte) {
                        // The inhibited terminal would have been a shorter match: this head dies.
                        continue;
                    }
                }
            }
            let grown = lexer.next(s, byte);
            if !lexer.is_dead(grown) {
                if lexer
                    .reachable(grown)
                    .intersects(&cache.stacks[stack as usize].goes_on)
                {
                    out.push((stack, grown));
                }
                continue;
            }
            // A lexeme boundary: each tied terminal goes to the parser, then `byte` starts the
            // next lexeme.
            let fresh = lexer.next(lexer.start(), byte);
            if lexer.is_dead(fresh) {
                continue;
            }
            for &t in lexer.accepted(s) {
                let after = if self.parser.is_ignored(t) {
                    Some(stack)
                } else {
                    self.shift(cache, stack, t)
                };
                if let Some(after) = after {
                    if lexer
                        .reachable(fresh)
                        .intersects(&cache.stacks[after as usize].goes_on)
                        && !out.contains(&(after, fresh))
                    {
                        out.push((after, fresh));
                    }
                }
            }
        }
    }
}
