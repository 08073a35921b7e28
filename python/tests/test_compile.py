"""munch.compile and CompiledGrammar: maskers, stats, fallback, artifacts."""

from __future__ import annotations

import pytest

import munch


MASKERS = ["wda", "spanner", "trie", "oracle"]


@pytest.mark.parametrize("masker", MASKERS)
def test_compile_each_masker(json_grammar, tokenizer, masker):
    c = munch.compile(json_grammar, tokenizer, masker=masker)
    assert c.masker == masker
    assert c.fell_back is None
    assert c.vocab_size == tokenizer.vocab_size
    assert c.bitmask_width == (tokenizer.vocab_size + 31) // 32
    assert c.grammar_name == "builtin:json"
    assert c.tokenizer.vocab_size == tokenizer.vocab_size
    stats = c.stats
    assert isinstance(stats, dict)
    for key in ("parser_ms", "masker_ms", "terminals", "lexer_states", "lr_states"):
        assert key in stats, stats
    assert stats["terminals"] > 0
    assert f"masker={masker!r}".replace("'", '"') in repr(c)


def test_compile_options_are_checked(json_grammar, tokenizer):
    with pytest.raises(munch.CompileError, match="unknown masker `nope`"):
        munch.compile(json_grammar, tokenizer, masker="nope")
    with pytest.raises(munch.CompileError, match="unknown masker"):
        munch.compile(json_grammar, tokenizer, fallback="nope")
    with pytest.raises(TypeError):
        munch.compile("json", tokenizer)


def test_fallback_when_the_budget_is_too_small(json_grammar, tokenizer):
    c = munch.compile(json_grammar, tokenizer, masker="wda", max_memory=1)
    assert c.masker == "trie"
    assert c.fell_back is not None and "using masker `trie` instead" in c.fell_back
    with pytest.raises(munch.CompileError, match="wda"):
        munch.compile(json_grammar, tokenizer, masker="wda", fallback=None, max_memory=1)


def _allowed_along(compiled, texts):
    m = munch.Matcher(compiled)
    out = []
    for text in texts:
        assert m.accept_string(text)
        out.append(m.allowed_token_ids())
    return out


TEXTS = ['{"a": ', "[1, 2", ', "x"', "]}"]


@pytest.mark.parametrize("masker", ["wda", "spanner", "trie"])
def test_background_masks_at_once_and_hands_over(json_grammar, tokenizer, masker):
    expected = _allowed_along(munch.compile(json_grammar, tokenizer, masker="oracle"), TEXTS)
    c = munch.compile(json_grammar, tokenizer, masker=masker, background=True)
    assert _allowed_along(c, TEXTS) == expected
    c.wait()
    assert c.is_ready and c.masker == masker
    assert _allowed_along(c, TEXTS) == expected


def test_a_failed_background_build_raises_on_wait(json_grammar, tokenizer):
    c = munch.compile(
        json_grammar, tokenizer, masker="wda", fallback=None, max_memory=1, background=True
    )
    with pytest.raises(munch.CompileError, match="wda"):
        c.wait()
    assert not c.is_ready and c.masker == "trie"
    expected = _allowed_along(munch.compile(json_grammar, tokenizer, masker="oracle"), TEXTS)
    assert _allowed_along(c, TEXTS) == expected


def test_lazy_wda_masks_as_the_eager_one(json_grammar, tokenizer, compiled):
    lazy = munch.compile(json_grammar, tokenizer, masker="wda", lazy=True)
    assert lazy.masker == "wda"
    assert _allowed_along(lazy, TEXTS) == _allowed_along(compiled, TEXTS)


def test_save_and_load(tmp_path, json_grammar, tokenizer, compiled):
    path = tmp_path / "json.munch"
    compiled.save(path)
    assert path.stat().st_size > 0
    loaded = munch.CompiledGrammar.load(path, json_grammar, tokenizer)
    assert loaded.masker == "wda"
    a, b = munch.Matcher(compiled), munch.Matcher(loaded)
    for text in ['{"a": ', "[1, 2", '"x"']:
        a.reset()
        b.reset()
        assert a.accept_string(text) and b.accept_string(text)
        assert a.allowed_token_ids() == b.allowed_token_ids()

    other = munch.Grammar.from_lark('start: "x"+')
    with pytest.raises(munch.CompileError, match=str(path)):
        munch.CompiledGrammar.load(path, other, tokenizer)
    garbage = tmp_path / "garbage.munch"
    garbage.write_bytes(b"not an artifact")
    with pytest.raises(munch.CompileError):
        munch.CompiledGrammar.load(garbage, json_grammar, tokenizer)
    with pytest.raises(FileNotFoundError):
        munch.CompiledGrammar.load(tmp_path / "missing", json_grammar, tokenizer)
    trie = munch.compile(json_grammar, tokenizer, masker="trie")
    with pytest.raises(munch.CompileError, match="no artifact format"):
        trie.save(tmp_path / "trie.munch")
