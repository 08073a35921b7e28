//! The persistent graph-structured stack (GSS).
//!
//! # Principal types
//!
//! - [`GssNode`]: a handle on one node: its LR state and its predecessor edges (the nodes below
//!   it). Cloning is one reference-count increment; nodes are immutable once built, so a
//!   [`crate::parser::ParserState`] holding them clones in O(1) and can be shared by threads.
//! - [`GssNodeId`]: a node's identity, unique for the life of the process (never reused, unlike
//!   an address), for caller-owned memo tables such as [`crate::parser::ShiftCache`].
//!
//! # Layout
//!
//! Nodes live in *levels*: all nodes built by one parser step (the reductions under one
//! lookahead at one position, or the shifts of one position) are one immutable `Level`, shared
//! by `Arc`. An edge points either to a node of the same level (by index) or to a node of an
//! older level (by handle). Cycles in the GSS (ε-rules and hidden recursion make them) can only
//! be same-level edges, so reference counting never sees a cycle and memory is freed exactly
//! when no state can reach a level any more. Dropping a long chain of levels is iterative
//! (`impl Drop for Level`), so a parse of any length cannot overflow the stack when freed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use smallvec::SmallVec;

use crate::lr::LrState;

/// A process-wide counter naming levels, so ids are never reused.
static NEXT_LEVEL: AtomicU64 = AtomicU64::new(1);

/// The identity of a GSS node: stable and unique for the life of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GssNodeId {
    level: u64,
    index: u32,
}

impl GssNodeId {
    /// The id as one number (level serials start at 1, so the top 32 bits are 0 and an id is
    /// never below 2^32).
    #[inline]
    pub(crate) fn bits(self) -> u128 {
        (u128::from(self.level) << 32) | u128::from(self.index)
    }
}

/// An edge from a node to a node below it.
#[derive(Clone, Debug)]
pub(crate) enum Edge {
    /// A node of the same level, by index (the only kind of edge that can close a cycle).
    Same(u32),
    /// A node of an older level.
    Down(GssNode),
}

pub(crate) struct NodeData {
    pub state: LrState,
    pub edges: SmallVec<[Edge; 2]>,
}

/// One immutable level of the GSS.
pub(crate) struct Level {
    serial: u64,
    nodes: Vec<NodeData>,
}

impl Level {
    pub fn new(nodes: Vec<NodeData>) -> Arc<Level> {
        Arc::new(Level {
            serial: NEXT_LEVEL.fetch_add(1, Ordering::Relaxed),
            nodes,
        })
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        // Unlink iteratively: take every older level we own the last reference to.
        let mut pending: Vec<Arc<Level>> = Vec::new();
        let take = |nodes: &mut Vec<NodeData>, pending: &mut Vec<Arc<Level>>| {
            for node in nodes.iter_mut() {
                for edge in node.edges.drain(..) {
                    if let Edge::Down(n) = edge {
                        pending.push(n.level);
                    }
                }
            }
        };
        take(&mut self.nodes, &mut pending);
        while let Some(level) = pending.pop() {
            if let Ok(mut level) = Arc::try_unwrap(level) {
                take(&mut level.nodes, &mut pending);
                // `level` now owns no edges: its own drop does no further work.
            }
        }
    }
}

/// A handle on one GSS node (see the [module docs](self)).
#[derive(Clone)]
pub struct GssNode {
    pub(crate) level: Arc<Level>,
    pub(crate) index: u32,
}

impl std::fmt::Debug for GssNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GssNode")
            .field("id", &self.id())
            .field("state", &self.state())
            .finish()
    }
}

impl GssNode {
    pub(crate) fn data(&self) -> &NodeData {
        &self.level.nodes[self.index as usize]
    }

    /// The node's LR state.
    #[inline]
    pub fn state(&self) -> LrState {
        self.data().state
    }

    /// The node's identity.
    #[inline]
    pub fn id(&self) -> GssNodeId {
        GssNodeId {
            level: self.level.serial,
            index: self.index,
        }
    }

    /// The number of predecessor edges.
    pub fn predecessor_len(&self) -> usize {
        self.data().edges.len()
    }

