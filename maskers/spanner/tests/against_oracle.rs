//! The spanner masker equals the oracle (and the trie masker) at every step of teacher-forced
//! texts and of seeded random walks, on synthetic vocabularies: munch's grammars, ambiguous
//! grammars, ε-rules, LR conflicts, ignored and inhibited terminals.

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle, TokenMask};
use munch_glr::parser::{Parser, ParserState};
use munch_masker_spanner::{SpannerConfig, SpannerMasker, SpannerStats};
use munch_masker_trie::TrieMasker;
use munch_testkit::grammar::{builtin, parser, TRICKY_TEXTS};
use munch_vocab::{TokenId, Vocabulary};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every printable ASCII byte and a few control bytes, then `multi`, then bytes of UTF-8
/// characters, alone and together; the last id is EOS.
fn vocab_with(multi: &[&str]) -> Arc<Vocabulary> {
    let mut words: Vec<&[u8]> = vec![b"\n", b"\t"];
    words.extend(multi.iter().map(|t| t.as_bytes()));
    words.extend_from_slice(&[
        b"\xc3",
        b"\xa9",
        b"\xc3\xa9",
        b"\xce",
        b"\xb1",
        b"\xb2",
        b"\xce\xb1\xce\xb2",
    ]);
    munch_testkit::vocab::printable_and(&words)
}

/// Tokens that span terminals, overlap keywords, and end inside lexemes.
const MULTI: &[&str] = &[
    "\":", "\",", "{\"", "\"}", "true", "tru", "e,", "null}", "]]", "1.5e", "++", "+=", "+++",
    "if", "iff", "if(", " if", "else", " else ", "/*", "*/", "*/ ", "/**/", "print", "PRINT",
    "Print ", "); ", ";\n", "\"\"", "\"a\"", "x = ", " = 1;", "x++;", "   ", "\n\n", "-1", "--",
    "0.", ".5", "{}", "[]", "[{", "}]", "\"\\\"", "\\u00", "e+1", "E-", " :", ": ", ", ", "a)",
    "(a", "))", "((", "ab", "ba", "aa", "a b", "b;", ";;", "x;x", "1+2", "*(", ")*",
];

struct Maskers {
    vocab: Arc<Vocabulary>,
    spanner: SpannerMasker,
    trie: TrieMasker,
    oracle: Oracle,
}

