//! Random sentences of a [`Cfg`], seeded and bounded: for tests, conformance and fuzzing.
//!
//! [`Generator::sentence`] expands the start symbol with randomly chosen productions. Past
//! [`GenerateConfig::max_depth`] (or once the sentence would pass
//! [`GenerateConfig::max_len`]) it only picks productions of least height, which always
//! terminates because each such production's nonterminals have strictly smaller least height.
//! [`sample_lexeme`] draws a random string matching a terminal's pattern, so terminal sentences
//! can be turned into text.
//!
//! The random source is [`SeededRng`] (SplitMix64, a few lines that no dependency upgrade
//! changes): a seed recorded in a test or a fuzz reproduction replays the same sentence.
//! [`XorShift`] is the smaller one tests draw their walks from.

use munch_lexer::TerminalId;
use regex_syntax::hir::{Class, Hir, HirKind};

use munch_glr::cfg::{Cfg, NonterminalId, Symbol};

/// A small deterministic random source (SplitMix64).
#[derive(Clone, Debug)]
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    /// A generator replaying the sequence of `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17): the smaller generator tests draw walks and
/// damaged inputs from, so that a failing seed replays. The state is the last number drawn; a
/// zero state stays zero.
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 random bits (the new state).
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Bounds for [`Generator::sentence`].
#[derive(Clone, Debug)]
pub struct GenerateConfig {
    /// Past this derivation depth only least-height productions are chosen.
    pub max_depth: u32,
    /// Once the sentence and its pending symbols reach this length, only least-height
    /// productions are chosen (the sentence may still end somewhat longer).
    pub max_len: usize,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        Self {
            max_depth: 12,
            max_len: 200,
        }
    }
}

/// Draws random sentences of a CFG.
#[derive(Clone, Debug)]
pub struct Generator<'c> {
    cfg: &'c Cfg,
    /// Least derivation height per nonterminal (`u32::MAX`: derives nothing).
    height: Vec<u32>,
}

impl<'c> Generator<'c> {
    /// Precomputes least derivation heights.
    pub fn new(cfg: &'c Cfg) -> Self {
        let mut height = vec![u32::MAX; cfg.nonterminal_len()];
        let mut changed = true;
        while changed {
            changed = false;
            for p in cfg.productions() {
                let h = Self::prod_height(&height, &p.rhs);
                if h < height[p.lhs.as_usize()] {
                    height[p.lhs.as_usize()] = h;
                    changed = true;
                }
            }
        }
        Self { cfg, height }
    }

    fn prod_height(height: &[u32], rhs: &[Symbol]) -> u32 {
        rhs.iter()
            .map(|s| match s {
                Symbol::Terminal(_) => 0,
                Symbol::Nonterminal(n) => height[n.as_usize()],
            })
            .max()
            .unwrap_or(0)
            .saturating_add(1)
    }

    /// A random sentence (a terminal sequence) of the language, or `None` when the language is
    /// empty.
    pub fn sentence(
        &self,
        rng: &mut SeededRng,
        config: &GenerateConfig,
    ) -> Option<Vec<TerminalId>> {
        self.derive(self.cfg.start(), rng, config)
    }

    /// A random terminal string derived from `n`, or `None` when `n` derives nothing.
    pub fn derive(
        &self,
        n: NonterminalId,
        rng: &mut SeededRng,
        config: &GenerateConfig,
    ) -> Option<Vec<TerminalId>> {
        if self.height[n.as_usize()] == u32::MAX {
            return None;
        }
        let mut out = Vec::new();
        let mut stack = vec![(Symbol::Nonterminal(n), 0u32)];
        while let Some((sym, depth)) = stack.pop() {
            let n = match sym {
                Symbol::Terminal(t) => {
                    out.push(t);
                    continue;
                }
                Symbol::Nonterminal(n) => n,
            };
            let prods = self.cfg.productions_of(n);
            let usable: Vec<usize> = prods
                .clone()
                .filter(|&p| {
                    Self::prod_height(&self.height, &self.cfg.productions()[p].rhs) != u32::MAX
                })
                .collect();
            let shrink = depth >= config.max_depth || out.len() + stack.len() >= config.max_len;
            let choice = if shrink {
                let least = self.height[n.as_usize()];
                let best: Vec<usize> = usable
                    .iter()
                    .copied()
                    .filter(|&p| {
                        Self::prod_height(&self.height, &self.cfg.productions()[p].rhs) == least
                    })
                    .collect();
                best[rng.below(best.len())]
            } else {
                usable[rng.below(usable.len())]
            };
            for &s in self.cfg.productions()[choice].rhs.iter().rev() {
                stack.push((s, depth + 1));
            }
        }
        Some(out)
    }
}

