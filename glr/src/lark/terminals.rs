//! Terminal definitions → one `regex-syntax` HIR each.
//!
//! Terminals made of other terminals are inlined: definitions are visited in dependency order
//! (an iterative depth-first search, which also finds cycles), and each is built from its own
//! expression with its parts' finished HIRs. Each piece keeps its own flags (`"a"i "b"` is
//! case-insensitive only in its first half), as Lark's inline `(?i:…)` groups do.
//!
//! Alongside the HIR each terminal gets its Lark *identity*: the `PatternStr`/`PatternRE` value
//! and flags Lark would compute for it, which decides whether an anonymous literal in a rule
//! reuses it. Only single literals (possibly reached through references and parentheses) have
//! an identity; Lark's identity of a composite is its joined regex source, which a literal in a
//! rule practically never equals, and which is not reproduced.

use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir, Repetition};

use super::ast::*;
use super::defs::{Defs, Ns, TermPart};
use super::error::ErrorKind;
use super::literal::{literal_value, range_ends};
use super::{pyre, RawError};
use crate::grammar::NoPattern;

/// Budget: HIR nodes in one terminal's pattern (terminals built from terminals can grow
/// exponentially: `A: B B`, `B: C C`, …).
pub(crate) const MAX_PATTERN_NODES: usize = 1 << 20;

/// Lark's identity of a terminal's pattern (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Identity {
    /// A string literal: value and sorted flags.
    Str(String, String),
    /// A regex literal or range: Python source and sorted flags.
    Re(String, String),
    /// Anything else (never equal to a literal).
    Composite,
}

/// A finished terminal pattern.
#[derive(Clone, Debug)]
pub(crate) struct TermPattern {
    pub(crate) hir: Result<Hir, NoPattern>,
    pub(crate) identity: Identity,
    /// HIR nodes (an upper bound for regex pieces).
    pub(crate) size: usize,
    /// HIR nesting depth.
    pub(crate) depth: usize,
    /// The definition as written.
    pub(crate) source: String,
}

impl TermPattern {
    pub(crate) fn is_literal(&self) -> bool {
        matches!(self.identity, Identity::Str(..))
    }
}

/// A pattern under construction: `hir` is `Err(reason)` once a piece is unsupported.
struct Piece {
    hir: Result<Hir, String>,
    identity: Identity,
    size: usize,
    depth: usize,
}

/// Counts nodes and depth of a HIR without recursion.
struct Measure {
    depth: usize,
    max_depth: usize,
    size: usize,
}

impl hir::Visitor for Measure {
    type Output = (usize, usize);
    type Err = ();

    fn finish(self) -> Result<(usize, usize), ()> {
        Ok((self.size, self.max_depth))
    }

    fn visit_pre(&mut self, _: &Hir) -> Result<(), ()> {
        self.depth += 1;
        self.size += 1;
        self.max_depth = self.max_depth.max(self.depth);
        Ok(())
    }

    fn visit_post(&mut self, _: &Hir) -> Result<(), ()> {
        self.depth -= 1;
        Ok(())
    }
}

fn measure(h: &Hir) -> (usize, usize) {
    hir::visit(
        h,
        Measure {
            depth: 0,
            max_depth: 0,
            size: 0,
        },
    )
    .unwrap_or((1, 1))
}

fn err(kind: ErrorKind, pos: Pos) -> RawError {
    RawError {
        kind,
        pos,
        aux: None,
    }
}

