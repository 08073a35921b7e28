"""The package's surface: the stubs describe what the native module has, everything public
has a docstring, and the core imports without torch or transformers."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import munch
import munch._munch as native

STUBS = Path(munch.__file__).with_name("_munch.pyi")


def stub_names():
    """Top-level names of the stubs, and each class's member names."""
    tree = ast.parse(STUBS.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            }
    return {n for n in top if not n.startswith("_") or n == "__version__"}, members


def test_stubs_match_the_native_module():
    top, members = stub_names()
    runtime = {n for n in dir(native) if not n.startswith("_") or n == "__version__"}
    assert top == runtime
    for cls, names in members.items():
        if issubclass(getattr(native, cls), Exception):
            continue
        have = {n for n in dir(getattr(native, cls)) if not n.startswith("_")}
        assert {n for n in names if not n.startswith("_")} == have, cls


def test_everything_public_has_a_docstring():
    for name in munch.__all__:
        obj = getattr(munch, name)
        if name == "__version__":
            continue
        assert obj.__doc__, name
        if isinstance(obj, type) and not issubclass(obj, Exception):
            for attr in dir(obj):
                if not attr.startswith("_"):
                    assert getattr(obj, attr).__doc__, f"{name}.{attr}"
    hf = importlib.import_module("munch.hf")

    assert hf.__doc__ and hf.LogitsProcessor.__doc__


def test_the_core_needs_neither_torch_nor_transformers():
    code = (
        "import sys, munch, munch.hf\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_readme_example_runs(tmp_path):
    import re

    from conftest import write_tokenizer

    path = write_tokenizer(tmp_path)
    readme = Path(__file__).parents[1] / "README.md"
    code = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)[0]
    exec(code.replace('"tokenizer.json"', repr(str(path))), {})


def test_the_servers_entry_points_are_declared():
    from importlib.metadata import distribution

    points = {(ep.group, ep.name): ep.value for ep in distribution("munch").entry_points}
    assert points[("sglang.srt.plugins", "munch")] == "munch._plugins:sglang"
    assert points[("vllm.general_plugins", "munch")] == "munch._plugins:vllm"
