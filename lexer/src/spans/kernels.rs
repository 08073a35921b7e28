//! The word kernels of the class-mask expansion (`expand.rs`): counting a set's small classes
//! and the one pass that ORs and clears precomputed masks, each compiled twice, portable and
//! with AVX2 and POPCNT (picked at run time), because their speed is the load and store width.

/// The number of classes of `set` in `single` and in `multi` (sets over the same classes).
pub(super) fn count_small(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
        {
            // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
            return unsafe { count_small_avx512(set, None, single, multi) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has AVX2 and POPCNT, checked just above.
            return unsafe { count_small_avx2(set, single, multi) };
        }
    }
    count_small_portable(set, single, multi)
}

/// [`count_small`] compiled with POPCNT and AVX2: the baseline target has no popcount
/// instruction, and its bit-twiddling count over Java's 76 set words cost about 60 ns of the
/// 430 ns an empty set takes on Llama 3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_small_avx2(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    count_small_portable(set, single, multi)
}

#[inline(always)]
pub(super) fn count_small_portable(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    count_small_of(set.iter().copied(), single, multi)
}

/// [`count_small`] of the classes in exactly one of `set` and `base`.
pub(super) fn count_small_diff(
    set: &[u64],
    base: &[u64],
    single: &[u64],
    multi: &[u64],
) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
        {
            // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
            return unsafe { count_small_avx512(set, Some(base), single, multi) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has AVX2 and POPCNT, checked just above.
            return unsafe { count_small_diff_avx2(set, base, single, multi) };
        }
    }
    count_small_diff_portable(set, base, single, multi)
}

/// [`count_small_diff`] compiled with POPCNT and AVX2 (see [`count_small_avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_small_diff_avx2(set: &[u64], base: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    count_small_diff_portable(set, base, single, multi)
}

#[inline(always)]
fn count_small_diff_portable(
    set: &[u64],
    base: &[u64],
    single: &[u64],
    multi: &[u64],
) -> (u64, u64) {
    count_small_of(set.iter().zip(base).map(|(s, b)| s ^ b), single, multi)
}

/// [`count_small`] (of `set ^ base` with a base: [`count_small_diff`]) eight words at a time
/// with AVX-512 popcounts: over Llama 3 × Go's 78 set words, 12 ns against 23 for the POPCNT
/// loop (a microbenchmark), of a plan's 55–80.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn count_small_avx512(
    set: &[u64],
    base: Option<&[u64]>,
    single: &[u64],
    multi: &[u64],
) -> (u64, u64) {
    use std::arch::x86_64::*;
    let n = set
        .len()
        .min(single.len())
        .min(multi.len())
        .min(base.map_or(usize::MAX, <[u64]>::len));
    let (mut in_single, mut in_multi) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    for i in (0..n).step_by(8) {
        let k: __mmask8 = if n - i >= 8 {
            u8::MAX
        } else {
            (1u8 << (n - i)) - 1
        };
        // SAFETY: the mask lets only words `i..n` be read, inside every slice.
        let load = |s: &[u64]| unsafe { _mm512_maskz_loadu_epi64(k, s.as_ptr().add(i).cast()) };
        let mut s = load(set);
        if let Some(base) = base {
            s = _mm512_xor_si512(s, load(base));
        }
        let single = _mm512_and_si512(s, load(single));
        let multi = _mm512_and_si512(s, load(multi));
        in_single = _mm512_add_epi64(in_single, _mm512_popcnt_epi64(single));
        in_multi = _mm512_add_epi64(in_multi, _mm512_popcnt_epi64(multi));
    }
    (
        _mm512_reduce_add_epi64(in_single) as u64,
        _mm512_reduce_add_epi64(in_multi) as u64,
    )
}

#[inline(always)]
fn count_small_of(set: impl Iterator<Item = u64>, single: &[u64], multi: &[u64]) -> (u64, u64) {
    let (mut present_single, mut present_multi) = (0u64, 0u64);
    for ((s, &single), &multi) in set.zip(single).zip(multi) {
        present_single += u64::from((s & single).count_ones());
        present_multi += u64::from((s & multi).count_ones());
    }
    (present_single, present_multi)
}

