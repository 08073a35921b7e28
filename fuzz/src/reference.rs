//! The reference lexer: longest match with one character of lookahead, computed with the
//! `regex` crate in the dumbest way, prefix by prefix.
//!
//! For each terminal it keeps two anchored regexes: the pattern itself (`^(?:p)$`, "this lexeme
//! is a full match") and [`Re::prefix`] ("some continuation makes this a full match"). A lazy
//! terminal (one with a non-greedy repetition in its HIR) matches what Python's `re` matches:
//! it matches a lexeme iff the `regex` crate's leftmost-first match of `^(?:p)` on it spans
//! it, and is viable iff that or a backtracking search ([`Re::first_event`]) first meets a
//! path needing more text. Lexing reads bytes while some terminal is still viable, then emits
//! the terminals that match the lexeme read so far, tie-broken by priority and then literal
//! over regex; it never backs up to a shorter match, except to the last character boundary
//! when it stops inside a character (the lexer's default configuration: no going back to a
//! lazy match). Nothing here uses munch's lexer.

use munch_lexer::dfa::TerminalSpec;
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::{Hir, HirKind};

use crate::re::Re;
use crate::repro::{call, Repro};
use munch_testkit::re::FirstEvent;

/// A terminal's pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// A string literal made of [`crate::re::CHARS`] (non-empty); beats a regex on a tie.
    Literal(String),
    /// A regex.
    Regex(Re),
}

impl Pattern {
    /// The pattern as a [`Re`] (a literal is the concatenation of its characters).
    pub fn as_re(&self) -> Re {
        match self {
            Pattern::Literal(s) => Re::Cat(s.chars().map(Re::Char).collect()),
            Pattern::Regex(re) => re.clone(),
        }
    }

    /// The HIR munch gets: a literal the way the Lark front end builds one, a regex as
    /// `regex-syntax` parses it.
    pub fn hir(&self) -> Hir {
        match self {
            Pattern::Literal(s) => Hir::literal(s.as_bytes()),
            Pattern::Regex(re) => regex_syntax::Parser::new()
                .parse(&re.pattern())
                .expect("generated regexes parse"),
        }
    }

    /// Whether this is a literal.
    pub fn is_literal(&self) -> bool {
        matches!(self, Pattern::Literal(_))
    }

    /// The pattern in Lark syntax, for comments.
    pub fn lark(&self) -> String {
        match self {
            Pattern::Literal(s) => format!("{s:?}"),
            Pattern::Regex(re) => format!("/{}/", re.pattern()),
        }
    }
}

/// One terminal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    /// Its pattern.
    pub pattern: Pattern,
    /// Lexer priority (higher wins a tie).
    pub priority: i32,
    /// `%ignore`d.
    pub ignored: bool,
}

impl Term {
    /// A terminal of `pattern`, `priority`, `%ignore`d or not (the form `Debug` prints, one line
    /// a terminal).
    pub fn new(pattern: Pattern, priority: i32, ignored: bool) -> Term {
        Term {
            pattern,
            priority,
            ignored,
        }
    }

    /// The lexer's view of the terminal, named `T{index}`.
    pub fn spec(&self, index: usize) -> TerminalSpec {
        TerminalSpec {
            name: format!("T{index}"),
            hir: Some(self.pattern.hir()),
            is_literal: self.pattern.is_literal(),
            priority: self.priority,
            ignored: self.ignored,
        }
    }
}

impl Repro for Pattern {
    fn repro(&self, out: &mut String) {
        match self {
            Pattern::Literal(s) => call(out, "Pattern::Literal", &[s]),
            Pattern::Regex(re) => call(out, "Pattern::Regex", &[re]),
        }
    }
}

impl Repro for Term {
    fn repro(&self, out: &mut String) {
        call(
            out,
            "Term::new",
            &[&self.pattern, &self.priority, &self.ignored],
        );
    }
}

/// Whether `hir` has a non-greedy repetition (what makes a terminal lazy).
pub fn hir_is_lazy(hir: &Hir) -> bool {
    let mut work = vec![hir];
    while let Some(h) = work.pop() {
        match h.kind() {
            HirKind::Repetition(rep) => {
                if !rep.greedy {
                    return true;
                }
                work.push(&rep.sub);
            }
            HirKind::Capture(c) => work.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => work.extend(hs),
            HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
        }
    }
    false
}

/// The `regex`-crate view of one terminal.
#[derive(Debug)]
struct Matcher {
    re: Re,
    full: Regex,
    prefix: Regex,
    /// `^(?:p)`: the leftmost-first match at the start.
    first: Regex,
    lazy: bool,
}

fn compile(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .size_limit(1 << 26)
        .build()
        .expect("generated patterns compile")
}

fn anchored(pattern: &str) -> Regex {
    compile(&format!("^(?:{pattern})$"))
}

/// Steps for [`Re::first_event`]: far more than generated cases need.
const STEPS: u64 = 100_000_000;

impl Matcher {
    fn new(pattern: &Pattern) -> Matcher {
        let re = pattern.as_re();
        Matcher {
            full: anchored(&re.pattern()),
            prefix: anchored(&re.prefix()),
            first: compile(&format!("^(?:{})", re.pattern())),
            lazy: hir_is_lazy(&pattern.hir()),
            re,
        }
    }

