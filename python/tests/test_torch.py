"""Bitmasks as torch tensors: filling CPU tensors in place, masking logits on their device."""

from __future__ import annotations

import numpy as np
import pytest

import munch
from conftest import bits

torch = pytest.importorskip(
    "torch", reason="torch is not installed (MUNCH_TORCH=1 bash python/run-tests.sh installs it)"
)


def test_allocate_torch(tokenizer):
    b = munch.allocate_token_bitmask(2, tokenizer.vocab_size, torch=True)
    assert isinstance(b, torch.Tensor)
    assert b.dtype == torch.int32 and tuple(b.shape) == (2, (tokenizer.vocab_size + 31) // 32)
    assert (b == -1).all()
    b.zero_()
    munch.reset_token_bitmask(b)
    assert (b == -1).all()


def test_fill_torch_tensors_in_place(compiled, tokenizer):
    m = munch.Matcher(compiled)
    assert m.accept_string('{"a": [')
    b = munch.allocate_token_bitmask(3, tokenizer.vocab_size, torch=True)
    m.fill_next_token_bitmask(b, 1)
    assert bits(b[1].numpy()) == m.allowed_token_ids()
    assert (b[[0, 2]] == -1).all()
    ms = [m, m.fork(), munch.Matcher(compiled)]
    expected = munch.allocate_token_bitmask(3, tokenizer.vocab_size)
    for i, x in enumerate(ms):
        x.fill_next_token_bitmask(expected, i)
    munch.fill_next_token_bitmask_batch(ms, b)
    assert (b.numpy() == expected).all()


def test_torch_bitmask_errors(compiled, tokenizer):
    m = munch.Matcher(compiled)
    w = compiled.bitmask_width
    cases = [
        (torch.zeros((1, w), dtype=torch.int64), "int64"),
        (torch.zeros((1, 2 * w), dtype=torch.int32)[:, ::2], "not C-contiguous"),
        (torch.zeros((1, w), dtype=torch.int32, device="meta"), "device meta"),
    ]
    for bitmask, message in cases:
        with pytest.raises(ValueError, match=message):
            m.fill_next_token_bitmask(bitmask)
            pytest.fail(f"no error for {message}")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_apply_on_torch_logits(compiled, tokenizer, dtype):
    m = munch.Matcher(compiled)
    assert m.accept_string("[1, ")
    V = tokenizer.vocab_size
    b = munch.allocate_token_bitmask(3, V, torch=True)
    m.fill_next_token_bitmask(b, 2)
    off = torch.ones(V, dtype=torch.bool)
    off[m.allowed_token_ids()] = False
    logits = torch.randn((3, V)).to(getattr(torch, dtype))
    original = logits.clone()
    munch.apply_token_bitmask_inplace(logits, b)
    assert torch.isfinite(logits[:2]).all()
    assert torch.equal(torch.isneginf(logits[2]), off)
    assert torch.equal(logits[2][~off], original[2][~off])
    # A numpy bitmask works as well, and indices pick rows.
    logits = original.clone()
    munch.apply_token_bitmask_inplace(logits, b.numpy(), indices=[2])
    assert torch.equal(torch.isneginf(logits[2]), off) and torch.isfinite(logits[:2]).all()
    # Padded logits past the bitmask's width have no bit: -inf.
    wide = torch.zeros(b.shape[1] * 32 + 7)
    munch.apply_token_bitmask_inplace(wide, b[2])
    assert torch.isneginf(wide[-7:]).all()
    with pytest.raises(ValueError, match="floating point"):
        munch.apply_token_bitmask_inplace(torch.zeros((3, V), dtype=torch.int64), b)
    with pytest.raises(ValueError, match="int32"):
        munch.apply_token_bitmask_inplace(logits, b.to(torch.int64))


@pytest.mark.skipif(
    not (pytest.importorskip("torch").cuda.is_available()), reason="no CUDA device here"
)
def test_apply_on_cuda_logits(compiled, tokenizer):
    m = munch.Matcher(compiled)
    V = tokenizer.vocab_size
    b = munch.allocate_token_bitmask(1, V, torch=True)
    m.fill_next_token_bitmask(b)
    logits = torch.randn((1, V), device="cuda")
    munch.apply_token_bitmask_inplace(logits, b)
    off = np.ones(V, dtype=bool)
    off[m.allowed_token_ids()] = False
    assert (torch.isneginf(logits[0]).cpu().numpy() == off).all()
