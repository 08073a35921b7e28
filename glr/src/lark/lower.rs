//! Definitions → [`Grammar`]: rule bodies to [`Expr`], anonymous literals to terminals,
//! templates instantiated, then everything the start rule cannot reach dropped.
//!
//! Passes, in order (after [`super::defs`] and [`super::terminals`]):
//! 1. **Rules**, in Lark's order: every non-template rule in definition order, then each
//!    template instance in the order of its creation. Inside a rule, literals get terminals and
//!    template uses get instances in the order Lark's transformer visits them ([`order`]), so
//!    `__ANON_n` numbers match Lark's: a literal equal to a defined terminal's literal reuses
//!    it, else it is named after its punctuation (`LPAR`) or its uppercased text (`IF`), else
//!    `__ANON_n`.
//! 2. **Reachability** from the start rule; unreachable rules are dropped.
//! 3. **Productivity**: every kept rule must derive a finite string (a linear-time propagation
//!    over the and/or structure of the bodies).
//! 4. **Terminals**: kept are those the kept rules use plus the `%ignore`d ones, in Lark's order
//!    (defined terminals in definition order, then anonymous ones); none may match the empty
//!    string.
//!
//! After this point the [`Grammar`] invariants hold.

use ahash::{AHashMap, AHashSet};

use munch_lexer::TerminalId;

use super::ast::*;
use super::defs::{Defs, Ns};
use super::error::ErrorKind;
use super::names::{is_identifier, punctuation_name};
use super::order;
use super::terminals::{self, Identity, TermPattern};
use super::RawError;
use crate::grammar::{
    Alternative, Expr as GExpr, Grammar, Rule, RuleId, Terminal, TerminalPattern,
};
use crate::span::Span;

/// The name of the rule that chooses among several start rules (a name no Lark grammar can
/// define: Lark reserves names starting with `__`).
pub(crate) const START_CHOICE: &str = "__start";

/// Budget: distinct template instances.
pub(crate) const MAX_TEMPLATE_INSTANCES: usize = 10_000;
/// Budget: the length of one template instance's name (`sep{item,COMMA}`), which grows with
/// every level of a template that instantiates itself with a bigger argument.
pub(crate) const MAX_INSTANCE_NAME: usize = 4096;

fn err(kind: ErrorKind, pos: Pos) -> RawError {
    RawError {
        kind,
        pos,
        aux: None,
    }
}

/// A terminal slot: a definition of `defs.terms` (same index) or an anonymous literal.
struct Slot {
    name: String,
    pattern: Option<TermPattern>,
    priority: i32,
    pos: Pos,
    /// A grammar terminal (not a library definition).
    user: bool,
}

/// A template argument.
#[derive(Clone, Copy, Debug)]
enum Arg {
    /// A terminal slot.
    Term(usize),
    /// A rule or template definition (index into `defs.rules`).
    Def(usize),
    /// A template instance (index into the rule slots).
    Inst(usize),
}

/// A rule slot: a definition of `defs.rules` (same index) or a template instance.
struct RuleSlot {
    name: String,
    pos: Pos,
    /// The definition it comes from.
    def: usize,
    /// Template arguments (for instances).
    args: Vec<Arg>,
    /// The lowered body, once lowered (never for templates and `%declare`d rules).
    expr: Option<GExpr>,
}

struct Lowerer<'d, 'f> {
    defs: &'d Defs<'f>,
    src: &'d str,
    nest_limit: u32,
    terms: Vec<Slot>,
    /// Defined and anonymous terminals by Lark identity (later definitions win, as in Lark).
    term_reverse: AHashMap<Identity, usize>,
    term_names: AHashSet<String>,
    anon_count: usize,
    rules: Vec<RuleSlot>,
    instances: AHashMap<String, usize>,
    /// For the rule being lowered: the terminal of each literal and the rule slot of each
    /// template use, by the address of its `Value` (see [`addr`]).
    memo: AHashMap<usize, usize>,
}

/// Identifies a node of the syntax tree while one rule is lowered (the tree is not moved).
fn addr(v: &Value) -> usize {
    v as *const Value as usize
}