    /// Whether the terminal matches the lexeme `lexeme` (a lazy one: its leftmost-first match
    /// spans it).
    fn matches(&self, lexeme: &[u8]) -> bool {
        !lexeme.is_empty()
            && if self.lazy {
                self.first.find(lexeme).map(|m| m.end()) == Some(lexeme.len())
            } else {
                self.full.is_match(lexeme)
            }
    }

    /// Whether the lexeme is or can still grow into a match of the terminal.
    fn viable(&self, lexeme: &[u8]) -> bool {
        if !self.lazy {
            return self.prefix.is_match(lexeme);
        }
        match self.re.first_event(lexeme, STEPS) {
            Some(FirstEvent::MoreText) => true,
            Some(FirstEvent::Match(m)) => m == lexeme.len() && m > 0,
            Some(FirstEvent::NoMatch) => false,
            None => panic!("the backtracking search ran out of steps on {:?}", self.re),
        }
    }
}

/// One lexeme of [`RefLexer::tokenize`]: `start..end` and the tied terminal indices (sorted,
/// non-empty).
pub type RefLexeme = (usize, usize, Vec<usize>);

/// A lexing failure: (offset where no lexeme could go on, start of that lexeme), as
/// [`munch_lexer::LexError`] has them.
pub type RefLexError = (usize, usize);

/// The reference lexer over a list of terminals (index = terminal id).
#[derive(Debug)]
pub struct RefLexer {
    terms: Vec<Term>,
    matchers: Vec<Matcher>,
}

impl RefLexer {
    /// Compiles the terminals' regexes.
    pub fn new(terms: &[Term]) -> RefLexer {
        RefLexer {
            terms: terms.to_vec(),
            matchers: terms.iter().map(|t| Matcher::new(&t.pattern)).collect(),
        }
    }

    /// Whether terminal `t` matches the empty string (munch refuses such a terminal).
    pub fn matches_empty(&self, t: usize) -> bool {
        self.matchers[t].full.is_match(b"")
    }

    /// Whether terminal `t` is lazy.
    pub fn is_lazy(&self, t: usize) -> bool {
        self.matchers[t].lazy
    }

    /// The terminals that match `lexeme` after tie-breaking: the highest priority among the
    /// matches, then only the literals if one of those is a literal. Sorted.
    pub fn accepted(&self, lexeme: &[u8]) -> Vec<usize> {
        let matched: Vec<usize> = (0..self.terms.len())
            .filter(|&t| self.matchers[t].matches(lexeme))
            .collect();
        let Some(best) = matched.iter().map(|&t| self.terms[t].priority).max() else {
            return vec![];
        };
        let top: Vec<usize> = matched
            .into_iter()
            .filter(|&t| self.terms[t].priority == best)
            .collect();
        let any_literal = top.iter().any(|&t| self.terms[t].pattern.is_literal());
        top.into_iter()
            .filter(|&t| !any_literal || self.terms[t].pattern.is_literal())
            .collect()
    }

    /// Whether some terminal can still complete a lexeme starting with `lexeme`.
    pub fn alive(&self, lexeme: &[u8]) -> bool {
        self.matchers.iter().any(|m| m.viable(lexeme))
    }

    /// Longest match with one character of lookahead over all of `input`: read while some
    /// terminal is viable; if that stops inside a character, back up to the last character
    /// boundary (at most three bytes) and emit there; if it stops on no match, back up to its
    /// last match if a lazy terminal completes it (munch's default,
    /// `LexerConfig::backtrack_lazy`), or if only literals (ignored terminals) complete it and
    /// only literals (ignored terminals) were viable on the longer reading
    /// (`LexerConfig::backtrack_literals`, `backtrack_ignored`). An error is where the
    /// reading stopped, or, after backing up, where the longer reading stopped if the next
    /// lexeme fails no later.
    pub fn tokenize(&self, input: &[u8]) -> Result<Vec<RefLexeme>, RefLexError> {
        munch_testkit::lexing::longest_match_lazy(
            input,
            |l| self.alive(l),
            |l| self.accepted(l),
            |accepted: &Vec<usize>, longer: &[u8]| {
                // Every terminal of the lexeme, and every one viable on the longer reading,
                // is of the kind.
                let within = |kind: &dyn Fn(usize) -> bool| {
                    accepted.iter().all(|&t| kind(t))
                        && (0..self.terms.len())
                            .filter(|&t| self.matchers[t].viable(longer))
                            .all(kind)
                };
                accepted.iter().any(|&t| self.is_lazy(t))
                    || within(&|t| self.is_literal(t))
                    || within(&|t| self.terms[t].ignored)
            },
        )
    }

    /// Whether terminal `t` is a literal.
    pub fn is_literal(&self, t: usize) -> bool {
        self.terms[t].pattern.is_literal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str, priority: i32) -> Term {
        Term {
            pattern: Pattern::Literal(s.to_string()),
            priority,
            ignored: false,
        }
    }

