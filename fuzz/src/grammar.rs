//! [`GrammarSpec`]: small random grammars, built twice — once as munch's EBNF
//! [`Grammar`](munch_glr::grammar::Grammar) for the parser, once expanded to BNF by this crate
//! for the Earley reference — and the reference acceptance of a text.
//!
//! Rules have up to three alternatives of up to three items; an item is a terminal, a rule or a
//! parenthesised group, with `?`, `*`, `+` or `~ min..max`. Rule references are arbitrary, so
//! ε-rules, ambiguity, unit cycles and left, right, middle and hidden-left recursion all occur.
//! Rule 0 is the start.
//!
//! The Earley side never sees munch's EBNF lowering: [`GrammarSpec::bnf`] expands every
//! operator into helper rules itself (with shapes unlike munch's: `*` and `+` right-recursive),
//! so normalising it is only a flattening.

use std::collections::HashSet;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use munch_glr::cfg::{normalize, Cfg, NormalizeConfig};
use munch_glr::grammar::{Alternative, Expr, Grammar, Rule, RuleId, Terminal, TerminalPattern};
use munch_glr::parser::{Parser, ParserBuildErrorKind, ParserConfig};
use munch_glr::span::Span;
use munch_lexer::dfa::LexerBuildErrorKind;
use munch_lexer::TerminalId;
use munch_testkit::earley::Earley;
use munch_testkit::generate::{GenerateConfig, Generator, SeededRng};

use crate::lexer::arbitrary_term;
use crate::re::Re;
use crate::reference::{Pattern, RefLexer, Term};
use crate::repro::{call, repro_struct, repro_variant, Repro};

/// What an item repeats.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Sym {
    /// Terminal `i`.
    T(usize),
    /// Rule `i`.
    N(usize),
    /// A parenthesised group of alternatives.
    Group(Vec<Vec<Item>>),
}

/// An item's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Exactly once.
    One,
    /// `?`.
    Opt,
    /// `*`.
    Star,
    /// `+`.
    Plus,
    /// `~ min..max`.
    Rep(u32, u32),
}

/// One item of an alternative.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    /// What is repeated.
    pub sym: Sym,
    /// How.
    pub op: Op,
}

impl Item {
    /// `sym` repeated as `op` says (the form `Debug` prints, one line a item).
    pub fn new(sym: Sym, op: Op) -> Item {
        Item { sym, op }
    }
}

/// A small grammar: terminals, and rules as alternatives of items. Rule 0 is the start.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GrammarSpec {
    /// Terminal `i` is `TerminalId(i)`, named `T{i}`.
    pub terms: Vec<Term>,
    /// Rule `i` is named `n{i}`: its alternatives.
    pub rules: Vec<Vec<Vec<Item>>>,
}

impl GrammarSpec {
    /// A random grammar with up to `max_terms` terminals and `max_rules` rules. Terminals never
    /// match the empty string (a nullable regex gets a leading character).
    pub fn arbitrary_sized(
        u: &mut Unstructured<'_>,
        max_terms: usize,
        max_rules: usize,
    ) -> Result<GrammarSpec> {
        let n_terms = u.int_in_range(1..=max_terms)?;
        let mut terms = Vec::with_capacity(n_terms);
        for _ in 0..n_terms {
            let mut t = arbitrary_term(u)?;
            if let Pattern::Regex(re) = &t.pattern {
                if re.nullable() {
                    let c = *u.choose(&crate::re::CHARS[..4])?;
                    t.pattern = Pattern::Regex(Re::Cat(vec![Re::Char(c), re.clone()]));
                }
            }
            terms.push(t);
        }
        let n_rules = u.int_in_range(1..=max_rules)?;
        let mut rules = Vec::with_capacity(n_rules);
        for _ in 0..n_rules {
            rules.push(arbitrary_alts(u, n_terms, n_rules, 1)?);
        }
        Ok(GrammarSpec { terms, rules })
    }

