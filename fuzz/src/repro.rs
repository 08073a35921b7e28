//! Rust source for fuzz inputs: every case type's `Debug` prints a test that reproduces it.
//!
//! libFuzzer and `cargo fuzz fmt` show an input through `Debug`, so a crash report is already a
//! regression test: paste it into `tests/regressions.rs`. [`Repro`] renders a value as a Rust
//! expression that rebuilds it (with `use munch_fuzz::prelude::*;` in scope).

use std::fmt::Write;

/// A value that can be written as a Rust expression rebuilding it.
pub trait Repro {
    /// Appends the expression to `out`.
    fn repro(&self, out: &mut String);

    /// The expression as a new string.
    fn to_repro(&self) -> String {
        let mut s = String::new();
        self.repro(&mut s);
        s
    }
}

/// Appends `name(args, …)`: a call, or a tuple variant, of the arguments' expressions.
pub fn call(out: &mut String, name: &str, args: &[&dyn Repro]) {
    out.push_str(name);
    out.push('(');
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        arg.repro(out);
    }
    out.push(')');
}

/// Appends `name { field: value, … }`: a struct expression of the fields' expressions.
pub fn fields(out: &mut String, name: &str, fields: &[(&str, &dyn Repro)]) {
    out.push_str(name);
    out.push_str(" { ");
    for (i, (field, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(field);
        out.push_str(": ");
        value.repro(out);
    }
    out.push_str(" }");
}

/// `impl Repro` for a struct with named fields: the struct expression of its fields'
/// expressions, through [`fields`].
macro_rules! repro_struct {
    ($name:ident { $($field:ident),* }) => {
        impl $crate::repro::Repro for $name {
            fn repro(&self, out: &mut String) {
                $crate::repro::fields(
                    out,
                    stringify!($name),
                    &[$((stringify!($field), &self.$field)),*],
                );
            }
        }
    };
}
pub(crate) use repro_struct;

/// `impl Repro` for an enum whose `Debug` is its variant's expression: `Type::` and the `Debug`.
macro_rules! repro_variant {
    ($name:ident) => {
        impl $crate::repro::Repro for $name {
            fn repro(&self, out: &mut String) {
                out.push_str(&format!(concat!(stringify!($name), "::{:?}"), self));
            }
        }
    };
}
pub(crate) use repro_variant;

impl Repro for bool {
    fn repro(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

macro_rules! int_repro {
    ($($t:ty),*) => {$(
        impl Repro for $t {
            fn repro(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
int_repro!(u8, u16, u32, u64, usize, i8, i16, i32, i64);

impl Repro for char {
    fn repro(&self, out: &mut String) {
        let _ = write!(out, "{self:?}");
    }
}

impl Repro for String {
    fn repro(&self, out: &mut String) {
        let _ = write!(out, "{self:?}.to_string()");
    }
}

impl<T: Repro> Repro for Option<T> {
    fn repro(&self, out: &mut String) {
        match self {
            None => out.push_str("None"),
            Some(v) => call(out, "Some", &[v]),
        }
    }
}

impl<T: Repro> Repro for Box<T> {
    fn repro(&self, out: &mut String) {
        call(out, "Box::new", &[&**self]);
    }
}

impl<T: Repro> Repro for Vec<T> {
    fn repro(&self, out: &mut String) {
        out.push_str("vec![");
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            v.repro(out);
        }
        out.push(']');
    }
}

/// Bytes as a `b"..."` literal (`.to_vec()` follows where a `Vec` is needed).
pub fn bytes_literal(bytes: &[u8]) -> String {
    let mut s = String::from("b\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

/// A byte string field: `b"...".to_vec()`.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bytes(pub Vec<u8>);

impl Repro for Bytes {
    fn repro(&self, out: &mut String) {
        out.push_str("Bytes(");
        out.push_str(&bytes_literal(&self.0));
        out.push_str(".to_vec())");
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&bytes_literal(&self.0))
    }
}

/// The text of a regression test running `check` on `case` (written as its expression), with
/// `comment` lines above it.
pub fn test_text(name: &str, check: &str, case: &dyn Repro, comment: &[String]) -> String {
    let mut s = String::new();
    for line in comment {
        let _ = writeln!(s, "// {line}");
    }
    let _ = writeln!(s, "#[test]");
    let _ = writeln!(s, "fn {name}() {{");
    let _ = writeln!(s, "    use munch_fuzz::prelude::*;");
    let _ = writeln!(s, "    let case = {};", case.to_repro());
    let _ = writeln!(s, "    {check}(&case).unwrap();");
    let _ = write!(s, "}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_literal_escapes_what_rust_needs() {
        assert_eq!(bytes_literal(b"a\"\\\n\xff "), r#"b"a\"\\\n\xff ""#);
        assert_eq!(vec![Some(1u8), None].to_repro(), "vec![Some(1), None]");
        assert_eq!('\n'.to_repro(), "'\\n'");
    }
}
