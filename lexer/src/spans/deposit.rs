//! Expanding a set of token classes into mask words at a cost that does not depend on the set:
//! the precomputed masks of the big classes ORed in one pass, and every member of the other
//! (*sparse*) classes at once.
//!
//! Walking the sparse classes run by run costs one scattered write per run of the classes in
//! the set (or missing from it). A set that holds about half of thousands of sparse classes
//! (Java with Llama 3: 6,400 runs of the weighted automaton's classes) costs 4–5 µs that way,
//! mostly in mispredicted loop exits and, when the run tables are cold, random reads. This
//! route costs about the same for every set, reads its tables in order, and has four steps:
//!
//! 1. **Gather.** The sparse tokens each take their class's bit of the set, 64 at a time:
//!    AVX-512 VBMI byte permutations look up each token's byte of the set (at most
//!    [`MAX_TABLES`] tables of 128 bytes), a tree of byte blends keeps each token's own table's
//!    byte (picked by bits the lookups ignore), and one AVX-512 BITALG bit shuffle picks the
//!    bit out of each byte. The result is `D`, one bit per sparse token, the tokens of each
//!    64-bit mask word one after another, in the order of the words. A segment of chunks looks
//!    up only the tables its tokens use: classes are numbered by their lowest member, so the
//!    one-token classes of nearby words (most sparse tokens) are in the same table. Short runs
//!    merge into segments (`merge_runs`).
//! 2. **Pad.** `D` becomes `P`, where each word's bits start at a byte, 64 bytes at a time: a
//!    byte permutation gives each 64-bit lane its window of `D` (the build makes every lane's
//!    bits fit one window that starts at a byte), and a VBMI multishift takes each byte's 8
//!    bits from it. Gathering `P` directly, with a word's tokens padded to a multiple of 8 by
//!    slots that look nothing up, took half as many chunks again: with Llama 3 × Go's 12,925
//!    sparse tokens of the trie masker's classes (five tables), 315 against 202 (the lanes'
//!    windows added none).
//! 3. **Pass.** The caller's precomputed masks (*parts*) are ORed, 512 bits at a time.
//! 4. **Deposit.** Each 64-bit word of the mask reads the 8 bytes of `P` where its sparse
//!    tokens start and puts them at its tokens' positions with one BMI2 `pdep`. The bits start
//!    at a byte, so the read needs no shift, and a word of 64 sparse tokens is still one
//!    `pdep`. Steps 3 and 4 are one loop: per 512 bits, eight deposits and the parts, written
//!    once. The loop is bound by its micro-operations and loads: a shift per word (reading `D`
//!    at a bit offset instead of padding) made it 40% slower (0.27 → 0.38 ns per word in a
//!    microbenchmark), more than the padding's gather cost. Where nearly every word has sparse
//!    tokens, as with Llama 3 and the trie masker's classes of Go and Java (98% and 94% of the
//!    words), each word's first 16 find their bits at a fixed place of `P` (two bytes per
//!    word), and the loop reads no offset per word; the few words of more than 16 deposit the
//!    rest after the loop. On Llama 3 × Go's real masks the loop went from about 2,100 to
//!    1,900 time-stamp counts per call, the pad (a longer `P`) from 180 to 280–350.
//!
//! `cargo bench -p munch-lexer --bench deposit` (synthetic layouts of Llama 3's size, all
//! tables in the CPU's caches; the minimum per call, three runs alternated with the route
//! before the pad, on a machine with a load average of 1.8): 0.66–0.69, 0.68–0.69 and
//! 0.78–0.79 µs without parts with one, two and five tables (0.73, 0.73–0.74 and 0.90–0.92
//! before); 0.85–0.86 µs with three parts and two tables, the shape of the weighted
//! automaton's Java blocks (0.90), and 0.97 with five (1.09–1.12). With sparse tokens in 30% of
//! the words (2,239), the pad gains nothing: 0.81–0.82 µs against 0.78–0.80. The fused loop
//! runs at about one `pdep` per cycle without parts: that, one per 64-bit word of the mask,
//! is this design's floor.
//!
//! The gather's blends (instead of a mask read per chunk and table) and the merged segments,
//! alternated with the code before them on another day: five tables 0.81 → 0.72–0.74 µs
//! without parts, 1.00 → 0.88–0.91 with three; one and two tables within the noise. On Llama 3
//! × Go's real masks the gather went from about 0.29 to 0.21 µs of the route's 1.1 (read by
//! the time-stamp counter around each step). Three ways of writing the fused loop measured
//! slower there: the word offsets read four at a time (one load instead of four, +5%), the
//! deposits stored as scalars and the parts ORed in a second pass (+30%), and the eight
//! deposits stored to a buffer and read back as one vector (+70%: the read waits for the
//! stores). Moving words into vector registers (eight moves and seven shuffles per 512 bits)
//! costs about as much as the `pdep`s, and both run at about one per cycle.
//!
//! No crate offers this; it is written here for x86-64 and taken only where the CPU has AVX-512
//! F, BW, VBMI and BITALG and BMI2 (checked at run time). Elsewhere [`Deposit::new`] gives
//! `None` and the caller walks the runs.

