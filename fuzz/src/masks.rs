//! The `masks` target: every masker against the exact [`Oracle`] at every step of a token path.
//!
//! A case is a random [`GrammarSpec`], a small vocabulary (single pieces, random joins of
//! pieces, lexemes of the grammar's terminals, two lexemes joined so that a token spans a
//! terminal boundary, and lexemes cut at a random byte so that tokens split UTF-8 characters;
//! a special token first and an EOS token last) and a path of [`MaskStep`]s. Along the path,
//! at every state:
//!
//! - every masker of [`maskers`] returns the oracle's mask (the first differing token is
//!   reported with its bytes, the text so far, and each side's verdict);
//! - the oracle's mask on a fresh state that commits the same text in one call is the same (a
//!   mask is a function of the text);
//! - the EOS token is allowed exactly when the reference accepts the text.
//!
//! Steps commit an allowed token (chosen by index among the oracle's allowed text tokens) or
//! roll back; the maskers' caches live across steps, so stale memo entries would show.

use std::fmt;
use std::sync::Arc;

use arbitrary::{Arbitrary, Result, Unstructured};
use munch_glr::cfg::earley::Earley;
use munch_glr::mask::{Masker, Oracle, TokenMask};
use munch_glr::parser::{Parser, ParserState};
use munch_lexer::vocab::Vocabulary;
use munch_lexer::TokenId;
use munch_masker_spanner::SpannerMasker;
use munch_masker_trie::TrieMasker;
use munch_masker_wda::WdaMasker;

use crate::grammar::{Built, GrammarSpec};
use crate::re::PIECES;
use crate::repro::{test_text, Bytes, Repro};

/// Every masker under test, built for `parser` and `vocab`. The oracle is not in the list: it
/// is what they are compared with. A masker whose build hits one of its budgets (every build
/// error of the table-based maskers names one) is left out of the case: refusing a grammar
/// within budget is allowed, a wrong mask is not.
pub fn maskers(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>) -> Vec<Box<dyn Masker>> {
    let mut out: Vec<Box<dyn Masker>> =
        vec![Box::new(TrieMasker::new(parser.clone(), vocab.clone()))];
    if let Ok(spanner) = SpannerMasker::new(parser.clone(), vocab.clone()) {
        out.push(Box::new(spanner));
    }
    if let Ok(wda) = WdaMasker::new(parser.clone(), vocab.clone(), &crate::artifacts::config()) {
        out.push(Box::new(wda));
    }
    out
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
        t.pattern.as_re().sample(&mut pick, &mut out);
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

impl Repro for MaskStep {
    fn repro(&self, out: &mut String) {
        out.push_str(&format!("MaskStep::{self:?}"));
    }
}

impl Repro for MaskCase {
    fn repro(&self, out: &mut String) {
        out.push_str("MaskCase { grammar: ");
        self.grammar.repro(out);
        out.push_str(", tokens: ");
        self.tokens.repro(out);
        out.push_str(", steps: ");
        self.steps.repro(out);
        out.push_str(" }");
    }
}

impl fmt::Debug for MaskCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut comment: Vec<String> = self.grammar.lark().lines().map(String::from).collect();
        comment.push(format!("tokens (ids from 1): {:?}", self.tokens));
        comment.push(format!("steps: {:?}", self.steps));
        f.write_str(&test_text(
            "masks_regression",
            "masks::check",
            &self.to_repro(),
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

/// Runs the `masks` check; `Err` describes the first disagreement.
pub fn check(case: &MaskCase) -> std::result::Result<(), String> {
    let built = match case.grammar.build() {
        Ok(b) => b,
        Err(e) => return e.into_check(),
    };
    let vocab = Arc::new(case.vocabulary()?);
    let earley = Earley::new(&built.bnf);
    let oracle = Oracle::new(vocab.clone());
    let mut oracle_cache = oracle.create_cache();
    let maskers = maskers(&built.parser, &vocab);
    let mut caches: Vec<_> = maskers.iter().map(|m| m.create_cache()).collect();
    let eos = vocab.eos()[0];

    let mut state = ParserState::new(built.parser.clone());
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut steps = case.steps.iter();
    loop {
        let text = chunks.concat();
        let at = |m: String| {
            format!(
                "after {:?} ({} commits): {m}",
                Bytes(text.clone()),
                chunks.len()
            )
        };
        let want = oracle.mask(&mut oracle_cache, &state);
        for (m, cache) in maskers.iter().zip(&mut caches) {
            let got = m.mask(cache, &state);
            if let Some(t) = got.first_difference(&want) {
                let verb = |m: &TokenMask| if m.contains(t) { "allows" } else { "forbids" };
                return Err(at(format!(
                    "{} {} {} but the oracle {} it",
                    m.name(),
                    verb(&got),
                    describe(&vocab, t),
                    verb(&want)
                )));
            }
        }
        let mut fresh = ParserState::new(built.parser.clone());
        if fresh.commit_bytes(&text).is_ok() {
            let again: TokenMask = oracle.mask(&mut oracle_cache, &fresh);
            if let Some(t) = again.first_difference(&want) {
                return Err(at(format!(
                    "the mask depends on how the text was committed: {} is {} after the \
                     path, {} after one commit of the text",
                    describe(&vocab, t),
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
            return Err(at("committing the text again in one call fails".into()));
        }
        if let Some(accepts) = built.reference_accepts(&earley, &text) {
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
                if let Err(e) = state.commit_token(&vocab, t) {
                    return Err(at(format!(
                        "the oracle allows {} but committing it fails: {e}",
                        describe(&vocab, t)
                    )));
                }
                chunks.push(vocab.token_bytes(t).unwrap_or_default().to_vec());
            }
            Some(&MaskStep::Rollback(k)) => {
                let n = k as usize % (state.commit_len() + 1);
                if let Err(e) = state.rollback(n) {
                    return Err(at(format!("rollback({n}) failed: {e}")));
                }
                chunks.truncate(chunks.len() - n);
            }
        }
    }
}
