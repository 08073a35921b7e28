//! The `masks` target: every masker, through the front door ([`Compiled`], [`Matcher`]),
//! against the exact oracle at every step of a token path.
//!
//! A case is a random [`GrammarSpec`], a small vocabulary (single pieces, random joins of
//! pieces, lexemes of the grammar's terminals, two lexemes joined so that a token spans a
//! terminal boundary, and lexemes cut at a random byte so that tokens split UTF-8 characters;
//! a special token first and an EOS token last) and a path of [`MaskStep`]s. A matcher of every
//! masker of [`compiled`] and one of the oracle walk the path in step, as an engine's matchers
//! do. At every state:
//!
//! - every matcher writes the oracle's mask into an engine's bitmask row that held ones before
//!   (the first differing token is reported with its bytes, the text so far, and each side's
//!   verdict); the bits past the vocabulary, and a padding word past the row, come back zero;
//!   The wda runs twice: built ahead, and determinised on demand ([`Config::lazy`]);
//! - so does the trie's walk over every token ([`TrieMasker::new`]: the front door builds it
//!   only when the class tables exceed their budget), read on the oracle matcher's state;
//! - a fresh matcher that accepts the text in one call has the same mask (a mask is a function
//!   of the text), and a fresh matcher validates the whole token path;
//! - the EOS token is allowed exactly when the reference accepts the text, and validated
//!   exactly when allowed.
//!
//! Steps accept an allowed token (chosen by index among the oracle's allowed text tokens; every
//! matcher must accept it) or roll back; the matchers' caches live across steps, so stale memo
//! entries would show.

use std::fmt;
use std::sync::Arc;

use arbitrary::{Arbitrary, Result, Unstructured};
use munch::{Compiled, Config, MaskerKind, Matcher};
use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::Parser;
use munch_masker_trie::TrieMasker;
use munch_testkit::earley::Earley;
use munch_vocab::{TokenId, Vocabulary};

use crate::grammar::{Built, GrammarSpec};
use crate::re::PIECES;
use crate::repro::{repro_struct, repro_variant, test_text, Bytes};

/// How the fuzz cases compile a masker of `kind`: no fallback, and table maskers within 256 MiB
/// (the grammars are tiny; a build that needs more is left out of the case).
pub fn config(kind: MaskerKind) -> Config {
    Config::new()
        .masker(kind)
        .fallback(None)
        .max_memory(Some(256 << 20))
}

/// The oracle, and every other masker of this build, compiled with [`config`] for `parser` and
/// `vocab` and sharing the parser. A masker whose build hits one of its budgets (every build
/// error of the table-based maskers names one) is left out of the case: refusing a grammar
/// within budget is allowed, a wrong mask is not.
pub fn compiled(
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
) -> std::result::Result<(Compiled, Vec<Compiled>), String> {
    let oracle = Compiled::from_parser(parser.clone(), vocab.clone(), &config(MaskerKind::Oracle))
        .map_err(|e| format!("the oracle does not compile: {e}"))?;
    let mut others: Vec<Compiled> = MaskerKind::ALL
        .iter()
        .filter(|&&k| k != MaskerKind::Oracle)
        .filter_map(|&k| oracle.with_masker(&config(k)).ok())
        .collect();
    // The wda determinised on demand as well: its cache fills along the path.
    if let Some(&wda) = MaskerKind::ALL.iter().find(|k| k.name() == "wda") {
        others.extend(oracle.with_masker(&config(wda).lazy(true)).ok());
    }
    Ok((oracle, others))
}

/// Pieces that complete the split characters of [`PIECES`]: `\xc3` + `\xa9` is `é`,
/// `\xe2\x82` + `\xac` is `€`, `\xf0\x90` + `\x8d\x88` is `𐍈`.
const COMPLETIONS: &[&[u8]] = &[b"\xa9", b"\xac", b"\xf0\x90", b"\x8d\x88"];

/// Most text tokens in a vocabulary.
pub const MAX_TOKENS: usize = 40;

/// One step of the token path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskStep {
    /// Commit allowed text token number `n % allowed` (stop when none is allowed).
    Choose(u8),
    /// Roll back `n % (commit_len + 1)` commits.
    Rollback(u8),
}

/// One `masks` case.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct MaskCase {
    /// The grammar.
    pub grammar: GrammarSpec,
    /// The text tokens; the vocabulary is a special token, these (ids from 1), then EOS.
    pub tokens: Vec<Bytes>,
    /// The path.
    pub steps: Vec<MaskStep>,
}

impl MaskCase {
    /// The vocabulary: id 0 a special token, ids `1..=tokens.len()` the text tokens, and EOS.
    pub fn vocabulary(&self) -> std::result::Result<Vocabulary, String> {
        let mut entries: Vec<Option<Vec<u8>>> = vec![None];
        entries.extend(self.tokens.iter().map(|t| Some(t.0.clone())));
        entries.push(None);
        let eos = TokenId::from_usize(entries.len() - 1);
        Vocabulary::from_token_bytes(entries, vec![eos]).map_err(|e| e.to_string())
    }
}