#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// The most 128-byte tables of class-set bytes, so at most `MAX_TABLES * 1024` classes.
pub const MAX_TABLES: usize = 8;
/// The most 64-bit words of `P` (and so of `D`, no longer): both live on the stack, 16 KiB
/// each.
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
    /// Per chunk of 64 slots: each slot's byte of the set within its table (bits 0 to 6), and
    /// bit 0 of its table's place in its segment's list (bit 7, which the lookup ignores).
    lo: Vec<[u8; 64]>,
    /// Per chunk: the bit each slot takes, `(j % 8) * 8 + class % 8` (bits 0 to 5: slot `j` of
    /// the chunk finds its byte at byte `j % 8` of its 64-bit lane), and bits 1 and 2 of its
    /// table's place in the list (bits 6 and 7, which the bit shuffle ignores). Slots skipped
    /// to fit a lane's window take whatever they find: their bits reach no word.
    bit: Vec<[u8; 64]>,
    /// Runs of chunks that look up the same tables: `(end chunk, bit t: table t)`, in order.
    segments: Vec<(u32, u8)>,
    /// What the gather costs, in the units of [`Deposit::cost`].
    gather_cost: usize,
    /// Per block of 64 bytes of `P`: the byte of `D` where the block's 128-byte window
    /// starts, the window's byte that each of the block's bytes reads (eight per lane: the
    /// lane's 64 bits of `D`), and the bit of that lane where each byte of `P` starts.
    win: Vec<u16>,
    pick: Vec<[u8; 64]>,
    shift: Vec<[u8; 64]>,
    /// Per whole 64-bit mask word: the bits of its sparse tokens (none: 0, and the deposit
    /// writes nothing), and the byte of `P` where they start. With `P` at fixed places
    /// (`byte` empty), word `w`'s first 16 start at byte `2w` and only they are in `bits`.
    bits: Vec<u64>,
    byte: Vec<u16>,
    /// When the mask has an odd number of `u32` words: the last one's `(byte, bits)` (written
    /// alone, so the route never writes past the mask).
    last: Option<(u16, u32)>,
    /// Whether `P` is at fixed places (see `build`).
    fixed: bool,
    /// With `P` at fixed places, the words of more than 16 sparse tokens: `(word, byte of
    /// P, the bits of the others)`.
    over: Vec<(u32, u16, u64)>,
}

/// What a segment of the gather costs beyond its chunks, and what a chunk costs beyond its
/// lookups, in lookups (one table's byte permutation and blend per chunk). A chunk costs about
/// 0.45 ns and a lookup 0.14 (a microbenchmark of the gather); a segment about 5 ns, what was
/// left of the route's gather on Llama 3 × Go's classes (0.26 µs over 20 runs of chunks,
/// unmerged, when words were laid out by the tables they use) once its chunks' lookups were
/// counted.
const SEGMENT_COST: usize = 30;
const CHUNK_COST: usize = 3;

