//! Expanding a set of token classes into mask words at a cost that does not depend on the set:
//! the precomputed masks of the big classes ORed in one pass, and every member of the other
//! (*sparse*) classes at once.
//!
//! Walking the sparse classes run by run costs one scattered read-modify-write per run of the
//! classes in the set (or missing from it): a set that holds about half of thousands of sparse
//! classes (Java with Llama 3) pays thousands of them, mostly in mispredicted loop exits and,
//! when the run tables are cold, random reads. This route reads its tables in order, costs
//! about the same for every set, and has four steps:
//!
//! 1. **Gather.** The sparse tokens each take their class's bit of the set, 64 at a time:
//!    AVX-512 VBMI byte permutations look up each token's byte of the set (at most
//!    [`MAX_TABLES`] tables of 128 bytes), a tree of byte blends keeps each token's own table's
//!    byte (picked by bits the lookups ignore), and one AVX-512 BITALG bit shuffle picks the
//!    bit out of each byte. The result is `D`, one bit per sparse token, the tokens of each
//!    group of words (step 4) one after another, in the order of their rotated bits. A segment
//!    of chunks looks up only the tables its tokens use: classes are numbered by their lowest
//!    member, so the one-token classes of nearby words (most sparse tokens) are in the same
//!    table. Short runs merge into segments (`merge_runs`). Blending the lookups costs less
//!    than masking each by the slots that take its table (a mask read per chunk and table).
//! 2. **Pad.** `D` becomes `P`, where each group's bits start at a byte (a lane of 8 bytes
//!    each), 64 bytes at a time: a byte permutation gives each 64-bit lane its window of `D`
//!    (the build makes every lane's bits fit one window that starts at a byte), and a VBMI
//!    multishift takes each byte's 8 bits from it. Gathering `P` directly would gather its
//!    padding too (slots that look nothing up, up to seven per group): many more chunks where
//!    groups hold few tokens, as they mostly do.
//! 3. **Pass.** The caller's precomputed masks (*parts*) are ORed, 512 bits at a time.
//! 4. **Deposit.** The words of each block of eight (512 bits of the mask) are put in few
//!    *groups* whose bits, each word's rotated by some amount, are disjoint (`group_words`:
//!    most blocks of a real vocabulary's sparse tokens need one to three). A group's tokens
//!    are gathered in the order of their rotated bits, into a lane of `P` that starts at a
//!    byte, and one BMI2 `pdep` puts them all at the group's rotated bits. Each word's lane
//!    takes its group's deposit (a masked broadcast), rotates it back and keeps its own bits,
//!    eight words at once. Steps 3 and 4 are one loop: per 512 bits, the block's deposits and
//!    the parts, written once; the blocks are taken pass by pass, those of the same number of
//!    groups together, so the loop over a pass's groups is unrolled.
//!
//! Without parts the fused loop is bound by its `pdep`s and by the moves of their results into
//! vector registers, about one of each per cycle: the groups make that one per group rather
//! than one per word. Reading `D` at a bit offset per word instead of padding it would add a
//! shift per word to that loop, which costs more than the pad. Writing the deposits as scalars
//! and ORing the parts in a second pass is slower, and so is storing a block's deposits to a
//! buffer and reading them back as one vector (the read waits for the stores). The loop over a
//! pass's blocks and the gather are compiled apart from the rest (`blocks`,
//! `gather_segments`): inlined, they leave too few registers, and the parts' pointers are
//! reloaded from the stack every block.
//!
//! Per call, on synthetic layouts of Llama 3's size: about 0.4 µs without parts, 0.65 µs with
//! three (`DEPOSIT_MIN_ONLY=1 cargo bench -p munch-tokens --bench deposit`).
//!
//! No crate offers this; it is written here for x86-64 and taken only where the CPU has AVX-512
//! F, BW, VBMI and BITALG and BMI2 (detected at run time by [`supported`]). Elsewhere
//! [`Deposit::new`] gives `None` and the caller walks the runs.
//!
//! # Safety
//!
//! The kernels are in [`crate::x86_64`], the crate's one module that may hold unsafe code:
//! `#[target_feature]` functions, safe ones where they touch memory through slices only (the
//! gather), `unsafe fn`s where they read and write through pointers at the offsets `build`
//! lays out, each with the contract its callers keep. [`Deposit::expand`] and
//! [`Deposit::pass`] are safe: a `Deposit` exists only where [`supported`] holds, and they
//! check the lengths of the mask and of the parts. The tests compare the route with a naive
//! expansion where the CPU runs it, and say on the terminal that they skipped it elsewhere.

