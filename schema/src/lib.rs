//! # munch-schema
//!
//! JSON Schema (draft 2020-12, with the draft-04/06/07 spellings) and regex constraints,
//! compiled into Lark grammars that munch loads like any other.
//!
//! - [`compile`] / [`compile_str`]: a schema → [`CompiledSchema`] (Lark text whose language is
//!   exactly the JSON texts, in the chosen [`SchemaOptions`] profile, that validate), or a
//!   [`SchemaError`] naming the keyword and JSON pointer that cannot be compiled exactly.
//! - [`regex_grammar`]: an ECMA-262 regex → a grammar whose sentences are its whole matches.
//!
//! Most users reach it through `munch::Grammar::from_json_schema`; the Lark text can also be read
//! directly:
//!
//! ```
//! use munch_schema::{compile_str, SchemaOptions};
//!
//! let schema = r#"{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
//!                  "required": ["n"], "additionalProperties": false}"#;
//! let compiled = compile_str(schema, &SchemaOptions::compact()).unwrap();
//! assert!(compiled.lark().contains("start:"));
//! assert!(compiled.relaxations().is_empty());
//!
//! // What cannot be compiled exactly is refused, naming the keyword and where it is.
//! let err = compile_str(r#"{"items": {"uniqueItems": true}}"#, &SchemaOptions::default())
//!     .unwrap_err();
//! assert_eq!(err.keyword(), Some("uniqueItems"));
//! assert_eq!(err.pointer(), "/items/uniqueItems");
//! ```
//!
//! # Why Lark text
//!
//! The output goes through munch's own Lark front end, so a schema grammar is checked, lexed and
//! parsed exactly like a hand-written one, and `munch check`/`parse`/`trace`/`generate` print
//! and exercise it (`schema:FILE`). Writing the text is not where time goes: it is a fraction
//! of the parser's build and of the masker's (`target/release/schema_ttfm bench/schemas/*.json`
//! splits them; `bench/PERFORMANCE.md` has the figures). The emitter writes no more than the
//! schema needs: one rule per distinct subschema, strings and numbers as single regex
//! terminals, arrays and objects as right-linear rules over a small automaton.
//!
//! One cost is the lexer's: munch lexes with one DFA over every terminal, and all JSON string
//! terminals start with `"`, so a long length-bounded string beside other constrained strings
//! (formats, patterns) multiplies their automata (tens of thousands of states for a 200-character
//! `maxLength` beside email addresses). Such a grammar still compiles within the lexer's state
//! budget, or fails with the budget's typed error; it is never approximated.
//!
//! A string's constraints that meet (a pattern beside a length, a pattern beside another, the
//! strings a `not` excludes) are intersected on automata and written back as one regex. Where
//! that is past the combination's budget (a count of a few hundred characters) or the regex
//! would nest too deep (state elimination nests a group per counted character), the regex
//! holds the parts in reserved groups (`munch_lexer::dfa::meet_name`) and the lexer intersects
//! them itself; `munch::Grammar::from_json_schema` loads the text so (a hand-written Lark
//! grammar's group of that name stays a group).
//!
//! # Exactness
//!
//! Each keyword is compiled exactly or refused ([`SchemaErrorKind::Unsupported`]); with
//! [`SchemaOptions::lenient`] a refused keyword is dropped instead (the language grows) and listed
//! in [`CompiledSchema::relaxations`]. The profile restricts how instances are written, never
//! what they mean:
//! - Whitespace and separators as the options say; object members in schema order or any order.
//! - Strings whose characters are constrained (`pattern`, `format`, `enum`, `const`, property
//!   names) spell each character as `JSON.stringify` does (`\"`, `\\`, control escapes; `\/`
//!   also taken); see [`encode`] for the exact profile.
//! - Numbers under `minimum`/`maximum`/`exclusive*`, and integers, are written without
//!   exponent (whether `1e2` is at most 100 is not regular in general), except on a side of
//!   zero the bounds leave whole (`exclusiveMinimum: 0` takes `2.5e7`); `1.0` is an integer.
//!
//! Compiled: `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`,
//! `patternProperties` (a key takes every matching pattern's schema; additional properties take
//! the keys no pattern matches and no property declares: intersections and differences of the
//! key regexes, computed on automata; at most 4 patterns with different schemas),
//! `propertyNames`, `min/maxProperties`, `items`, `prefixItems`, `additionalItems`,
//! `min/maxItems`, `contains`/`minContains`, `anyOf`, `allOf`, `oneOf` (branches that provably
//! exclude each other: types, `const`/`enum` values, a required discriminator; else each branch
//! with the complements of the others), `not` and `if`/`then`/`else` through complements (of
//! types, `const`/`enum` over null, booleans, numbers and strings, numeric bounds, string
//! lengths, patterns and formats, array lengths, `items`, `prefixItems` and `contains`,
//! `required`, and `properties` in turn; in `oneOf`, of
//! `additionalProperties: false` beside other closed objects; several string constraints, or a
//! string's exclusions, meet on automata),
//! `dependentRequired`/`dependentSchemas` and draft-07's `dependencies` (an object without the
//! key, or with what it depends on), `$ref` into the document (`$defs`, `definitions`,
//! recursion), `min/maxLength`, `pattern` (ECMA-262; its look-arounds where they test the whole
//! string: look-aheads at the start of an anchored pattern, `(?![\s\S])` and `(?<!X)$` at its
//! end, each a pattern the string must or must not match), `format` (the
//! [`format::FORMATS`]), numeric bounds, `multipleOf` (powers of ten, 2 on integers), boolean
//! schemas; annotations and formats munch does not know are ignored (as validators do).
//! `uniqueItems` over a finite domain of at most 8 values (`enum` items, booleans). Refused:
//! `uniqueItems` on other arrays of more than one item, `maxContains`, `not`/`if` of other
//! schemas and overlapping `oneOf` whose branches' complements are not among those, other
//! `multipleOf`s, string constraints whose automata exceed their budget (a length folds into an
//! anchored pattern with one variable-length piece where it can, else meets the pattern on
//! automata), `unevaluatedItems`, `unevaluatedProperties` beside `anyOf`, `oneOf`, `if`,
//! dependencies or `patternProperties` (beside `properties`, `allOf` and `$ref` it is compiled as
//! `additionalProperties` beside the keys they declare), remote references.