/// The runs of chunks that look up the same tables (`chunk_tables[c]`: bit `t`, table `t`),
/// merged into the segments that cost least (each chunk looks up the union of its segment's
/// tables): `(end chunk, tables)`, in order. Short runs between longer ones are not worth
/// their own segment: Llama 3 × Go's 202 chunks are 45 runs, 39 of one to four chunks, and
/// four segments that look up 3.4 tables per chunk.
fn merge_runs(chunk_tables: &[u8]) -> Vec<(u32, u8)> {
    let mut runs: Vec<(u32, u8)> = Vec::new();
    for (c, &used) in chunk_tables.iter().enumerate() {
        match runs.last_mut() {
            Some((end, tabs)) if *tabs == used => *end = c as u32 + 1,
            _ => runs.push((c as u32 + 1, used)),
        }
    }
    // best[j]: the least cost of runs `..j` as segments, and where the last one starts. A
    // segment spans at most 64 runs, which bounds the work.
    let mut best: Vec<(usize, usize)> = vec![(0, 0)];
    for j in 1..=runs.len() {
        let mut pick = (usize::MAX, 0);
        let mut used = 0u8;
        for i in (j.saturating_sub(64)..j).rev() {
            used |= runs[i].1;
            let start = if i == 0 { 0 } else { runs[i - 1].0 as usize };
            let chunks = runs[j - 1].0 as usize - start;
            let cost =
                best[i].0 + SEGMENT_COST + chunks * (CHUNK_COST + used.count_ones() as usize);
            if cost < pick.0 {
                pick = (cost, i);
            }
        }
        best.push(pick);
    }
    let mut segments = Vec::new();
    let mut j = runs.len();
    while j > 0 {
        let i = best[j].1;
        let used = runs[i..j].iter().fold(0, |u, r| u | r.1);
        segments.push((runs[j - 1].0, used));
        j = i;
    }
    segments.reverse();
    segments
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
        // Per 64-bit word of the mask (an odd last `u32` word is one too): its first token's
        // index in `tokens`, and how many.
        let whole = word_len.div_ceil(2);
        let mut per_word = vec![(0usize, 0usize); whole];
        for (i, &(t, _)) in tokens.iter().enumerate() {
            let (first, n) = &mut per_word[t as usize / 64];
            if *n == 0 {
                *first = i;
            }
            *n += 1;
        }
        let word_bits = |from: usize, to: usize| {
            tokens[from..to]
                .iter()
                .fold(0u64, |b, &(t, _)| b | 1 << (t % 64))
        };
        // `P`, where each word's bits start at a byte; per byte of `P`, its tokens (the first's
        // index in `tokens`, and how many: at most 8). Where nearly every word has sparse
        // tokens and few more than 16, each word has two bytes at a fixed place (bytes `2w`
        // and `2w + 1`: its first 16 tokens) and the rest of the words of more than 16 follow
        // (`over`); the loop then reads no offset per word. Elsewhere each word's bytes follow
        // the last word's (`byte`), so that `P` holds no empty bytes: at fixed places, Gemma 3
        // × Java's sparse tokens (in 58% of its 4,096 words, 112 of them of more than 16) made
        // the `expand` bench's random half 1.57 → 1.78 µs, the pad twice as long. The words
        // are in order either way: laid out by the tables their tokens use (as before), Llama
        // 3 × Go's chunks looked up 608 tables against 689, but `P` at fixed places takes
        // each block of the pad from one window of `D`.
        let with_tokens = per_word.iter().filter(|w| w.1 > 0).count();
        let over_16 = per_word.iter().filter(|w| w.1 > 16).count();
        // (Fixed places take two bytes per word and at most six more per word of more than
        // 16: where that is past `P`'s room, the words' bytes follow one another.)
        let fixed = 8 * with_tokens >= 7 * whole
            && 16 * over_16 <= whole
            && 2 * whole + 6 * over_16 <= 8 * MAX_CHUNKS;
        let mut p_bytes: Vec<(usize, usize)> = Vec::with_capacity(2 * whole);
        let (mut byte, mut over) = (Vec::new(), Vec::new());
        let per_byte =
            |first: usize, n: usize| (0..n).step_by(8).map(move |i| (first + i, (n - i).min(8)));
        if fixed {
            for &(first, n) in &per_word {
                p_bytes.push((first, n.min(8)));
                p_bytes.push((first + n.min(8), n.saturating_sub(8).min(8)));
            }
            for (w, &(first, n)) in per_word.iter().enumerate() {
                if n > 16 {
                    over.push((
                        w as u32,
                        p_bytes.len() as u16,
                        word_bits(first + 16, first + n),
                    ));
                    p_bytes.extend(per_byte(first + 16, n - 16));
                }
            }
        } else {
            for &(first, n) in &per_word {
                byte.push(p_bytes.len() as u16);
                p_bytes.extend(per_byte(first, n));
            }
        }
        let in_place = if fixed { 16 } else { 64 };
        let placed = |&(first, n): &(usize, usize)| word_bits(first, first + n.min(in_place));
        let full = word_len / 2;
        let bits: Vec<u64> = per_word[..full].iter().map(placed).collect();
        let last = (word_len % 2 == 1).then(|| {
            let at = if fixed { 2 * full } else { byte[full] as usize };
            (at as u16, placed(&per_word[full]) as u32)
        });
        byte.truncate(full);
        // What `P` took when each word's bits started at a byte of their own (the gather's
        // price is fitted to it, see below).
        let packed_bytes: usize = per_word.iter().map(|&(_, n)| n.div_ceil(8)).sum();
        let blocks = p_bytes.len().div_ceil(64);
        if blocks * 8 > MAX_CHUNKS {
            return None;
        }
        // `D`: the gathered bits, one after another (no padding), except that each lane of
        // `P` (8 bytes) finds its bits in one 64-bit window of `D` that starts at a byte: where
        // a lane's bits would overrun it, they start at the next byte. `src`: where each byte
        // of `P` starts in `D`; `base`: each lane's window.
        let mut src = vec![0usize; p_bytes.len()];
        let mut base = Vec::with_capacity(p_bytes.len().div_ceil(8));
        let mut at = 0usize;
        for (lane, bytes) in p_bytes.chunks(8).enumerate() {
            let n: usize = bytes.iter().map(|b| b.1).sum();
            if at % 8 + n > 64 {
                at = at.next_multiple_of(8);
            }
            base.push(at / 8 * 8);
            for (i, b) in bytes.iter().enumerate() {
                src[8 * lane + i] = at;
                at += b.1;
            }
        }
        let chunks = at.div_ceil(64);
        let mut lo = vec![[0u8; 64]; chunks];
        let mut bit: Vec<[u8; 64]> = (0..chunks)
            .map(|_| std::array::from_fn(|j| ((j % 8) * 8) as u8))
            .collect();
        // Per slot, its class's table (none for a skipped slot); per chunk, the tables used.
        let mut slot_table = vec![None; chunks * 64];
        let mut chunk_tables = vec![0u8; chunks];
        for (&(first, n), &at) in p_bytes.iter().zip(&src) {
            for (slot, &(_, class)) in (at..).zip(&tokens[first..first + n]) {
                let (chunk, j) = (slot / 64, slot % 64);
                lo[chunk][j] = (class / 8 % 128) as u8;
                bit[chunk][j] += (class % 8) as u8;
                slot_table[slot] = Some(class / 1024);
                chunk_tables[chunk] |= 1 << (class / 1024);
            }
        }
        // Per block of `P` (64 bytes, one vector): the byte of `D` where its 128-byte window
        // starts, the window's byte that each byte of the block's lanes reads, and the bit of
        // its lane where each byte of `P` starts.
        let mut win = Vec::with_capacity(blocks);
        let mut pick = vec![[0u8; 64]; blocks];
        let mut shift = vec![[0u8; 64]; blocks];
        for q in 0..blocks {
            let w = base[8 * q] / 8;
            win.push(w as u16);
            for (l, &lane_base) in base.iter().enumerate().skip(8 * q).take(8) {
                let j = 8 * (l - 8 * q);
                // A block's lanes start within 9 bytes of one another (up to 64 bits, and 7
                // skipped), so its last lane ends within 70 bytes of the window's start.
                debug_assert!(lane_base / 8 - w + 8 <= 128);
                for i in 0..8 {
                    pick[q][j + i] = (lane_base / 8 - w + i) as u8;
                    if let Some(&at) = src.get(8 * l + i) {
                        shift[q][j + i] = (at - lane_base) as u8;
                    }
                }
            }
        }
        // Runs of chunks that look up the same tables, merged into segments where a few more
        // lookups per chunk cost less than a segment; each chunk then looks up its segment's.
        let segments = merge_runs(&chunk_tables);
        let mut start = 0;
        for &(end, used) in &segments {
            chunk_tables[start..end as usize].fill(used);
            start = end as usize;
        }
        // Each slot's table by its place in its chunk's list of tables (the gather picks it
        // by those three bits).
        for (slot, table) in slot_table.iter().enumerate() {
            if let Some(t) = table {
                let (chunk, j) = (slot / 64, slot % 64);
                let place = (chunk_tables[chunk] & low_bits(*t as usize)).count_ones() as u8;
                lo[chunk][j] |= (place & 1) << 7;
                bit[chunk][j] |= (place >> 1) << 6;
            }
        }
        // The gather is priced per chunk: in 21sts of a run, (2 + 2 × tables + tables looked
        // up) / 21. Before the blends (a mask read per chunk and table), the price was twice
        // that, less one (fitted when a chunk looked up every table and the route gathered
        // `P`); halved, the trie masker's real masks with Llama 3 took `expand` p99 from
        // 1.30–1.36 to 1.08–1.13 µs on Java and from 1.30–1.34 to 1.19–1.23 on Go (the sets
        // that walked runs at 2–3.5 µs now take the route), and no synthetic set of the
        // `expand` bench got slower.
        let gather_cost: usize = chunk_tables
            .iter()
            .map(|used| 2 + 2 * tables + used.count_ones() as usize)
            .sum();
        Some(Deposit {
            word_len,
            tables,
            lo,
            bit,
            segments,
            // Priced as if `P` were gathered directly, as before the pad (twice the chunks on
            // real masks, for the same tables): the callers' ways were fitted to that price.
            // At the pad's own (11% lower on Llama 3 × Java), Gemma 3 × Java's random half
            // went to the route and took 1.82 µs against 1.55 (`expand` bench, before the
            // blends).
            gather_cost: gather_cost * packed_bytes.div_ceil(8) / chunks.max(1) / 21,
            win,
            pick,
            shift,
            bits,
            byte,
            last,
            fixed,
            over,
        })
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
        // `D`, and 16 spare words: a block's window stays inside.
        let chunks = self.lo.len();
        let mut d = [MaybeUninit::<u64>::uninit(); MAX_CHUNKS + 16];
        self.gather_segments(&tab, &mut d[..chunks]);
        d[chunks..chunks + 16]
            .iter_mut()
            .for_each(|w| _ = w.write(0));
        // `P`, and one spare word: a read at the last word's byte stays inside.
        let p_words = 8 * self.win.len();
        let mut s = [MaybeUninit::<u64>::uninit(); MAX_CHUNKS + 1];
        self.pad(&d[..chunks + 16], &mut s[..p_words]);
        s[p_words].write(0);
        let s = &s[..=p_words];
        if self.fixed {
            self.pass_all::<true>(parts, words, s);
        } else {
            self.pass_all::<false>(parts, words, s);
        }
    }

    /// Steps 3 and 4 with every part: those after the eighth in a pass of their own.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn pass_all<const FIXED: bool>(
        &self,
        parts: &[&[u32]],
        words: &mut [u32],
        s: &[MaybeUninit<u64>],
    ) {
        match parts {
            [] => self.pass_deposit::<0, FIXED>(&[], words, s),
            [a] => self.pass_deposit::<1, FIXED>(&[a], words, s),
            [a, b] => self.pass_deposit::<2, FIXED>(&[a, b], words, s),
            [a, b, c] => self.pass_deposit::<3, FIXED>(&[a, b, c], words, s),
            [a, b, c, d] => self.pass_deposit::<4, FIXED>(&[a, b, c, d], words, s),
            [a, b, c, d, e] => self.pass_deposit::<5, FIXED>(&[a, b, c, d, e], words, s),
            [a, b, c, d, e, f] => self.pass_deposit::<6, FIXED>(&[a, b, c, d, e, f], words, s),
            [a, b, c, d, e, f, g] => {
                self.pass_deposit::<7, FIXED>(&[a, b, c, d, e, f, g], words, s)
            }
            [a, b, c, d, e, f, g, h, rest @ ..] => {
                self.pass_deposit::<8, FIXED>(&[a, b, c, d, e, f, g, h], words, s);
                for p in rest {
                    for (w, &p) in words.iter_mut().zip(*p) {
                        *w |= p;
                    }
                }
            }
        }
    }

    /// Step 1: `D` into `s`, run of chunks by run, each looking up its own tables of `tab`.
    // Compiled apart from `expand_x86`: inlined there, it left the fused loop too few registers
    // (pointers reloaded from the stack every 512 bits: +0.06–0.1 µs with three parts).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
    #[inline(never)]
    unsafe fn gather_segments(
        &self,
        tab: &[(std::arch::x86_64::__m512i, std::arch::x86_64::__m512i); MAX_TABLES],
        s: &mut [MaybeUninit<u64>],
    ) {
        let mut start = 0usize;
        for &(end, used) in &self.segments {
            let end = end as usize;
            // The tables the segment looks up, in order (read from `tab` by the gather: a
            // copy of them per segment, 16 vector stores, cost 0.1 µs over Go's 27 segments:
            // the `deposit` bench's five tables went from 0.85–0.87 to 0.76–0.77 µs).
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

    /// From `D` (`d`: every chunk written, and 16 spare words) to `P` (`p`: every block),
    /// 64 bytes at a time: a byte permutation of the block's window of `D` gives each lane its
    /// 64 bits, and a multishift takes each byte's 8 bits from its lane.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vbmi")]
    unsafe fn pad(&self, d: &[MaybeUninit<u64>], p: &mut [MaybeUninit<u64>]) {
        use std::arch::x86_64::*;
        debug_assert_eq!(p.len(), 8 * self.win.len());
        let db = d.as_ptr().cast::<u8>();
        let out = p.as_mut_ptr();
        let blocks = self.win.iter().zip(&self.pick).zip(&self.shift);
        for (q, ((&w, pick), shift)) in blocks.enumerate() {
            // SAFETY: a window ends by 128 bytes past the last chunk (`build`: `w` is at most
            // the bytes of the chunks), inside `d`, all written; block `q` is words `8q..8q + 8`
            // of `p`.
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

    /// Steps 3 and 4 fused: per 512 bits of the mask, the OR of the `P` parts and of eight
    /// deposits from `s` (`P`, every block written, and the spare word), written once.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn pass_deposit<const P: usize, const FIXED: bool>(
        &self,
        parts: &[&[u32]; P],
        words: &mut [u32],
        s: &[MaybeUninit<u64>],
    ) {
        use std::arch::x86_64::*;
        debug_assert_eq!(s.len(), 8 * self.win.len() + 1);
        let sb = s.as_ptr().cast::<u8>();
        // SAFETY: `b` is a byte of `P` (`build`), so `b + 8` ≤ the bytes of `s` (`P` and its
        // spare word), all written.
        let dep = |b: usize, bits: u64| unsafe {
            _pdep_u64(sb.add(b).cast::<u64>().read_unaligned(), bits)
        };
        let n = words.len();
        let out = words.as_mut_ptr();
        let blocks = self.bits.len() / 8;
        // Where word `w`'s bits start in `P`.
        let at = |w: usize| if FIXED { 2 * w } else { self.byte[w] as usize };
        // SAFETY (reads and writes): block `i` is `u32` words `16i..16i + 16` ≤ `2 ×
        // bits.len()` ≤ `n`, within `words` and every part (`expand` checked their lengths).
        for i in 0..blocks {
            let bits = &self.bits[8 * i..8 * i + 8];
            let w = 8 * i;
            let mut v = _mm512_set_epi64(
                dep(at(w + 7), bits[7]) as i64,
                dep(at(w + 6), bits[6]) as i64,
                dep(at(w + 5), bits[5]) as i64,
                dep(at(w + 4), bits[4]) as i64,
                dep(at(w + 3), bits[3]) as i64,
                dep(at(w + 2), bits[2]) as i64,
                dep(at(w + 1), bits[1]) as i64,
                dep(at(w), bits[0]) as i64,
            );
            for p in parts {
                v = _mm512_or_si512(v, _mm512_loadu_si512(p.as_ptr().add(16 * i).cast()));
            }
            _mm512_storeu_si512(out.add(16 * i).cast(), v);
        }
        // The whole 64-bit words after the last block, then an odd last word.
        for w in 8 * blocks..self.bits.len() {
            let d = dep(at(w), self.bits[w]);
            for (j, word) in [2 * w, 2 * w + 1].into_iter().enumerate() {
                let v = parts.iter().fold(0, |v, p| v | p[word]);
                words[word] = v | (d >> (32 * j)) as u32;
            }
        }
        if n % 2 == 1 {
            let d = self
                .last
                .map_or(0, |(b, bits)| dep(b as usize, u64::from(bits)) as u32);
            words[n - 1] = parts.iter().fold(d, |v, p| v | p[n - 1]);
        }
        // With `P` at fixed places, the sparse tokens of the words of more than 16.
        for &(w, b, bits) in &self.over {
            let d = dep(b as usize, bits);
            let w = 2 * w as usize;
            words[w] |= d as u32;
            if w + 1 < n {
                words[w + 1] |= (d >> 32) as u32;
            }
        }
    }

    /// Step 1 for the chunks `start..end` of a segment that looks up the `T` tables
    /// `list[..T]` of `tab`: their words of `D` into `s`. Each slot is looked up in every
    /// table, and a tree of byte blends keeps its own table's byte, picked by the bits of its
    /// place in the list that `lo` and `bit` carry. Masking each lookup by the slots that take
    /// that table (masks read per chunk and table, as before) cost half as much again: 0.89
    /// against 0.59–0.64 ns per chunk of two tables in a microbenchmark.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
    unsafe fn gather<const T: usize>(
        &self,
        tab: &[(std::arch::x86_64::__m512i, std::arch::x86_64::__m512i); MAX_TABLES],
        list: &[u8; MAX_TABLES],
        start: usize,
        end: usize,
        s: &mut [MaybeUninit<u64>],
    ) {
        use std::arch::x86_64::*;
        if T == 0 {
            // No slot takes a byte (never built so, but cheap to be right).
            s[start..end].iter_mut().for_each(|w| _ = w.write(0));
            return;
        }
        let tab: [(__m512i, __m512i); T] = std::array::from_fn(|t| tab[list[t] as usize]);
        let place_bit_1 = _mm512_set1_epi8(0x40);
        let chunks = self.lo[start..end].iter().zip(&self.bit[start..end]);
        for ((lo, bit), out) in chunks.zip(&mut s[start..end]) {
            let idx = _mm512_loadu_si512(lo.as_ptr().cast());
            let bit = _mm512_loadu_si512(bit.as_ptr().cast());
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
        self.lo.len() * 128
            + self.segments.len() * 8
            + self.win.len() * 130
            + self.bits.len() * 8
            + self.byte.len() * 2
            + self.over.len() * 16
    }

    /// What the route costs beyond reading the parts, hot, in scattered runs (a
    /// read-modify-write of one mask word from a class's run list, about 1.4 ns hot): about
    /// 0.28 ns per 64-bit word (a deposit), per 64 slots of `P` about 0.13 ns plus 0.13 per
    /// table (and 0.07 per table looked up), and a setup worth 32 runs. The deposit and
    /// the setup were fitted to synthetic sets of Llama 3's size (6,337 sparse tokens in 82% of
    /// the words, or 2,380 in 30%; 1, 2 and 5 tables): 0.63–0.99 µs without parts, each part
    /// about 0.05–0.08 µs more; the gather's price was halved when its lookups became blends
    /// (see `build`).
    pub fn cost(&self) -> usize {
        32 + self.bits.len() / 5 + self.gather_cost
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

/// The mask of the `n` lowest bits of a `u8` (every bit from 8).
pub(super) fn low_bits(n: usize) -> u8 {
    if n >= 8 {
        u8::MAX
    } else {
        (1u8 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A word's tokens start at a byte of `P` (a word of 64 sparse tokens is one entry) and
    /// follow one another in `D`; an odd last word is written alone; tokens past 1,024 classes
    /// use later tables; a token list that is out of order or out of range gives no route.
    #[test]
    fn words_start_at_a_byte_and_the_last_word_is_apart() {
        // 4,000 tokens: 125 u32 words, the last one alone. Tokens 5 and 7 (word 0), 192..256
        // (word 3, all sparse), and one token in the last word.
        let mut tokens: Vec<(u32, u32)> = vec![(5, 9), (7, 1_100)];
        tokens.extend((192..256).map(|t| (t, t % 2000)));
        tokens.push((3_990, 1_500));
        let d = Deposit::build(125, 2_000, &tokens).expect("within the limits");
        assert_eq!(d.tables, 2);
        // In `P`: word 0 at byte 0, word 3 at bytes 1..9, the last word at byte 9; the 62
        // whole words have an entry each.
        assert_eq!(d.byte.len(), 62);
        assert_eq!((d.byte[0], d.bits[0]), (0, 1 << 5 | 1 << 7));
        assert_eq!((d.byte[3], d.bits[3]), (1, u64::MAX));
        assert_eq!(d.bits.iter().filter(|&&b| b != 0).count(), 2);
        assert_eq!(d.last, Some((9, 1 << (3_990 % 32))));
        // In `D`: slots 0 and 1, then 2..66, then 66: 67 slots, two chunks.
        assert_eq!(d.lo.len(), 2);
        assert_eq!(d.bit[0][1] & 0x3f, 8 + (1_100 % 8) as u8);
        // Chunk 0's slot 1 and chunk 1's slot 2 look up table 1, the others table 0.
        assert_eq!(places(&d, 0), [(1, 1)]);
        assert_eq!(places(&d, 1), [(2, 1)]);
        assert_eq!(d.lo[1][2] & 0x7f, (1_500 / 8 % 128) as u8);
        // One block of `P`: lane 0 (bytes 0..8) reads `D`'s bytes 0..8 from bit 0, lane 1
        // (bytes 8 and 9: slots 58..66 and 66) its bytes 7..15 from bit 56.
        assert_eq!(d.win, [0]);
        assert_eq!(
            d.pick[0][..16],
            [0, 1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12, 13, 14]
        );
        assert_eq!(d.shift[0][..10], [0, 2, 10, 18, 26, 34, 42, 50, 2, 10]);
        // Two tables: every chunk looks both up, in one run.
        assert_eq!(d.segments, [(2, 0b11)]);
        assert!(Deposit::build(125, MAX_TABLES * 1024 + 1, &tokens).is_none());
        // Tokens out of order, past the mask, or of a class past the set: no route.
        assert!(Deposit::build(125, 2_000, &[(7, 1), (5, 1)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(4_000, 1)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(5, 2_000)]).is_none());
        assert!(Deposit::build(125, 2_000, &[(5, 1_999)]).is_some());
        expands_exactly(125, &tokens);
    }

    /// A lane of `P` whose bits would overrun a 64-bit window of `D` from where they start
    /// starts at the next byte of `D` instead.
    #[test]
    fn a_lane_that_would_overrun_its_window_starts_at_a_byte() {
        // Word 0: 3 tokens; words 1 and 2: 64 each. Lane 0 of `P` (word 0, and 7 bytes of
        // word 1) takes slots 0..59; lane 1 (word 1's last byte, and 7 of word 2) holds 64
        // bits, so it starts at slot 64, not 59; lane 2 (word 2's last byte) at 128.
        let mut tokens: Vec<(u32, u32)> = (0..3).map(|t| (t, t)).collect();
        tokens.extend((64..192).map(|t| (t, t % 3_000)));
        let d = Deposit::build(40, 3_000, &tokens).expect("within the limits");
        assert_eq!(d.byte[..3], [0, 1, 9]);
        assert_eq!(d.lo.len(), 3);
        assert_eq!(
            d.pick[0][8..24],
            std::array::from_fn::<u8, 16, _>(|i| 8 + i as u8)
        );
        assert_eq!(d.shift[0][..3], [0, 3, 11]);
        assert_eq!(d.shift[0][8..17], [0, 8, 16, 24, 32, 40, 48, 56, 0]);
        // Slots 59..64 are no token's.
        assert!((59..64).all(|j| d.lo[0][j] == 0 && d.bit[0][j] == (j % 8 * 8) as u8));
        expands_exactly(40, &tokens);
    }

    /// Words are laid out in order; long runs of chunks that use the same tables are segments
    /// of their own, short ones merge; each slot carries its table's place in its segment's
    /// list; and (where the CPU runs the route) the expansion is every sparse token of the
    /// set's classes.
    #[test]
    fn runs_of_chunks_of_the_same_tables_are_segments() {
        // Words 0..2,560: a token of a class of table 0; words 2,560..5,120: of table 2; word
        // 5,120: tokens of classes 1,100 (table 1) and 5.
        let mut tokens: Vec<(u32, u32)> = (0..2_560).map(|w| (w * 64 + 3, w % 1_024)).collect();
        tokens.extend((2_560..5_120).map(|w| (w * 64 + 9, 2_048 + w % 900)));
        tokens.extend([(5_120 * 64, 1_100), (5_120 * 64 + 1, 5)]);
        let d = Deposit::build(10_242, 3_000, &tokens).expect("within the limits");
        assert_eq!(d.tables, 3);
        // Every word has a token: `P` at fixed places, and in `D` slot `w` is word `w`'s
        // (chunks 0..40 of table 0, 40..80 of table 2), then word 5,120's two.
        assert!(d.fixed);
        assert_eq!(d.lo.len(), 81);
        assert_eq!(d.segments, [(40, 0b001), (80, 0b100), (81, 0b011)]);
        assert_eq!(places(&d, 0), []);
        assert_eq!(places(&d, 40), []);
        // Slot 0 of chunk 80 (class 1,100) looks up the second of its segment's tables.
        assert_eq!(places(&d, 80), [(0, 1)]);
        // Chunks looking up one, one and two of three tables: 9, 9 and 10 in 21sts of a run,
        // priced for the 641 chunks that `P` would take with each word's bits from a byte of
        // their own (5,121 bytes).
        assert_eq!(d.gather_cost, (40 * 9 + 40 * 9 + 10) * 641 / 81 / 21);
        expands_exactly(10_242, &tokens);
        // The same with 64 words of each: three runs of one chunk are one segment, and chunk
        // 1 (tokens of table 2) finds it third in the list.
        let mut tokens: Vec<(u32, u32)> = (0..64).map(|w| (w * 64 + 3, w)).collect();
        tokens.extend((64..128).map(|w| (w * 64 + 9, 2_036 + w)));
        tokens.extend([(8_192, 1_100), (8_193, 5)]);
        let d = Deposit::build(260, 3_000, &tokens).expect("within the limits");
        assert_eq!(d.segments, [(3, 0b111)]);
        assert_eq!(places(&d, 0), []);
        let third: Vec<(usize, u8)> = (0..64).map(|j| (j, 2)).collect();
        assert_eq!(places(&d, 1), third);
        assert_eq!(places(&d, 2), [(0, 1)]);
        expands_exactly(260, &tokens);
        // A run of chunks that looks up two of three tables: the second in its list is table 2.
        let two_of_three = [(3, 5), (9, 2_100)];
        let d = Deposit::build(40, 3_000, &two_of_three).expect("within the limits");
        assert_eq!(d.segments, [(1, 0b101)]);
        assert_eq!(places(&d, 0), [(1, 1)]);
        expands_exactly(40, &two_of_three);
    }

    /// Where at least 7 in 8 words have sparse tokens and at most 1 in 16 more than 16, each
    /// word's first 16 start at byte `2w` of `P` (an odd last word's too) and the others of a
    /// word of more than 16 follow `P`'s fixed places; elsewhere each word's bytes follow the
    /// last word's.
    #[test]
    fn dense_words_take_fixed_places() {
        // 32 64-bit words and an odd last one: word `w` has `w % 5 + 1` tokens, word 3 has 40
        // and word 9 none; the last word 20 (at bits 0..20). Every other token is of a class in
        // the set that `expands_exactly` expands.
        let mut tokens: Vec<(u32, u32)> = Vec::new();
        for w in 0..32u32 {
            let n = match w {
                3 => 40,
                9 => 0,
                _ => w % 5 + 1,
            };
            // Every other token of class 1,100, in the set `expands_exactly` expands.
            tokens
                .extend((0..n).map(|i| (w * 64 + i, [(w * 7 + i) % 2_000, 1_100][i as usize % 2])));
        }
        tokens.extend((0..20).map(|i| (32 * 64 + i, [1_000 + i, 1_500][i as usize % 2])));
        let d = Deposit::build(65, 2_000, &tokens).expect("within the limits");
        assert!(d.fixed);
        assert!(d.byte.is_empty());
        // Word 3's first 16 tokens in place, its other 24 after the 66 bytes of fixed places
        // (three bytes); the last word's 20 tokens in place, 4 of them after word 3's.
        assert_eq!(d.bits[3], 0xffff);
        assert_eq!(d.bits[4], 0b11111);
        assert_eq!(d.bits[9], 0);
        assert_eq!(d.last, Some((64, 0xffff)));
        assert_eq!(d.over, [(3, 66, 0xff_ffff << 16), (32, 69, 0xf << 16)]);
        // A byte of `P` per lane position: word 1's first byte is `P`'s byte 2, whose bits
        // start where word 0's one token ends.
        assert_eq!(d.shift[0][2], 1);
        expands_exactly(65, &tokens);
        // Two words in 16 of more than 16 tokens: each word's bytes follow the last word's.
        let many: Vec<(u32, u32)> = (0..16u32)
            .flat_map(|w| {
                let n = if w < 2 { 17 } else { 1 };
                (0..n).map(move |i| (w * 64 + i, w + i))
            })
            .collect();
        let d = Deposit::build(32, 2_000, &many).expect("within the limits");
        assert!(!d.fixed);
        assert_eq!(d.byte[..4], [0, 3, 6, 7]);
        assert!(d.over.is_empty());
        expands_exactly(32, &many);
        // A vocabulary whose fixed places would not fit `P` (9,000 64-bit words, a token in
        // each): the same.
        let long: Vec<(u32, u32)> = (0..9_000u32).map(|w| (w * 64 + 5, w % 2_000)).collect();
        let d = Deposit::build(18_000, 2_000, &long).expect("within the limits");
        assert!(!d.fixed);
        expands_exactly(18_000, &long);
        // Three words in 16 without tokens: the same.
        let sparse: Vec<(u32, u32)> = (3..16u32).map(|w| (w * 64, w)).collect();
        let d = Deposit::build(32, 2_000, &sparse).expect("within the limits");
        assert!(!d.fixed);
        assert_eq!(d.byte[..5], [0, 0, 0, 0, 1]);
        expands_exactly(32, &sparse);
    }

    /// The slots of `chunk` that look up a table other than their segment's first, and its
    /// place in the segment's list (from the bits `lo` and `bit` carry).
    fn places(d: &Deposit, chunk: usize) -> Vec<(usize, u8)> {
        (0..64)
            .map(|j| (j, d.lo[chunk][j] >> 7 | d.bit[chunk][j] >> 6 << 1))
            .filter(|&(_, place)| place != 0)
            .collect()
    }

    /// Runs of chunks merge into a segment where the segments saved cost more than the
    /// lookups added, and stay apart where not.
    #[test]
    fn short_runs_of_chunks_merge_into_segments() {
        // Three short runs merge (one segment and eight chunks of two lookups: 30 + 8 × 5,
        // against 90 + 8 × 4); the long run after them stays apart (merged: 100 more lookups).
        let tables: Vec<u8> = [1, 1, 1, 2, 2, 1, 1, 1]
            .into_iter()
            .chain([4; 100])
            .collect();
        assert_eq!(merge_runs(&tables), [(8, 0b011), (108, 0b100)]);
        // A run of one chunk between two long ones stays apart: merged into either, it would
        // add 100 lookups to save a segment.
        let tables: Vec<u8> = [1; 100].into_iter().chain([3]).chain([1; 100]).collect();
        assert_eq!(merge_runs(&tables), [(100, 1), (101, 3), (201, 1)]);
        assert_eq!(merge_runs(&[]), []);
        assert_eq!(merge_runs(&[5]), [(1, 5)]);
    }

    /// Where the CPU runs the route: the expansion of `tokens` (over `word_len` mask words
    /// and 3,000 classes) is every token of a set's classes.
    fn expands_exactly(word_len: usize, tokens: &[(u32, u32)]) {
        let mut set = vec![0u64; 3_000usize.div_ceil(64)];
        for c in [1usize, 5, 7, 1_100, 1_500, 2_100, 2_103, 2_115] {
            set[c / 64] |= 1 << (c % 64);
        }
        assert_eq!(
            expansion(word_len, tokens, &set, &[]),
            naive(word_len, tokens, &set, &[])
        );
    }

    /// The route's expansion of `set` with `parts`, or the naive one where the CPU lacks it.
    fn expansion(
        word_len: usize,
        tokens: &[(u32, u32)],
        set: &[u64],
        parts: &[&[u32]],
    ) -> Vec<u32> {
        let Some(d) = Deposit::new(word_len, set.len() * 64, tokens) else {
            return naive(word_len, tokens, set, parts);
        };
        let mut words = vec![u32::MAX; word_len];
        d.expand(set, parts, &mut words);
        words
    }

    fn naive(word_len: usize, tokens: &[(u32, u32)], set: &[u64], parts: &[&[u32]]) -> Vec<u32> {
        let mut want = vec![0u32; word_len];
        for p in parts {
            want.iter_mut().zip(*p).for_each(|(w, &p)| *w |= p);
        }
        for &(t, c) in tokens {
            if set[c as usize / 64] >> (c % 64) & 1 == 1 {
                want[t as usize / 32] |= 1 << (t % 32);
            }
        }
        want
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random layouts (words of 1 to 64 sparse tokens, up to eight tables, an odd or even
        /// number of mask words, with tokens in an odd last word or not, parts or none; or
        /// every word with tokens, mostly 16 or fewer, for `P` at fixed places): the tables
        /// fit `P`, and where the CPU runs the route it writes the parts and every sparse
        /// token of the set's classes, and nothing else.
        #[test]
        fn the_route_expands_exactly(
            words in proptest::collection::vec((0u32..4, 1u32..=64), 1..300),
            classes in 1usize..=MAX_TABLES * 1024,
            odd in any::<bool>(),
            dense in any::<bool>(),
            parts in 0usize..4,
            seed in any::<u64>(),
        ) {
            let mut x = seed | 1;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            // Each entry: skip a few 64-bit words, then a word with that many sparse tokens.
            let mut tokens = Vec::new();
            let mut w = 0u32;
            for &(skip, n) in &words {
                let (skip, n) = match dense {
                    true if n < 62 => (0, 1 + n % 16),
                    true => (0, n),
                    false => (skip, n),
                };
                w += skip;
                let mut at: Vec<u32> = (0..64).collect();
                for i in 0..n as usize {
                    let j = i + next() as usize % (64 - i);
                    at.swap(i, j);
                }
                let mut at = at[..n as usize].to_vec();
                at.sort_unstable();
                tokens.extend(at.iter().map(|&b| (w * 64 + b, (next() % classes as u64) as u32)));
                w += 1;
            }
            // An odd last `u32` word, with some tokens.
            if odd {
                let n = next() % if dense { 33 } else { 4 };
                let mut at: Vec<u32> = (0..n as u32).map(|i| 7 * i % 32).collect();
                at.sort_unstable();
                tokens.extend(at.iter().map(|&b| (w * 64 + b, (next() % classes as u64) as u32)));
            }
            let word_len = 2 * w as usize + usize::from(odd);
            let set: Vec<u64> = (0..classes.div_ceil(64)).map(|_| next()).collect();
            let parts: Vec<Vec<u32>> = (0..parts)
                .map(|_| (0..word_len).map(|_| next() as u32 & next() as u32).collect())
                .collect();
            let parts: Vec<&[u32]> = parts.iter().map(|p| &p[..]).collect();
            let Some(d) = Deposit::build(word_len, set.len() * 64, &tokens) else {
                return Err(TestCaseError::fail("within the limits"));
            };
            prop_assert!(d.lo.len() <= d.win.len() * 8);
            prop_assert_eq!(
                expansion(word_len, &tokens, &set, &parts),
                naive(word_len, &tokens, &set, &parts)
            );
        }
    }
}
