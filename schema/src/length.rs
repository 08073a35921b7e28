//! `minLength`/`maxLength` beside a `pattern` or `format`: folded into the pattern where that is
//! exact, so the pair compiles to one terminal instead of needing an intersection.
//!
//! A pattern anchored at both ends (`^...$`, every format) is a concatenation of pieces; if the
//! bounds hold for every match (`^[A-Z]{3}$` under `maxLength: 5`) they are dropped, if for none
//! the string is impossible, and if exactly one piece varies in length and is a repetition of a
//! fixed-length piece (`^[a-z][a-z0-9_]*$`), the repetition's bounds absorb the length bounds.

use regex_syntax::hir::{Hir, HirKind, Look, Repetition};

/// The least and most characters `hir` matches (`None`: unbounded).
fn len_range(hir: &Hir) -> (u64, Option<u64>) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => (0, Some(0)),
        HirKind::Literal(l) => {
            let n = String::from_utf8_lossy(&l.0).chars().count() as u64;
            (n, Some(n))
        }
        HirKind::Class(_) => (1, Some(1)),
        HirKind::Capture(c) => len_range(&c.sub),
        HirKind::Repetition(r) => {
            let (lo, hi) = len_range(&r.sub);
            let max = match (r.max, hi) {
                (Some(m), Some(h)) => u64::from(m).checked_mul(h),
                (_, Some(0)) => Some(0),
                _ => None,
            };
            (lo.saturating_mul(u64::from(r.min)), max)
        }
        HirKind::Concat(subs) => subs.iter().fold((0, Some(0)), |(a, b), s| {
            let (lo, hi) = len_range(s);
            (
                a.saturating_add(lo),
                b.zip(hi).and_then(|(x, y)| x.checked_add(y)),
            )
        }),
        HirKind::Alternation(subs) => {
            let ranges: Vec<_> = subs.iter().map(len_range).collect();
            let lo = ranges.iter().map(|r| r.0).min().unwrap_or(0);
            let hi = ranges.iter().try_fold(0u64, |m, r| r.1.map(|h| m.max(h)));
            (lo, hi)
        }
    }
}

/// `hir` inside its capture groups, if it is one.
pub(crate) fn uncaptured(hir: &Hir) -> &Hir {
    let mut h = hir;
    while let HirKind::Capture(c) = h.kind() {
        h = &c.sub;
    }
    h
}

/// The parts of `hir` if it is a concatenation, else `hir` alone.
pub(crate) fn concat_parts(hir: &Hir) -> Vec<&Hir> {
    match hir.kind() {
        HirKind::Concat(subs) => subs.iter().collect(),
        _ => vec![hir],
    }
}

/// The whole-string matches of `hir` (a pattern anchored at both ends) whose length is in
/// `[min, max]`, as a HIR without the anchors; `None` when that is not expressible by folding.
pub(crate) fn fold(hir: &Hir, min: u64, max: Option<u64>) -> Option<Hir> {
    let h = uncaptured(hir);
    if let HirKind::Alternation(branches) = h.kind() {
        let folded: Option<Vec<Hir>> = branches.iter().map(|b| fold(b, min, max)).collect();
        return folded.map(Hir::alternation);
    }
    let parts = concat_parts(h);
    let n = parts.len();
    let anchored = n >= 2
        && matches!(parts[0].kind(), HirKind::Look(Look::Start))
        && matches!(parts[n - 1].kind(), HirKind::Look(Look::End));
    if !anchored {
        return None;
    }
    let middle: Vec<Hir> = parts[1..n - 1].iter().map(|p| (*p).clone()).collect();
    if middle.iter().any(|p| matches!(p.kind(), HirKind::Look(_))) {
        return None;
    }
    let whole = Hir::concat(middle.clone());
    let (lo, hi) = len_range(&whole);
    let fits_max = |x: Option<u64>| match (x, max) {
        (_, None) => true,
        (Some(x), Some(m)) => x <= m,
        (None, Some(_)) => false,
    };
    if lo >= min && fits_max(hi) {
        return Some(whole);
    }
    if max.is_some_and(|m| lo > m) || hi.is_some_and(|h| h < min) {
        return Some(Hir::fail());
    }
    // Exactly one piece of variable length, a repetition of a fixed-length piece.
    let variable: Vec<usize> = (0..middle.len())
        .filter(|&i| {
            let (a, b) = len_range(&middle[i]);
            b != Some(a)
        })
        .collect();
    let [i] = variable[..] else { return None };
    let HirKind::Repetition(rep) = middle[i].kind() else {
        return None;
    };
    let (unit_lo, unit_hi) = len_range(&rep.sub);
    if unit_hi != Some(unit_lo) || unit_lo == 0 {
        return None;
    }
    let fixed: u64 = middle
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, p)| len_range(p).0)
        .sum();
    let k_lo = u64::from(rep.min).max(min.saturating_sub(fixed).div_ceil(unit_lo));
    let k_hi = match (rep.max, max) {
        (r, Some(m)) => {
            let by_len = m.checked_sub(fixed)? / unit_lo;
            Some(r.map_or(by_len, |r| by_len.min(u64::from(r))))
        }
        (r, None) => r.map(u64::from),
    };
    if k_hi.is_some_and(|h| k_lo > h) {
        return Some(Hir::fail());
    }
    let min_u32 = u32::try_from(k_lo).ok()?;
    let max_u32 = match k_hi {
        Some(h) => Some(u32::try_from(h).ok()?),
        None => None,
    };
    let mut pieces = middle.clone();
    pieces[i] = Hir::repetition(Repetition {
        min: min_u32,
        max: max_u32,
        greedy: true,
        sub: rep.sub.clone(),
    });
    Some(Hir::concat(pieces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(h: &Hir, s: &str) -> bool {
        regex_automata::meta::Regex::builder()
            .build_from_hir(&Hir::concat(vec![
                Hir::look(Look::Start),
                h.clone(),
                Hir::look(Look::End),
            ]))
            .unwrap()
            .is_match(s)
    }

    #[test]
    fn lengths_fold_into_patterns() {
        let p = crate::ecma::parse("^[a-z][a-z0-9_]*$").unwrap();
        let f = fold(&p, 2, Some(4)).unwrap();
        for (s, want) in [("a", false), ("ab", true), ("a_9z", true), ("abcde", false)] {
            assert_eq!(matches(&f, s), want, "{s}");
        }
        let uuid = crate::ecma::parse(&crate::format::pattern("uuid").unwrap()).unwrap();
        assert!(fold(&uuid, 0, Some(36))
            .is_some_and(|h| matches(&h, "2eb8aa08-aa98-11ea-b4aa-73b441d16380")));
        assert!(fold(&uuid, 0, Some(35))
            .is_some_and(|h| !matches(&h, "2eb8aa08-aa98-11ea-b4aa-73b441d16380")));
        let unanchored = crate::ecma::parse("[a-z]+").unwrap();
        assert!(fold(&unanchored, 1, Some(3)).is_none());
        let two = crate::ecma::parse("^a+b+$").unwrap();
        assert!(fold(&two, 1, Some(3)).is_none());
    }
}
