"""Bitmasks: filling them in place (one by one and in batches) and every error on the way."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import munch
from conftest import JSON_TEXTS, bits


def matchers_along(compiled, tokenizer, count):
    """`count` matchers at different points of the JSON texts."""
    out = []
    for k in range(count):
        text = JSON_TEXTS[k % len(JSON_TEXTS)]
        ids = tokenizer.encode(text)
        m = munch.Matcher(compiled)
        assert m.accept_tokens(ids[: (k * 7) % len(ids)])
        out.append(m)
    return out


def test_allocate_and_reset(tokenizer):
    b = munch.allocate_token_bitmask(3, 100)
    assert b.shape == (3, 4) and b.dtype == np.int32
    assert (b == -1).all(), "every token allowed until filled"
    assert munch.bitmask_width(0) == 0 and munch.bitmask_width(32) == 1
    assert munch.bitmask_width(33) == 2
    b[:] = 0
    munch.reset_token_bitmask(b)
    assert (b == -1).all()
    with pytest.raises(ValueError):
        munch.allocate_token_bitmask(-1, 100)


def test_fill_one_row_of_many_and_padding(compiled, tokenizer):
    m = munch.Matcher(compiled)
    b = munch.allocate_token_bitmask(4, tokenizer.vocab_size)
    m.fill_next_token_bitmask(b, index=2)
    assert (b[[0, 1, 3]] == -1).all(), "other rows untouched"
    assert bits(b[2]) == m.allowed_token_ids()
    # A row wider than the vocabulary (a padded model): the extra words are zeroed.
    wide = np.full((1, compiled.bitmask_width + 3), -1, dtype=np.int32)
    m.fill_next_token_bitmask(wide)
    assert (wide[0, compiled.bitmask_width :] == 0).all()
    assert bits(wide[0]) == m.allowed_token_ids()
    one = np.zeros(compiled.bitmask_width, dtype=np.int32)
    m.fill_next_token_bitmask(one)
    assert bits(one) == m.allowed_token_ids()
    unsigned = np.zeros((1, compiled.bitmask_width), dtype=np.uint32)
    m.fill_next_token_bitmask(unsigned)
    assert bits(unsigned[0]) == m.allowed_token_ids()
    # Row 1 of a 2-row view of a bigger array: contiguous, written in place.
    big = np.zeros((4, compiled.bitmask_width), dtype=np.int32)
    m.fill_next_token_bitmask(big[2:], index=1)
    assert bits(big[3]) == m.allowed_token_ids() and not big[:3].any()


def test_bitmask_errors(compiled, tokenizer):
    m = munch.Matcher(compiled)
    w = compiled.bitmask_width
    cases = [
        (np.zeros((1, w), dtype=np.int64), "int32"),
        (np.zeros((1, w), dtype=np.float32), "int32"),
        (np.zeros((1, w), dtype=np.int16), "int32"),
        (np.zeros((1, 1, w), dtype=np.int32), "3 dimensions"),
        (np.zeros((1, w - 1), dtype=np.int32), "needs ceil"),
        (np.zeros((1, 2 * w), dtype=np.int32)[:, ::2], "not C-contiguous"),
        (np.zeros((w, 2), dtype=np.int32).T, "not C-contiguous"),
        ([[0] * w], "got a list"),
        (b"\0" * (4 * w), "int32"),
        (None, "got a NoneType"),
    ]
    readonly = np.zeros((1, w), dtype=np.int32)
    readonly.setflags(write=False)
    cases.append((readonly, "read-only"))
    misaligned = np.zeros(4 * w + 1, dtype=np.uint8)[1:].view(np.int32)
    cases.append((misaligned, "aligned"))
    for bitmask, message in cases:
        with pytest.raises(ValueError, match=message):
            m.fill_next_token_bitmask(bitmask)
            pytest.fail(f"no error for {message}: {bitmask!r}")
    b = munch.allocate_token_bitmask(2, tokenizer.vocab_size)
    for index in (-1, 2, 2**40):
        with pytest.raises(ValueError, match="out of range"):
            m.fill_next_token_bitmask(b, index=index)
    with pytest.raises(ValueError, match="only row 0"):
        m.fill_next_token_bitmask(np.zeros(w, dtype=np.int32), index=1)
    assert (b == -1).all(), "nothing written by a refused call"


def test_batch_fill_equals_one_by_one(compiled, tokenizer):
    ms = matchers_along(compiled, tokenizer, 9)
    expected = munch.allocate_token_bitmask(9, tokenizer.vocab_size)
    for i, m in enumerate(ms):
        m.fill_next_token_bitmask(expected, i)
    for threads in (None, 1, 2):
        b = munch.allocate_token_bitmask(9, tokenizer.vocab_size)
        munch.fill_next_token_bitmask_batch(ms, b, threads=threads)
        assert (b == expected).all()
    # With indices: matcher i fills row 8 - i; rows no matcher names stay as they are.
    b = munch.allocate_token_bitmask(12, tokenizer.vocab_size)
    munch.fill_next_token_bitmask_batch(ms, b, indices=np.arange(8, -1, -1))
    assert (b[:9][::-1] == expected).all() and (b[9:] == -1).all()
    b = munch.allocate_token_bitmask(9, tokenizer.vocab_size)
    munch.fill_next_token_bitmask_batch(ms[:3], b, [4, 0, 7], threads=2)
    for i, row in zip(range(3), [4, 0, 7]):
        assert (b[row] == expected[i]).all()
    # Fewer matchers than rows: the first rows.
    b = munch.allocate_token_bitmask(9, tokenizer.vocab_size)
    munch.fill_next_token_bitmask_batch(ms[:2], b)
    assert (b[:2] == expected[:2]).all() and (b[2:] == -1).all()


def test_batch_errors(compiled, tokenizer):
    ms = matchers_along(compiled, tokenizer, 3)
    b = munch.allocate_token_bitmask(3, tokenizer.vocab_size)
    with pytest.raises(ValueError, match="listed twice"):
        munch.fill_next_token_bitmask_batch([ms[0], ms[1], ms[0]], b)
    with pytest.raises(ValueError, match="named twice"):
        munch.fill_next_token_bitmask_batch(ms[:2], b, [1, 1])
    with pytest.raises(ValueError, match="out of range"):
        munch.fill_next_token_bitmask_batch(ms, b, [0, 1, 3])
    with pytest.raises(ValueError, match="out of range"):
        munch.fill_next_token_bitmask_batch(ms, b, [0, 1, -1])
    with pytest.raises(ValueError, match="3 matchers and 2 indices"):
        munch.fill_next_token_bitmask_batch(ms, b, [0, 1])
    with pytest.raises(ValueError, match="3 matchers and 2 bitmask rows"):
        munch.fill_next_token_bitmask_batch(ms, b[:2])
    with pytest.raises(ValueError, match="munch.Matcher"):
        munch.fill_next_token_bitmask_batch([ms[0], "x"], b)
    with pytest.raises(ValueError, match="threads"):
        munch.fill_next_token_bitmask_batch(ms, b, threads=0)
    with pytest.raises(ValueError, match="int32"):
        munch.fill_next_token_bitmask_batch(ms, b.astype(np.int64))
    with pytest.raises(ValueError, match="needs ceil"):
        munch.fill_next_token_bitmask_batch(ms, b[:, :-1].copy())
    assert (b == -1).all(), "nothing written by a refused call"


def test_accept_token_batch(compiled, tokenizer):
    ms = [munch.Matcher(compiled) for _ in range(4)]
    ok = munch.accept_token_batch(ms, [ord("["), ord("x"), ord("1"), ord("{")], threads=2)
    assert ok == [True, False, True, True]
    assert [m.num_accepted for m in ms] == [1, 0, 1, 1]
    with pytest.raises(ValueError, match="4 matchers and 3 token ids"):
        munch.accept_token_batch(ms, [1, 2, 3])
    with pytest.raises(ValueError, match="out of range"):
        munch.accept_token_batch(ms, [1, 2, 3, -1])


def test_threads_fill_their_own_rows(compiled, tokenizer):
    """Matchers used from several Python threads at once (the GIL is released while filling)."""
    ms = matchers_along(compiled, tokenizer, 8)
    expected = munch.allocate_token_bitmask(8, tokenizer.vocab_size)
    for i, m in enumerate(ms):
        m.fill_next_token_bitmask(expected, i)
    b = munch.allocate_token_bitmask(8, tokenizer.vocab_size)

    def work(i):
        for _ in range(50):
            ms[i].fill_next_token_bitmask(b, i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (b == expected).all()


def test_apply_token_bitmask_numpy(compiled, tokenizer):
    m = munch.Matcher(compiled)
    assert m.accept_string('{"a": ')
    V = tokenizer.vocab_size
    b = munch.allocate_token_bitmask(2, V)
    m.fill_next_token_bitmask(b, 1)
    allowed = set(m.allowed_token_ids())
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, V)).astype(np.float32)
    original = logits.copy()
    munch.apply_token_bitmask_inplace(logits, b)
    assert np.isfinite(logits[0]).all(), "row 0 allows every token"
    off = np.array([t not in allowed for t in range(V)])
    assert (np.isneginf(logits[1]) == off).all()
    assert (logits[1][~off] == original[1][~off]).all()

    # indices: only the rows named.
    logits = original.copy()
    munch.apply_token_bitmask_inplace(logits, b, indices=[1])
    assert (np.isneginf(logits[1]) == off).all() and np.isfinite(logits[0]).all()
    # One row.
    row = original[1].astype(np.float64)
    munch.apply_token_bitmask_inplace(row, b[1])
    assert (np.isneginf(row) == off).all()
    # Logits narrower than the bitmask: bits past them are ignored.
    narrow = original[1, :100].copy()
    munch.apply_token_bitmask_inplace(narrow, b[1])
    assert (np.isneginf(narrow) == off[:100]).all()
    # Logits wider than the bitmask: tokens without a bit are not allowed.
    wide = np.zeros(len(b[1]) * 32 + 5, dtype=np.float32)
    munch.apply_token_bitmask_inplace(wide, b[1])
    assert np.isneginf(wide[-5:]).all()


def test_apply_token_bitmask_errors(tokenizer):
    V = tokenizer.vocab_size
    b = munch.allocate_token_bitmask(2, V)
    logits = np.zeros((2, V), dtype=np.float32)
    with pytest.raises(ValueError, match="int32"):
        munch.apply_token_bitmask_inplace(logits, b.astype(np.int64))
    with pytest.raises(ValueError, match="floating point"):
        munch.apply_token_bitmask_inplace(np.zeros((2, V), dtype=np.int32), b)
    with pytest.raises(ValueError, match="3 rows and the bitmask 2"):
        munch.apply_token_bitmask_inplace(np.zeros((3, V), dtype=np.float32), b)
    with pytest.raises(ValueError, match="out of range"):
        munch.apply_token_bitmask_inplace(logits, b, indices=[2])
    with pytest.raises(ValueError, match="shape"):
        munch.apply_token_bitmask_inplace(np.zeros((1, 2, V), dtype=np.float32), b)
    with pytest.raises(ValueError, match="torch tensor or a numpy array"):
        munch.apply_token_bitmask_inplace([0.0] * V, b)
    frozen = logits.copy()
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        munch.apply_token_bitmask_inplace(frozen, b)