// All APIs need docs: the facade and the Python bindings document from here.
#![deny(missing_docs)]

mod boolean;
mod compile;
mod ecma;
pub mod encode;
mod error;
pub mod format;
mod length;
mod number;
mod options;
mod simple;

pub use error::{SchemaError, SchemaErrorKind};
pub use options::{PropertyOrder, SchemaOptions, Whitespace};

use serde_json::Value;

/// A keyword that `lenient` dropped: the language accepts more than the schema allows there
/// (or, for a root `$schema` naming a meta-schema that is not published, the schema read as
/// draft 2020-12, which that meta-schema may not mean).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relaxation {
    /// The keyword's JSON pointer.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// Why it could not be compiled exactly.
    pub reason: String,
}

/// A compiled schema: Lark text (start rule `start`) and what was relaxed.
#[derive(Clone, Debug)]
pub struct CompiledSchema {
    lark: String,
    relaxations: Vec<Relaxation>,
    origins: Vec<TerminalOrigin>,
}

impl CompiledSchema {
    /// The Lark grammar; its start rule is `start`.
    pub fn lark(&self) -> &str {
        &self.lark
    }

    /// Every keyword dropped under [`SchemaOptions::lenient`] (empty when strict).
    pub fn relaxations(&self) -> &[Relaxation] {
        &self.relaxations
    }

    /// Where each terminal of [`CompiledSchema::lark`] comes from, in the order they are
    /// defined: what an error about a terminal (a lexer budget that one string's
    /// constraints exceed) reports instead of a line of generated text.
    pub fn terminal_origins(&self) -> &[TerminalOrigin] {
        &self.origins
    }
}

/// The subschema a terminal of the compiled grammar was written for (the first one, where
/// several subschemas share a terminal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalOrigin {
    /// The terminal's name in the Lark text (`T3`).
    pub name: String,
    /// The subschema's JSON pointer (`/properties/subject`; empty for the root).
    pub pointer: String,
    /// The keywords of that subschema that shape its strings (`maxLength`, `pattern`,
    /// `format`, ...), in that order; empty when none does (a key, a generic string).
    pub keywords: Vec<&'static str>,
}

/// Compiles a schema given as JSON text.
pub fn compile_str(text: &str, options: &SchemaOptions) -> Result<CompiledSchema, SchemaError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| SchemaError::new(SchemaErrorKind::Json(e.to_string()), ""))?;
    compile(&v, options)
}

/// Compiles a schema.
pub fn compile(schema: &Value, options: &SchemaOptions) -> Result<CompiledSchema, SchemaError> {
    check_options(options)?;
    // Under `lenient` a meta-schema that is not published is read as 2020-12, and listed.
    let (dialect, custom) = match dialect(schema) {
        Ok(d) => (d, None),
        Err(_) if options.lenient && schema.get("$schema").is_some_and(Value::is_string) => (
            "2020-12",
            Some(Relaxation {
                pointer: "/$schema".to_string(),
                keyword: "$schema".to_string(),
                reason: format!(
                    "{} is not a published meta-schema: read as draft 2020-12",
                    schema["$schema"]
                ),
            }),
        ),
        Err(e) => return Err(e),
    };
    let ref_overrides = matches!(dialect, "draft-04" | "draft-06" | "draft-07");
    let norm = simple::Normalizer {
        root: schema,
        max_depth: options.max_depth,
        max_alternatives: options.max_alternatives,
        ref_overrides,
        lenient: options.lenient,
        relaxations: Vec::new(),
    };
    let emitter = compile::Emitter::new(norm, options);
    let (lark, norm, origins) = emitter.grammar(simple::Sub {
        value: schema.clone(),
        ptr: String::new(),
    })?;
    Ok(CompiledSchema {
        lark,
        relaxations: custom.into_iter().chain(norm.relaxations).collect(),
        origins,
    })
}

