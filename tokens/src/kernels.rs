//! The word kernels of the class-mask expansion (`expand.rs`): counting a set's classes in
//! precomputed masks ([`count_in`], also the weighted automaton's) and the one pass that ORs
//! and clears precomputed masks, each compiled for the widest instructions the CPU has (picked
//! at run time), because their speed is the load and store width or the popcount.

/// What a set's words are combined with before [`count_in`] counts them.
#[derive(Clone, Copy, Debug)]
pub enum Words<'a> {
    /// The set alone.
    Set,
    /// The classes in exactly one of the set and this one.
    Xor(&'a [u64]),
    /// The classes of the set that are not in this one.
    AndNot(&'a [u64]),
}

/// For each of `masks`, how many of the classes of `set` (combined as `with` says) it holds,
/// over the words that all of them have. Counted with AVX-512 popcounts, or POPCNT, where the
/// CPU has them: the baseline target has no popcount instruction, and its bit-twiddling count
/// over Java's 76 set words cost about 60 ns of the 430 ns an empty set takes on Llama 3; over
/// Llama 3 × Go's 78 words, two masks took 23 ns with POPCNT and 12 with AVX-512 (a
/// microbenchmark). Expansions price themselves with it (the small classes of a set here, the
/// weighted automaton's cost buckets).
pub fn count_in<const N: usize>(set: &[u64], with: Words, masks: [&[u64]; N]) -> [u64; N] {
    #[cfg(target_arch = "x86_64")]
    if let Some(counts) = crate::x86_64::count_in(set, with, masks) {
        return counts;
    }
    count_in_portable(set, with, masks)
}

/// The words that `set`, `with`'s set and every mask have.
pub(crate) fn common_len(set: &[u64], with: Words, masks: &[&[u64]]) -> usize {
    let with_len = match with {
        Words::Set => usize::MAX,
        Words::Xor(w) | Words::AndNot(w) => w.len(),
    };
    masks
        .iter()
        .fold(set.len().min(with_len), |n, m| n.min(m.len()))
}

#[inline(always)]
pub(crate) fn count_in_portable<const N: usize>(
    set: &[u64],
    with: Words,
    masks: [&[u64]; N],
) -> [u64; N] {
    let n = common_len(set, with, &masks);
    let mut counts = [0u64; N];
    for i in 0..n {
        let s = match with {
            Words::Set => set[i],
            Words::Xor(w) => set[i] ^ w[i],
            Words::AndNot(w) => set[i] & !w[i],
        };
        for (count, mask) in counts.iter_mut().zip(&masks) {
            *count += u64::from((s & mask[i]).count_ones());
        }
    }
    counts
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
    if crate::x86_64::combine(words, pos, neg) {
        return;
    }
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
pub(crate) fn combine_portable(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
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

/// Says, past the test harness's capture (so that it shows when the test passes), that the
/// running test skipped comparing `what` because `why`: once per test and `what`.
#[cfg(test)]
pub(crate) fn say_skipped(what: &str, why: &str) {
    use std::io::Write;
    use std::sync::Mutex;
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    // The harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let key = format!("{test}: {what}");
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&key) {
        let line = format!("{test}: skipped: {why}; {what} was not compared\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
        said.push(key);
    }
}

/// [`count_in`] by each kernel: the portable one, the dispatched one, and each x86-64 kernel
/// the CPU runs, named (the others are said to be skipped).
#[cfg(test)]
pub(super) fn count_in_every_kernel<const N: usize>(
    set: &[u64],
    with: Words,
    masks: [&[u64]; N],
) -> Vec<(&'static str, [u64; N])> {
    let mut counts = vec![
        ("portable", count_in_portable(set, with, masks)),
        ("dispatched", count_in(set, with, masks)),
    ];
    #[cfg(target_arch = "x86_64")]
    counts.extend(crate::x86_64::count_in_kernels(set, with, masks));
    #[cfg(not(target_arch = "x86_64"))]
    say_skipped("count_in's x86-64 kernels", "the target is not x86-64");
    counts
}

/// [`combine`] by each kernel into a copy of `words`: the portable one, the dispatched one,
/// and the AVX2 one where the CPU runs it (said to be skipped elsewhere), named.
#[cfg(test)]
pub(super) fn combine_every_kernel(
    words: &[u32],
    pos: &[&[u32]],
    neg: &[&[u32]],
) -> Vec<(&'static str, Vec<u32>)> {
    let run = |kernel: &dyn Fn(&mut [u32])| {
        let mut out = words.to_vec();
        kernel(&mut out);
        out
    };
    let mut out = vec![
        ("portable", run(&|w| combine_portable(w, pos, neg))),
        ("dispatched", run(&|w| combine(w, pos, neg))),
    ];
    #[cfg(target_arch = "x86_64")]
    out.extend(crate::x86_64::combine_kernels(words, pos, neg));
    #[cfg(not(target_arch = "x86_64"))]
    say_skipped("combine's AVX2 kernel", "the target is not x86-64");
    out
}
