//! The runner: one [`Case`] through a set of maskers and the oracle, step by step.

use std::fmt;
use std::time::Instant;

use munch_glr::cfg::generate::SeededRng;
use munch_glr::mask::{MaskCache, Masker, Oracle, TokenMask};
use munch_glr::parser::{CommitError, ParserState};
use munch_lexer::vocab::Vocabulary;
use munch_lexer::TokenId;

use super::{Case, Expect, GrammarRef, TokenizerRef};

/// Tokens checked against the contract directly at every step: this many random ids, and as
/// many of the tokens the maskers allow.
const SPOT_CHECKS: usize = 12;

/// How much of the text a [`Disagreement`] quotes before the step.
const CONTEXT_BYTES: usize = 80;

/// How a text ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every token was committed and the state accepts: the text is a sentence.
    Accepted,
    /// Every token was committed but the state does not accept: the text is a viable prefix
    /// and no sentence.
    Incomplete,
    /// The parser refused the forced token of `step` (every masker agreed); `at_byte` is the
    /// first byte of the text that cannot continue it.
    Refused {
        /// The step.
        step: usize,
        /// The refused token.
        token: TokenId,
        /// The first byte that cannot continue the text.
        at_byte: usize,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Accepted => f.write_str("accepted"),
            Outcome::Incomplete => f.write_str("a viable prefix that does not accept"),
            Outcome::Refused {
                step,
                token,
                at_byte,
            } => write!(
                f,
                "refused at step {step} (token {token}), first failing byte {at_byte}"
            ),
        }
    }
}

/// What a successful run did.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// `GROUP/NAME`.
    pub id: String,
    /// The case's tokenizer.
    pub tokenizer: TokenizerRef,
    /// The case's grammar.
    pub grammar: GrammarRef,
    /// The vocabulary's size.
    pub vocab_len: usize,
    /// The text's length in bytes.
    pub text_bytes: usize,
    /// The text's length in tokens.
    pub tokens: usize,
    /// Steps at which every masker computed a mask.
    pub steps: usize,
    /// Steps at which the oracle computed the whole mask.
    pub oracle_steps: usize,
    /// Tokens checked against the contract one by one.
    pub spot_checks: usize,
    /// The maskers' names.
    pub maskers: Vec<String>,
    /// How the text ended.
    pub outcome: Outcome,
    /// Time spent in the maskers (all of them), for sizing the corpus; never asserted on.
    pub masker_time: std::time::Duration,
    /// Time spent in the oracle and the spot checks.
    pub oracle_time: std::time::Duration,
}

/// One side's word on one token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// A masker's name, `oracle`, or `contract` (the token committed to a clone of the state).
    pub who: String,
    /// Whether it allows the token.
    pub allowed: bool,
}

/// What went wrong.
#[derive(Clone, Debug)]
pub enum DisagreementKind {
    /// The sides do not agree on `token`.
    Token {
        /// The token.
        token: TokenId,
        /// Its bytes (`None` for a special token).
        bytes: Option<Vec<u8>>,
        /// What was checked at this step (`masks`, `oracle`, `spot check`, `forced token`,
        /// `end of sequence`).
        check: &'static str,
        /// Each side's verdict; the last is always the contract's.
        verdicts: Vec<Verdict>,
        /// Why the contract refuses the token, when it does: the commit error (or that the
        /// state does not accept, for an end-of-sequence token).
        refusal: Option<String>,
    },
    /// The text did not do what the case expects.
    Expectation {
        /// What the case expects.
        expected: Expect,
        /// What happened.
        outcome: Outcome,
        /// Why the parser refused, when it did.
        refusal: Option<String>,
    },
    /// The parser refused a token whose bytes, committed one by one, it accepts: `commit` is
    /// not a function of the text alone.
    ByteReplay {
        /// The token.
        token: TokenId,
        /// The error of the token-wise commit.
        refusal: String,
    },
}

