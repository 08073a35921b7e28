//! The small classes of an expansion (see `expand.rs`): every class that has no precomputed
//! group mask. In a real vocabulary they are thousands of classes of one to a few tokens, so
//! what they cost is branches and scattered stores, and this module keeps both few.
//!
//! - **Buckets.** A class's runs (`(word, bits)`, one per word its members fall in) are padded
//!   with empty runs to a power of two, and the classes are kept per padded size; a set's
//!   classes of one bucket are decoded from its words eight (or fewer, for longer runs) at a
//!   time, the slots past the last class masked out instead of branched around, so the only
//!   data-dependent branch is one per set word. Present classes are ORed in, or missing ones
//!   cleared from a pass that set every small class.
//! - **Deposit.** Classes are numbered by their lowest member, so the lowest members
//!   (*representatives*) of classes `c, c + 1, …` are ascending token ids: the representatives
//!   falling in one 64-token word are the classes of one range, and that word's
//!   representative bits are the set's bits of that range deposited (`pdep`) into the word's
//!   representative pattern. One branchless step per such word writes every one-token class
//!   there, whatever the density; the classes of several runs are then scattered as above.
//!   It needs a fast `pdep` (BMI2, and not the microcoded one of AMD before Zen 3).

/// The padded run counts of the buckets; a class with more runs goes to the last bucket,
/// scattered with a loop over its own runs.
const BUCKET_RUNS: [usize; 4] = [1, 2, 4, 8];
const LONG: usize = BUCKET_RUNS.len();
/// Per set word: the classes of each bucket, of the long classes, and of any of them.
const KINDS: usize = LONG + 2;

/// One 64-token word holding representatives of small classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Deposit {
    /// The token word: token `t` is bit `t % 64` of word `t / 64`.
    word: u32,
    /// The class of the word's lowest representative.
    class: u32,
    /// The word's representatives (of every class, big ones too: a big class's bit is then
    /// set only when it is in the set, and then it is in the mask anyway).
    pattern: u64,
}

/// How a set's small classes are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SmallPlan {
    /// OR in the runs of the present classes.
    Present,
    /// The pass set every small class: clear the runs of the missing ones.
    Missing,
    /// Deposit the representatives, then OR in the runs of the present classes of several
    /// runs.
    Deposit,
}

/// The small classes' runs, buckets and deposit words.
#[derive(Clone, Debug)]
pub(super) struct Small {
    /// Per word of a set ([`ClassSet::words`](super::ClassSet::words)): its classes of each
    /// bucket, then of the long classes, then of any small class. Per bucket (then the long
    /// classes): how many classes.
    kinds: Vec<[u64; KINDS]>,
    lens: [u64; LONG + 1],
    /// The runs of the long classes.
    long_runs: u64,
    /// Per class, and 64 entries past the last: where its runs start in `runs`.
    start: Vec<u32>,
    /// Per long class: its number of runs (0 for the others).
    long_len: Vec<u32>,
    /// Every small class's runs padded to its bucket's size with `(0, 0)`, then 64 more
    /// `(0, 0)` (decoding reads a full bucket past any class).
    runs: Vec<(u32, u32)>,
    deposits: Vec<Deposit>,
    /// Whether the deposit is available (a fast `pdep`).
    fast_deposit: bool,
}

