//! The sparse classes of a set written into the mask at a cost that does not depend on the set.
//!
//! [`Expansion`](crate::expand::Expansion) walks the sparse classes run by run, which costs one
//! scattered write per run of the classes in the set (or missing from it). A set that holds
//! about half of thousands of sparse classes (Java with Llama 3: 6,400 runs) costs 4–5 µs that
//! way, mostly in mispredicted loop exits and, when the run tables are cold (a result-cache
//! miss), random reads. This route costs about the same for every set and reads its tables in
//! order (a whole expansion of a Java set with Llama 3 measured 1.7 µs hot through it, dense
//! units included), in two passes:
//!
//! 1. **Gather.** The sparse tokens, in ascending id order, each take their class's bit of the
//!    set, 64 at a time: AVX-512 VBMI byte permutations look up each token's byte of the set
//!    (at most [`MAX_TABLES`] tables of 128 bytes), and one AVX-512 BITALG bit shuffle picks
//!    the bit out of each byte. The result is `S`, one bit per sparse token.
//! 2. **Deposit.** Each 64-bit word of the mask with sparse tokens takes the next bits of `S`
//!    at its tokens' positions, with one BMI2 `pdep`.
//!
//! No crate offers this; it is written here for x86-64 and taken only where the CPU has AVX-512
//! VBMI, BITALG and BW and BMI2 (checked at run time). Elsewhere [`Deposit::new`] gives `None`
//! and the run-by-run walk is all there is.

/// The most 128-byte tables of class-set bytes, so at most `MAX_TABLES * 1024` classes.
pub(crate) const MAX_TABLES: usize = 8;
/// The most sparse tokens (`S` lives on the stack: 8 KiB).
const MAX_CHUNKS: usize = 1024;
/// The most bits one `pdep` deposits: a window of `S` read at a byte boundary holds 57 bits.
const MAX_PER_ENTRY: u32 = 56;

/// The precomputed tables of the route (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Deposit {
    /// `u32` words of the mask.
    word_len: usize,
    /// 128-byte tables of the set's bytes that the gather looks up.
    tables: usize,
    /// Per chunk of 64 sparse tokens: each token's byte of the set within its table.
    lo: Vec<[u8; 64]>,
    /// Per chunk: the bit each token takes, `(j % 8) * 8 + class % 8` (token `j` of the chunk
    /// finds its byte at byte `j % 8` of its 64-bit lane).
    bit: Vec<[u8; 64]>,
    /// Per chunk and table: the tokens whose byte is in that table.
    take: Vec<u64>,
    /// Per 64-bit mask word with sparse tokens (split when it has more than
    /// [`MAX_PER_ENTRY`]): its first `u32` word, the index in `S` of its first token, and its
    /// tokens' bits.
    entries: Vec<(u32, u32, u64)>,
    /// When the mask has an odd number of `u32` words: the last one's entry, whose bits fit in
    /// 32 (written alone, so the route never writes past the mask).
    last: Option<(u32, u32, u64)>,
}

