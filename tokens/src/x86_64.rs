//! Every instruction-set-specific kernel of the crate, for x86-64, and nothing else: the only
//! module where `unsafe` is allowed (the crate denies it everywhere else).
//!
//! Each kernel is a `#[target_feature]` function beside the portable code that states what it
//! computes (in `kernels`, `expand` and `deposit`). The entry points here are safe: they check
//! at run time that the CPU has the features before they call a kernel (or, for the deposit
//! route, take a [`Deposit`], which exists only where [`crate::deposit::supported`] held), and
//! return `None` (or `false`) where it does not, so the caller falls back to its portable code.
//! Under `cfg(test)`, the `*_kernels` functions run every kernel the CPU has, named, so that
//! the tests compare each with the portable code, and say on the terminal which they skipped.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use crate::deposit::{Deposit, MAX_CHUNKS, MAX_TABLES};
use crate::expand::{nearest_entry_portable, PROBE};
use crate::kernels::{combine_portable, common_len, count_in_portable, Words};

/// Whether the CPU has AVX-512 F and VPOPCNTDQ.
fn has_avx512_popcount() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vpopcntdq")
}

/// [`Deposit::expand`]: the route for the CPU that the `Deposit` was built on.
///
/// # Panics
/// If `words` is not the mask `d` was built for, or a part is shorter.
pub(crate) fn deposit_expand(d: &Deposit, set: &[u64], parts: &[&[u32]], words: &mut [u32]) {
    assert_eq!(words.len(), d.word_len, "a mask of another vocabulary");
    assert!(parts.iter().all(|p| p.len() >= words.len()));
    // SAFETY: a `Deposit` is only built by `Deposit::new`, where `supported()` says the CPU
    // has AVX-512 F, BW, VBMI and BITALG and BMI2; `words` is the mask `d` was built for and
    // every part at least as long (both asserted just above).
    unsafe { d.expand_x86(set, parts, words) }
}

/// [`Deposit::pass`]: the OR of `parts` into `words`, 512 bits at a time.
///
/// # Panics
/// If a part is shorter than `words`.
pub(crate) fn deposit_pass(_: &Deposit, parts: &[&[u32]], words: &mut [u32]) {
    assert!(parts.iter().all(|p| p.len() >= words.len()));
    // SAFETY: a `Deposit` is only built where `supported()` says the CPU has AVX-512 F (see
    // `deposit_expand`); every part is at least as long as `words` (asserted just above).
    unsafe { pass_x86(parts, words) }
}

/// [`crate::count_in`] with AVX-512 popcounts or POPCNT, where the CPU has them.
#[inline]
pub(crate) fn count_in<const N: usize>(
    set: &[u64],
    with: Words,
    masks: [&[u64]; N],
) -> Option<[u64; N]> {
    if has_avx512_popcount() {
        // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
        return Some(unsafe { count_in_avx512(set, with, masks) });
    }
    if is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        return Some(unsafe { count_in_popcnt(set, with, masks) });
    }
    None
}

/// `crate::kernels::combine` compiled for AVX2, where the CPU has it; `false` elsewhere
/// (nothing written).
#[inline]
pub(crate) fn combine(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) -> bool {
    if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { combine_avx2(words, pos, neg) };
        return true;
    }
    false
}

/// `crate::expand::nearest_entry` with AVX-512 popcounts or POPCNT, where the CPU has them.
#[inline]
pub(crate) fn nearest_entry(
    probes: &[[u64; PROBE]],
    probe: &[u64; PROBE],
) -> Option<Option<(u32, usize)>> {
    if has_avx512_popcount() {
        // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
        return Some(unsafe { nearest_entry_avx512(probes, probe) });
    }
    if is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        return Some(unsafe { nearest_entry_popcnt(probes, probe) });
    }
    None
}

#[target_feature(enable = "popcnt")]
fn count_in_popcnt<const N: usize>(set: &[u64], with: Words, masks: [&[u64]; N]) -> [u64; N] {
    count_in_portable(set, with, masks)
}

