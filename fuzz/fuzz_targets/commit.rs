//! The `commit` target: see `munch_fuzz::commit`. A failure panics with the first
//! disagreement and the case as a ready-to-paste regression test.

#![no_main]

use libfuzzer_sys::fuzz_target;
use munch_fuzz::commit::{check, CommitCase};

fuzz_target!(|case: CommitCase| {
    if let Err(e) = check(&case) {
        panic!("{e}\n\n{case:?}");
    }
});
