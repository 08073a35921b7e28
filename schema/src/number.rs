//! Numeric constraints as regexes over JSON number texts.
//!
//! A bound (`minimum`, `exclusiveMaximum`, ...) is a comparison of decimals, and the decimals
//! written without an exponent that satisfy it form a regular language: compare integer parts
//! by length and then digit by digit, and fractional parts digit by digit with zero padding.
//! [`number_regex`] builds that language from the bounds; numbers written with an exponent are
//! not part of it (whether `0.001e5` is at most 100 depends on counting digits against the
//! exponent, which no finite automaton can do), so under a bound munch writes plain decimals,
//! and takes exponents only where the sign alone decides: on a side of zero that the bounds
//! leave whole.
//!
//! Every regex here uses `[0-9]`, never `\d`: Lark's `\d` is Python's, which takes every Unicode
//! decimal digit.

use std::cmp::Ordering;

/// The JSON number syntax (RFC 8259), exponent included.
pub(crate) const ANY_NUMBER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+\-]?[0-9]+)?";
/// Positive numbers written with an exponent (taken under bounds that leave every positive, or
/// every negative, number: `minimum: 0` and no maximum).
const EXP_POSITIVE: &str = r"(?:[1-9][0-9]*(?:\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*)[eE][+\-]?[0-9]+";
/// Zero written with an exponent (`0e5`, `0.0E-1`).
const EXP_ZERO: &str = r"0(?:\.0+)?[eE][+\-]?[0-9]+";
/// Integers written as JSON numbers without exponent; `.0` fractions are allowed since `1.0` is
/// an integer to JSON Schema.
pub(crate) const ANY_INTEGER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.0+)?";

/// The most digits a bound may expand to (`1e-300` has 300).
pub(crate) const MAX_DIGITS: usize = 340;

/// A decimal number: sign, integer digits without leading zeros (`[0]` for zero) and fraction
/// digits without trailing zeros.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dec {
    pub neg: bool,
    pub int: Vec<u8>,
    pub frac: Vec<u8>,
}

impl Dec {
    /// Reads a JSON number's text (`-12.5e3`); `None` for malformed text or more than
    /// [`MAX_DIGITS`] digits once the exponent is applied.
    pub fn parse(text: &str) -> Option<Dec> {
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => {
                let e: i64 = rest[i + 1..].trim_start_matches('+').parse().ok()?;
                (&rest[..i], e)
            }
            None => (rest, 0),
        };
        let (ip, fp) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !fp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if exp.unsigned_abs() as usize > MAX_DIGITS || ip.len() + fp.len() > MAX_DIGITS {
            return None;
        }
        let mut digits: Vec<u8> = ip.bytes().chain(fp.bytes()).map(|b| b - b'0').collect();
        // The decimal point sits after `point` digits of `digits`.
        let mut point = ip.len() as i64 + exp;
        if point < 0 {
            let pad = (-point) as usize;
            digits.splice(0..0, std::iter::repeat_n(0, pad));
            point = 0;
        }
        let point = point as usize;
        if point > digits.len() {
            digits.resize(point, 0);
        }
        if digits.len() > 2 * MAX_DIGITS {
            return None;
        }
        let mut int: Vec<u8> = digits[..point].to_vec();
        let mut frac: Vec<u8> = digits[point..].to_vec();
        let lead = int.iter().take_while(|&&d| d == 0).count();
        int.drain(..lead);
        if int.is_empty() {
            int.push(0);
        }
        while frac.last() == Some(&0) {
            frac.pop();
        }
        let zero = int == [0] && frac.is_empty();
        Some(Dec {
            neg: neg && !zero,
            int,
            frac,
        })
    }

    pub fn zero() -> Dec {
        Dec {
            neg: false,
            int: vec![0],
            frac: Vec::new(),
        }
    }

    pub fn is_integer(&self) -> bool {
        self.frac.is_empty()
    }

    /// `-self`.
    pub fn negate(&self) -> Dec {
        let mut d = self.clone();
        d.neg = !(d.neg || d.int == [0] && d.frac.is_empty());
        d
    }

    /// The absolute value.
    fn abs(&self) -> Dec {
        Dec {
            neg: false,
            ..self.clone()
        }
    }

    /// The integer of magnitude `int` (its digits), negative when `neg` and not zero.
    fn integer(neg: bool, int: Vec<u8>) -> Dec {
        Dec {
            neg: neg && int != [0],
            int,
            frac: Vec::new(),
        }
    }

    /// Rounds toward positive infinity to an integer.
    pub fn ceil(&self) -> Dec {
        if self.frac.is_empty() {
            self.clone()
        } else if self.neg {
            Dec::integer(true, self.int.clone())
        } else {
            Dec::integer(false, add_one(&self.int))
        }
    }

    /// Rounds toward negative infinity to an integer.
    pub fn floor(&self) -> Dec {
        self.negate().ceil().negate()
    }

    /// `self + 1` for an integer.
    pub fn succ(&self) -> Dec {
        if self.neg {
            Dec::integer(true, sub_one(&self.int))
        } else {
            Dec::integer(false, add_one(&self.int))
        }
    }

    /// `self - 1` for an integer.
    pub fn pred(&self) -> Dec {
        self.negate().succ().negate()
    }
}

