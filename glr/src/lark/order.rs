//! Lark's order for naming anonymous terminals and instantiating templates inside one rule.
//!
//! Lark names anonymous literals (`__ANON_n`) and creates template instances while
//! transforming a rule's parse tree with an in-place transformer that visits nodes **deepest
//! first, left to right within a depth** (`Tree.iter_subtrees`), calling the handler of each
//! node when it visits the node's parent. So `"a" ("b")` names `"b"` first. To give the same
//! names, this module rebuilds the depth at which each literal and template use sits in Lark's
//! tree for the rule and sorts them the way Lark visits them. The tree shape (after Lark's
//! `?rule` inlining and its `value` node removal) is:
//!
//! - a rule body is an `expansions` node; each alternative is an `expansion` node, under an
//!   `alias` node when it has an alias; an `%extend` adds its `expansions` as a child of the
//!   original body's node, in front;
//! - an item with an operator is an `expr` node around its atom; a group is a nested
//!   `expansions` node; `[…]` is a `maybe` node around an `expansions` node;
//! - a literal or range is a leaf of its parent (`expansion`, `expr`, or `template_usage`);
//!   a template use is a `template_usage` node whose children are its name and arguments.

use std::cmp::Reverse;

use super::ast::*;
use super::defs::Body;

/// What an occurrence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string literal, regex literal or range.
    Literal,
    /// A template use `name{…}`.
    Template,
}

/// A literal or template use in a rule, in Lark's visiting order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Occurrence<'a> {
    pub(crate) kind: Kind,
    pub(crate) value: &'a Value,
    /// The body (of the rule's `bodies`) it is in.
    pub(crate) body: usize,
    /// (depth of its parent, reversed; parent's position in pre-order; index among siblings).
    key: (Reverse<usize>, usize, usize),
}

/// The literals and template uses of a rule's bodies, in the order Lark visits them.
pub(crate) fn occurrences<'a>(bodies: &[Body<'a>]) -> Vec<Occurrence<'a>> {
    let mut w = Walker {
        next_id: 1, // the root `expansions` node is 0
        out: Vec::new(),
        body: 0,
    };
    let last = bodies.len().saturating_sub(1);
    for (b, body) in bodies.iter().enumerate() {
        w.body = b;
        if b == last {
            // The original definition's alternatives are the root's own children.
            w.expansions(body.exps, 0);
        } else {
            // An extension: a nested `expansions` node under the root.
            w.next_id += 1;
            w.expansions(body.exps, 1);
        }
    }
    w.out.sort_by_key(|o| o.key);
    w.out
}

struct Walker<'a> {
    next_id: usize,
    out: Vec<Occurrence<'a>>,
    body: usize,
}

impl<'a> Walker<'a> {
    fn node(&mut self) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The alternatives of an `expansions` node at `depth`.
    fn expansions(&mut self, exps: &'a Expansions, depth: usize) {
        for alt in &exps.alts {
            let mut d = depth + 1;
            if alt.alias.is_some() {
                self.node(); // the `alias` node
                d += 1;
            }
            let id = self.node(); // the `expansion` node
            for (i, item) in alt.items.iter().enumerate() {
                if item.op.is_some() {
                    let e = self.node(); // the `expr` node; the atom is its first child
                    self.atom(&item.atom, e, d + 1, 0);
                } else {
                    self.atom(&item.atom, id, d, i);
                }
            }
        }
    }

    /// An atom that is child `index` of node `parent` at depth `depth`.
    fn atom(&mut self, atom: &'a Atom, parent: usize, depth: usize, index: usize) {
        match atom {
            Atom::Group(inner) => {
                self.node();
                self.expansions(inner, depth + 1);
            }
            Atom::Maybe(inner) => {
                self.node(); // `maybe`
                self.node(); // its `expansions`
                self.expansions(inner, depth + 2);
            }
            Atom::Value(v) => self.value(v, parent, depth, index),
        }
    }

    fn value(&mut self, v: &'a Value, parent: usize, depth: usize, index: usize) {
        let key = (Reverse(depth), parent, index);
        match v {
            Value::Literal(_) | Value::Range { .. } => {
                self.node(); // the `pattern` node
                self.out.push(Occurrence {
                    kind: Kind::Literal,
                    value: v,
                    body: self.body,
                    key,
                });
            }
            Value::Template { args, .. } => {
                let t = self.node();
                self.out.push(Occurrence {
                    kind: Kind::Template,
                    value: v,
                    body: self.body,
                    key,
                });
                for (k, a) in args.iter().enumerate() {
                    // Child 0 of `template_usage` is the template's name.
                    self.value(a, t, depth + 1, k + 1);
                }
            }
            Value::Terminal(_) | Value::Rule(_) => {}
        }
    }
}
