//! The byte trie of a vocabulary's text tokens, in flat arrays laid out in preorder.
//!
//! Node 0 is the root (the empty prefix). Each other node is the prefix spelled by the edge bytes
//! on its path from the root. Nodes are numbered in preorder with children in ascending byte
//! order, so:
//!
//! - the first child of `n` (if any) is `n + 1`;
//! - the subtree of `n` is the index range `n .. subtree_end(n)`, so a walker that finds a prefix
//!   dead jumps to `subtree_end(n)` and lands on the next node to visit;
//! - the next sibling of a child `c` is `subtree_end(c)` while that is below `subtree_end(n)`.
//!
//! No child or parent pointers are stored: four `u32`/`u8` arrays per node plus the token lists.

use super::{VocabError, VocabErrorKind};
use crate::TokenId;

crate::define_id!(
    /// A node of a [`TokenTrie`]: an index in preorder, `0` being the root.
    TrieNode
);

impl TrieNode {
    /// The root (the empty prefix).
    pub const ROOT: TrieNode = TrieNode(0);
}

/// The byte trie of all text tokens of a [`Vocabulary`](super::Vocabulary).
///
/// Immutable once built; walk it depth-first with an explicit stack (no recursion is needed:
/// [`TokenTrie::children`] and [`TokenTrie::subtree_end`] give everything). Methods taking a
/// [`TrieNode`] panic if the node is not below [`TokenTrie::node_len`]: nodes only come from the
/// trie itself.
#[derive(Clone, Debug, Default)]
pub struct TokenTrie {
    /// Byte on the edge into each node (0 for the root).
    byte: Vec<u8>,
    /// Length in bytes of each node's prefix.
    depth: Vec<u32>,
    /// Preorder index past each node's subtree.
    end: Vec<u32>,
    /// `tokens[token_start[n]..token_start[n + 1]]` end exactly at node `n`.
    token_start: Vec<u32>,
    tokens: Vec<TokenId>,
    /// The root's children as `(byte, node, subtree end)`, in ascending byte order: one
    /// contiguous list, so that a walk can pick the first bytes it can read without touching
    /// the per-node arrays of those it cannot (they lie across the whole trie).
    first: Vec<(u8, TrieNode, TrieNode)>,
    /// The nodes below the root whose subtrees hold at least [`TokenTrie::WIDE_SUBTREE`]
    /// nodes, ascending, and for each the bytes on the edges strictly below it (bit `b % 64`
    /// of word `b / 64`): see [`TokenTrie::wide_subtrees`].
    wide: Vec<u32>,
    below: Vec<[u64; 4]>,
    /// Per entry of `wide`: its UTF-8 pairs ([`TokenTrie::utf8_subtrees`]).
    wide_utf8: Vec<Utf8Pairs>,
    /// Per token, in the order of `tokens`: the [`utf8`] state after its bytes.
    token_utf8: Vec<u8>,
}

/// The UTF-8 decoding of a byte string, as a small automaton: the state after a string says
/// where it stands inside a character. Lexers that accept any character somewhere (inside a
/// string, a comment) often move alike on every character, so a walker may find its state a
/// function of this one over a whole subtree ([`TokenTrie::utf8_subtrees`]).
pub mod utf8 {
    /// Between characters (the empty string's state).
    pub const BOUNDARY: u8 = 0;
    /// The valid states: [`BOUNDARY`], then inside a character: 1, 2, 3 continuation bytes
    /// (`80..=BF`) to go; after `E0` (`A0..=BF` next), after `ED` (`80..=9F` next), after `F0`
    /// (`90..=BF` next), after `F4` (`80..=8F` next).
    pub const STATES: usize = 8;
    /// Not UTF-8 (or not from a character boundary): every byte keeps it here.
    pub const INVALID: u8 = 8;