/// The most 128-byte tables of class-set bytes, so at most `MAX_TABLES * 1024` classes.
pub const MAX_TABLES: usize = 8;
/// The most 64-bit words of `P` (and so of `D`, no longer): both live on the stack, 16 KiB
/// each.
pub(crate) const MAX_CHUNKS: usize = 2048;

/// The precomputed tables of the route for one vocabulary and one numbering of classes (see
/// the module docs).
///
/// Outside this module a `Deposit` comes only from [`Deposit::new`], which checks
/// [`supported`]: holding one means the CPU runs the route, which is how [`Deposit::expand`]
/// and [`Deposit::pass`] are safe. Its tables never change after `build`, so the offsets the
/// kernels read and write through pointers are those `build` checked.
#[derive(Clone, Debug, PartialEq, Eq)]
// Elsewhere than x86-64 a `Deposit` is never built, so the route's tables are never read.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub struct Deposit {
    /// `u32` words of the mask.
    pub(crate) word_len: usize,
    /// 128-byte tables of the set's bytes that the gather looks up.
    pub(crate) tables: usize,
    /// Per chunk of 64 slots: each slot's byte of the set within its table (bits 0 to 6), and
    /// bit 0 of its table's place in its segment's list (bit 7, which the lookup ignores).
    pub(crate) lo: Vec<[u8; 64]>,
    /// Per chunk: the bit each slot takes, `(j % 8) * 8 + class % 8` (bits 0 to 5: slot `j` of
    /// the chunk finds its byte at byte `j % 8` of its 64-bit lane), and bits 1 and 2 of its
    /// table's place in the list (bits 6 and 7, which the bit shuffle ignores). Slots skipped
    /// to fit a lane's window take whatever they find: their bits reach no word.
    pub(crate) bit: Vec<[u8; 64]>,
    /// Runs of chunks that look up the same tables: `(end chunk, bit t: table t)`, in order.
    pub(crate) segments: Vec<(u32, u8)>,
    /// What the gather costs, in the units of [`Deposit::cost`].
    pub(crate) gather_cost: usize,
    /// Per block of 64 bytes of `P`: the byte of `D` where the block's 128-byte window
    /// starts, the window's byte that each of the block's bytes reads (eight per lane: the
    /// lane's 64 bits of `D`), and the bit of that lane where each byte of `P` starts.
    pub(crate) win: Vec<u16>,
    pub(crate) pick: Vec<[u8; 64]>,
    pub(crate) shift: Vec<[u8; 64]>,
    /// The blocks of eight 64-bit mask words (512 bits), pass by pass: `(groups, end)`, the
    /// blocks `blk[previous end..end]` each sharing `groups` deposits (see `build`). A last
    /// block of fewer words (or with an odd last `u32` word) is not in a pass but after them
    /// (`tail`: its groups).
    pub(crate) passes: Vec<(u8, u32)>,
    pub(crate) tail: Option<u8>,
    /// Per block in pass order: its index, the rotation of each of its words' bits in their
    /// group, and each word's sparse tokens' bits.
    pub(crate) blk: Vec<u16>,
    pub(crate) rot: Vec<[u8; 8]>,
    pub(crate) mask: Vec<[u64; 8]>,
    /// Per group in pass order (a block's groups one after another): the OR of its words'
    /// rotated bits (where the deposit puts the group's bits, in order), and its words (bit
    /// `k`: word `k` of the block). Group `l`'s bits are lane `l` of `P` (bytes `8l..8l + 8`).
    pub(crate) comb: Vec<u64>,
    pub(crate) lanes: Vec<u8>,
}

/// What a segment of the gather costs beyond its chunks, and what a chunk costs beyond its
/// lookups, in lookups (one table's byte permutation and blend per chunk): timed, a chunk
/// costs about 0.45 ns, a lookup 0.14 and a segment about 5 ns (what is left of the gather's
/// time on Llama 3 × Go's classes, unmerged, once its chunks' lookups are counted).
const SEGMENT_COST: usize = 30;
const CHUNK_COST: usize = 3;