/// The first difference a run found.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// [`Case`]'s `Display`: group, name, tokenizer, text and where it came from.
    pub case: String,
    /// The step (the number of tokens committed before it).
    pub step: usize,
    /// The text's length in tokens.
    pub tokens: usize,
    /// The text's length in bytes before the step.
    pub at_byte: usize,
    /// Up to 80 bytes of text just before the step.
    pub before: Vec<u8>,
    /// What differed (boxed: a run's `Result` stays small).
    pub kind: Box<DisagreementKind>,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "case {}", self.case)?;
        let cut = if self.before.len() < self.at_byte {
            "…"
        } else {
            ""
        };
        let before = format!("{cut}{}", escape(&self.before));
        match &*self.kind {
            DisagreementKind::Token {
                token,
                bytes,
                check,
                verdicts,
                refusal,
            } => {
                writeln!(
                    f,
                    "  step {} of {} (byte {}), {check}: token {token} {}",
                    self.step,
                    self.tokens,
                    self.at_byte,
                    describe_bytes(bytes.as_deref()),
                )?;
                writeln!(f, "  text before: \"{before}\"")?;
                for v in verdicts {
                    let word = if v.allowed { "allows" } else { "refuses" };
                    writeln!(f, "  {:<12} {word}", v.who)?;
                }
                if let Some(why) = refusal {
                    writeln!(f, "  (the contract refuses it: {why})")?;
                }
                Ok(())
            }
            DisagreementKind::Expectation {
                expected,
                outcome,
                refusal,
            } => {
                writeln!(f, "  expected {expected}, but the text was {outcome}")?;
                writeln!(
                    f,
                    "  step {} of {} (byte {}), text before: \"{before}\"",
                    self.step, self.tokens, self.at_byte
                )?;
                if let Some(why) = refusal {
                    writeln!(f, "  (the parser refused {why})")?;
                }
                Ok(())
            }
            DisagreementKind::ByteReplay { token, refusal } => {
                writeln!(
                    f,
                    "  step {} of {} (byte {}): token {token} is refused ({refusal}), \
                     but its bytes one by one are accepted",
                    self.step, self.tokens, self.at_byte
                )?;
                writeln!(f, "  text before: \"{before}\"")
            }
        }
    }
}

impl std::error::Error for Disagreement {}

fn escape(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).escape_debug().to_string()
}

fn describe_bytes(bytes: Option<&[u8]>) -> String {
    match bytes {
        None => "(special)".to_string(),
        Some(b) => {
            let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
            format!("\"{}\" (bytes {})", escape(b), hex.join(" "))
        }
    }
}

/// The contract for one token: allowed iff committing it to a clone leaves the state live (an
/// end-of-sequence token iff the state accepts). `Err` carries why not.
fn contract(vocab: &Vocabulary, state: &ParserState, t: TokenId) -> Result<(), String> {
    if vocab.eos().contains(&t) {
        return if state.is_accepting() {
            Ok(())
        } else {
            Err("the state does not accept here".to_string())
        };
    }
    let mut next = state.clone();
    match next.commit_token(vocab, t) {
        // A commit that succeeds leaves the state live (it refuses otherwise).
        Ok(()) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Where a run stands, for building a [`Disagreement`].
struct At<'a> {
    case: &'a Case,
    step: usize,
    text: &'a [u8],
}

impl At<'_> {
    fn disagreement(&self, kind: DisagreementKind) -> Disagreement {
        let from = self.text.len().saturating_sub(CONTEXT_BYTES);
        Disagreement {
            case: self.case.to_string(),
            step: self.step,
            tokens: self.case.tokens.len(),
            at_byte: self.text.len(),
            before: self.text[from..].to_vec(),
            kind: Box::new(kind),
        }
    }

    fn token(
        &self,
        state: &ParserState,
        token: TokenId,
        check: &'static str,
        mut verdicts: Vec<Verdict>,
    ) -> Disagreement {
        let vocab = &self.case.vocab;
        let verdict = contract(vocab, state, token);
        verdicts.push(Verdict {
            who: "contract".to_string(),
            allowed: verdict.is_ok(),
        });
        self.disagreement(DisagreementKind::Token {
            token,
            bytes: vocab.token_bytes(token).map(<[u8]>::to_vec),
            check,
            verdicts,
            refusal: verdict.err(),
        })
    }
}

