//! The `artifacts` target: see `munch_fuzz::artifacts`. A failure panics with the finding and
//! the case as a ready-to-paste regression test.

#![no_main]

use libfuzzer_sys::fuzz_target;
use munch_fuzz::artifacts::{check, ArtifactCase};

fuzz_target!(|case: ArtifactCase| {
    if let Err(e) = check(&case) {
        panic!("{e}\n\n{case:?}");
    }
});
