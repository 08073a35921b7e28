"""Matchers: masks against a brute-force check, accepting, rollback, fork, validation."""

from __future__ import annotations

import numpy as np
import pytest

import munch
from conftest import JSON_TEXTS, bits


def brute_force(matcher: munch.Matcher, vocab_size: int) -> list:
    """The allowed tokens by asking, for each token, whether it alone would be accepted."""
    return [t for t in range(vocab_size) if matcher.validate_tokens([t]) == 1]


@pytest.mark.parametrize("masker", ["wda", "spanner", "trie", "oracle"])
def test_masks_equal_a_brute_force_check_along_json_texts(json_grammar, tokenizer, masker):
    compiled = munch.compile(json_grammar, tokenizer, masker=masker)
    n = len(tokenizer)
    eos = tokenizer.eos_token_ids
    bitmask = munch.allocate_token_bitmask(1, tokenizer.vocab_size)
    for text in JSON_TEXTS:
        ids = tokenizer.encode(text)
        matcher = munch.Matcher(compiled)
        for step, token in enumerate(ids + eos[:1]):
            matcher.fill_next_token_bitmask(bitmask)
            allowed = bits(bitmask[0])
            assert allowed == brute_force(matcher, tokenizer.vocab_size), (text, step)
            assert all(t < n for t in allowed), "padded ids are never allowed"
            assert token in allowed, (text, step, token)
            assert (eos[0] in allowed) == matcher.is_accepting()
            assert matcher.accept_token(token)
        assert matcher.is_terminated()
        # After termination only the stop tokens are set.
        matcher.fill_next_token_bitmask(bitmask)
        assert bits(bitmask[0]) == eos


def test_accept_token_answers_and_raises(compiled, tokenizer):
    m = munch.Matcher(compiled)
    assert not m.accept_token(ord("x")), "not JSON"
    assert m.num_accepted == 0, "a refused token changes nothing"
    eos = tokenizer.eos_token_ids[0]
    assert not m.accept_token(eos), "no EOS before a sentence"
    assert not m.accept_token(len(tokenizer)), "a padded id is never allowed"
    for bad in (-1, tokenizer.vocab_size, 2**40):
        with pytest.raises(ValueError, match="out of range"):
            m.accept_token(bad)
    with pytest.raises(TypeError):
        m.accept_token("1")
    assert m.accept_token(np.int64(ord("1")))
    assert m.is_accepting() and not m.is_terminated()
    assert m.accept_token(eos)
    assert m.is_terminated()
    assert not m.accept_token(ord("2")), "nothing after the stop token"
    assert not m.accept_string("2")


def test_accept_string_rollback_reset(compiled):
    m = munch.Matcher(compiled)
    assert m.accept_string('{"a": [1, ')
    assert not m.accept_string("}")
    assert m.num_accepted == 1
    assert m.accept_tokens([ord("2"), ord("]")])
    assert not m.accept_tokens([ord("}"), ord("}")]), "all or none"
    assert m.num_accepted == 3
    before = m.allowed_token_ids()
    assert m.accept_token(ord("}"))
    assert m.is_accepting()
    m.rollback(1)
    assert m.allowed_token_ids() == before
    m.rollback(3)
    assert m.num_accepted == 0
    with pytest.raises(munch.MatcherError, match="cannot roll back 1 steps: 0 were accepted"):
        m.rollback(1)
    with pytest.raises(ValueError, match=">= 0"):
        m.rollback(-1)
    assert m.accept_string("[1]")
    m.reset()
    assert m.num_accepted == 0 and not m.is_accepting()
    assert m.accept_bytes(b'"\xc3\xa9"')
    assert m.is_accepting()


def test_fork_is_independent(compiled):
    m = munch.Matcher(compiled)
    assert m.accept_string("[1, ")
    f = m.fork()
    assert f.num_accepted == m.num_accepted
    assert f.accept_string("2]")
    assert f.is_accepting() and not m.is_accepting()
    assert m.accept_string("3, 4]")
    f.rollback(2)
    assert f.num_accepted == 0
    assert m.num_accepted == 2


