//! # munch-grammars
//!
//! munch's own Lark grammars (in `grammars/*.lark`, with test corpora under `grammars/corpus/`),
//! and, with the `syncode` feature (off by default), the reference grammars of the GCD
//! literature, fetched once into the cache with `pip`: SynCode 0.4.16's
//! `syncode/parsers/grammars/*.lark` (module `syncode`).

#![deny(missing_docs)]

#[cfg(feature = "syncode")]
pub mod syncode;

/// A grammar shipped with munch.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// Short name (`json`).
    pub name: &'static str,
    /// The Lark source.
    pub source: &'static str,
}

/// munch's own grammars.
pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "json",
        source: include_str!("../json.lark"),
    },
    Builtin {
        name: "tricky",
        source: include_str!("../tricky.lark"),
    },
];

/// The built-in grammar named `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|g| g.name == name)
}