    /// munch's view: the EBNF grammar, operators and groups as written.
    pub fn grammar(&self) -> Grammar {
        let rules = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, alts)| rule(format!("n{i}"), ebnf_alts(alts)))
            .collect();
        Grammar {
            terminals: self.terminals(),
            rules,
            start: RuleId::new(0).expect("0 fits"),
        }
    }

    fn terminals(&self) -> Vec<Terminal> {
        self.terms
            .iter()
            .enumerate()
            .map(|(i, t)| Terminal {
                name: format!("T{i}"),
                pattern: Ok(TerminalPattern {
                    hir: t.pattern.hir(),
                    is_literal: t.pattern.is_literal(),
                    source: t.pattern.lark(),
                }),
                priority: t.priority,
                ignored: t.ignored,
                span: Span::default(),
            })
            .collect()
    }

    /// The reference's view: the same language in plain BNF, every operator and group expanded
    /// into helper rules by this crate.
    pub fn bnf(&self) -> Grammar {
        let mut out: Vec<Vec<Vec<Expr>>> = vec![Vec::new(); self.rules.len()];
        for (i, alts) in self.rules.iter().enumerate() {
            let expanded = bnf_alts(alts, &mut out);
            out[i] = expanded;
        }
        let rules = out
            .into_iter()
            .enumerate()
            .map(|(i, alts)| {
                let expr = Expr::Alt(
                    alts.into_iter()
                        .map(|seq| Alternative {
                            expr: if seq.is_empty() {
                                Expr::Empty
                            } else {
                                Expr::Seq(seq)
                            },
                            alias: None,
                        })
                        .collect(),
                );
                rule(format!("b{i}"), expr)
            })
            .collect();
        Grammar {
            terminals: self.terminals(),
            rules,
            start: RuleId::new(0).expect("0 fits"),
        }
    }

    /// The grammar in Lark syntax, for comments and for trying it with the `munch` CLI.
    pub fn lark(&self) -> String {
        let mut s = String::new();
        for (i, alts) in self.rules.iter().enumerate() {
            let name = if i == 0 {
                "start".to_string()
            } else {
                format!("n{i}")
            };
            s.push_str(&format!("{name}: {}\n", lark_alts(alts)));
        }
        for (i, t) in self.terms.iter().enumerate() {
            s.push_str(&format!("T{i}.{}: {}\n", t.priority, t.pattern.lark()));
            if t.ignored {
                s.push_str(&format!("%ignore T{i}\n"));
            }
        }
        s
    }

    /// Builds munch's parser and the reference pieces. `Err(Skip)` is a budget of the build
    /// (the case is skipped); `Err(Failure)` is a build that should have worked.
    pub fn build(&self) -> std::result::Result<Built, BuildError> {
        // Budgets sized for these small grammars: a terminal like `(.{2,})` followed by a dozen
        // fixed characters needs exponentially many DFA states, and reaching the default
        // 100,000-state budget takes a minute under ASan, which libFuzzer reports as a hang.
        let config = ParserConfig {
            max_lr_states: 5_000,
            lexer: munch_lexer::dfa::LexerConfig {
                max_states: 5_000,
                ..munch_lexer::dfa::LexerConfig::default()
            },
            // The references here read literals as Lark's basic lexer does (a literal beats a
            // regex everywhere, `...` is never three `.`); [`Built::contextual`] reads them
            // contextually.
            contextual_literals: false,
            ..ParserConfig::default()
        };
        let contextual = Parser::new(
            &self.grammar(),
            &ParserConfig {
                contextual_literals: true,
                ..config.clone()
            },
        )
        .ok()
        .filter(|p| !p.lexer().stand_ins().is_empty() || !p.split_literals().is_empty())
        .map(Arc::new);
        let parser = Parser::new(&self.grammar(), &config).map_err(|e| {
            let budget = match e.kind() {
                ParserBuildErrorKind::Lr(_) | ParserBuildErrorKind::Normalize(_) => true,
                ParserBuildErrorKind::Lexer(l) => matches!(
                    l.kind(),
                    LexerBuildErrorKind::TooManyStates { .. }
                        | LexerBuildErrorKind::TooMuchMemory { .. }
                        | LexerBuildErrorKind::NfaTooBig { .. }
                ),
                _ => false,
            };
            if budget {
                BuildError::Skip(e.to_string())
            } else {
                BuildError::Failure(format!("Parser::new failed: {e}"))
            }
        })?;
        let bnf = normalize(&self.bnf(), &NormalizeConfig::default())
            .map_err(|e| BuildError::Skip(e.to_string()))?;
        // Built only where it differs: with shift/reduce conflicts.
        let shifted = parser
            .conflicts()
            .iter()
            .any(|c| c.kind().contains("shift"))
            .then(|| {
                Parser::new(
                    &self.grammar(),
                    &ParserConfig {
                        prefer_shift: true,
                        ..config.clone()
                    },
                )
                .ok()
                .map(Arc::new)
            })
            .flatten();
        Ok(Built {
            parser: Arc::new(parser),
            contextual,
            shifted,
            bnf,
            reference: RefLexer::new(&self.terms),
            ignored: self.terms.iter().map(|t| t.ignored).collect(),
        })
    }

    /// A random text of the grammar: a sentence drawn from the BNF, each terminal spelled by a
    /// random string of its pattern, sometimes separated by an ignored terminal's string. It
    /// need not parse (a lexeme may run into the next); the reference decides.
    pub fn sample_text(&self, built: &Built, seed: u64, max_len: usize) -> Option<Vec<u8>> {
        let gen = Generator::new(&built.bnf);
        let mut rng = SeededRng::new(seed);
        let config = GenerateConfig {
            max_depth: 6,
            max_len,
        };
        let sentence = gen.sentence(&mut rng, &config)?;
        let ignored: Vec<usize> = (0..self.terms.len())
            .filter(|&t| self.terms[t].ignored)
            .collect();
        let mut pick = |n: usize| rng.below(n);
        let mut out = Vec::new();
        for (i, t) in sentence.iter().enumerate() {
            if i > 0 && !ignored.is_empty() && pick(3) == 0 {
                let sep = ignored[pick(ignored.len())];
                crate::re::sample(&self.terms[sep].pattern.as_re(), &mut pick, &mut out);
            }
            let re = self.terms[t.as_usize()].pattern.as_re();
            crate::re::sample(&re, &mut pick, &mut out);
        }
        Some(out)
    }
}

