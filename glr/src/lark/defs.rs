//! Statements → a table of definitions, then Lark's validation of every definition.
//!
//! After [`collect`]: (imports were merged before, by [`super::imports`]) `%override` and
//! `%extend` are applied, `%ignore` expressions other than a bare terminal name have become
//! `__IGNORE_n` terminals, and every name is defined at most once.
//! After [`validate`]: every name a definition uses is defined (or a template parameter),
//! template uses have the right arity, no terminal uses a rule or a `%declare`d terminal,
//! aliases only label top-level alternatives of rules, every literal unescapes, and every
//! number is in range. This holds for all definitions, used or not, as in Lark.

use ahash::AHashMap;
use std::collections::HashSet;

use super::ast::*;
use super::error::ErrorKind;
use super::literal::{literal_value, range_ends, LiteralError};
use super::RawError;

/// Whether a terminal is the grammar's or only a piece of imported terminals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ns {
    /// Defined, imported by name, or made by `%ignore`.
    User,
    /// Kept from an imported module only because its imported terminals use it (Lark inlines
    /// and drops it): it names no anonymous literal and reaches no parser.
    Hidden,
}

/// One piece of a terminal's definition (several after `%extend`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum TermPart<'f> {
    Exps(&'f Expansions),
}

/// A terminal definition.
#[derive(Debug)]
pub(crate) struct TermEntry<'f> {
    pub(crate) name: String,
    /// Where it is defined (its name, the import, or the `%ignore`).
    pub(crate) pos: Pos,
    pub(crate) ns: Ns,
    /// Within `i32` after [`collect`] (see [`fit_priorities`]).
    pub(crate) priority: i64,
    /// Alternatives, the latest `%extend` first; empty when `%declare`d.
    pub(crate) parts: Vec<TermPart<'f>>,
    pub(crate) declared: bool,
}

/// One body of a rule (several after `%extend`), with the parameter names it uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Body<'f> {
    pub(crate) exps: &'f Expansions,
    pub(crate) params: &'f [Name],
}

/// A rule or template definition.
#[derive(Debug)]
pub(crate) struct RuleEntry<'f> {
    pub(crate) name: String,
    pub(crate) pos: Pos,
    /// Template parameters (empty for a rule).
    pub(crate) params: &'f [Name],
    /// Alternatives, the latest `%extend` first; empty when `%declare`d.
    pub(crate) bodies: Vec<Body<'f>>,
    pub(crate) declared: bool,
    pub(crate) expand_single: bool,
    pub(crate) keep_all_tokens: bool,
    /// Within `i32` after [`collect`].
    pub(crate) priority: i64,
}

/// An `%ignore`d terminal name and where the `%ignore` is.
#[derive(Debug)]
pub(crate) struct Ignore {
    pub(crate) name: String,
    pub(crate) pos: Pos,
}

/// All definitions of a grammar.
#[derive(Debug, Default)]
pub(crate) struct Defs<'f> {
    /// The terminals in Lark's order (imported ones, then definitions in the order they
    /// appear).
    pub(crate) terms: Vec<TermEntry<'f>>,
    pub(crate) user_terms: AHashMap<String, usize>,
    pub(crate) rules: Vec<RuleEntry<'f>>,
    pub(crate) rule_index: AHashMap<String, usize>,
    pub(crate) ignore: Vec<Ignore>,
}

impl<'f> Defs<'f> {
    /// The terminal `name`.
    pub(crate) fn term(&self, name: &str) -> Option<usize> {
        self.user_terms.get(name).copied()
    }
}

fn err(kind: ErrorKind, pos: Pos) -> RawError {
    RawError {
        kind,
        pos,
        aux: None,
    }
}

fn duplicate(name: &str, what: &'static str, new: Pos, old: Pos) -> RawError {
    // Report the later of the two, pointing back at the earlier.
    let (primary, aux) = if new.start >= old.start {
        (new, old)
    } else {
        (old, new)
    };
    RawError {
        kind: ErrorKind::Duplicate {
            name: name.to_string(),
            what,
        },
        pos: primary,
        aux: Some(aux),
    }
}