/// Whether this CPU runs the route.
pub(crate) fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
            && std::arch::is_x86_feature_detected!("avx512bitalg")
            && std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl Deposit {
    /// The route for the sparse tokens `tokens` (ascending ids, each with its class) over a
    /// mask of `word_len` `u32` words and a set of `classes` classes; `None` where the CPU
    /// lacks the instructions or the sizes exceed the limits.
    pub(crate) fn new(word_len: usize, classes: usize, tokens: &[(u32, u32)]) -> Option<Deposit> {
        Deposit::build(word_len, classes, tokens).filter(|_| supported())
    }

    /// [`Deposit::new`] without the CPU check (tests use it to check the tables anywhere).
    fn build(word_len: usize, classes: usize, tokens: &[(u32, u32)]) -> Option<Deposit> {
        let tables = classes.div_ceil(8).div_ceil(128);
        let chunks = tokens.len().div_ceil(64);
        if tables > MAX_TABLES || chunks > MAX_CHUNKS || tokens.is_empty() {
            return None;
        }
        let mut d = Deposit {
            word_len,
            tables,
            lo: vec![[0; 64]; chunks],
            bit: vec![[0; 64]; chunks],
            take: vec![0; chunks * tables],
            entries: Vec::new(),
            last: None,
        };
        for (i, &(_, class)) in tokens.iter().enumerate() {
            let (chunk, j) = (i / 64, i % 64);
            d.lo[chunk][j] = (class / 8 % 128) as u8;
            d.bit[chunk][j] = ((j % 8) * 8) as u8 + (class % 8) as u8;
            d.take[chunk * tables + (class / 1024) as usize] |= 1 << j;
        }
        let full = word_len / 2;
        let mut i = 0;
        while i < tokens.len() {
            let word = tokens[i].0 / 64;
            let (first, mut bits, mut n) = (i, 0u64, 0);
            while i < tokens.len() && tokens[i].0 / 64 == word && n < MAX_PER_ENTRY {
                bits |= 1 << (tokens[i].0 % 64);
                i += 1;
                n += 1;
            }
            let entry = (word * 2, first as u32, bits);
            if (word as usize) < full {
                d.entries.push(entry);
            } else {
                d.last = Some(entry);
            }
        }
        Some(d)
    }

    /// ORs the members of the sparse classes in `set` (a class bitset) into `words`.
    ///
    /// # Panics
    /// If `words` is shorter than the mask the route was built for (its writes are unchecked).
    pub(crate) fn apply(&self, set: &[u64], words: &mut [u32]) {
        assert!(words.len() >= self.word_len, "a mask of another vocabulary");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Deposit` exists only where `supported()` said the CPU has the features.
        unsafe {
            self.apply_x86(set, words)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (set, words);
            unreachable!("a Deposit is only built on x86-64")
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
    unsafe fn apply_x86(&self, set: &[u64], words: &mut [u32]) {
        use std::arch::x86_64::*;
        // The set's bytes, padded to whole tables.
        let mut bytes = [0u8; MAX_TABLES * 128];
        for (chunk, &w) in bytes.chunks_exact_mut(8).zip(set) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        let mut tab = [(_mm512_setzero_si512(), _mm512_setzero_si512()); MAX_TABLES];
        for (t, pair) in tab.iter_mut().enumerate().take(self.tables) {
            let p = bytes.as_ptr().add(128 * t);
            *pair = (
                _mm512_loadu_si512(p.cast()),
                _mm512_loadu_si512(p.add(64).cast()),
            );
        }
        // One spare word: a window read at the last token's byte stays inside.
        let mut s = [0u64; MAX_CHUNKS + 1];
        for (c, out) in s.iter_mut().enumerate().take(self.lo.len()) {
            let idx = _mm512_loadu_si512(self.lo[c].as_ptr().cast());
            let take = &self.take[c * self.tables..(c + 1) * self.tables];
            let mut acc = _mm512_setzero_si512();
            for (pair, &k) in tab.iter().zip(take) {
                acc = _mm512_mask_mov_epi8(acc, k, _mm512_permutex2var_epi8(pair.0, idx, pair.1));
            }
            let bit = _mm512_loadu_si512(self.bit[c].as_ptr().cast());
            *out = _mm512_bitshuffle_epi64_mask(acc, bit);
        }
        let sb = s.as_ptr().cast::<u8>();
        let window = |first: u32| -> u64 {
            // SAFETY: `first / 8 + 8` ≤ 8 × (chunks + 1), the bytes of `s`.
            unsafe { sb.add(first as usize / 8).cast::<u64>().read_unaligned() >> (first % 8) }
        };
        let out = words.as_mut_ptr();
        for &(w, first, bits) in &self.entries {
            // `w + 1 < word_len ≤ words.len()`: entries cover whole 64-bit words (`build`), and
            // `apply` checked the length.
            let p = out.add(w as usize).cast::<u64>();
            p.write_unaligned(p.read_unaligned() | _pdep_u64(window(first), bits));
        }
        if let Some((w, first, bits)) = self.last {
            words[w as usize] |= _pdep_u64(window(first), bits) as u32;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.lo.len() * 128 + self.take.len() * 8 + self.entries.len() * 16
    }

    /// What the route costs, in the units of [`Expansion`](crate::expand::Expansion)'s
    /// estimates (a scattered run). A mask that misses the result cache finds the run tables
    /// cold, where each scattered run is a random read, while this route reads its tables in
    /// order; so it is priced below its hot cost (about 1.2 µs for 6,500 sparse tokens in
    /// 1,932 entries, in a benchmark of the two passes shaped like Java with Llama 3, against
    /// about 1.4 ns per hot scattered run). With this price, teacher-forced traces with
    /// Llama 3 went from mask p99 / p99.9 of 4.2 / 9.5 µs to 3.0–3.3 / 6.2–6.5 µs on Java,
    /// 7.0–7.2 / 14.1–14.5 to 6.2–6.3 / 9.8–10.2 on Go, and SQL's p90 from 4.8–5.2 to
    /// 3.6–4.1 (two runs of each, `wda_trace`).
    pub(crate) fn cost(&self) -> usize {
        self.entries.len() / 8 + self.lo.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mask word with more sparse tokens than one `pdep` takes is split; an odd last word is
    /// written alone; tokens past 1,024 classes use later tables.
    #[test]
    fn tables_split_crowded_words_and_keep_the_last_word_apart() {
        // 4,000 tokens: 125 u32 words, the last one alone. Tokens 192..256 (one 64-bit word)
        // all sparse, plus one token in the last word.
        let mut tokens: Vec<(u32, u32)> = (192..256).map(|t| (t, t % 2000)).collect();
        tokens.push((3_990, 1_500));
        let d = Deposit::build(125, 2_000, &tokens).expect("within the limits");
        assert_eq!(d.tables, 2);
        assert_eq!(d.entries.len(), 2, "{:?}", d.entries);
        assert_eq!(d.entries[0], (6, 0, (1u64 << 56) - 1));
        assert_eq!(d.entries[1], (6, 56, 0xffu64 << 56));
        assert_eq!(d.last, Some((124, 64, 1 << (3_990 % 64))));
        assert_eq!(
            d.take[2 + 1] & (1 << 0),
            1,
            "token 64's class 1,500 is in table 1"
        );
        assert!(Deposit::build(125, MAX_TABLES * 1024 + 1, &tokens).is_none());
    }
}
