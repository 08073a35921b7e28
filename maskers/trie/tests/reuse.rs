//! Masks reused across steps (the cache's recent masks by heads) equal masks computed from
//! scratch, and the reuse happens where the heads repeat: inside a comment, after a rollback.

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle, TokenMask};
use munch_glr::parser::ParserState;
use munch_masker_trie::TrieMasker;
use munch_testkit::grammar::syncode;
use munch_vocab::Vocabulary;

/// Single bytes and a few words, so that a comment is several tokens that stay in its lexeme.
fn vocab() -> Arc<Vocabulary> {
    munch_testkit::vocab::bytes_and(&[
        &b"//"[..],
        b" the",
        b" copyright",
        b" holder",
        b"package",
        b" main",
        b"\n\n",
        b"func",
    ])
}

/// The mask of `state` from a masker with a fresh cache (nothing to reuse).
fn fresh(masker: &TrieMasker, state: &ParserState, len: usize) -> TokenMask {
    let mut mask = TokenMask::new(len);
    masker.fill_mask(&mut masker.create_cache(), state, &mut mask);
    mask
}

#[test]
fn reused_masks_equal_fresh_ones_and_the_oracle() {
    let parser = syncode("go");
    let vocab = vocab();
    let text =
        "package main\n\n// the copyright holder the holder\nfunc main() {\n\tx := 1\n\tx++\n}\n";
    for masker in [
        TrieMasker::without_classes(Arc::clone(&parser), Arc::clone(&vocab)),
        TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &Default::default()).unwrap(),
    ] {
        let oracle = Oracle::new(Arc::clone(&vocab));
        let mut cache = masker.create_cache();
        let mut mask = TokenMask::new(vocab.len());
        let mut state = ParserState::new(Arc::clone(&parser));
        let tokens = vocab.encode(text).unwrap();
        let mut reused = 0;
        for step in 0..=tokens.len() {
            masker.fill_mask(&mut cache, &state, &mut mask);
            reused += usize::from(masker.last_stats(&mut cache).reused);
            let exact = oracle.mask(&mut oracle.create_cache(), &state);
            assert_eq!(mask.first_difference(&exact), None, "step {step}");
            assert_eq!(
                mask.first_difference(&fresh(&masker, &state, vocab.len())),
                None,
                "step {step}"
            );
            let Some(&t) = tokens.get(step) else { break };
            state.commit_token(&vocab, t).unwrap();
        }
        // Inside the comment the heads stay on one node and one lexer state.
        assert!(reused >= 3, "only {reused} masks reused");

        // After a rollback the heads are those of a recent step again.
        state.rollback(1).unwrap();
        masker.fill_mask(&mut cache, &state, &mut mask);
        assert!(masker.last_stats(&mut cache).reused);
        assert_eq!(
            mask.first_difference(&fresh(&masker, &state, vocab.len())),
            None
        );
    }
}

/// The classes' expansion tables are built with the masker, not by its first mask: building
/// the masker grows the classes by them, and the first mask adds nothing.
#[test]
fn expansion_tables_are_built_with_the_masker() {
    let parser = syncode("go");
    let vocab = vocab();
    let classes = Arc::new(
        munch_tokens::TokenClasses::build(parser.lexer(), &vocab, &Default::default())
            .expect("classes build"),
    );
    let bare = classes.heap_bytes();
    let masker = TrieMasker::with_token_classes(
        Arc::clone(&parser),
        Arc::clone(&vocab),
        Arc::clone(&classes),
    );
    let built = classes.heap_bytes();
    assert!(built > bare, "the masker's build made the expansion tables");
    let state = ParserState::new(Arc::clone(&parser));
    let mask = fresh(&masker, &state, vocab.len());
    assert_eq!(
        classes.heap_bytes(),
        built,
        "the first mask built nothing more"
    );
    let oracle = Oracle::new(Arc::clone(&vocab));
    let exact = oracle.mask(&mut oracle.create_cache(), &state);
    assert_eq!(mask.first_difference(&exact), None);
}