impl PartialOrd for Dec {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Dec {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_abs(self, other),
            (true, true) => cmp_abs(other, self),
        }
    }
}

fn cmp_abs(a: &Dec, b: &Dec) -> Ordering {
    a.int
        .len()
        .cmp(&b.int.len())
        .then_with(|| a.int.cmp(&b.int))
        .then_with(|| a.frac.cmp(&b.frac))
}

fn add_one(digits: &[u8]) -> Vec<u8> {
    let mut d = digits.to_vec();
    for x in d.iter_mut().rev() {
        if *x == 9 {
            *x = 0;
        } else {
            *x += 1;
            return d;
        }
    }
    d.insert(0, 1);
    d
}

fn sub_one(digits: &[u8]) -> Vec<u8> {
    let mut d = digits.to_vec();
    for x in d.iter_mut().rev() {
        if *x == 0 {
            *x = 9;
        } else {
            *x -= 1;
            break;
        }
    }
    let lead = d.iter().take_while(|&&x| x == 0).count();
    d.drain(..lead.min(d.len() - 1));
    d
}

/// A bound: the value and whether it is exclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub value: Dec,
    pub exclusive: bool,
}

/// The texts of the numbers in `[lo, hi]` (each bound optional), written without exponent;
/// integers only if `integer` (with optional `.0…` fractions). `None` when no number is in
/// range.
pub(crate) fn number_regex(
    integer: bool,
    lo: Option<&Bound>,
    hi: Option<&Bound>,
    places: Option<usize>,
) -> Option<String> {
    if lo.is_none() && hi.is_none() {
        return Some(if integer { ANY_INTEGER } else { ANY_NUMBER }.to_string());
    }
    if integer {
        // Integer bounds, inclusive.
        let lo = lo.map(|b| {
            if b.exclusive {
                b.value.floor().succ()
            } else {
                b.value.ceil()
            }
        });
        let hi = hi.map(|b| {
            if b.exclusive {
                b.value.ceil().pred()
            } else {
                b.value.floor()
            }
        });
        let lo = lo.map(|value| Bound {
            value,
            exclusive: false,
        });
        let hi = hi.map(|value| Bound {
            value,
            exclusive: false,
        });
        let body = signed(lo.as_ref(), hi.as_ref(), true, None)?;
        return Some(format!("(?:{body})(?:\\.0+)?"));
    }
    signed(lo, hi, false, places)
}

