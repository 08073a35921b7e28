//! The `artifacts` target: mutated weighted-automaton artifacts must load as a typed error or
//! as a masker that is still exact, never panic.
//!
//! A case is a [`MaskCase`] (grammar, vocabulary, token path) and a list of [`Edit`]s. The check
//! compiles the weighted-automaton masker ([`Compiled`], as [`masks::compiled`] does), saves it
//! with [`Compiled::save`], and then:
//!
//! - the unmodified artifact loads, and the loaded masker equals the oracle at every step of the
//!   path (walked by a matcher of the oracle; the loaded masker reads its state);
//! - the artifact does not load for another vocabulary (the last text token dropped) — a typed
//!   error;
//! - the edited artifact (edits at offsets modulo its length: bit flips, byte sets, inserts,
//!   removals, a truncation) either fails to load with a typed error, or is byte-identical to the
//!   original (edits that cancel out), or — only when the case also re-forges the SHA-256
//!   checksum after editing, which the documented format allows anyone to do — loads into a
//!   masker whose masks along the path are computed without panicking and stay inside the
//!   vocabulary. A corrupt file without a forged checksum that loads is a finding.

use std::fmt;
use std::sync::Arc;

use arbitrary::{Arbitrary, Result, Unstructured};
use munch::{Compiled, MaskerKind};
use munch_glr::mask::Masker;
use munch_masker_wda::WdaMasker;
use munch_vocab::TokenId;
use sha2::{Digest, Sha256};

use crate::masks::{self, MaskCase, MaskStep};
use crate::repro::{repro_struct, repro_variant, test_text};

/// Where the checksum sits in the documented artifact format: after the 8-byte magic and the
/// 4-byte version, 32 bytes of SHA-256 over everything after it.
const CHECKSUM_AT: usize = 12;
const CHECKSUM_END: usize = CHECKSUM_AT + 32;

/// One change to the saved bytes; offsets are taken modulo the current length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Arbitrary)]
pub enum Edit {
    /// Flips bit `bit % 8` of the byte at `at`.
    Flip {
        /// Offset.
        at: u32,
        /// Bit.
        bit: u8,
    },
    /// Sets the byte at `at`.
    Set {
        /// Offset.
        at: u32,
        /// New value.
        byte: u8,
    },
    /// Inserts a byte before `at`.
    Insert {
        /// Offset.
        at: u32,
        /// The byte.
        byte: u8,
    },
    /// Removes the byte at `at`.
    Remove(u32),
    /// Keeps the first `len` bytes.
    Truncate(u32),
}

/// One `artifacts` case.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ArtifactCase {
    /// Grammar, vocabulary and path.
    pub case: MaskCase,
    /// Changes to the saved artifact.
    pub edits: Vec<Edit>,
    /// Whether the checksum is recomputed after the edits.
    pub forge_checksum: bool,
}

impl<'a> Arbitrary<'a> for ArtifactCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let forge_checksum = u.arbitrary()?;
        let n = u.int_in_range(0..=4)?;
        let mut edits = Vec::with_capacity(n);
        for _ in 0..n {
            edits.push(u.arbitrary()?);
        }
        Ok(ArtifactCase {
            case: MaskCase::arbitrary(u)?,
            edits,
            forge_checksum,
        })
    }
}

/// The bytes after `edits`, with the checksum recomputed if `forge` and the header survived.
pub fn apply(bytes: &[u8], edits: &[Edit], forge: bool) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for &e in edits {
        let at = |at: u32, len: usize| if len == 0 { 0 } else { at as usize % len };
        match e {
            Edit::Flip { at: a, bit } if !out.is_empty() => {
                let i = at(a, out.len());
                out[i] ^= 1 << (bit % 8);
            }
            Edit::Set { at: a, byte } if !out.is_empty() => {
                let i = at(a, out.len());
                out[i] = byte;
            }
            Edit::Insert { at: a, byte } => {
                let i = at(a, out.len() + 1);
                out.insert(i, byte);
            }
            Edit::Remove(a) if !out.is_empty() => {
                let i = at(a, out.len());
                out.remove(i);
            }
            Edit::Truncate(len) => {
                let keep = at(len, out.len() + 1);
                out.truncate(keep);
            }
            _ => {}
        }
    }
    if forge && out.len() >= CHECKSUM_END {
        let digest = Sha256::digest(&out[CHECKSUM_END..]);
        out[CHECKSUM_AT..CHECKSUM_END].copy_from_slice(&digest);
    }
    out
}