/// [`count_in`] eight words at a time.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn count_in_avx512<const N: usize>(set: &[u64], with: Words, masks: [&[u64]; N]) -> [u64; N] {
    let n = common_len(set, with, &masks);
    let mut counts = [_mm512_setzero_si512(); N];
    for i in (0..n).step_by(8) {
        let k: __mmask8 = if n - i >= 8 {
            u8::MAX
        } else {
            (1u8 << (n - i)) - 1
        };
        // SAFETY: the mask lets only words `i..n` be read, inside every slice.
        let load = |s: &[u64]| unsafe { _mm512_maskz_loadu_epi64(k, s.as_ptr().add(i).cast()) };
        let s = match with {
            Words::Set => load(set),
            Words::Xor(w) => _mm512_xor_si512(load(set), load(w)),
            Words::AndNot(w) => _mm512_andnot_si512(load(w), load(set)),
        };
        for (count, mask) in counts.iter_mut().zip(&masks) {
            let c = _mm512_popcnt_epi64(_mm512_and_si512(s, load(mask)));
            *count = _mm512_add_epi64(*count, c);
        }
    }
    counts.map(|c| _mm512_reduce_add_epi64(c) as u64)
}

/// [`combine`] compiled for AVX2: twice the width of the baseline's SSE2.
#[target_feature(enable = "avx2")]
fn combine_avx2(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    combine_portable(words, pos, neg);
}

/// [`nearest_entry`] with the eight probe words of an entry in one vector.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn nearest_entry_avx512(probes: &[[u64; PROBE]], probe: &[u64; PROBE]) -> Option<(u32, usize)> {
    const _: () = assert!(PROBE == 8, "one vector of probe words");
    // SAFETY: `PROBE` words, 64 bytes.
    let p = unsafe { _mm512_loadu_si512(probe.as_ptr().cast()) };
    let mut nearest: Option<(u32, usize)> = None;
    for (i, e) in probes.iter().enumerate() {
        // SAFETY: as above.
        let words = unsafe { _mm512_loadu_si512(e.as_ptr().cast()) };
        let d = _mm512_reduce_add_epi64(_mm512_popcnt_epi64(_mm512_xor_si512(words, p))) as u32;
        if nearest.is_none_or(|n| (d, i) < n) {
            nearest = Some((d, i));
        }
    }
    nearest
}

#[target_feature(enable = "popcnt")]
fn nearest_entry_popcnt(probes: &[[u64; PROBE]], probe: &[u64; PROBE]) -> Option<(u32, usize)> {
    nearest_entry_portable(probes, probe)
}

impl Deposit {
    /// [`Deposit::expand`] on x86-64: steps 1 and 2 into buffers on the stack, then 3 and 4.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW, VBMI and BITALG and BMI2; `words.len() == self.word_len`;
    /// every part holds at least `words.len()` words.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
    unsafe fn expand_x86(&self, set: &[u64], parts: &[&[u32]], words: &mut [u32]) {
        // The tables: the set's words 16 at a time (masked loads stop at its end).
        let mut tab = [(_mm512_setzero_si512(), _mm512_setzero_si512()); MAX_TABLES];
        for (t, pair) in tab.iter_mut().enumerate().take(self.tables) {
            let half = |h: usize| {
                let from = 16 * t + 8 * h;
                let n = set.len().saturating_sub(from).min(8);
                let k: __mmask8 = ((1u16 << n) - 1) as u8;
                // SAFETY: the mask lets only `set[from..from + n]` be read.
                unsafe { _mm512_maskz_loadu_epi64(k, set.as_ptr().wrapping_add(from).cast()) }
            };
            *pair = (half(0), half(1));
        }
        // `D`, and 16 spare words: a block's window stays inside.
        let chunks = self.lo.len();
        let mut d = [MaybeUninit::<u64>::uninit(); MAX_CHUNKS + 16];
        self.gather_segments(&tab, &mut d[..chunks]);
        d[chunks..chunks + 16]
            .iter_mut()
            .for_each(|w| _ = w.write(0));
        // `P`, and a spare word after it.
        let p_words = 8 * self.win.len();
        let mut s = [MaybeUninit::<u64>::uninit(); MAX_CHUNKS + 1];
        // SAFETY: the CPU has AVX-512 F and VBMI (this function's contract); `d[..chunks]` is
        // written (the segments cover every chunk) and so are the 16 spare words after it;
        // `s[..p_words]` is `8 * self.win.len()` words.
        unsafe { self.pad(&d[..chunks + 16], &mut s[..p_words]) };
        s[p_words].write(0);
        let s = &s[..=p_words];
        // SAFETY: the CPU has AVX-512 F and BMI2, `words` and `parts` are as this function's
        // contract says, and `s` is `P` (`pad` wrote its `8 * self.win.len()` words) and the
        // spare word.
        unsafe { self.pass_all(parts, words, s) };
    }