/// The published meta-schemas munch reads a root `$schema` as (with or without `http`/`https`,
/// `www.` and a trailing `#`), by the draft whose validation each has. Each draft's
/// hyper-schema adds link annotations to the draft's vocabulary and validates as the draft
/// does.
const DIALECTS: &[(&str, &str)] = &[
    ("json-schema.org/draft-03/schema", "draft-03"),
    ("json-schema.org/draft-04/schema", "draft-04"),
    ("json-schema.org/draft-06/schema", "draft-06"),
    ("json-schema.org/draft-07/schema", "draft-07"),
    ("json-schema.org/draft/2019-09/schema", "2019-09"),
    ("json-schema.org/draft/2020-12/schema", "2020-12"),
    ("json-schema.org/schema", "2020-12"),
    ("json-schema.org/draft-03/hyper-schema", "draft-03"),
    ("json-schema.org/draft-04/hyper-schema", "draft-04"),
    ("json-schema.org/draft-06/hyper-schema", "draft-06"),
    ("json-schema.org/draft-07/hyper-schema", "draft-07"),
    ("json-schema.org/draft/2019-09/hyper-schema", "2019-09"),
    ("json-schema.org/draft/2020-12/hyper-schema", "2020-12"),
];

/// Published meta-schemas that add annotations to a draft and validate as it does, by the end
/// of their address (each is published at several): Snowplow's self-describing schemas
/// (draft-04 and a `self` naming the schema) and AWS CloudFormation's resource provider
/// schemas (draft-07).
const EXTENSIONS: &[(&str, &str)] = &[
    (
        "/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0",
        "draft-04",
    ),
    ("/provider.definition.schema.v1.json", "draft-07"),
];

/// The draft of the root's `$schema` (2020-12 when there is none). Another meta-schema may
/// change what every keyword means (a custom vocabulary can turn validation off), so it is
/// refused rather than read as a draft it may not be.
fn dialect(schema: &Value) -> Result<&'static str, SchemaError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok("2020-12");
    };
    let invalid = |reason: &str| {
        SchemaError::new(
            SchemaErrorKind::Unsupported {
                keyword: "$schema".to_string(),
                reason: reason.to_string(),
            },
            "/$schema",
        )
    };
    let uri = uri
        .as_str()
        .ok_or_else(|| invalid("must be a string naming a meta-schema"))?;
    let bare = uri
        .trim_end_matches('#')
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_start_matches("www.");
    DIALECTS
        .iter()
        .find(|(known, _)| *known == bare)
        .or_else(|| EXTENSIONS.iter().find(|(end, _)| bare.ends_with(end)))
        .map(|(_, draft)| *draft)
        .ok_or_else(|| {
            invalid(&format!(
                "{uri:?} is not a published JSON Schema meta-schema (draft-03 to 2020-12); a \
                 custom one may change what the keywords mean"
            ))
        })
}

fn check_options(o: &SchemaOptions) -> Result<(), SchemaError> {
    let bad = |what: &str, reason: &str| {
        Err(SchemaError::new(
            SchemaErrorKind::Invalid {
                keyword: what.to_string(),
                reason: reason.to_string(),
            },
            "",
        ))
    };
    for (name, sep, mark) in [
        ("item_separator", &o.item_separator, ','),
        ("key_separator", &o.key_separator, ':'),
    ] {
        let marks = sep.chars().filter(|&c| c == mark).count();
        let rest_ws = sep
            .chars()
            .all(|c| c == mark || matches!(c, ' ' | '\t' | '\n' | '\r'));
        if marks != 1 || !rest_ws {
            return bad(name, "must hold its one mark and otherwise only whitespace");
        }
    }
    if let Whitespace::Flexible { max_run: 0 } = o.whitespace {
        return bad("whitespace", "max_run must be at least 1");
    }
    Ok(())
}

/// A grammar whose sentences are the whole matches of the ECMA-262 regex `pattern` (`^` and `$`
/// at its ends are redundant and taken).
pub fn regex_grammar(pattern: &str) -> Result<String, SchemaError> {
    let err = |reason: String| {
        SchemaError::new(
            SchemaErrorKind::Pattern {
                pattern: pattern.to_string(),
                reason,
            },
            "",
        )
    };
    let hir = ecma::parse(pattern).map_err(err)?;
    if hir.properties().minimum_len() == Some(0) {
        return Err(err(
            "the regex matches the empty string, and a grammar's terminals cannot".into(),
        ));
    }
    let body = compile::anchored_match(&hir, encode::Encoding::Raw, true).map_err(err)?;
    Ok(format!(
        "// Generated by munch-schema.\nstart: REGEX\nREGEX: /{body}/\n"
    ))
}
