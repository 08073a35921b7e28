//! Per lexer point, the terminal spans its tokens realise, as a trie in preorder.
//!
//! A point's trie is the part of the global terminal-span trie ([`Taus`]) its spans use. Nodes
//! are stored in preorder, each with the index one past its subtree, so a walk skips a subtree
//! in one step; each span (leaf) carries its classes as a range of one array.
//!
//! Building one is a sort: with the global trie numbered in preorder ([`Preorder`]), the nodes a
//! point uses, sorted by that number, are the point's trie in preorder.

use munch_tokens::ClassId;

use crate::tau::Taus;

/// A node of a point's trie.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PNode {
    /// The preorder number of the node in the global trie.
    pub pre: u32,
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

/// The global trie's preorder: per node its number and the number one past its subtree; with
/// the parent links and the terminal spans' nodes in flat arrays (the trie's own nodes are
/// large, and building every point's trie chases these links).
pub(crate) struct Preorder {
    pub pre: Vec<u32>,
    pub end: Vec<u32>,
    parent: Vec<u32>,
    tau_node: Vec<u32>,
}

impl Preorder {
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.pre.capacity()
            + self.end.capacity()
            + self.parent.capacity()
            + self.tau_node.capacity())
            * 4
    }

    pub(crate) fn new(taus: &Taus) -> Self {
        let n = taus.nodes.len();
        let (mut pre, mut end) = (vec![0u32; n], vec![0u32; n]);
        let mut next = 0u32;
        // (node, whether its children were pushed)
        let mut stack: Vec<(u32, bool)> = vec![(0, false)];
        while let Some((x, expanded)) = stack.pop() {
            if expanded {
                end[x as usize] = next;
                continue;
            }
            pre[x as usize] = next;
            next += 1;
            stack.push((x, true));
            for &(_, c) in taus.nodes[x as usize].children.iter().rev() {
                stack.push((c, false));
            }
        }
        Preorder {
            pre,
            end,
            parent: taus.nodes.iter().map(|x| x.parent).collect(),
            tau_node: taus.taus.iter().map(|t| t.node).collect(),
        }
    }
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

/// Reused buffers of [`PointTries::push_point`].
#[derive(Default)]
pub(crate) struct PointScratch {
    /// Per global node: the stamp of the last point that used it.
    seen: Vec<u32>,
    stamp: u32,
    used: Vec<u32>,
    stack: Vec<(u32, usize)>,
}

impl PointTries {
    /// Adds the next point's trie from its spans: `(terminal span, its classes)`, sorted by
    /// terminal span.
    pub(crate) fn push_point(
        &mut self,
        taus: &Taus,
        order: &Preorder,
        spans: &[(u32, &[ClassId])],
        scratch: &mut PointScratch,
    ) {
        let lo = self.nodes.len() as u32;
        if spans.is_empty() {
            self.roots.push((lo, lo));
            return;
        }
        if scratch.seen.len() != taus.nodes.len() {
            scratch.seen = vec![0; taus.nodes.len()];
            scratch.stamp = 0;
        }
        scratch.stamp += 1;
        let stamp = scratch.stamp;
        // The global nodes on the spans' paths (a used node's ancestors are used).
        scratch.used.clear();
        for &(tau, _) in spans {
            let mut x = order.tau_node[tau as usize];
            while scratch.seen[x as usize] != stamp {
                scratch.seen[x as usize] = stamp;
                scratch.used.push(x);
                if x == 0 {
                    break;
                }
                x = order.parent[x as usize];
            }
        }
        scratch
            .used
            .sort_unstable_by_key(|&x| order.pre[x as usize]);
        // The spans in the same order, by their node.
        let mut by_node: Vec<(u32, usize)> = spans
            .iter()
            .enumerate()
            .map(|(i, &(tau, _))| (order.pre[order.tau_node[tau as usize] as usize], i))
            .collect();
        by_node.sort_unstable();
        let mut next_span = 0;
        // Open nodes: (global preorder end, index in `nodes`).
        scratch.stack.clear();
        for &x in &scratch.used {
            let p = order.pre[x as usize];
            let at = self.nodes.len();
            while scratch.stack.last().is_some_and(|&(end, _)| end <= p) {
                let (_, j) = scratch.stack.pop().expect("checked");
                self.nodes[j].end = at as u32;
            }
            let leaf_lo = self.leaves.len() as u32;
            while next_span < by_node.len() && by_node[next_span].0 == p {
                let (tau, classes) = spans[by_node[next_span].1];
                let class_lo = self.classes.len() as u32;
                self.classes.extend_from_slice(classes);
                self.leaves.push(PLeaf {
                    reach: taus.taus[tau as usize].reach,
                    class_lo,
                    class_hi: self.classes.len() as u32,
                });
                next_span += 1;
            }
            self.nodes.push(PNode {
                pre: p,
                acc: taus.nodes[x as usize].acc,
                end: 0,
                leaf_lo,
                leaf_hi: self.leaves.len() as u32,
            });
            scratch.stack.push((order.end[x as usize], at));
        }
        let hi = self.nodes.len() as u32;
        for &(_, j) in &scratch.stack {
            self.nodes[j].end = hi;
        }
        self.roots.push((lo, hi));
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.roots.capacity() * 8
            + self.nodes.capacity() * std::mem::size_of::<PNode>()
            + self.leaves.capacity() * std::mem::size_of::<PLeaf>()
            + self.classes.capacity() * 4
    }
}
