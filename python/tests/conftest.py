"""The test kit: small synthetic tokenizer files written by the tests, and helpers.

`write_tokenizer` writes a byte-level BPE `tokenizer.json` in the GPT-2 convention: ids 0..255
are the single bytes (id = byte value), then the listed multi-byte tokens with every prefix of
each (so that each is one BPE merge of a shorter token and a byte), then the special tokens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, List, Sequence

import pytest

import munch

# Tokens for JSON texts; the tokenizer adds every prefix of each.
JSON_TOKENS = ['{"', '": ', '", "', '"}', "true", "false", "null", "[1, ", "name", "  "]

JSON_TEXTS = [
    '{"name": "munch", "tags": [1, 2, 3], "ok": true}',
    '[1, 2.5e3, null, false, {"a": {}}]',
    '"a string with \\" escapes \\u00e9"',
    '{"x": [], "y": {"z": -0.5}}',
]


def byte_unicode() -> List[str]:
    """GPT-2's table: the printable character that spells each byte in a byte-level BPE."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = {}
    n = 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return [chars[b] for b in range(256)]


def tokenizer_json(
    tokens: Iterable[str] = JSON_TOKENS,
    specials: Sequence[str] = ("<|endoftext|>",),
) -> str:
    """The contents of a byte-level BPE tokenizer.json (see the module docs)."""
    table = byte_unicode()
    vocab = {table[b]: b for b in range(256)}
    merges = []
    for token in tokens:
        raw = token.encode()
        for k in range(2, len(raw) + 1):
            piece = "".join(table[b] for b in raw[:k])
            if piece in vocab:
                continue
            left = "".join(table[b] for b in raw[: k - 1])
            merges.append([left, table[raw[k - 1]]])
            vocab[piece] = len(vocab)
    added = []
    for s in specials:
        added.append(
            {
                "id": len(vocab) + len(added),
                "content": s,
                "special": True,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
            }
        )
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": False,
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": False,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }
    return json.dumps(doc)


def write_tokenizer(directory: Path, **kwargs) -> Path:
    """Writes `tokenizer_json(**kwargs)` as `directory/tokenizer.json`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokenizer.json"
    path.write_text(tokenizer_json(**kwargs), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tokenizer_path(tmp_path_factory) -> Path:
    return write_tokenizer(tmp_path_factory.mktemp("bytelevel"))


@pytest.fixture(scope="session")
def tokenizer(tokenizer_path) -> munch.Tokenizer:
    # Padded past the tokenizer's ids, as models' logits often are.
    return munch.Tokenizer.from_file(tokenizer_path, vocab_size=len(_plain(tokenizer_path)) + 40)


def _plain(path: Path) -> munch.Tokenizer:
    return munch.Tokenizer.from_file(path)


@pytest.fixture(scope="session")
def json_grammar() -> munch.Grammar:
    return munch.Grammar.builtin("json")


@pytest.fixture(scope="session")
def compiled(json_grammar, tokenizer) -> munch.CompiledGrammar:
    return munch.compile(json_grammar, tokenizer)


def bits(row) -> List[int]:
    """The token ids whose bits are set in one bitmask row (an int32 array)."""
    out = []
    for w, word in enumerate(row.tolist()):
        word &= 0xFFFFFFFF
        for b in range(32):
            if word >> b & 1:
                out.append(32 * w + b)
    return out


REPO = Path(__file__).resolve().parents[2]


def cache_dir() -> Path:
    """munch's cache folder (what `cargo test` fetches goes there)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "munch"


def llama3_tokenizer_path() -> Path:
    """Where munch's tools cache the real Llama 3 tokenizer (`cargo test` fetches it)."""
    return cache_dir() / "tokenizers" / "llama3" / "tokenizer.json"


def cli_binary() -> Path:
    """The release `munch` CLI of this checkout, built if missing (skips without cargo)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / "munch"
    if binary.is_file():
        return binary
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip(f"no {binary}, and no cargo to build it")
    build = subprocess.run(
        [cargo, "build", "--release", "-p", "munch-cli"], cwd=REPO, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr[-4000:]
    return binary


def run_generate(*args: str):
    """`munch generate ARGS`: the texts and the summary line, once the run has ended well
    (exit 0, one line per finished text, no bugs); the completed process for its stderr."""
    run = subprocess.run(
        [str(cli_binary()), "generate", *args], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.strip().splitlines()
    summary = json.loads(lines[-1])
    texts = [json.loads(line) for line in lines[:-1]]
    assert len(texts) == summary["finished"]
    assert summary.get("bugs", 0) == 0, run.stderr
    return texts, summary, run
