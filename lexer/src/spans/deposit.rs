//! Expanding a set of token classes into mask words at a cost that does not depend on the set:
//! the precomputed masks of the big classes ORed in one pass, and every member of the other
//! (*sparse*) classes at once.
//!
//! Walking the sparse classes run by run costs one scattered write per run of the classes in
//! the set (or missing from it). A set that holds about half of thousands of sparse classes
//! (Java with Llama 3: 6,400 runs of the weighted automaton's classes) costs 4–5 µs that way,
//! mostly in mispredicted loop exits and, when the run tables are cold, random reads. This
//! route costs about the same for every set, reads its tables in order, and has three steps:
//!
//! 1. **Gather.** The sparse tokens, in ascending id order, each take their class's bit of the
//!    set, 64 at a time: AVX-512 VBMI byte permutations look up each token's byte of the set
//!    (at most [`MAX_TABLES`] tables of 128 bytes), and one AVX-512 BITALG bit shuffle picks
//!    the bit out of each byte. The result is `S`, one bit per sparse token, where the tokens
//!    of each 64-bit mask word start at a byte (each word's tokens are padded to a multiple of
//!    8 with slots that take no byte, so read as 0).
//! 2. **Pass.** The caller's precomputed masks (*parts*) are ORed, 512 bits at a time.
//! 3. **Deposit.** Each 64-bit word of the mask reads the 8 bytes of `S` where its sparse
//!    tokens start and puts them at its tokens' positions with one BMI2 `pdep`. The bits start
//!    at a byte, so the read needs no shift (a shift per word cost more than the padding's
//!    extra gather), and a word of 64 sparse tokens is still one `pdep`. Steps 2 and 3 are one
//!    loop: per 512 bits, eight deposits and the parts, written once.
//!
//! `cargo bench -p munch-lexer --bench deposit` (synthetic layouts of Llama 3's size, all
//! tables in the CPU's caches; criterion's medians): 0.74, 0.82 and 0.96 µs without parts with
//! one, two and five tables; 0.93 µs with three parts and two tables, the shape of the weighted
//! automaton's Java blocks. Timed around each step while it was written, on that last shape:
//! the gather about 0.17 µs and the fused loop about 0.75 µs, against 0.28 µs and 0.47 + 0.82
//! µs for the gather and the separate pass and deposit of the first version (which read each
//! word's bits at a bit offset, with a shift). The fused loop runs at about one `pdep` per
//! cycle without parts: that, one per 64-bit word of the mask, is this design's floor.
//!
//! No crate offers this; it is written here for x86-64 and taken only where the CPU has AVX-512
//! F, BW, VBMI and BITALG and BMI2 (checked at run time). Elsewhere [`Deposit::new`] gives
//! `None` and the caller walks the runs.

#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// The most 128-byte tables of class-set bytes, so at most `MAX_TABLES * 1024` classes.
pub const MAX_TABLES: usize = 8;
/// The most slots of sparse tokens, padding included, in chunks of 64 (`S` lives on the stack:
/// 16 KiB).
const MAX_CHUNKS: usize = 2048;

/// The precomputed tables of the route for one vocabulary and one numbering of classes (see
/// the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
// Elsewhere than x86-64 a `Deposit` is never built, so the route's tables are never read.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub struct Deposit {
    /// `u32` words of the mask.
    word_len: usize,
    /// 128-byte tables of the set's bytes that the gather looks up.
    tables: usize,
    /// Per chunk of 64 slots: each slot's byte of the set within its table.
    lo: Vec<[u8; 64]>,
    /// Per chunk: the bit each slot takes, `(j % 8) * 8 + class % 8` (slot `j` of the chunk
    /// finds its byte at byte `j % 8` of its 64-bit lane).
    bit: Vec<[u8; 64]>,
    /// Per chunk and table: the slots whose byte is in that table (padding slots are in none).
    take: Vec<u64>,
    /// Per whole 64-bit mask word: the byte of `S` where its sparse tokens' bits start, and
    /// their bits (none: 0, and the deposit writes nothing).
    byte: Vec<u16>,
    bits: Vec<u64>,
    /// When the mask has an odd number of `u32` words: the last one's `(byte, bits)` (written
    /// alone, so the route never writes past the mask).
    last: Option<(u16, u32)>,
}