/// Builds the grammar. `span` turns positions into spans.
pub(crate) fn lower(
    flat: &super::imports::Flat,
    src: &str,
    config: &super::LoadConfig,
    span: &dyn Fn(Pos) -> Span,
) -> Result<Grammar, RawError> {
    let defs = super::defs::collect(&flat.file, &flat.hidden)?;
    super::defs::validate(&defs)?;
    let patterns = terminals::build_all(&defs, src, config.max_nesting, config.meets)?;
    let mut l = Lowerer::new(&defs, patterns, src, config.max_nesting);
    l.lower_rules()?;
    l.assemble(&config.start, span)
}

impl<'d, 'f> Lowerer<'d, 'f> {
    fn new(
        defs: &'d Defs<'f>,
        patterns: Vec<Option<TermPattern>>,
        src: &'d str,
        max_nesting: usize,
    ) -> Self {
        let mut terms = Vec::with_capacity(patterns.len());
        let mut term_reverse = AHashMap::new();
        let mut term_names = AHashSet::new();
        for (i, (entry, pattern)) in defs.terms.iter().zip(patterns).enumerate() {
            let user = entry.ns == Ns::User;
            if user {
                term_names.insert(entry.name.clone());
                if let Some(p) = &pattern {
                    if p.identity != Identity::Composite {
                        term_reverse.insert(p.identity.clone(), i);
                    }
                }
            }
            terms.push(Slot {
                name: entry.name.clone(),
                pattern,
                priority: super::defs::narrow(entry.priority),
                pos: entry.pos,
                user,
            });
        }
        let rules = defs
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| RuleSlot {
                name: r.name.clone(),
                pos: r.pos,
                def: i,
                args: Vec::new(),
                expr: None,
            })
            .collect();
        Self {
            defs,
            src,
            nest_limit: u32::try_from(max_nesting).unwrap_or(u32::MAX),
            terms,
            term_reverse,
            term_names,
            anon_count: 0,
            rules,
            instances: AHashMap::new(),
            memo: AHashMap::new(),
        }
    }

    /// Pass 1: lowers every rule and template instance (instances are appended while this
    /// runs).
    fn lower_rules(&mut self) -> Result<(), RawError> {
        let defs = self.defs;
        let mut i = 0;
        while i < self.rules.len() {
            let def = &defs.rules[self.rules[i].def];
            let is_instance = i >= defs.rules.len();
            if def.declared || (!def.params.is_empty() && !is_instance) {
                i += 1;
                continue;
            }
            let args = self.rules[i].args.clone();
            let envs: Vec<Vec<(&str, Arg)>> = def
                .bodies
                .iter()
                .map(|body| {
                    body.params
                        .iter()
                        .map(|p| p.text.as_str())
                        .zip(args.iter().copied())
                        .collect()
                })
                .collect();
            // Name literals, then instantiate templates, in Lark's order (see `order`).
            self.memo.clear();
            let occurrences = order::occurrences(&def.bodies);
            for o in occurrences
                .iter()
                .filter(|o| o.kind == order::Kind::Literal)
            {
                let t = self.anonymous(o.value)?;
                self.memo.insert(addr(o.value), t);
            }
            for o in occurrences
                .iter()
                .filter(|o| o.kind == order::Kind::Template)
            {
                let r = self.instance(o.value, &envs[o.body])?;
                self.memo.insert(addr(o.value), r);
            }
            let mut alts: Vec<Alternative> = Vec::new();
            for (body, env) in def.bodies.iter().zip(&envs) {
                for alt in &body.exps.alts {
                    let expr = self.seq(&alt.items, env)?;
                    let alias = alt.alias.as_ref().map(|a| a.text.clone());
                    alts.push(Alternative { expr, alias });
                }
            }
            let expr = if alts.len() == 1 && alts[0].alias.is_none() {
                alts.pop().map(|a| a.expr).unwrap_or(GExpr::Empty)
            } else {
                GExpr::Alt(alts)
            };
            self.rules[i].expr = Some(expr);
            i += 1;
        }
        Ok(())
    }

    /// Alternatives of a group (no aliases: validation rejects them there).
    fn group(&mut self, exps: &Expansions, env: &[(&str, Arg)]) -> Result<GExpr, RawError> {
        let mut alts = Vec::with_capacity(exps.alts.len());
        for alt in &exps.alts {
            alts.push(Alternative {
                expr: self.seq(&alt.items, env)?,
                alias: None,
            });
        }
        Ok(if alts.len() == 1 {
            alts.pop().map(|a| a.expr).unwrap_or(GExpr::Empty)
        } else {
            GExpr::Alt(alts)
        })
    }

    /// A sequence; groups without an operator are spliced into it.
    fn seq(&mut self, items: &[Expr], env: &[(&str, Arg)]) -> Result<GExpr, RawError> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match self.item(item, env)? {
                GExpr::Seq(inner) => out.extend(inner),
                GExpr::Empty => {}
                e => out.push(e),
            }
        }
        Ok(match out.len() {
            0 => GExpr::Empty,
            1 => out.pop().unwrap_or(GExpr::Empty),
            _ => GExpr::Seq(out),
        })
    }

    fn item(&mut self, item: &Expr, env: &[(&str, Arg)]) -> Result<GExpr, RawError> {
        let atom = match &item.atom {
            Atom::Group(inner) => self.group(inner, env)?,
            Atom::Maybe(inner) => GExpr::Optional(Box::new(self.group(inner, env)?)),
            Atom::Value(v) => self.value(v, env)?,
        };
        Ok(match item.op {
            None => atom,
            Some(Op::Opt) => GExpr::Optional(Box::new(atom)),
            Some(Op::Star) => GExpr::Star(Box::new(atom)),
            Some(Op::Plus) => GExpr::Plus(Box::new(atom)),
            Some(Op::Repeat { min, max }) => {
                let (min, max) = super::defs::repeat_bounds(min, max)?;
                GExpr::Repeat {
                    expr: Box::new(atom),
                    min,
                    max,
                }
            }
        })
    }

    fn lookup(env: &[(&str, Arg)], name: &str) -> Option<Arg> {
        env.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }

    fn value(&mut self, v: &Value, env: &[(&str, Arg)]) -> Result<GExpr, RawError> {
        match v {
            Value::Terminal(n) => Ok(GExpr::Terminal(self.user_term(n)?)),
            Value::Rule(n) => {
                let arg = match Self::lookup(env, &n.text) {
                    Some(a) => a,
                    None => Arg::Def(self.rule_def(n)?),
                };
                match arg {
                    Arg::Term(t) => Ok(GExpr::Terminal(TerminalId::from_usize(t))),
                    Arg::Inst(r) => Ok(GExpr::Rule(rule_id(r)?)),
                    Arg::Def(d) => {
                        let expected = self.defs.rules[d].params.len();
                        if expected != 0 {
                            return Err(err(
                                ErrorKind::TemplateArity {
                                    name: self.defs.rules[d].name.clone(),
                                    expected,
                                    found: 0,
                                },
                                n.pos,
                            ));
                        }
                        Ok(GExpr::Rule(rule_id(d)?))
                    }
                }
            }
            Value::Template { .. } => {
                let r = match self.memo.get(&addr(v)) {
                    Some(&r) => r,
                    None => self.instance(v, env)?,
                };
                Ok(GExpr::Rule(rule_id(r)?))
            }
            Value::Literal(_) | Value::Range { .. } => {
                let t = match self.memo.get(&addr(v)) {
                    Some(&t) => t,
                    None => self.anonymous(v)?,
                };
                Ok(GExpr::Terminal(TerminalId::from_usize(t)))
            }
        }
    }

    fn user_term(&self, n: &Name) -> Result<TerminalId, RawError> {
        self.defs
            .user_terms
            .get(&n.text)
            .map(|&t| TerminalId::from_usize(t))
            .ok_or_else(|| {
                err(
                    ErrorKind::UndefinedTerminal {
                        name: n.text.clone(),
                    },
                    n.pos,
                )
            })
    }

    fn rule_def(&self, n: &Name) -> Result<usize, RawError> {
        self.defs.rule_index.get(&n.text).copied().ok_or_else(|| {
            err(
                ErrorKind::UndefinedRule {
                    name: n.text.clone(),
                },
                n.pos,
            )
        })
    }

    /// The rule slot of template use `v` (`name{args}`), instantiating it on first use.
    fn instance(&mut self, v: &Value, env: &[(&str, Arg)]) -> Result<usize, RawError> {
        let Value::Template { name, args, pos } = v else {
            return Err(err(
                ErrorKind::UndefinedRule {
                    name: String::new(),
                },
                v.pos(),
            ));
        };
        let def = match Self::lookup(env, &name.text) {
            Some(Arg::Def(d)) => d,
            Some(_) => {
                return Err(err(
                    ErrorKind::TemplateArity {
                        name: name.text.clone(),
                        expected: 0,
                        found: args.len(),
                    },
                    *pos,
                ))
            }
            None => self.rule_def(name)?,
        };
        let expected = self.defs.rules[def].params.len();
        if expected != args.len() {
            return Err(err(
                ErrorKind::TemplateArity {
                    name: name.text.clone(),
                    expected,
                    found: args.len(),
                },
                *pos,
            ));
        }
        let mut lowered = Vec::with_capacity(args.len());
        for a in args {
            lowered.push(match a {
                Value::Rule(n) => match Self::lookup(env, &n.text) {
                    Some(arg) => arg,
                    None => Arg::Def(self.rule_def(n)?),
                },
                Value::Terminal(n) => Arg::Term(self.user_term(n)?.as_usize()),
                Value::Literal(_) | Value::Range { .. } => match self.memo.get(&addr(a)) {
                    Some(&t) => Arg::Term(t),
                    None => Arg::Term(self.anonymous(a)?),
                },
                Value::Template { .. } => match self.memo.get(&addr(a)) {
                    Some(&r) => Arg::Inst(r),
                    None => Arg::Inst(self.instance(a, env)?),
                },
            });
        }
        // Lark's name for the instance: `name{arg,arg}`.
        let mut inst = self.defs.rules[def].name.clone();
        inst.push('{');
        for (k, a) in lowered.iter().enumerate() {
            if k > 0 {
                inst.push(',');
            }
            inst.push_str(match a {
                Arg::Term(t) => &self.terms[*t].name,
                Arg::Def(d) => &self.defs.rules[*d].name,
                Arg::Inst(r) => &self.rules[*r].name,
            });
            if inst.len() > MAX_INSTANCE_NAME {
                return Err(err(
                    ErrorKind::LimitExceeded {
                        what: "characters in a template instance's name",
                        limit: MAX_INSTANCE_NAME,
                    },
                    *pos,
                ));
            }
        }
        inst.push('}');
        if let Some(&r) = self.instances.get(&inst) {
            return Ok(r);
        }
        if self.instances.len() >= MAX_TEMPLATE_INSTANCES {
            return Err(err(
                ErrorKind::LimitExceeded {
                    what: "template instances",
                    limit: MAX_TEMPLATE_INSTANCES,
                },
                *pos,
            ));
        }
        let r = self.rules.len();
        self.instances.insert(inst.clone(), r);
        self.rules.push(RuleSlot {
            name: inst,
            pos: self.defs.rules[def].pos,
            def,
            args: lowered,
            expr: None,
        });
        Ok(r)
    }

    /// The terminal of an anonymous literal or range, created on first sight.
    fn anonymous(&mut self, v: &Value) -> Result<usize, RawError> {
        let Some(identity) = terminals::identity(v) else {
            // Validation has unescaped every literal; this only guards the invariant.
            return Err(err(
                ErrorKind::BadEscape {
                    message: "bad literal".to_string(),
                },
                v.pos(),
            ));
        };
        if let Some(&t) = self.term_reverse.get(&identity) {
            return Ok(t);
        }
        let pos = v.pos();
        let source = self.src.get(pos.start..pos.end).unwrap_or("");
        let pattern = terminals::anonymous(v, source, self.nest_limit)?;
        let mut name = None;
        if let Identity::Str(value, _) = &identity {
            name = punctuation_name(value).map(str::to_string).or_else(|| {
                let upper = value.to_uppercase();
                (is_identifier(value) && !self.term_names.contains(&upper)).then_some(upper)
            });
            if name.as_ref().is_some_and(|n| self.term_names.contains(n)) {
                name = None;
            }
        }
        let name = name.unwrap_or_else(|| {
            let n = format!("__ANON_{}", self.anon_count);
            self.anon_count += 1;
            n
        });
        let t = self.terms.len();
        self.term_names.insert(name.clone());
        self.term_reverse.insert(identity, t);
        self.terms.push(Slot {
            name,
            pattern: Some(pattern),
            priority: 0,
            pos,
            user: true,
        });
        Ok(t)
    }

    /// Passes 2–4, and the final numbering.
    fn assemble(
        mut self,
        starts: &[String],
        span: &dyn Fn(Pos) -> Span,
    ) -> Result<Grammar, RawError> {
        let mut start_rules = Vec::with_capacity(starts.len());
        for start in starts {
            let rule = self
                .defs
                .rule_index
                .get(start.as_str())
                .copied()
                .filter(|&r| self.defs.rules[r].params.is_empty());
            match rule {
                Some(r) if !start_rules.contains(&r) => start_rules.push(r),
                Some(_) => {}
                None => {
                    return Err(err(
                        ErrorKind::NoStartRule {
                            name: start.to_string(),
                        },
                        Pos { start: 0, end: 0 },
                    ))
                }
            }
        }
        let start_rule = match start_rules.as_slice() {
            [] => {
                return Err(err(
                    ErrorKind::NoStartRule {
                        name: String::new(),
                    },
                    Pos { start: 0, end: 0 },
                ))
            }
            [one] => *one,
            several => {
                // Several start rules (Lark builds one table per start and parses with one of
                // them): munch accepts a text that any of them derives, through one inlined
                // rule whose alternatives are the start rules.
                let mut alts = Vec::with_capacity(several.len());
                for &r in several {
                    alts.push(Alternative {
                        expr: GExpr::Rule(rule_id(r)?),
                        alias: None,
                    });
                }
                self.rules.push(RuleSlot {
                    name: START_CHOICE.to_string(),
                    pos: Pos::default(),
                    def: several[0],
                    args: Vec::new(),
                    expr: Some(GExpr::Alt(alts)),
                });
                self.rules.len() - 1
            }
        };

        // Pass 2: reachability.
        let mut reachable = vec![false; self.rules.len()];
        reachable[start_rule] = true;
        let mut queue = vec![start_rule];
        let mut refs = Vec::new();
        while let Some(r) = queue.pop() {
            let Some(expr) = &self.rules[r].expr else {
                return Err(err(
                    ErrorKind::NonProductive {
                        name: self.rules[r].name.clone(),
                    },
                    self.rules[r].pos,
                ));
            };
            refs.clear();
            collect_rules(expr, &mut refs);
            for &d in &refs {
                if !reachable[d] {
                    reachable[d] = true;
                    queue.push(d);
                }
            }
        }

        // Pass 3: productivity.
        let productive = productive(&self.rules, &reachable);
        if let Some(mut r) = (0..self.rules.len()).find(|&r| reachable[r] && !productive[r]) {
            // Blame the rule where the trouble is: follow unproductive references until they
            // come back (`start: "x" list`, `list: item list` reports `list`, not `start`).
            let mut visited = vec![false; self.rules.len()];
            visited[r] = true;
            loop {
                let mut refs = Vec::new();
                if let Some(expr) = &self.rules[r].expr {
                    collect_rules(expr, &mut refs);
                }
                match refs.into_iter().find(|&d| !productive[d] && !visited[d]) {
                    Some(d) => {
                        visited[d] = true;
                        r = d;
                    }
                    None => break,
                }
            }
            return Err(err(
                ErrorKind::NonProductive {
                    name: self.rules[r].name.clone(),
                },
                self.rules[r].pos,
            ));
        }

        // Pass 4: terminals.
        let mut used = vec![false; self.terms.len()];
        let mut ignored = vec![false; self.terms.len()];
        let mut ts = Vec::new();
        for (r, slot) in self.rules.iter().enumerate() {
            if let (true, Some(expr)) = (reachable[r], &slot.expr) {
                ts.clear();
                collect_terminals(expr, &mut ts);
                for &t in &ts {
                    used[t] = true;
                }
            }
        }
        for ig in &self.defs.ignore {
            if let Some(&t) = self.defs.user_terms.get(&ig.name) {
                used[t] = true;
                ignored[t] = true;
            }
        }
        let mut term_ids = vec![None; self.terms.len()];
        let mut terminals = Vec::new();
        for (t, slot) in self.terms.into_iter().enumerate() {
            if !used[t] || !slot.user {
                continue;
            }
            let Some(p) = slot.pattern else { continue };
            if let Ok(hir) = &p.hir {
                if hir.properties().minimum_len() == Some(0) {
                    return Err(err(ErrorKind::EmptyMatch { name: slot.name }, slot.pos));
                }
            }
            let is_literal = p.is_literal();
            term_ids[t] = Some(TerminalId::from_usize(terminals.len()));
            terminals.push(Terminal {
                name: slot.name,
                pattern: p.hir.map(|hir| TerminalPattern {
                    hir,
                    is_literal,
                    source: p.source,
                }),
                priority: slot.priority,
                ignored: ignored[t],
                span: span(slot.pos),
            });
        }

        let mut rule_ids = vec![None; self.rules.len()];
        let mut n = 0usize;
        for (r, &keep) in reachable.iter().enumerate() {
            if keep {
                rule_ids[r] = Some(rule_id(n)?);
                n += 1;
            }
        }
        let mut rules = Vec::with_capacity(n);
        for (r, slot) in self.rules.into_iter().enumerate() {
            if !reachable[r] {
                continue;
            }
            let def = &self.defs.rules[slot.def];
            let synthetic = slot.name == START_CHOICE;
            let Some(expr) = slot.expr else { continue };
            rules.push(Rule {
                inline: slot.name.starts_with('_'),
                name: slot.name,
                expr: renumber(expr, &term_ids, &rule_ids),
                priority: if synthetic {
                    0
                } else {
                    super::defs::narrow(def.priority)
                },
                expand_single: def.expand_single && !synthetic,
                keep_all_tokens: def.keep_all_tokens && !synthetic,
                span: span(slot.pos),
            });
        }
        // The start rule is reachable, so it has an id.
        let start = rule_ids[start_rule].map_or_else(|| rule_id(0), Ok)?;
        Ok(Grammar {
            terminals,
            rules,
            start,
        })
    }
}