/// Why [`GrammarSpec::build`] gave no parser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A budget was exceeded: skip the case.
    Skip(String),
    /// munch refused a grammar it should build: a finding.
    Failure(String),
}

impl BuildError {
    /// `Ok(())` for a skip, `Err(message)` for a failure: what a check returns.
    pub fn into_check(self) -> std::result::Result<(), String> {
        match self {
            BuildError::Skip(_) => Ok(()),
            BuildError::Failure(m) => Err(m),
        }
    }
}

/// A grammar built for a check.
pub struct Built {
    /// munch's parser for [`GrammarSpec::grammar`], reading ties as Lark's basic lexer does
    /// (`ParserConfig::contextual_literals` off), as the references here do.
    pub parser: Arc<Parser>,
    /// The same grammar's parser with Lark's contextual reading of literals (stand-ins for
    /// ties, literals read as copies of a shorter one), when it makes some: the maskers are
    /// checked against its oracle too (no reference here reads literals that way).
    pub contextual: Option<Arc<Parser>>,
    /// The same grammar's parser with its shift/reduce conflicts resolved by shifting
    /// (`ParserConfig::prefer_shift`), when it has some: the maskers are checked against its
    /// oracle too (the Earley reference takes the whole language).
    pub shifted: Option<Arc<Parser>>,
    /// [`GrammarSpec::bnf`], normalised, for the Earley reference.
    pub bnf: Cfg,
    /// The reference lexer over the same terminals.
    pub reference: RefLexer,
    /// Per terminal: `%ignore`d.
    pub ignored: Vec<bool>,
}

/// Most distinct terminal strings [`Built::reference_accepts`] follows at once.
pub const MAX_TIE_SEQUENCES: usize = 2_000;

