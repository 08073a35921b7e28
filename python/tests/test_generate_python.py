"""`munch generate syncode:python --postlex python`: every finished sample parses with Lark,
SynCode's python.lark and Lark's `PythonIndenter` (SynCode names the newline `_NL`).

SynCode's `_NL` is a greedy loop around comments and lazy docstrings (`LONG_STRING`, with its
`[ubf]?r?` prefix), so a line after a newline that begins with `f`, `r`, `b` or `u` lexes only
because munch's lexer goes back to the newline's lazy match as Python's `re` does (the default
`LexerConfig::backtrack_lazy`). The samples are drawn uniformly among the allowed tokens of a
small tokenizer of whole Python lines (many beginning with `from`, `for`, `f(`, `rb`, `u`) and a
few characters. It has no `#` and no quote character of its own (quotes come only inside whole
strings such as `b'1'`): a comment or a docstring followed by a newline is a lexeme that
`COMMENT`, `LONG_STRING` and `_NL` all match, and munch hands every tied terminal to its GLR
parser where Lark's lexer takes one (a documented difference, see
`conformance/tests/lark_agreement.rs`), so random texts with them may parse in munch and not in
Lark.

Needs the release CLI (built here with cargo when missing), SynCode's grammars in munch's cache
and `lark` (imported here, else the Python of munch's cached `lark-venv`, which the conformance
suite makes); skipped, with the reason, where one is missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import byte_unicode, cache_dir, run_generate, tokenizer_json


# Whole lines and line starts of Python, many of them beginning with a string prefix's letter
# (`from`, `for`, `rb`, `u`, `f(`, `bar`), and single characters to go on with.
LINES = [
    "\n", "from x import y\n", "import u\n", "for a in b:\n", "    pass\n", "if x:\n",
    "    ", "rb = b'1'\n", "u = r'2'\n", "f(x)\n", "bar = [1,\n", "2]\n", "fr = f'{x}'\n",
    "def f():\n", "    return 1\n", "else:\n", "class A:\n", "    x = 1\n", "ub = (u,\n",
    "  b)\n", "while x:\n", "        break\n", "x = ru + bu\n", "    for r in u:\n",
]
SINGLES = "abfrux12 \n()[],:=+."

SYNCODE = "syncode-0.4.16/syncode-0.4.16/syncode/parsers/grammars/python.lark"

# Lark's parser with SynCode's grammar reads the texts on stdin (a JSON list) and prints, per
# text, null or why it failed.
LARK_CHECK = """
import json, sys
from lark import Lark
from lark.indenter import PythonIndenter

class Indenter(PythonIndenter):
    NL_type = "_NL"

parser = Lark(open(sys.argv[1]).read(), parser="lalr", postlex=Indenter(), start="start")
out = []
for text in json.load(sys.stdin):
    try:
        parser.parse(text)
        out.append(None)
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
print(json.dumps(out))
"""


def lark_python() -> str:
    """A Python that imports `lark`: this one, else munch's cached `lark-venv`."""
    try:
        import lark  # noqa: F401

        return sys.executable
    except ImportError:
        pass
    venv = cache_dir() / "lark-venv" / "bin" / "python"
    if venv.is_file():
        return str(venv)
    pytest.skip(f"no lark here and no {venv} (cargo test -p munch-conformance makes it)")


def python_tokenizer(directory: Path) -> Path:
    """A byte-level BPE tokenizer whose tokens are `SINGLES` and `LINES` (no merges: the
    samples are drawn from its vocabulary, never encoded)."""
    doc = json.loads(tokenizer_json(tokens=[]))
    table = byte_unicode()
    pieces = list(SINGLES) + [p for p in LINES if p not in SINGLES]
    vocab = {"".join(table[b] for b in p.encode()): i for i, p in enumerate(pieces)}
    doc["model"]["vocab"] = vocab
    doc["model"]["merges"] = []
    for i, special in enumerate(doc["added_tokens"]):
        special["id"] = len(vocab) + i
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("masker", ["trie", "spanner", "wda"])
def test_generated_python_parses_with_lark(masker, tmp_path):
    grammar = cache_dir() / SYNCODE
    if not grammar.is_file():
        pytest.skip(f"no {grammar} (cargo test -p munch-conformance fetches SynCode's grammars)")
    lark = lark_python()
    tokenizer = python_tokenizer(tmp_path)
    texts, summary, run = run_generate(
        "syncode:python", "--postlex", "python", "--tokenizer", str(tokenizer),
        "--masker", masker, "-n", "300", "--seed", "11", "--max-tokens", "80",
    )
    # No dead-end check: the tokenizer has no quote character, so a prefix that only a string
    # can go on from (`x r`, where a name cannot stand but `r"…"` could) has no token; such
    # samples are not printed.
    # The samples are more than blank lines, and some go back to a newline's lazy match: a
    # line after a newline begins with a string prefix's letter.
    assert sum(bool(t.strip()) for t in texts) >= 5, texts
    assert any(line[:1] in "fbru" for t in texts for line in t.split("\n")[1:] if line), texts
    check = subprocess.run(
        [lark, "-c", LARK_CHECK, str(grammar)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert check.returncode == 0, check.stderr[-4000:]
    errors = json.loads(check.stdout)
    failed = [(t, e) for t, e in zip(texts, errors) if e is not None]
    assert not failed, failed[:3]