    /// Steps 3 and 4 with every part: those after the eighth in a pass of their own.
    ///
    /// # Safety
    /// As for [`Deposit::pass_deposit`]: the CPU has AVX-512 F and BMI2; `words.len() ==
    /// self.word_len`; every part holds at least `words.len()` words; `s` is `P` and a spare
    /// word, `8 * self.win.len() + 1` words, all written.
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn pass_all(&self, parts: &[&[u32]], words: &mut [u32], s: &[MaybeUninit<u64>]) {
        // SAFETY: this function's contract is `pass_deposit`'s, and the parts passed on are
        // some of `parts`.
        unsafe {
            match parts {
                [] => self.pass_deposit::<0>(&[], words, s),
                [a] => self.pass_deposit::<1>(&[a], words, s),
                [a, b] => self.pass_deposit::<2>(&[a, b], words, s),
                [a, b, c] => self.pass_deposit::<3>(&[a, b, c], words, s),
                [a, b, c, d] => self.pass_deposit::<4>(&[a, b, c, d], words, s),
                [a, b, c, d, e] => self.pass_deposit::<5>(&[a, b, c, d, e], words, s),
                [a, b, c, d, e, f] => self.pass_deposit::<6>(&[a, b, c, d, e, f], words, s),
                [a, b, c, d, e, f, g] => self.pass_deposit::<7>(&[a, b, c, d, e, f, g], words, s),
                [a, b, c, d, e, f, g, h, rest @ ..] => {
                    self.pass_deposit::<8>(&[a, b, c, d, e, f, g, h], words, s);
                    for p in rest {
                        for (w, &p) in words.iter_mut().zip(*p) {
                            *w |= p;
                        }
                    }
                }
            }
        }
    }

    /// Step 1: `D` into `s` (one word per chunk), run of chunks by run, each looking up its own
    /// tables of `tab`. A safe function: it reads and writes through slices only, so its one
    /// requirement is the CPU's, which `#[target_feature]` makes its callers vouch for.
    ///
    /// # Panics
    /// If `s` holds fewer words than there are chunks.
    // Compiled apart from `expand_x86`: inlined there, it leaves the fused loop too few
    // registers (the parts' pointers are reloaded from the stack every 512 bits).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
    #[inline(never)]
    fn gather_segments(
        &self,
        tab: &[(std::arch::x86_64::__m512i, std::arch::x86_64::__m512i); MAX_TABLES],
        s: &mut [MaybeUninit<u64>],
    ) {
        let mut start = 0usize;
        for &(end, used) in &self.segments {
            let end = end as usize;
            // The tables the segment looks up, in order, as indices into `tab` (the gather
            // reads the tables there: a copy of them per segment costs 16 vector stores).
            let mut list = [0u8; MAX_TABLES];
            let mut n = 0;
            for t in 0..self.tables {
                if used >> t & 1 == 1 {
                    list[n] = t as u8;
                    n += 1;
                }
            }
            match n {
                0 => self.gather::<0>(tab, &list, start, end, s),
                1 => self.gather::<1>(tab, &list, start, end, s),
                2 => self.gather::<2>(tab, &list, start, end, s),
                3 => self.gather::<3>(tab, &list, start, end, s),
                4 => self.gather::<4>(tab, &list, start, end, s),
                5 => self.gather::<5>(tab, &list, start, end, s),
                6 => self.gather::<6>(tab, &list, start, end, s),
                7 => self.gather::<7>(tab, &list, start, end, s),
                _ => self.gather::<MAX_TABLES>(tab, &list, start, end, s),
            }
            start = end;
        }
    }