fn arbitrary_tokens(
    u: &mut Unstructured<'_>,
    grammar: &GrammarSpec,
    built: Option<&Built>,
) -> Result<Vec<Bytes>> {
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    if u.ratio(1, 2)? {
        tokens.extend(PIECES.iter().map(|p| p.to_vec()));
    }
    let lexeme = |u: &mut Unstructured<'_>| -> Result<Vec<u8>> {
        let t = u.choose(&grammar.terms)?;
        let mut out = Vec::new();
        let mut pick = |n: usize| u.int_in_range(0..=n - 1).unwrap_or(0);
        crate::re::sample(&t.pattern.as_re(), &mut pick, &mut out);
        Ok(out)
    };
    for _ in 0..u.int_in_range(0..=24)? {
        let token = match u.int_in_range(0..=5)? {
            0 | 1 => {
                let mut out = Vec::new();
                for _ in 0..u.int_in_range(1..=3)? {
                    let pieces = if u.ratio(1, 4)? { COMPLETIONS } else { PIECES };
                    out.extend_from_slice(u.choose(pieces)?);
                }
                out
            }
            2 => lexeme(u)?,
            3 => {
                let mut a = lexeme(u)?;
                a.extend(lexeme(u)?);
                a
            }
            4 => {
                let a = lexeme(u)?;
                let cut = u.int_in_range(0..=a.len())?;
                if u.ratio(1, 2)? {
                    a[..cut].to_vec()
                } else {
                    a[cut..].to_vec()
                }
            }
            _ => match (built, u.arbitrary::<u64>()?) {
                (Some(b), seed) => grammar
                    .sample_text(b, seed, 3)
                    .unwrap_or_default()
                    .into_iter()
                    .take(12)
                    .collect(),
                (None, _) => Vec::new(),
            },
        };
        if !token.is_empty() && token.len() <= 16 {
            tokens.push(token);
        }
    }
    tokens.truncate(MAX_TOKENS);
    Ok(tokens.into_iter().map(Bytes).collect())
}

impl<'a> Arbitrary<'a> for MaskCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let grammar = GrammarSpec::arbitrary_sized(u, 4, 4)?;
        let built = grammar.build().ok();
        let tokens = arbitrary_tokens(u, &grammar, built.as_ref())?;
        let n = u.int_in_range(0..=10)?;
        let mut steps = Vec::with_capacity(n);
        for _ in 0..n {
            steps.push(if u.ratio(4, 5)? {
                MaskStep::Choose(u.arbitrary()?)
            } else {
                MaskStep::Rollback(u.arbitrary()?)
            });
        }
        Ok(MaskCase {
            grammar,
            tokens,
            steps,
        })
    }
}

repro_variant!(MaskStep);

repro_struct!(MaskCase {
    grammar,
    tokens,
    steps
});

impl fmt::Debug for MaskCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut comment: Vec<String> = self.grammar.lark().lines().map(String::from).collect();
        comment.push(format!("tokens (ids from 1): {:?}", self.tokens));
        comment.push(format!("steps: {:?}", self.steps));
        f.write_str(&test_text(
            "masks_regression",
            "masks::check",
            self,
            &comment,
        ))
    }
}

fn describe(vocab: &Vocabulary, t: TokenId) -> String {
    match vocab.token_bytes(t) {
        Some(b) => format!("token {t} {:?}", Bytes(b.to_vec())),
        None if vocab.eos().contains(&t) => format!("token {t} (EOS)"),
        None => format!("token {t} (special)"),
    }
}

fn verb(mask: &TokenMask, t: TokenId) -> &'static str {
    if mask.contains(t) {
        "allows"
    } else {
        "forbids"
    }
}

/// A matcher's name: its masker's.
fn name(m: &Matcher) -> &'static str {
    m.compiled().masker_kind().name()
}

/// Runs the `masks` check; `Err` describes the first disagreement.
pub fn check(case: &MaskCase) -> std::result::Result<(), String> {
    let built = match case.grammar.build() {
        Ok(b) => b,
        Err(e) => return e.into_check(),
    };
    let vocab = Arc::new(case.vocabulary()?);
    let earley = Earley::new(&built.bnf);
    check_parser(case, &built, &built.parser, &vocab, Some(&earley))?;
    if let Some(parser) = &built.contextual {
        check_parser(case, &built, parser, &vocab, None)
            .map_err(|e| format!("with stand-ins for the ties: {e}"))?;
    }
    match &built.shifted {
        Some(parser) => check_parser(case, &built, parser, &vocab, None)
            .map_err(|e| format!("with shift/reduce conflicts resolved by shifting: {e}")),
        None => Ok(()),
    }
}

