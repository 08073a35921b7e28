//! Token classes against the exact oracle: for reachable parser states of random and real
//! grammars, the oracle's mask is always a union of whole classes (a class is either entirely
//! allowed or entirely refused), and every head of the state sits at one of the lexer points
//! the classes were computed for.
//!
//! - Random grammars: small Lark grammars drawn from a pool of terminals with ties, keywords,
//!   an ignored terminal, a lazy terminal, and rules with repetition and recursion; random
//!   vocabularies over the bytes those terminals use (UTF-8 split mid-character included);
//!   states reached by a random walk over the tokens the oracle allows. Seeded: a failure
//!   prints its seed, grammar and token.
//! - Real grammars: SynCode's JSON under Llama 3 and Java under Llama 2, states reached by
//!   committing prefixes of corpus files.
//!
//! Run in release: `cargo test --release -p munch-conformance --test classes`. The table of
//! class counts for SynCode's grammars is `examples/token_classes.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use munch::{Compiled, Config, MaskerKind, Matcher};
use munch_conformance::corpus::{self, Language};
use munch_glr::mask::TokenMask;
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::files::files_under;
use munch_testkit::generate::SeededRng;
use munch_tokens::{ClassId, LexPoint, SpansConfig, TokenSpans};
use munch_vocab::{TokenId, Vocabulary};

/// Change to explore other cases; a failure prints its case seed.
const SEED: u64 = 0x6d75_6e63_685f_636c;

fn parser_of(source: &str, name: &str) -> Result<Arc<Parser>, String> {
    munch::Grammar::lark(source)
        .with_name(name)
        .build_parser(&ParserConfig::default())
        .map_err(|e| e.to_string())
}

