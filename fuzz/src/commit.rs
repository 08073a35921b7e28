//! The `commit` target: the GLR parser's acceptance against the Earley reference, and random
//! commit / rollback / clone sequences against re-parsing.
//!
//! A case is a random [`GrammarSpec`], an input (mostly a random sentence of the grammar spelled
//! out and perhaps mutated, else random pieces) and a list of [`CommitOp`]s. The check:
//!
//! 1. **Terminals.** Without the lexer: a sentence drawn from the grammar (seeded by the
//!    input) and a one-terminal edit of it, fed to [`TerminalParser`]; after every prefix its
//!    liveness, acceptance and `can_shift` of each terminal equal Earley's verdicts.
//! 2. **Prefixes.** Committing the input byte by byte, after every prefix `w`:
//!    [`ParserState::is_accepting`] equals the reference (the reference lexer's lexemes, every
//!    choice among tied terminals, Earley). Once a commit is refused, no longer prefix may be a
//!    sentence (a refused commit means no continuation exists). Committing the whole input in
//!    one call succeeds exactly when every byte-by-byte commit did, and agrees on acceptance.
//! 3. **Operations**, as a user makes them: through a [`Matcher`] over a vocabulary of the 256
//!    single bytes ([`Matcher::accept_bytes`], [`Matcher::rollback`], [`Matcher::fork`],
//!    [`Matcher::validate_tokens`]). A model keeps the accepted chunks; after every operation
//!    the matcher agrees with a fresh one that accepts the model's text in one call: as many
//!    accepted steps as the model, live, same acceptance (also checked against the reference),
//!    and the same answer to accepting each probe byte; a fresh matcher validates the text's
//!    bytes as tokens. Before a chunk is accepted, `validate_tokens` on its bytes counts them all
//!    exactly when `accept_bytes` takes the chunk. A refused chunk and an over-long rollback
//!    leave the matcher as it was; a saved fork, restored after the original went on, still
//!    agrees with its own text.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use arbitrary::{Arbitrary, Result, Unstructured};
use munch::{Compiled, MaskerKind, Matcher, MatcherError, MatcherErrorKind};
use munch_glr::parser::{CommitErrorKind, Parser, ParserState, ShiftCache, TerminalParser};
use munch_lexer::TerminalId;
use munch_testkit::earley::Earley;
use munch_testkit::generate::{GenerateConfig, Generator, SeededRng};
use munch_vocab::Vocabulary;

use crate::grammar::{Built, GrammarSpec};
use crate::lexer::arbitrary_input;
use crate::re::PIECES;
use crate::repro::{repro_struct, repro_variant, test_text, Bytes};

/// Longest input, in bytes.
pub const MAX_INPUT: usize = 24;

/// One operation on the parser state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommitOp {
    /// Commit the next `n % 5` bytes of the input (possibly none) as one call.
    Commit(u8),
    /// Roll back `n % (commit_len + 2)` commits (one more than there are is refused).
    Rollback(u8),
    /// Keep a clone of the state (at most four are kept).
    Save,
    /// Replace the state by saved clone `n % saved`.
    Restore(u8),
}

/// One `commit` case.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CommitCase {
    /// The grammar.
    pub grammar: GrammarSpec,
    /// The text.
    pub input: Bytes,
    /// What to do with it after the prefix check.
    pub ops: Vec<CommitOp>,
}

/// Random pieces inserted or substituted into a sampled sentence.
fn mutate(u: &mut Unstructured<'_>, text: &mut Vec<u8>) -> Result<()> {
    for _ in 0..u.int_in_range(0..=2)? {
        let at = u.int_in_range(0..=text.len())?;
        match u.int_in_range(0..=2)? {
            0 => {
                let piece = u.choose(PIECES)?;
                text.splice(at..at, piece.iter().copied());
            }
            1 if at < text.len() => {
                text.remove(at);
            }
            _ => {
                let piece = u.choose(PIECES)?;
                let end = (at + piece.len()).min(text.len());
                text.splice(at..end, piece.iter().copied());
            }
        }
    }
    Ok(())
}

/// A text for `grammar`: mostly a sampled sentence, perhaps mutated, else random pieces.
pub fn arbitrary_text(
    u: &mut Unstructured<'_>,
    grammar: &GrammarSpec,
    built: Option<&Built>,
    max: usize,
) -> Result<Vec<u8>> {
    let mut text = match built {
        Some(built) if u.ratio(3, 4)? => {
            let seed = u64::arbitrary(u)?;
            match grammar.sample_text(built, seed, 8) {
                Some(mut text) => {
                    if u.ratio(1, 3)? {
                        mutate(u, &mut text)?;
                    }
                    text
                }
                None => arbitrary_input(u, 10)?,
            }
        }
        _ => arbitrary_input(u, 10)?,
    };
    text.truncate(max);
    Ok(text)
}

