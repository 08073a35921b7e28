//! The `masks` target: see `munch_fuzz::masks`. A failure panics with the first
//! disagreement and the case as a ready-to-paste regression test.

#![no_main]

use libfuzzer_sys::fuzz_target;
use munch_fuzz::masks::{check, MaskCase};

fuzz_target!(|case: MaskCase| {
    if let Err(e) = check(&case) {
        panic!("{e}\n\n{case:?}");
    }
});
