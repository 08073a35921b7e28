//! The built-in `common` and `unicode` libraries for `%import common.NAME`.
//!
//! munch's own definitions with the meaning of the terminals of Lark's `common.lark` (checked
//! by matching sample strings against Lark's compiled patterns: see `tests/lark_terminals.rs`).
//! They are written as single regexes where that is clearer; `ESCAPED_STRING` keeps Lark's lazy
//! body without its look-behind: the body is a lazy run of non-backslash characters and
//! backslash pairs, which ends at the first quote preceded by an even number of backslashes —
//! exactly where Lark's `".*?(?<!\\)(\\\\)*?"` ends.

/// The name of the built-in `common` module.
pub(crate) const MODULE: &str = "common";

/// The name of the built-in `unicode` module.
pub(crate) const UNICODE_MODULE: &str = "unicode";

/// The `unicode` library: whitespace that includes the no-break space (U+00A0), as in Lark's
/// `unicode.lark`, which defines nothing else.
pub(crate) const UNICODE_SOURCE: &str = r#"
WS_INLINE: /[ \t\xa0]+/
WS: /[ \t\xa0\f\r\n]+/
"#;

/// The library, in Lark syntax.
pub(crate) const SOURCE: &str = r#"
DIGIT: /[0-9]/
HEXDIGIT: /[0-9a-fA-F]/
INT: /[0-9]+/
SIGNED_INT: /[+-]?[0-9]+/
DECIMAL: /[0-9]+\.[0-9]*|\.[0-9]+/
_EXP: /[eE][+-]?[0-9]+/
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: /[+-]/? FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: /[+-]/? NUMBER

_STRING_INNER: /.*?/
_STRING_ESC_INNER: /(?:[^\\\n]|\\.)*?/
ESCAPED_STRING: "\"" _STRING_ESC_INNER "\""

LCASE_LETTER: /[a-z]/
UCASE_LETTER: /[A-Z]/
LETTER: /[A-Za-z]/
WORD: /[A-Za-z]+/
CNAME: /[A-Za-z_][A-Za-z0-9_]*/

WS_INLINE: /[ \t]+/
WS: /[ \t\f\r\n]+/
CR: /\r/
LF: /\n/
NEWLINE: /(?:\r?\n)+/

SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*(?:.|\n)*?\*\//
SQL_COMMENT: /--[^\n]*/
"#;
