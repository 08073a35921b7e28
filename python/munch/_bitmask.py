"""Token bitmasks for numpy and torch: allocating them and masking logits with them.

A bitmask is an ``int32`` array of shape ``[batch, ceil(vocab_size / 32)]``: bit ``t % 32`` of
word ``t // 32`` is set iff token ``t`` is allowed. Matchers write rows of it in place
(:meth:`munch.Matcher.fill_next_token_bitmask`); :func:`apply_token_bitmask_inplace` sets the
logits of the tokens it does not allow to ``-inf``, on whatever device the logits are.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

import numpy as np

__all__ = [
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_width",
    "reset_token_bitmask",
]


def bitmask_width(vocab_size: int) -> int:
    """Words of one bitmask row: ``ceil(vocab_size / 32)``."""
    if vocab_size < 0:
        raise ValueError(f"vocab_size must be >= 0; got {vocab_size}")
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch_size: int, vocab_size: int, torch: bool = False) -> Any:
    """A bitmask of ``batch_size`` rows for logits of width ``vocab_size``, every token allowed
    (every word ``-1``) until a matcher fills its row.

    A numpy ``int32`` array, or with ``torch=True`` a torch ``int32`` CPU tensor (matchers
    write into it in place; move it to the logits' device with ``apply_token_bitmask_inplace``,
    which does so itself).
    """
    if batch_size < 0:
        raise ValueError(f"batch_size must be >= 0; got {batch_size}")
    shape = (batch_size, bitmask_width(vocab_size))
    if torch:
        import torch as _torch

        return _torch.full(shape, -1, dtype=_torch.int32)
    return np.full(shape, -1, dtype=np.int32)


def reset_token_bitmask(bitmask: Any) -> None:
    """Allows every token again in ``bitmask`` (numpy or torch): every word ``-1``."""
    if _is_torch(bitmask):
        bitmask.fill_(-1)
    else:
        np.asarray(bitmask).fill(-1)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and "torch" in sys.modules


def _check_bitmask_dtype(dtype: Any) -> None:
    if str(dtype) not in ("int32", "uint32", "torch.int32"):
        raise ValueError(f"the bitmask must be int32; got dtype {dtype}")


def _rows(
    logits_shape: Sequence[int], bitmask_shape: Sequence[int], indices: Optional[Sequence[int]]
) -> Optional[list]:
    """Checks the shapes and returns the rows to mask (``None``: all of them)."""
    if len(logits_shape) not in (1, 2):
        raise ValueError(
            f"logits must have shape [batch, vocab] or [vocab]; got shape {tuple(logits_shape)}"
        )
    if len(bitmask_shape) not in (1, 2):
        raise ValueError(
            "the bitmask must have shape [batch, ceil(vocab / 32)] or [ceil(vocab / 32)]; got "
            f"shape {tuple(bitmask_shape)}"
        )
    logit_rows = logits_shape[0] if len(logits_shape) == 2 else 1
    mask_rows = bitmask_shape[0] if len(bitmask_shape) == 2 else 1
    if indices is None:
        if logit_rows != mask_rows:
            raise ValueError(
                f"logits have {logit_rows} rows and the bitmask {mask_rows}: give indices to "
                "mask some rows only"
            )
        return None
    rows = []
    for i in indices:
        i = int(i)
        if not (0 <= i < logit_rows and i < mask_rows):
            raise ValueError(
                f"index {i} is out of range: logits have {logit_rows} rows and the bitmask "
                f"{mask_rows}"
            )
        rows.append(i)
    return rows


def apply_token_bitmask_inplace(
    logits: Any, bitmask: Any, indices: Optional[Sequence[int]] = None
) -> None:
    """Sets ``logits`` of the tokens ``bitmask`` does not allow to ``-inf``, in place.

    ``logits``: a torch tensor (any device, any floating dtype) or a numpy floating array, of
    shape ``[batch, vocab]`` or ``[vocab]``. ``bitmask``: ``int32``, ``[batch, ceil(vocab /
    32)]`` or ``[ceil(vocab / 32)]``, numpy or torch (copied to the logits' device). Row ``i``
    of the logits is masked by row ``i`` of the bitmask, for every row, or for the rows in
    ``indices``. Bits past the logits' width are ignored; logits past the bitmask's width
    (32 per word) have no bit and are set to ``-inf``.
    """
    if _is_torch(logits):
        _apply_torch(logits, bitmask, indices)
    elif isinstance(logits, np.ndarray):
        _apply_numpy(logits, bitmask, indices)
    else:
        raise ValueError(
            f"logits must be a torch tensor or a numpy array; got a {type(logits).__name__}"
        )


def _apply_numpy(logits: np.ndarray, bitmask: Any, indices: Optional[Sequence[int]]) -> None:
    if _is_torch(bitmask):
        if bitmask.device.type != "cpu":
            raise ValueError("numpy logits need a CPU bitmask")
        bitmask = bitmask.numpy()
    bitmask = np.asarray(bitmask)
    _check_bitmask_dtype(bitmask.dtype)
    if not np.issubdtype(logits.dtype, np.floating):
        raise ValueError(f"logits must be floating point; got dtype {logits.dtype}")
    if not logits.flags.writeable:
        raise ValueError("logits are read-only")
    rows = _rows(logits.shape, bitmask.shape, indices)
    vocab = logits.shape[-1]
    words = bitmask.reshape(-1, bitmask.shape[-1])
    if rows is not None:
        words = words[rows]
    # Little-endian words: byte k of word w holds bits 8k..8k+7, so the bytes' bits in
    # little-endian bit order are the tokens in order.
    words = np.ascontiguousarray(words, dtype="<u4")
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")
    have = bits.shape[-1]
    if have >= vocab:
        allowed = bits[:, :vocab].astype(bool)
    else:
        allowed = np.zeros((bits.shape[0], vocab), dtype=bool)
        allowed[:, :have] = bits
    if logits.ndim == 1:
        np.copyto(logits, -np.inf, where=~allowed[0])
    elif rows is None:
        np.copyto(logits, -np.inf, where=~allowed)
    else:
        for k, i in enumerate(rows):
            np.copyto(logits[i], -np.inf, where=~allowed[k])


def _apply_torch(logits: Any, bitmask: Any, indices: Optional[Sequence[int]]) -> None:
    import torch

    if isinstance(bitmask, np.ndarray):
        _check_bitmask_dtype(bitmask.dtype)
        bitmask = torch.from_numpy(np.ascontiguousarray(bitmask).view(np.int32))
    elif not isinstance(bitmask, torch.Tensor):
        raise ValueError(
            f"the bitmask must be a torch tensor or a numpy array; got a {type(bitmask).__name__}"
        )
    _check_bitmask_dtype(bitmask.dtype)
    if not logits.is_floating_point():
        raise ValueError(f"logits must be floating point; got dtype {logits.dtype}")
    rows = _rows(tuple(logits.shape), tuple(bitmask.shape), indices)
    device = logits.device
    vocab = logits.shape[-1]
    words = bitmask.reshape(-1, bitmask.shape[-1])
    if rows is not None:
        words = words[rows]
    words = words.to(device, non_blocking=True)
    shifts = torch.arange(32, device=device, dtype=torch.int32)
    # An arithmetic shift keeps bit 31 in place too: (w >> 31) & 1 is the sign bit.
    allowed = ((words.unsqueeze(-1) >> shifts) & 1).to(torch.bool).flatten(-2)
    have = allowed.shape[-1]
    if have >= vocab:
        allowed = allowed[:, :vocab]
    else:
        pad = torch.zeros((allowed.shape[0], vocab - have), dtype=torch.bool, device=device)
        allowed = torch.cat([allowed, pad], dim=-1)
    if logits.dim() == 1:
        logits.masked_fill_(~allowed[0], float("-inf"))
    elif rows is None:
        logits.masked_fill_(~allowed, float("-inf"))
    else:
        index = torch.tensor(rows, device=device, dtype=torch.long)
        logits[index] = logits[index].masked_fill(~allowed, float("-inf"))