/// Whether this CPU runs the route.
pub fn supported() -> bool {
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
    /// lacks the instructions, the sizes exceed the limits, or `tokens` is not as described
    /// (ids strictly ascending and inside the mask, classes below `classes`): the caller then
    /// expands without the route.
    pub fn new(word_len: usize, classes: usize, tokens: &[(u32, u32)]) -> Option<Deposit> {
        Deposit::build(word_len, classes, tokens).filter(|_| supported())
    }

    /// [`Deposit::new`] without the CPU check (tests use it to check the tables anywhere).
    fn build(word_len: usize, classes: usize, tokens: &[(u32, u32)]) -> Option<Deposit> {
        let tables = classes.div_ceil(8).div_ceil(128);
        let inside = |&(t, c): &(u32, u32)| (t as usize) < word_len * 32 && (c as usize) < classes;
        let ascending = tokens.windows(2).all(|w| w[0].0 < w[1].0);
        if tables > MAX_TABLES || tokens.is_empty() || !ascending || !tokens.iter().all(inside) {
            return None;
        }
        // Slots: each 64-bit word's tokens from a multiple of 8.
        let mut slots = 0usize;
        let mut prev = u32::MAX;
        for &(t, _) in tokens {
            if t / 64 != prev {
                slots = slots.next_multiple_of(8);
                prev = t / 64;
            }
            slots += 1;
        }
        let chunks = slots.div_ceil(64);
        if chunks > MAX_CHUNKS {
            return None;
        }
        let mut d = Deposit {
            word_len,
            tables,
            lo: vec![[0; 64]; chunks],
            bit: (0..chunks)
                .map(|_| std::array::from_fn(|j| ((j % 8) * 8) as u8))
                .collect(),
            take: vec![0; chunks * tables],
            byte: vec![0; word_len / 2],
            bits: vec![0; word_len / 2],
            last: None,
        };
        let full = (word_len / 2) as u32;
        let mut slot = 0usize;
        let mut i = 0;
        while i < tokens.len() {
            let word = tokens[i].0 / 64;
            slot = slot.next_multiple_of(8);
            let (byte, mut bits) = ((slot / 8) as u32, 0u64);
            while i < tokens.len() && tokens[i].0 / 64 == word {
                let (t, class) = tokens[i];
                let (chunk, j) = (slot / 64, slot % 64);
                d.lo[chunk][j] = (class / 8 % 128) as u8;
                d.bit[chunk][j] += (class % 8) as u8;
                d.take[chunk * tables + (class / 1024) as usize] |= 1 << j;
                bits |= 1 << (t % 64);
                slot += 1;
                i += 1;
            }
            if word < full {
                d.byte[word as usize] = byte as u16;
                d.bits[word as usize] = bits;
            } else {
                d.last = Some((byte as u16, bits as u32));
            }
        }
        Some(d)
    }

    /// Writes the expansion of `set` (a class bitset): the OR of `parts` (each a mask of
    /// `words.len()` words: the dense units' precomputed subsets) and the members of the
    /// sparse classes in `set`.
    ///
    /// # Panics
    /// If `words` is not the mask the route was built for, or a part is shorter.
    pub fn expand(&self, set: &[u64], parts: &[&[u32]], words: &mut [u32]) {
        assert_eq!(words.len(), self.word_len, "a mask of another vocabulary");
        assert!(parts.iter().all(|p| p.len() >= words.len()));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Deposit` exists only where `supported()` said the CPU has the features.
        unsafe {
            self.expand_x86(set, parts, words)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (set, parts, words);
            unreachable!("a Deposit is only built on x86-64")
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
    unsafe fn expand_x86(&self, set: &[u64], parts: &[&[u32]], words: &mut [u32]) {
        use std::arch::x86_64::*;
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
        // `S`, and one spare word: a read at the last word's byte stays inside.
        let chunks = self.lo.len();
        let mut s = [MaybeUninit::<u64>::uninit(); MAX_CHUNKS + 1];
        match self.tables {
            1 => self.gather::<1>(&tab, &mut s),
            2 => self.gather::<2>(&tab, &mut s),
            3 => self.gather::<3>(&tab, &mut s),
            4 => self.gather::<4>(&tab, &mut s),
            5 => self.gather::<5>(&tab, &mut s),
            6 => self.gather::<6>(&tab, &mut s),
            7 => self.gather::<7>(&tab, &mut s),
            _ => self.gather::<MAX_TABLES>(&tab, &mut s),
        }
        s[chunks].write(0);
        let s = &s[..=chunks];
        match parts {
            [] => self.pass_deposit::<0>(&[], words, s),
            [a] => self.pass_deposit(&[a], words, s),
            [a, b] => self.pass_deposit(&[a, b], words, s),
            [a, b, c] => self.pass_deposit(&[a, b, c], words, s),
            [a, b, c, d] => self.pass_deposit(&[a, b, c, d], words, s),
            [a, b, c, d, e] => self.pass_deposit(&[a, b, c, d, e], words, s),
            [a, b, c, d, e, f] => self.pass_deposit(&[a, b, c, d, e, f], words, s),
            [a, b, c, d, e, f, g] => self.pass_deposit(&[a, b, c, d, e, f, g], words, s),
            [a, b, c, d, e, f, g, h, rest @ ..] => {
                self.pass_deposit(&[a, b, c, d, e, f, g, h], words, s);
                for p in rest {
                    for (w, &p) in words.iter_mut().zip(*p) {
                        *w |= p;
                    }
                }
            }
        }
    }

    /// Steps 2 and 3 fused: per 512 bits of the mask, the OR of the `P` parts and of eight
    /// deposits from `s` (`S`, every chunk written, and the spare word), written once.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn pass_deposit<const P: usize>(
        &self,
        parts: &[&[u32]; P],
        words: &mut [u32],
        s: &[MaybeUninit<u64>],
    ) {
        use std::arch::x86_64::*;
        debug_assert_eq!(s.len(), self.lo.len() + 1);
        let sb = s.as_ptr().cast::<u8>();
        // SAFETY: `b + 8` ≤ 8 × (chunks + 1) (`build`), the bytes of `s`, all written.
        let dep = |b: u16, bits: u64| unsafe {
            _pdep_u64(sb.add(b as usize).cast::<u64>().read_unaligned(), bits)
        };
        let n = words.len();
        let out = words.as_mut_ptr();
        let blocks = self.byte.len() / 8;
        // SAFETY (reads and writes): block `i` is `u32` words `16i..16i + 16` ≤ `2 ×
        // byte.len()` ≤ `n`, within `words` and every part (`expand` checked their lengths).
        for i in 0..blocks {
            let (b, bits) = (&self.byte[8 * i..8 * i + 8], &self.bits[8 * i..8 * i + 8]);
            let mut v = _mm512_set_epi64(
                dep(b[7], bits[7]) as i64,
                dep(b[6], bits[6]) as i64,
                dep(b[5], bits[5]) as i64,
                dep(b[4], bits[4]) as i64,
                dep(b[3], bits[3]) as i64,
                dep(b[2], bits[2]) as i64,
                dep(b[1], bits[1]) as i64,
                dep(b[0], bits[0]) as i64,
            );
            for p in parts {
                v = _mm512_or_si512(v, _mm512_loadu_si512(p.as_ptr().add(16 * i).cast()));
            }
            _mm512_storeu_si512(out.add(16 * i).cast(), v);
        }
        // The whole 64-bit words after the last block, then an odd last word.
        for w in 8 * blocks..self.byte.len() {
            let d = dep(self.byte[w], self.bits[w]);
            for (j, word) in [2 * w, 2 * w + 1].into_iter().enumerate() {
                let v = parts.iter().fold(0, |v, p| v | p[word]);
                words[word] = v | (d >> (32 * j)) as u32;
            }
        }
        if n % 2 == 1 {
            let d = self
                .last
                .map_or(0, |(b, bits)| dep(b, u64::from(bits)) as u32);
            words[n - 1] = parts.iter().fold(d, |v, p| v | p[n - 1]);
        }
    }

    /// Step 1: `S` into `s[..chunks]` from `T` tables (tables past `self.tables` are zero and
    /// no slot takes them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
    unsafe fn gather<const T: usize>(
        &self,
        tab: &[(std::arch::x86_64::__m512i, std::arch::x86_64::__m512i); MAX_TABLES],
        s: &mut [MaybeUninit<u64>; MAX_CHUNKS + 1],
    ) {
        use std::arch::x86_64::*;
        let tab: [(__m512i, __m512i); T] = std::array::from_fn(|t| tab[t]);
        let take = self.take.chunks_exact(self.tables);
        for (((lo, bit), take), out) in self.lo.iter().zip(&self.bit).zip(take).zip(s.iter_mut()) {
            let idx = _mm512_loadu_si512(lo.as_ptr().cast());
            let mut acc = _mm512_setzero_si512();
            for (&(a, b), &k) in tab.iter().zip(take) {
                acc = _mm512_or_si512(acc, _mm512_maskz_permutex2var_epi8(k, a, idx, b));
            }
            let bit = _mm512_loadu_si512(bit.as_ptr().cast());
            out.write(_mm512_bitshuffle_epi64_mask(acc, bit));
        }
    }

    /// Writes the OR of `parts` (masks at least as long as `words`) into `words`, 512 bits at
    /// a time (the pass of [`Deposit::expand`], for the other routes).
    pub fn pass(&self, parts: &[&[u32]], words: &mut [u32]) {
        assert!(parts.iter().all(|p| p.len() >= words.len()));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `expand`.
        unsafe {
            pass_x86(parts, words)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (parts, words);
            unreachable!("a Deposit is only built on x86-64")
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.lo.len() * 128 + self.take.len() * 8 + self.byte.len() * 10
    }

    /// What the route costs beyond reading the parts, hot, in scattered runs (a
    /// read-modify-write of one mask word from a class's run list, about 1.4 ns hot): about
    /// 0.28 ns per 64-bit word (a deposit), 0.18 ns per 64 slots plus 0.39 ns per table (a
    /// gather), and a setup worth 32 runs. Fitted to synthetic sets of Llama 3's size (6,337
    /// sparse tokens in 82% of the words, or 2,380 in 30%; 1, 2 and 5 tables): 0.63–0.99 µs
    /// without parts, each part about 0.05–0.08 µs more.
    pub fn cost(&self) -> usize {
        32 + self.byte.len() / 5 + self.lo.len() * (1 + 2 * self.tables) / 7
    }
}

/// `words` = the OR of `parts` (each at least as long), 16 words at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pass_x86(parts: &[&[u32]], words: &mut [u32]) {
    use std::arch::x86_64::*;
    let n = words.len();
    let out = words.as_mut_ptr();
    let whole = n / 16 * 16;
    // SAFETY (the unchecked reads and writes below): 16 words from `i < whole ≤ n`, within
    // `words` and every part (the caller checked their lengths); the tail is indexed.
    let load = |p: &[u32], i: usize| unsafe { _mm512_loadu_si512(p.as_ptr().add(i).cast()) };
    match parts {
        [a, b, c] => {
            for i in (0..whole).step_by(16) {
                let v = _mm512_ternarylogic_epi32::<0xfe>(load(a, i), load(b, i), load(c, i));
                _mm512_storeu_si512(out.add(i).cast(), v);
            }
        }
        [a, b] => {
            for i in (0..whole).step_by(16) {
                _mm512_storeu_si512(out.add(i).cast(), _mm512_or_si512(load(a, i), load(b, i)));
            }
        }
        _ => {
            for i in (0..whole).step_by(16) {
                let mut v = _mm512_setzero_si512();
                for p in parts {
                    v = _mm512_or_si512(v, load(p, i));
                }
                _mm512_storeu_si512(out.add(i).cast(), v);
            }
        }
    }
    for i in whole..n {
        *out.add(i) = parts.iter().fold(0, |v, p| v | p[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word's tokens start at a byte of `S` (a word of 64 sparse tokens is one entry); an odd
    /// last word is written alone; tokens past 1,024 classes use later tables; a token list
    /// that is out of order or out of range gives no route.
    #[test]
    fn words_start_at_a_byte_and_the_last_word_is_apart() {
        // 4,000 tokens: 125 u32 words, the last one alone. Tokens 5 and 7 (word 0), 192..256
        // (word 3, all sparse), and one token in the last word.
        let mut tokens: Vec<(u32, u32)> = vec![(5, 9), (7, 1_100)];
        tokens.extend((192..256).map(|t| (t, t % 2000)));
        tokens.push((3_990, 1_500));
        let d = Deposit::build(125, 2_000, &tokens).expect("within the limits");
        assert_eq!(d.tables, 2);
        // Word 0's two tokens take slots 0 and 1, padded to 8; word 3 takes slots 8..72; the
        // 62 whole words have an entry each.
        assert_eq!(d.byte.len(), 62);
        assert_eq!((d.byte[0], d.bits[0]), (0, 1 << 5 | 1 << 7));
        assert_eq!((d.byte[3], d.bits[3]), (1, u64::MAX));
        assert_eq!(d.bits.iter().filter(|&&b| b != 0).count(), 2);
        assert_eq!(d.last, Some((9, 1 << (3_990 % 32))));
        assert_eq!(d.lo.len(), 2);
        // Padding takes no byte: slot 1 (class 1,100) is in table 1 only, slots 2..8 in none.
        assert_eq!(d.take[0] & 0xff, 0b1);
        assert_eq!(d.take[1] & 0xff, 0b10);
        assert_eq!(d.bit[0][1], 8 + (1_100 % 8) as u8);
        // Slot 72 (token 3,990, class 1,500) is slot 8 of chunk 1, in table 1.
        assert_eq!(d.take[2 + 1], 1 << 8);
        assert_eq!(d.lo[1][8], (1_500 / 8 % 128) as u8);
        assert!(Deposit::build(125, MAX_TABLES * 1024 + 1, &tokens).is_none());
        // Tokens out of order, past the mask, or of a class past the set: no route.
        assert!(Deposit::build(125, 2_000, &[(7, 1), (5, 1)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(4_000, 1)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(5, 2_000)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(5, 1_999)]).is_some());
    }
}