/// A priority. Lark takes any integer; beyond the range of an `i64` a priority counts as
/// that range's end (so two such priorities of the same sign tie).
fn priority(n: Option<Number>) -> Result<i64, RawError> {
    Ok(match n {
        None => 0,
        Some(Number { value: Some(v), .. }) => v,
        Some(Number { negative: true, .. }) => i64::MIN,
        Some(_) => i64::MAX,
    })
}

/// Replaces priorities by their ranks when one does not fit an `i32` (the grammar model's
/// type): only their order and their order against the default 0 matter, so negative values
/// become -1, -2, … and positive ones 1, 2, … in order.
fn fit_priorities<'a>(values: impl Iterator<Item = &'a mut i64>) {
    let mut values: Vec<&mut i64> = values.collect();
    if values.iter().all(|v| i32::try_from(**v).is_ok()) {
        return;
    }
    let mut distinct: Vec<i64> = values.iter().map(|v| **v).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let zero = distinct.partition_point(|&v| v < 0);
    let positive = distinct.partition_point(|&v| v <= 0);
    for v in &mut values {
        let at = distinct.partition_point(|&d| d < **v);
        **v = if **v < 0 {
            at as i64 - zero as i64
        } else if **v == 0 {
            0
        } else {
            (at - positive) as i64 + 1
        };
    }
}

/// A priority within the `i32` range (true after [`collect`]).
pub(crate) fn narrow(p: i64) -> i32 {
    i32::try_from(p).unwrap_or(if p < 0 { i32::MIN } else { i32::MAX })
}

fn number_error(n: Number) -> ErrorKind {
    ErrorKind::NumberOutOfRange {
        // An empty text is filled in from the source when the error is located.
        text: n.value.map_or_else(String::new, |v| v.to_string()),
    }
}

/// Builds the definition table of `file` (imports already merged: see [`super::imports`]);
/// the terminals named in `hidden` are pieces of imported terminals only.
pub(crate) fn collect<'f>(file: &'f File, hidden: &HashSet<String>) -> Result<Defs<'f>, RawError> {
    let mut defs = Defs::default();
    for item in &file.items {
        match item {
            Item::Import(imp) => {
                // `imports::flatten` leaves none.
                return Err(err(
                    ErrorKind::UnknownImport {
                        module: imp
                            .module
                            .iter()
                            .map(|n| n.text.as_str())
                            .collect::<Vec<_>>()
                            .join("."),
                        name: None,
                    },
                    imp.pos,
                ));
            }
            Item::Rule(r) => define_rule(&mut defs, r, false)?,
            Item::Term(t) => define_term(&mut defs, t, false)?,
            Item::Override(Def::Rule(r)) => define_rule(&mut defs, r, true)?,
            Item::Override(Def::Term(t)) => define_term(&mut defs, t, true)?,
            Item::Extend(Def::Rule(r)) => extend_rule(&mut defs, r)?,
            Item::Extend(Def::Term(t)) => extend_term(&mut defs, t)?,
            Item::Ignore(exps) => ignore(&mut defs, exps),
            Item::Declare(names) => {
                for (n, is_term) in names {
                    declare(&mut defs, n, *is_term)?;
                }
            }
        }
    }
    fit_priorities(defs.terms.iter_mut().map(|t| &mut t.priority));
    fit_priorities(defs.rules.iter_mut().map(|r| &mut r.priority));
    if !hidden.is_empty() {
        for t in &mut defs.terms {
            if hidden.contains(&t.name) {
                t.ns = Ns::Hidden;
            }
        }
    }
    Ok(defs)
}

fn define_rule<'f>(defs: &mut Defs<'f>, r: &'f RuleDef, is_override: bool) -> Result<(), RawError> {
    let entry = RuleEntry {
        name: r.name.text.clone(),
        pos: r.name.pos,
        params: &r.params,
        bodies: vec![Body {
            exps: &r.body,
            params: &r.params,
        }],
        declared: false,
        expand_single: r.expand_single,
        keep_all_tokens: r.keep_all_tokens,
        priority: priority(r.priority)?,
    };
    if r.expand_single && r.name.text.starts_with('_') {
        return Err(err(
            ErrorKind::ConflictingModifiers {
                name: r.name.text.clone(),
            },
            r.modifiers.unwrap_or(r.name.pos).to(r.name.pos),
        ));
    }
    match (defs.rule_index.get(&r.name.text).copied(), is_override) {
        (Some(old), false) => Err(duplicate(
            &r.name.text,
            "rule",
            r.name.pos,
            defs.rules[old].pos,
        )),
        (Some(old), true) => {
            defs.rules[old] = entry;
            Ok(())
        }
        (None, true) => Err(err(
            ErrorKind::NothingToModify {
                name: r.name.text.clone(),
                directive: "%override",
            },
            r.name.pos,
        )),
        (None, false) => {
            defs.rule_index
                .insert(r.name.text.clone(), defs.rules.len());
            defs.rules.push(entry);
            Ok(())
        }
    }
}