/// The pattern of a string literal, regex literal or range (in a terminal or, anonymous, in a
/// rule).
fn leaf(v: &Value, nest_limit: u32, meets: bool) -> Result<Piece, RawError> {
    match v {
        Value::Literal(lit) => {
            let val = literal_value(lit).map_err(|_| {
                // Validation reports bad literals first; this is a fallback.
                err(
                    ErrorKind::BadEscape {
                        message: "bad literal".to_string(),
                    },
                    lit.pos,
                )
            })?;
            match lit.kind {
                LitKind::Str => {
                    let hir = if val.flags.contains('i') {
                        regex_syntax::ParserBuilder::new()
                            .case_insensitive(true)
                            .unicode(true)
                            .build()
                            .parse(&regex_syntax::escape(&val.value))
                            .map_err(|e| {
                                err(
                                    ErrorKind::BadRegex {
                                        message: e.to_string(),
                                    },
                                    lit.pos,
                                )
                            })?
                    } else {
                        Hir::literal(val.value.as_bytes())
                    };
                    Ok(Piece {
                        hir: Ok(hir),
                        identity: Identity::Str(val.value, val.flags),
                        size: 1,
                        depth: 1,
                    })
                }
                LitKind::Regex => {
                    let c = pyre::compile(&val.value, &val.flags, nest_limit, meets)
                        .map_err(|message| err(ErrorKind::BadRegex { message }, lit.pos))?;
                    let (size, depth) = measure(&c.hir);
                    Ok(Piece {
                        hir: match c.unsupported {
                            None => Ok(c.hir),
                            Some(why) => Err(why),
                        },
                        identity: Identity::Re(val.value, val.flags),
                        size,
                        depth,
                    })
                }
            }
        }
        Value::Range { from, to, pos } => {
            let (a, b) = range_ends(from, to)
                .map_err(|message| err(ErrorKind::BadCharRange { message }, *pos))?;
            let class = ClassUnicode::new([ClassUnicodeRange::new(a, b)]);
            Ok(Piece {
                hir: Ok(Hir::class(Class::Unicode(class))),
                identity: Identity::Re(format!("[{}-{}]", from.body(), to.body()), String::new()),
                size: 1,
                depth: 1,
            })
        }
        // Names are handled by the caller.
        _ => Err(err(
            ErrorKind::BadRegex {
                message: "not a literal".to_string(),
            },
            v.pos(),
        )),
    }
}

/// Lark's identity of a literal or range (cheap: no regex is compiled).
pub(crate) fn identity(v: &Value) -> Option<Identity> {
    match v {
        Value::Literal(lit) => {
            let val = literal_value(lit).ok()?;
            Some(match lit.kind {
                LitKind::Str => Identity::Str(val.value, val.flags),
                LitKind::Regex => Identity::Re(val.value, val.flags),
            })
        }
        Value::Range { from, to, .. } => Some(Identity::Re(
            format!("[{}-{}]", from.body(), to.body()),
            String::new(),
        )),
        _ => None,
    }
}

/// The pattern of an anonymous literal or range used in a rule.
pub(crate) fn anonymous(v: &Value, source: &str, nest_limit: u32) -> Result<TermPattern, RawError> {
    let p = leaf(v, nest_limit, false)?;
    Ok(TermPattern {
        hir: p.hir.map_err(NoPattern::Unsupported),
        identity: p.identity,
        size: p.size,
        depth: p.depth,
        source: source.to_string(),
    })
}

/// A terminal on the search stack: (entry, its dependencies with where each is named, the
/// next dependency to visit).
type Visit = (usize, Vec<(usize, Pos)>, usize);