    /// Step 2: from `D` (`d`) to `P` (`p`), 64 bytes at a time: a byte permutation of the
    /// block's window of `D` gives each lane its 64 bits, and a multishift takes each byte's
    /// 8 bits from its lane.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and VBMI; `d` holds at least `self.lo.len() + 16` words (a word
    /// per chunk, then 16 spare ones that a block's 128-byte window may reach), all written;
    /// `p` holds `8 * self.win.len()` words (8 per block of `P`).
    #[target_feature(enable = "avx512f,avx512vbmi")]
    unsafe fn pad(&self, d: &[MaybeUninit<u64>], p: &mut [MaybeUninit<u64>]) {
        debug_assert_eq!(p.len(), 8 * self.win.len());
        let db = d.as_ptr().cast::<u8>();
        let out = p.as_mut_ptr();
        let blocks = self.win.iter().zip(&self.pick).zip(&self.shift);
        for (q, ((&w, pick), shift)) in blocks.enumerate() {
            // SAFETY: the window is bytes `w..w + 128` of `d`, and `build` makes `w` at most the
            // chunks' bytes (a lane starts at or before the last bit of `D`), so the window
            // ends within the 16 spare words, and the contract has every word of `d` written;
            // `pick` and `shift` are 64 bytes each; `q < self.win.len()`, so words `8q..8q + 8`
            // are inside `p`.
            unsafe {
                let a = _mm512_loadu_si512(db.add(w as usize).cast());
                let b = _mm512_loadu_si512(db.add(w as usize + 64).cast());
                let pick = _mm512_loadu_si512(pick.as_ptr().cast());
                let lanes = _mm512_permutex2var_epi8(a, pick, b);
                let shift = _mm512_loadu_si512(shift.as_ptr().cast());
                let bytes = _mm512_multishift_epi64_epi8(shift, lanes);
                _mm512_storeu_si512(out.add(8 * q).cast(), bytes);
            }
        }
    }

    /// Steps 3 and 4 fused: per 512 bits of the mask, the OR of the `P` parts and of the
    /// block's deposits from `s` (`P`), written once.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and BMI2; `words.len() == self.word_len` (every block's 16 words,
    /// and the last block's fewer, are written through a pointer); every part holds at least
    /// `words.len()` words; `s` is `P` and a spare word, `8 * self.win.len() + 1` words, all
    /// written (the deposits read lanes `0..self.comb.len()`, which `build` fits in `P`).
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn pass_deposit<const P: usize>(
        &self,
        parts: &[&[u32]; P],
        words: &mut [u32],
        s: &[MaybeUninit<u64>],
    ) {
        debug_assert_eq!(s.len(), 8 * self.win.len() + 1);
        let p = s.as_ptr().cast::<u64>();
        let out = words.as_mut_ptr();
        let (mut at, mut lane) = (0usize, 0usize);
        for &(groups, end) in &self.passes {
            let (blocks, g) = (at..end as usize, groups as usize);
            // SAFETY: `blocks` is a pass, whose blocks (whole ones) have `g` groups each, the
            // first at lane `lane` (the groups of the passes before); `out` is `words`, of
            // `self.word_len` words; `p` is `P`, every lane written; the parts are long enough
            // and the CPU has the features (this function's contract).
            unsafe {
                match g {
                    0 => self.blocks::<P, 0>(parts, out, p, blocks.clone(), lane, 0),
                    1 => self.blocks::<P, 1>(parts, out, p, blocks.clone(), lane, 1),
                    2 => self.blocks::<P, 2>(parts, out, p, blocks.clone(), lane, 2),
                    3 => self.blocks::<P, 3>(parts, out, p, blocks.clone(), lane, 3),
                    _ => self.blocks::<P, { usize::MAX }>(parts, out, p, blocks.clone(), lane, g),
                }
            }
            lane += g * blocks.len();
            at = end as usize;
        }
        // The last block, of fewer words: its deposits and parts read and written under a
        // mask of its `u32` words.
        if let Some(g) = self.tail {
            let b = self.blk[at] as usize;
            let k = ((1u32 << (words.len() - 16 * b)) - 1) as u16;
            // SAFETY: `at` is the last block in pass order (`blk`, `rot` and `mask` have an
            // entry for it) and its `g` groups are the last lanes, `lane..self.comb.len()`,
            // all inside `P` and written; the CPU has the features (the contract).
            let mut v = unsafe { self.deposits(p, at, lane, g as usize) };
            for part in parts {
                // SAFETY: the last block is words `16 * b..words.len()` (fewer than 16), the
                // bits of `k`; every part holds at least `words.len()` words.
                let part = unsafe { _mm512_maskz_loadu_epi32(k, part.as_ptr().add(16 * b).cast()) };
                v = _mm512_or_si512(v, part);
            }
            // SAFETY: as for the parts, inside `words`.
            unsafe { _mm512_mask_storeu_epi32(out.add(16 * b).cast(), k, v) };
        }
    }