    /// The state after byte `b` from state `d`.
    #[inline]
    pub const fn next(d: u8, b: u8) -> u8 {
        let (lo, hi, to) = match d {
            0 => {
                return match b {
                    0x00..=0x7F => 0,
                    0xC2..=0xDF => 1,
                    0xE1..=0xEC | 0xEE..=0xEF => 2,
                    0xF1..=0xF3 => 3,
                    0xE0 => 4,
                    0xED => 5,
                    0xF0 => 6,
                    0xF4 => 7,
                    _ => INVALID,
                }
            }
            1 => (0x80, 0xBF, 0),
            2 => (0x80, 0xBF, 1),
            3 => (0x80, 0xBF, 2),
            4 => (0xA0, 0xBF, 1),
            5 => (0x80, 0x9F, 1),
            6 => (0x90, 0xBF, 2),
            7 => (0x80, 0x8F, 2),
            _ => return INVALID,
        };
        if lo <= b && b <= hi {
            to
        } else {
            INVALID
        }
    }
}

/// The UTF-8 steps on the edges strictly below a wide subtree's root (see
/// [`TokenTrie::utf8_subtrees`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Utf8Pairs {
    /// The [`utf8`] state after the root's bytes; [`utf8::INVALID`] also when some edge below
    /// leads to it (the subtree is then not described).
    pub root: u8,
    /// Per state `d` in `1..utf8::STATES`, bit `b - 0x80` of `cont[d - 1]`: some edge below the
    /// root reads continuation byte `b` from a node in state `d`. (Every other edge below the
    /// root reads from [`utf8::BOUNDARY`]: its byte is in the subtree's byte set.)
    pub cont: [u64; utf8::STATES - 1],
}