/// A matcher of the exact oracle at the start of `parser`'s grammar over `vocab`.
fn oracle(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> Matcher {
    let config = Config::new().masker(MaskerKind::Oracle).fallback(None);
    Compiled::from_parser(Arc::clone(parser), Arc::clone(vocab), &config)
        .expect("the oracle builds for any parser")
        .matcher()
}

/// Checks that `mask` (the oracle's, for `state`) is a union of whole classes and that every
/// head of `state` is at a point; `context` describes the case for the failure message.
fn check_state(
    spans: &TokenSpans,
    vocab: &Vocabulary,
    state: &ParserState,
    mask: &TokenMask,
    context: &dyn Fn() -> String,
) {
    for head in state.heads() {
        let point = LexPoint {
            state: head.lex_state(),
            inhibitor: head.inhibitor(),
        };
        assert!(
            spans.point(point).is_some(),
            "{}: head at {point:?} is not a point",
            context()
        );
    }
    let classes = spans.classes();
    for c in 0..classes.len() {
        let members = classes.members(ClassId::from_usize(c));
        let first = mask.contains(members[0]);
        if let Some(&odd) = members.iter().find(|&&t| mask.contains(t) != first) {
            panic!(
                "{}: class {c} is split by the oracle: token {} {:?} is {}, token {} {:?} is {}",
                context(),
                members[0],
                String::from_utf8_lossy(vocab.token_bytes(members[0]).unwrap_or_default()),
                if first { "allowed" } else { "refused" },
                odd,
                String::from_utf8_lossy(vocab.token_bytes(odd).unwrap_or_default()),
                if first { "refused" } else { "allowed" },
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random grammars.

/// Terminal definitions to draw from: (name, Lark definition).
const TERMINALS: &[(&str, &str)] = &[
    ("A", "\"a\""),
    ("AB", "\"ab\""),
    ("IF", "\"if\""),
    ("NAME", "/[a-z]+/"),
    ("NUM", "/[0-9]+/"),
    ("FLOAT", "/[0-9]+\\.[0-9]+/"),
    ("DOT", "\".\""),
    ("EQ", "\"=\" | \"==\""),
    ("STR", "/\"[^\"]*\"/"),
    ("TAG", "/<.*?>/"),
    ("WORD", "/[a-zé]+/"),
    ("KW.2", "\"ab\""),
];

/// Byte pieces random tokens are made of: what the terminals read, a space, a newline, and
/// the two bytes of `é` alone.
const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"i",
    b"f",
    b"if",
    b"ab",
    b"1",
    b"2",
    b".",
    b"=",
    b"\"",
    b"<",
    b">",
    b" ",
    b"\n",
    b"x",
    b"\xC3",
    b"\xA9",
    "é".as_bytes(),
];

/// A random Lark grammar: some terminals, an ignored space (usually), and up to three rules.
fn random_grammar(rng: &mut SeededRng) -> String {
    let mut picked: Vec<usize> = Vec::new();
    for _ in 0..2 + rng.below(4) {
        let t = rng.below(TERMINALS.len());
        if !picked.contains(&t) {
            picked.push(t);
        }
    }
    let names: Vec<&str> = picked
        .iter()
        .map(|&t| TERMINALS[t].0.split('.').next().unwrap_or(""))
        .collect();
    let rules = 1 + rng.below(3);
    let mut text = String::new();
    for i in 0..rules {
        let mut alts = Vec::new();
        for a in 0..1 + rng.below(3) {
            let mut items = Vec::new();
            for _ in 0..1 + rng.below(3) {
                // The first alternative uses terminals only, so every rule derives something.
                let item = if a > 0 && rng.below(3) == 0 {
                    format!("r{}", rng.below(rules))
                } else {
                    names[rng.below(names.len())].to_string()
                };
                items.push(match rng.below(6) {
                    0 => format!("{item}*"),
                    1 => format!("{item}?"),
                    2 => format!("({item} \",\")+"),
                    _ => item,
                });
            }
            alts.push(items.join(" "));
        }
        text.push_str(&format!("r{i}: {}\n", alts.join(" | ")));
    }
    text.push_str("start: r0+\n");
    for &t in &picked {
        text.push_str(&format!("{}: {}\n", TERMINALS[t].0, TERMINALS[t].1));
    }
    if rng.below(4) != 0 {
        text.push_str("WS: / +/\n%ignore WS\n");
    }
    text
}

fn random_vocab(rng: &mut SeededRng) -> Vocabulary {
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None]; // id 0: EOS
    for _ in 0..40 + rng.below(80) {
        let mut t = Vec::new();
        for _ in 0..1 + rng.below(4) {
            t.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        }
        tokens.push(Some(t));
    }
    // Every single piece too, so that walks can go anywhere.
    tokens.extend(PIECES.iter().map(|p| Some(p.to_vec())));
    Vocabulary::from_token_bytes(tokens, vec![TokenId::from(0)]).expect("random vocabulary")
}

#[test]
fn oracle_masks_are_unions_of_classes_on_random_grammars() {
    let mut checked_states = 0;
    let mut built = 0;
    for case in 0..150u64 {
        let seed = SEED ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = SeededRng::new(seed);
        let text = random_grammar(&mut rng);
        let Ok(parser) = parser_of(&text, "random") else {
            continue; // some draws are not valid grammars (e.g. an empty language)
        };
        built += 1;
        let vocab = Arc::new(random_vocab(&mut rng));
        let spans = TokenSpans::build(parser.lexer(), &vocab, &SpansConfig::default())
            .expect("small spans build");
        let mut matcher = oracle(&parser, &vocab);
        let mut walked: Vec<TokenId> = Vec::new();
        for _ in 0..12 {
            let mask = matcher.next_token_mask();
            let context = || format!("seed {seed:#x}, grammar:\n{text}\nafter tokens {walked:?}");
            check_state(&spans, &vocab, matcher.state(), &mask, &context);
            checked_states += 1;
            let allowed: Vec<TokenId> = mask
                .iter()
                .filter(|&t| vocab.token_bytes(t).is_some())
                .collect();
            if allowed.is_empty() {
                break;
            }
            let t = allowed[rng.below(allowed.len())];
            matcher
                .accept_token(t.as_u32())
                .unwrap_or_else(|e| panic!("{}: oracle allowed {t}: {e}", context()));
            walked.push(t);
        }
    }
    // The generator must keep producing usable grammars, or this test proves nothing.
    assert!(built >= 100, "only {built} of 150 random grammars loaded");
    assert!(
        checked_states >= 1000,
        "only {checked_states} states checked"
    );
}

// ---------------------------------------------------------------------------------------------
// Real grammars.

/// States after committing prefixes of `files` token by token: every `every`-th token, up to
/// `max_states` states; each is checked against the oracle.
fn check_real(grammar: &str, tokenizer: &str, files: &[PathBuf], every: usize, max_states: usize) {
    let source = munch_grammars::syncode::grammar(grammar).unwrap_or_else(|e| panic!("{e}"));
    let parser = parser_of(&source, grammar).unwrap_or_else(|e| panic!("{e}"));
    let vocab = Arc::new(Vocabulary::load(tokenizer).unwrap_or_else(|e| panic!("{e}")));
    let spans = TokenSpans::build(parser.lexer(), &vocab, &SpansConfig::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut matcher = oracle(&parser, &vocab);
    let mut checked = 0;
    'files: for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let tokens = vocab
            .encode(&text)
            .unwrap_or_else(|e| panic!("{file:?}: {e}"));
        matcher.reset();
        // Offset the sampled positions per file so that states differ.
        let offset = checked % every;
        for (i, &t) in tokens.iter().enumerate() {
            if i % every == offset {
                let mask = matcher.next_token_mask();
                let context = || {
                    format!(
                        "{grammar} × {tokenizer}, {} after {i} tokens",
                        file.display()
                    )
                };
                check_state(&spans, &vocab, matcher.state(), &mask, &context);
                checked += 1;
                if checked >= max_states {
                    break 'files;
                }
            }
            if matcher.accept_token(t.as_u32()).is_err() {
                continue 'files; // the grammar rejects the rest of this file
            }
        }
    }
    assert!(checked >= max_states / 2, "only {checked} states checked");
}

fn json_files() -> Vec<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars/corpus/json");
    let files = files_under(&dir, "json", u64::MAX);
    assert!(!files.is_empty(), "no JSON files in {}", dir.display());
    files
}

#[test]
fn oracle_masks_are_unions_of_classes_on_syncode_json_llama3() {
    check_real("json", "llama3", &json_files(), 5, 40);
}

#[test]
fn oracle_masks_are_unions_of_classes_on_syncode_java_llama2() {
    let files = corpus::files(Language::Java, 8, 6_000).unwrap_or_else(|e| panic!("{e}"));
    check_real("java", "llama2", &files, 17, 40);
}
