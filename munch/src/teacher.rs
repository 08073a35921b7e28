//! Teacher forcing: a known token sequence walked through one or more matchers in step, with
//! every mask and its time handed to the caller. `munch trace`, `munch demo`, the conformance
//! suite and the benchmarks all walk texts this way; this is the one loop they share.
//!
//! At step `i` (0 before the first token; a sequence of `n` tokens has `n + 1` steps) every
//! matcher fills its mask (timed), the caller's visitor sees the masks, and then token `i` must
//! be allowed by every mask and accepted by every matcher. At the end, the text must be a
//! sentence.

use std::time::Instant;

use munch_glr::mask::TokenMask;
use munch_vocab::{TokenId, Vocabulary};

use crate::compiled::Compiled;
use crate::matcher::Matcher;

/// What a visitor sees at one step.
pub struct Step<'a> {
    /// The step: 0 before the first token.
    pub index: usize,
    /// Each matcher's mask at this step, in the order of the compiled grammars.
    pub masks: &'a [TokenMask],
    /// Each mask's time, in nanoseconds.
    pub mask_ns: &'a [u64],
    /// The time the first matcher took to accept the previous token (`None` at step 0).
    pub accept_ns: Option<u64>,
    /// The first matcher (its state is this step's: the text of the tokens before it).
    pub matcher: &'a Matcher,
    /// The token forced next (`None` at the last step).
    pub next: Option<u32>,
}

/// How a forced sequence ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every token was allowed by every mask and accepted, and the text is a sentence.
    Accepted,
    /// Where and why not.
    Rejected {
        /// The step of the token refused (the last step when the end is not a sentence).
        step: usize,
        /// Why, for a person.
        reason: String,
    },
}

/// Matchers of one or more compiled grammars (normally one grammar with several maskers), walked
/// in step.
pub struct Teacher {
    matchers: Vec<Matcher>,
    names: Vec<String>,
    masks: Vec<TokenMask>,
    mask_ns: Vec<u64>,
}

impl Teacher {
    /// A teacher over a matcher of each of `compiled` (all over the same vocabulary).
    pub fn new(compiled: &[Compiled]) -> Teacher {
        Teacher {
            matchers: compiled.iter().map(Compiled::matcher).collect(),
            // The masker's own name: two builds of one kind (the wda, eager and on demand)
            // stay apart.
            names: compiled
                .iter()
                .map(|c| c.masker().name().to_string())
                .collect(),
            masks: compiled
                .iter()
                .map(|c| TokenMask::new(c.vocabulary().len()))
                .collect(),
            mask_ns: vec![0; compiled.len()],
        }
    }

    /// Forces `tokens` from the start of the text, calling `visit` at every step.
    pub fn run(&mut self, tokens: &[u32], mut visit: impl FnMut(&Step<'_>)) -> Outcome {
        self.matchers.iter_mut().for_each(Matcher::reset);
        let mut accept_ns = None;
        for index in 0..=tokens.len() {
            for ((m, mask), ns) in self
                .matchers
                .iter_mut()
                .zip(&mut self.masks)
                .zip(&mut self.mask_ns)
            {
                let at = Instant::now();
                m.fill_next_token_mask(mask)
                    .expect("each mask is over its matcher's vocabulary");
                *ns = at.elapsed().as_nanos() as u64;
            }
            let next = tokens.get(index).copied();
            if let Some(first) = self.matchers.first() {
                visit(&Step {
                    index,
                    masks: &self.masks,
                    mask_ns: &self.mask_ns,
                    accept_ns,
                    matcher: first,
                    next,
                });
            }
            let Some(token) = next else {
                break;
            };
            let refusers: Vec<&str> = self
                .masks
                .iter()
                .zip(&self.names)
                .filter(|(m, _)| !m.contains(TokenId::from(token)))
                .map(|(_, n)| n.as_str())
                .collect();
            let mut failed = None;
            for (i, m) in self.matchers.iter_mut().enumerate() {
                let at = Instant::now();
                let accepted = m.accept_token(token);
                if i == 0 {
                    accept_ns = Some(at.elapsed().as_nanos() as u64);
                }
                if let Err(e) = accepted {
                    failed.get_or_insert(e);
                }
            }
            let shown = self.token_text(token);
            let reason = match failed {
                None if refusers.is_empty() => continue,
                None => format!(
                    "token {token} {shown:?} is masked out by {} although it is accepted",
                    refusers.join(", ")
                ),
                Some(e) => {
                    let masked = if refusers.len() == self.matchers.len() {
                        "masked out".to_string()
                    } else if refusers.is_empty() {
                        "allowed by every mask".to_string()
                    } else {
                        format!("masked out by {}", refusers.join(", "))
                    };
                    format!("token {token} {shown:?} ({masked}) cannot be accepted: {e}")
                }
            };
            return Outcome::Rejected {
                step: index,
                reason: format!("step {index}: {reason}"),
            };
        }
        match self.matchers.first() {
            Some(m) if !m.is_accepting() => Outcome::Rejected {
                step: tokens.len(),
                reason: format!(
                    "the text ends after {} tokens where the grammar does not accept",
                    tokens.len()
                ),
            },
            _ => Outcome::Accepted,
        }
    }

    /// The maskers' names, in the order of the masks.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A token's bytes as a (lossy) string, or a special token's name.
    pub fn token_text(&self, token: u32) -> String {
        match self.matchers.first() {
            Some(m) => token_text(m.compiled().vocabulary(), token),
            None => String::new(),
        }
    }
}

/// Token `token` of `vocab` for a person: its bytes as a (lossy) string, or a special token's
/// name, or `<special ID>`.
pub fn token_text(vocab: &Vocabulary, token: u32) -> String {
    let id = TokenId::from(token);
    match vocab.token_bytes(id) {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => vocab
            .special_name(id)
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("<special {token}>"), str::to_owned),
    }
}