/// Runs `case` through `maskers` and the oracle (once in every `oracle_every` steps, in the
/// middle of each period, and at the step of a refused token; the case's own period wins when
/// it sets one; `usize::MAX` runs it only at a refused token); see the
/// [module docs](super#what-a-run-checks) for every check.
///
/// # Panics
/// When a masker was built for a different vocabulary than the case's: that is a bug in the
/// caller, not a finding.
pub fn run(
    case: &Case,
    maskers: &[&dyn Masker],
    oracle_every: usize,
) -> Result<CaseReport, Disagreement> {
    let vocab = &case.vocab;
    for m in maskers {
        assert_eq!(
            m.vocabulary().fingerprint(),
            vocab.fingerprint(),
            "masker `{}` was built for another vocabulary than {case}'s",
            m.name()
        );
    }
    let oracle_every = case.oracle_every.unwrap_or(oracle_every).max(1);
    let oracle = Oracle::new(std::sync::Arc::clone(vocab));
    let mut oracle_cache = oracle.create_cache();
    let mut oracle_mask = TokenMask::new(vocab.len());
    let mut caches: Vec<MaskCache> = maskers.iter().map(|m| m.create_cache()).collect();
    let mut masks: Vec<TokenMask> = maskers
        .iter()
        .map(|_| TokenMask::new(vocab.len()))
        .collect();
    let names: Vec<String> = maskers.iter().map(|m| m.name().to_string()).collect();
    let mut rng = SeededRng::new(0x6d75_6e63 ^ case.tokens.len() as u64);
    let mut report = CaseReport {
        id: case.id.clone(),
        tokenizer: case.tokenizer.clone(),
        grammar: case.grammar.clone(),
        vocab_len: vocab.len(),
        text_bytes: case.text.len(),
        tokens: case.tokens.len(),
        steps: 0,
        oracle_steps: 0,
        spot_checks: 0,
        maskers: names.clone(),
        outcome: Outcome::Incomplete,
        masker_time: Default::default(),
        oracle_time: Default::default(),
    };
    let verdicts = |masks: &[TokenMask], t: TokenId| -> Vec<Verdict> {
        names
            .iter()
            .zip(masks)
            .map(|(who, m)| Verdict {
                who: who.clone(),
                allowed: m.contains(t),
            })
            .collect()
    };

    let mut state = ParserState::new(std::sync::Arc::clone(&case.parser));
    let mut text: Vec<u8> = Vec::with_capacity(case.text.len());
    let mut refusal = None;
    for step in 0..=case.tokens.len() {
        let at = At {
            case,
            step,
            text: &text,
        };
        let clock = Instant::now();
        for ((m, cache), mask) in maskers.iter().zip(&mut caches).zip(&mut masks) {
            m.fill_mask(cache, &state, mask);
        }
        report.masker_time += clock.elapsed();
        let clock = Instant::now();
        report.steps += 1;
        // 1. The maskers agree with each other.
        for i in 1..masks.len() {
            if let Some(t) = masks[0].first_difference(&masks[i]) {
                return Err(at.token(&state, t, "masks", verdicts(&masks, t)));
            }
        }
        let forced = case.tokens.get(step).copied();
        let commit: Option<Result<ParserState, CommitError>> = forced.map(|t| {
            let mut next = state.clone();
            next.commit_token(vocab, t).map(|()| next)
        });
        let refused_here = matches!(commit, Some(Err(_)));
        // 2. The oracle, at sampled steps and where it matters most.
        if step % oracle_every == oracle_every / 2 || refused_here {
            oracle.fill_mask(&mut oracle_cache, &state, &mut oracle_mask);
            report.oracle_steps += 1;
            let differing = masks.iter().find_map(|m| m.first_difference(&oracle_mask));
            if let Some(t) = differing {
                let mut v = verdicts(&masks, t);
                v.push(Verdict {
                    who: "oracle".to_string(),
                    allowed: oracle_mask.contains(t),
                });
                return Err(at.token(&state, t, "oracle", v));
            }
        }
        // 3. Spot checks of single tokens against the contract.
        if let Some(first) = masks.first() {
            for t in spot_tokens(first, vocab.len(), &mut rng) {
                report.spot_checks += 1;
                let allowed = contract(vocab, &state, t).is_ok();
                if masks.iter().any(|m| m.contains(t) != allowed) {
                    return Err(at.token(&state, t, "spot check", verdicts(&masks, t)));
                }
            }
        }
        report.oracle_time += clock.elapsed();
        match (forced, commit) {
            (Some(t), Some(result)) => {
                // 4. The forced token: allowed iff the parser takes it.
                if masks.iter().any(|m| m.contains(t) != result.is_ok()) {
                    return Err(at.token(&state, t, "forced token", verdicts(&masks, t)));
                }
                match result {
                    Ok(next) => {
                        state = next;
                        text.extend_from_slice(vocab.token_bytes(t).unwrap_or_default());
                    }
                    Err(e) => {
                        let at_byte =
                            first_failing_byte(&state, vocab, t, text.len()).ok_or_else(|| {
                                at.disagreement(DisagreementKind::ByteReplay {
                                    token: t,
                                    refusal: e.to_string(),
                                })
                            })?;
                        report.outcome = Outcome::Refused {
                            step,
                            token: t,
                            at_byte,
                        };
                        refusal = Some(format!(
                            "token {t} {}; on its bytes: {e}",
                            describe_bytes(vocab.token_bytes(t))
                        ));
                        break;
                    }
                }
            }
            _ => {
                // 5. The end: end-of-sequence tokens iff the state accepts.
                let accepting = state.is_accepting();
                for &eos in vocab.eos() {
                    if masks.iter().any(|m| m.contains(eos) != accepting) {
                        return Err(at.token(
                            &state,
                            eos,
                            "end of sequence",
                            verdicts(&masks, eos),
                        ));
                    }
                }
                report.outcome = if accepting {
                    Outcome::Accepted
                } else {
                    Outcome::Incomplete
                };
            }
        }
    }
    let met = match case.expect {
        Expect::Accept => report.outcome == Outcome::Accepted,
        Expect::Any => true,
        Expect::Reject { at_byte } => match (&report.outcome, at_byte) {
            (Outcome::Accepted, _) => false,
            (_, None) => true,
            (Outcome::Incomplete, Some(b)) => b == case.text.len(),
            (Outcome::Refused { at_byte, .. }, Some(b)) => *at_byte == b,
        },
    };
    if !met {
        let step = match report.outcome {
            Outcome::Refused { step, .. } => step,
            _ => case.tokens.len(),
        };
        let at = At {
            case,
            step,
            text: &text,
        };
        return Err(at.disagreement(DisagreementKind::Expectation {
            expected: case.expect,
            outcome: report.outcome,
            refusal,
        }));
    }
    Ok(report)
}