impl<'a> Arbitrary<'a> for CommitCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let grammar = GrammarSpec::arbitrary_sized(u, 4, 4)?;
        let built = grammar.build().ok();
        let input = arbitrary_text(u, &grammar, built.as_ref(), MAX_INPUT)?;
        let n = u.int_in_range(0..=12)?;
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            ops.push(match u.int_in_range(0..=9)? {
                0..=4 => CommitOp::Commit(u.arbitrary()?),
                5 | 6 => CommitOp::Rollback(u.arbitrary()?),
                7 => CommitOp::Save,
                _ => CommitOp::Restore(u.arbitrary()?),
            });
        }
        Ok(CommitCase {
            grammar,
            input: Bytes(input),
            ops,
        })
    }
}

repro_variant!(CommitOp);

repro_struct!(CommitCase {
    grammar,
    input,
    ops
});

impl fmt::Debug for CommitCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut comment: Vec<String> = self.grammar.lark().lines().map(String::from).collect();
        comment.push(format!("input: {:?}", self.input));
        comment.push(format!("ops: {:?}", self.ops));
        f.write_str(&test_text(
            "commit_regression",
            "commit::check",
            self,
            &comment,
        ))
    }
}

/// Bytes committed alone after every operation: the first byte of every input piece.
const PROBES: &[u8] = b"abc \n\xc3\xe2\xf0x\x80\xff";

/// What can be observed of a state: live, accepting, and per probe byte whether committing it
/// succeeds and then accepts.
#[derive(Debug, PartialEq, Eq)]
struct Observation {
    live: bool,
    accepting: bool,
    probes: Vec<Option<bool>>,
}

/// `Err(None)`: a budget was hit, the case is inconclusive.
type Outcome<T> = std::result::Result<T, Option<String>>;

/// The vocabulary of the operations' matchers: token `b` is the byte `b`, token 256 is EOS.
fn bytes_vocabulary() -> Arc<Vocabulary> {
    static VOCAB: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    VOCAB.get_or_init(munch_testkit::vocab::bytes).clone()
}

/// The byte tokens of `bytes`.
fn byte_tokens(bytes: &[u8]) -> Vec<u32> {
    bytes.iter().map(|&b| u32::from(b)).collect()
}

/// Whether a matcher refused a call for a parser budget (the case is then inconclusive).
fn is_budget(e: &MatcherError) -> bool {
    matches!(e.kind(), MatcherErrorKind::Budget(_))
}

fn observe(matcher: &Matcher) -> Outcome<Observation> {
    let mut probes = Vec::with_capacity(PROBES.len());
    for &b in PROBES {
        let mut m = matcher.fork();
        probes.push(match m.accept_bytes(&[b]) {
            Ok(()) => Some(m.is_accepting()),
            Err(e) if is_budget(&e) => return Err(None),
            Err(_) => None,
        });
    }
    Ok(Observation {
        live: matcher.state().is_live(),
        accepting: matcher.is_accepting(),
        probes,
    })
}

struct Checker<'a> {
    built: &'a Built,
    earley: Earley<'a>,
    /// The grammar for the operations' matchers: the oracle over [`bytes_vocabulary`] (no mask
    /// is asked of it).
    compiled: Compiled,
    /// Reference verdicts by text.
    memo: HashMap<Vec<u8>, Option<bool>>,
}