/// Signed numbers in `[lo, hi]`: a non-negative part and `-` before a non-negative part.
fn signed(
    lo: Option<&Bound>,
    hi: Option<&Bound>,
    integer: bool,
    places: Option<usize>,
) -> Option<String> {
    if let (Some(l), Some(h)) = (lo, hi) {
        match l.value.cmp(&h.value) {
            Ordering::Greater => return None,
            Ordering::Equal if l.exclusive || h.exclusive => return None,
            _ => {}
        }
    }
    let zero = Bound {
        value: Dec::zero(),
        exclusive: false,
    };
    let mut alts = Vec::new();
    // x >= 0.
    let pos_lo = match lo {
        Some(l) if !l.value.neg => l.clone(),
        _ => zero.clone(),
    };
    let pos_hi = match hi {
        Some(h) if h.value.neg => None,
        Some(h) => Some(Some(h.clone())),
        None => Some(None),
    };
    if let Some(pos_hi) = pos_hi {
        if let Some(r) = nonneg(&pos_lo, pos_hi.as_ref(), integer, places) {
            alts.push(r);
        }
    }
    // Numbers written with an exponent, where their sign alone decides the bounds (see
    // `EXP_POSITIVE`): `exclusiveMinimum: 0` takes `2.5e7`.
    if !integer && places.is_none() {
        let zero_ok = |b: &Bound| !b.exclusive || b.value != Dec::zero();
        if hi.is_none() && lo.is_none_or(|l| l.value.neg || l.value == Dec::zero()) {
            alts.push(if lo.is_none_or(zero_ok) {
                format!("(?:{EXP_POSITIVE}|{EXP_ZERO})")
            } else {
                EXP_POSITIVE.to_string()
            });
        }
        if lo.is_none() && hi.is_none_or(|h| !h.value.neg) {
            alts.push(if hi.is_none_or(zero_ok) {
                format!("-(?:{EXP_POSITIVE}|{EXP_ZERO})")
            } else {
                format!("-(?:{EXP_POSITIVE})")
            });
        }
    }
    // x = -y with y >= 0 (y = 0 gives `-0`, which equals 0).
    // `hi` below zero, or zero itself when exclusive (`exclusiveMaximum: 0` refuses `-0`).
    let neg_lo = match hi {
        Some(h) if h.value.neg || (h.exclusive && h.value == Dec::zero()) => Bound {
            value: h.value.abs(),
            exclusive: h.exclusive,
        },
        _ => zero.clone(),
    };
    let neg_hi = match lo {
        None => Some(None),
        Some(l) if l.value.neg || l.value == Dec::zero() => Some(Some(Bound {
            value: l.value.abs(),
            exclusive: l.exclusive,
        })),
        Some(_) => None,
    };
    if let Some(neg_hi) = neg_hi {
        // `hi < 0` excludes zero, so `-0` only comes with a range holding zero.
        if let Some(r) = nonneg(&neg_lo, neg_hi.as_ref(), integer, places) {
            alts.push(format!("-(?:{r})"));
        }
    }
    if alts.is_empty() {
        None
    } else {
        Some(alts.join("|"))
    }
}

/// Non-negative numbers in `[lo, hi]` (`hi` optional), both non-negative.
fn nonneg(lo: &Bound, hi: Option<&Bound>, integer: bool, places: Option<usize>) -> Option<String> {
    if let Some(h) = hi {
        match lo.value.cmp(&h.value) {
            Ordering::Greater => return None,
            Ordering::Equal if lo.exclusive || h.exclusive => return None,
            _ => {}
        }
    }
    if integer {
        // Bounds are inclusive integers here.
        return int_range(&lo.value.int, hi.map(|h| h.value.int.as_slice()));
    }
    let lo_frac = Some((lo.value.frac.as_slice(), lo.exclusive));
    let mut alts = Vec::new();
    let mut push = |int: String, frac: Frac| {
        if let Some(f) = frac.regex() {
            alts.push(format!("{int}{f}"));
        }
    };
    let li = &lo.value.int;
    match hi {
        Some(h) if h.value.int == *li => {
            let hf = Some((h.value.frac.as_slice(), h.exclusive));
            push(digits(li), frac(lo_frac, hf, places));
        }
        Some(h) => {
            push(digits(li), frac(lo_frac, None, places));
            let above = add_one(li);
            let below = sub_one(&h.value.int);
            if cmp_digits(&above, &below) != Ordering::Greater {
                if let Some(r) = int_range(&above, Some(&below)) {
                    push(format!("(?:{r})"), Frac::any(places));
                }
            }
            let hf = Some((h.value.frac.as_slice(), h.exclusive));
            push(digits(&h.value.int), frac(None, hf, places));
        }
        None => {
            push(digits(li), frac(lo_frac, None, places));
            if let Some(r) = int_range(&add_one(li), None) {
                push(format!("(?:{r})"), Frac::any(places));
            }
        }
    }
    if alts.is_empty() {
        None
    } else {
        Some(alts.join("|"))
    }
}

