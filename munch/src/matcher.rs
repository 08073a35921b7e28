//! [`Matcher`]: one sequence's constraint, the object an inference engine calls at every step.
//!
//! A matcher owns its parser state (the text accepted so far) and its masker's scratch; the
//! compiled grammar it reads is shared. Its calls are the ones serving engines make:
//!
//! - [`Matcher::fill_next_token_bitmask`] writes one row of the engine's `[batch, ceil(V/32)]`
//!   `int32` bitmask (bit `t % 32` of word `t / 32` set iff token `t` is allowed; words past the
//!   vocabulary, up to the model's padded width, are zeroed);
//! - [`Matcher::accept_token`] advances by the sampled token; [`Matcher::validate_tokens`]
//!   checks a speculative draft without advancing, and [`Matcher::rollback`] undoes accepted
//!   tokens (to any depth), so a rejected draft costs nothing;
//! - stop tokens (the vocabulary's EOS tokens unless the engine names others) are allowed
//!   exactly where the text so far is a sentence, and accepting one terminates the matcher;
//! - [`Matcher::forced_bytes`] gives the bytes every continuation starts with (jump-forward).
//!
//! Every refused call leaves the matcher as it was and says why in a [`MatcherError`]. Token
//! ids arrive as `u32`, as engines hold them, and are checked against the vocabulary; a matcher
//! can never be handed a parser state of another grammar, since it owns its own.

use std::sync::Arc;

use munch_glr::mask::{MaskCache, MaskMut, TokenMask};
use munch_glr::parser::ParserState;
use munch_vocab::TokenId;

use crate::compiled::Compiled;
use crate::error::{MatcherError, MatcherErrorKind};

/// The most bytes [`Matcher::forced_bytes`] returns at once (each costs a few commits; an
/// engine asks again after accepting them).
pub const MAX_FORCED_BYTES: usize = 4096;

/// One sequence's constraint: its text so far under a [`Compiled`] grammar.
///
/// `Send`: a batch fills many matchers on a thread pool ([`crate::batch`]). Make one with
/// [`Compiled::matcher`] or [`Matcher::with_stop_tokens`].
pub struct Matcher {
    compiled: Compiled,
    state: ParserState,
    /// The state before any text, for [`Matcher::reset`].
    start: ParserState,
    cache: MaskCache,
    stop: Stop,
    terminated: bool,
}

/// The stop tokens: sorted, distinct ids; `default` when they are the vocabulary's EOS tokens,
/// which every masker already sets exactly where the text may end.
#[derive(Clone)]
struct Stop {
    ids: Arc<[TokenId]>,
    default: bool,
}

impl Stop {
    fn contains(&self, t: TokenId) -> bool {
        self.ids.binary_search(&t).is_ok()
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("compiled", &self.compiled)
            .field("accepted", &self.accepted_len())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}

impl Drop for Matcher {
    fn drop(&mut self) {
        let cache = std::mem::replace(&mut self.cache, MaskCache::new(()));
        self.compiled.give_cache(cache);
    }
}

impl Matcher {
    /// A matcher at the start of the text that stops at the vocabulary's EOS tokens.
    pub fn new(compiled: &Compiled) -> Matcher {
        let ids: Arc<[TokenId]> = compiled.vocabulary().eos().into();
        Matcher::with_stop(compiled, Stop { ids, default: true })
    }

    /// A matcher that stops at `stop_tokens` instead of the vocabulary's EOS tokens (several
    /// allowed, none allowed: then the text never ends). A stop token is allowed exactly where
    /// the text so far is a sentence, and is never read as text; the vocabulary's EOS tokens
    /// that are not listed are never allowed.
    pub fn with_stop_tokens(
        compiled: &Compiled,
        stop_tokens: &[u32],
    ) -> Result<Matcher, MatcherError> {
        let mut ids = stop_tokens
            .iter()
            .map(|&t| check_token(compiled, t))
            .collect::<Result<Vec<_>, _>>()?;
        ids.sort_unstable();
        ids.dedup();
        let default = ids == compiled.vocabulary().eos();
        Ok(Matcher::with_stop(
            compiled,
            Stop {
                ids: ids.into(),
                default,
            },
        ))
    }

