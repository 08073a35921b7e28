//! Small schemas, each with texts it must accept and texts it must reject.

mod common;

use common::{accepts, schema_parser};
use munch_schema::{compile, PropertyOrder, SchemaErrorKind, SchemaOptions, Whitespace};
use serde_json::{json, Value};

fn check(schema: Value, options: &SchemaOptions, good: &[&str], bad: &[&str]) {
    let p = schema_parser(&schema, options);
    let lark = compile(&schema, options).unwrap().lark().to_string();
    for t in good {
        assert!(accepts(&p, t), "should accept {t}\nschema {schema}\n{lark}");
    }
    for t in bad {
        assert!(
            !accepts(&p, t),
            "should reject {t}\nschema {schema}\n{lark}"
        );
    }
}

fn compact() -> SchemaOptions {
    SchemaOptions::compact()
}

#[test]
fn scalars_and_types() {
    check(
        json!({"type": ["integer", "null"]}),
        &compact(),
        &["1", "-20", "null", "1.0", "0"],
        &["1.5", "\"1\"", "true", "01", "1e2"],
    );
    check(
        json!({"type": "string", "minLength": 2, "maxLength": 3}),
        &compact(),
        &[
            r#""ab""#,
            r#""abc""#,
            r#""\u00e9\n""#,
            r#""😀😀""#,
            r#""\ud83d\ude00x""#,
        ],
        &[r#""a""#, r#""abcd""#, "12"],
    );
    check(
        json!({"type": "number", "minimum": -1.5, "exclusiveMaximum": 10}),
        &compact(),
        &["-1.5", "0", "9.999", "-0"],
        &["-1.51", "10", "10.0", "1e0"],
    );
    check(json!(false), &compact(), &[], &["1", "null", "{}"]);
    check(
        json!(true),
        &compact(),
        &["1", "null", "{}", r#"{"a":[1,"x"]}"#],
        &["", "{"],
    );
}

#[test]
fn strings_with_patterns_formats_and_enums() {
    check(
        json!({"pattern": "^[a-z]+-\\d{2}$"}),
        &compact(),
        &[r#""abc-12""#, "1", "null"],
        &[r#""abc-1""#, r#""Abc-12""#, r#""abc-123""#],
    );
    check(
        json!({"type": "string", "pattern": "b"}),
        &compact(),
        &[r#""abc""#, r#""b""#, r#""\"b\"""#],
        &[r#""ac""#],
    );
    check(
        json!({"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "minLength": 2, "maxLength": 4}),
        &compact(),
        &[r#""ab""#, r#""a_9z""#],
        &[r#""a""#, r#""abcde""#, r#""9ab""#],
    );
    check(
        json!({"type": "string", "format": "uuid", "maxLength": 36}),
        &compact(),
        &[r#""2eb8aa08-aa98-11ea-b4aa-73b441d16380""#],
        &[r#""2eb8aa08""#],
    );
    check(
        json!({"type": "string", "format": "date"}),
        &compact(),
        &[r#""2024-02-29""#],
        &[r#""2023-02-29""#, r#""2024-2-1""#],
    );
    check(
        json!({"enum": ["red", "green", 1, null, {"a": [1, 2]}]}),
        &compact(),
        &[
            r#""red""#,
            r#""green""#,
            "1",
            "1.0",
            "null",
            r#"{"a":[1,2]}"#,
        ],
        &[r#""blue""#, "2", r#"{"a":[2,1]}"#, r#""re""#],
    );
    check(
        json!({"type": "string", "enum": ["a", 1, "b"], "maxLength": 1}),
        &compact(),
        &[r#""a""#, r#""b""#],
        &["1"],
    );
}

#[test]
fn objects_in_schema_order() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
        },
        "required": ["name"],
        "additionalProperties": false
    });
    check(
        schema.clone(),
        &compact(),
        &[
            r#"{"name":"x"}"#,
            r#"{"name":"x","age":3}"#,
            r#"{"name":"x","tags":["a","b"]}"#,
            r#"{"name":"x","age":0,"tags":[]}"#,
        ],
        &[
            r#"{}"#,
            r#"{"age":3}"#,
            r#"{"age":3,"name":"x"}"#,
            r#"{"name":"x","age":-1}"#,
            r#"{"name":"x","other":1}"#,
            r#"{"name":"x","tags":["a","b","c"]}"#,
            r#"{"name":"x","name":"y"}"#,
        ],
    );
    let any = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..compact()
    };
    check(
        schema,
        &any,
        &[
            r#"{"age":3,"name":"x"}"#,
            r#"{"tags":[],"name":"x","age":1}"#,
        ],
        &[r#"{"age":3}"#, r#"{"name":"x","age":1,"name":"y"}"#],
    );
}

#[test]
fn additional_properties_exclude_declared_names() {
    check(
        json!({
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
            "minProperties": 2,
            "maxProperties": 3
        }),
        &compact(),
        &[
            r#"{"a":1,"b":"x"}"#,
            r#"{"b":"x","c":"y"}"#,
            r#"{"a":1,"b":"x","ab":"y"}"#,
        ],
        &[
            r#"{"a":1}"#,
            r#"{"b":"x","a":"y"}"#,
            r#"{"a":1,"b":"x","c":"y","d":"z"}"#,
            r#"{"b":"x","\u0061":1}"#,
        ],
    );
}

#[test]
fn patterns_that_take_anything_change_nothing() {
    check(
        json!({"properties": {"a": {"type": "integer"}}, "patternProperties": {"^x-": {}}}),
        &compact(),
        &[r#"{"a":1,"x-y":[2]}"#, r#"{"b":"c"}"#],
        &[r#"{"a":"1"}"#],
    );
}

#[test]
fn arrays_tuples_and_contains() {
    check(
        json!({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false}),
        &compact(),
        &["[]", "[1]", r#"[1,"a"]"#],
        &[r#"[1,"a",2]"#, r#"["a"]"#],
    );
    check(
        json!({"type": "array", "contains": {"const": 5}, "minContains": 2}),
        &compact(),
        &["[5,5]", "[1,5,2,5]", "[5,5,5]"],
        &["[]", "[5]", "[1,2,5]"],
    );
    check(
        json!({"type": "array", "items": {"enum": ["a", "b", 1]}, "uniqueItems": true, "minItems": 1}),
        &compact(),
        &[r#"["a"]"#, r#"[1,"a","b"]"#, r#"["b",1.0]"#],
        &["[]", r#"["a","a"]"#, r#"[1,"b",1.0]"#, r#"["c"]"#],
    );
    check(
        json!({"type": "array", "minItems": 2, "maxItems": 3}),
        &compact(),
        &["[1,2]", "[1,2,3]"],
        &["[1]", "[1,2,3,4]"],
    );
}

#[test]
fn refs_recursion_and_combinators() {
    let tree = json!({
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                },
                "required": ["v"],
                "additionalProperties": false
            }
        },
        "$ref": "#/$defs/node"
    });
    check(
        tree,
        &compact(),
        &[
            r#"{"v":1}"#,
            r#"{"v":1,"kids":[{"v":2,"kids":[]},{"v":3}]}"#,
        ],
        &[r#"{"v":1,"kids":[{}]}"#],
    );
    check(
        json!({"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 3}]}),
        &compact(),
        &[r#""x""#, "3"],
        &["4", "null"],
    );
    check(
        json!({"allOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 2}, "b": {"type": "string"}}}
        ]}),
        &compact(),
        &[r#"{"a":2}"#, r#"{"a":5,"b":"x"}"#],
        &[r#"{"a":1}"#, r#"{"b":"x"}"#, r#"{"a":2,"b":1}"#],
    );
    check(
        json!({"oneOf": [
            {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind"]}
        ]}),
        &compact(),
        &[r#"{"kind":"a","x":1}"#, r#"{"kind":"b","y":"s"}"#],
        &[r#"{"kind":"c"}"#, r#"{"kind":"a","x":"s"}"#],
    );
    check(
        json!({"not": {"type": "string"}}),
        &compact(),
        &["1", "null", "[]"],
        &[r#""s""#],
    );
}

#[test]
fn whitespace_is_bounded() {
    let o = SchemaOptions {
        whitespace: Whitespace::Flexible { max_run: 3 },
        ..SchemaOptions::default()
    };
    check(
        json!({"type": "object", "properties": {"a": {"type": "array"}}}),
        &o,
        &[
            r#" { "a" : [ 1 , 2 ] } "#,
            "{}",
            "{   }",
            "{\n  \"a\": []\n}",
        ],
        &["{    }", r#"{"a":    []}"#],
    );
    let sep = SchemaOptions {
        item_separator: ", ".into(),
        key_separator: ": ".into(),
        ..compact()
    };
    check(
        json!({"type": "object"}),
        &sep,
        &[r#"{"a": [1, 2], "b": {}}"#],
        &[r#"{"a":[1,2]}"#],
    );
}

#[test]
fn unsupported_keywords_are_typed_errors_or_listed_relaxations() {
    let schema = json!({"properties": {"xs": {"type": "array", "uniqueItems": true}}});
    let err = compile(&schema, &compact()).unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    assert_eq!(err.keyword(), Some("uniqueItems"));
    assert_eq!(err.pointer(), "/properties/xs/uniqueItems");
    let lenient = SchemaOptions {
        lenient: true,
        ..compact()
    };
    let c = compile(&schema, &lenient).unwrap();
    assert_eq!(c.relaxations().len(), 1);
    assert_eq!(c.relaxations()[0].pointer, "/properties/xs/uniqueItems");

    let err = compile(&json!({"pattern": "(a)\\1"}), &compact()).unwrap_err();
    assert!(
        matches!(err.kind(), SchemaErrorKind::Pattern { .. }),
        "{err}"
    );
    let err = compile(&json!({"$ref": "#/nowhere"}), &compact()).unwrap_err();
    assert!(matches!(err.kind(), SchemaErrorKind::BadRef(_)), "{err}");
    let err = compile(&json!({"$ref": "#"}), &compact()).unwrap_err();
    assert!(
        matches!(err.kind(), SchemaErrorKind::Budget { .. }),
        "{err}"
    );
}

#[test]
fn look_arounds_that_test_the_whole_string() {
    let s = |p: &str| json!({"type": "string", "pattern": p});
    // Look-aheads at the start of an anchored pattern.
    check(
        s("^(?!aws:)[a-z:]+$"),
        &compact(),
        &[r#""abc""#, r#""aws""#, r#""aw:s""#, r#""xaws:""#],
        &[r#""aws:""#, r#""aws:x""#, r#""""#, r#""A""#],
    );
    check(
        s("^(?!aws:|rds:)(?!x)(?=.{2})[a-z:]*$"),
        &compact(),
        &[r#""ab""#, r#""rds""#, r#""awsx""#],
        &[r#""a""#, r#""rds:""#, r#""aws:b""#, r#""xy""#],
    );
    check(
        s(r"^(?!\s*$).+$"),
        &compact(),
        &[r#""a""#, r#"" a ""#],
        &[r#""""#, r#""  ""#, r#""\t""#],
    );
    // Nothing after the look-ahead; a first look-ahead anchored inside.
    check(
        s("^(?!aws:.*)"),
        &compact(),
        &[r#""""#, r#""aws""#, r#""a:aws:""#],
        &[r#""aws:""#, r#""aws:x""#],
    );
    check(
        s("(?=^.{3,5}$)[a-z]+"),
        &compact(),
        &[r#""abc""#, r#""ab1""#, r#""abcde""#],
        &[r#""ab""#, r#""1bc""#, r#""abcdef""#],
    );
    // At the end: no character follows, or the string does (not) end with a match. (The same
    // strings with anchors in alternations, which regex-syntax factors into a group after
    // `^\S`: see `anchors_inside_alternations_are_distributed`.)
    for p in [r"^\S([\s\S]*\S)?(?![\s\S])", r"(^[\S].*[\S]$)|(^[\S]$)"] {
        check(
            s(p),
            &compact(),
            &[r#""a""#, r#""a b""#],
            &[r#""""#, r#"" a""#, r#""a ""#],
        );
    }
    check(
        s(r"^[a-z.]*(?<!\.)$"),
        &compact(),
        &[r#""""#, r#""a.b""#],
        &[r#""a.""#, r#"".""#],
    );
    check(
        s("[0-9](?<=5)$"),
        &compact(),
        &[r#""a5""#, r#""5""#],
        &[r#""4""#, r#""5a""#],
    );
    // Negated: the strings the split pattern does not match.
    check(
        json!({"type": "string", "not": {"pattern": "^(?!ab)a"}}),
        &compact(),
        &[r#""ab""#, r#""b""#, r#""""#],
        &[r#""a""#, r#""ac""#],
    );
    // A key pattern: the keys it takes exclude the look-ahead's, which additional properties
    // take.
    check(
        json!({"type": "object", "patternProperties": {"^(?!aws:)[a-z:]+$": {"type": "integer"}},
               "additionalProperties": {"type": "string"}}),
        &compact(),
        &[r#"{"ab":1}"#, r#"{"aws:x":"s"}"#, r#"{"aws":2,"A":"t"}"#],
        &[r#"{"ab":"s"}"#, r#"{"aws:x":1}"#],
    );
    // Look-arounds elsewhere stay refused, naming the pattern.
    for p in ["^a(?!b)c", "(?!^x)y", "^(?!a)b|c", "a(?<=a)b$"] {
        let err = compile(&s(p), &compact()).unwrap_err();
        assert!(
            matches!(err.kind(), SchemaErrorKind::Pattern { pattern, .. } if pattern == p),
            "{p}: {err}"
        );
        assert_eq!(err.pointer(), "/pattern");
    }
}

#[test]
fn counts_beside_exclusions_meet_in_the_lexer() {
    // Beside an excluded prefix a count is written back as a regex nesting a group per
    // character: up to a depth the grammar's regex reader takes, and past it (or past the
    // automata's budget) the lexer intersects the parts itself.
    let schema = |n: u64| json!({"type": "string", "maxLength": n, "not": {"pattern": "^aws:"}});
    for n in [40u64, 128] {
        let at_most = format!("\"{}\"", "x".repeat(n as usize));
        let over = format!("\"{}\"", "x".repeat(n as usize + 1));
        check(
            schema(n),
            &compact(),
            &[r#""""#, r#""aws""#, r#""ab:cd""#, &at_most],
            &[r#""aws:""#, &over],
        );
    }
    let lark = compile(&schema(128), &compact())
        .unwrap()
        .lark()
        .to_string();
    assert!(lark.contains(munch_lexer::dfa::MEET_PREFIX), "{lark}");
    // Past the automata's own budget (a count of 1,000 characters): the lexer's intersection,
    // or, lenient, a relaxation as before (the product is likely past the lexer's budget too).
    let long = json!({"type": "string", "pattern": "^[a-z]+:[a-z]*$", "maxLength": 1000});
    let strict = compile(&long, &compact()).unwrap();
    assert!(strict.lark().contains(munch_lexer::dfa::MEET_PREFIX));
    assert!(strict.relaxations().is_empty());
    let lenient = SchemaOptions {
        lenient: true,
        ..compact()
    };
    let relaxed = compile(&long, &lenient).unwrap();
    assert!(!relaxed.lark().contains(munch_lexer::dfa::MEET_PREFIX));
    assert_eq!(
        relaxed.relaxations().len(),
        1,
        "{:?}",
        relaxed.relaxations()
    );
    // A pattern with a count past the automata's budget (and the reader's nesting).
    check(
        json!({"type": "string", "pattern": "^[a-z](-*[a-z])*$", "minLength": 2, "maxLength": 63}),
        &compact(),
        &[r#""ab""#, r#""a--b""#, &format!("\"{}\"", "a".repeat(63))],
        &[
            r#""a""#,
            r#""a-""#,
            r#""-a""#,
            &format!("\"{}\"", "a".repeat(64)),
        ],
    );
}

#[test]
fn anchors_inside_alternations_are_distributed() {
    let s = |p: &str| json!({"type": "string", "pattern": p});
    check(
        s("^$|^d-[0-9a-f]{2}$"),
        &compact(),
        &[r#""""#, r#""d-0f""#],
        &[r#""d-0""#, r#""xd-0f""#, r#"" ""#],
    );
    check(
        s("^(a|b$)"),
        &compact(),
        &[r#""a""#, r#""ax""#, r#""b""#],
        &[r#""bx""#, r#""xa""#],
    );
    check(
        s("^(x|y)(z$|w)"),
        &compact(),
        &[r#""xz""#, r#""yw""#, r#""xwq""#],
        &[r#""xzq""#, r#""zx""#, r#""axz""#],
    );
    // An anchor after characters, or inside a group after them, is still refused.
    for p in ["^arn:x/^.{1,5}$", "x(^a|b)"] {
        let err = compile(&s(p), &compact()).unwrap_err();
        assert!(
            matches!(err.kind(), SchemaErrorKind::Pattern { .. }),
            "{p}: {err}"
        );
    }
}

#[test]
fn regex_constraints() {
    let g = munch_schema::regex_grammar(r"^\d{3}-[a-z]+$").unwrap();
    let p = common::parser(&g).unwrap();
    assert!(accepts(&p, "123-abc"));
    assert!(!accepts(&p, "12-abc"));
    assert!(!accepts(&p, "123-"));
    let g = munch_schema::regex_grammar("a.*?b").unwrap();
    let p = common::parser(&g).unwrap();
    assert!(
        accepts(&p, "axbyb"),
        "a lazy quantifier keeps the whole-match language"
    );
    assert!(munch_schema::regex_grammar("a*").is_err());
}

#[test]
fn keys_are_split_by_the_patterns_they_match() {
    // A declared name takes its schema and every matching pattern's; a key matching several
    // patterns takes all their schemas; the additional properties take the rest.
    check(
        json!({
            "properties": {"x-id": {"type": "integer"}},
            "patternProperties": {"^x-": {"minimum": 0}, "id$": {"type": "number"}},
            "additionalProperties": {"type": "string"}
        }),
        &compact(),
        &[
            r#"{"x-id":3}"#,
            r#"{"x-a":"s"}"#,
            r#"{"x-a":1.5,"x-b":true}"#,
            r#"{"uid":1.5}"#,
            r#"{"x-uid":2.5,"b":"s"}"#,
            r#"{"b":"s","x":"t"}"#,
            r#"{"a\n\u001f":"s"}"#,
        ],
        &[
            r#"{"x-id":-3}"#,
            r#"{"x-id":1.5}"#,
            r#"{"x-a":-1}"#,
            r#"{"uid":"s"}"#,
            r#"{"x-uid":-2.5}"#,
            r#"{"x-uid":"s"}"#,
            r#"{"b":1}"#,
            r#"{"\u0062":1}"#,
            // Split keys are constrained strings: spelled as the profile says (`encode`).
            r#"{"\u0078-a":null}"#,
            r#"{"\u0062":"s"}"#,
        ],
    );
    // Property names beside declared properties: the declared ones are taken out of the
    // names' keys.
    check(
        json!({
            "properties": {"ID": {"type": "integer"}},
            "propertyNames": {"pattern": "^[A-Z]+$"},
            "additionalProperties": {"type": "string"}
        }),
        &compact(),
        &[r#"{"ID":1}"#, r#"{"ID":2,"AB":"s"}"#, r#"{"I":"s"}"#],
        &[
            r#"{"ID":"s"}"#,
            r#"{"AB":1}"#,
            r#"{"ab":"s"}"#,
            r#"{"\u0049D":"s"}"#,
        ],
    );
}

#[test]
fn not_if_and_overlapping_one_of_through_complements() {
    let any_order = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..compact()
    };
    // `required` holds for every non-object, so its complement is objects without the key.
    check(
        json!({"not": {"required": ["a"]}}),
        &any_order,
        &["{}", r#"{"b":1}"#],
        &[r#"{"a":1}"#, r#"{"b":1,"a":null}"#, "1", r#""s""#, "null"],
    );
    // A condition on a property's value.
    check(
        json!({
            "type": "object",
            "if": {"properties": {"kind": {"const": true}}, "required": ["kind"]},
            "then": {"required": ["x"]},
            "else": {"properties": {"x": false}}
        }),
        &any_order,
        &[
            r#"{"kind":true,"x":1}"#,
            r#"{"x":1,"kind":true}"#,
            r#"{"kind":false}"#,
            r#"{"kind":"yes"}"#,
            "{}",
        ],
        &[
            r#"{"kind":true}"#,
            r#"{"kind":false,"x":1}"#,
            r#"{"x":1}"#,
            "1",
        ],
    );
    // Exactly one of two branches that overlap (`additionalProperties: true` constrains
    // nothing, so has nothing to complement).
    check(
        json!({"oneOf": [{"required": ["a"], "additionalProperties": true}, {"required": ["b"]}]}),
        &any_order,
        &[r#"{"a":1}"#, r#"{"b":1,"c":2}"#],
        &[r#"{"a":1,"b":2}"#, "{}", "1", "[]"],
    );
    // Numeric bounds and string values have complements too.
    check(
        json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
        &compact(),
        &["1", "-1", "2.5", r#""s""#],
        &["2", "3", "2.0"],
    );
    check(
        json!({"not": {"enum": ["a", true, null]}}),
        &compact(),
        &[r#""b""#, r#""aa""#, "2", "false", "[]"],
        &[r#""a""#, r#""\u0061""#, "null", "true"],
    );
    check(
        json!({"type": "string", "oneOf": [{"minLength": 2}, {"maxLength": 4}]}),
        &compact(),
        &[r#""a""#, r#""abcde""#, r#""""#],
        &[r#""ab""#, r#""abcd""#, "1"],
    );
    // Several string constraints meet on automata.
    check(
        json!({"type": "string", "allOf": [{"pattern": "^a"}, {"pattern": "b$"}], "maxLength": 4}),
        &compact(),
        &[r#""ab""#, r#""axxb""#],
        &[r#""ba""#, r#""a""#, r#""axxxb""#],
    );
    // A pattern's complement: the strings it does not match (unanchored, as ECMA-262 reads
    // it), in the profile's spellings so no other spelling of a matching string gets through.
    check(
        json!({"type": "string", "not": {"pattern": "^ab"}}),
        &compact(),
        &[r#""a""#, r#""ba""#, r#""""#, r#""xab""#],
        &[r#""ab""#, r#""abc""#, r#""\u0061b""#, "1"],
    );
    // Exactly one of a pattern and a format, and `if` on a format.
    check(
        json!({"oneOf": [{"type": "string", "pattern": "^[0-9]+$"}, {"type": "string", "format": "date"}]}),
        &compact(),
        &[r#""12""#, r#""2024-01-31""#],
        &[r#""x""#, r#""2024-13-01""#, "12"],
    );
    check(
        json!({
            "type": "string",
            "if": {"format": "uuid"},
            "then": {"pattern": "^0"},
            "else": {"maxLength": 2}
        }),
        &compact(),
        &[r#""00000000-0000-0000-0000-000000000000""#, r#""ab""#],
        &[r#""10000000-0000-0000-0000-000000000000""#, r#""abc""#],
    );
    // Exactly one of two closed objects: an object of one branch that has a key the other does
    // not declare; `{}` and `{"n":1}` are in both, so in neither.
    check(
        json!({"oneOf": [
            {"type": "object", "properties": {"env": {"type": "string"}, "n": {"type": "integer"}}, "additionalProperties": false},
            {"type": "object", "properties": {"file": {"type": "string"}, "n": {"type": "integer"}}, "additionalProperties": false}
        ]}),
        &any_order,
        &[
            r#"{"env":"a"}"#,
            r#"{"n":1,"file":"b"}"#,
            r#"{"env":"a","n":2}"#,
        ],
        &[
            "{}",
            r#"{"n":1}"#,
            r#"{"env":"a","file":"b"}"#,
            r#"{"x":1}"#,
            r#"{"env":1}"#,
            r#"{"env":"a","n":"x"}"#,
        ],
    );
    // Beside an open object, what a closed one rejects is not written.
    let err = compile(
        &json!({"oneOf": [
            {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
            {"type": "object", "properties": {"a": {"type": "integer"}}}
        ]}),
        &compact(),
    )
    .unwrap_err();
    assert!(
        matches!(err.kind(), SchemaErrorKind::Unsupported { .. }),
        "{err}"
    );
    // Listed numbers: the numbers between and beyond them (1.0 is 1).
    check(
        json!({"not": {"enum": [1, 2.5, "a"]}}),
        &compact(),
        &["0", "1.5", "2", "3", "-1", "2.51", r#""b""#],
        &["1", "1.0", "2.5", "2.50", r#""a""#],
    );
    // Arrays: lengths, items, prefixes and `contains` have complements.
    check(
        json!({"not": {"type": "array", "items": {"type": "integer"}, "minItems": 1}}),
        &compact(),
        &["[]", r#"["a"]"#, r#"[1,"a"]"#, "1", "{}"],
        &["[1]", "[1,2]"],
    );
    check(
        json!({"type": "array", "not": {"prefixItems": [{"const": "a"}], "maxItems": 2}}),
        &compact(),
        &["[2]", r#"["a",2,3]"#, r#"["x",1]"#],
        &["[]", r#"["a"]"#, r#"["a",5]"#],
    );
    check(
        json!({
            "type": "array",
            "if": {"contains": {"const": "uv"}},
            "then": {"maxItems": 1}
        }),
        &compact(),
        &[r#"["uv"]"#, r#"["a","b"]"#, "[]"],
        &[r#"["uv","a"]"#, r#"["a","uv"]"#],
    );
    // `additionalProperties: true` beside `patternProperties` says nothing about the members.
    check(
        json!({
            "patternProperties": {"^x": {"type": "integer"}},
            "anyOf": [{"type": "object", "additionalProperties": true}, {"type": "string"}]
        }),
        &any_order,
        &[r#"{"x1":1,"y":"s"}"#, r#""s""#, "{}"],
        &[r#"{"x1":"s"}"#, "1"],
    );
    // `unevaluatedProperties` beside `allOf`/`$ref`: the keys they declare are evaluated.
    check(
        json!({
            "$defs": {"named": {"properties": {"name": {"type": "string"}}}},
            "allOf": [{"$ref": "#/$defs/named"}, {"properties": {"age": {"type": "integer"}}}],
            "properties": {"id": {"type": "integer"}},
            "unevaluatedProperties": false
        }),
        &any_order,
        &[r#"{"name":"a","age":1,"id":2}"#, "{}", r#"{"age":3}"#, "1"],
        &[r#"{"name":"a","x":1}"#, r#"{"x":1}"#, r#"{"age":"a"}"#],
    );
    // Evaluated keys that depend on the instance stay a refusal.
    let err = compile(
        &json!({"anyOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}),
        &compact(),
    )
    .unwrap_err();
    assert_eq!(err.keyword(), Some("unevaluatedProperties"), "{err}");
    // A complement munch does not write stays a typed refusal.
    for schema in [
        json!({"not": {"multipleOf": 3}}),
        json!({"oneOf": [{"type": "integer"}, {"multipleOf": 3}]}),
    ] {
        let err = compile(&schema, &compact()).unwrap_err();
        assert!(
            matches!(err.kind(), SchemaErrorKind::Unsupported { .. }),
            "{err}"
        );
    }
    // A dependency: an object without the key, or with what the key depends on.
    check(
        json!({
            "dependentRequired": {"a": ["b"]},
            "dependencies": {"c": {"properties": {"d": {"type": "integer"}}}}
        }),
        &any_order,
        &[
            "{}",
            r#"{"b":1}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"c":1,"d":2}"#,
            r#"{"d":"s"}"#,
            "1",
        ],
        &[r#"{"a":1}"#, r#"{"c":1,"d":"s"}"#, r#"{"a":1,"c":0}"#],
    );
}

#[test]
fn found_in_review() {
    let any_order = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..compact()
    };
    // A key spelled with escapes is the key it spells: it takes the declared name's schema, or
    // every pattern it matches (here it is refused: the profile spells constrained keys).
    check(
        json!({"properties": {"xa": {"type": "integer"}}, "patternProperties": {"^x": {"type": "string"}}}),
        &any_order,
        &[r#"{"xb":"s"}"#, "{}"],
        &[r#"{"x\u0061":"s"}"#, r#"{"xa":"s"}"#, r#"{"xa":1}"#],
    );
    check(
        json!({"patternProperties": {"^x": {"type": "string"}, "a$": {"type": "integer"}}}),
        &any_order,
        &[r#"{"xb":"s"}"#, r#"{"ba":1}"#],
        &[r#"{"x\u0061":"s"}"#, r#"{"xa":"s"}"#, r#"{"xa":1}"#],
    );
    // Non-integers under a multipleOf keep its decimal places; a multiple of 1 is no
    // non-integer.
    check(
        json!({"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 1, "not": {"type": "integer"}}),
        &compact(),
        &["0.25", "0.5", "0.10"],
        &["0.001", "1", "0", "1.5"],
    );
    check(
        json!({"multipleOf": 1, "not": {"type": "integer"}}),
        &compact(),
        &[r#""s""#, "true"],
        &["3", "3.5", "3.0"],
    );
    // Property names from an enum beside a pattern.
    check(
        json!({"propertyNames": {"anyOf": [{"enum": ["a"]}, {"pattern": "^x"}]}}),
        &any_order,
        &[r#"{"a":1}"#, r#"{"xy":1}"#],
        &[r#"{"zz":1}"#, r#"{"ab":1}"#],
    );
    // `<` and `>` in a string that automata read.
    check(
        json!({"type": "string", "not": {"const": "<none>"}}),
        &compact(),
        &[r#""<x>""#, r#""none""#],
        &[r#""<none>""#],
    );
}

#[test]
fn an_unsupported_combination_under_a_dependency_is_relaxed_when_lenient() {
    let schema = json!({"patternProperties": {"^x": {}}, "dependentRequired": {"a": ["b"]}});
    let err = compile(&schema, &compact()).unwrap_err();
    assert!(
        matches!(err.kind(), SchemaErrorKind::Unsupported { .. }),
        "{err}"
    );
    let lenient = SchemaOptions {
        lenient: true,
        ..compact()
    };
    let c = compile(&schema, &lenient).unwrap();
    assert_eq!(c.relaxations().len(), 1);
    assert_eq!(c.relaxations()[0].keyword, "dependentRequired");
}

/// Every terminal of the Lark text is listed with the subschema it spells: strings under
/// their property's pointer and shaping keywords, keys and punctuation under the object's.
#[test]
fn terminals_know_their_subschema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3},
            "when": {"type": "string", "format": "date"},
            "n": {"type": "integer", "minimum": 0}
        },
        "required": ["code", "when", "n"],
        "additionalProperties": false
    });
    let c = compile(&schema, &compact()).unwrap();
    let origins = c.terminal_origins();
    // Exactly the terminals the text defines, in its order.
    let defined: Vec<&str> = c
        .lark()
        .lines()
        .filter_map(|l| l.split_once(": /").map(|(name, _)| name))
        .filter(|name| name.starts_with('T'))
        .collect();
    let named: Vec<&str> = origins.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(named, defined);
    let at = |pointer: &str| {
        origins
            .iter()
            .filter(|o| o.pointer == pointer)
            .map(|o| o.keywords.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(at("/properties/code"), [vec!["maxLength", "pattern"]]);
    assert_eq!(at("/properties/when"), [vec!["format"]]);
    assert_eq!(at("/properties/n").len(), 1);
    // The three keys are the root object's.
    assert_eq!(at(""), vec![Vec::<&str>::new(); 3]);
}

/// A root `$schema` names the draft the keywords are read by: a draft-04 or draft-07 schema (or
/// its hyper-schema, or a published extension of it: Snowplow's, CloudFormation's) ignores the
/// siblings of a `$ref`, 2020-12 applies them; a meta-schema that is not published is refused,
/// since it may change what the keywords mean.
#[test]
fn the_root_schema_names_the_draft() {
    let with = |uri: &str| {
        json!({
            "$schema": uri,
            "definitions": {"s": {"type": "string"}},
            "$ref": "#/definitions/s",
            "maxLength": 2
        })
    };
    for uri in [
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/hyper-schema#",
        "https://json-schema.org/draft-04/hyper-schema",
        "http://example.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#",
        "https://example.com/provider.definition.schema.v1.json",
    ] {
        check(with(uri), &compact(), &[r#""ab""#, r#""abcd""#], &["1"]);
    }
    for uri in [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/hyper-schema",
    ] {
        check(with(uri), &compact(), &[r#""ab""#], &[r#""abcd""#, "1"]);
    }
    let custom = with("https://example.com/schemas/our-meta-schema.json#");
    let e = compile(&custom, &compact()).unwrap_err();
    assert!(
        matches!(e.kind(), SchemaErrorKind::Unsupported { keyword, .. } if keyword == "$schema"),
        "{e}"
    );
    // Lenient: read as 2020-12 and listed.
    let lenient = SchemaOptions {
        lenient: true,
        ..compact()
    };
    let c = compile(&custom, &lenient).unwrap();
    assert_eq!(c.relaxations().len(), 1);
    assert_eq!(c.relaxations()[0].pointer, "/$schema");
    check(custom, &lenient, &[r#""ab""#], &[r#""abcd""#, "1"]);
}
