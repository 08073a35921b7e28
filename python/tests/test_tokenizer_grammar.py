"""Tokenizers and grammars: loading, their properties, and every error they raise."""

from __future__ import annotations

import json

import pytest

import munch
from conftest import tokenizer_json, write_tokenizer


def test_tokenizer_from_file(tokenizer_path):
    tok = munch.Tokenizer.from_file(tokenizer_path)
    assert tok.vocab_size == len(tok)
    assert tok.eos_token_ids == [len(tok) - 1]
    assert tok.name == tokenizer_path.parent.name
    for b in range(256):
        assert tok.token_bytes(b) == bytes([b])
    assert tok.token_bytes(len(tok) - 1) is None  # <|endoftext|>, special
    text = '{"name": [1, true]}'
    ids = tok.encode(text)
    assert tok.decode_bytes(ids) == text.encode()
    assert len(ids) < len(text.encode()), "merged tokens are used"
    assert "munch.Tokenizer(" in repr(tok)


def test_tokenizer_vocab_size_pads_the_logits(tokenizer_path):
    plain = munch.Tokenizer.from_file(tokenizer_path)
    padded = munch.Tokenizer.from_file(tokenizer_path, vocab_size=len(plain) + 100)
    assert padded.vocab_size == len(plain) + 100
    assert len(padded) == len(plain)
    assert padded.token_bytes(len(plain) + 99) is None
    with pytest.raises(ValueError, match="out of range"):
        padded.token_bytes(len(plain) + 100)
    with pytest.raises(ValueError, match="smaller than the tokenizer's"):
        munch.Tokenizer.from_file(tokenizer_path, vocab_size=len(plain) - 1)


def test_tokenizer_from_json_and_eos_token():
    text = tokenizer_json(specials=("<|endoftext|>", "<|im_end|>", "<|im_start|>"))
    tok = munch.Tokenizer.from_json(text)
    n = len(tok)
    # Both are EOS names munch knows; <|im_start|> is not.
    assert tok.eos_token_ids == [n - 3, n - 2]
    tok = munch.Tokenizer.from_json(text.encode(), name="mine", eos_token="<|im_start|>")
    assert tok.eos_token_ids == [n - 3, n - 2, n - 1]
    assert tok.name == "mine"
    with pytest.raises(munch.TokenizerError, match="not a special token"):
        munch.Tokenizer.from_json(text, eos_token="true")
    with pytest.raises(ValueError, match="str or bytes"):
        munch.Tokenizer.from_json(42)


def test_tokenizer_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no tokenizer file"):
        munch.Tokenizer.from_file(tmp_path / "missing.json")
    bad = tmp_path / "bad" / "tokenizer.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    with pytest.raises(munch.TokenizerError) as e:
        munch.Tokenizer.from_file(bad)
    assert isinstance(e.value, munch.MunchError) and isinstance(e.value, ValueError)
    doc = json.loads(tokenizer_json())
    doc["model"]["type"] = "Unigram"
    with pytest.raises(munch.TokenizerError):
        munch.Tokenizer.from_json(json.dumps(doc))


def test_tokenizer_from_huggingface_needs_a_fast_tokenizer():
    class Slow:
        pass

    with pytest.raises(ValueError, match="not a fast tokenizer"):
        munch.Tokenizer.from_huggingface(Slow())

    class Backend:
        def to_str(self):
            return tokenizer_json(specials=("<|endoftext|>", "<pad>"))

    class Fast:
        backend_tokenizer = Backend()
        name_or_path = "fake/fast"
        eos_token = "<pad>"

    tok = munch.Tokenizer.from_huggingface(Fast(), vocab_size=1000)
    assert tok.vocab_size == 1000
    assert tok.eos_token_ids == [len(tok) - 2, len(tok) - 1]
    assert tok.name == "fake/fast"
    # An eos_token that is not a special token: the tokenizer's own EOS ids stay.
    Fast.eos_token = "true"
    assert munch.Tokenizer.from_huggingface(Fast()).eos_token_ids == [len(tok) - 2]


def test_grammar_constructors(tmp_path):
    g = munch.Grammar.from_lark('value: "a" | "[" value "]"', start="value")
    assert (g.name, g.start) == ("<grammar>", "value")
    assert "value" in g.text
    path = tmp_path / "g.lark"
    path.write_text('start: "x"+\n')
    g = munch.Grammar.from_file(path)
    assert g.name == str(path) and g.start == "start"
    assert munch.Grammar.builtin("json").name == "builtin:json"
    assert munch.Grammar.builtin("builtin:tricky").name == "builtin:tricky"
    assert "munch.Grammar(" in repr(g)


def test_grammar_errors_carry_place_and_caret(tokenizer, tmp_path):
    g = munch.Grammar.from_lark('start: "a" (\n')
    with pytest.raises(munch.GrammarError) as e:
        munch.compile(g, tokenizer)
    message = str(e.value)
    assert message.startswith("<grammar>:1:"), message
    assert "^" in message and 'start: "a" (' in message
    assert isinstance(e.value, ValueError)
    assert e.value.subschemas == []

    path = tmp_path / "broken.lark"
    path.write_text('start: item+\nitem: "a" | undefined_rule\n')
    with pytest.raises(munch.GrammarError) as e:
        munch.compile(munch.Grammar.from_file(path), tokenizer)
    message = str(e.value)
    assert message.startswith(f"{path}:2:"), message
    assert "undefined_rule" in message and "^" in message

    # No rule named by `start`.
    with pytest.raises(munch.GrammarError, match="start"):
        munch.compile(munch.Grammar.from_lark('value: "a"'), tokenizer)
    with pytest.raises(munch.GrammarError, match="no grammar"):
        munch.Grammar.builtin("cobol")
    with pytest.raises(munch.GrammarError, match="syncode:cobol"):
        munch.Grammar.syncode("cobol")
    with pytest.raises(FileNotFoundError, match="no grammar file"):
        munch.Grammar.from_file(tmp_path / "missing.lark")


# Blocks by indentation: Lark's PythonIndenter makes _INDENT and _DEDENT from _NEWLINE.
INDENTED = r"""
start: (_NEWLINE | stmt)*
stmt: NAME _NEWLINE | "if" NAME ":" _NEWLINE _INDENT stmt+ _DEDENT
NAME: /[a-z]+/
_NEWLINE: /(\r?\n[\t ]*)+/
%ignore " "
%declare _INDENT _DEDENT
"""


def test_postlex_python_indents_blocks(tokenizer):
    g = munch.Grammar.from_lark(INDENTED, postlex="python")
    assert g.postlex == "python"
    assert munch.Grammar.from_lark(INDENTED).postlex is None
    with pytest.raises(ValueError, match="unknown postlex"):
        munch.Grammar.from_lark(INDENTED, postlex="cobol")
    c = munch.compile(g, tokenizer, masker="trie")
    m = munch.Matcher(c)
    assert m.accept_string("if a:\n  b\n  c\nd\n")
    assert m.is_accepting()
    m = munch.Matcher(c)
    assert m.accept_string("if a:\n  b\n")
    # One space is neither the block's two nor the top level's none: an inconsistent dedent.
    assert not m.accept_string(" c\n")
    assert m.accept_string("  c\n") and m.is_accepting()
    # Without the indenter nothing makes _INDENT: refused, naming the post-lexer.
    with pytest.raises(munch.GrammarError, match="postlex = python"):
        munch.compile(munch.Grammar.from_lark(INDENTED), tokenizer, masker="trie")