impl Small {
    /// The small classes `c` with `small(c)`, of runs `runs_of(c)` (`(word, bits)` ascending by word, `u32` words) for
    /// every `c` with `small(c)`; `reps` are the representatives of all `class_len` classes.
    pub(super) fn new<'a>(
        class_len: usize,
        small: impl Fn(usize) -> bool,
        runs_of: impl Fn(usize) -> &'a [(u32, u32)],
        reps: impl Iterator<Item = u32>,
    ) -> Small {
        let set_words = class_len.div_ceil(64);
        let mut s = Small {
            kinds: vec![[0; KINDS]; set_words],
            lens: [0; LONG + 1],
            long_runs: 0,
            start: Vec::with_capacity(class_len + 64),
            long_len: vec![0; class_len],
            runs: Vec::new(),
            deposits: Vec::new(),
            fast_deposit: fast_pdep(),
        };
        for c in 0..class_len {
            s.start.push(s.runs.len() as u32);
            if !small(c) {
                continue;
            }
            let runs = runs_of(c);
            // The first bucket holds the classes of one token (all that a deposit writes).
            let b = match runs {
                [(_, bits)] if bits.count_ones() == 1 => 0,
                _ => BUCKET_RUNS[1..]
                    .iter()
                    .position(|&r| r >= runs.len())
                    .map_or(LONG, |b| b + 1),
            };
            s.kinds[c / 64][b] |= 1 << (c % 64);
            s.kinds[c / 64][LONG + 1] |= 1 << (c % 64);
            s.lens[b] += 1;
            s.runs.extend_from_slice(runs);
            if b == LONG {
                s.long_len[c] = runs.len() as u32;
                s.long_runs += runs.len() as u64;
            } else {
                s.runs
                    .resize(s.runs.len() + BUCKET_RUNS[b] - runs.len(), (0, 0));
            }
        }
        let end = s.runs.len() as u32;
        s.start.resize(class_len + 64, end);
        s.runs.resize(s.runs.len() + 64, (0, 0));

        // Representatives are ascending with their class: cut them by 64-token word, and keep
        // the words with a one-token class.
        let mut small_rep = false;
        for (c, t) in reps.enumerate() {
            let word = t / 64;
            match s.deposits.last_mut() {
                Some(d) if d.word == word => d.pattern |= 1 << (t % 64),
                _ => {
                    if !small_rep {
                        s.deposits.pop();
                    }
                    small_rep = false;
                    s.deposits.push(Deposit {
                        word,
                        class: c as u32,
                        pattern: 1 << (t % 64),
                    });
                }
            }
            small_rep |= s.kinds[c / 64][0] & (1 << (c % 64)) != 0;
        }
        if !small_rep {
            s.deposits.pop();
        }
        s
    }

    /// The number of small classes in `set` per bucket (long classes last).
    pub(super) fn present(&self, set: &[u64]) -> [u64; LONG + 1] {
        let mut n = [0; LONG + 1];
        for (&s, kinds) in set.iter().zip(&self.kinds) {
            for (n, &k) in n.iter_mut().zip(kinds) {
                *n += u64::from((s & k).count_ones());
            }
        }
        n
    }

    /// The cost of each way (in scattered runs) given [`Small::present`]'s counts: OR the
    /// present classes, clear the missing ones, deposit.
    pub(super) fn costs(&self, present: &[u64; LONG + 1]) -> [u64; 3] {
        let mean_long = (self.long_runs << 8)
            .checked_div(self.lens[LONG])
            .unwrap_or(0);
        let cost = |n: &dyn Fn(usize) -> u64, from: usize| -> u64 {
            (from..LONG)
                .map(|b| n(b) * BUCKET_RUNS[b] as u64)
                .sum::<u64>()
                + ((n(LONG) * mean_long) >> 8)
        };
        let present_cost = cost(&|b| present[b], 0);
        let missing_cost = cost(&|b| self.lens[b] - present[b], 0);
        let deposit_cost = if self.fast_deposit {
            self.deposits.len() as u64 / DEPOSITS_PER_RUN + cost(&|b| present[b], 1)
        } else {
            u64::MAX
        };
        [present_cost, missing_cost, deposit_cost]
    }

    /// Writes the small classes of `set` into `words` as `plan` says.
    pub(super) fn apply(&self, plan: SmallPlan, set: &[u64], words: &mut [u32]) {
        match plan {
            SmallPlan::Present => self.scatter::<false>(set, 0, words),
            SmallPlan::Missing => self.scatter::<true>(set, 0, words),
            SmallPlan::Deposit => {
                self.deposit(set, words);
                self.scatter::<false>(set, 1, words);
            }
        }
    }

    /// ORs in (with `CLEAR`, clears) the runs of the present (missing) classes of the
    /// buckets from `first` on.
    fn scatter<const CLEAR: bool>(&self, set: &[u64], first: usize, words: &mut [u32]) {
        for (i, (&s, kinds)) in set.iter().zip(&self.kinds).enumerate() {
            let picked = if CLEAR { !s } else { s };
            if picked & kinds[LONG + 1] == 0 {
                continue;
            }
            let base = i * 64;
            for (b, &kind) in kinds[..=LONG].iter().enumerate().skip(first) {
                let x = picked & kind;
                if x == 0 {
                    continue;
                }
                match b {
                    0 => self.bucket::<1, CLEAR>(base, x, words),
                    1 => self.bucket::<2, CLEAR>(base, x, words),
                    2 => self.bucket::<4, CLEAR>(base, x, words),
                    3 => self.bucket::<8, CLEAR>(base, x, words),
                    _ => self.long::<CLEAR>(base, x, words),
                }
            }
        }
    }

    /// The classes `base + i` for the bits `i` of `x`, all of one bucket of `R` runs per
    /// class: decoded a block at a time, the slots past the last class masked out.
    #[inline(always)]
    fn bucket<const R: usize, const CLEAR: bool>(
        &self,
        base: usize,
        mut x: u64,
        words: &mut [u32],
    ) {
        loop {
            for _ in 0..(8 / R).max(1) {
                // All ones while `x` has a class left; past the last one, `c` is `base + 64`
                // (some other class, or the padding) and changes nothing.
                let keep = 0u32.wrapping_sub(u32::from(x != 0));
                let c = base + x.trailing_zeros() as usize;
                x &= x.wrapping_sub(1);
                let start = self.start[c] as usize;
                for &(w, bits) in &self.runs[start..start + R] {
                    let bits = bits & keep;
                    if CLEAR {
                        words[w as usize] &= !bits;
                    } else {
                        words[w as usize] |= bits;
                    }
                }
            }
            if x == 0 {
                break;
            }
        }
    }

    /// The long classes `base + i` for the bits `i` of `x`, each with a loop over its runs.
    fn long<const CLEAR: bool>(&self, base: usize, mut x: u64, words: &mut [u32]) {
        while x != 0 {
            let c = base + x.trailing_zeros() as usize;
            x &= x - 1;
            let start = self.start[c] as usize;
            for &(w, bits) in &self.runs[start..start + self.long_len[c] as usize] {
                if CLEAR {
                    words[w as usize] &= !bits;
                } else {
                    words[w as usize] |= bits;
                }
            }
        }
    }

    /// ORs in the representatives of the classes of `set`.
    fn deposit(&self, set: &[u64], words: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        {
            if self.fast_deposit {
                // SAFETY: `fast_deposit` is only set when the CPU has BMI2 (`fast_pdep`).
                unsafe { deposit_bmi2(&self.deposits, set, words) };
                return;
            }
        }
        deposit_with(&self.deposits, set, words, pdep_portable);
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.kinds.capacity() * std::mem::size_of::<[u64; KINDS]>()
            + (self.start.capacity() + self.long_len.capacity()) * 4
            + self.runs.capacity() * 8
            + self.deposits.capacity() * std::mem::size_of::<Deposit>()
    }

    /// Turns the `pdep` deposit off (tests of the portable one); on only where the CPU has it.
    #[cfg(test)]
    pub(super) fn set_fast_deposit(&mut self, fast: bool) {
        self.fast_deposit = fast && fast_pdep();
    }

    #[cfg(test)]
    pub(super) fn deposit_len(&self) -> usize {
        self.deposits.len()
    }

    #[cfg(test)]
    pub(super) fn fast_deposit(&self) -> bool {
        self.fast_deposit
    }

    #[cfg(test)]
    pub(super) fn bucket_lens(&self) -> [u64; LONG + 1] {
        self.lens
    }
}