fn digits(d: &[u8]) -> String {
    d.iter().map(|x| char::from(b'0' + x)).collect()
}

fn cmp_digits(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The digit strings (no leading zeros) of the integers in `[lo, hi]`.
fn int_range(lo: &[u8], hi: Option<&[u8]>) -> Option<String> {
    if let Some(h) = hi {
        if cmp_digits(lo, h) == Ordering::Greater {
            return None;
        }
    }
    let mut alts = Vec::new();
    let n = lo.len();
    match hi {
        Some(h) if h.len() == n => alts.push(between(lo, h)),
        Some(h) => {
            alts.push(between(lo, &vec![9; n]));
            for len in n + 1..h.len() {
                alts.push(format!("[1-9][0-9]{{{}}}", len - 1));
            }
            let mut first = vec![0; h.len()];
            first[0] = 1;
            alts.push(between(&first, h));
        }
        None => {
            alts.push(between(lo, &vec![9; n]));
            alts.push(format!("[1-9][0-9]{{{n},}}"));
        }
    }
    Some(alts.join("|"))
}

/// Digit strings of `a.len()` digits between `a` and `b` (same length, `a <= b`), as one
/// alternation of flat alternatives (no nesting per digit: Lark's regex reader allows 256
/// levels, and a 300-digit bound would nest 300 deep).
fn between(a: &[u8], b: &[u8]) -> String {
    let j = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let prefix = digits(&a[..j]);
    if j == a.len() {
        return prefix;
    }
    let (aj, bj) = (a[j], b[j]);
    let rest = a.len() - j - 1;
    let mut alts: Vec<String> = ge(&a[j + 1..])
        .into_iter()
        .map(|t| format!("{prefix}{aj}{t}"))
        .collect();
    if aj + 1 < bj {
        alts.push(format!(
            "{prefix}{}{}",
            class(aj + 1, bj - 1),
            any_digits(rest)
        ));
    }
    alts.extend(
        le(&b[j + 1..])
            .into_iter()
            .map(|t| format!("{prefix}{bj}{t}")),
    );
    format!("(?:{})", alts.join("|"))
}

/// Digit strings of `s.len()` digits at least `s`, as flat alternatives.
fn ge(s: &[u8]) -> Vec<String> {
    let mut alts = vec![digits(s)];
    for i in 0..s.len() {
        if s[i] < 9 {
            alts.push(format!(
                "{}{}{}",
                digits(&s[..i]),
                class(s[i] + 1, 9),
                any_digits(s.len() - i - 1)
            ));
        }
    }
    alts
}

/// Digit strings of `s.len()` digits at most `s`, as flat alternatives.
fn le(s: &[u8]) -> Vec<String> {
    let mut alts = vec![digits(s)];
    for i in 0..s.len() {
        if s[i] > 0 {
            alts.push(format!(
                "{}{}{}",
                digits(&s[..i]),
                class(0, s[i] - 1),
                any_digits(s.len() - i - 1)
            ));
        }
    }
    alts
}

fn class(lo: u8, hi: u8) -> String {
    if lo == hi {
        format!("{lo}")
    } else {
        format!("[{lo}-{hi}]")
    }
}

fn any_digits(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "[0-9]".to_string(),
        n => format!("[0-9]{{{n}}}"),
    }
}

/// Digits from position `pos` on, any of them, except that places from `places` on are zeros.
fn free(pos: usize, places: Option<usize>) -> String {
    match places {
        None => "[0-9]*".to_string(),
        Some(k) if pos >= k => "0*".to_string(),
        Some(k) => format!("[0-9]{{0,{}}}0*", k - pos),
    }
}