    fn re(re: Re, priority: i32) -> Term {
        Term {
            pattern: Pattern::Regex(re),
            priority,
            ignored: false,
        }
    }

    fn plus(sub: Re, lazy: bool) -> Re {
        Re::Rep {
            sub: Box::new(sub),
            min: 1,
            max: None,
            lazy,
        }
    }

    #[test]
    fn longest_match_keywords_and_no_backtracking() {
        let lexer = RefLexer::new(&[
            lit("ab", 0),
            re(plus(Re::Set(vec!['a', 'b']), false), 0),
            lit(" ", 0),
            lit("abcc", 0),
        ]);
        assert_eq!(
            lexer.tokenize(b"ab abb"),
            Ok(vec![(0, 2, vec![0]), (2, 3, vec![2]), (3, 6, vec![1])])
        );
        // "abc" is a viable prefix of "abcc", so the lexer reads it and then fails: no
        // backing up to "ab".
        assert_eq!(lexer.tokenize(b"abcx"), Err((3, 0)));
    }

    #[test]
    fn backs_up_to_the_last_character_boundary() {
        // Issue 28: after `é`, E2 may begin a VAL character, but `→` is none.
        let val = Re::NotSet(vec!['a', '→']);
        let lexer = RefLexer::new(&[
            re(plus(Re::Set(vec!['a', 'é']), false), 0),
            lit("→", 0),
            re(plus(val, false), 0),
        ]);
        let input = "é→日".as_bytes();
        assert_eq!(
            lexer.tokenize(input),
            Ok(vec![(0, 2, vec![0, 2]), (2, 5, vec![1]), (5, 8, vec![2])])
        );
        // `é` + E2 + `x`: neither reading goes past `x`.
        assert_eq!(lexer.tokenize(b"\xC3\xA9\xE2x"), Err((3, 0)));
        // At the end inside a character.
        assert_eq!(lexer.tokenize(b"\xC3\xA9\xE2"), Err((3, 0)));
    }

    #[test]
    fn priority_then_literal_and_lazy_terminals() {
        let lexer = RefLexer::new(&[re(Re::Char('a'), 1), lit("a", 0), re(Re::Char('a'), 1)]);
        assert_eq!(lexer.accepted(b"a"), vec![0, 2]);
        let lazy = RefLexer::new(&[re(
            Re::Cat(vec![Re::Char('a'), plus(Re::Dot, true), Re::Char('a')]),
            0,
        )]);
        assert!(lazy.is_lazy(0));
        assert_eq!(
            lazy.tokenize(b"abaa"),
            Err((4, 3)),
            "the lazy terminal ends at the first closing `a`"
        );
        assert_eq!(lazy.tokenize(b"aba"), Ok(vec![(0, 3, vec![0])]));
    }

    fn rep(sub: Re, min: u32, max: Option<u32>, lazy: bool) -> Re {
        Re::Rep {
            sub: Box::new(sub),
            min,
            max,
            lazy,
        }
    }

    /// Repetitions whose copies may read nothing: the backtracking search's first match is
    /// the `regex` crate's, on every text over `abc` up to four characters.
    #[test]
    fn the_search_orders_empty_copies_as_the_regex_crate() {
        let lazy_a = rep(Re::Char('a'), 0, None, true);
        let nullable = Re::Alt(vec![
            lazy_a.clone(),
            Re::Set(vec!['a', 'b']),
            rep(Re::Dot, 0, Some(2), true),
        ]);
        let cases = [
            // The masks target's seed 22: on `cb` the first match is `c`.
            Re::Cat(vec![
                Re::Char('c'),
                rep(nullable.clone(), 2, Some(3), false),
            ]),
            rep(lazy_a.clone(), 0, None, true),
            rep(lazy_a.clone(), 1, None, false),
            rep(lazy_a.clone(), 2, None, false),
            rep(Re::Alt(vec![lazy_a.clone(), Re::Char('b')]), 0, None, false),
            rep(Re::Alt(vec![lazy_a, Re::Char('b')]), 0, Some(2), false),
            Re::Cat(vec![rep(nullable.clone(), 1, None, true), Re::Char('b')]),
            Re::Cat(vec![rep(nullable, 0, Some(2), false), Re::Char('c')]),
        ];
        let mut texts: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=4 {
            let shorter: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == len - 1)
                .cloned()
                .collect();
            for t in shorter {
                for c in [b'a', b'b', b'c'] {
                    texts.push([t.as_slice(), &[c]].concat());
                }
            }
        }
        for re in &cases {
            let first = compile(&format!("^(?:{})", re.pattern()));
            for text in &texts {
                let want = first.find(text).map(|m| m.end());
                match re.first_event(text, STEPS).expect("search budget") {
                    FirstEvent::Match(m) => assert_eq!(Some(m), want, "{re:?} on {text:?}"),
                    FirstEvent::NoMatch => assert_eq!(None, want, "{re:?} on {text:?}"),
                    FirstEvent::MoreText => {}
                }
            }
        }
        let seed_22 = RefLexer::new(&[re(cases[0].clone(), 0)]);
        assert!(!seed_22.alive(b"cb"));
        assert!(seed_22.alive(b"c"));
    }
}