/// Runs `masker` along the case's path, walked by a matcher of `oracle` (the masker reads the
/// matcher's state); with `exact`, each mask must equal the oracle's.
fn walk(
    case: &MaskCase,
    oracle: &Compiled,
    masker: &WdaMasker,
    exact: bool,
) -> std::result::Result<(), String> {
    let vocab = oracle.vocabulary();
    let mut matcher = oracle.matcher();
    let mut cache = masker.create_cache();
    let mut steps = case.steps.iter();
    loop {
        let want = matcher.next_token_mask();
        let got = masker.mask(&mut cache, matcher.state());
        if got.len() != vocab.len() || got.iter().any(|t| t.as_usize() >= vocab.len()) {
            return Err(format!(
                "after {} tokens: a mask outside the vocabulary",
                matcher.accepted_len()
            ));
        }
        if exact {
            if let Some(t) = got.first_difference(&want) {
                return Err(format!(
                    "after {} tokens: the loaded artifact {} token {t}, the oracle {}",
                    matcher.accepted_len(),
                    if got.contains(t) { "allows" } else { "forbids" },
                    if want.contains(t) {
                        "allows"
                    } else {
                        "forbids"
                    },
                ));
            }
        }
        let allowed: Vec<TokenId> = want
            .iter()
            .filter(|&t| vocab.token_bytes(t).is_some())
            .collect();
        match steps.next() {
            None => return Ok(()),
            Some(MaskStep::Choose(i)) => {
                if allowed.is_empty() {
                    return Ok(());
                }
                let t = allowed[*i as usize % allowed.len()];
                matcher
                    .accept_token(t.as_u32())
                    .map_err(|e| format!("the oracle allowed token {t}, the matcher says {e}"))?;
            }
            Some(MaskStep::Rollback(n)) => {
                let n = *n as usize % (matcher.accepted_len() + 1);
                matcher.rollback(n).map_err(|e| e.to_string())?;
            }
        }
    }
}

/// Runs the `artifacts` check; `Err` describes the finding.
pub fn check(c: &ArtifactCase) -> std::result::Result<(), String> {
    let built = match c.case.grammar.build() {
        Ok(b) => b,
        Err(e) => return e.into_check(),
    };
    let vocab = Arc::new(c.case.vocabulary()?);
    let parser = built.parser.clone();
    let oracle = Compiled::from_parser(
        parser.clone(),
        vocab.clone(),
        &masks::config(MaskerKind::Oracle),
    )
    .map_err(|e| format!("the oracle does not compile: {e}"))?;
    // A budget error is an allowed outcome of a build.
    let Ok(wda) = oracle.with_masker(&masks::config(MaskerKind::Wda)) else {
        return Ok(());
    };
    let mut bytes = Vec::new();
    wda.save(&mut bytes)
        .map_err(|e| format!("save failed: {e}"))?;

    // `Compiled::load` rebuilds the parser from Lark text; the case's parser is built from the
    // grammar model, so the masker is loaded for that parser directly.
    let loaded = WdaMasker::load(parser.clone(), vocab.clone(), &mut bytes.as_slice())
        .map_err(|e| format!("the unmodified artifact does not load: {e}"))?;
    walk(&c.case, &oracle, &loaded, true)?;

    if c.case.tokens.len() > 1 {
        let mut fewer = c.case.clone();
        fewer.tokens.pop();
        let other = Arc::new(fewer.vocabulary()?);
        if WdaMasker::load(parser.clone(), other, &mut bytes.as_slice()).is_ok() {
            return Err("the artifact loads for another vocabulary".into());
        }
    }

    let edited = apply(&bytes, &c.edits, c.forge_checksum);
    match WdaMasker::load(parser.clone(), vocab.clone(), &mut edited.as_slice()) {
        Err(_) => Ok(()),
        Ok(m) if edited == bytes => walk(&c.case, &oracle, &m, true),
        Ok(m) if c.forge_checksum => walk(&c.case, &oracle, &m, false),
        Ok(_) => Err(format!(
            "an edited artifact ({} bytes, was {}) loaded without a forged checksum",
            edited.len(),
            bytes.len()
        )),
    }
}

repro_variant!(Edit);

repro_struct!(ArtifactCase {
    case,
    edits,
    forge_checksum
});

impl fmt::Debug for ArtifactCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut comment: Vec<String> = self.case.grammar.lark().lines().map(String::from).collect();
        comment.push(format!("tokens (ids from 1): {:?}", self.case.tokens));
        comment.push(format!("steps: {:?}", self.case.steps));
        comment.push(format!(
            "edits: {:?}, forge_checksum: {}",
            self.edits, self.forge_checksum
        ));
        f.write_str(&test_text(
            "artifacts_regression",
            "artifacts::check",
            self,
            &comment,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_at_offsets_modulo_the_length() {
        let b = vec![0u8; 50];
        assert_eq!(apply(&b, &[Edit::Flip { at: 51, bit: 9 }], false)[1], 2);
        assert_eq!(apply(&b, &[Edit::Truncate(10)], false).len(), 10);
        assert_eq!(
            apply(
                &b,
                &[Edit::Remove(0), Edit::Insert { at: 0, byte: 7 }],
                false
            )[0],
            7
        );
        assert_eq!(
            apply(&[], &[Edit::Set { at: 3, byte: 1 }], false),
            Vec::<u8>::new()
        );
        let forged = apply(&b, &[Edit::Set { at: 49, byte: 1 }], true);
        assert_eq!(
            &forged[CHECKSUM_AT..CHECKSUM_END],
            &Sha256::digest(&forged[CHECKSUM_END..])[..]
        );
    }
}