/// `words = (pos[0] | pos[1] | …) & !(neg[0] | neg[1] | …)` (all zero without `pos`), every
/// slice as long as `words`: the one pass of an expansion.
pub(super) fn combine(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    // A fill or a copy is best left to the C library's memset and memcpy.
    match (pos, neg) {
        ([], _) => return words.fill(0),
        ([a], []) => return words.copy_from_slice(a),
        _ => {}
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { combine_avx2(words, pos, neg) };
            return;
        }
    }
    combine_portable(words, pos, neg);
}

/// [`combine`] compiled for AVX2: twice the width of the baseline's SSE2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn combine_avx2(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    combine_portable(words, pos, neg);
}

/// One vectorisable loop over the words: `$i` indexes `$words` and every named source, cut to
/// one length so that the bounds checks go.
macro_rules! pass {
    ($words:ident, |$i:ident| $value:expr, $($s:ident),*) => {{
        let n = $words.len();
        $(let $s = &$s[..n];)*
        for $i in 0..n {
            $words[$i] = $value;
        }
    }};
}

/// [`combine`] with one loop per source count up to 5 ORed or 4 cleared sources (each loop
/// reads every source once), and further passes over the words for more.
#[inline(always)]
pub(super) fn combine_portable(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    let rest = if let ([a], false) = (pos, neg.is_empty()) {
        // One source to clear others from: fused in one loop.
        let (first, rest) = neg.split_at(neg.len().min(4));
        match first {
            [x] => pass!(words, |i| a[i] & !x[i], a, x),
            [x, y] => pass!(words, |i| a[i] & !(x[i] | y[i]), a, x, y),
            [x, y, z] => pass!(words, |i| a[i] & !(x[i] | y[i] | z[i]), a, x, y, z),
            [x, y, z, u] => {
                pass!(
                    words,
                    |i| a[i] & !(x[i] | y[i] | z[i] | u[i]),
                    a,
                    x,
                    y,
                    z,
                    u
                )
            }
            _ => unreachable!("1 to 4 sources"),
        }
        rest
    } else {
        let (first, more) = pos.split_at(pos.len().min(5));
        match first {
            [] => {
                words.fill(0);
                return;
            }
            [a] => words.copy_from_slice(a),
            [a, b] => pass!(words, |i| a[i] | b[i], a, b),
            [a, b, c] => pass!(words, |i| a[i] | b[i] | c[i], a, b, c),
            [a, b, c, d] => pass!(words, |i| a[i] | b[i] | c[i] | d[i], a, b, c, d),
            [a, b, c, d, e] => {
                pass!(words, |i| a[i] | b[i] | c[i] | d[i] | e[i], a, b, c, d, e)
            }
            _ => unreachable!("0 to 5 sources"),
        }
        for chunk in more.chunks(4) {
            match chunk {
                [a] => pass!(words, |i| words[i] | a[i], a),
                [a, b] => pass!(words, |i| words[i] | a[i] | b[i], a, b),
                [a, b, c] => pass!(words, |i| words[i] | a[i] | b[i] | c[i], a, b, c),
                [a, b, c, d] => pass!(words, |i| words[i] | a[i] | b[i] | c[i] | d[i], a, b, c, d),
                _ => unreachable!("chunks of 1 to 4"),
            }
        }
        neg
    };
    for chunk in rest.chunks(4) {
        match chunk {
            [x] => pass!(words, |i| words[i] & !x[i], x),
            [x, y] => pass!(words, |i| words[i] & !(x[i] | y[i]), x, y),
            [x, y, z] => pass!(words, |i| words[i] & !(x[i] | y[i] | z[i]), x, y, z),
            [x, y, z, u] => pass!(
                words,
                |i| words[i] & !(x[i] | y[i] | z[i] | u[i]),
                x,
                y,
                z,
                u
            ),
            _ => unreachable!("chunks of 1 to 4"),
        }
    }
}