    fn with_stop(compiled: &Compiled, stop: Stop) -> Matcher {
        let start = ParserState::new(Arc::clone(compiled.parser()));
        Matcher {
            cache: compiled.take_cache(),
            state: start.clone(),
            start,
            compiled: compiled.clone(),
            stop,
            terminated: false,
        }
    }

    /// The compiled grammar this matcher reads.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The parser state (the text accepted so far), for tools that look inside.
    pub fn state(&self) -> &ParserState {
        &self.state
    }

    /// The stop tokens.
    pub fn stop_tokens(&self) -> impl Iterator<Item = u32> + '_ {
        self.stop.ids.iter().map(|t| t.as_u32())
    }

    /// Writes the allowed next tokens into `row`, one row of the engine's bitmask: bit `t % 32`
    /// of word `t / 32` is set iff token `t` may come next. `row` needs at least
    /// [`Compiled::bitmask_words`] words; words past those (a model's vocabulary padded past the
    /// tokenizer's) are zeroed. After termination only the stop tokens are set, so that a
    /// finished sequence in a batch keeps producing a stop token.
    pub fn fill_next_token_bitmask(&mut self, row: &mut [u32]) -> Result<(), MatcherError> {
        let needed = self.compiled.bitmask_words();
        if row.len() < needed {
            return Err(MatcherError::new(MatcherErrorKind::BitmaskTooShort {
                words: row.len(),
                needed,
            }));
        }
        let (words, padding) = row.split_at_mut(needed);
        padding.fill(0);
        let len = self.compiled.vocabulary().len();
        let mask = MaskMut::new(words, len).expect("`needed` words hold the vocabulary");
        self.fill(mask);
        Ok(())
    }

    /// [`Matcher::fill_next_token_bitmask`] into an owned mask over the vocabulary.
    pub fn fill_next_token_mask(&mut self, mask: &mut TokenMask) -> Result<(), MatcherError> {
        let needed = self.compiled.bitmask_words();
        if mask.len() != self.compiled.vocabulary().len() {
            return Err(MatcherError::new(MatcherErrorKind::BitmaskTooShort {
                words: mask.words().len(),
                needed,
            }));
        }
        self.fill(mask.as_mut());
        Ok(())
    }

    /// The allowed next tokens in a new mask (allocates: engines fill their own rows).
    pub fn next_token_mask(&mut self) -> TokenMask {
        let mut mask = TokenMask::new(self.compiled.vocabulary().len());
        self.fill(mask.as_mut());
        mask
    }

    fn fill(&mut self, mut mask: MaskMut<'_>) {
        if self.terminated {
            mask.clear();
            self.stop.ids.iter().for_each(|&t| mask.insert(t));
            return;
        }
        self.compiled
            .masker()
            .fill_into(&mut self.cache, &self.state, mask.reborrow());
        if !self.stop.default {
            // The masker set the vocabulary's EOS tokens; the engine's stop tokens replace them.
            for &t in self.compiled.vocabulary().eos() {
                mask.remove(t);
            }
            let accepting = self.state.is_accepting();
            for &t in self.stop.ids.iter() {
                if accepting {
                    mask.insert(t);
                } else {
                    mask.remove(t);
                }
            }
        }
    }