fn define_term<'f>(defs: &mut Defs<'f>, t: &'f TermDef, is_override: bool) -> Result<(), RawError> {
    let entry = TermEntry {
        name: t.name.text.clone(),
        pos: t.name.pos,
        ns: Ns::User,
        priority: priority(t.priority)?,
        parts: vec![TermPart::Exps(&t.body)],
        declared: false,
    };
    match (defs.user_terms.get(&t.name.text).copied(), is_override) {
        (Some(old), false) => Err(duplicate(
            &t.name.text,
            "terminal",
            t.name.pos,
            defs.terms[old].pos,
        )),
        (Some(old), true) => {
            defs.terms[old] = entry;
            Ok(())
        }
        (None, true) => Err(err(
            ErrorKind::NothingToModify {
                name: t.name.text.clone(),
                directive: "%override",
            },
            t.name.pos,
        )),
        (None, false) => {
            defs.user_terms
                .insert(t.name.text.clone(), defs.terms.len());
            defs.terms.push(entry);
            Ok(())
        }
    }
}

fn extend_rule<'f>(defs: &mut Defs<'f>, r: &'f RuleDef) -> Result<(), RawError> {
    let Some(&old) = defs.rule_index.get(&r.name.text) else {
        return Err(err(
            ErrorKind::NothingToModify {
                name: r.name.text.clone(),
                directive: "%extend",
            },
            r.name.pos,
        ));
    };
    let entry = &mut defs.rules[old];
    if entry.declared {
        return Err(err(
            ErrorKind::NothingToModify {
                name: r.name.text.clone(),
                directive: "%extend",
            },
            r.name.pos,
        ));
    }
    if entry.params.len() != r.params.len() {
        return Err(err(
            ErrorKind::TemplateArity {
                name: r.name.text.clone(),
                expected: entry.params.len(),
                found: r.params.len(),
            },
            r.name.pos,
        ));
    }
    entry.bodies.insert(
        0,
        Body {
            exps: &r.body,
            params: &r.params,
        },
    );
    Ok(())
}

fn extend_term<'f>(defs: &mut Defs<'f>, t: &'f TermDef) -> Result<(), RawError> {
    match defs.user_terms.get(&t.name.text).copied() {
        Some(old) if !defs.terms[old].declared => {
            defs.terms[old].parts.insert(0, TermPart::Exps(&t.body));
            Ok(())
        }
        _ => Err(err(
            ErrorKind::NothingToModify {
                name: t.name.text.clone(),
                directive: "%extend",
            },
            t.name.pos,
        )),
    }
}

fn ignore<'f>(defs: &mut Defs<'f>, exps: &'f Expansions) {
    // A bare terminal name is ignored as itself; anything else becomes `__IGNORE_n`.
    if let [Alt {
        items, alias: None, ..
    }] = exps.alts.as_slice()
    {
        if let [Expr {
            atom: Atom::Value(Value::Terminal(name)),
            op: None,
            ..
        }] = items.as_slice()
        {
            defs.ignore.push(Ignore {
                name: name.text.clone(),
                pos: name.pos,
            });
            return;
        }
    }
    let name = format!("__IGNORE_{}", defs.ignore.len());
    defs.user_terms.insert(name.clone(), defs.terms.len());
    defs.terms.push(TermEntry {
        name: name.clone(),
        pos: exps.pos,
        ns: Ns::User,
        priority: 0,
        parts: vec![TermPart::Exps(exps)],
        declared: false,
    });
    defs.ignore.push(Ignore {
        name,
        pos: exps.pos,
    });
}

