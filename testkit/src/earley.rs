//! A reference recogniser (Earley, with Aycock–Horspool's nullable completion), slow and simple
//! on purpose: tests check the GLR parser against it.
//!
//! It answers two questions about a terminal string `w` over a reduced [`Cfg`]: is `w` in the
//! language, and is `w` a prefix of some sentence (Earley's valid-prefix property: the last item
//! set is non-empty exactly when some extension is accepted, given that every nonterminal is
//! productive, which [`munch_glr::cfg::reduce`] guarantees).

use ahash::AHashSet;
use munch_lexer::TerminalId;

use munch_glr::cfg::analysis::Analysis;
use munch_glr::cfg::{Cfg, Symbol};
use munch_glr::parser::Parser;

/// What the reference recogniser says about a terminal string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The string is a sentence.
    pub accepts: bool,
    /// The string is a prefix of some sentence.
    pub viable_prefix: bool,
}

/// The Earley recogniser for one CFG.
#[derive(Clone, Debug)]
pub struct Earley<'c> {
    cfg: &'c Cfg,
    analysis: Analysis,
}

/// An item: production, dot position, origin set. Production `usize::MAX` is the augmented
/// `S' -> S`.
type Item = (usize, usize, usize);

const AUGMENTED: usize = usize::MAX;

impl<'c> Earley<'c> {
    /// Prepares the recogniser.
    pub fn new(cfg: &'c Cfg) -> Self {
        Self {
            cfg,
            analysis: Analysis::new(cfg),
        }
    }

