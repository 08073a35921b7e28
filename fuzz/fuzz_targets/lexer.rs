//! The `lexer` target: see `munch_fuzz::lexer`. A failure panics with the first
//! disagreement and the case as a ready-to-paste regression test.

#![no_main]

use libfuzzer_sys::fuzz_target;
use munch_fuzz::lexer::{check, LexerCase};

fuzz_target!(|case: LexerCase| {
    if let Err(e) = check(&case) {
        panic!("{e}\n\n{case:?}");
    }
});