fn declare(defs: &mut Defs<'_>, n: &Name, is_term: bool) -> Result<(), RawError> {
    if is_term {
        if let Some(&old) = defs.user_terms.get(&n.text) {
            return Err(duplicate(&n.text, "terminal", n.pos, defs.terms[old].pos));
        }
        defs.user_terms.insert(n.text.clone(), defs.terms.len());
        defs.terms.push(TermEntry {
            name: n.text.clone(),
            pos: n.pos,
            ns: Ns::User,
            priority: 0,
            parts: Vec::new(),
            declared: true,
        });
    } else {
        if let Some(&old) = defs.rule_index.get(&n.text) {
            return Err(duplicate(&n.text, "rule", n.pos, defs.rules[old].pos));
        }
        defs.rule_index.insert(n.text.clone(), defs.rules.len());
        defs.rules.push(RuleEntry {
            name: n.text.clone(),
            pos: n.pos,
            params: &[],
            bodies: Vec::new(),
            declared: true,
            expand_single: false,
            keep_all_tokens: false,
            priority: 0,
        });
    }
    Ok(())
}

/// What a definition being validated is.
#[derive(Clone, Copy)]
enum Ctx<'a> {
    /// A rule body with its parameters; `inlined` for `_rule`.
    Rule { params: &'a [Name], inlined: bool },
    /// A terminal (or `%ignore`) definition.
    Term { name: &'a str, ignore: bool },
}

/// Checks every user definition (see the module docs).
pub(crate) fn validate(defs: &Defs<'_>) -> Result<(), RawError> {
    // Collect definitions in source order so the first error in the file is reported.
    let mut order: Vec<(usize, bool, usize)> = Vec::new();
    for (i, t) in defs.terms.iter().enumerate() {
        if t.ns == Ns::User {
            order.push((t.pos.start, true, i));
        }
    }
    for (i, r) in defs.rules.iter().enumerate() {
        order.push((r.pos.start, false, i));
    }
    order.sort_unstable();
    for (_, is_term, i) in order {
        if is_term {
            let t = &defs.terms[i];
            let ctx = Ctx::Term {
                name: &t.name,
                ignore: t.name.starts_with("__IGNORE_"),
            };
            for part in &t.parts {
                let TermPart::Exps(exps) = part;
                check_expansions(defs, exps, ctx, true)?;
            }
        } else {
            let r = &defs.rules[i];
            for (k, p) in r.params.iter().enumerate() {
                if let Some(&rule) = defs.rule_index.get(&p.text) {
                    return Err(RawError {
                        kind: ErrorKind::TemplateParamConflict {
                            name: p.text.clone(),
                        },
                        pos: p.pos,
                        aux: Some(defs.rules[rule].pos),
                    });
                }
                if let Some(first) = r.params[..k].iter().find(|q| q.text == p.text) {
                    return Err(duplicate(&p.text, "template parameter", p.pos, first.pos));
                }
            }
            for body in &r.bodies {
                let ctx = Ctx::Rule {
                    params: body.params,
                    inlined: r.name.starts_with('_'),
                };
                check_expansions(defs, body.exps, ctx, true)?;
            }
        }
    }
    for ig in &defs.ignore {
        match defs.user_terms.get(&ig.name) {
            Some(_) => {}
            None => {
                return Err(err(
                    ErrorKind::UndefinedTerminal {
                        name: ig.name.clone(),
                    },
                    ig.pos,
                ))
            }
        }
    }
    Ok(())
}

fn check_expansions(
    defs: &Defs<'_>,
    exps: &Expansions,
    ctx: Ctx<'_>,
    top: bool,
) -> Result<(), RawError> {
    for alt in &exps.alts {
        if let Some(alias) = &alt.alias {
            let place = match ctx {
                Ctx::Term { ignore: true, .. } => Some("%ignore"),
                Ctx::Term { .. } => Some("a terminal"),
                Ctx::Rule { .. } if !top => Some("a group"),
                Ctx::Rule { inlined: true, .. } => Some("an inlined rule"),
                Ctx::Rule { .. } => None,
            };
            if let Some(place) = place {
                return Err(err(
                    ErrorKind::MisplacedAlias {
                        alias: alias.text.clone(),
                        place,
                    },
                    alias.pos,
                ));
            }
        }
        for e in &alt.items {
            match &e.atom {
                Atom::Group(inner) | Atom::Maybe(inner) => {
                    check_expansions(defs, inner, ctx, false)?
                }
                Atom::Value(v) => check_value(defs, v, ctx)?,
            }
            if let Some(Op::Repeat { min, max }) = e.op {
                repeat_bounds(min, max)?;
            }
        }
    }
    Ok(())
}

/// The bounds of `~ min..max`.
pub(crate) fn repeat_bounds(min: Number, max: Number) -> Result<(u32, u32), RawError> {
    let pos = min.pos.to(max.pos);
    let (Some(lo), Some(hi)) = (min.value, max.value) else {
        let bad = if min.value.is_none() { min } else { max };
        return Err(err(number_error(bad), bad.pos));
    };
    if lo < 0 || hi < lo {
        return Err(err(ErrorKind::BadRepetitionRange { min: lo, max: hi }, pos));
    }
    match (u32::try_from(lo), u32::try_from(hi)) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        _ => Err(err(
            ErrorKind::NumberOutOfRange {
                text: hi.to_string(),
            },
            pos,
        )),
    }
}