impl Maskers {
    fn new(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> Self {
        Maskers {
            vocab: Arc::clone(vocab),
            spanner: SpannerMasker::new(
                Arc::clone(parser),
                Arc::clone(vocab),
                &SpannerConfig::default(),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            trie: TrieMasker::without_classes(Arc::clone(parser), Arc::clone(vocab)),
            oracle: Oracle::new(Arc::clone(vocab)),
        }
    }

    /// The spanner's mask after checking it against the oracle and the trie masker.
    fn check(&self, state: &ParserState, prefix: &[u8], what: &str) -> TokenMask {
        let s = self.spanner.mask(&mut self.spanner.create_cache(), state);
        let o = self.oracle.mask(&mut self.oracle.create_cache(), state);
        let t = self.trie.mask(&mut self.trie.create_cache(), state);
        for (other, name) in [(&o, "oracle"), (&t, "trie")] {
            if let Some(tok) = s.first_difference(other) {
                panic!(
                    "{what}: token {tok} {:?} after {:?}: spanner {} / {name} {}",
                    String::from_utf8_lossy(self.vocab.token_bytes(tok).unwrap_or(b"<special>")),
                    String::from_utf8_lossy(prefix),
                    s.contains(tok),
                    other.contains(tok),
                );
            }
        }
        s
    }

    /// Teacher-forces `text`, comparing at every step; the text must be a sentence.
    fn teacher_forced(&self, parser: &Arc<Parser>, text: &str) {
        let tokens = self.vocab.encode(text).unwrap();
        let mut state = ParserState::new(Arc::clone(parser));
        let mut prefix = Vec::new();
        for step in 0..=tokens.len() {
            let mask = self.check(&state, &prefix, &format!("{text:?} step {step}"));
            let Some(&t) = tokens.get(step) else {
                assert!(state.is_accepting(), "{text:?} is not a sentence");
                for &eos in self.vocab.eos() {
                    assert!(mask.contains(eos), "EOS not allowed at the end of {text:?}");
                }
                break;
            };
            assert!(
                mask.contains(t),
                "{text:?} step {step}: forced token masked out"
            );
            state.commit_token(&self.vocab, t).unwrap();
            prefix.extend_from_slice(self.vocab.token_bytes(t).unwrap());
        }
    }

    /// Walks `steps` random allowed tokens from the empty text, comparing at every step.
    fn random_walks(&self, parser: &Arc<Parser>, seed: u64, walks: usize, steps: usize) {
        let mut rng = StdRng::seed_from_u64(seed);
        for walk in 0..walks {
            let mut state = ParserState::new(Arc::clone(parser));
            let mut prefix = Vec::new();
            for step in 0..steps {
                let mask = self.check(
                    &state,
                    &prefix,
                    &format!("seed {seed} walk {walk} step {step}"),
                );
                let allowed: Vec<TokenId> = mask
                    .iter()
                    .filter(|t| self.vocab.token_bytes(*t).is_some())
                    .collect();
                if allowed.is_empty() {
                    break;
                }
                let t = allowed[rng.gen_range(0..allowed.len())];
                state.commit_token(&self.vocab, t).unwrap();
                prefix.extend_from_slice(self.vocab.token_bytes(t).unwrap());
            }
        }
    }

    fn stats(&self) -> SpannerStats {
        self.spanner.stats()
    }
}

#[test]
fn json_builtin() {
    let p = builtin("json");
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in [
        r#"{"a": [1, 2.5e3, -0.5, true, false, null], "b": {"c": "d\"e\u00e9"}}"#,
        "[]",
        "  {\n\t\"é\": \"αβ\" }  ",
        r#"[{"x":[[[]]]},"",-1E-2]"#,
    ] {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 1, 20, 30);
    let stats = m.stats();
    assert!(stats.table_entries > 0, "{stats:?}");
    assert!(stats.always_pairs > 0, "{stats:?}");
}

#[test]
fn tricky_builtin() {
    let p = builtin("tricky");
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in TRICKY_TEXTS {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 2, 20, 30);
}

#[test]
fn ambiguous_grammar_with_epsilon_rules() {
    // Ambiguous (`e e` in many ways), nullable everywhere, hidden left recursion through `n`.
    let p = parser(
        r#"
        start: e
        e: e e | "a" | "(" e ")" | n e "b" |
        n: "c"? | n n
        %ignore " "
        "#,
    );
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in ["", "a", "aa(a)", "ab", "cab", "(((a)))a b", "ccab"] {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 3, 30, 25);
}

#[test]
fn lr_conflicts_and_keyword_ties() {
    // Not LALR(1): reduce/reduce on `x` needs two tokens of lookahead; `if` is both a keyword
    // and a NAME (a tie the parser resolves), `ifx` only a NAME.
    let p = parser(
        r#"
        start: a "x" "y" | b "x" "z" | s
        a: "w"
        b: "w"
        s: "if" NAME | NAME ":" s | NAME
        NAME: /[a-z]+/
        %ignore /[ \t\n]+/
        "#,
    );
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in ["w x y", "wxz", "if q", "a: if ab", "b: c: if d", "iff"] {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 4, 30, 20);
}

#[test]
fn inhibited_terminals_and_lazy_comments() {
    // `a+` then `ab`: a lexeme `aa` followed by `b` must not be read as `a` `ab`.
    let p = parser(
        r#"
        start: (A | AB | B | C)*
        A: /a+/
        AB: "ab"
        B: "b"
        C: /<.*?>/
        %ignore /[ ]+/
        "#,
    );
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in ["aab", "ab ab", "a b", "<a>", "<<a> b<>aa", "ba"] {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 5, 30, 20);
}

#[test]
fn deep_nesting_needs_the_real_stack() {
    // Whether `)` may close depends on how many are open: context-dependent spans.
    let p = parser(r#"start: "(" start ")" | "[" start "]" | "x""#);
    let m = Maskers::new(&p, &vocab_with(MULTI));
    for text in ["x", "(x)", "((x))", "([(x)])", "[[[[((x))]]]]"] {
        m.teacher_forced(&p, text);
    }
    m.random_walks(&p, 6, 20, 30);
}