    /// The blocks `blocks` (in pass order) of `g` groups each (`G` when not `usize::MAX`, so
    /// that the group loop unrolls), whose first group is lane `lane` of `P` (`p`): each
    /// block's 512 bits, the deposits ORed with the parts.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and BMI2; `blocks` holds whole blocks only (16 `u32` words of
    /// the mask each: those of `self.passes`) of `g` groups each (`G` unless `G` is
    /// `usize::MAX`), whose groups are lanes `lane..lane + g * blocks.len()`; `out` points to
    /// the `self.word_len` words of the mask, writable; `p` points to `P`, readable and
    /// written at every one of those lanes; every part holds at least `self.word_len` words.
    #[target_feature(enable = "avx512f,bmi2")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn blocks<const P: usize, const G: usize>(
        &self,
        parts: &[&[u32]; P],
        out: *mut u32,
        p: *const u64,
        blocks: std::ops::Range<usize>,
        lane: usize,
        g: usize,
    ) {
        let g = if G == usize::MAX { g } else { G };
        let n = blocks.len();
        // The blocks' data, and their groups' (`g` each from lane `lane` on), side by side.
        let (blk, rot, mask) = (
            &self.blk[blocks.clone()],
            &self.rot[blocks.clone()],
            &self.mask[blocks],
        );
        let (comb, lanes) = (
            &self.comb[lane..lane + g * n],
            &self.lanes[lane..lane + g * n],
        );
        for j in 0..n {
            let b = blk[j] as usize;
            let mut v = _mm512_setzero_si512();
            if g > 0 {
                // SAFETY: lane `lane + g * j + x` of `P` is group `x` of the block (`build`),
                // and `x < g`, so it is one of the lanes the contract has written.
                let dep = |x: usize| unsafe {
                    _pdep_u64(p.add(lane + g * j + x).read(), comb[g * j + x]) as i64
                };
                v = _mm512_set1_epi64(dep(0));
                for x in 1..g {
                    v = _mm512_mask_set1_epi64(v, lanes[g * j + x], dep(x));
                }
                // SAFETY: `rot[j]` is 8 bytes and `mask[j]` 64, the sizes read.
                let (r, m) = unsafe {
                    (
                        _mm_loadl_epi64(rot[j].as_ptr().cast()),
                        _mm512_loadu_si512(mask[j].as_ptr().cast()),
                    )
                };
                let r = _mm512_cvtepu8_epi64(r);
                v = _mm512_and_si512(_mm512_rorv_epi64(v, r), m);
            }
            for part in parts {
                // SAFETY: block `b` is whole, words `16 * b..16 * b + 16` of the mask, and
                // every part holds the mask's words.
                let part = unsafe { _mm512_loadu_si512(part.as_ptr().add(16 * b).cast()) };
                v = _mm512_or_si512(v, part);
            }
            // SAFETY: as for the parts: `out` points to the mask's words.
            unsafe { _mm512_storeu_si512(out.add(16 * b).cast(), v) };
        }
    }

    /// Block `i`'s (in pass order) eight words of deposits, its `g` groups from lane `lane` of
    /// `P` on: a `pdep` per group, each word's lanes from its group's, rotated back and masked
    /// by its own bits. For the last block; `blocks` does the same inline (a function shared
    /// by both, over slices, is not inlined there, and the fused loop slows down).
    ///
    /// # Safety
    /// The CPU has AVX-512 F and BMI2; `i < self.blk.len()` (a block in pass order);
    /// `lane + g <= self.comb.len()` (its groups' lanes); `p` points to `P`, readable and
    /// written at lanes `lane..lane + g`.
    #[target_feature(enable = "avx512f,bmi2")]
    #[inline]
    unsafe fn deposits(
        &self,
        p: *const u64,
        i: usize,
        lane: usize,
        g: usize,
    ) -> std::arch::x86_64::__m512i {
        // SAFETY: called for `l` in `lane..lane + g` only: within `self.comb` and the written
        // lanes of `P` (the contract).
        let dep =
            |l: usize| unsafe { _pdep_u64(p.add(l).read(), *self.comb.get_unchecked(l)) as i64 };
        let mut v = _mm512_set1_epi64(if g == 0 { 0 } else { dep(lane) });
        for l in lane + 1..lane + g {
            // SAFETY: `l < lane + g <= self.comb.len() == self.lanes.len()`.
            let members = unsafe { *self.lanes.get_unchecked(l) };
            v = _mm512_mask_set1_epi64(v, members, dep(l));
        }
        // SAFETY: `i < self.blk.len()`, which is also the length of `self.rot` and `self.mask`;
        // their entries are 8 and 64 bytes, the sizes read.
        let (rot, mask) = unsafe {
            (
                _mm_loadl_epi64(self.rot.get_unchecked(i).as_ptr().cast()),
                _mm512_loadu_si512(self.mask.get_unchecked(i).as_ptr().cast()),
            )
        };
        let rot = _mm512_cvtepu8_epi64(rot);
        _mm512_and_si512(_mm512_rorv_epi64(v, rot), mask)
    }

    /// Step 1 for the chunks `start..end` of a segment that looks up the `T` tables
    /// `list[..T]` of `tab`: their words of `D` into `s`. Each slot is looked up in every
    /// table, and a tree of byte blends keeps its own table's byte, picked by the bits of its
    /// place in the list that `lo` and `bit` carry: cheaper than masking each lookup by the
    /// slots that take that table, which reads a mask per chunk and table. Safe for the same
    /// reason as [`Deposit::gather_segments`].
    ///
    /// # Panics
    /// If `start..end` is not a range of chunks, or `s` is shorter than `end`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
    fn gather<const T: usize>(
        &self,
        tab: &[(std::arch::x86_64::__m512i, std::arch::x86_64::__m512i); MAX_TABLES],
        list: &[u8; MAX_TABLES],
        start: usize,
        end: usize,
        s: &mut [MaybeUninit<u64>],
    ) {
        if T == 0 {
            // No slot takes a byte (never built so, but cheap to be right).
            s[start..end].iter_mut().for_each(|w| _ = w.write(0));
            return;
        }
        let tab: [(__m512i, __m512i); T] = std::array::from_fn(|t| tab[list[t] as usize]);
        let place_bit_1 = _mm512_set1_epi8(0x40);
        let chunks = self.lo[start..end].iter().zip(&self.bit[start..end]);
        for ((lo, bit), out) in chunks.zip(&mut s[start..end]) {
            // SAFETY: `lo` and `bit` are 64 bytes each, the size read.
            let (idx, bit) = unsafe {
                (
                    _mm512_loadu_si512(lo.as_ptr().cast()),
                    _mm512_loadu_si512(bit.as_ptr().cast()),
                )
            };
            let mut bytes: [__m512i; T] =
                std::array::from_fn(|t| _mm512_permutex2var_epi8(tab[t].0, idx, tab[t].1));
            // Bits 0, 1 and 2 of each slot's place: the tree's levels.
            let level = [
                _mm512_movepi8_mask(idx),
                if T > 2 {
                    _mm512_test_epi8_mask(bit, place_bit_1)
                } else {
                    0
                },
                if T > 4 { _mm512_movepi8_mask(bit) } else { 0 },
            ];
            let (mut n, mut l) = (T, 0);
            while n > 1 {
                for i in 0..n / 2 {
                    bytes[i] = _mm512_mask_blend_epi8(level[l], bytes[2 * i], bytes[2 * i + 1]);
                }
                if n % 2 == 1 {
                    bytes[n / 2] = bytes[n - 1];
                }
                (n, l) = (n.div_ceil(2), l + 1);
            }
            out.write(_mm512_bitshuffle_epi64_mask(bytes[0], bit));
        }
    }
}

