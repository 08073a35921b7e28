#!/usr/bin/env bash
# Builds munch's Python package into a cached virtualenv and runs its pytest suite.
#
#   bash python/run-tests.sh [PYTEST ARGS...]
#
# The virtualenv is $MUNCH_VENV (default: `venv` in munch's cache, $MUNCH_CACHE, else
# $XDG_CACHE_HOME/munch, else ~/.cache/munch, where the tests' fetched data lives too: outside the
# checkout, so that a fresh clone, as CI makes, finds it made), made once with maturin, numpy,
# pytest and jsonschema (which checks schema-constrained output). torch and transformers (large: about 3 GB with torch's CUDA
# libraries) are installed only with MUNCH_TORCH=1 or in CI (CI=true); without them the tests
# that need them are skipped, each with its reason. tests/test_sglang.py and tests/test_vllm.py
# run against stand-ins of SGLang's and vLLM's base classes, and against the real ones too
# where `sglang` / `vllm` import (installed, or on PYTHONPATH). The extension is built by
# `maturin develop --release` into the workspace's target directory, so it reuses the
# workspace's compiled crates.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cache="${MUNCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/munch}"
venv="${MUNCH_VENV:-$cache/venv}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"

step() { printf '\n==> %s\n' "$*"; }

if [ ! -x "$venv/bin/python" ]; then
  step "virtualenv $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"

have() { "$py" -c "import $1" >/dev/null 2>&1; }

missing=()
for pkg in maturin numpy pytest jsonschema; do
  have "$pkg" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  step "pip install ${missing[*]}"
  "$py" -m pip install --quiet --upgrade pip
  "$py" -m pip install --quiet "${missing[@]}"
fi

if [ "${MUNCH_TORCH:-}" = 1 ] || [ "${CI:-}" = true ]; then
  if ! have torch || ! have transformers; then
    step "pip install torch transformers (for the transformers tests)"
    "$py" -m pip install --quiet torch transformers
  fi
fi

step "maturin develop --release (target: $CARGO_TARGET_DIR)"
(cd "$here" && "$py" -m maturin develop --release --quiet)

step "pytest python/tests"
set +e
(cd "$here" && "$py" -m pytest tests -ra "$@")
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"
