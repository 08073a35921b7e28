//! The runner: one [`Case`] teacher-forced through a matcher of each masker
//! ([`munch::teacher::Teacher`], the loop every tool shares), every step checked against the
//! oracle and the contract.

use std::fmt;
use std::time::{Duration, Instant};

use munch::teacher::{self, Teacher};
use munch::{Compiled, Config, MaskerKind, Matcher, MatcherError, MatcherErrorKind};
use munch_glr::mask::TokenMask;
use munch_glr::parser::ParserState;
use munch_testkit::generate::SeededRng;
use munch_vocab::{TokenId, Vocabulary};

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
    /// The maskers' matchers ended their walk otherwise than the checker's own walk: one
    /// refused a token the contract allows, or accepted where the text is not a sentence.
    Walk {
        /// How the matchers' walk ended ([`munch::teacher::Outcome`]'s reason).
        walk: String,
        /// How the checker's walk ended.
        outcome: Outcome,
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
            DisagreementKind::Walk { walk, outcome } => {
                writeln!(
                    f,
                    "  the matchers' walk ended at step {} of {} (byte {}): {walk}",
                    self.step, self.tokens, self.at_byte
                )?;
                writeln!(f, "  but by the contract the text was {outcome}")?;
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

/// Why a matcher refused a token, as the parser says it.
fn reason(e: &MatcherError) -> String {
    match e.kind() {
        MatcherErrorKind::Rejected { reason, .. } => reason.clone(),
        _ => e.to_string(),
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

/// The oracle masker of `case`, compiled for its parser and vocabulary.
fn oracle_of(case: &Case) -> Compiled {
    let config = Config::new().masker(MaskerKind::Oracle).fallback(None);
    Compiled::from_parser(
        std::sync::Arc::clone(&case.parser),
        std::sync::Arc::clone(&case.vocab),
        &config,
    )
    .expect("the oracle builds for any parser and vocabulary")
}

/// Runs `case` through a matcher of each of `maskers`, walked in step by a [`Teacher`], and
/// checks every step against the oracle (once in every `oracle_every` steps, in the middle of
/// each period, and at the step of a refused token; the case's own period wins when it sets
/// one; `usize::MAX` runs it only at a refused token) and the contract; see the
/// [module docs](super#what-a-run-checks) for every check.
///
/// # Panics
/// When `maskers` is empty, or one was compiled for another parser or vocabulary than the
/// case's: that is a bug in the caller, not a finding.
pub fn run(
    case: &Case,
    maskers: &[Compiled],
    oracle_every: usize,
) -> Result<CaseReport, Disagreement> {
    assert!(!maskers.is_empty(), "{case}: no masker to run");
    for m in maskers {
        assert!(
            std::sync::Arc::ptr_eq(m.parser(), &case.parser)
                && m.vocabulary().fingerprint() == case.vocab.fingerprint(),
            "masker `{}` was compiled for another parser or vocabulary than {case}'s",
            m.masker_kind()
        );
    }
    let mut teacher = Teacher::new(maskers);
    let mut checker = Checker::new(case, teacher.names().to_vec(), oracle_every);
    let tokens: Vec<u32> = case.tokens.iter().map(|t| t.as_u32()).collect();
    let walked = teacher.run(&tokens, |step| {
        debug_assert!(checker.done() || step.index == checker.report.steps);
        let ns: u64 = step.mask_ns.iter().sum();
        checker.step(step.masks, Duration::from_nanos(ns));
    });
    checker.finish(Some(&walked))
}

/// The checks of one run, step by step, on the masks some walk computed: the runner's
/// [`Teacher`], or a test's own loop over a deliberately wrong masker.
///
/// The checker walks the text itself, with a matcher of the oracle: its state is the one the
/// masks are checked against, so a walk that strays from the text shows as masks that differ.
struct Checker<'a> {
    case: &'a Case,
    oracle_every: usize,
    names: Vec<String>,
    oracle: Matcher,
    oracle_mask: TokenMask,
    rng: SeededRng,
    report: CaseReport,
    /// The text committed so far.
    text: Vec<u8>,
    /// Why the parser refused the forced token, when it did.
    refusal: Option<String>,
    /// The first disagreement; no step is checked after it.
    failed: Option<Disagreement>,
    /// Whether the text ended (its end checked, or a token refused).
    ended: bool,
}

impl<'a> Checker<'a> {
    fn new(case: &'a Case, names: Vec<String>, oracle_every: usize) -> Self {
        let oracle = oracle_of(case);
        Checker {
            oracle_every: case.oracle_every.unwrap_or(oracle_every).max(1),
            oracle_mask: TokenMask::new(case.vocab.len()),
            oracle: oracle.matcher(),
            rng: SeededRng::new(0x6d75_6e63 ^ case.tokens.len() as u64),
            report: CaseReport {
                id: case.id.clone(),
                tokenizer: case.tokenizer.clone(),
                grammar: case.grammar.clone(),
                vocab_len: case.vocab.len(),
                text_bytes: case.text.len(),
                tokens: case.tokens.len(),
                steps: 0,
                oracle_steps: 0,
                spot_checks: 0,
                maskers: names.clone(),
                outcome: Outcome::Incomplete,
                masker_time: Duration::ZERO,
                oracle_time: Duration::ZERO,
            },
            names,
            text: Vec::with_capacity(case.text.len()),
            refusal: None,
            failed: None,
            ended: false,
            case,
        }
    }

    /// Whether the checker wants no more steps.
    fn done(&self) -> bool {
        self.ended || self.failed.is_some()
    }

    /// Checks the masks of the next step (one per masker, in the order of the names), computed
    /// in `mask_time`, then commits the forced token.
    fn step(&mut self, masks: &[TokenMask], mask_time: Duration) {
        if self.done() {
            return;
        }
        self.report.masker_time += mask_time;
        if let Err(d) = self.check(masks) {
            self.failed = Some(d);
        }
    }

    fn verdicts(&self, masks: &[TokenMask], t: TokenId) -> Vec<Verdict> {
        self.names
            .iter()
            .zip(masks)
            .map(|(who, m)| Verdict {
                who: who.clone(),
                allowed: m.contains(t),
            })
            .collect()
    }

    fn check(&mut self, masks: &[TokenMask]) -> Result<(), Disagreement> {
        let case = self.case;
        let vocab = &case.vocab;
        let step = self.report.steps;
        self.report.steps += 1;
        let clock = Instant::now();
        let at = At {
            case,
            step,
            text: &self.text,
        };
        let state = self.oracle.state();
        // 1. The maskers agree with each other.
        for i in 1..masks.len() {
            if let Some(t) = masks[0].first_difference(&masks[i]) {
                return Err(at.token(state, t, "masks", self.verdicts(masks, t)));
            }
        }
        let forced = case.tokens.get(step).copied();
        let commit: Option<Result<Matcher, MatcherError>> = forced.map(|t| {
            let mut next = self.oracle.fork();
            next.accept_token(t.as_u32()).map(|()| next)
        });
        let refused_here = matches!(commit, Some(Err(_)));
        // 2. The oracle, at sampled steps and where it matters most.
        if step % self.oracle_every == self.oracle_every / 2 || refused_here {
            self.oracle
                .fill_next_token_mask(&mut self.oracle_mask)
                .expect("the mask is over the oracle's vocabulary");
            self.report.oracle_steps += 1;
            let differing = masks
                .iter()
                .find_map(|m| m.first_difference(&self.oracle_mask));
            if let Some(t) = differing {
                let mut v = self.verdicts(masks, t);
                v.push(Verdict {
                    who: "oracle".to_string(),
                    allowed: self.oracle_mask.contains(t),
                });
                return Err(at.token(self.oracle.state(), t, "oracle", v));
            }
        }
        let state = self.oracle.state();
        // 3. Spot checks of single tokens against the contract.
        if let Some(first) = masks.first() {
            for t in spot_tokens(first, vocab.len(), &mut self.rng) {
                self.report.spot_checks += 1;
                let allowed = contract(vocab, state, t).is_ok();
                if masks.iter().any(|m| m.contains(t) != allowed) {
                    return Err(at.token(state, t, "spot check", self.verdicts(masks, t)));
                }
            }
        }
        self.report.oracle_time += clock.elapsed();
        match (forced, commit) {
            (Some(t), Some(result)) => {
                // 4. The forced token: allowed iff the parser takes it.
                if masks.iter().any(|m| m.contains(t) != result.is_ok()) {
                    return Err(at.token(state, t, "forced token", self.verdicts(masks, t)));
                }
                match result {
                    Ok(next) => {
                        self.oracle = next;
                        self.text
                            .extend_from_slice(vocab.token_bytes(t).unwrap_or_default());
                    }
                    Err(e) => {
                        let at_byte = first_failing_byte(&self.oracle, vocab, t, self.text.len())
                            .ok_or_else(|| {
                            at.disagreement(DisagreementKind::ByteReplay {
                                token: t,
                                refusal: reason(&e),
                            })
                        })?;
                        self.report.outcome = Outcome::Refused {
                            step,
                            token: t,
                            at_byte,
                        };
                        self.refusal = Some(format!(
                            "token {t} {}; on its bytes: {}",
                            describe_bytes(vocab.token_bytes(t)),
                            reason(&e)
                        ));
                        self.ended = true;
                    }
                }
            }
            _ => {
                // 5. The end: end-of-sequence tokens iff the state accepts.
                let accepting = self.oracle.is_accepting();
                for &eos in vocab.eos() {
                    if masks.iter().any(|m| m.contains(eos) != accepting) {
                        return Err(at.token(
                            state,
                            eos,
                            "end of sequence",
                            self.verdicts(masks, eos),
                        ));
                    }
                }
                self.report.outcome = if accepting {
                    Outcome::Accepted
                } else {
                    Outcome::Incomplete
                };
                self.ended = true;
            }
        }
        Ok(())
    }

    /// The report, or the first disagreement: one of the steps', a walk that ended otherwise
    /// than the checker's (`walked`: how the runner's matchers ended; `None` for a test's own
    /// loop), or an unmet expectation.
    fn finish(self, walked: Option<&teacher::Outcome>) -> Result<CaseReport, Disagreement> {
        if let Some(d) = self.failed {
            return Err(d);
        }
        let case = self.case;
        let report = self.report;
        let end_step = match report.outcome {
            Outcome::Refused { step, .. } => step,
            _ => case.tokens.len(),
        };
        let at = At {
            case,
            step: end_step,
            text: &self.text,
        };
        if let Some(walked) = walked {
            // The matchers stop where the checker does: at a refused token or at the end, and
            // accept exactly a sentence.
            let agrees = match (walked, &report.outcome) {
                (teacher::Outcome::Accepted, Outcome::Accepted) => self.ended,
                (teacher::Outcome::Rejected { step, .. }, Outcome::Refused { .. })
                | (teacher::Outcome::Rejected { step, .. }, Outcome::Incomplete) => {
                    self.ended && *step == end_step
                }
                _ => false,
            };
            if !agrees {
                let walk = match walked {
                    teacher::Outcome::Accepted => "accepted the text".to_string(),
                    teacher::Outcome::Rejected { reason, .. } => reason.clone(),
                };
                let step = match walked {
                    teacher::Outcome::Rejected { step, .. } => *step,
                    teacher::Outcome::Accepted => case.tokens.len(),
                };
                let text: Vec<u8> = case.tokens[..step.min(case.tokens.len())]
                    .iter()
                    .flat_map(|&t| case.vocab.token_bytes(t).unwrap_or_default())
                    .copied()
                    .collect();
                let at = At {
                    case,
                    step,
                    text: &text,
                };
                return Err(at.disagreement(DisagreementKind::Walk {
                    walk,
                    outcome: report.outcome,
                }));
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
            return Err(at.disagreement(DisagreementKind::Expectation {
                expected: case.expect,
                outcome: report.outcome,
                refusal: self.refusal,
            }));
        }
        Ok(report)
    }
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

/// The first byte of the text that cannot continue it, for a token `t` refused after the text
/// of `matcher` (`prefix_len` bytes long): its bytes accepted one by one. `None` when every
/// byte is accepted, which would make the token-wise refusal wrong.
fn first_failing_byte(
    matcher: &Matcher,
    vocab: &Vocabulary,
    t: TokenId,
    prefix_len: usize,
) -> Option<usize> {
    let bytes = vocab.token_bytes(t)?;
    let mut m = matcher.fork();
    for (i, &b) in bytes.iter().enumerate() {
        if m.accept_bytes(&[b]).is_err() {
            return Some(prefix_len + i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use munch_glr::mask::{MaskCache, MaskMut, Masker, Oracle};
    use munch_glr::parser::{Parser, ParserConfig};

    use super::super::{synthetic, TokenizerRef};
    use super::*;

    /// The runner's checks on raw maskers, walked by hand: how the tests put a deliberately wrong
    /// masker in front of the checker (a [`Compiled`] only holds munch's own maskers).
    fn run_raw(
        case: &Case,
        maskers: &[&dyn Masker],
        oracle_every: usize,
    ) -> Result<CaseReport, Disagreement> {
        walk_raw(case, maskers, oracle_every).finish(None)
    }

    /// The checker after a walk of `maskers` along the case.
    fn walk_raw<'a>(case: &'a Case, maskers: &[&dyn Masker], oracle_every: usize) -> Checker<'a> {
        let names = maskers.iter().map(|m| m.name().to_string()).collect();
        let mut checker = Checker::new(case, names, oracle_every);
        let mut caches: Vec<MaskCache> = maskers.iter().map(|m| m.create_cache()).collect();
        let mut masks: Vec<TokenMask> = maskers
            .iter()
            .map(|_| TokenMask::new(case.vocab.len()))
            .collect();
        let mut state = ParserState::new(Arc::clone(&case.parser));
        for step in 0..=case.tokens.len() {
            for ((m, cache), mask) in maskers.iter().zip(&mut caches).zip(&mut masks) {
                m.fill_mask(cache, &state, mask);
            }
            checker.step(&masks, Duration::ZERO);
            let Some(&t) = case.tokens.get(step) else {
                break;
            };
            if checker.done() || state.commit_token(&case.vocab, t).is_err() {
                break;
            }
        }
        checker
    }

    /// A compiled masker of `kind` for the case.
    fn compiled(c: &Case, kind: MaskerKind) -> Compiled {
        oracle_of(c)
            .with_masker(&Config::new().masker(kind).fallback(None))
            .unwrap()
    }

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
        let vocab = synthetic("bytes").unwrap();
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
        let every: Vec<Compiled> = MaskerKind::ALL.iter().map(|&k| compiled(&c, k)).collect();
        let report = run(&c, &every, 1).unwrap();
        assert_eq!(report.outcome, Outcome::Accepted);
        assert_eq!(report.steps, 5);
        assert_eq!(report.oracle_steps, 5);
        assert!(report.spot_checks >= 5 * SPOT_CHECKS);
        let names: Vec<&str> = MaskerKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(report.maskers, names);

        let c = case(SUM, "1+2+", Expect::Reject { at_byte: Some(4) });
        let oracle = [oracle_of(&c)];
        assert_eq!(run(&c, &oracle, 2).unwrap().outcome, Outcome::Incomplete);

        let c = case(SUM, "12+x", Expect::Reject { at_byte: Some(3) });
        let report = run(&c, &[oracle_of(&c)], 2).unwrap();
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
        let e = run_raw(&c, &[&liar], 1000).unwrap_err();
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
        let e = run_raw(&c, &[&liar], 1).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token, *check), (2, plus, "oracle"));
        assert!(e.to_string().contains("contract"), "{e}");

        let honest = Oracle::new(Arc::clone(&c.vocab));
        let e = run_raw(&c, &[&honest, &liar], 1000).unwrap_err();
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
        let e = run_raw(&c, &[&liar], 1).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token, *check), (3, c.vocab.eos()[0], "oracle"));
        // Without the oracle there, the end-of-sequence check finds it (or a spot check that
        // happens to pick it first).
        let e = run_raw(&c, &[&liar], 1000).unwrap_err();
        let DisagreementKind::Token { token, check, .. } = &*e.kind else {
            panic!("{e}")
        };
        assert_eq!((e.step, *token), (3, c.vocab.eos()[0]));
        assert!(["end of sequence", "spot check"].contains(check), "{e}");
        assert!(e.to_string().contains("(special)"), "{e}");
    }

    #[test]
    fn a_walk_that_ends_elsewhere_than_the_contract_is_caught() {
        let c = case(SUM, "1+23", Expect::Accept);
        let oracle = Oracle::new(Arc::clone(&c.vocab));
        let refused = teacher::Outcome::Rejected {
            step: 2,
            reason: "step 2: token 50 cannot be accepted".to_string(),
        };
        let e = walk_raw(&c, &[&oracle], 1)
            .finish(Some(&refused))
            .unwrap_err();
        assert!(matches!(*e.kind, DisagreementKind::Walk { .. }), "{e}");
        assert_eq!((e.step, e.before.as_slice()), (2, &b"1+"[..]));
        assert!(
            e.to_string()
                .contains("by the contract the text was accepted"),
            "{e}"
        );

        let c = case(SUM, "1+", Expect::Reject { at_byte: None });
        let accepted = teacher::Outcome::Accepted;
        let e = walk_raw(&c, &[&oracle], 1)
            .finish(Some(&accepted))
            .unwrap_err();
        assert!(matches!(*e.kind, DisagreementKind::Walk { .. }), "{e}");
        assert!(walk_raw(&c, &[&oracle], 1)
            .finish(Some(&teacher::Outcome::Rejected {
                step: 2,
                reason: "the text ends where the grammar does not accept".to_string()
            }))
            .is_ok());
    }

    #[test]
    fn unmet_expectations_fail() {
        let oracle_for = |c: &Case| oracle_of(c);
        let c = case(SUM, "1+", Expect::Accept);
        let e = run(&c, &[oracle_for(&c)], 1).unwrap_err();
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
        let e = run(&c, &[oracle_for(&c)], 1).unwrap_err();
        assert!(e.to_string().contains("expected reject"), "{e}");
        let c = case(SUM, "1++1", Expect::Reject { at_byte: Some(2) });
        assert!(run(&c, &[oracle_for(&c)], 1).is_ok());
        let c = case(SUM, "1++1", Expect::Reject { at_byte: Some(1) });
        let e = run(&c, &[oracle_for(&c)], 1).unwrap_err();
        assert!(e.to_string().contains("first failing byte 2"), "{e}");
        let c = case(SUM, "1++1", Expect::Any);
        assert!(run(&c, &[oracle_for(&c)], 1).is_ok());
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