/// `words` = the OR of `parts` (each at least as long), 16 words at a time.
///
/// # Safety
/// The CPU has AVX-512 F; every part holds at least `words.len()` words (they are read 16 at
/// a time through pointers, unchecked).
#[target_feature(enable = "avx512f")]
unsafe fn pass_x86(parts: &[&[u32]], words: &mut [u32]) {
    let n = words.len();
    let out = words.as_mut_ptr();
    let whole = n / 16 * 16;
    // SAFETY: called with `i + 16 <= whole <= n` only (the loops below), so the 16 words read
    // are inside every part (the contract).
    let load = |p: &[u32], i: usize| unsafe { _mm512_loadu_si512(p.as_ptr().add(i).cast()) };
    match parts {
        [a, b, c] => {
            for i in (0..whole).step_by(16) {
                let v = _mm512_ternarylogic_epi32::<0xfe>(load(a, i), load(b, i), load(c, i));
                // SAFETY: as for `load`: words `i..i + 16` of `words`, which `out` points to.
                unsafe { _mm512_storeu_si512(out.add(i).cast(), v) };
            }
        }
        [a, b] => {
            for i in (0..whole).step_by(16) {
                let v = _mm512_or_si512(load(a, i), load(b, i));
                // SAFETY: as for `load`: words `i..i + 16` of `words`, which `out` points to.
                unsafe { _mm512_storeu_si512(out.add(i).cast(), v) };
            }
        }
        _ => {
            for i in (0..whole).step_by(16) {
                let mut v = _mm512_setzero_si512();
                for p in parts {
                    v = _mm512_or_si512(v, load(p, i));
                }
                // SAFETY: as for `load`: words `i..i + 16` of `words`, which `out` points to.
                unsafe { _mm512_storeu_si512(out.add(i).cast(), v) };
            }
        }
    }
    for i in whole..n {
        // SAFETY: `i < n`, inside `words`.
        unsafe { *out.add(i) = parts.iter().fold(0, |v, p| v | p[i]) };
    }
}