/// A random string matching `hir` (UTF-8 bytes), or `None` when the pattern has look-around or
/// matches nothing. Unbounded repetitions are cut at `max_repeat` extra copies.
pub fn sample_lexeme(hir: &Hir, rng: &mut SeededRng, max_repeat: u32) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    // An explicit work stack keeps deep patterns off the Rust stack.
    let mut work = vec![hir];
    while let Some(h) = work.pop() {
        match h.kind() {
            HirKind::Empty => {}
            HirKind::Literal(lit) => out.extend_from_slice(&lit.0),
            HirKind::Class(Class::Unicode(c)) => {
                let ranges = c.ranges();
                if ranges.is_empty() {
                    return None;
                }
                // Text a model writes is mostly ASCII: seven draws in eight stay in the ASCII
                // part of the class when it has one; the eighth exercises the rest (multi-byte
                // characters, rarely used letters).
                let ascii = ranges.partition_point(|r| r.start() <= '\x7f');
                let (lo, hi) = if ascii > 0 && rng.below(8) != 0 {
                    let r = ranges[rng.below(ascii)];
                    (r.start() as u32, (r.end() as u32).min(0x7f))
                } else {
                    let r = ranges[rng.below(ranges.len())];
                    (r.start() as u32, r.end() as u32)
                };
                let mut ch = lo + rng.below((hi - lo + 1) as usize) as u32;
                // Surrogates are not chars; fall back to the range start.
                if char::from_u32(ch).is_none() {
                    ch = lo;
                }
                let ch = char::from_u32(ch)?;
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            HirKind::Class(Class::Bytes(c)) => {
                let ranges = c.ranges();
                if ranges.is_empty() {
                    return None;
                }
                let r = ranges[rng.below(ranges.len())];
                let span = r.end() as usize - r.start() as usize + 1;
                out.push(r.start() + rng.below(span) as u8);
            }
            HirKind::Look(_) => return None,
            HirKind::Repetition(rep) => {
                let max = rep.max.unwrap_or(rep.min.saturating_add(max_repeat));
                let max = max.min(rep.min.saturating_add(max_repeat));
                let n = rep.min + rng.below((max - rep.min + 1) as usize) as u32;
                for _ in 0..n {
                    work.push(&rep.sub);
                }
            }
            HirKind::Capture(cap) => work.push(&cap.sub),
            HirKind::Concat(items) => work.extend(items.iter().rev()),
            HirKind::Alternation(alts) => work.push(&alts[rng.below(alts.len())]),
        }
    }
    Some(out)
}

/// Turns a terminal sentence into text: each terminal becomes a random lexeme of its pattern
/// that the lexer reads back as exactly that terminal (one lexeme whose tied terminals include
/// it; up to `tries` draws each), joined by `separator` (use an `%ignore`d string such as
/// `b" "` when the grammar has one). `None` when some terminal has no pattern or no draw
/// lexes back.
pub fn render_text(
    grammar: &munch_glr::grammar::Grammar,
    lexer: &munch_lexer::dfa::Lexer,
    sentence: &[TerminalId],
    separator: &[u8],
    rng: &mut SeededRng,
    tries: usize,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (i, &t) in sentence.iter().enumerate() {
        let hir = &grammar
            .terminals
            .get(t.as_usize())?
            .pattern
            .as_ref()
            .ok()?
            .hir;
        let mut found = None;
        for _ in 0..tries {
            let lexeme = sample_lexeme(hir, rng, 3)?;
            if let Ok(lexemes) = lexer.tokenize(&lexeme) {
                // A literal that the lexer accepts as its stand-in is read as the literal where
                // the parser takes it, as here, where the grammar put it.
                let stands_for_t = |u: &TerminalId| {
                    *u == t
                        || lexer
                            .stand_ins()
                            .iter()
                            .any(|s| s.terminal == *u && s.literal == t)
                };
                if lexemes.len() == 1 && lexemes[0].terminals.iter().any(stands_for_t) {
                    found = Some(lexeme);
                    break;
                }
            }
        }
        if i > 0 {
            out.extend_from_slice(separator);
        }
        out.extend(found?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use munch_glr::cfg::{normalize, NormalizeConfig};

    use crate::dsl;

    #[test]
    fn sentences_are_deterministic_per_seed_and_bounded() {
        let g = dsl::parse("s -> s s | '(' s ')' | 'a'").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let gen = Generator::new(&cfg);
        let config = GenerateConfig {
            max_depth: 6,
            max_len: 50,
        };
        for seed in 0..50 {
            let a = gen.sentence(&mut SeededRng::new(seed), &config).unwrap();
            let b = gen.sentence(&mut SeededRng::new(seed), &config).unwrap();
            assert_eq!(a, b);
            assert!(!a.is_empty());
            // Balanced parentheses: a cheap membership check for this grammar.
            let names: Vec<_> = a.iter().map(|&t| cfg.terminal_name(t)).collect();
            let mut depth = 0i32;
            for n in &names {
                depth += match *n {
                    "(" => 1,
                    ")" => -1,
                    _ => 0,
                };
                assert!(depth >= 0);
            }
            assert_eq!(depth, 0);
            // Shrinking keeps sentences near the bound (the pending stack can add a few).
            assert!(a.len() <= 200, "{}", a.len());
        }
    }

    #[test]
    fn empty_language_gives_none() {
        let g = dsl::parse("s -> s 'x'").unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        assert_eq!(
            Generator::new(&cfg).sentence(&mut SeededRng::new(1), &GenerateConfig::default()),
            None
        );
    }

    #[test]
    fn lexemes_match_their_pattern() {
        let re = r"[a-z_][a-z0-9_]*|0x[0-9A-F]+|é+";
        let hir = regex_syntax::parse(re).unwrap();
        let check = matches_test_pattern;
        let mut rng = SeededRng::new(7);
        for _ in 0..200 {
            let s = sample_lexeme(&hir, &mut rng, 4).unwrap();
            let s = String::from_utf8(s).unwrap();
            assert!(check(&s), "{s:?}");
        }
    }

    /// Membership in the test pattern above, by hand (the crate has no `regex` dependency).
    fn matches_test_pattern(s: &str) -> bool {
        {
            let b = s.as_bytes();
            let ident = !b.is_empty()
                && (b[0].is_ascii_lowercase() || b[0] == b'_')
                && b[1..]
                    .iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_');
            let hex = s.len() > 2
                && s.starts_with("0x")
                && b[2..]
                    .iter()
                    .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(c));
            let e = !s.is_empty() && s.chars().all(|c| c == 'é');
            ident || hex || e
        }
    }
}