/// How the words of a block share deposits: `groups` of them; word `k` is in group
/// `group[k]`, where its bits are rotated left by `rot[k]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Grouping {
    groups: u8,
    group: [u8; 8],
    rot: [u8; 8],
}

/// Few groups of the words whose sparse tokens' bits are `masks` (at most 8) such that in
/// each group the words' bits, each rotated, fall on different bits: one `pdep` then deposits
/// a whole group, and each word takes its bits back by a rotation and its mask. The fewest
/// groups for which a first fit succeeds (the words with the most tokens first, each in the
/// first group and at the least rotation where it fits): not always the fewest possible.
fn group_words(masks: &[u64]) -> Grouping {
    let mut order: Vec<usize> = (0..masks.len()).filter(|&k| masks[k] != 0).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(masks[k].count_ones()), k));
    let mut grouping = Grouping {
        groups: 0,
        group: [0; 8],
        rot: [0; 8],
    };
    // With a group per word every word fits (at rotation 0), so the search ends there.
    'groups: for groups in 1..=order.len() {
        let mut used = [0u64; 8];
        for &k in &order {
            let fit = (0..groups).find_map(|g| {
                (0..64u32)
                    .find(|&r| masks[k].rotate_left(r) & used[g] == 0)
                    .map(|r| (g, r))
            });
            let Some((g, r)) = fit else {
                continue 'groups;
            };
            used[g] |= masks[k].rotate_left(r);
            grouping.group[k] = g as u8;
            grouping.rot[k] = r as u8;
        }
        grouping.groups = groups as u8;
        break;
    }
    grouping
}

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