/// The tokens spot-checked at one step: [`SPOT_CHECKS`] random ids, and as many picked at
/// random among those `mask` allows.
fn spot_tokens(mask: &TokenMask, len: usize, rng: &mut SeededRng) -> Vec<TokenId> {
    if len == 0 {
        return Vec::new();
    }
    let mut out: Vec<TokenId> = (0..SPOT_CHECKS)
        .map(|_| TokenId::from_usize(rng.below(len)))
        .collect();
    let allowed = mask.count();
    if allowed > 0 {
        let mut picks: Vec<usize> = (0..SPOT_CHECKS.min(allowed))
            .map(|_| rng.below(allowed))
            .collect();
        picks.sort_unstable();
        picks.dedup();
        let mut picks = picks.into_iter().peekable();
        for (k, t) in mask.iter().enumerate() {
            match picks.peek() {
                None => break,
                Some(&p) if p == k => {
                    out.push(t);
                    picks.next();
                }
                Some(_) => {}
            }
        }
    }
    out
}

/// The first byte of the text that cannot continue it, for a token `t` refused after `state`
/// (whose text is `prefix_len` bytes long): its bytes committed one by one. `None` when every
/// byte is accepted, which would make the token-wise refusal wrong.
fn first_failing_byte(
    state: &ParserState,
    vocab: &Vocabulary,
    t: TokenId,
    prefix_len: usize,
) -> Option<usize> {
    let bytes = vocab.token_bytes(t)?;
    let mut s = state.clone();
    for (i, &b) in bytes.iter().enumerate() {
        if s.commit_bytes(&[b]).is_err() {
            return Some(prefix_len + i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use munch_glr::parser::{Parser, ParserConfig};

    use super::super::{synthetic, TokenizerRef};
    use super::*;

    /// A masker that wraps the oracle and lies about one token at one text length: what a
    /// broken masker looks like to the runner.
    struct Liar {
        oracle: Oracle,
        at_commits: usize,
        token: TokenId,
    }

    impl Masker for Liar {
        fn name(&self) -> &str {
            "liar"
        }
        fn vocabulary(&self) -> &Vocabulary {
            self.oracle.vocabulary()
        }
        fn create_cache(&self) -> MaskCache {
            self.oracle.create_cache()
        }
        fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
            self.oracle.fill_into(cache, state, mask.reborrow());
            if state.commit_len() == self.at_commits {
                if mask.contains(self.token) {
                    mask.remove(self.token);
                } else {
                    mask.insert(self.token);
                }
            }
        }
    }

    fn case(grammar: &str, text: &str, expect: Expect) -> Case {
        let loaded =
            munch_glr::lark::load(grammar.as_bytes(), &Default::default()).expect("grammar");
        let parser = Arc::new(Parser::new(&loaded, &ParserConfig::default()).unwrap());
        let vocab = Arc::new(synthetic("bytes").unwrap());
        Case {
            id: "unit/case".to_string(),
            text_index: (0, 1),
            origin: "inline".to_string(),
            grammar: GrammarRef::Inline(grammar.to_string()),
            tokenizer: TokenizerRef::Synthetic("bytes".to_string()),
            tokens: vocab.encode(text).unwrap(),
            parser,
            vocab,
            text: text.to_string(),
            expect,
            oracle_every: None,
        }
    }

    const SUM: &str = "start: NUM (\"+\" NUM)*\nNUM: /[0-9]+/\n";

    fn byte_token(vocab: &Vocabulary, b: u8) -> TokenId {
        vocab.encode(std::str::from_utf8(&[b]).unwrap()).unwrap()[0]
    }

    #[test]
    fn honest_maskers_pass_and_report_the_outcome() {
        let c = case(SUM, "1+23", Expect::Accept);
        let oracle = Oracle::new(Arc::clone(&c.vocab));
        let report = run(&c, &[&oracle], 1).unwrap();
        assert_eq!(report.outcome, Outcome::Accepted);
        assert_eq!(report.steps, 5);
        assert_eq!(report.oracle_steps, 5);
        assert!(report.spot_checks >= 5 * SPOT_CHECKS);

        let c = case(SUM, "1+2+", Expect::Reject { at_byte: Some(4) });
        assert_eq!(run(&c, &[&oracle], 2).unwrap().outcome, Outcome::Incomplete);

        let c = case(SUM, "12+x", Expect::Reject { at_byte: Some(3) });
        let report = run(&c, &[&oracle], 2).unwrap();
        // Step 1 by period (the middle of 0..2), step 3 for the refusal.
        assert_eq!(report.oracle_steps, 2);
        let x = byte_token(&c.vocab, b'x');
        assert_eq!(
            report.outcome,
            Outcome::Refused {
                step: 3,
                token: x,
                at_byte: 3
            }
        );
    }

    #[test]
    fn a_masker_that_refuses_the_forced_token_is_caught_at_that_step() {
        let c = case(SUM, "1+23", Expect::Accept);
        let two = byte_token(&c.vocab, b'2');
        let liar = Liar {
            oracle: Oracle::new(Arc::clone(&c.vocab)),
            at_commits: 2,
            token: two,
        };
        // Without the oracle's full mask at step 2, the forced-token check finds it.
        let e = run(&c, &[&liar], 1000).unwrap_err();
        assert_eq!(e.step, 2);
        assert_eq!(e.before, b"1+");
        let DisagreementKind::Token {
            token,
            check,
            verdicts,
            ..
        } = &*e.kind
        else {
            panic!("{e}")
        };
        assert_eq!((*token, *check), (two, "forced token"));
        assert_eq!(
            verdicts,
            &vec![
                Verdict {
                    who: "liar".into(),
                    allowed: false
                },
                Verdict {
                    who: "contract".into(),
                    allowed: true
                }
            ]
        );
        let shown = e.to_string();
        assert!(shown.contains("step 2 of 4 (byte 2)"), "{shown}");
        assert!(shown.contains("text before: \"1+\""), "{shown}");
        assert!(shown.contains("\"2\" (bytes 32)"), "{shown}");
    }

    #[test]
    fn a_masker_that_allows_a_wrong_token_is_caught_by_the_oracle_and_by_a_second_masker() {
        let c = case(SUM, "1+23", Expect::Accept);
        let plus = byte_token(&c.vocab, b'+');
        // After "1+", "+" is wrong; the liar allows it.
        let liar = Liar {
            oracle: Oracle::new(Arc::clone(&c.vocab)),
            at_commits: 2,
            token: plus,
        };
        let e = run(&c, &[&liar], 1).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token, *check), (2, plus, "oracle"));
        assert!(e.to_string().contains("contract"), "{e}");

        let honest = Oracle::new(Arc::clone(&c.vocab));
        let e = run(&c, &[&honest, &liar], 1000).unwrap_err();
        let DisagreementKind::Token {
            token,
            check,
            verdicts,
            refusal,
            ..
        } = &*e.kind
        else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token, *check), (2, plus, "masks"));
        assert_eq!(
            verdicts.iter().map(|v| v.allowed).collect::<Vec<_>>(),
            [false, true, false]
        );
        assert!(
            refusal.as_deref().unwrap().contains("cannot continue"),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_end_of_sequence_is_caught() {
        let c = case(SUM, "1+2", Expect::Accept);
        let liar = Liar {
            oracle: Oracle::new(Arc::clone(&c.vocab)),
            at_commits: 3,
            token: c.vocab.eos()[0],
        };
        let e = run(&c, &[&liar], 1).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token, *check), (3, c.vocab.eos()[0], "oracle"));
        // Without the oracle there, the end-of-sequence check finds it (or a spot check that
        // happens to pick it first).
        let e = run(&c, &[&liar], 1000).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token), (3, c.vocab.eos()[0]));
        assert!(["end of sequence", "spot check"].contains(check), "{e}");
        assert!(e.to_string().contains("(special)"), "{e}");
    }

    #[test]
    fn unmet_expectations_fail() {
        let oracle_for = |c: &Case| Oracle::new(Arc::clone(&c.vocab));
        let c = case(SUM, "1+", Expect::Accept);
        let e = run(&c, &[&oracle_for(&c)], 1).unwrap_err();
        assert!(
            matches!(
                *e.kind,
                DisagreementKind::Expectation {
                    outcome: Outcome::Incomplete,
                    ..
                }
            ),
            "{e}"
        );
        let c = case(SUM, "1+1", Expect::Reject { at_byte: None });
        let e = run(&c, &[&oracle_for(&c)], 1).unwrap_err();
        assert!(e.to_string().contains("expected reject"), "{e}");
        let c = case(SUM, "1++1", Expect::Reject { at_byte: Some(2) });
        assert!(run(&c, &[&oracle_for(&c)], 1).is_ok());
        let c = case(SUM, "1++1", Expect::Reject { at_byte: Some(1) });
        let e = run(&c, &[&oracle_for(&c)], 1).unwrap_err();
        assert!(e.to_string().contains("first failing byte 2"), "{e}");
        let c = case(SUM, "1++1", Expect::Any);
        assert!(run(&c, &[&oracle_for(&c)], 1).is_ok());
    }

    #[test]
    fn spot_tokens_pick_allowed_ones() {
        let mut mask = TokenMask::new(1000);
        for i in [3, 500, 999] {
            mask.insert(TokenId::from_usize(i));
        }
        let mut rng = SeededRng::new(1);
        let picked = spot_tokens(&mask, 1000, &mut rng);
        assert_eq!(
            picked.len() - SPOT_CHECKS,
            3.min(picked.len() - SPOT_CHECKS)
        );
        assert!(picked[SPOT_CHECKS..].iter().all(|t| mask.contains(*t)));
        assert!(picked.len() > SPOT_CHECKS);
    }
}
