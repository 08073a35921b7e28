//! Compiling in the background (`Config::background`): masks before, during and after the
//! handover equal the oracle's, the finished build is reported and saved, and a failed build
//! leaves the exact walk in place with its error.

#![cfg(feature = "trie")]

use std::sync::Arc;

use munch::{Compiled, Config, Grammar, MaskerKind, TokenMask, Vocabulary};
use munch_testkit::vocab::{every_byte, with_eos};

/// Every byte, a few JSON words and EOS.
fn vocab() -> Arc<Vocabulary> {
    let mut tokens = every_byte();
    tokens.extend(["{\"", "\": ", "true", ", ", "[1", "]}"].map(|t| Some(t.as_bytes().to_vec())));
    tokens.push(None);
    with_eos(tokens)
}

/// The masks along `text` (byte by byte), from `compiled`'s matcher.
fn masks(compiled: &Compiled, text: &[u8]) -> Vec<TokenMask> {
    let mut matcher = compiled.matcher();
    let mut out = Vec::new();
    for &b in text {
        out.push(matcher.next_token_mask());
        matcher.accept_bytes(&[b]).unwrap();
    }
    out.push(matcher.next_token_mask());
    out
}

const TEXT: &[u8] = br#"{"a": [1, true, {"b": null}], "c": "d"}"#;

#[test]
fn a_background_build_masks_as_the_oracle_and_hands_over() {
    let grammar = Grammar::builtin("json").unwrap();
    let oracle =
        Compiled::new(&grammar, vocab(), &Config::new().masker(MaskerKind::Oracle)).unwrap();
    let expected = masks(&oracle, TEXT);
    for &kind in MaskerKind::ALL {
        let config = Config::new().masker(kind).fallback(None).background(true);
        let compiled = Compiled::new(&grammar, vocab(), &config).unwrap();
        // Masks from whichever masker is current while the build runs.
        assert_eq!(masks(&compiled, TEXT), expected, "{kind} during the build");
        // A matcher that started before the handover switches in the middle of its text.
        let mut matcher = compiled.matcher();
        let half = TEXT.len() / 2;
        matcher.accept_bytes(&TEXT[..half]).unwrap();
        compiled.wait().unwrap();
        assert!(compiled.is_ready());
        assert_eq!(compiled.masker_kind(), kind);
        assert_eq!(compiled.masker().name(), kind.name());
        assert_eq!(matcher.next_token_mask(), expected[half], "{kind}");
        assert_eq!(masks(&compiled, TEXT), expected, "{kind} after the build");
        if kind.has_artifact() {
            let mut bytes = Vec::new();
            compiled.save(&mut bytes).unwrap();
            let loaded =
                Compiled::load(&grammar, vocab(), kind, &mut &bytes[..], &Config::new()).unwrap();
            assert_eq!(masks(&loaded, TEXT), expected, "{kind} loaded");
        }
    }
}

#[cfg(feature = "wda")]
#[test]
fn a_failed_background_build_keeps_the_exact_walk_and_says_why() {
    let grammar = Grammar::builtin("json").unwrap();
    let config = Config::new()
        .masker(MaskerKind::Wda)
        .fallback(None)
        .max_memory(Some(1))
        .background(true);
    let compiled = Compiled::new(&grammar, vocab(), &config).unwrap();
    let err = compiled.wait().unwrap_err().to_string();
    assert!(err.contains("wda"), "{err}");
    assert!(!compiled.is_ready());
    assert_eq!(compiled.masker_kind(), MaskerKind::Trie);
    let oracle =
        Compiled::new(&grammar, vocab(), &Config::new().masker(MaskerKind::Oracle)).unwrap();
    assert_eq!(masks(&compiled, TEXT), masks(&oracle, TEXT));
    // The walk has no artifact.
    assert!(compiled.save(&mut Vec::new()).is_err());
}

#[cfg(feature = "wda")]
#[test]
fn every_waiter_returns_after_the_build() {
    let grammar = Grammar::builtin("json").unwrap();
    let config = Config::new()
        .masker(MaskerKind::Wda)
        .fallback(None)
        .background(true);
    let compiled = Compiled::new(&grammar, vocab(), &config).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                compiled.wait().unwrap();
                assert!(compiled.is_ready());
                assert_eq!(compiled.masker_kind(), MaskerKind::Wda);
            });
        }
    });
}
