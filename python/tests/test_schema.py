"""munch.Grammar.from_json_schema and from_regex; `munch generate schema:F` output checked by a
real validator (jsonschema)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import munch
from conftest import run_generate

REPO = Path(__file__).resolve().parents[2]

# A tool call's arguments, the schema the Rust tests use too.
TOOL = json.loads((REPO / "munch/tests/data/tool_call.json").read_text())


def accepts(compiled: munch.CompiledGrammar, text: str) -> bool:
    m = munch.Matcher(compiled)
    try:
        ok = m.accept_string(text)
    except munch.MunchError:
        return False
    return bool(ok) and m.is_accepting()


def test_schema_from_dict_or_text(tokenizer):
    a = munch.Grammar.from_json_schema(TOOL)
    b = munch.Grammar.from_json_schema(json.dumps(TOOL))
    assert a.text == b.text
    c = munch.compile(a, tokenizer, masker="trie")
    assert accepts(c, '{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}')
    assert not accepts(c, '{"name": "get_weather", "arguments": {"city": "Oslo", "days": 15}}')
    assert not accepts(c, '{"arguments": {"city": "Oslo"}, "name": "get_weather"}')
    any_order = munch.Grammar.from_json_schema(TOOL, property_order="any", whitespace="compact")
    c = munch.compile(any_order, tokenizer, masker="trie")
    assert accepts(c, '{"arguments":{"city":"Oslo"},"name":"get_weather"}')
    assert not accepts(c, '{"arguments": {"city":"Oslo"},"name":"get_weather"}')


def test_schema_errors_and_relaxations():
    schema = {"type": "array", "uniqueItems": True}
    with pytest.raises(munch.GrammarError, match="uniqueItems") as e:
        munch.Grammar.from_json_schema(schema)
    assert e.value.subschemas == [("/uniqueItems", ["uniqueItems"])]
    g = munch.Grammar.from_json_schema(schema, lenient=True)
    assert g.relaxations == [("/uniqueItems", "uniqueItems", g.relaxations[0][2])]
    with pytest.raises(ValueError, match="property_order"):
        munch.Grammar.from_json_schema(TOOL, property_order="sorted")
    with pytest.raises(munch.GrammarError):
        munch.Grammar.from_json_schema("{not json")


def test_lexer_budget_names_the_subschema(tokenizer):
    # Strings of up to 5,000 characters pass the lexer's NFA budget: the refusal names the
    # property's pointer and keyword, not a line of the generated Lark text.
    schema = {"type": "object", "properties": {"body": {"type": "string", "maxLength": 5000}}}
    g = munch.Grammar.from_json_schema(schema)
    with pytest.raises(munch.GrammarError, match=r"`maxLength` at #/properties/body: ") as e:
        munch.compile(g, tokenizer, masker="trie")
    assert e.value.subschemas == [("/properties/body", ["maxLength"])]


def test_regex(tokenizer):
    g = munch.Grammar.from_regex(r"[0-9]{3}-[a-z]+")
    c = munch.compile(g, tokenizer, masker="trie")
    assert accepts(c, "123-abc")
    assert not accepts(c, "12-abc")
    with pytest.raises(munch.GrammarError):
        munch.Grammar.from_regex(r"(a)\1")


# The benchmark's real-world-shaped schemas, and small ones for the keywords compiled through
# automata and complements (patternProperties beside other keys, if/then/else, not,
# dependentRequired, overlapping oneOf).
SCHEMAS = sorted((REPO / "bench" / "schemas").glob("*.json")) + sorted(
    (REPO / "python" / "tests" / "data" / "schemas").glob("*.json")
)


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
def test_generated_text_validates(path, tokenizer_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(path.read_text())
    texts, summary, run = run_generate(
        f"schema:{path}", "--tokenizer", str(tokenizer_path),
        "-n", "8", "--seed", "7", "--max-tokens", "400",
    )
    assert summary["dead_ends"] == 0, run.stderr
    checker = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    for text in texts:
        errors = list(checker.iter_errors(json.loads(text)))
        assert not errors, f"{text}: {errors[0].message}"