impl Checker<'_> {
    fn parser(&self) -> &Arc<Parser> {
        &self.built.parser
    }

    /// The reference verdict on `text`; `Err(None)` when too ambiguous to decide.
    fn accepts(&mut self, text: &[u8]) -> Outcome<bool> {
        if let Some(&v) = self.memo.get(text) {
            return v.ok_or(None);
        }
        let v = self.built.reference_accepts(&self.earley, text);
        self.memo.insert(text.to_vec(), v);
        v.ok_or(None)
    }

    /// A fresh state with `text` committed in one call.
    fn reparse(&self, text: &[u8]) -> Outcome<std::result::Result<ParserState, String>> {
        let mut s = ParserState::new(self.parser().clone());
        match s.commit_bytes(text) {
            Ok(()) => Ok(Ok(s)),
            Err(e) if matches!(e.kind(), CommitErrorKind::Budget { .. }) => Err(None),
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    /// A fresh matcher that accepted `text` in one call.
    fn replay(&self, text: &[u8]) -> Outcome<std::result::Result<Matcher, String>> {
        let mut m = self.compiled.matcher();
        match m.accept_bytes(text) {
            Ok(()) => Ok(Ok(m)),
            Err(e) if is_budget(&e) => Err(None),
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    /// How many of `bytes` a fork of `matcher` accepts as tokens, one by one.
    fn accept_one_by_one(matcher: &Matcher, bytes: &[u8]) -> Outcome<usize> {
        let mut m = matcher.fork();
        for (i, &b) in bytes.iter().enumerate() {
            match m.accept_token(u32::from(b)) {
                Ok(()) => {}
                Err(e) if is_budget(&e) => return Err(None),
                Err(_) => return Ok(i),
            }
        }
        Ok(bytes.len())
    }

    fn prefixes(&mut self, input: &[u8]) -> Outcome<()> {
        let accepted: Vec<bool> = (0..=input.len())
            .map(|i| self.accepts(&input[..i]))
            .collect::<Outcome<_>>()?;
        let mut state = ParserState::new(self.parser().clone());
        let mut dead_from = (!state.is_live()).then_some(0);
        for i in 0..=input.len() {
            if dead_from.is_some() {
                break;
            }
            if i > 0 {
                match state.commit_bytes(&input[i - 1..i]) {
                    Ok(()) => {}
                    Err(e) if matches!(e.kind(), CommitErrorKind::Budget { .. }) => {
                        return Err(None)
                    }
                    Err(_) => {
                        dead_from = Some(i);
                        break;
                    }
                }
            }
            if state.is_accepting() != accepted[i] {
                return Err(Some(format!(
                    "after {:?} (byte by byte): is_accepting is {}, the reference says {}",
                    Bytes(input[..i].to_vec()),
                    state.is_accepting(),
                    accepted[i]
                )));
            }
        }
        if let Some(d) = dead_from {
            if let Some(j) = (d..=input.len()).find(|&j| accepted[j]) {
                return Err(Some(format!(
                    "the commit of byte {} was refused (text {:?}), but the reference accepts \
                     the longer {:?}",
                    d.saturating_sub(1),
                    Bytes(input[..d].to_vec()),
                    Bytes(input[..j].to_vec())
                )));
            }
        }
        let whole = self.reparse(input)?;
        match (&whole, dead_from) {
            (Ok(s), None) => {
                if s.is_accepting() != accepted[input.len()] {
                    return Err(Some(format!(
                        "after committing {:?} in one call: is_accepting is {}, the reference \
                         says {}",
                        Bytes(input.to_vec()),
                        s.is_accepting(),
                        accepted[input.len()]
                    )));
                }
            }
            (Err(_), Some(_)) => {}
            (whole, dead) => {
                return Err(Some(format!(
                    "committing {:?} in one call gives {}, byte by byte {}",
                    Bytes(input.to_vec()),
                    match whole {
                        Ok(_) => "Ok".to_string(),
                        Err(e) => format!("Err({e})"),
                    },
                    match dead {
                        Some(0) => "no live state at the start".to_string(),
                        Some(d) => format!("a refusal at byte {}", d - 1),
                        None => "no refusal".to_string(),
                    }
                )))
            }
        }
        Ok(())
    }

    /// The matcher agrees with its model text.
    fn agrees(&mut self, matcher: &Matcher, chunks: &[Vec<u8>], what: &str) -> Outcome<()> {
        let text = chunks.concat();
        let fail = |m: String| Err(Some(format!("{what}: text {:?}: {m}", Bytes(text.clone()))));
        if matcher.accepted_len() != chunks.len() {
            return fail(format!(
                "the matcher accepted {} steps, the model has {} chunks",
                matcher.accepted_len(),
                chunks.len()
            ));
        }
        let fresh = match self.replay(&text)? {
            Ok(m) => m,
            Err(e) => return fail(format!("the matcher is live but a replay fails: {e}")),
        };
        let got = observe(matcher)?;
        let want = observe(&fresh)?;
        if got != want {
            return fail(format!(
                "the matcher shows {got:?}, a fresh replay of its text {want:?} (probes {:?})",
                Bytes(PROBES.to_vec())
            ));
        }
        if !got.live {
            return fail("the matcher is not live".into());
        }
        let accepted = self.accepts(&text)?;
        if got.accepting != accepted {
            return fail(format!(
                "is_accepting is {}, the reference says {accepted}",
                got.accepting
            ));
        }
        let valid = self.compiled.matcher().validate_tokens(&byte_tokens(&text));
        if valid != text.len() {
            // A budget met on the way makes the case inconclusive.
            let one_by_one = Self::accept_one_by_one(&self.compiled.matcher(), &text)?;
            return fail(format!(
                "a fresh matcher validates {valid} of the text's {} bytes as tokens \
                 ({one_by_one} accepted one by one)",
                text.len()
            ));
        }
        Ok(())
    }

    fn operations(&mut self, input: &[u8], ops: &[CommitOp]) -> Outcome<()> {
        let mut matcher = self.compiled.matcher();
        if !matcher.state().is_live() {
            return Ok(());
        }
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let mut saved: Vec<(Matcher, Vec<Vec<u8>>)> = Vec::new();
        let mut cursor = 0;
        for (i, &op) in ops.iter().enumerate() {
            let what = format!("op {i} ({op:?})");
            match op {
                CommitOp::Commit(n) => {
                    let end = (cursor + n as usize % 5).min(input.len());
                    let chunk = input[cursor..end].to_vec();
                    cursor = end;
                    let before = observe(&matcher)?;
                    let len = matcher.accepted_len();
                    let valid = matcher.validate_tokens(&byte_tokens(&chunk));
                    let accepted = matcher.accept_bytes(&chunk);
                    if accepted.as_ref().is_err_and(is_budget) {
                        return Err(None);
                    }
                    if accepted.is_ok() != (valid == chunk.len()) {
                        // Either the byte-wise commits and the one call disagree, or a budget
                        // stopped the byte-wise ones.
                        let one_by_one = Self::accept_one_by_one(
                            &self.replay(&chunks.concat())?.map_err(Some)?,
                            &chunk,
                        )?;
                        return Err(Some(format!(
                            "{what}: validate_tokens counts {valid} of the chunk {:?} ({one_by_one} \
                             accepted one by one), but accept_bytes gives {accepted:?}",
                            Bytes(chunk.clone())
                        )));
                    }
                    match accepted {
                        Ok(()) => chunks.push(chunk),
                        Err(e) => {
                            let after = observe(&matcher)?;
                            if after != before || matcher.accepted_len() != len {
                                return Err(Some(format!(
                                    "{what}: the refused chunk ({e}) changed the matcher: \
                                     {before:?} became {after:?}"
                                )));
                            }
                        }
                    }
                }
                CommitOp::Rollback(n) => {
                    let have = matcher.accepted_len();
                    let n = n as usize % (have + 2);
                    if n > have {
                        let before = observe(&matcher)?;
                        let got = matcher.rollback(n);
                        let refused = matches!(
                            got.as_ref().map_err(MatcherError::kind),
                            Err(MatcherErrorKind::RollbackTooFar { requested, available })
                                if *requested == n && *available == have
                        );
                        if !refused || observe(&matcher)? != before {
                            return Err(Some(format!(
                                "{what}: rolling back {n} of {have} gave {got:?} (or changed \
                                 the matcher)"
                            )));
                        }
                    } else {
                        if let Err(e) = matcher.rollback(n) {
                            return Err(Some(format!("{what}: rollback({n}) failed: {e}")));
                        }
                        chunks.truncate(chunks.len() - n);
                    }
                }
                CommitOp::Save => {
                    if saved.len() < 4 {
                        saved.push((matcher.fork(), chunks.clone()));
                    }
                }
                CommitOp::Restore(k) => {
                    if !saved.is_empty() {
                        let (m, c) = &saved[k as usize % saved.len()];
                        matcher = m.fork();
                        chunks = c.clone();
                    }
                }
            }
            self.agrees(&matcher, &chunks, &what)?;
        }
        Ok(())
    }
}

/// Whether [`terminal_level`] checks `can_shift` of ignored terminals. It was off while
/// `Parser::can_shift` shifted an ignored terminal that a rule uses, against its documentation
/// (`ignored_terminals_are_never_shifted` in `tests/regressions.rs`); on since the fix, so that
/// the fuzzer keeps watching it.
pub const CHECK_IGNORED_CAN_SHIFT: bool = true;

/// Terminal-level GLR against Earley, without any lexing: along `seq`, after every prefix
/// [`TerminalParser::is_live`] is whether Earley accepts the prefix or some terminal that is
/// not ignored extends it to a viable prefix (ignored terminals never reach the parser, so a
/// continuation that needs one does not count), `is_accepting` its acceptance, and
/// `can_shift(t)` for every terminal whether the prefix extended by `t` is viable (an ignored
/// terminal is never shifted, as [`Parser::can_shift`] documents); `shift` succeeds exactly on
/// viable extensions.
fn terminal_level(built: &Built, earley: &Earley<'_>, seq: &[TerminalId]) -> Outcome<()> {
    let p = &built.parser;
    let names = |s: &[TerminalId]| -> Vec<String> {
        s.iter().map(|t| format!("T{}", t.as_usize())).collect()
    };
    let mut tp = TerminalParser::new(p.clone());
    let mut cache = ShiftCache::new();
    for k in 0..=seq.len() {
        let prefix = &seq[..k];
        let v = earley.recognize(prefix);
        if tp.is_accepting() != v.accepts {
            return Err(Some(format!(
                "terminals {:?}: TerminalParser accepting {}, Earley accepts {}",
                names(prefix),
                tp.is_accepting(),
                v.accepts
            )));
        }
        if !v.viable_prefix {
            if tp.is_live() {
                return Err(Some(format!(
                    "terminals {:?}: TerminalParser is live, Earley says it is no viable prefix",
                    names(prefix)
                )));
            }
            return Ok(());
        }
        let mut goes_on = v.accepts;
        for t in (0..p.terminal_len()).map(TerminalId::from_usize) {
            let mut longer = prefix.to_vec();
            longer.push(t);
            let ignored = built.ignored[t.as_usize()];
            let want = !ignored && earley.recognize(&longer).viable_prefix;
            goes_on |= want;
            if ignored && !CHECK_IGNORED_CAN_SHIFT {
                continue;
            }
            if tp.can_shift(t, &mut cache) != want {
                return Err(Some(format!(
                    "terminals {:?}: can_shift(T{}) is {}, expected {want}{}",
                    names(prefix),
                    t.as_usize(),
                    !want,
                    if ignored { " (T is ignored)" } else { "" }
                )));
            }
        }
        if tp.is_live() != goes_on {
            return Err(Some(format!(
                "terminals {:?}: TerminalParser live {}, expected {goes_on} (Earley accepts {})",
                names(prefix),
                tp.is_live(),
                v.accepts
            )));
        }
        let Some(&t) = seq.get(k) else {
            return Ok(());
        };
        if built.ignored[t.as_usize()] {
            return Ok(());
        }
        let want = earley.recognize(&seq[..k + 1]).viable_prefix;
        match tp.shift(t) {
            Ok(()) if want => {}
            Err(e) if matches!(e.kind(), CommitErrorKind::Budget { .. }) => return Err(None),
            Err(_) if !want => return Ok(()),
            got => {
                return Err(Some(format!(
                "terminals {:?}: shift(T{}) gave {got:?}, Earley says the extension is {}viable",
                names(prefix),
                t.as_usize(),
                if want { "" } else { "not " }
            )))
            }
        }
    }
    Ok(())
}

/// The terminal strings [`terminal_level`] follows for an input: a sentence drawn with a seed
/// taken from the input, and the same sentence with one terminal replaced, dropped or
/// duplicated.
fn terminal_strings(built: &Built, input: &[u8]) -> Vec<Vec<TerminalId>> {
    // FNV-1a: a seed that follows the fuzzer's mutations of the input.
    let h = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let gen = Generator::new(&built.bnf);
    let config = GenerateConfig {
        max_depth: 6,
        max_len: 10,
    };
    let Some(sentence) = gen.sentence(&mut SeededRng::new(h), &config) else {
        return vec![];
    };
    let mut out = vec![sentence.clone()];
    if !sentence.is_empty() {
        let at = (h >> 8) as usize % sentence.len();
        let mut edited = sentence.clone();
        match (h >> 16) % 3 {
            0 => edited[at] = TerminalId::from_usize((h >> 24) as usize % built.ignored.len()),
            1 => {
                edited.remove(at);
            }
            _ => edited.insert(at, sentence[at]),
        }
        out.push(edited);
    }
    out
}

/// Runs the `commit` check; `Err` describes the first disagreement.
pub fn check(case: &CommitCase) -> std::result::Result<(), String> {
    let built = match case.grammar.build() {
        Ok(b) => b,
        Err(e) => return e.into_check(),
    };
    let config = crate::masks::config(MaskerKind::Oracle);
    let compiled = Compiled::from_parser(built.parser.clone(), bytes_vocabulary(), &config)
        .map_err(|e| format!("the oracle does not compile: {e}"))?;
    let mut checker = Checker {
        built: &built,
        earley: Earley::new(&built.bnf),
        compiled,
        memo: HashMap::new(),
    };
    let run = terminal_strings(&built, &case.input.0)
        .iter()
        .try_for_each(|seq| terminal_level(&built, &checker.earley, seq))
        .and_then(|()| checker.prefixes(&case.input.0))
        .and_then(|()| checker.operations(&case.input.0, &case.ops));
    match run {
        Ok(()) | Err(None) => Ok(()),
        Err(Some(m)) => Err(m),
    }
}
