//! Per lexer point, the terminal spans its tokens realise, as a trie in preorder.
//!
//! A point's trie is the part of the global terminal-span trie ([`Taus`]) its spans use. Nodes
//! are stored in preorder, each with the index one past its subtree, so a walk skips a subtree
//! in one step; each span (leaf) carries its classes as a range of one array.

use munch_lexer::spans::ClassId;

use crate::tau::Taus;

/// A node of a point's trie.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PNode {
    /// The node of the global trie.
    pub global: u32,
    /// The accepted set on the edge into it (the root's is 0, unused).
    pub acc: u32,
    /// Preorder index one past this node's subtree (absolute).
    pub end: u32,
    /// This node's leaves: `leaves[leaf_lo..leaf_hi]`.
    pub leaf_lo: u32,
    pub leaf_hi: u32,
}

/// A terminal span of a point with its classes `classes[class_lo..class_hi]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PLeaf {
    /// The span's reach set (see [`Taus::reaches`]).
    pub reach: u32,
    pub class_lo: u32,
    pub class_hi: u32,
}

/// Every point's trie, flattened.
#[derive(Default)]
pub(crate) struct PointTries {
    /// Per point: its nodes `nodes[lo..hi]`, the root first (empty when no token lives there).
    pub roots: Vec<(u32, u32)>,
    pub nodes: Vec<PNode>,
    pub leaves: Vec<PLeaf>,
    pub classes: Vec<ClassId>,
}

impl PointTries {
    /// Adds the next point's trie from its spans: `(terminal span, its classes)`.
    pub(crate) fn push_point(&mut self, taus: &Taus, spans: &[(u32, Vec<ClassId>)]) {
        let lo = self.nodes.len() as u32;
        if spans.is_empty() {
            self.roots.push((lo, lo));
            return;
        }
        // The global nodes on the spans' paths, with their children here and their spans.
        let mut local: ahash::AHashMap<u32, (Vec<u32>, Vec<u32>)> = ahash::AHashMap::new();
        local.insert(0, (Vec::new(), Vec::new()));
        let mut linked: ahash::AHashSet<u32> = ahash::AHashSet::new();
        for (i, &(tau, _)) in spans.iter().enumerate() {
            let mut x = taus.taus[tau as usize].node;
            local.entry(x).or_default().1.push(i as u32);
            // Link `x` into its parent, and so on up: a linked node's ancestors are linked.
            while x != 0 && linked.insert(x) {
                let parent = taus.nodes[x as usize].parent;
                local.entry(parent).or_default().0.push(x);
                x = parent;
            }
        }
        for (children, _) in local.values_mut() {
            children.sort_unstable();
        }
        // Preorder with an explicit stack: (global node, index of its PNode or NONE if not yet
        // emitted).
        let mut stack: Vec<(u32, Option<usize>)> = vec![(0, None)];
        while let Some((x, emitted)) = stack.pop() {
            match emitted {
                None => {
                    let (children, own) = &local[&x];
                    let leaf_lo = self.leaves.len() as u32;
                    for &i in own {
                        let (tau, classes) = &spans[i as usize];
                        let c_lo = self.classes.len() as u32;
                        self.classes.extend_from_slice(classes);
                        self.leaves.push(PLeaf {
                            reach: taus.taus[*tau as usize].reach,
                            class_lo: c_lo,
                            class_hi: self.classes.len() as u32,
                        });
                    }
                    self.nodes.push(PNode {
                        global: x,
                        acc: taus.nodes[x as usize].acc,
                        end: 0,
                        leaf_lo,
                        leaf_hi: self.leaves.len() as u32,
                    });
                    stack.push((x, Some(self.nodes.len() - 1)));
                    for &c in children.iter().rev() {
                        stack.push((c, None));
                    }
                }
                Some(at) => {
                    let end = self.nodes.len() as u32;
                    self.nodes[at].end = end;
                }
            }
        }
        self.roots.push((lo, self.nodes.len() as u32));
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.roots.capacity() * 8
            + self.nodes.capacity() * std::mem::size_of::<PNode>()
            + self.leaves.capacity() * std::mem::size_of::<PLeaf>()
            + self.classes.capacity() * 4
    }
}