impl TokenTrie {
    /// Builds the trie of `(id, bytes)` pairs; several ids may share the same bytes.
    ///
    /// The caller guarantees that every `bytes` is non-empty and that the total length fits in a
    /// `u32` (the vocabulary checks both against its budgets first).
    pub(crate) fn build<'a>(tokens: impl IntoIterator<Item = (TokenId, &'a [u8])>) -> Self {
        let mut sorted: Vec<(TokenId, &[u8])> = tokens.into_iter().collect();
        // Lexicographic order of the bytes is preorder of the trie with sorted children; ties
        // by id so that `tokens_at` is sorted.
        sorted.sort_unstable_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)));

        let mut trie = TokenTrie {
            byte: vec![0],
            depth: vec![0],
            end: vec![0],
            token_start: vec![0],
            tokens: Vec::with_capacity(sorted.len()),
            first: Vec::new(),
            wide: Vec::new(),
            below: Vec::new(),
            wide_utf8: Vec::new(),
            token_utf8: Vec::new(),
        };
        // Nodes on the path to the previous token's node: `path[d]` has depth `d`.
        let mut path: Vec<u32> = vec![0];
        let mut prev: &[u8] = &[];
        // Tokens of the node being filled are pushed while it is the last node created, so the
        // `token_start` of a node is fixed when its successor is created.
        for (id, bytes) in sorted {
            let common = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            // Close the nodes deeper than the common prefix.
            while path.len() > common + 1 {
                let node = path.pop().unwrap_or(0);
                trie.end[node as usize] = trie.byte.len() as u32;
            }
            for (d, &b) in bytes.iter().enumerate().skip(common) {
                let node = trie.byte.len() as u32;
                trie.byte.push(b);
                trie.depth.push(d as u32 + 1);
                trie.end.push(0);
                trie.token_start.push(trie.tokens.len() as u32);
                path.push(node);
            }
            trie.tokens.push(id);
            prev = bytes;
        }
        let len = trie.byte.len() as u32;
        for node in path {
            trie.end[node as usize] = len;
        }
        trie.token_start.push(trie.tokens.len() as u32);
        trie.first = trie
            .children(trie.root())
            .map(|(b, c)| (b, c, trie.subtree_end(c)))
            .collect();
        trie.index_wide_subtrees();
        trie
    }

    /// Fills `wide`, `below`, `wide_utf8` and `token_utf8`: one pass in preorder for the
    /// [`utf8`] states, then one in reverse preorder, where a node comes after its whole
    /// subtree. `acc[d]` gathers the bytes (and UTF-8 steps) of the nodes at depth `d` met since
    /// their parent's previous child, with everything below them, so it holds a node's bytes
    /// below when the node is met (its children are at depth `d + 1`, its later siblings'
    /// children already taken by them).
    fn index_wide_subtrees(&mut self) {
        let n = self.node_len();
        let wide = |m: usize| self.end[m] as usize - m >= Self::WIDE_SUBTREE;
        let count = (1..n).filter(|&m| wide(m)).count();
        let mut nodes = vec![0u32; count];
        let mut below = vec![[0u64; 4]; count];
        let mut wide_utf8 = vec![Utf8Pairs::default(); count];
        let depth = self.depth.iter().copied().max().unwrap_or(0) as usize;
        // Per node: the UTF-8 state of its parent (the root's is the boundary).
        let mut parent_utf8 = vec![utf8::BOUNDARY; n];
        let mut token_utf8 = Vec::with_capacity(self.tokens.len());
        let mut path = vec![utf8::BOUNDARY; depth + 1];
        for (m, from) in parent_utf8.iter_mut().enumerate().skip(1) {
            let d = self.depth[m] as usize;
            *from = path[d - 1];
            path[d] = utf8::next(*from, self.byte[m]);
            let tokens = self.token_start[m + 1] - self.token_start[m];
            token_utf8.extend(std::iter::repeat_n(path[d], tokens as usize));
        }
        /// What a subtree's edges read: bytes, continuation bytes per state, any invalid step.
        #[derive(Clone, Copy, Default)]
        struct Acc {
            bytes: [u64; 4],
            cont: [u64; utf8::STATES - 1],
            invalid: bool,
        }
        let mut acc = vec![Acc::default(); depth + 2];
        let mut at = count;
        for m in (1..n).rev() {
            let d = self.depth[m] as usize;
            let mine = std::mem::take(&mut acc[d + 1]);
            let b = self.byte[m];
            let from = parent_utf8[m];
            let to = utf8::next(from, b);
            if wide(m) {
                at -= 1;
                nodes[at] = m as u32;
                below[at] = mine.bytes;
                wide_utf8[at] = Utf8Pairs {
                    root: if mine.invalid { utf8::INVALID } else { to },
                    cont: mine.cont,
                };
            }
            let up = &mut acc[d];
            for (u, x) in up.bytes.iter_mut().zip(mine.bytes) {
                *u |= x;
            }
            for (u, x) in up.cont.iter_mut().zip(mine.cont) {
                *u |= x;
            }
            up.bytes[b as usize / 64] |= 1 << (b % 64);
            up.invalid |= mine.invalid || to == utf8::INVALID;
            if to != utf8::INVALID && from != utf8::BOUNDARY {
                up.cont[from as usize - 1] |= 1 << (b - 0x80);
            }
        }
        self.wide = nodes;
        self.below = below;
        self.wide_utf8 = wide_utf8;
        self.token_utf8 = token_utf8;
    }

    /// The fewest nodes a subtree holds for [`TokenTrie::wide_subtrees`] to list its root.
    pub const WIDE_SUBTREE: usize = 8;

    /// The nodes below the root whose subtrees hold at least [`TokenTrie::WIDE_SUBTREE`]
    /// nodes (themselves included), ascending, and for each the set of bytes on the edges
    /// strictly below it, as 256 bits (byte `b` is bit `b % 64` of word `b / 64`). A walker
    /// whose state no byte of that set changes gives the whole subtree the node's state
    /// without visiting it.
    pub fn wide_subtrees(&self) -> (&[u32], &[[u64; 4]]) {
        (&self.wide, &self.below)
    }

    /// Per entry of [`TokenTrie::wide_subtrees`], the [`utf8`] steps below it; and per token
    /// (in the order of [`TokenTrie::token_ids`]), the [`utf8`] state after its bytes. A walker
    /// whose state, over a subtree, is a function of the UTF-8 state (one value per state,
    /// checked on every step the subtree holds: the bytes from the boundary, the continuation
    /// bytes from each other state) gives each token of the subtree the value of its state
    /// without visiting the subtree.
    pub fn utf8_subtrees(&self) -> (&[Utf8Pairs], &[u8]) {
        (&self.wide_utf8, &self.token_utf8)
    }

    /// Builds the trie of any `(id, bytes)` pairs, for walks over a subset of a vocabulary
    /// (one representative per token class, say); several ids may share the same bytes and the
    /// ids need not be a vocabulary's.
    ///
    /// Errors: an empty byte string ([`VocabErrorKind::EmptyToken`]), or more than
    /// [`Vocabulary::MAX_TOTAL_BYTES`](super::Vocabulary::MAX_TOTAL_BYTES) bytes in all
    /// ([`VocabErrorKind::TooLarge`]).
    pub fn from_tokens<'a>(
        tokens: impl IntoIterator<Item = (TokenId, &'a [u8])>,
    ) -> Result<Self, VocabError> {
        let tokens: Vec<(TokenId, &[u8])> = tokens.into_iter().collect();
        let mut total = 0usize;
        for &(id, bytes) in &tokens {
            if bytes.is_empty() {
                return Err(VocabError::new(VocabErrorKind::EmptyToken {
                    source: "token trie".to_owned(),
                    id: id.as_u32(),
                }));
            }
            total += bytes.len();
        }
        let limit = super::Vocabulary::MAX_TOTAL_BYTES;
        if total > limit {
            return Err(VocabError::new(VocabErrorKind::TooLarge {
                source: "token trie".to_owned(),
                what: "total token bytes",
                given: total as u64,
                limit: limit as u64,
            }));
        }
        Ok(Self::build(tokens))
    }

    /// The root node (the empty prefix; no token ends there).
    #[inline]
    pub fn root(&self) -> TrieNode {
        TrieNode::ROOT
    }

    /// The number of nodes, root included. Valid nodes are `0..node_len()`.
    #[inline]
    pub fn node_len(&self) -> usize {
        self.byte.len()
    }

    /// The children of `n` with the byte on each edge, in ascending byte order.
    pub fn children(&self, n: TrieNode) -> Children<'_> {
        Children {
            trie: self,
            next: n.0 + 1,
            end: self.end[n.as_usize()],
        }
    }

    /// The root's children as `(byte, node, subtree end)`, in ascending byte order (what
    /// [`TokenTrie::children`] and [`TokenTrie::subtree_end`] give for the root, read from
    /// one short list).
    #[inline]
    pub fn first_children(&self) -> &[(u8, TrieNode, TrieNode)] {
        &self.first
    }

    /// The child of `n` along `byte`, if any (a linear scan of the children).
    pub fn child(&self, n: TrieNode, byte: u8) -> Option<TrieNode> {
        self.children(n)
            .take_while(|&(b, _)| b <= byte)
            .find(|&(b, _)| b == byte)
            .map(|(_, c)| c)
    }

    /// The node spelling `bytes` from the root, if it is a prefix of some token.
    pub fn find(&self, bytes: &[u8]) -> Option<TrieNode> {
        bytes.iter().try_fold(self.root(), |n, &b| self.child(n, b))
    }

    /// The tokens whose bytes end exactly at `n`, in ascending id order.
    #[inline]
    pub fn tokens_at(&self, n: TrieNode) -> &[TokenId] {
        let i = n.as_usize();
        &self.tokens[self.token_start[i] as usize..self.token_start[i + 1] as usize]
    }

    /// Every entry's id in preorder of the nodes they end at (ties by id): `tokens_at(n)` is
    /// `token_ids()[token_offset(n)..]`, as long as it is.
    #[inline]
    pub fn token_ids(&self) -> &[TokenId] {
        &self.tokens
    }

    /// The place of `tokens_at(n)` in [`TokenTrie::token_ids`].
    #[inline]
    pub fn token_offset(&self, n: TrieNode) -> usize {
        self.token_start[n.as_usize()] as usize
    }

    /// The preorder index just past `n`'s subtree: the next node a depth-first walk visits
    /// after skipping everything below `n`. Equals `node_len()` for the last subtree.
    #[inline]
    pub fn subtree_end(&self, n: TrieNode) -> TrieNode {
        TrieNode(self.end[n.as_usize()])
    }

    /// The length in bytes of the prefix `n` spells (0 for the root).
    #[inline]
    pub fn depth(&self, n: TrieNode) -> usize {
        self.depth[n.as_usize()] as usize
    }

    /// The byte on the edge into `n` (0 for the root, which has no edge).
    #[inline]
    pub fn byte(&self, n: TrieNode) -> u8 {
        self.byte[n.as_usize()]
    }

    /// The number of (node, token) entries, i.e. the number of text tokens.
    #[inline]
    pub fn token_len(&self) -> usize {
        self.tokens.len()
    }

    /// The longest prefix of `bytes` that is a token, as `(length, smallest id with those
    /// bytes)`.
    pub fn longest_match(&self, bytes: &[u8]) -> Option<(usize, TokenId)> {
        let mut best = None;
        let mut node = self.root();
        for (i, &b) in bytes.iter().enumerate() {
            match self.child(node, b) {
                Some(c) => node = c,
                None => break,
            }
            if let Some(&id) = self.tokens_at(node).first() {
                best = Some((i + 1, id));
            }
        }
        best
    }
}