/// Builds the patterns of all user terminals (and of the library terminals they import).
/// The result is indexed like `defs.terms`; library terminals nobody imports stay `None`.
pub(crate) fn build_all(
    defs: &Defs<'_>,
    src: &str,
    max_nesting: usize,
    meets: bool,
) -> Result<Vec<Option<TermPattern>>, RawError> {
    let mut b = Builder {
        defs,
        src,
        max_nesting,
        meets,
        nest_limit: u32::try_from(max_nesting).unwrap_or(u32::MAX),
        done: vec![None; defs.terms.len()],
    };
    let mut state = vec![0u8; defs.terms.len()]; // 0 new, 1 on the stack, 2 done
    for root in 0..defs.terms.len() {
        if defs.terms[root].ns != Ns::User || state[root] == 2 {
            continue;
        }
        let mut stack: Vec<Visit> = vec![(root, b.deps(root), 0)];
        state[root] = 1;
        while let Some((entry, deps, next)) = stack.last_mut() {
            if let Some(&(d, at)) = deps.get(*next) {
                *next += 1;
                match state[d] {
                    0 => {
                        state[d] = 1;
                        let deps = b.deps(d);
                        stack.push((d, deps, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|s| s.0 == d).unwrap_or(0);
                        let mut path: Vec<String> = stack[from..]
                            .iter()
                            .map(|s| defs.terms[s.0].name.clone())
                            .collect();
                        path.push(defs.terms[d].name.clone());
                        let pos = at;
                        return Err(err(
                            ErrorKind::TerminalCycle {
                                name: defs.terms[d].name.clone(),
                                path,
                            },
                            pos,
                        ));
                    }
                    _ => {}
                }
            } else {
                let entry = *entry;
                let pattern = b.build(entry)?;
                b.done[entry] = Some(pattern);
                state[entry] = 2;
                stack.pop();
            }
        }
    }
    Ok(b.done)
}

struct Builder<'d, 'f> {
    defs: &'d Defs<'f>,
    src: &'d str,
    max_nesting: usize,
    /// [`super::LoadConfig::meets`].
    meets: bool,
    nest_limit: u32,
    done: Vec<Option<TermPattern>>,
}

impl Builder<'_, '_> {
    /// The terminals `entry` is made of, with where each is named.
    fn deps(&self, entry: usize) -> Vec<(usize, Pos)> {
        let e = &self.defs.terms[entry];
        let mut out = Vec::new();
        for part in &e.parts {
            match part {
                TermPart::Exps(exps) => self.names_in(exps, &mut out),
            }
        }
        out
    }

    fn names_in(&self, exps: &Expansions, out: &mut Vec<(usize, Pos)>) {
        for alt in &exps.alts {
            for item in &alt.items {
                match &item.atom {
                    Atom::Group(inner) | Atom::Maybe(inner) => self.names_in(inner, out),
                    Atom::Value(Value::Terminal(n)) => {
                        if let Some(t) = self.defs.term(&n.text) {
                            out.push((t, n.pos));
                        }
                    }
                    Atom::Value(_) => {}
                }
            }
        }
    }

    /// Where to report an error found in `entry` at `pos`: there, since every module's text
    /// is part of the one source (`imports::Sources`).
    fn at(&self, _entry: usize, pos: Pos) -> Pos {
        pos
    }

    fn build(&self, entry: usize) -> Result<TermPattern, RawError> {
        let e = &self.defs.terms[entry];
        if e.declared {
            return Ok(TermPattern {
                hir: Err(NoPattern::Declared),
                identity: Identity::Composite,
                size: 0,
                depth: 0,
                source: String::new(),
            });
        }
        let text = self.src;
        let mut pieces = Vec::new();
        let mut sources = Vec::new();
        for part in &e.parts {
            match part {
                TermPart::Exps(exps) => {
                    sources.push(
                        text.get(exps.pos.start..exps.pos.end)
                            .unwrap_or("")
                            .to_string(),
                    );
                    pieces.push(self.expansions(entry, exps, 0)?);
                }
            }
        }
        let piece = self.alternation(entry, pieces, e.pos)?;
        Ok(TermPattern {
            hir: piece.hir.map_err(NoPattern::Unsupported),
            identity: piece.identity,
            size: piece.size,
            depth: piece.depth,
            source: sources.join(" | "),
        })
    }

    /// Budget: the HIR depth of a terminal. Each regex piece is within `max_nesting` (the
    /// `regex-syntax` nest limit), and composition may add as many levels again; bounding the
    /// total keeps recursive consumers of the HIR (NFA compilers) off the end of the stack.
    fn max_depth(&self) -> usize {
        self.max_nesting.saturating_mul(2).saturating_add(16)
    }

    /// Checks the budgets on a combined piece.
    fn check(&self, entry: usize, p: &Piece, pos: Pos) -> Result<(), RawError> {
        if p.size > MAX_PATTERN_NODES {
            return Err(err(
                ErrorKind::LimitExceeded {
                    what: "pattern nodes in one terminal",
                    limit: MAX_PATTERN_NODES,
                },
                self.at(entry, pos),
            ));
        }
        if p.depth > self.max_depth() {
            return Err(err(
                ErrorKind::LimitExceeded {
                    what: "levels of nesting in one terminal's pattern",
                    limit: self.max_depth(),
                },
                self.at(entry, pos),
            ));
        }
        Ok(())
    }

    /// Alternatives of pieces (one piece passes through with its identity).
    fn alternation(
        &self,
        entry: usize,
        mut pieces: Vec<Piece>,
        pos: Pos,
    ) -> Result<Piece, RawError> {
        if pieces.len() == 1 {
            return Ok(pieces.pop().expect("one piece"));
        }
        let combined = combine(pieces, Hir::alternation);
        self.check(entry, &combined, pos)?;
        Ok(combined)
    }

    fn expansions(&self, entry: usize, exps: &Expansions, level: usize) -> Result<Piece, RawError> {
        let mut alts = Vec::with_capacity(exps.alts.len());
        for alt in &exps.alts {
            let mut items = Vec::with_capacity(alt.items.len());
            for item in &alt.items {
                items.push(self.expr(entry, item, level)?);
            }
            let seq = if items.len() == 1 {
                items.pop().expect("one item")
            } else if items.is_empty() {
                Piece {
                    hir: Ok(Hir::empty()),
                    identity: Identity::Composite,
                    size: 1,
                    depth: 1,
                }
            } else {
                let p = combine(items, Hir::concat);
                self.check(entry, &p, alt.pos)?;
                p
            };
            alts.push(seq);
        }
        self.alternation(entry, alts, exps.pos)
    }

    fn expr(&self, entry: usize, item: &Expr, level: usize) -> Result<Piece, RawError> {
        let e = &self.defs.terms[entry];
        let atom = match &item.atom {
            Atom::Group(inner) => self.expansions(entry, inner, level + 1)?,
            Atom::Maybe(inner) => {
                let p = self.expansions(entry, inner, level + 1)?;
                repeat(p, 0, Some(1))
            }
            Atom::Value(Value::Terminal(n)) => {
                let done = self.defs.term(&n.text).and_then(|t| self.done[t].as_ref());
                let Some(p) = done else {
                    return Err(err(
                        ErrorKind::UndefinedTerminal {
                            name: n.text.clone(),
                        },
                        self.at(entry, n.pos),
                    ));
                };
                Piece {
                    hir: p.hir.clone().map_err(|why| match why {
                        NoPattern::Unsupported(s) => s,
                        NoPattern::Declared => format!("the %declare'd terminal {}", n.text),
                    }),
                    identity: p.identity.clone(),
                    size: p.size,
                    depth: p.depth,
                }
            }
            Atom::Value(v @ (Value::Rule(n) | Value::Template { name: n, .. })) => {
                return Err(err(
                    ErrorKind::RuleInTerminal {
                        rule: n.text.clone(),
                        terminal: e.name.clone(),
                    },
                    self.at(entry, v.pos()),
                ))
            }
            Atom::Value(v) => leaf(v, self.nest_limit, self.meets).map_err(|mut er| {
                er.pos = self.at(entry, er.pos);
                er
            })?,
        };
        let p = match item.op {
            None => atom,
            Some(Op::Opt) => repeat(atom, 0, Some(1)),
            Some(Op::Star) => repeat(atom, 0, None),
            Some(Op::Plus) => repeat(atom, 1, None),
            Some(Op::Repeat { min, max }) => {
                let (lo, hi) = super::defs::repeat_bounds(min, max).map_err(|mut er| {
                    er.pos = self.at(entry, er.pos);
                    er
                })?;
                repeat(atom, lo, Some(hi))
            }
        };
        self.check(entry, &p, item.pos)?;
        Ok(p)
    }
}

fn repeat(p: Piece, min: u32, max: Option<u32>) -> Piece {
    Piece {
        hir: p.hir.map(|h| {
            Hir::repetition(Repetition {
                min,
                max,
                greedy: true,
                sub: Box::new(h),
            })
        }),
        identity: Identity::Composite,
        size: p.size + 1,
        depth: p.depth + 1,
    }
}

/// Combines pieces with `f`; unsupported if any piece is.
fn combine(pieces: Vec<Piece>, f: fn(Vec<Hir>) -> Hir) -> Piece {
    let size = pieces.iter().map(|p| p.size).sum::<usize>() + 1;
    let depth = pieces.iter().map(|p| p.depth).max().unwrap_or(0) + 1;
    let mut hirs = Vec::with_capacity(pieces.len());
    let mut why = None;
    for p in pieces {
        match p.hir {
            Ok(h) if why.is_none() => hirs.push(h),
            Ok(_) => {}
            Err(w) => {
                why.get_or_insert(w);
            }
        }
    }
    Piece {
        hir: match why {
            None => Ok(f(hirs)),
            Some(w) => Err(w),
        },
        identity: Identity::Composite,
        size,
        depth,
    }
}
