//! The spans' memory budget holds for what the build really allocates.
//!
//! A counting global allocator measures the most heap bytes live during each build; the
//! build must stay within [`SpansConfig::max_bytes`] (plus a small allowance for the few
//! fixed-size buffers the budget does not charge, such as a walk's path stack), whether it
//! succeeds or is refused. One test function: the allocator counts every thread of the
//! process, so nothing else may run beside it.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use munch_testkit::generate::XorShift;
use munch_testkit::lexers;
use munch_tokens::{SpansBudget, SpansConfig, TokenClasses, TokenSpans};
use munch_vocab::{TokenId, Vocabulary};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the counters only watch.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the most heap bytes it held at once beyond what was
/// live before.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

/// What the budget does not charge: per walk, its path through the trie (a few entries per
/// byte of the longest token) and per thread a handful of small vectors.
const ALLOWANCE: usize = 64 << 10;

/// Tokens of 1 to 8 bytes from a small alphabet holding the regex's delimiters and a
/// two-byte character, seeded.
fn vocabulary(len: usize) -> Vocabulary {
    let alphabet: [&[u8]; 6] = [b"a", b"b", b"x", b"y", b" ", "\u{e9}".as_bytes()];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::with_capacity(len);
    for _ in 0..len {
        let pieces = 1 + rng.next_u64() % 8;
        let token: Vec<u8> = (0..pieces)
            .flat_map(|_| alphabet[(rng.next_u64() % 6) as usize].to_vec())
            .collect();
        tokens.push(Some(token));
    }
    Vocabulary::from_token_bytes(tokens, vec![]).expect("test vocabularies build")
}

fn config(max_bytes: usize) -> SpansConfig {
    SpansConfig {
        max_bytes,
        ..SpansConfig::default()
    }
}

#[test]
fn builds_hold_at_most_their_byte_budget() {
    // A dot-heavy regex: about 2,400 lexer states, 38 blocks of points.
    let lexer = lexers::of_patterns(&["[^x]{0,300}x[^y]{0,300}y", " "]);
    assert!(lexer.state_len() > 2000, "{}", lexer.state_len());
    let vocab = vocabulary(20_000);

    // The spans: built within the budget, and refused within it when it is short.
    let (spans, used) = measured(|| TokenSpans::build(&lexer, &vocab, &config(usize::MAX)));
    let spans = spans.expect("an unlimited build succeeds");
    let needed = spans.build_bytes();
    assert!(used <= needed + ALLOWANCE, "held {used}, charged {needed}");
    assert!(spans.heap_bytes() <= needed);
    eprintln!(
        "spans: held {used}, charged {needed}, kept {}",
        spans.heap_bytes()
    );
    drop(spans);
    // Two threads may hold their blocks' tables at different times from run to run: a budget
    // of twice the most held at once always suffices.
    for budget in [2 * needed, needed, needed / 2, needed / 8, needed / 64] {
        let (result, used) = measured(|| TokenSpans::build(&lexer, &vocab, &config(budget)));
        assert!(used <= budget + ALLOWANCE, "budget {budget}: held {used}");
        match result {
            Ok(spans) => assert!(spans.build_bytes() <= budget),
            Err(e) => {
                assert_eq!(e.budget(), SpansBudget::Bytes);
                assert_eq!(e.limit(), budget as u64);
                assert!(budget < 2 * needed, "a build within its budget was refused");
            }
        }
    }

    // The classes alone, likewise.
    let (classes, used) = measured(|| TokenClasses::build(&lexer, &vocab, &config(usize::MAX)));
    let classes = classes.expect("an unlimited build succeeds");
    eprintln!("classes: held {used}");
    let expected: Vec<_> = (0..vocab.len())
        .map(|t| classes.class_of(TokenId::from_usize(t)))
        .collect();
    drop(classes);
    for budget in [used, used / 2, used / 8] {
        let (result, held) = measured(|| TokenClasses::build(&lexer, &vocab, &config(budget)));
        assert!(held <= budget + ALLOWANCE, "budget {budget}: held {held}");
        match result {
            Ok(classes) => {
                let got: Vec<_> = (0..vocab.len())
                    .map(|t| classes.class_of(TokenId::from_usize(t)))
                    .collect();
                assert_eq!(got, expected);
            }
            Err(e) => assert_eq!(e.budget(), SpansBudget::Bytes),
        }
    }

    // A tokenizer whose ids run to 4,194,303 with a few tokens: the walk's tables are per text
    // token, so the build takes the per-id tables once, not once per block of points.
    let mut sparse: Vec<Option<Vec<u8>>> = vec![None; Vocabulary::MAX_LEN];
    for (i, t) in ["a", "xa", "by", " ", "\u{e9}x"].iter().enumerate() {
        sparse[Vocabulary::MAX_LEN - 1 - i] = Some(t.as_bytes().to_vec());
    }
    let sparse = Vocabulary::from_token_bytes(sparse, vec![]).expect("sparse ids load");
    let budget = 96 << 20;
    let (spans, used) = measured(|| TokenSpans::build(&lexer, &sparse, &config(budget)));
    let spans = spans.expect("a sparse vocabulary fits in 96 MiB");
    eprintln!("sparse: held {used}, charged {}", spans.build_bytes());
    assert!(used <= budget + ALLOWANCE, "held {used}");
    assert_eq!(spans.classes().token_len(), 5);
}