impl Built {
    /// Whether `text` is a sentence by the reference: the reference lexer's lexemes, each read
    /// as any of its tied terminals (an ignored one drops the lexeme), give a terminal string
    /// the Earley recogniser accepts. `None` when the tie choices grow past
    /// [`MAX_TIE_SEQUENCES`] (the case is then skipped).
    pub fn reference_accepts(&self, earley: &Earley<'_>, text: &[u8]) -> Option<bool> {
        let Ok(lexemes) = self.reference.tokenize(text) else {
            return Some(false);
        };
        let mut seqs: HashSet<Vec<TerminalId>> = HashSet::from([Vec::new()]);
        for (_, _, tied) in &lexemes {
            let skip = tied.iter().any(|&t| self.ignored[t]);
            let mut next = HashSet::new();
            for seq in &seqs {
                if skip {
                    next.insert(seq.clone());
                }
                for &t in tied.iter().filter(|&&t| !self.ignored[t]) {
                    let mut s = seq.clone();
                    s.push(TerminalId::from_usize(t));
                    // Only prefixes of sentences can become sentences.
                    if earley.recognize(&s).viable_prefix {
                        next.insert(s);
                    }
                }
            }
            if next.len() > MAX_TIE_SEQUENCES {
                return None;
            }
            seqs = next;
        }
        Some(seqs.iter().any(|s| earley.recognize(s).accepts))
    }
}

fn rule(name: String, expr: Expr) -> Rule {
    Rule {
        name,
        expr,
        priority: 0,
        expand_single: false,
        inline: false,
        keep_all_tokens: false,
        span: Span::default(),
    }
}

fn arbitrary_alts(
    u: &mut Unstructured<'_>,
    n_terms: usize,
    n_rules: usize,
    depth: u32,
) -> Result<Vec<Vec<Item>>> {
    let n_alts = u.int_in_range(1..=3)?;
    let mut alts = Vec::with_capacity(n_alts);
    for _ in 0..n_alts {
        let n_items = u.int_in_range(0..=3)?;
        let mut items = Vec::with_capacity(n_items);
        for _ in 0..n_items {
            let sym = match u.int_in_range(0..=9)? {
                0..=4 => Sym::T(u.int_in_range(0..=n_terms - 1)?),
                5..=8 => Sym::N(u.int_in_range(0..=n_rules - 1)?),
                _ if depth > 0 => Sym::Group(arbitrary_alts(u, n_terms, n_rules, depth - 1)?),
                _ => Sym::T(u.int_in_range(0..=n_terms - 1)?),
            };
            let op = match u.int_in_range(0..=15)? {
                0..=9 => Op::One,
                10 => Op::Opt,
                11 => Op::Star,
                12 => Op::Plus,
                _ => {
                    let min = u.int_in_range(0..=2)?;
                    Op::Rep(min, min + u.int_in_range(0..=1)?)
                }
            };
            items.push(Item { sym, op });
        }
        alts.push(items);
    }
    Ok(alts)
}

fn ebnf_alts(alts: &[Vec<Item>]) -> Expr {
    let seq = |items: &[Item]| match items {
        [] => Expr::Empty,
        [one] => ebnf_item(one),
        _ => Expr::Seq(items.iter().map(ebnf_item).collect()),
    };
    match alts {
        [one] => seq(one),
        _ => Expr::Alt(
            alts.iter()
                .map(|a| Alternative {
                    expr: seq(a),
                    alias: None,
                })
                .collect(),
        ),
    }
}

fn ebnf_item(item: &Item) -> Expr {
    let sym = match &item.sym {
        Sym::T(t) => Expr::Terminal(TerminalId::from_usize(*t)),
        Sym::N(n) => Expr::Rule(RuleId::new(*n).expect("small")),
        Sym::Group(alts) => ebnf_alts(alts),
    };
    match item.op {
        Op::One => sym,
        Op::Opt => Expr::Optional(Box::new(sym)),
        Op::Star => Expr::Star(Box::new(sym)),
        Op::Plus => Expr::Plus(Box::new(sym)),
        Op::Rep(min, max) => Expr::Repeat {
            expr: Box::new(sym),
            min,
            max,
        },
    }
}

/// Expands `alts` into BNF alternatives, adding helper rules to `rules`.
fn bnf_alts(alts: &[Vec<Item>], rules: &mut Vec<Vec<Vec<Expr>>>) -> Vec<Vec<Expr>> {
    alts.iter()
        .map(|items| items.iter().map(|it| bnf_item(it, rules)).collect())
        .collect()
}

