//! The `grammar_load` target: see `munch_fuzz::lark`. A failure panics with the first
//! disagreement and the case as a ready-to-paste regression test.

#![no_main]

use libfuzzer_sys::fuzz_target;
use munch_fuzz::lark::{check, LarkCase};

fuzz_target!(|case: LarkCase| {
    if let Err(e) = check(&case) {
        panic!("{e}\n\n{case:?}");
    }
});
