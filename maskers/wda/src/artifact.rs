//! Saving and loading the compiled tables.
//!
//! # Format (version 2)
//!
//! ```text
//! magic    8 bytes   "MUNCHWDA"
//! version  u32 LE    2 (version 2 added the end-of-sequence start state and block)
//! checksum 32 bytes  SHA-256 of everything after it
//! vocab    u64 LE    Vocabulary::fingerprint of the vocabulary it was built for
//! grammar  u64 LE    grammar_fingerprint of the parser it was built for
//! payload            the tables: scalars as u32 LE, arrays as (u64 LE length, elements)
//! ```
//!
//! Loading reads the whole stream, checks the magic, the version, the checksum (corruption),
//! then the fingerprints (a file for another vocabulary or grammar), then parses the payload
//! with every length and id checked against the others, so that even a file whose checksum was
//! forged cannot make a mask index out of range: every failure is a [`WdaLoadError`].

use std::io::{Read, Write};

use munch_glr::lr::{Action, LrState};
use munch_glr::parser::Parser;
use munch_lexer::{LexState, TerminalId};
use sha2::{Digest, Sha256};

use crate::dwa::Dwa;
use crate::error::{LoadKind, WdaLoadError};

const MAGIC: &[u8; 8] = b"MUNCHWDA";
/// The format version this crate writes and reads.
pub(crate) const VERSION: u32 = 2;
const HEADER: usize = 8 + 4 + 32;
/// The most (LR state, lookahead) pairs whose actions the grammar fingerprint hashes one by
/// one; past it, as stored.
const PAIRWISE_FINGERPRINT: usize = 1 << 22;

/// A stable hash of everything the masker's tables depend on in `parser`: the lexer (byte
/// classes, transitions, accepted terminals, growth, the inhibited branches' first bytes,
/// reachable sets), the ignored terminals and
/// the LR tables (actions and gotos). Two parsers with the same fingerprint give the same masks.
pub(crate) fn grammar_fingerprint(parser: &Parser) -> u64 {
    let mut h = Sha256::new();
    h.update(b"munch-wda-grammar-v2");
    let lexer = parser.lexer();
    let n = lexer.state_len();
    h.update((n as u64).to_le_bytes());
    h.update((lexer.terminal_len() as u64).to_le_bytes());
    h.update(lexer.start().as_u32().to_le_bytes());
    for b in 0..=255u8 {
        h.update([lexer.byte_class(b)]);
    }
    h.update((lexer.class_len() as u64).to_le_bytes());
    for s in (0..n).map(LexState::from_usize) {
        for c in 0..lexer.class_len() {
            h.update(lexer.next_class(s, c as u8).as_u32().to_le_bytes());
        }
        let acc = lexer.accepted(s);
        h.update((acc.len() as u32).to_le_bytes());
        for t in acc {
            h.update(t.as_u32().to_le_bytes());
        }
        h.update([lexer.can_grow(s) as u8]);
        // The inhibited branch's first byte (look-ahead fail sets and pending states folded
        // in).
        if !acc.is_empty() {
            for c in 0..lexer.class_len() {
                h.update(
                    lexer
                        .next_inhibited_class(s, c as u8)
                        .as_u32()
                        .to_le_bytes(),
                );
            }
        }
        let reach: Vec<TerminalId> = lexer.reachable(s).iter().collect();
        h.update((reach.len() as u32).to_le_bytes());
        for t in reach {
            h.update(t.as_u32().to_le_bytes());
        }
    }
    for t in (0..parser.terminal_len()).map(TerminalId::from_usize) {
        h.update([parser.is_ignored(t) as u8]);
    }
    let tables = parser.tables();
    h.update((tables.state_len() as u64).to_le_bytes());
    h.update(tables.eof_index().to_le_bytes());
    let states = || (0..tables.state_len()).map(|s| LrState::new(s).expect("LR state ids fit"));
    // Tables with many (state, lookahead) pairs are hashed as stored, a reduction once with its
    // lookahead set (a keyword set's states reduce on thousands each); the others pair by pair,
    // as before, so that their fingerprints stay.
    let words = (tables.eof_index() as usize + 1).div_ceil(64);
    let mut acts = vec![0u64; words];
    let pairs: usize = states()
        .map(|s| {
            acts.fill(0);
            tables.add_state_lookaheads(s, &mut acts);
            acts.iter().map(|w| w.count_ones() as usize).sum::<usize>()
        })
        .sum();
    let hash_reduce = |h: &mut Sha256, a: Action| {
        if let Action::Reduce { lhs, len, .. } = a {
            h.update([1]);
            h.update((lhs.as_usize() as u32).to_le_bytes());
            h.update(len.to_le_bytes());
        }
    };
    for s in states() {
        if pairs <= PAIRWISE_FINGERPRINT {
            for (k, a) in tables.state_actions(s) {
                h.update(k.to_le_bytes());
                match a {
                    Action::Shift(to) => {
                        h.update([0]);
                        h.update(to.as_u32().to_le_bytes());
                    }
                    Action::Reduce { .. } => hash_reduce(&mut h, a),
                    Action::Accept => h.update([2]),
                }
            }
        } else {
            for (k, a) in tables.state_shifts(s) {
                if let Action::Shift(to) = a {
                    h.update(k.to_le_bytes());
                    h.update(to.as_u32().to_le_bytes());
                }
            }
            h.update([0xFD]);
            for (a, set) in tables.state_reductions(s) {
                hash_reduce(&mut h, a);
                for w in set.words() {
                    h.update(w.to_le_bytes());
                }
                h.update([0xFC]);
            }
            h.update([tables.is_accepting(s) as u8]);
        }
        h.update([0xFF]);
        for (nt, to) in tables.state_gotos(s) {
            h.update((nt.as_usize() as u32).to_le_bytes());
            h.update(to.as_u32().to_le_bytes());
        }
        h.update([0xFE]);
    }
    let digest = h.finalize();
    u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
}

struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u32(x);
        }
    }
    fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
    }
    fn pairs(&mut self, v: &[(u32, u32)]) {
        self.u64(v.len() as u64);
        for &(a, b) in v {
            self.u32(a);
            self.u32(b);
        }
    }
}

/// Writes `dwa` for the given fingerprints.
pub(crate) fn save(
    dwa: &Dwa,
    vocab_fp: u64,
    grammar_fp: u64,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let mut o = Out(Vec::new());
    o.u64(vocab_fp);
    o.u64(grammar_fp);
    o.u32(dwa.class_len);
    o.u32(dwa.words);
    o.u32(dwa.token_classes);
    o.u64s(&dwa.weights);
    o.pairs(&dwa.default);
    o.u32s(&dwa.edge_start);
    o.u32s(&dwa.edge_x);
    o.pairs(&dwa.edge_out);
    o.u32s(&dwa.undecided);
    o.u32(dwa.lex_start);
    o.u32(dwa.eos);
    o.u32(dwa.eos_block);
    o.pairs(&dwa.plain);
    o.pairs(&dwa.inhibited);
    o.u32(dwa.vocab_len);
    o.u32s(&dwa.run_start);
    o.pairs(&dwa.runs);
    o.u32s(&dwa.all);
    let checksum = Sha256::digest(&o.0);
    w.write_all(MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&checksum)?;
    w.write_all(&o.0)
}

fn malformed(at: usize, what: &'static str) -> WdaLoadError {
    WdaLoadError::new(LoadKind::Malformed {
        at: at as u64,
        what,
    })
}

struct In<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl In<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WdaLoadError> {
        if self.bytes.len() - self.at < n {
            return Err(malformed(self.at, "the payload ends inside a field"));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, WdaLoadError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, WdaLoadError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// A length, checked against the bytes left (`size` bytes per element).
    fn len(&mut self, size: usize) -> Result<usize, WdaLoadError> {
        let at = self.at;
        let n = self.u64()?;
        if n > ((self.bytes.len() - self.at) / size) as u64 {
            return Err(malformed(at, "an array is longer than the payload"));
        }
        Ok(n as usize)
    }
    // The arrays are decoded in bulk (their length is checked against the payload first):
    // element by element, parsing was most of the cost of loading a small artifact.
    fn u32s(&mut self) -> Result<Vec<u32>, WdaLoadError> {
        let n = self.len(4)?;
        let bytes = self.take(n * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect())
    }
    fn u64s(&mut self) -> Result<Vec<u64>, WdaLoadError> {
        let n = self.len(8)?;
        let bytes = self.take(n * 8)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
    }
    fn pairs(&mut self) -> Result<Vec<(u32, u32)>, WdaLoadError> {
        let n = self.len(8)?;
        let bytes = self.take(n * 8)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| {
                let (lo, hi) = b.split_at(4);
                (
                    u32::from_le_bytes(lo.try_into().expect("4 bytes")),
                    u32::from_le_bytes(hi.try_into().expect("4 bytes")),
                )
            })
            .collect())
    }
}