fn helper(rules: &mut Vec<Vec<Vec<Expr>>>, alts: Vec<Vec<Expr>>) -> Expr {
    rules.push(alts);
    Expr::Rule(RuleId::new(rules.len() - 1).expect("small"))
}

/// One symbol for `item`: the terminal or rule itself, or a new helper rule.
fn bnf_item(item: &Item, rules: &mut Vec<Vec<Vec<Expr>>>) -> Expr {
    let sym = match &item.sym {
        Sym::T(t) => Expr::Terminal(TerminalId::from_usize(*t)),
        Sym::N(n) => Expr::Rule(RuleId::new(*n).expect("small")),
        Sym::Group(alts) => {
            let expanded = bnf_alts(alts, rules);
            helper(rules, expanded)
        }
    };
    match item.op {
        Op::One => sym,
        Op::Opt => helper(rules, vec![vec![], vec![sym]]),
        Op::Star | Op::Plus => {
            // h -> x h | x (Plus) and h -> x h | ε (Star): right recursion.
            rules.push(Vec::new());
            let h = rules.len() - 1;
            let me = Expr::Rule(RuleId::new(h).expect("small"));
            let last = if item.op == Op::Star {
                vec![]
            } else {
                vec![sym.clone()]
            };
            rules[h] = vec![vec![sym, me.clone()], last];
            me
        }
        Op::Rep(min, max) => helper(
            rules,
            (min..=max).map(|k| vec![sym.clone(); k as usize]).collect(),
        ),
    }
}

fn lark_alts(alts: &[Vec<Item>]) -> String {
    alts.iter()
        .map(|items| {
            if items.is_empty() {
                return String::new();
            }
            items
                .iter()
                .map(|it| {
                    let sym = match &it.sym {
                        Sym::T(t) => format!("T{t}"),
                        Sym::N(0) => "start".to_string(),
                        Sym::N(n) => format!("n{n}"),
                        Sym::Group(alts) => format!("({})", lark_alts(alts)),
                    };
                    match it.op {
                        Op::One => sym,
                        Op::Opt => format!("{sym}?"),
                        Op::Star => format!("{sym}*"),
                        Op::Plus => format!("{sym}+"),
                        Op::Rep(min, max) => format!("{sym} ~ {min}..{max}"),
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

impl Repro for Sym {
    fn repro(&self, out: &mut String) {
        match self {
            Sym::T(t) => out.push_str(&format!("Sym::T({t})")),
            Sym::N(n) => out.push_str(&format!("Sym::N({n})")),
            Sym::Group(alts) => {
                call(out, "Sym::Group", &[alts]);
            }
        }
    }
}

repro_variant!(Op);

impl Repro for Item {
    fn repro(&self, out: &mut String) {
        call(out, "Item::new", &[&self.sym, &self.op]);
    }
}

repro_struct!(GrammarSpec { terms, rules });

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: usize) -> Item {
        Item {
            sym: Sym::T(i),
            op: Op::One,
        }
    }

    fn lit(s: &str) -> Term {
        Term {
            pattern: Pattern::Literal(s.to_string()),
            priority: 0,
            ignored: false,
        }
    }

    #[test]
    fn both_views_recognise_the_same_language() {
        // start: (T0 T1)* T0 ~ 1..2 | start?
        let spec = GrammarSpec {
            terms: vec![lit("a"), lit("b")],
            rules: vec![vec![
                vec![
                    Item {
                        sym: Sym::Group(vec![vec![t(0), t(1)]]),
                        op: Op::Star,
                    },
                    Item {
                        sym: Sym::T(0),
                        op: Op::Rep(1, 2),
                    },
                ],
                vec![Item {
                    sym: Sym::N(0),
                    op: Op::Opt,
                }],
            ]],
        };
        let Ok(built) = spec.build() else {
            panic!("the grammar builds")
        };
        let earley = Earley::new(&built.bnf);
        let accepts = |s: &[u8]| built.reference_accepts(&earley, s).unwrap();
        assert!(accepts(b"a"));
        assert!(accepts(b"ababaa"));
        assert!(accepts(b""));
        assert!(!accepts(b"abb"));
        assert!(!accepts(b"aaa"));
        assert!(spec
            .lark()
            .starts_with("start: (T0 T1)* T0 ~ 1..2 | start?\n"));
    }
}