/// As [`free`], at least one digit.
fn nonempty_free(pos: usize, places: Option<usize>) -> String {
    match places {
        None => "[0-9]+".to_string(),
        Some(k) if pos >= k => "0+".to_string(),
        Some(k) => format!("[0-9]{{1,{}}}0*", k - pos),
    }
}

/// The fraction digits (after `.`) allowed by fraction bounds: whether no fraction at all is
/// allowed, and a regex for the non-empty digit strings.
struct Frac {
    empty: bool,
    nonempty: Option<String>,
}

impl Frac {
    /// Any fraction, with at most `places` significant digits.
    fn any(places: Option<usize>) -> Frac {
        Frac {
            empty: true,
            nonempty: Some(nonempty_free(0, places)),
        }
    }

    /// The fraction part as a regex (`\.` included), `None` if nothing is allowed.
    fn regex(&self) -> Option<String> {
        match (&self.nonempty, self.empty) {
            (Some(n), true) => Some(format!("(?:\\.(?:{n}))?")),
            (Some(n), false) => Some(format!("\\.(?:{n})")),
            (None, true) => Some(String::new()),
            (None, false) => None,
        }
    }
}

/// Fractions `y` (digit strings, compared as `0.y`) with `lo <= y <= hi` (either exclusive),
/// bounds given by their digits without trailing zeros.
fn frac(lo: Option<(&[u8], bool)>, hi: Option<(&[u8], bool)>, places: Option<usize>) -> Frac {
    let lang = frac_at(0, lo, hi, lo.is_some(), hi.is_some(), places);
    Frac {
        empty: lang.end,
        nonempty: if lang.more.is_empty() {
            None
        } else {
            Some(lang.more.join("|"))
        },
    }
}

/// The continuations at digit `pos`: may the string end here, and the alternatives that read
/// at least one more digit.
struct Lang {
    end: bool,
    more: Vec<String>,
}

impl Lang {
    /// Only zeros from here, where `ok` (equality, or a bound already met, allows them): the
    /// end, or more zeros; nothing otherwise.
    fn zeros(ok: bool) -> Lang {
        Lang {
            end: ok,
            more: if ok {
                vec!["0+".to_string()]
            } else {
                Vec::new()
            },
        }
    }
}

fn frac_at(
    pos: usize,
    lo: Option<(&[u8], bool)>,
    hi: Option<(&[u8], bool)>,
    lt: bool,
    ht: bool,
    places: Option<usize>,
) -> Lang {
    let (lo_d, lo_x) = lo.unwrap_or((&[], false));
    let (hi_d, hi_x) = hi.unwrap_or((&[], false));
    let lo_done = lt && pos >= lo_d.len();
    let hi_done = ht && pos >= hi_d.len();
    if places.is_some_and(|k| pos >= k) {
        // Past the last significant place: only zeros, compared as zeros.
        return Lang::zeros((!lt || (lo_done && !lo_x)) && !(ht && hi_done && hi_x));
    }
    if lo_done && hi_done {
        // Both bounds end here: only zeros may follow, and only if equality is allowed.
        return Lang::zeros(!(lo_x || hi_x));
    }
    if lo_done && !lo_x && ht {
        // The lower bound is met by whatever follows.
        return frac_at(pos, None, hi, false, true, places);
    }
    if !ht && (!lt || (lo_done && !lo_x)) {
        return Lang {
            end: true,
            more: vec![nonempty_free(pos, places)],
        };
    }
    if !ht && lo_done {
        // Greater than zeros: some non-zero digit must come.
        let more = match places {
            None => vec!["0*[1-9][0-9]*".to_string()],
            Some(k) => (0..k - pos)
                .map(|j| format!("{}[1-9]{}", "0".repeat(j), free(pos + j + 1, places)))
                .collect(),
        };
        return Lang { end: false, more };
    }
    if hi_done && !lt {
        // At most zeros: only zeros may follow, and only if equality is allowed.
        return Lang::zeros(!hi_x);
    }
    let end_ok = (!lt || (lo_done && !lo_x)) && !(ht && hi_done && hi_x);
    let ld = if lt {
        lo_d.get(pos).copied().unwrap_or(0)
    } else {
        0
    };
    let hd = if ht {
        hi_d.get(pos).copied().unwrap_or(0)
    } else {
        9
    };
    let mut more = Vec::new();
    if ld > hd {
        return Lang { end: end_ok, more };
    }
    // The continuations after digit `d`, each prefixed by it: flat alternatives, never nested
    // per digit.
    let follow = |d: u8, lt2: bool, ht2: bool| -> Vec<String> {
        let next = frac_at(pos + 1, lo, hi, lt2, ht2, places);
        let mut alts: Vec<String> = next.more.iter().map(|m| format!("{d}{m}")).collect();
        if next.end {
            alts.push(d.to_string());
        }
        alts
    };
    if lt && ht && ld == hd {
        more.extend(follow(ld, true, true));
    } else {
        if lt {
            more.extend(follow(ld, true, false));
        }
        let from = if lt { ld + 1 } else { 0 };
        let to = if ht { hd.checked_sub(1) } else { Some(9) };
        if let Some(to) = to {
            if from <= to {
                more.push(format!("{}{}", class(from, to), free(pos + 1, places)));
            }
        }
        if ht {
            more.extend(follow(hd, false, true));
        }
    }
    Lang { end: end_ok, more }
}

