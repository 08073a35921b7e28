//! Look-around assertions in terminal patterns: how a pattern carries them, and how the lexer
//! takes them out of it.
//!
//! `regex-syntax` has no look-around, so a front end writes one as a capture group with a
//! reserved name ([`look_around_name`]): `(?P<__munch_look_na_1>"")` is Python's `(?!"")`. The
//! group's content is the asserted pattern. [`extract`] replaces every such group by an empty
//! capture group numbered `1, 2, …` in pattern order (the Thompson compiler turns it into a
//! capture state, which the NFA builder turns into a look node) and returns the asserted
//! patterns in that order. Other capture groups are plain groups to the lexer.
//!
//! What each assertion means, and which ones the lexer refuses, is in the
//! [module docs](super#look-around).

use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};

/// The prefix of every reserved capture-group name.
pub const LOOK_AROUND_PREFIX: &str = "__munch_look_";

/// The four look-around assertions of Python's `re`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LookAroundKind {
    /// `(?=X)`: the text from here starts with a match of `X`.
    Ahead,
    /// `(?!X)`: the text from here does not start with a match of `X`.
    NotAhead,
    /// `(?<=X)`: the text up to here ends with a match of `X`.
    Behind,
    /// `(?<!X)`: the text up to here does not end with a match of `X`.
    NotBehind,
}

impl LookAroundKind {
    fn code(self) -> &'static str {
        match self {
            LookAroundKind::Ahead => "a",
            LookAroundKind::NotAhead => "na",
            LookAroundKind::Behind => "b",
            LookAroundKind::NotBehind => "nb",
        }
    }

    /// How Python writes it, for messages.
    pub fn syntax(self) -> &'static str {
        match self {
            LookAroundKind::Ahead => "look-ahead `(?=...)`",
            LookAroundKind::NotAhead => "look-ahead `(?!...)`",
            LookAroundKind::Behind => "look-behind `(?<=...)`",
            LookAroundKind::NotBehind => "look-behind `(?<!...)`",
        }
    }
}

/// The capture-group name that makes a group the assertion `kind` (`n` keeps the names of one
/// pattern distinct, as `regex-syntax` requires).
pub fn look_around_name(kind: LookAroundKind, n: usize) -> String {
    format!("{LOOK_AROUND_PREFIX}{}_{n}", kind.code())
}

/// The kind a capture-group name stands for, if it is a reserved one.
pub(crate) fn kind_of(name: &str) -> Option<LookAroundKind> {
    let rest = name.strip_prefix(LOOK_AROUND_PREFIX)?;
    let (code, n) = rest.split_once('_')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    [
        LookAroundKind::Ahead,
        LookAroundKind::NotAhead,
        LookAroundKind::Behind,
        LookAroundKind::NotBehind,
    ]
    .into_iter()
    .find(|k| k.code() == code)
}

/// One assertion taken out of a pattern.
#[derive(Clone, Debug)]
pub(crate) struct LookAround {
    pub kind: LookAroundKind,
    pub sub: Hir,
}

/// `hir` with every reserved group replaced by an empty capture group `i + 1` for the `i`-th
/// assertion, and the assertions. Errors: an assertion inside another one (the message names
/// it). Recursive: the caller has bounded the depth by the nest limit.
pub(crate) fn extract(hir: &Hir) -> Result<(Hir, Vec<LookAround>), String> {
    let mut looks = Vec::new();
    let hir = rewrite(hir, &mut looks, false)?;
    Ok((hir, looks))
}

fn rewrite(h: &Hir, looks: &mut Vec<LookAround>, inside: bool) -> Result<Hir, String> {
    Ok(match h.kind() {
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => h.clone(),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(rewrite(&r.sub, looks, inside)?),
        }),
        HirKind::Capture(c) => match c.name.as_deref().and_then(kind_of) {
            Some(kind) => {
                if inside {
                    return Err(format!("{} inside a look-around", kind.syntax()));
                }
                let sub = rewrite(&c.sub, looks, true)?;
                looks.push(LookAround { kind, sub });
                Hir::capture(Capture {
                    index: looks.len() as u32,
                    name: None,
                    sub: Box::new(Hir::empty()),
                })
            }
            None => rewrite(&c.sub, looks, inside)?,
        },
        HirKind::Concat(subs) => Hir::concat(
            subs.iter()
                .map(|s| rewrite(s, looks, inside))
                .collect::<Result<_, _>>()?,
        ),
        HirKind::Alternation(subs) => Hir::alternation(
            subs.iter()
                .map(|s| rewrite(s, looks, inside))
                .collect::<Result<_, _>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in [
            LookAroundKind::Ahead,
            LookAroundKind::NotAhead,
            LookAroundKind::Behind,
            LookAroundKind::NotBehind,
        ] {
            assert_eq!(kind_of(&look_around_name(kind, 12)), Some(kind));
        }
        assert_eq!(kind_of("__munch_look_x_1"), None);
        assert_eq!(kind_of("__munch_look_na_"), None);
        assert_eq!(kind_of("name"), None);
    }

    #[test]
    fn extract_numbers_assertions_in_order() {
        let hir = regex_syntax::parse(r#""(?P<__munch_look_na_1>"")(a)(?P<__munch_look_nb_2>\\)"#)
            .unwrap();
        let (hir, looks) = extract(&hir).unwrap();
        assert_eq!(looks.len(), 2);
        assert_eq!(looks[0].kind, LookAroundKind::NotAhead);
        assert_eq!(looks[1].kind, LookAroundKind::NotBehind);
        assert_eq!(looks[1].sub, Hir::literal(*b"\\"));
        assert_eq!(hir.properties().explicit_captures_len(), 2);
        let nested =
            regex_syntax::parse("(?P<__munch_look_na_1>a(?P<__munch_look_b_2>b))").unwrap();
        assert!(extract(&nested).is_err());
    }
}