fn rule_id(i: usize) -> Result<RuleId, RawError> {
    RuleId::new(i).ok_or_else(|| {
        err(
            ErrorKind::LimitExceeded {
                what: "rules",
                limit: u32::MAX as usize,
            },
            Pos::default(),
        )
    })
}

/// The rules `e` refers to.
fn collect_rules(e: &GExpr, out: &mut Vec<usize>) {
    match e {
        GExpr::Empty | GExpr::Terminal(_) => {}
        GExpr::Rule(r) => out.push(r.as_usize()),
        GExpr::Seq(v) => v.iter().for_each(|c| collect_rules(c, out)),
        GExpr::Alt(v) => v.iter().for_each(|a| collect_rules(&a.expr, out)),
        GExpr::Optional(c) | GExpr::Star(c) | GExpr::Plus(c) => collect_rules(c, out),
        GExpr::Repeat { expr, .. } => collect_rules(expr, out),
    }
}

/// The terminals `e` refers to.
fn collect_terminals(e: &GExpr, out: &mut Vec<usize>) {
    match e {
        GExpr::Empty | GExpr::Rule(_) => {}
        GExpr::Terminal(t) => out.push(t.as_usize()),
        GExpr::Seq(v) => v.iter().for_each(|c| collect_terminals(c, out)),
        GExpr::Alt(v) => v.iter().for_each(|a| collect_terminals(&a.expr, out)),
        GExpr::Optional(c) | GExpr::Star(c) | GExpr::Plus(c) => collect_terminals(c, out),
        GExpr::Repeat { expr, .. } => collect_terminals(expr, out),
    }
}