/// The `masks` check on `parser` (one of `built`'s), with the Earley reference's verdict on
/// the text where `earley` is given.
fn check_parser(
    case: &MaskCase,
    built: &Built,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    earley: Option<&Earley<'_>>,
) -> std::result::Result<(), String> {
    let (oracle, others) = compiled(parser, vocab)?;
    let mut reference = oracle.matcher();
    let mut matchers: Vec<Matcher> = others.iter().map(Compiled::matcher).collect();
    let every_token = TrieMasker::without_classes(parser.clone(), vocab.clone());
    let mut every_token_cache = every_token.create_cache();
    let eos = vocab.eos()[0];
    let words = oracle.bitmask_words();
    // An engine's row, and one padding word past it.
    let mut row = vec![0u32; words + 1];

    let mut path: Vec<u32> = Vec::new();
    let mut steps = case.steps.iter();
    loop {
        let text: Vec<u8> = path
            .iter()
            .flat_map(|&t| vocab.token_bytes(TokenId::from(t)).unwrap_or_default())
            .copied()
            .collect();
        let at = |m: String| {
            format!(
                "after {:?} ({} tokens): {m}",
                Bytes(text.clone()),
                path.len()
            )
        };
        let want = reference.next_token_mask();
        let differs = |who: &str, got: &TokenMask| {
            got.first_difference(&want).map(|t| {
                at(format!(
                    "{who} {} {} but the oracle {} it",
                    verb(got, t),
                    describe(vocab, t),
                    verb(&want, t)
                ))
            })
        };
        for m in &mut matchers {
            row.fill(u32::MAX);
            m.fill_next_token_bitmask(&mut row)
                .map_err(|e| at(format!("{}: {e}", name(m))))?;
            let stray = (vocab.len()..words * 32).find(|&t| row[t / 32] >> (t % 32) & 1 == 1);
            if row[words] != 0 || stray.is_some() {
                return Err(at(format!(
                    "{} leaves bits set past the vocabulary's {} tokens",
                    name(m),
                    vocab.len()
                )));
            }
            let got = TokenMask::from_words(&row[..words], vocab.len()).expect("a whole row");
            if let Some(e) = differs(name(m), &got) {
                return Err(e);
            }
            if m.accepted_len() != path.len() {
                return Err(at(format!(
                    "{} has accepted {} steps",
                    name(m),
                    m.accepted_len()
                )));
            }
        }
        let got = every_token.mask(&mut every_token_cache, reference.state());
        if let Some(e) = differs("trie (every token)", &got) {
            return Err(e);
        }
        let mut fresh = oracle.matcher();
        if fresh.accept_bytes(&text).is_ok() {
            let again = fresh.next_token_mask();
            if let Some(t) = again.first_difference(&want) {
                return Err(at(format!(
                    "the mask depends on how the text was accepted: {} is {} after the \
                     path, {} after one call with the text",
                    describe(vocab, t),
                    if want.contains(t) {
                        "allowed"
                    } else {
                        "forbidden"
                    },
                    if again.contains(t) {
                        "allowed"
                    } else {
                        "forbidden"
                    },
                )));
            }
        } else if !text.is_empty() {
            return Err(at("accepting the text again in one call fails".into()));
        }
        let valid = oracle.matcher().validate_tokens(&path);
        if valid != path.len() {
            return Err(at(format!(
                "a fresh matcher validates {valid} of the path's {} tokens",
                path.len()
            )));
        }
        if reference.validate_tokens(&[eos.as_u32()]) != usize::from(want.contains(eos)) {
            return Err(at(format!(
                "EOS is {} but validate_tokens says otherwise",
                if want.contains(eos) {
                    "allowed"
                } else {
                    "forbidden"
                },
            )));
        }
        if let Some(accepts) = earley.and_then(|e| built.reference_accepts(e, &text)) {
            if want.contains(eos) != accepts {
                return Err(at(format!(
                    "EOS is {} but the reference says the text is {}a sentence",
                    if want.contains(eos) {
                        "allowed"
                    } else {
                        "forbidden"
                    },
                    if accepts { "" } else { "not " }
                )));
            }
        }

        match steps.next() {
            None => return Ok(()),
            Some(&MaskStep::Choose(k)) => {
                let allowed: Vec<TokenId> = want.iter().filter(|&t| t != eos).collect();
                if allowed.is_empty() {
                    return Ok(());
                }
                let t = allowed[k as usize % allowed.len()];
                for m in std::iter::once(&mut reference).chain(&mut matchers) {
                    if let Err(e) = m.accept_token(t.as_u32()) {
                        return Err(at(format!(
                            "the oracle allows {} but the {} matcher refuses it: {e}",
                            describe(vocab, t),
                            name(m)
                        )));
                    }
                }
                path.push(t.as_u32());
            }
            Some(&MaskStep::Rollback(k)) => {
                let n = k as usize % (path.len() + 1);
                for m in std::iter::once(&mut reference).chain(&mut matchers) {
                    if let Err(e) = m.rollback(n) {
                        return Err(at(format!("the {} matcher's rollback({n}): {e}", name(m))));
                    }
                }
                path.truncate(path.len() - n);
            }
        }
    }
}
