"""Masks from Python equal the CLI's, along SynCode's JSON and Go texts with Llama 3.

``munch trace GRAMMAR --tokenizer llama3 --masker wda --masks-out FILE TEXTS...`` writes one
line per step of each text: ``{"file", "step", "allowed", "sha256"}``, the SHA-256 of the wda
mask's ``ceil(V / 32)`` words in little-endian bytes. The test walks the same texts through
``munch.Matcher`` with every masker (wda, spanner, trie; the oracle, one commit per vocabulary
token per step, would take minutes on Llama 3), filling a bitmask row at each step, and asserts
that every step's count and hash equal the CLI's.

Needs the real Llama 3 tokenizer and SynCode's grammars in munch's cache (``cargo test``
fetches both) and the release CLI (``target/release/munch``, built here with cargo when it is
missing or has no ``--masks-out``); skipped, with the reason, where one is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

import munch

from conftest import llama3_tokenizer_path

REPO = Path(__file__).resolve().parents[2]

# Every masker the package builds ahead of decoding; `oracle` is left out (see the docs).
MASKERS = ["wda", "spanner", "trie"]

# SynCode's JSON accepts a top-level object or array; these are the corpus's short ones.
JSON_MAX_BYTES = 500

# Go programs the grammar accepts (the first two: conformance/cases/go.toml, `syncode-inline`).
GO_INLINE = {
    "main.go": (
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tx := 1\n\tx++\n\tfmt.Println(x)\n}\n'
    ),
    "add.go": "package main\n\nfunc add(a int, b int) int {\n\treturn a + b\n}\n",
    "sum.go": (
        "package main\n\nfunc sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n"
        "\t\tif x > 0 {\n\t\t\ttotal += x\n\t\t}\n\t}\n\treturn total\n}\n"
    ),
}
# Real Go files from munch's cache (Go's own sources): the CLI traces the first candidates of
# these sizes, and Python walks the first few it accepts and one it rejects (SynCode's grammar
# rejects many of them), compared up to the step where the CLI stopped.
GO_CANDIDATES = 32
GO_ACCEPTED = 3
GO_CACHED_BYTES = (150, 600)

# A step's (allowed, sha256), in order.
Steps = List[Tuple[int, str]]


def cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "munch"


def supports_masks_out(binary: Path) -> bool:
    if not binary.is_file():
        return False
    help_text = subprocess.run(
        [str(binary), "trace", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    return "--masks-out" in help_text


@pytest.fixture(scope="module")
def cli() -> Path:
    """The release `munch` binary, built when missing (or older than `--masks-out`)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / "munch"
    if supports_masks_out(binary):
        return binary
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip(f"no {binary} with --masks-out, and no cargo to build it")
    build = subprocess.run(
        [cargo, "build", "--release", "-p", "munch-cli"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    assert supports_masks_out(binary), f"{binary} has no --masks-out after the build"
    return binary


@pytest.fixture(scope="module")
def llama3() -> munch.Tokenizer:
    path = llama3_tokenizer_path()
    if not path.is_file():
        pytest.skip(f"the Llama 3 tokenizer is not cached at {path} (cargo test fetches it)")
    return munch.Tokenizer.from_file(path)


def syncode(name: str) -> munch.Grammar:
    try:
        return munch.Grammar.syncode(name)
    except munch.MunchError as e:
        pytest.skip(f"SynCode's grammar `{name}` is not available (cargo test fetches it): {e}")


def json_texts() -> List[Path]:
    texts = []
    for path in sorted((REPO / "grammars" / "corpus" / "json").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        if text.lstrip()[:1] in ("{", "[") and len(text.encode()) <= JSON_MAX_BYTES:
            texts.append(path)
    assert len(texts) >= 3, "grammars/corpus/json has few short objects and arrays"
    return texts


def go_texts(directory: Path) -> Tuple[List[Path], List[Path]]:
    """The inline programs (written into `directory`) and the cached candidates."""
    inline = []
    for name, text in GO_INLINE.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        inline.append(path)
    low, high = GO_CACHED_BYTES
    cached = [
        p
        for p in sorted((cache_dir() / "corpus" / "go").glob("*.go"))
        if low <= p.stat().st_size <= high
    ][:GO_CANDIDATES]
    return inline, cached


def cli_steps(
    cli: Path, grammar: str, texts: List[Path], out: Path
) -> Tuple[dict, Dict[str, Steps], List[str]]:
    """Runs `munch trace` over `texts`: its summary, each text's steps, and the texts it
    rejected."""
    args = ["trace", grammar, "--tokenizer", "llama3", "--masker", "wda", "--masks-out", str(out)]
    run = subprocess.run(
        [str(cli)] + args + [str(t) for t in texts],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 1), f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    summary = json.loads(run.stdout.splitlines()[-1])
    assert summary["mismatches"] == 0, run.stderr
    steps: Dict[str, Steps] = {str(t): [] for t in texts}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        file_steps = steps[record["file"]]
        assert record["step"] == len(file_steps), line
        file_steps.append((record["allowed"], record["sha256"]))
    assert sum(map(len, steps.values())) == summary["steps"]
    rejected = [name for name in steps if f"{name}: rejected:" in run.stderr]
    assert len(rejected) == summary["rejected"], run.stderr
    return summary, steps, rejected


def python_steps(compiled: munch.CompiledGrammar, tokens: List[int]) -> Steps:
    """The mask's (allowed, sha256) before each token and at the end, as the CLI's teacher walks
    them: a refused token ends the walk after its step's mask."""
    width = compiled.bitmask_width
    assert width == (compiled.vocab_size + 31) // 32
    matcher = munch.Matcher(compiled)
    bitmask = munch.allocate_token_bitmask(1, compiled.vocab_size)
    steps = []
    for i in range(len(tokens) + 1):
        matcher.fill_next_token_bitmask(bitmask, 0)
        row = bitmask[0]
        assert row.shape == (width,)
        allowed = int(np.unpackbits(row.view(np.uint8)).sum())
        steps.append((allowed, hashlib.sha256(row.astype("<u4").tobytes()).hexdigest()))
        if i == len(tokens) or not matcher.accept_token(tokens[i]):
            break
    return steps


def assert_same_masks(
    tokenizer: munch.Tokenizer, grammar: munch.Grammar, texts: List[Path], cli: Dict[str, Steps]
) -> None:
    encoded = {str(t): tokenizer.encode(t.read_text(encoding="utf-8")) for t in texts}
    for masker in MASKERS:
        compiled = munch.compile(grammar, tokenizer, masker=masker, fallback=None)
        assert compiled.masker == masker
        assert compiled.vocab_size == tokenizer.vocab_size
        for name, tokens in encoded.items():
            ours = python_steps(compiled, tokens)
            theirs = cli[name]
            for step, (a, b) in enumerate(zip(ours, theirs)):
                if a != b:
                    before = tokenizer.decode_bytes(tokens[:step]).decode("utf-8", "replace")
                    pytest.fail(
                        f"{name}, masker {masker}, step {step}: Python allows {a[0]} tokens "
                        f"(sha256 {a[1]}), the CLI's wda {b[0]} ({b[1]}); text before: "
                        f"{before[-80:]!r}"
                    )
            assert len(ours) == len(theirs), f"{name}, masker {masker}: steps"


def test_json_masks_equal_the_clis(cli, llama3, tmp_path):
    grammar = syncode("json")
    texts = json_texts()
    summary, steps, rejected = cli_steps(cli, "syncode:json", texts, tmp_path / "json.jsonl")
    assert rejected == [], summary
    assert_same_masks(llama3, grammar, texts, steps)


def test_go_masks_equal_the_clis(cli, llama3, tmp_path):
    grammar = syncode("go")
    inline, cached = go_texts(tmp_path)
    texts = inline + cached
    summary, steps, rejected = cli_steps(cli, "syncode:go", texts, tmp_path / "go.jsonl")
    for path in inline:
        assert str(path) not in rejected, f"the CLI rejects {path.name}"
    accepted = [p for p in cached if str(p) not in rejected][:GO_ACCEPTED]
    refused = [p for p in cached if str(p) in rejected][:1]
    assert_same_masks(llama3, grammar, inline + accepted + refused, steps)