/// [`count_in`]'s kernels that the CPU runs, named (the others are said to be skipped).
#[cfg(test)]
pub(crate) fn count_in_kernels<const N: usize>(
    set: &[u64],
    with: Words,
    masks: [&[u64]; N],
) -> Vec<(&'static str, [u64; N])> {
    let mut counts = Vec::new();
    if has_avx512_popcount() {
        // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
        counts.push(("AVX-512", unsafe { count_in_avx512(set, with, masks) }));
    } else {
        say_skipped(
            "count_in's AVX-512 kernel",
            "this CPU lacks AVX-512 F/VPOPCNTDQ",
        );
    }
    if is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        counts.push(("POPCNT", unsafe { count_in_popcnt(set, with, masks) }));
    } else {
        say_skipped("count_in's POPCNT kernel", "this CPU lacks POPCNT");
    }
    counts
}

/// [`combine`]'s AVX2 kernel into a copy of `words` where the CPU runs it (said to be skipped
/// elsewhere), named.
#[cfg(test)]
pub(crate) fn combine_kernels(
    words: &[u32],
    pos: &[&[u32]],
    neg: &[&[u32]],
) -> Vec<(&'static str, Vec<u32>)> {
    if !is_x86_feature_detected!("avx2") {
        say_skipped("combine's AVX2 kernel", "this CPU lacks AVX2");
        return Vec::new();
    }
    let mut out = words.to_vec();
    // SAFETY: the CPU has AVX2, checked just above.
    unsafe { combine_avx2(&mut out, pos, neg) };
    vec![("AVX2", out)]
}

/// [`nearest_entry`]'s kernels that the CPU runs, named (the others are said to be skipped).
#[cfg(test)]
pub(crate) fn nearest_entry_kernels(
    probes: &[[u64; PROBE]],
    probe: &[u64; PROBE],
) -> Vec<(&'static str, Option<(u32, usize)>)> {
    let mut nearest = Vec::new();
    if has_avx512_popcount() {
        // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ, checked just above.
        nearest.push(("AVX-512", unsafe { nearest_entry_avx512(probes, probe) }));
    } else {
        say_skipped(
            "nearest_entry's AVX-512 kernel",
            "this CPU lacks AVX-512 F/VPOPCNTDQ",
        );
    }
    if is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        nearest.push(("POPCNT", unsafe { nearest_entry_popcnt(probes, probe) }));
    } else {
        say_skipped("nearest_entry's POPCNT kernel", "this CPU lacks POPCNT");
    }
    nearest
}

#[cfg(test)]
use crate::kernels::say_skipped;