/// Whether `d` is an integer multiple of `m` (`m > 0`); `None` when the numbers are too long to
/// check.
pub(crate) fn is_multiple(d: &Dec, m: &Dec) -> Option<bool> {
    let k = d.frac.len().max(m.frac.len());
    let scaled = |x: &Dec| -> Vec<u8> {
        let mut v = x.int.clone();
        v.extend(x.frac.iter().copied());
        v.extend(std::iter::repeat_n(0, k - x.frac.len()));
        v
    };
    let (dv, mv) = (scaled(d), scaled(m));
    if mv.len() > 36 {
        return None;
    }
    let modulus = mv.iter().fold(0u128, |a, &x| a * 10 + u128::from(x));
    if modulus == 0 {
        return None;
    }
    let r = dv
        .iter()
        .fold(0u128, |a, &x| (a * 10 + u128::from(x)) % modulus);
    Some(r == 0)
}

/// For `multipleOf` = `m`: `Some(k)` when `m` is `10^-k` (`k >= 0`), whose multiples are the
/// decimals with at most `k` fraction digits (trailing zeros aside).
pub(crate) fn decimal_places(m: &Dec) -> Option<usize> {
    if m.int == [1] && m.frac.is_empty() {
        return Some(0);
    }
    if m.int == [0]
        && m.frac.last() == Some(&1)
        && m.frac[..m.frac.len() - 1].iter().all(|&x| x == 0)
    {
        return Some(m.frac.len());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    fn bound(s: &str, exclusive: bool) -> Bound {
        Bound {
            value: dec(s),
            exclusive,
        }
    }

    /// Checks a range regex against a brute-force comparison over many number texts.
    fn check(integer: bool, lo: Option<Bound>, hi: Option<Bound>) {
        check_places(integer, lo, hi, None)
    }

    fn check_places(integer: bool, lo: Option<Bound>, hi: Option<Bound>, places: Option<usize>) {
        let re = number_regex(integer, lo.as_ref(), hi.as_ref(), places);
        let matcher = re.as_ref().map(|r| regex_lite(r));
        let mut texts = Vec::new();
        for i in -1200..=1200 {
            let v = i as f64 / 8.0;
            texts.push(format!("{i}"));
            texts.push(format!("{}", v));
            texts.push(format!("{:.3}", v));
            texts.push(format!("{:.1}0", v));
        }
        texts.extend(
            [
                "-0",
                "-0.0",
                "0.000",
                "0.001",
                "99.99",
                "100.000001",
                "1e2",
                "-1e2",
                "0e5",
                "-0e5",
                "0.0E-1",
                "1.5E-3",
                "-2.5e+10",
                "0.03e1",
                "-0.001e5",
            ]
            .map(String::from),
        );
        for t in texts {
            let d = dec(&t);
            let in_range = lo.as_ref().is_none_or(|b| {
                if b.exclusive {
                    d > b.value
                } else {
                    d >= b.value
                }
            }) && hi.as_ref().is_none_or(|b| {
                if b.exclusive {
                    d < b.value
                } else {
                    d <= b.value
                }
            }) && (!integer || d.is_integer());
            // An exponent is taken where the sign decides: the number's side of zero is
            // whole within the bounds.
            let whole_side = if t.starts_with('-') {
                lo.is_none() && hi.as_ref().is_none_or(|h| !h.value.neg)
            } else {
                hi.is_none()
                    && lo
                        .as_ref()
                        .is_none_or(|l| l.value.neg || l.value == Dec::zero())
            };
            let plain = (!t.contains(['e', 'E']) || (whole_side && !integer && places.is_none()))
                && places.is_none_or(|k| {
                    t.split('.')
                        .nth(1)
                        .is_none_or(|f| f.bytes().skip(k).all(|b| b == b'0'))
                });
            let want = in_range
                && plain
                && (!integer
                    || !t.contains('.')
                    || t.trim_start_matches('-')
                        .split('.')
                        .nth(1)
                        .unwrap()
                        .bytes()
                        .all(|b| b == b'0'));
            let got = matcher.as_ref().is_some_and(|m| m(&t));
            assert_eq!(
                got, want,
                "{t} with {lo:?} {hi:?} integer={integer}: {re:?}"
            );
        }
    }

    fn regex_lite(re: &str) -> impl Fn(&str) -> bool {
        let r = regex_automata::meta::Regex::new(&format!("^(?:{re})$")).unwrap();
        move |s: &str| r.is_match(s)
    }

    #[test]
    fn integer_ranges() {
        check(true, Some(bound("0", false)), None);
        check(true, Some(bound("1", true)), Some(bound("120", false)));
        check(true, Some(bound("-37", false)), Some(bound("45", true)));
        check(true, None, Some(bound("-3", false)));
        check(true, Some(bound("2.5", false)), Some(bound("99.5", false)));
        check(true, Some(bound("7", false)), Some(bound("7", false)));
        check(true, Some(bound("7", true)), Some(bound("8", true)));
    }

    #[test]
    fn decimal_ranges() {
        check(false, Some(bound("0", false)), None);
        // One side of zero whole: exponents there.
        check(false, Some(bound("0", true)), None);
        check(false, Some(bound("-2", true)), None);
        check(false, None, Some(bound("0", true)));
        check(false, None, Some(bound("0", false)));
        check(false, None, Some(bound("5", false)));
        check(false, None, Some(bound("-5", false)));
        check(false, Some(bound("0", true)), Some(bound("1", false)));
        check(false, Some(bound("-1.5", false)), Some(bound("2.25", true)));
        check(
            false,
            Some(bound("0.125", true)),
            Some(bound("0.75", false)),
        );
        check(false, None, Some(bound("-0.5", false)));
        check(
            false,
            Some(bound("10.5", false)),
            Some(bound("10.75", false)),
        );
        check(false, Some(bound("-100", true)), Some(bound("100", true)));
        check(false, Some(bound("3", false)), Some(bound("3", false)));
    }

    #[test]
    fn decimal_places_within_ranges() {
        check_places(false, Some(bound("0", false)), None, Some(2));
        check_places(
            false,
            Some(bound("-1.5", true)),
            Some(bound("2.25", false)),
            Some(1),
        );
        check_places(
            false,
            Some(bound("0.125", false)),
            Some(bound("0.75", true)),
            Some(3),
        );
        check_places(false, Some(bound("0.005", true)), None, Some(2));
    }

    #[test]
    fn decimals_parse_with_exponents() {
        assert_eq!(dec("1.5e2"), dec("150"));
        assert_eq!(dec("-0.0"), Dec::zero());
        assert_eq!(dec("12e-3").frac, vec![0, 1, 2]);
        assert!(Dec::parse("1e999999").is_none());
        assert!(dec("-2.5").ceil() == dec("-2") && dec("-2.5").floor() == dec("-3"));
        assert!(dec("0.5").ceil() == dec("1") && dec("-0.5").ceil() == Dec::zero());
    }
}