fn renumber(e: GExpr, terms: &[Option<TerminalId>], rules: &[Option<RuleId>]) -> GExpr {
    let re = |c: Box<GExpr>| Box::new(renumber(*c, terms, rules));
    match e {
        GExpr::Empty => GExpr::Empty,
        // Every terminal and rule a kept rule uses is kept; the fallbacks are never taken.
        GExpr::Terminal(t) => GExpr::Terminal(terms[t.as_usize()].unwrap_or(t)),
        GExpr::Rule(r) => GExpr::Rule(rules[r.as_usize()].unwrap_or(r)),
        GExpr::Seq(v) => GExpr::Seq(v.into_iter().map(|c| renumber(c, terms, rules)).collect()),
        GExpr::Alt(v) => GExpr::Alt(
            v.into_iter()
                .map(|a| Alternative {
                    expr: renumber(a.expr, terms, rules),
                    alias: a.alias,
                })
                .collect(),
        ),
        GExpr::Optional(c) => GExpr::Optional(re(c)),
        GExpr::Star(c) => GExpr::Star(re(c)),
        GExpr::Plus(c) => GExpr::Plus(re(c)),
        GExpr::Repeat { expr, min, max } => GExpr::Repeat {
            expr: re(expr),
            min,
            max,
        },
    }
}