    /// Accepts `token` as the next token: its text extends the text so far, or, for a stop
    /// token where the text is a sentence, the matcher terminates. Refused (the matcher
    /// unchanged) iff the token is not in the mask [`Matcher::fill_next_token_bitmask`] writes.
    pub fn accept_token(&mut self, token: u32) -> Result<(), MatcherError> {
        if self.terminated {
            return Err(MatcherError::new(MatcherErrorKind::Terminated));
        }
        let id = check_token(&self.compiled, token)?;
        if self.stop.contains(id) {
            if !self.state.is_accepting() {
                return Err(MatcherError::new(MatcherErrorKind::Rejected {
                    token: Some(id),
                    reason: "a stop token where the text so far is not a sentence".to_string(),
                }));
            }
            self.terminated = true;
            return Ok(());
        }
        self.state
            .commit_token(self.compiled.vocabulary(), id)
            .map_err(|e| MatcherError::from_commit(Some(id), e))
    }

    /// Accepts `tokens` one after another; all or none (on a refusal the matcher is as it was
    /// before the call). [`Matcher::validate_tokens`] says how many would be accepted.
    pub fn accept_tokens(&mut self, tokens: &[u32]) -> Result<(), MatcherError> {
        for (i, &t) in tokens.iter().enumerate() {
            if let Err(e) = self.accept_token(t) {
                self.rollback(i)
                    .expect("the tokens of this call were accepted");
                return Err(e);
            }
        }
        Ok(())
    }

    /// Accepts `bytes` as text (one step for [`Matcher::rollback`]), whatever tokens would
    /// spell them: for jump-forward text and prompts written by the engine.
    pub fn accept_bytes(&mut self, bytes: &[u8]) -> Result<(), MatcherError> {
        if self.terminated {
            return Err(MatcherError::new(MatcherErrorKind::Terminated));
        }
        self.state
            .commit_bytes(bytes)
            .map_err(|e| MatcherError::from_commit(None, e))
    }

    /// [`Matcher::accept_bytes`] of a string.
    pub fn accept_string(&mut self, text: &str) -> Result<(), MatcherError> {
        self.accept_bytes(text.as_bytes())
    }

    /// How many of `tokens`, from the first, [`Matcher::accept_tokens`] would accept, without
    /// accepting any: a speculative draft's accepted length. A stop token ends the count (it is
    /// counted when allowed; nothing after it is).
    pub fn validate_tokens(&self, tokens: &[u32]) -> usize {
        if self.terminated {
            return 0;
        }
        let vocab = self.compiled.vocabulary();
        let mut state = self.state.without_history();
        for (i, &t) in tokens.iter().enumerate() {
            let Ok(id) = check_token(&self.compiled, t) else {
                return i;
            };
            if self.stop.contains(id) {
                return i + usize::from(state.is_accepting());
            }
            if state.commit_token(vocab, id).is_err() {
                return i;
            }
        }
        tokens.len()
    }

    /// Undoes the last `n` accepted steps (tokens, stop token included, and
    /// [`Matcher::accept_bytes`] calls), exactly: the matcher is as it was before them. Steps
    /// older than the parser's `max_rollback` ([`munch_glr::parser::ParserConfig`], 4,096 by
    /// default) may be forgotten: rolling back to them is
    /// [`MatcherErrorKind::RollbackPastLimit`].
    pub fn rollback(&mut self, n: usize) -> Result<(), MatcherError> {
        let available = self.accepted_len();
        if n > available {
            return Err(MatcherError::new(MatcherErrorKind::RollbackTooFar {
                requested: n,
                available,
            }));
        }
        let terminated = usize::from(self.terminated);
        if n > self.state.rollback_len() + terminated {
            // The parser keeps the last `max_rollback` commits, not every one.
            return Err(MatcherError::new(MatcherErrorKind::RollbackPastLimit {
                requested: n,
                available: self.state.rollback_len() + terminated,
                limit: self.state.parser().max_rollback(),
            }));
        }
        let mut n = n;
        if self.terminated && n > 0 {
            self.terminated = false;
            n -= 1;
        }
        self.state
            .rollback(n)
            .expect("the state keeps the steps checked above");
        Ok(())
    }