    /// The nodes directly below this one (one per edge). The root has none.
    pub fn predecessors(&self) -> impl Iterator<Item = GssNode> + '_ {
        self.data().edges.iter().map(|e| self.resolve(e))
    }

    /// The node an edge of this node's level points to.
    #[inline]
    pub(crate) fn resolve(&self, e: &Edge) -> GssNode {
        match e {
            Edge::Same(i) => GssNode {
                level: self.level.clone(),
                index: *i,
            },
            Edge::Down(n) => n.clone(),
        }
    }

    /// A borrowed handle on this node.
    #[inline]
    pub(crate) fn as_ref(&self) -> NodeRef<'_> {
        NodeRef {
            level: &self.level,
            index: self.index,
        }
    }

    /// A root node (the LR start state, no edges) in a level of its own.
    pub(crate) fn root() -> GssNode {
        GssNode {
            level: Level::new(vec![NodeData {
                state: LrState::START,
                edges: SmallVec::new(),
            }]),
            index: 0,
        }
    }
}

/// A borrowed handle on a node, for walking down the GSS without touching reference counts:
/// everything below a node lives as long as the node.
#[derive(Clone, Copy)]
pub(crate) struct NodeRef<'a> {
    level: &'a Arc<Level>,
    index: u32,
}

impl<'a> NodeRef<'a> {
    #[inline]
    pub fn edges(self) -> &'a [Edge] {
        &self.level.nodes[self.index as usize].edges
    }

    #[inline]
    pub fn state(self) -> LrState {
        self.level.nodes[self.index as usize].state
    }

    #[inline]
    pub fn id(self) -> GssNodeId {
        GssNodeId {
            level: self.level.serial,
            index: self.index,
        }
    }

    /// The node an edge of this node's level points to.
    #[inline]
    pub fn follow(self, e: &'a Edge) -> NodeRef<'a> {
        match e {
            Edge::Same(i) => NodeRef {
                level: self.level,
                index: *i,
            },
            Edge::Down(n) => n.as_ref(),
        }
    }

    /// An owned handle.
    pub fn to_node(self) -> GssNode {
        GssNode {
            level: Arc::clone(self.level),
            index: self.index,
        }
    }

    /// A handle that does not keep the node alive.
    pub fn downgrade(self) -> WeakNode {
        WeakNode {
            level: Arc::downgrade(self.level),
            index: self.index,
        }
    }
}

/// A handle on a node that does not keep it alive, for memo tables that outlive the states
/// whose nodes they name (a node reachable from a live node is alive, so a memo whose entry
/// leads down from its key node can always upgrade it while the key node lives).
#[derive(Clone)]
pub(crate) struct WeakNode {
    level: Weak<Level>,
    index: u32,
}

impl WeakNode {
    /// The node, if something still holds it.
    pub fn upgrade(&self) -> Option<GssNode> {
        Some(GssNode {
            level: self.level.upgrade()?,
            index: self.index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_edges_resolve() {
        let root = GssNode::root();
        let level = Level::new(vec![
            NodeData {
                state: LrState::new(1).unwrap(),
                edges: SmallVec::from_vec(vec![Edge::Down(root.clone()), Edge::Same(1)]),
            },
            NodeData {
                state: LrState::new(2).unwrap(),
                edges: SmallVec::from_vec(vec![Edge::Same(0)]),
            },
        ]);
        let a = GssNode {
            level: level.clone(),
            index: 0,
        };
        let preds: Vec<_> = a.predecessors().map(|n| (n.id(), n.state())).collect();
        assert_eq!(preds[0], (root.id(), LrState::START));
        assert_eq!(preds[1].1, LrState::new(2).unwrap());
        // The same-level cycle 0 -> 1 -> 0 closes without a reference cycle.
        let b = a.predecessors().nth(1).unwrap();
        assert_eq!(b.predecessors().next().unwrap().id(), a.id());
        assert_ne!(GssNode::root().id(), root.id());
    }

    #[test]
    fn long_chains_drop_without_recursion() {
        let mut top = GssNode::root();
        for _ in 0..200_000 {
            top = GssNode {
                level: Level::new(vec![NodeData {
                    state: LrState::START,
                    edges: SmallVec::from_vec(vec![Edge::Down(top)]),
                }]),
                index: 0,
            };
        }
        drop(top);
    }
}
