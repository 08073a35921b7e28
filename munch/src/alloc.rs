//! The allocator of the binaries built on munch (feature `mimalloc`): the `munch` command, the
//! benchmarks and the Python module declare
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: munch::alloc::MiMalloc = munch::alloc::MiMalloc;
//! ```
//!
//! and call [`configure`] first thing. munch's builds (a schema's grammar, lexer DFA, LR
//! tables, token classes) allocate many small vectors, which mimalloc serves faster than the
//! system allocator (`bench/PERFORMANCE.md` has the figures). The library itself leaves the
//! allocator to its users.

pub use mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in mimalloc's `mi_option_e`, just before
/// `mi_option_use_numa_nodes` (16), which the bindings name while they do not name this one;
/// the test below checks both and the purge delay's default.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays with the process before it goes back to the system, in
/// milliseconds ([`configure`]).
pub const PURGE_DELAY_MS: std::ffi::c_long = 20;

/// Sets the allocator up for munch's builds: freed memory goes back to the system after
/// [`PURGE_DELAY_MS`] instead of up to a second later (mimalloc 3's default purge delay). The
/// eager wda build frees and allocates large tables in bursts, and a long delay holds their
/// memory past the peak; with none at all, the token classes that a per-request grammar builds
/// fault in fresh pages for every table they make (`bench/PERFORMANCE.md` has both). Cheap;
/// call it once, before the first build.
pub fn configure() {
    // SAFETY: `mi_option_set` stores one integer in mimalloc's option table; any process may
    // call it at any time, and a delay in milliseconds is this option's documented value.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) }
}

#[cfg(test)]
mod tests {
    /// The index is the purge delay's: its default in mimalloc 3's option table (1,000 ms)
    /// until [`configure`] sets it, just before the option the bindings name next.
    #[test]
    fn the_purge_delay_is_the_option_configure_sets() {
        // SAFETY: reading and writing mimalloc options is allowed at any time.
        let (before, numa) = unsafe {
            (
                libmimalloc_sys::mi_option_get(super::PURGE_DELAY),
                libmimalloc_sys::mi_option_get(libmimalloc_sys::mi_option_use_numa_nodes),
            )
        };
        assert!(
            before == 1000 || before == super::PURGE_DELAY_MS,
            "purge delay read {before}"
        );
        assert_eq!(numa, 0);
        assert_eq!(
            libmimalloc_sys::mi_option_use_numa_nodes - 1,
            super::PURGE_DELAY
        );
        super::configure();
        // SAFETY: as above.
        let after = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(after, super::PURGE_DELAY_MS);
    }
}
