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

    /// Fills `wide` and `below`: one pass in reverse preorder, where a node comes after its
    /// whole subtree. `acc[d]` gathers the bytes of the nodes at depth `d` met since their
    /// parent's previous child, with everything below them, so it holds a node's bytes below
    /// when the node is met (its children are at depth `d + 1`, its later siblings' children
    /// already taken by them).
    fn index_wide_subtrees(&mut self) {
        let n = self.node_len();
        let wide = |m: usize| self.end[m] as usize - m >= Self::WIDE_SUBTREE;
        let count = (1..n).filter(|&m| wide(m)).count();
        let mut nodes = vec![0u32; count];
        let mut below = vec![[0u64; 4]; count];
        let depth = self.depth.iter().copied().max().unwrap_or(0) as usize;
        let mut acc = vec![[0u64; 4]; depth + 2];
        let mut at = count;
        for m in (1..n).rev() {
            let d = self.depth[m] as usize;
            let mine = std::mem::take(&mut acc[d + 1]);
            if wide(m) {
                at -= 1;
                nodes[at] = m as u32;
                below[at] = mine;
            }
            let b = self.byte[m];
            let up = &mut acc[d];
            for (u, x) in up.iter_mut().zip(mine) {
                *u |= x;
            }
            up[b as usize / 64] |= 1 << (b % 64);
        }
        self.wide = nodes;
        self.below = below;
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
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut words: Vec<Vec<u8>> = Vec::new();
        for _ in 0..600 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 1 + (state % 6) as usize;
            let alphabet = [b'a', b'b', b'"', 0xc3, 0x80, b'\\', 200, 7];
            let word = (0..len)
                .map(|i| alphabet[(state >> (8 + 3 * i)) as usize % alphabet.len()])
                .collect();
            words.push(word);
        }
        let t = TokenTrie::build(
            words
                .iter()
                .enumerate()
                .map(|(i, w)| (TokenId::from_usize(i), w.as_slice())),
        );
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
}