/// Reads an artifact for the given fingerprints and checks its consistency.
pub(crate) fn load(
    r: &mut impl Read,
    vocab_fp: u64,
    grammar_fp: u64,
    vocab_len: usize,
    lex_states: usize,
    lr_states: usize,
) -> Result<Dwa, WdaLoadError> {
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)
        .map_err(|e| WdaLoadError::new(LoadKind::Io(e)))?;
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        if bytes.len() < 8 && MAGIC.starts_with(&bytes) {
            return Err(WdaLoadError::new(LoadKind::Truncated {
                at: bytes.len() as u64,
            }));
        }
        return Err(WdaLoadError::new(LoadKind::NotAnArtifact));
    }
    if bytes.len() < HEADER + 16 {
        return Err(WdaLoadError::new(LoadKind::Truncated {
            at: bytes.len() as u64,
        }));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(WdaLoadError::new(LoadKind::Version {
            found: version,
            expected: VERSION,
        }));
    }
    let payload = &bytes[HEADER..];
    if Sha256::digest(payload)[..] != bytes[12..HEADER] {
        return Err(WdaLoadError::new(LoadKind::Checksum));
    }
    let mut i = In {
        bytes: payload,
        at: 0,
    };
    let found = i.u64()?;
    if found != vocab_fp {
        return Err(WdaLoadError::new(LoadKind::Vocabulary {
            found,
            expected: vocab_fp,
        }));
    }
    let found = i.u64()?;
    if found != grammar_fp {
        return Err(WdaLoadError::new(LoadKind::Grammar {
            found,
            expected: grammar_fp,
        }));
    }
    let dwa = Dwa {
        class_len: i.u32()?,
        words: i.u32()?,
        token_classes: i.u32()?,
        weights: i.u64s()?,
        default: i.pairs()?,
        edge_start: i.u32s()?,
        edge_x: i.u32s()?,
        edge_out: i.pairs()?,
        undecided: i.u32s()?,
        lex_start: i.u32()?,
        eos: i.u32()?,
        eos_block: i.u32()?,
        plain: i.pairs()?,
        inhibited: i.pairs()?,
        vocab_len: i.u32()?,
        run_start: i.u32s()?,
        runs: i.pairs()?,
        all: i.u32s()?,
        // The derived tables, made by `finish`.
        ..Dwa::default()
    };
    if i.at != payload.len() {
        return Err(malformed(i.at, "bytes after the last table"));
    }
    validate(&dwa, vocab_len, lex_states, lr_states).map_err(|what| malformed(0, what))?;
    Ok(dwa.finish())
}

/// Every id in range and every table of the length the others imply.
fn validate(
    d: &Dwa,
    vocab_len: usize,
    lex_states: usize,
    lr_states: usize,
) -> Result<(), &'static str> {
    let words = d.words as usize;
    if words != (d.class_len as usize).div_ceil(64).max(1) {
        return Err("class-set width does not match the class count");
    }
    if words == 0 || !d.weights.len().is_multiple_of(words) || d.weights.is_empty() {
        return Err("weights are not whole class sets");
    }
    let weight_len = d.weights.len() / words;
    if d.weights[..words].iter().any(|&w| w != 0) {
        return Err("weight 0 is not empty");
    }
    let tail = d.class_len as usize % 64;
    if tail != 0 && d.weights.chunks(words).any(|w| w[words - 1] >> tail != 0) {
        return Err("a weight names a class past the last");
    }
    let states = d.default.len();
    if states == 0 || d.edge_start.len() != states + 1 || d.undecided.len() != states {
        return Err("per-state tables of different lengths");
    }
    if d.edge_start[0] != 0
        || d.edge_start.windows(2).any(|w| w[0] > w[1])
        || d.edge_start[states] as usize != d.edge_x.len()
        || d.edge_out.len() != d.edge_x.len()
    {
        return Err("transition lists are not consecutive");
    }
    for s in 0..states {
        let xs = &d.edge_x[d.edge_start[s] as usize..d.edge_start[s + 1] as usize];
        if xs.windows(2).any(|w| w[0] >= w[1]) || xs.iter().any(|&x| x as usize >= lr_states) {
            return Err("a transition list is unsorted or names an unknown LR state");
        }
    }
    let ok_edge = |&(w, t): &(u32, u32)| (w as usize) < weight_len && (t as usize) < states;
    if !d.default.iter().all(ok_edge) || !d.edge_out.iter().all(ok_edge) {
        return Err("a transition names an unknown weight or state");
    }
    if d.default[0] != (0, 0) || d.edge_start[1] != 0 || d.undecided[0] != 0 {
        return Err("state 0 is not the dead state");
    }
    if d.undecided.iter().any(|&w| w as usize >= weight_len) {
        return Err("an undecided set names an unknown weight");
    }
    if d.lex_start as usize >= lex_states
        || d.plain.len() != lex_states
        || d.inhibited.len() != lex_states
        || !d
            .plain
            .iter()
            .chain(&d.inhibited)
            .all(|&(state, weight)| ok_edge(&(weight, state)))
    {
        return Err("lexer-point tables do not fit the lexer");
    }
    if d.eos as usize >= states || (d.eos_block != u32::MAX && d.eos_block >= d.class_len) {
        return Err("the end-of-sequence state or block is out of range");
    }
    if d.vocab_len as usize != vocab_len {
        return Err("built for a vocabulary of another size");
    }
    let mask_words = vocab_len.div_ceil(32);
    if d.all.len() != mask_words
        || d.run_start.len() != d.class_len as usize + 1
        || d.run_start[0] != 0
        || d.run_start.windows(2).any(|w| w[0] > w[1])
        || d.run_start[d.class_len as usize] as usize != d.runs.len()
        || d.runs.iter().any(|&(w, _)| w as usize >= mask_words)
    {
        return Err("class expansion tables do not fit the vocabulary");
    }
    let tail = vocab_len % 32;
    if tail != 0 {
        let last = (mask_words - 1) as u32;
        if d.all[last as usize] >> tail != 0
            || d.runs
                .iter()
                .any(|&(w, bits)| w == last && bits >> tail != 0)
        {
            return Err("class expansion names a token past the vocabulary");
        }
    }
    Ok(())
}