/// Whether this CPU runs the route: AVX-512 F, BW, VBMI and BITALG and BMI2, detected at run
/// time (the standard library caches the detection).
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
    /// Expanding with its result is sound only where [`supported`] holds.
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
        if whole.div_ceil(8) > 1 << 16 {
            // Blocks are numbered in 16 bits (a vocabulary of 33 million tokens).
            return None;
        }
        let mut per_word = vec![(0usize, 0usize); whole];
        for (i, &(t, _)) in tokens.iter().enumerate() {
            let (first, n) = &mut per_word[t as usize / 64];
            if *n == 0 {
                *first = i;
            }
            *n += 1;
        }
        let masks: Vec<u64> = per_word
            .iter()
            .map(|&(first, n)| {
                tokens[first..first + n]
                    .iter()
                    .fold(0u64, |b, &(t, _)| b | 1 << (t % 64))
            })
            .collect();
        // Per block of eight words (the loop's 512 bits), few groups whose words' bits, each
        // rotated, are disjoint (`group_words`): a `pdep` per group rather than per word.
        // Llama 3 × Go's 251 blocks need one group in 94, two in 122, three in 28 (Java: 170,
        // 63, 12; Gemma 3 × Java: one in 496 of 513). The blocks are taken pass by pass, those
        // of one group count together, and a last block of fewer words after them.
        let block_len = whole.div_ceil(8);
        let groupings: Vec<Grouping> = (0..block_len)
            .map(|b| group_words(&masks[8 * b..(8 * b + 8).min(whole)]))
            .collect();
        let whole_blocks = word_len / 16;
        let mut in_order: Vec<usize> = (0..whole_blocks).collect();
        in_order.sort_by_key(|&b| groupings[b].groups);
        let mut passes: Vec<(u8, u32)> = Vec::new();
        for (i, &b) in in_order.iter().enumerate() {
            let g = groupings[b].groups;
            match passes.last_mut() {
                Some((groups, end)) if *groups == g => *end = i as u32 + 1,
                _ => passes.push((g, i as u32 + 1)),
            }
        }
        let tail = (whole_blocks < block_len).then(|| groupings[whole_blocks].groups);
        in_order.extend(whole_blocks..block_len);
        // `P`: a lane of 8 bytes per group, in pass order: its words' tokens in the order of
        // their rotated bits (`order`: indices in `tokens`), 8 per byte (per byte of `P`, the
        // first's index in `order`, and how many).
        let mut order: Vec<usize> = Vec::with_capacity(tokens.len());
        let mut p_bytes: Vec<(usize, usize)> = Vec::new();
        let (mut blk, mut rot, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        let (mut comb, mut lanes) = (Vec::new(), Vec::new());
        for &b in &in_order {
            let grouping = &groupings[b];
            let words = 8 * b..(8 * b + 8).min(whole);
            blk.push(b as u16);
            rot.push(grouping.rot);
            mask.push(std::array::from_fn(|k| {
                masks.get(8 * b + k).copied().unwrap_or(0)
            }));
            for g in 0..grouping.groups {
                let mut group: Vec<(u32, usize)> = Vec::new();
                let (mut bits, mut members) = (0u64, 0u8);
                for (k, w) in words.clone().enumerate() {
                    if grouping.group[k] == g && masks[w] != 0 {
                        let r = u32::from(grouping.rot[k]);
                        let (first, n) = per_word[w];
                        group.extend((first..first + n).map(|i| ((tokens[i].0 % 64 + r) % 64, i)));
                        bits |= masks[w].rotate_left(r);
                        members |= 1 << k;
                    }
                }
                group.sort_unstable();
                let start = order.len();
                order.extend(group.iter().map(|&(_, i)| i));
                let n = group.len();
                p_bytes.extend(
                    (0..64)
                        .step_by(8)
                        .map(|i| (start + i.min(n), n.saturating_sub(i).min(8))),
                );
                comb.push(bits);
                lanes.push(members);
            }
        }
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
            for (slot, &i) in (at..).zip(&order[first..first + n]) {
                let class = tokens[i].1;
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
        // up) / 21. At twice that, some of the trie masker's real Java masks with Llama 3
        // walked their runs cold instead, at 2–3.5 µs (`EXPAND_SETS`, see `benches/expand.rs`).
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
            // Priced per chunk of `P` as if each word's bits started at a byte of their own
            // (`packed_bytes`), not per chunk of `D`: the callers' choice between ways is
            // fitted to that price; at the lower one, Gemma 3 × Java's random half took the
            // route and ran slower (`cargo bench -p munch-tokens --bench expand`).
            gather_cost: gather_cost * packed_bytes.div_ceil(8) / chunks.max(1) / 21,
            win,
            pick,
            shift,
            passes,
            tail,
            blk,
            rot,
            mask,
            comb,
            lanes,
        })
    }

    /// Writes the expansion of `set` (a class bitset): the OR of `parts` (each a mask of
    /// `words.len()` words: the dense units' precomputed subsets) and the members of the
    /// sparse classes in `set`.
    ///
    /// # Panics
    /// If `words` is not the mask the route was built for, or a part is shorter.
    pub fn expand(&self, set: &[u64], parts: &[&[u32]], words: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        crate::x86_64::deposit_expand(self, set, parts, words);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (set, parts, words);
            unreachable!("a Deposit is only built on x86-64")
        }
    }

    /// Writes the OR of `parts` (masks at least as long as `words`) into `words`, 512 bits at
    /// a time (the pass of [`Deposit::expand`], for the other routes).
    pub fn pass(&self, parts: &[&[u32]], words: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        crate::x86_64::deposit_pass(self, parts, words);
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
            + self.blk.len() * 74
            + self.comb.len() * 9
            + self.passes.len() * 8
    }

    /// What the route costs beyond reading the parts, hot, in scattered runs (a
    /// read-modify-write of one mask word from a class's run list, about 1.4 ns hot): about
    /// 0.28 ns per 64-bit word (a deposit), per 64 slots of `P` about 0.13 ns plus 0.13 per
    /// table (and 0.07 per table looked up), and a setup worth 32 runs, fitted to the
    /// synthetic layouts of `cargo bench -p munch-tokens --bench deposit` (the gather's part is
    /// `build`'s price). The price per word stays that of a `pdep` per word although the groups
    /// deposit several words at once: at half of it, the weighted automaton takes the route
    /// more often, and its traces get no faster.
    pub fn cost(&self) -> usize {
        32 + self.word_len / 10 + self.gather_cost
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
pub(super) mod tests {
    use super::*;
    use crate::kernels::say_skipped;
    use proptest::prelude::*;

    /// Why the route's tests compare nothing where [`supported`] is false.
    pub(crate) const LACKS: &str = "this CPU lacks AVX-512 F/BW/VBMI/BITALG or BMI2";

    /// Each group of a block's words takes a lane of `P` (its tokens in the order of their
    /// rotated bits); blocks are taken pass by pass, by their groups; a last block of fewer
    /// words comes after the passes; tokens past 1,024 classes use later tables; a token list
    /// that is out of order or out of range gives no route.
    #[test]
    fn groups_take_a_lane_each_and_the_last_block_is_apart() {
        // 4,000 tokens: 125 u32 words (62 64-bit words and an odd one), seven whole blocks and
        // a last one of seven words. Tokens 5 and 7 (word 0), 192..256 (word 3, all sparse),
        // and one token in the last word.
        let mut tokens: Vec<(u32, u32)> = vec![(5, 9), (7, 1_100)];
        tokens.extend((192..256).map(|t| (t, t % 2000)));
        tokens.push((3_990, 1_500));
        let d = Deposit::build(125, 2_000, &tokens).expect("within the limits");
        assert_eq!(d.tables, 2);
        // Blocks 1..7 have no tokens (a pass of no deposits); block 0 two groups (word 3's
        // bits cover the word); the last block, 7, one group.
        assert_eq!(d.passes, [(0, 6), (2, 7)]);
        assert_eq!(d.tail, Some(1));
        assert_eq!(d.blk, [1, 2, 3, 4, 5, 6, 0, 7]);
        assert_eq!(d.comb, [u64::MAX, 1 << 5 | 1 << 7, 1 << (3_990 % 64)]);
        assert_eq!(d.lanes, [1 << 3, 1 << 0, 1 << (62 - 56)]);
        assert_eq!(d.mask[6][3], u64::MAX);
        // In `D`: word 3's 64 tokens, then word 0's two, then the last word's: 67 slots, two
        // chunks, the second looking up table 1 for classes 1,100 and 1,500.
        assert_eq!(d.lo.len(), 2);
        assert_eq!(places(&d, 0), []);
        assert_eq!(places(&d, 1), [(1, 1), (2, 1)]);
        assert_eq!(d.bit[1][1] & 0x3f, 8 + (1_100 % 8) as u8);
        assert_eq!(d.lo[1][2] & 0x7f, (1_500 / 8 % 128) as u8);
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
        // Word 0: 3 tokens (block 0); word 8: 64 (block 1). Lane 0 of `P` takes slots 0..3;
        // lane 1 holds 64 bits, so it starts at slot 8, not 3.
        let mut tokens: Vec<(u32, u32)> = (0..3).map(|t| (t, t)).collect();
        tokens.extend((512..576).map(|t| (t, t % 3_000)));
        let d = Deposit::build(40, 3_000, &tokens).expect("within the limits");
        assert_eq!(d.passes, [(1, 2)]);
        assert_eq!(d.tail, Some(0));
        assert_eq!(d.lo.len(), 2);
        assert_eq!(d.pick[0][8..16], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(d.shift[0][..2], [0, 3]);
        assert_eq!(d.shift[0][8..16], [0, 8, 16, 24, 32, 40, 48, 56]);
        // Slots 3..8 are no token's.
        assert!((3..8).all(|j| d.lo[0][j] == 0 && d.bit[0][j] == (j % 8 * 8) as u8));
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
        // Each block's eight tokens are one group, at rotations 0..8 in word order: in `D` slot
        // `w` is word `w`'s (chunks 0..40 of table 0, 40..80 of table 2), then word 5,120's two
        // (the last block, after the pass).
        assert_eq!((d.passes.clone(), d.tail), (vec![(1, 640)], Some(1)));
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

    /// Words whose rotated bits are disjoint share a group; a word that covers its 64 bits
    /// takes one of its own; every word's rotated bits are disjoint from its group's others.
    #[test]
    fn words_share_deposits_in_groups() {
        let none = Grouping {
            groups: 0,
            group: [0; 8],
            rot: [0; 8],
        };
        assert_eq!(group_words(&[0, 0, 0]), none);
        // Disjoint bits: one group, no rotation.
        let g = group_words(&[0b1, 0b10, 0, 0b1100]);
        assert_eq!((g.groups, g.group, g.rot), (1, [0; 8], [0; 8]));
        // The same bit in two words: the second (by tokens, then place) rotated by one.
        let g = group_words(&[0b1, 0b1]);
        assert_eq!((g.groups, g.rot[..2].to_vec()), (1, vec![0, 1]));
        // A word of 64 tokens is a group alone; eight of them, eight groups.
        let g = group_words(&[0b1, u64::MAX, 0b110]);
        assert_eq!((g.groups, g.group[..3].to_vec()), (2, vec![1, 0, 1]));
        let g = group_words(&[u64::MAX; 8]);
        assert_eq!((g.groups, g.group), (8, [0, 1, 2, 3, 4, 5, 6, 7]));
        // Two words of 40 tokens cannot share 64 bits.
        let forty = (1u64 << 40) - 1;
        assert_eq!(group_words(&[forty, forty << 3]).groups, 2);
        // In a block: one group of four words, each rotated where it fits.
        let tokens: Vec<(u32, u32)> = [0u32, 1, 64, 65, 128, 129, 192]
            .iter()
            .map(|&t| (t, t % 1_000))
            .collect();
        let d = Deposit::build(16, 1_000, &tokens).expect("within the limits");
        assert_eq!((d.passes.clone(), d.tail), (vec![(1, 1)], None));
        assert_eq!(d.rot[0][..4], [0, 2, 4, 6]);
        assert_eq!(d.comb, [0x7f]);
        assert_eq!(d.lanes, [0b1111]);
        expands_exactly(16, &tokens);
    }

    /// `group_words` on random words: every word in a group, rotated bits disjoint within a
    /// group, at most one group per word.
    fn check_grouping(masks: &[u64]) -> Result<(), TestCaseError> {
        let g = group_words(masks);
        let words = masks.iter().filter(|&&m| m != 0).count();
        prop_assert!(usize::from(g.groups) <= words);
        prop_assert_eq!(g.groups == 0, words == 0);
        let mut used = [0u64; 8];
        for (k, &m) in masks.iter().enumerate() {
            if m != 0 {
                let (grp, r) = (usize::from(g.group[k]), u32::from(g.rot[k]));
                prop_assert!(grp < usize::from(g.groups));
                prop_assert_eq!(used[grp] & m.rotate_left(r), 0);
                used[grp] |= m.rotate_left(r);
            }
        }
        Ok(())
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
        if let Some(words) = expansion(word_len, tokens, &set, &[]) {
            assert_eq!(words, naive(word_len, tokens, &set, &[]));
        }
    }

    /// The route's expansion of `set` with `parts` (the layout within the limits), where the
    /// CPU runs it; elsewhere `None`, and the test says it skipped the comparison.
    fn expansion(
        word_len: usize,
        tokens: &[(u32, u32)],
        set: &[u64],
        parts: &[&[u32]],
    ) -> Option<Vec<u32>> {
        if !supported() {
            say_skipped("the route", LACKS);
            return None;
        }
        let d = Deposit::new(word_len, set.len() * 64, tokens).expect("within the limits");
        let mut words = vec![u32::MAX; word_len];
        d.expand(set, parts, &mut words);
        Some(words)
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
        /// Words of random bits, dense, sparse, empty or full: see `check_grouping`.
        #[test]
        fn groups_hold_disjoint_rotated_bits(
            masks in proptest::collection::vec(
                prop_oneof![
                    any::<u64>(),
                    any::<u64>().prop_map(|x| x & x >> 13 & x >> 29),
                    any::<u64>().prop_map(|x| x & x >> 1 & x >> 7 & x >> 19 & x >> 37),
                    Just(0u64),
                    Just(u64::MAX),
                ],
                1..=8,
            ),
        ) {
            check_grouping(&masks)?;
        }

        /// Random layouts (words of 1 to 64 sparse tokens, up to eight tables, an odd or even
        /// number of mask words, with tokens in an odd last word or not, parts or none; or
        /// every word with tokens, mostly 16 or fewer): the tables fit `P`, and where the CPU
        /// runs the route it writes the parts and every sparse token of the set's classes,
        /// and nothing else (elsewhere the test says that it skipped this).
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
            if let Some(words) = expansion(word_len, &tokens, &set, &parts) {
                prop_assert_eq!(words, naive(word_len, &tokens, &set, &parts));
            }
        }
    }
}