/// The children of a trie node, in ascending byte order: see [`TokenTrie::children`].
#[derive(Clone, Debug)]
pub struct Children<'a> {
    trie: &'a TokenTrie,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_> {
    type Item = (u8, TrieNode);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let c = self.next;
        self.next = self.trie.end[c as usize];
        Some((self.trie.byte[c as usize], TrieNode(c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trie(tokens: &[&str]) -> TokenTrie {
        TokenTrie::build(
            tokens
                .iter()
                .enumerate()
                .map(|(i, t)| (TokenId::from_usize(i), t.as_bytes())),
        )
    }

    /// Every node's prefix, rebuilt by a stack walk: checks preorder, depth and sorted
    /// children together.
    fn prefixes(t: &TokenTrie) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new(); t.node_len()];
        let mut stack = vec![t.root()];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            assert_eq!(n.as_usize(), seen, "nodes are visited in preorder");
            seen += 1;
            let kids: Vec<_> = t.children(n).collect();
            assert!(kids.windows(2).all(|w| w[0].0 < w[1].0));
            for &(b, c) in kids.iter().rev() {
                let mut p = out[n.as_usize()].clone();
                p.push(b);
                assert_eq!(t.byte(c), b);
                assert_eq!(t.depth(c), p.len());
                out[c.as_usize()] = p;
                stack.push(c);
            }
        }
        assert_eq!(seen, t.node_len());
        out
    }

    #[test]
    fn shape_of_a_small_trie() {
        let t = trie(&["ab", "a", "b", "abc", "ab", "ba"]);
        // root, a, ab, abc, b, ba
        assert_eq!(t.node_len(), 6);
        let p = prefixes(&t);
        let names: Vec<&[u8]> = p.iter().map(|v| v.as_slice()).collect();
        assert_eq!(names, [&b""[..], b"a", b"ab", b"abc", b"b", b"ba"]);
        let ids = |n: u32| -> Vec<u32> {
            t.tokens_at(TrieNode(n))
                .iter()
                .map(|i| i.as_u32())
                .collect()
        };
        assert_eq!(ids(0), Vec::<u32>::new());
        assert_eq!(ids(1), [1]);
        assert_eq!(ids(2), [0, 4]);
        assert_eq!(ids(3), [3]);
        assert_eq!(ids(4), [2]);
        assert_eq!(ids(5), [5]);
        let ends: Vec<u32> = (0..6).map(|n| t.subtree_end(TrieNode(n)).0).collect();
        assert_eq!(ends, [6, 4, 4, 4, 6, 6]);
        assert_eq!(
            t.first_children(),
            [
                (b'a', TrieNode(1), TrieNode(4)),
                (b'b', TrieNode(4), TrieNode(6))
            ]
        );
        assert_eq!(t.token_len(), 6);
        let all: Vec<u32> = t.token_ids().iter().map(|i| i.as_u32()).collect();
        assert_eq!(all, [1, 0, 4, 3, 2, 5]);
        assert_eq!(
            (t.token_offset(TrieNode(2)), t.token_offset(TrieNode(4))),
            (1, 4)
        );
        assert_eq!(t.find(b"ab"), Some(TrieNode(2)));
        assert_eq!(t.find(b"ac"), None);
        assert_eq!(t.longest_match(b"abd"), Some((2, TokenId::from_usize(0))));
        assert_eq!(t.longest_match(b"c"), None);
    }

    #[test]
    fn from_tokens_checks_its_input() {
        let id = TokenId::from_usize;
        let t = TokenTrie::from_tokens([(id(7), &b"ab"[..]), (id(3), b"a")]).unwrap();
        assert_eq!(t.node_len(), 3);
        assert_eq!(t.tokens_at(TrieNode(1)), [id(3)]);
        assert_eq!(t.tokens_at(TrieNode(2)), [id(7)]);
        let err = TokenTrie::from_tokens([(id(1), &b"a"[..]), (id(2), b"")]).unwrap_err();
        assert!(
            matches!(err.kind(), VocabErrorKind::EmptyToken { id: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn empty_trie_is_just_the_root() {
        let t = trie(&[]);
        assert_eq!(t.node_len(), 1);
        assert_eq!(t.children(t.root()).count(), 0);
        assert_eq!(t.subtree_end(t.root()).as_usize(), 1);
        assert!(t.tokens_at(t.root()).is_empty());
    }

    #[test]
    fn every_token_is_found_at_its_node() {
        let words = [
            "x", "xy", "xyz", "y", "\u{ff}", "zz", "z", "xyzzy", "a b", "a", "", "ab",
        ];
        let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
        let t = trie(&words);
        let p = prefixes(&t);
        for (i, w) in words.iter().enumerate() {
            let n = t.find(w.as_bytes()).expect("token is in the trie");
            assert_eq!(p[n.as_usize()], w.as_bytes());
            assert!(t.tokens_at(n).contains(&TokenId::from_usize(i)));
        }
        // A subtree holds exactly the prefixes that extend its root's prefix.
        for n in 0..t.node_len() {
            let end = t.subtree_end(TrieNode(n as u32)).as_usize();
            for (m, pm) in p.iter().enumerate() {
                let inside = m >= n && m < end;
                assert_eq!(inside, pm.starts_with(&p[n]), "node {m} vs subtree of {n}");
            }
        }
    }

    #[test]
    fn wide_subtrees_list_the_bytes_below_them() {
        // Words over a few bytes, so that some subtrees are wide and their byte sets differ.
        let alphabet: [&[u8]; 8] = [b"a", b"b", b"\"", b"\xc3", b"\x80", b"\\", b"\xc8", b"\x07"];
        let t = random_trie(0x2545_f491_4f6c_dd1d, 600, &alphabet, 6);
        let p = prefixes(&t);
        let (nodes, below) = t.wide_subtrees();
        assert_eq!(nodes.len(), below.len());
        let expected: Vec<u32> = (1..t.node_len() as u32)
            .filter(|&n| {
                t.subtree_end(TrieNode(n)).as_usize() - n as usize >= TokenTrie::WIDE_SUBTREE
            })
            .collect();
        assert!(expected.len() > 5, "the test needs wide subtrees");
        assert_eq!(nodes, expected.as_slice());
        for (&n, bits) in nodes.iter().zip(below) {
            let end = t.subtree_end(TrieNode(n)).as_usize();
            let mut want = [0u64; 4];
            for prefix in &p[n as usize + 1..end] {
                let b = *prefix.last().expect("below the root");
                want[b as usize / 64] |= 1 << (b % 64);
            }
            assert_eq!(*bits, want, "bytes below node {n}");
        }
    }

    /// The trie of `count` words of one to `max_len` of `pieces` each, drawn from `seed`.
    fn random_trie(seed: u64, count: usize, pieces: &[&[u8]], max_len: u64) -> TokenTrie {
        let mut state = seed;
        let words: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let len = 1 + (state % max_len) as usize;
                (0..len)
                    .flat_map(|i| pieces[(state >> (8 + 4 * i)) as usize % pieces.len()].to_vec())
                    .collect()
            })
            .collect();
        TokenTrie::build(
            words
                .iter()
                .enumerate()
                .map(|(i, w)| (TokenId::from_usize(i), w.as_slice())),
        )
    }

    /// The state after `bytes` from the boundary.
    fn utf8_state(bytes: &[u8]) -> u8 {
        bytes.iter().fold(utf8::BOUNDARY, |d, &b| utf8::next(d, b))
    }

    #[test]
    fn utf8_states_follow_the_standard_decoder() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = [
            b'a', 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xec,
            0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff,
        ];
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 7) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| alphabet[(state >> (8 + 5 * i)) as usize % alphabet.len()])
                .collect();
            let d = utf8_state(&bytes);
            let decoded = std::str::from_utf8(&bytes);
            // Complete characters: the boundary; a valid prefix cut inside one: another valid
            // state; anything else: invalid.
            assert_eq!(d == utf8::BOUNDARY, decoded.is_ok(), "{bytes:x?}");
            let cut = matches!(decoded, Err(e) if e.error_len().is_none());
            assert_eq!(d != utf8::BOUNDARY && d != utf8::INVALID, cut, "{bytes:x?}");
        }
    }

    #[test]
    fn utf8_subtrees_list_the_steps_below_them() {
        // Tokens of ASCII, whole and cut characters of every length, and stray bytes.
        let pieces: [&[u8]; 12] = [
            b"a",
            b"\"",
            " é".as_bytes(),
            "日".as_bytes(),
            "🦀".as_bytes(),
            "\u{800}".as_bytes(),
            "\u{d7ff}".as_bytes(),
            "\u{10ffff}".as_bytes(),
            b"\xe6\x97",
            b"\x80",
            b"\xbf\xbf",
            b"\xff",
        ];
        let t = random_trie(0x51_7cc1_b727_220a, 1500, &pieces, 3);
        let p = prefixes(&t);
        let (nodes, _) = t.wide_subtrees();
        let (pairs, token_utf8) = t.utf8_subtrees();
        assert_eq!(pairs.len(), nodes.len());
        let (mut described, mut invalid) = (0, 0);
        for (&n, got) in nodes.iter().zip(pairs) {
            let end = t.subtree_end(TrieNode(n)).as_usize();
            let mut want = Utf8Pairs {
                root: utf8_state(&p[n as usize]),
                cont: [0; utf8::STATES - 1],
            };
            let mut bad = want.root == utf8::INVALID;
            for prefix in &p[n as usize + 1..end] {
                let (&b, up) = prefix.split_last().expect("below the root");
                let from = utf8_state(up);
                if utf8::next(from, b) == utf8::INVALID {
                    bad = true;
                } else if from != utf8::BOUNDARY {
                    want.cont[from as usize - 1] |= 1 << (b - 0x80);
                }
            }
            if bad {
                want.root = utf8::INVALID;
                invalid += 1;
            } else {
                described += 1;
            }
            assert_eq!(*got, want, "steps below node {n}");
        }
        assert!(
            described > 5 && invalid > 5,
            "{described} described, {invalid} not"
        );
        let tokens: Vec<u8> = (0..t.node_len())
            .flat_map(|n| {
                let d = utf8_state(&p[n]);
                t.tokens_at(TrieNode::from_usize(n)).iter().map(move |_| d)
            })
            .collect();
        assert_eq!(token_utf8, tokens.as_slice());
    }
}
