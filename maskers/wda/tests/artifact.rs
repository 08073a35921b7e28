//! Artifacts: a saved masker loads back to the same masks; truncated, bit-flipped, foreign and
//! forged files get a typed error, never a panic or a masker.

mod common;

use std::sync::Arc;

use common::*;
use munch_glr::mask::Masker;
use munch_masker_wda::{LoadKind, WdaMasker};
use munch_testkit::grammar::{builtin, parser};
use sha2::{Digest, Sha256};

const JSON_TEXT: &str = r#"{"a": [1, 2.5e3, -0.5, true, false, null], "b": {"c": "d\"e"}}"#;

fn saved() -> (
    Arc<munch_glr::parser::Parser>,
    Arc<munch_vocab::Vocabulary>,
    Vec<u8>,
) {
    let p = builtin("json");
    let vocab = synthetic_vocab(&[]);
    let w = wda(&p, &vocab);
    let mut bytes = Vec::new();
    w.save(&mut bytes).unwrap();
    (p, vocab, bytes)
}

#[test]
fn a_loaded_masker_gives_the_same_masks() {
    let (p, vocab, bytes) = saved();
    let built = wda(&p, &vocab);
    let loaded =
        WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut bytes.as_slice()).unwrap();
    assert_eq!(loaded.stats().states, built.stats().states);
    assert_eq!(loaded.stats().build_s, 0.0);
    // Saving the loaded masker gives the same bytes.
    let mut again = Vec::new();
    loaded.save(&mut again).unwrap();
    assert_eq!(again, bytes);
    let compared = teacher_forced(&loaded, &built, &p, &vocab, JSON_TEXT, 1);
    assert!(compared > 10);
    let oracle = munch_glr::mask::Oracle::new(Arc::clone(&vocab));
    teacher_forced(&loaded, &oracle, &p, &vocab, JSON_TEXT, 3);
    assert_eq!(loaded.name(), "wda");
}

#[test]
fn every_truncation_is_refused() {
    let (p, vocab, bytes) = saved();
    let step = (bytes.len() / 400).max(1);
    let mut cut = 0;
    while cut < bytes.len() {
        let r = WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut &bytes[..cut]);
        let e = r
            .err()
            .unwrap_or_else(|| panic!("a file cut at {cut} bytes loaded"));
        assert!(
            matches!(
                e.kind(),
                LoadKind::Truncated { .. } | LoadKind::Checksum | LoadKind::NotAnArtifact
            ),
            "cut at {cut}: {e}"
        );
        cut += if cut < 64 { 1 } else { step };
    }
}

#[test]
fn every_bit_flip_is_refused() {
    let (p, vocab, bytes) = saved();
    let step = (bytes.len() / 300).max(1);
    let mut at = 0;
    while at < bytes.len() {
        for bit in [0, 3, 7] {
            let mut b = bytes.clone();
            b[at] ^= 1 << bit;
            let e = WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut b.as_slice())
                .err()
                .unwrap_or_else(|| panic!("a flip of bit {bit} at byte {at} loaded"));
            let expected = match at {
                0..=7 => matches!(e.kind(), LoadKind::NotAnArtifact),
                8..=11 => matches!(e.kind(), LoadKind::Version { .. }),
                _ => matches!(e.kind(), LoadKind::Checksum),
            };
            assert!(expected, "flip at {at}: {e}");
        }
        at += if at < 64 { 1 } else { step };
    }
}

#[test]
fn foreign_vocabulary_and_grammar_are_refused() {
    let (p, _, bytes) = saved();
    let other_vocab = synthetic_vocab(&[b"extra token"]);
    let e = WdaMasker::load(Arc::clone(&p), other_vocab, &mut bytes.as_slice())
        .err()
        .unwrap();
    assert!(matches!(e.kind(), LoadKind::Vocabulary { .. }), "{e}");
    let other = builtin("tricky");
    let e = WdaMasker::load(other, synthetic_vocab(&[]), &mut bytes.as_slice())
        .err()
        .unwrap();
    assert!(matches!(e.kind(), LoadKind::Grammar { .. }), "{e}");
    let e = WdaMasker::load(p, synthetic_vocab(&[]), &mut &b"not an artifact at all"[..])
        .err()
        .unwrap();
    assert!(matches!(e.kind(), LoadKind::NotAnArtifact), "{e}");
}

/// A file whose checksum was recomputed after an edit is still checked for consistency.
#[test]
fn forged_checksums_do_not_get_past_validation() {
    let (p, vocab, bytes) = saved();
    let reseal = |mut b: Vec<u8>| {
        let sum = Sha256::digest(&b[44..]);
        b[12..44].copy_from_slice(&sum);
        b
    };
    // The payload cut short of its last table.
    let cut = reseal(bytes[..bytes.len() - 4].to_vec());
    let e = WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut cut.as_slice())
        .err()
        .unwrap();
    assert!(matches!(e.kind(), LoadKind::Malformed { .. }), "{e}");
    // Bytes flipped all over the tables (after the fingerprints): never a panic; an edit that
    // leaves every id in range may load, and then masks must still be computable.
    let mut refused = 0;
    for at in (60..bytes.len()).step_by((bytes.len() / 200).max(1)) {
        let mut b = bytes.clone();
        b[at] ^= 0xA5;
        let b = reseal(b);
        match WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut b.as_slice()) {
            Err(e) => {
                assert!(matches!(e.kind(), LoadKind::Malformed { .. }), "{e}");
                refused += 1;
            }
            Ok(m) => {
                let mut cache = m.create_cache();
                let state = munch_glr::parser::ParserState::new(Arc::clone(&p));
                let _ = m.mask(&mut cache, &state);
            }
        }
    }
    assert!(refused > 0);
}

/// Fuzz finding 5 (`fuzz/README.md`): a grammar whose language is only the empty text and whose
/// one terminal is ignored saved an artifact its own loader refused.
#[test]
fn an_empty_language_with_an_ignored_terminal_loads_back() {
    let p = parser("start: \nT0: \"a\"\n%ignore T0\n");
    let vocab = synthetic_vocab(&[]);
    let built = wda(&p, &vocab);
    let mut bytes = Vec::new();
    built.save(&mut bytes).unwrap();
    let loaded = WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut bytes.as_slice())
        .unwrap_or_else(|e| panic!("the unmodified artifact does not load: {e}"));
    let oracle = munch_glr::mask::Oracle::new(Arc::clone(&vocab));
    teacher_forced(&loaded, &oracle, &p, &vocab, "aa", 1);
}