    /// Back to the start of the text (the stop tokens stay).
    pub fn reset(&mut self) {
        self.state = self.start.clone();
        self.terminated = false;
    }

    /// An independent copy at the same text (for beam search or parallel sampling), with its
    /// own scratch; both can be rolled back to the start.
    pub fn fork(&self) -> Matcher {
        Matcher {
            compiled: self.compiled.clone(),
            state: self.state.clone(),
            start: self.start.clone(),
            cache: self.compiled.take_cache(),
            stop: self.stop.clone(),
            terminated: self.terminated,
        }
    }

    /// The steps accepted since the start (or the last reset): tokens and byte strings, the
    /// stop token included. [`Matcher::rollback`] can undo all of them up to
    /// [`crate::Config::max_rollback`].
    pub fn accepted_len(&self) -> usize {
        self.state.commit_len() + usize::from(self.terminated)
    }

    /// Whether the text so far is a sentence of the grammar (a stop token is allowed now).
    pub fn is_accepting(&self) -> bool {
        self.state.is_accepting()
    }

    /// Whether a stop token was accepted.
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// The bytes every continuation of the text starts with (at most [`MAX_FORCED_BYTES`]):
    /// while the text cannot end here and exactly one byte can come next, that byte. Empty
    /// after termination.
    ///
    /// These are bytes, not tokens. An engine that jumps forward appends them by tokenizing
    /// them, and that tokenization can differ from what the tokenizer gives for the whole text:
    /// the forced bytes may merge with the end of the last accepted token (`{` then forced `"`
    /// is one token `{"` in many vocabularies) and with whatever the model writes after them.
    /// To keep the model's view canonical, re-encode the text from the last token that is
    /// certainly complete (roll back that token with [`Matcher::rollback`], encode its bytes
    /// and the forced bytes together, accept the new tokens but the last one, and let the model
    /// continue from there) — or accept the forced text as it is with
    /// [`Matcher::accept_bytes`] and tokenize it as the engine likes: the grammar does not care
    /// how the text is split.
    pub fn forced_bytes(&self) -> Vec<u8> {
        let mut forced = Vec::new();
        if self.terminated {
            return forced;
        }
        let can_stop = !self.stop.ids.is_empty();
        let lexer = self.compiled.parser().lexer();
        let mut state = self.state.without_history();
        while forced.len() < MAX_FORCED_BYTES {
            if can_stop && state.is_accepting() {
                break;
            }
            // Only bytes some head's lexer can read can continue the text: try those.
            let mut only: Option<(u8, ParserState)> = None;
            let mut several = false;
            for b in 0..=255u8 {
                if !state
                    .heads()
                    .any(|h| !lexer.is_dead(lexer.next(h.lex_state(), b)))
                {
                    continue;
                }
                let mut next = state.clone();
                if next.commit_bytes(&[b]).is_ok() {
                    if only.is_some() {
                        several = true;
                        break;
                    }
                    only = Some((b, next));
                }
            }
            match only {
                Some((b, next)) if !several => {
                    forced.push(b);
                    state = next;
                }
                _ => break,
            }
        }
        forced
    }

    /// [`Matcher::forced_bytes`] up to the last whole UTF-8 character.
    pub fn forced_string(&self) -> String {
        let bytes = self.forced_bytes();
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) => e.valid_up_to(),
        };
        String::from_utf8_lossy(&bytes[..valid]).into_owned()
    }
}

/// `token` as an id of `compiled`'s vocabulary.
fn check_token(compiled: &Compiled, token: u32) -> Result<TokenId, MatcherError> {
    let vocab_len = compiled.vocabulary().len();
    if (token as usize) < vocab_len {
        Ok(TokenId::from(token))
    } else {
        Err(MatcherError::new(MatcherErrorKind::UnknownToken {
            token,
            vocab_len,
        }))
    }
}

// Matchers move between a batch's threads.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Matcher>();
};