/// Deposit words written per scattered run the plan counts: a deposit is one branchless
/// `pdep` step, a scattered run a decode step and a read-modify-write.
const DEPOSITS_PER_RUN: u64 = 2;

/// [`Small::deposit`] with `pdep` in one instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn deposit_bmi2(deposits: &[Deposit], set: &[u64], words: &mut [u32]) {
    deposit_with(deposits, set, words, |x, p| {
        std::arch::x86_64::_pdep_u64(x, p)
    });
}

#[inline(always)]
fn deposit_with(
    deposits: &[Deposit],
    set: &[u64],
    words: &mut [u32],
    pdep: impl Fn(u64, u64) -> u64,
) {
    for d in deposits {
        let (i, shift) = (d.class as usize / 64, d.class % 64);
        let low = u128::from(set[i]) | (u128::from(set.get(i + 1).copied().unwrap_or(0)) << 64);
        let bits = pdep((low >> shift) as u64, d.pattern);
        let w = d.word as usize * 2;
        words[w] |= bits as u32;
        if let Some(high) = words.get_mut(w + 1) {
            *high |= (bits >> 32) as u32;
        }
    }
}

/// `pdep` one bit at a time, where the CPU has none.
fn pdep_portable(mut x: u64, mut pattern: u64) -> u64 {
    let mut out = 0;
    while pattern != 0 {
        let low = pattern & pattern.wrapping_neg();
        out |= low & 0u64.wrapping_sub(x & 1);
        x >>= 1;
        pattern &= pattern - 1;
    }
    out
}

/// Whether `pdep` is one fast instruction: BMI2, and not an AMD CPU before Zen 3 (family
/// 0x19), whose `pdep` is microcoded at hundreds of cycles.
fn fast_pdep() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        if !std::arch::is_x86_feature_detected!("bmi2") {
            return false;
        }
        let vendor = __cpuid(0);
        let amd_like = matches!(
            (vendor.ebx, vendor.edx, vendor.ecx),
            // "AuthenticAMD", "HygonGenuine"
            (0x6874_7541, 0x6974_6e65, 0x444d_4163) | (0x6f67_7948, 0x6e65_476e, 0x656e_6975)
        );
        let eax = __cpuid(1).eax;
        let family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);
        !amd_like || family >= 0x19
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_pdep_deposits_low_bits_in_order() {
        assert_eq!(pdep_portable(0b1011, 0b1111_0000), 0b1011_0000);
        assert_eq!(pdep_portable(0b101, 0b1001_0010), 0b1000_0010);
        assert_eq!(pdep_portable(u64::MAX, 0), 0);
        assert_eq!(pdep_portable(1, 1 << 63), 1 << 63);
    }
}
