//! Masks on very deep stacks (issue 29): a JSON array nested 100,000 deep. The simulator names
//! the real stacks below each head once and keeps the names across masks for as long as the
//! stacks live, so a mask costs about what it costs on a shallow stack. (When the names were
//! dropped at a fixed count, every mask past 32,768 deep named the whole stack again: the loop
//! below took minutes.)

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle};
use munch_glr::parser::ParserState;
use munch_masker_spanner::{SpannerConfig, SpannerMasker};

#[test]
fn a_hundred_thousand_deep_array_masks_as_the_oracle() {
    let parser = munch_testkit::grammar::builtin("json");
    let vocab = munch_testkit::vocab::printable_and(&["[[", "1,", "]]", "],", " ["]);
    let spanner = SpannerMasker::new(
        Arc::clone(&parser),
        Arc::clone(&vocab),
        &SpannerConfig::default(),
    )
    .unwrap();
    let oracle = Oracle::new(Arc::clone(&vocab));
    let mut state = ParserState::new(Arc::clone(&parser));
    state.commit_bytes(&[b'['; 100_000]).unwrap();
    let mut cache = spanner.create_cache();
    let mut oracle_cache = oracle.create_cache();
    let steps: [&[u8]; 4] = [b"[", b"1", b"]", b","];
    for i in 0..2_000 {
        let mask = spanner.mask(&mut cache, &state);
        if i % 250 == 0 {
            assert_eq!(mask, oracle.mask(&mut oracle_cache, &state), "step {i}");
        }
        state.commit_bytes(steps[i % steps.len()]).unwrap();
    }
}