/// Which rules derive a finite string: propagation over an and/or graph of the bodies, linear
/// in their size (a naive fixpoint is quadratic on long chains of rules).
fn productive(rules: &[RuleSlot], reachable: &[bool]) -> Vec<bool> {
    struct Node {
        /// Children still needed: all of them for a sequence, one for an alternation.
        need: usize,
        parent: Option<usize>,
        /// For a body's root: its rule.
        rule: Option<usize>,
        done: bool,
    }
    struct Graph {
        nodes: Vec<Node>,
        /// Per rule: the reference nodes waiting for it.
        waiters: Vec<Vec<usize>>,
        ready: Vec<usize>,
    }
    impl Graph {
        fn add(&mut self, e: &GExpr, parent: Option<usize>) -> usize {
            let id = self.nodes.len();
            self.nodes.push(Node {
                need: 0,
                parent,
                rule: None,
                done: false,
            });
            let need = match e {
                GExpr::Empty
                | GExpr::Terminal(_)
                | GExpr::Optional(_)
                | GExpr::Star(_)
                | GExpr::Repeat { min: 0, .. } => 0,
                GExpr::Rule(r) => {
                    self.waiters[r.as_usize()].push(id);
                    1
                }
                GExpr::Seq(v) => {
                    v.iter().for_each(|c| {
                        self.add(c, Some(id));
                    });
                    v.len()
                }
                GExpr::Alt(v) => {
                    v.iter().for_each(|a| {
                        self.add(&a.expr, Some(id));
                    });
                    // An empty alternation derives nothing.
                    if v.is_empty() {
                        usize::MAX
                    } else {
                        1
                    }
                }
                GExpr::Plus(c) | GExpr::Repeat { expr: c, .. } => {
                    self.add(c, Some(id));
                    1
                }
            };
            self.nodes[id].need = need;
            if need == 0 {
                self.ready.push(id);
            }
            id
        }
    }
    let mut g = Graph {
        nodes: Vec::new(),
        waiters: vec![Vec::new(); rules.len()],
        ready: Vec::new(),
    };
    for (r, slot) in rules.iter().enumerate() {
        if let (true, Some(expr)) = (reachable[r], &slot.expr) {
            let root = g.add(expr, None);
            g.nodes[root].rule = Some(r);
        }
    }
    let mut productive = vec![false; rules.len()];
    while let Some(n) = g.ready.pop() {
        if g.nodes[n].done {
            continue;
        }
        g.nodes[n].done = true;
        let mut satisfied = Vec::new();
        match (g.nodes[n].parent, g.nodes[n].rule) {
            (Some(p), _) => satisfied.push(p),
            (None, Some(r)) => {
                productive[r] = true;
                satisfied.extend(g.waiters[r].iter().copied());
            }
            (None, None) => {}
        }
        for p in satisfied {
            let node = &mut g.nodes[p];
            node.need = node.need.saturating_sub(1);
            if node.need == 0 && !node.done {
                g.ready.push(p);
            }
        }
    }
    productive
}