fn is_param(ctx: Ctx<'_>, name: &str) -> bool {
    matches!(ctx, Ctx::Rule { params, .. } if params.iter().any(|p| p.text == name))
}

fn check_value(defs: &Defs<'_>, v: &Value, ctx: Ctx<'_>) -> Result<(), RawError> {
    match v {
        Value::Terminal(n) => {
            let Some(&t) = defs.user_terms.get(&n.text) else {
                return Err(err(
                    ErrorKind::UndefinedTerminal {
                        name: n.text.clone(),
                    },
                    n.pos,
                ));
            };
            if let Ctx::Term { name, .. } = ctx {
                if defs.terms[t].declared {
                    return Err(err(
                        ErrorKind::DeclaredInTerminal {
                            name: n.text.clone(),
                            terminal: name.to_string(),
                        },
                        n.pos,
                    ));
                }
            }
            Ok(())
        }
        Value::Rule(n) | Value::Template { name: n, .. } => {
            if let Ctx::Term { name, .. } = ctx {
                return Err(err(
                    ErrorKind::RuleInTerminal {
                        rule: n.text.clone(),
                        terminal: name.to_string(),
                    },
                    n.pos,
                ));
            }
            let args = match v {
                Value::Template { args, .. } => args.as_slice(),
                _ => &[],
            };
            if !is_param(ctx, &n.text) {
                let Some(&r) = defs.rule_index.get(&n.text) else {
                    return Err(err(
                        ErrorKind::UndefinedRule {
                            name: n.text.clone(),
                        },
                        n.pos,
                    ));
                };
                let expected = defs.rules[r].params.len();
                if expected != args.len() {
                    return Err(err(
                        ErrorKind::TemplateArity {
                            name: n.text.clone(),
                            expected,
                            found: args.len(),
                        },
                        v.pos(),
                    ));
                }
            }
            for a in args {
                // A bare rule name as an argument may name a template (passed on).
                match a {
                    Value::Rule(r) if !is_param(ctx, &r.text) => {
                        if !defs.rule_index.contains_key(&r.text) {
                            return Err(err(
                                ErrorKind::UndefinedRule {
                                    name: r.text.clone(),
                                },
                                r.pos,
                            ));
                        }
                    }
                    Value::Rule(_) => {}
                    other => check_value(defs, other, ctx)?,
                }
            }
            Ok(())
        }
        Value::Literal(lit) => check_literal(lit),
        Value::Range { from, to, pos } => range_ends(from, to)
            .map(|_| ())
            .map_err(|message| err(ErrorKind::BadCharRange { message }, *pos)),
    }
}

/// Unescapes a literal, or the located error.
pub(crate) fn check_literal(lit: &Literal) -> Result<(), RawError> {
    literal_value(lit).map(|_| ()).map_err(|e| match e {
        LiteralError::Escape(message) => err(ErrorKind::BadEscape { message }, lit.pos),
        LiteralError::Empty => err(ErrorKind::EmptyLiteral, lit.pos),
    })
}