def test_validate_tokens(compiled, tokenizer):
    m = munch.Matcher(compiled)
    ids = tokenizer.encode('{"a": true}')
    eos = tokenizer.eos_token_ids[0]
    assert m.validate_tokens(ids) == len(ids)
    assert m.validate_tokens(ids + [eos, ord("x")]) == len(ids) + 1, "a stop token ends it"
    assert m.validate_tokens(ids[:-1] + [ord("x")] + ids[-1:]) == len(ids) - 1  # truex
    assert m.validate_tokens([]) == 0
    assert m.validate_tokens(np.array(ids)) == len(ids)
    assert m.num_accepted == 0, "validation accepts nothing"
    with pytest.raises(ValueError, match="out of range"):
        m.validate_tokens([ids[0], tokenizer.vocab_size])


def test_stop_tokens_and_forced_string(compiled, tokenizer):
    stop = ord("\n")
    m = munch.Matcher(compiled, stop_token_ids=[ord("\n")])
    assert m.stop_token_ids == [stop]
    assert m.accept_string("[1]")
    eos = tokenizer.eos_token_ids[0]
    assert eos not in m.allowed_token_ids()
    assert stop in m.allowed_token_ids()
    assert m.accept_token(stop) and m.is_terminated()
    never = munch.Matcher(compiled, stop_token_ids=[])
    assert never.accept_string("[1]") and not never.accept_token(eos)
    with pytest.raises(ValueError, match="out of range"):
        munch.Matcher(compiled, stop_token_ids=[-1])

    tricky = munch.compile(munch.Grammar.from_lark('start: "hello" " " WORD\nWORD: /[a-z]+/'),
                           tokenizer)
    m = munch.Matcher(tricky)
    assert m.forced_string() == "hello "
    assert m.forced_bytes() == b"hello "
    assert m.accept_string("he")
    assert m.forced_string() == "llo "
    assert m.accept_string("llo w")
    assert m.forced_string() == ""
    assert "munch.Matcher(" in repr(m)


@pytest.mark.parametrize("masker", ["wda", "trie"])
def test_prefer_shift_refuses_what_larks_lalr_refuses(tokenizer, masker):
    # After `a`, `+` may begin `+=` (shift) or an addition (reduce `expr`): Lark's LALR parser
    # shifts and refuses `a + b`; munch's GLR parser takes it unless `prefer_shift=True`.
    text = 'start: NAME "+" "=" NAME | expr\n?expr: expr "+" NAME | NAME\nNAME: /[a-z]+/\n%ignore " "\n'
    for prefer_shift, takes in [(False, True), (True, False)]:
        grammar = munch.Grammar.from_lark(text, prefer_shift=prefer_shift)
        m = munch.Matcher(munch.compile(grammar, tokenizer, masker=masker))
        assert m.accept_string("a + ")
        assert m.accept_string("b") == takes, prefer_shift
        m = munch.Matcher(munch.compile(grammar, tokenizer, masker=masker))
        assert m.accept_string("a += b") and m.is_accepting()


@pytest.mark.parametrize("masker", ["wda", "trie"])
def test_keywords_are_names_where_the_parser_cannot_take_them(tokenizer, masker):
    # As Lark's contextual lexer: `x = if` assigns the name `if`; `reserved_literals=True`
    # keeps the keyword reserved, as Lark's basic lexer does.
    text = 'start: "if" NAME | NAME "=" NAME\nNAME: /[a-z_]+/\n%ignore " "\n'
    for reserved, ends in [(False, True), (True, False)]:
        grammar = munch.Grammar.from_lark(text, reserved_literals=reserved)
        m = munch.Matcher(munch.compile(grammar, tokenizer, masker=masker))
        assert m.accept_string("x = if")
        assert m.is_accepting() == ends, reserved
        # `if y` after `x = ` is no sentence either way.
        assert not m.accept_string(" y")