    fn rhs(&self, prod: usize) -> std::borrow::Cow<'c, [Symbol]> {
        if prod == AUGMENTED {
            std::borrow::Cow::Owned(vec![Symbol::Nonterminal(self.cfg.start())])
        } else {
            std::borrow::Cow::Borrowed(&self.cfg.productions()[prod].rhs)
        }
    }

    /// Runs the recogniser over `input`.
    pub fn recognize(&self, input: &[TerminalId]) -> Verdict {
        let mut sets: Vec<Vec<Item>> = vec![Vec::new(); input.len() + 1];
        let mut seen: Vec<AHashSet<Item>> = vec![AHashSet::new(); input.len() + 1];
        let push =
            |sets: &mut Vec<Vec<Item>>, seen: &mut Vec<AHashSet<Item>>, i: usize, it: Item| {
                if seen[i].insert(it) {
                    sets[i].push(it);
                }
            };
        if !self.cfg.is_empty_language() {
            push(&mut sets, &mut seen, 0, (AUGMENTED, 0, 0));
        }
        for i in 0..=input.len() {
            let mut k = 0;
            while k < sets[i].len() {
                let (prod, dot, origin) = sets[i][k];
                k += 1;
                let rhs = self.rhs(prod);
                match rhs.get(dot) {
                    Some(Symbol::Nonterminal(b)) => {
                        for p in self.cfg.productions_of(*b) {
                            push(&mut sets, &mut seen, i, (p, 0, i));
                        }
                        if self.analysis.is_nullable(*b) {
                            push(&mut sets, &mut seen, i, (prod, dot + 1, origin));
                        }
                    }
                    Some(Symbol::Terminal(t)) => {
                        if input.get(i) == Some(t) {
                            push(&mut sets, &mut seen, i + 1, (prod, dot + 1, origin));
                        }
                    }
                    None => {
                        if prod == AUGMENTED {
                            continue;
                        }
                        let lhs = Symbol::Nonterminal(self.cfg.productions()[prod].lhs);
                        // Completing against set `origin`; when origin == i the set is still
                        // growing, and the nullable rule above covers items added later.
                        let mut j = 0;
                        while j < sets[origin].len() {
                            let (p2, d2, o2) = sets[origin][j];
                            j += 1;
                            if self.rhs(p2).get(d2) == Some(&lhs) {
                                push(&mut sets, &mut seen, i, (p2, d2 + 1, o2));
                            }
                        }
                    }
                }
            }
        }
        let n = input.len();
        Verdict {
            accepts: sets[n].contains(&(AUGMENTED, 1, 0)),
            viable_prefix: !sets[n].is_empty(),
        }
    }

    /// Whether `text` is a sentence by the reference: `parser`'s lexer reads it whole with
    /// longest match, and some choice among each lexeme's tied terminals (ignored ones
    /// dropped) is a sentence of this CFG. `false` when the text does not lex; `None` when
    /// more than `max_tied` lexemes have several terminals (too many choices to enumerate).
    pub fn accepts_text(&self, parser: &Parser, text: &[u8], max_tied: usize) -> Option<bool> {
        let Ok(lexemes) = parser.lexer().tokenize(text) else {
            return Some(false);
        };
        let choices: Vec<Vec<TerminalId>> = lexemes
            .iter()
            .map(|l| {
                l.terminals
                    .iter()
                    .copied()
                    .filter(|&t| !parser.is_ignored(t))
                    .collect::<Vec<_>>()
            })
            .filter(|c| !c.is_empty())
            .collect();
        if choices.iter().filter(|c| c.len() > 1).count() > max_tied {
            return None;
        }
        let mut seqs: Vec<Vec<TerminalId>> = vec![vec![]];
        for c in &choices {
            seqs = seqs
                .iter()
                .flat_map(|s| {
                    c.iter().map(move |&t| {
                        let mut s = s.clone();
                        s.push(t);
                        s
                    })
                })
                .collect();
        }
        Some(seqs.iter().any(|s| {
            let s = self.resolve_stand_ins(parser, s);
            self.recognize(&s).accepts
        }))
    }

    /// `seq` with each lexer stand-in read as its literal where the literal continues the
    /// terminals before it to a viable prefix, else as its regex: the parser reads it as the
    /// literal where its LR state has an action on the literal, which for a viable prefix is
    /// the same question (the LALR tables may say yes more often, never less). A literal the
    /// parser splits ([`Parser::split_literals`]) is read the same way: as itself where it
    /// continues to a viable prefix, else as the copies of a shorter literal that do (the
    /// last split's when none does).
    fn resolve_stand_ins(&self, parser: &Parser, seq: &[TerminalId]) -> Vec<TerminalId> {
        let stand_ins = parser.lexer().stand_ins();
        let mut out: Vec<TerminalId> = Vec::with_capacity(seq.len());
        for &t in seq {
            if let Some(s) = stand_ins.iter().find(|s| s.terminal == t) {
                out.push(s.literal);
                if !self.recognize(&out).viable_prefix {
                    out.pop();
                    out.push(s.regex);
                }
            } else if parser.split_literals().iter().any(|s| s.long == t) {
                // Itself, else the first split whose copies continue to a viable prefix (a
                // literal may spell copies of several: `aaaa` of `a` and of `aa`).
                out.push(t);
                if !self.recognize(&out).viable_prefix {
                    out.pop();
                    let at = out.len();
                    for s in parser.split_literals().iter().filter(|s| s.long == t) {
                        out.truncate(at);
                        out.extend(std::iter::repeat_n(s.short, usize::from(s.copies)));
                        if self.recognize(&out).viable_prefix {
                            break;
                        }
                    }
                }
            } else {
                out.push(t);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use munch_glr::cfg::{normalize, NormalizeConfig};

    use crate::dsl;

    fn terms(cfg: &Cfg, s: &str) -> Vec<TerminalId> {
        s.split_whitespace()
            .map(|w| {
                TerminalId::from_usize(
                    (0..cfg.terminal_len())
                        .find(|&i| cfg.terminal_name(TerminalId::from_usize(i)) == w)
                        .unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn ambiguous_expressions_with_epsilon() {
        let g =
            dsl::parse("s -> s '+' s | a\na -> 'x' | '(' s ')' | e 'y'\ne -> ε | e 'z'").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let e = Earley::new(&cfg);
        let v = |s: &str| e.recognize(&terms(&cfg, s));
        assert_eq!(
            v("x + ( z z y )"),
            Verdict {
                accepts: true,
                viable_prefix: true
            }
        );
        assert_eq!(
            v("x + ( z"),
            Verdict {
                accepts: false,
                viable_prefix: true
            }
        );
        assert_eq!(
            v("x + )"),
            Verdict {
                accepts: false,
                viable_prefix: false
            }
        );
        assert_eq!(
            v("y"),
            Verdict {
                accepts: true,
                viable_prefix: true
            }
        );
        assert_eq!(
            v(""),
            Verdict {
                accepts: false,
                viable_prefix: true
            }
        );
    }

    #[test]
    fn nullable_start() {
        let g = dsl::parse("s -> a a\na -> ε | 'x'").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let e = Earley::new(&cfg);
        assert!(e.recognize(&[]).accepts);
        assert!(e.recognize(&terms(&cfg, "x x")).accepts);
        assert!(!e.recognize(&terms(&cfg, "x x x")).viable_prefix);
    }
}
