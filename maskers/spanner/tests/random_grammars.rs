//! Property: on random small grammars (ambiguous, nullable, with ties, ignored and extendable
//! terminals) and random small vocabularies, the spanner's mask equals the oracle's at every
//! step of random walks through allowed tokens.
//!
//! Grammars are rendered as Lark text from a structure proptest shrinks: a failing case prints
//! the grammar text, the vocabulary and the walk.

use std::fmt::Write;
use std::sync::Arc;

use munch_glr::lark::{load, LoadConfig};
use munch_glr::mask::{Masker, Oracle};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_masker_spanner::{SpannerConfig, SpannerMasker};
use munch_testkit::generate::XorShift;
use munch_vocab::{TokenId, Vocabulary};
use proptest::prelude::*;

/// Terminal patterns over the alphabet `a b c " <space>`: literals, regexes that extend each
/// other (inhibited terminals), a lazy one, ties between a literal and a regex.
const TERMINALS: &[&str] = &[
    "\"a\"",
    "\"b\"",
    "\"ab\"",
    "\"ba\"",
    "\"c\"",
    "\"aa\"",
    "/a+/",
    "/b+/",
    "/[ab]+/",
    "/a[bc]?/",
    "/c[ab]*/",
    "/\"[^\"]*\"/",
    "/\"[a-c ]*?\"/",
    "\"a\"i",
];

/// One symbol of an alternative: a terminal or a rule, with an optional `?`, `*` or `+`.
#[derive(Clone, Debug)]
struct Sym {
    terminal: bool,
    index: usize,
    modifier: u8,
}

#[derive(Clone, Debug)]
struct Case {
    terminals: Vec<usize>,
    /// rules[i]: alternatives, each a list of symbols.
    rules: Vec<Vec<Vec<Sym>>>,
    ignore_space: bool,
    tokens: Vec<String>,
    seed: u64,
}

impl Case {
    fn lark(&self) -> String {
        let mut out = String::new();
        for (i, alts) in self.rules.iter().enumerate() {
            let name = if i == 0 {
                "start".to_string()
            } else {
                format!("r{i}")
            };
            let rendered: Vec<String> = alts
                .iter()
                .map(|alt| {
                    alt.iter()
                        .map(|s| {
                            let base = if s.terminal {
                                format!("T{}", s.index % self.terminals.len())
                            } else {
                                let r = s.index % self.rules.len();
                                if r == 0 {
                                    "start".to_string()
                                } else {
                                    format!("r{r}")
                                }
                            };
                            let m = ["", "?", "*", "+"][s.modifier as usize % 4];
                            format!("{base}{m}")
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            writeln!(out, "{name}: {}", rendered.join(" | ")).unwrap();
        }
        for (i, &t) in self.terminals.iter().enumerate() {
            writeln!(out, "T{i}: {}", TERMINALS[t % TERMINALS.len()]).unwrap();
        }
        if self.ignore_space {
            out.push_str("%ignore \" \"\n");
        }
        out
    }
}

fn sym() -> impl Strategy<Value = Sym> {
    (any::<bool>(), 0usize..8, 0u8..6).prop_map(|(terminal, index, modifier)| Sym {
        terminal,
        index,
        // Mostly plain symbols.
        modifier: modifier.saturating_sub(2),
    })
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(0..TERMINALS.len(), 1..5),
        prop::collection::vec(
            prop::collection::vec(prop::collection::vec(sym(), 0..4), 1..4),
            1..4,
        ),
        any::<bool>(),
        prop::collection::vec("[abc\" ]{2,5}", 3..12),
        any::<u64>(),
    )
        .prop_map(|(terminals, rules, ignore_space, tokens, seed)| Case {
            terminals,
            rules,
            ignore_space,
            tokens,
            seed,
        })
}

fn vocab(case: &Case) -> Arc<Vocabulary> {
    let base = ["a", "b", "c", "\"", " "].iter().map(|t| t.to_string());
    munch_testkit::vocab::with_eos(
        base.chain(case.tokens.iter().cloned())
            .map(|t| Some(t.into_bytes())),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn spanner_equals_oracle_on_random_grammars(case in case()) {
        let text = case.lark();
        // Not every random text is a grammar munch loads (an empty-matching terminal, an empty
        // language): those cases say nothing.
        // Counted as rejected draws (proptest fails if they are most of them).
        let loaded = load(text.as_bytes(), &LoadConfig::default()).ok();
        prop_assume!(loaded.is_some());
        let parser = Parser::new(&loaded.unwrap(), &ParserConfig::default()).ok();
        prop_assume!(parser.is_some());
        let parser = Arc::new(parser.unwrap());
        let vocab = vocab(&case);
        let spanner = SpannerMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &SpannerConfig::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let oracle = Oracle::new(Arc::clone(&vocab));
        let (mut sc, mut oc) = (spanner.create_cache(), oracle.create_cache());
        // Xorshift, so that a case's walks are a function of its seed.
        let mut rng = XorShift(case.seed | 1);
        for walk in 0..4 {
            let mut state = ParserState::new(Arc::clone(&parser));
            let mut prefix = String::new();
            for step in 0..12 {
                let s = spanner.mask(&mut sc, &state);
                let o = oracle.mask(&mut oc, &state);
                if let Some(t) = s.first_difference(&o) {
                    panic!(
                        "walk {walk} step {step} after {prefix:?}: token {t} {:?}: spanner {} / \
                         oracle {}\ngrammar:\n{text}",
                        String::from_utf8_lossy(vocab.token_bytes(t).unwrap_or(b"<eos>")),
                        s.contains(t),
                        o.contains(t),
                    );
                }
                let allowed: Vec<TokenId> =
                    o.iter().filter(|&t| vocab.token_bytes(t).is_some()).collect();
                if allowed.is_empty() {
                    break;
                }
                let t = allowed[rng.below(allowed.len())];
                state.commit_token(&vocab, t).unwrap();
                prefix.push_str(&String::from_utf8_lossy(vocab.token_bytes(t).unwrap()));
            }
        }
    }
}
