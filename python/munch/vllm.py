"""munch as a vLLM (V1) structured-output backend: :class:`MunchBackend` and
:class:`MunchGrammar`, and :func:`install`, which makes vLLM use them.

Registering it
--------------
vLLM has no entry point for structured-output backends: ``StructuredOutputManager.grammar_init``
(``vllm/v1/structured_output/__init__.py``) builds the backend named by
``structured_outputs_config.backend`` from a fixed list, and the front end checks each request
with that backend's validator. :func:`install` patches, in the process it runs in:

1. ``vllm.v1.structured_output.StructuredOutputManager.grammar_init``: before vLLM's own code
   runs, the manager's ``backend`` is set to a :class:`MunchBackend` (built once, from the
   manager's tokenizer and ``model_config.get_vocab_size()``), and the request's
   ``structured_outputs._backend`` and the manager's ``backend_name`` (where this vLLM has
   them) to ``"munch"``, so vLLM's one-backend-per-engine check passes and every structured
   request is compiled by munch;
2. the front end's request validation, which would otherwise ask xgrammar or llguidance whether
   they can compile the request:
   ``vllm.sampling_params.SamplingParams._validate_structured_outputs`` where it exists, and
   ``_validate_structured_output`` of
   ``vllm.v1.engine.input_processor.InputProcessor`` and ``vllm.v1.engine.processor.Processor``
   where those exist. The replacement refuses, with a ``ValueError`` as vLLM's own validators
   do, the request kinds munch cannot serve (below), and marks the others for munch; errors in
   a Lark grammar are reported when it compiles, failing that request only.

vLLM runs its engine core (and its API server) in processes of its own, so the patches must be
made in each. vLLM calls the functions of the ``vllm.general_plugins`` entry-point group in
every process it starts; munch's package declares ``munch = munch._plugins:vllm`` there, which
calls :func:`install` only when the environment variable ``MUNCH_VLLM`` is ``1``::

    MUNCH_VLLM=1 vllm serve MODEL

(``VLLM_PLUGINS``, when set, must then name ``munch``.) In a script with the engine in process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``), calling ``munch.vllm.install()`` before building
``vllm.LLM`` is enough.

What vLLM sends, and what munch does with it
---------------------------------------------
vLLM's key is ``(StructuredOutputOptions, spec)``:

- ``GRAMMAR``: the request's ``grammar`` text, read as a **Lark** grammar starting at ``start``
  (``root`` when it has no ``start`` rule and a ``root`` one); GBNF syntax (``root ::= ...``)
  is refused with a message saying so.
- ``CHOICE``: the JSON list of the choices; munch compiles the Lark grammar that is exactly
  their alternation.
- ``JSON_OBJECT`` (spec ``""``): munch's JSON grammar from its ``object`` rule: any JSON object.
- ``JSON``: the JSON Schema text. munch has no JSON Schema compiler yet: the schemas ``{}`` (any
  JSON value) and ``{"type": "object"}`` are served exactly; any other schema is refused.
- ``REGEX`` and ``STRUCTURAL_TAG``: refused.

``stop_token_ids`` (the request's EOS and stop ids, ``SamplingParams.all_stop_token_ids``) are
the matcher's stop tokens, allowed exactly where the text is a sentence; when vLLM gives none,
the tokenizer's EOS ids are. Compiled grammars are cached per (kind, spec) and shared by the
requests that use them.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import munch

try:
    from vllm.v1.structured_output.backend_types import (
        StructuredOutputBackend,
        StructuredOutputGrammar,
    )
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "munch.vllm needs vLLM (pip install vllm): "
        f"vllm.v1.structured_output.backend_types did not import ({e})"
    ) from e

__all__ = [
    "MunchBackend",
    "MunchGrammar",
    "choice_grammar",
    "install",
    "refusal",
]

logger = logging.getLogger(__name__)

#: The backend name :func:`install` gives requests and the manager.
BACKEND_NAME = "munch"

_GBNF = re.compile(r"^\s*[A-Za-z_][\w-]*\s*::=", re.M)
_RULE = re.compile(r"^\s*[?!]?(\w+)\s*(\.\s*-?\d+\s*)?:", re.M)


class MunchGrammar(StructuredOutputGrammar):
    """One request's constraint: a :class:`munch.Matcher` behind vLLM's grammar interface."""

    def __init__(self, matcher: "munch.Matcher") -> None:
        self.matcher = matcher
        self._stops = frozenset(matcher.stop_token_ids)

    def __repr__(self) -> str:
        return f"munch.vllm.MunchGrammar({self.matcher!r})"

    def accept_tokens(self, request_id: str, tokens: List[int]) -> bool:
        """Accepts ``tokens`` up to the first stop token, all or none: ``False`` (and nothing
        accepted) when one is not allowed. Tokens after termination are ignored."""
        if self.matcher.is_terminated():
            return True
        tokens = list(tokens)
        for i, token in enumerate(tokens):
            if token in self._stops:
                tokens = tokens[: i + 1]
                break
        ok = self.matcher.accept_tokens(tokens)
        if not ok:
            logger.warning(
                "munch: request %s: tokens %s are not allowed after %d accepted tokens",
                request_id,
                tokens,
                self.matcher.num_accepted,
            )
        return ok

    def validate_tokens(self, tokens: List[int]) -> List[int]:
        """The longest prefix of ``tokens`` the grammar accepts (up to a stop token), without
        accepting it. Speculative padding (a negative id and what follows) is dropped."""
        if self.matcher.is_terminated():
            return []
        tokens = list(tokens)
        for i, token in enumerate(tokens):
            if token < 0:
                tokens = tokens[:i]
                break
        return tokens[: self.matcher.validate_tokens(tokens)]

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last ``num_tokens`` accepted tokens (the stop token included)."""
        if num_tokens > 0:
            self.matcher.rollback(num_tokens)

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        """Writes the allowed next tokens into row ``batch_index`` of the ``int32`` bitmask."""
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        """Whether a stop token was accepted."""
        return self.matcher.is_terminated()

    def reset(self) -> None:
        """Back to the start of the text."""
        self.matcher.reset()

    def find_jump_string(self) -> Optional[str]:
        """The text every continuation starts with (jump-forward), or ``None``."""
        return self.matcher.forced_string() or None


@dataclass
class MunchBackend(StructuredOutputBackend):
    """vLLM's engine-level backend: compiles each request's grammar with munch.

    ``tokenizer``: vLLM's tokenizer (a transformers fast tokenizer) or a
    :class:`munch.Tokenizer`; ``vocab_size``: the model's logits width. ``masker``,
    ``fallback``, ``max_memory``: as for :func:`munch.compile`.
    """

    masker: str = "wda"
    fallback: Optional[str] = "trie"
    max_memory: Optional[int] = None
    _compiled: Dict[Tuple[str, str], "munch.CompiledGrammar"] = field(
        default_factory=dict, init=False, repr=False
    )
    _lock: Any = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        tok = self.tokenizer
        if isinstance(tok, munch.Tokenizer):
            if tok.vocab_size != self.vocab_size:
                raise ValueError(
                    f"vocab_size {self.vocab_size} differs from the munch.Tokenizer's "
                    f"{tok.vocab_size}: give it to Tokenizer.from_file(..., vocab_size=)"
                )
            self.munch_tokenizer = tok
        else:
            self.munch_tokenizer = munch.Tokenizer.from_huggingface(tok, self.vocab_size)

    def compile_grammar(
        self, request_type: Any, grammar_spec: str, stop_token_ids: Optional[Any] = None
    ) -> MunchGrammar:
        """A fresh :class:`MunchGrammar` for the request; ``ValueError`` for what munch does not
        serve (see the module docs) and ``munch.GrammarError`` for a bad grammar."""
        kind = _kind(request_type)
        compiled = self._compiled_for(kind, grammar_spec)
        stops = sorted(int(t) for t in stop_token_ids) if stop_token_ids else None
        return MunchGrammar(munch.Matcher(compiled, stops))

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        """A CPU ``int32`` torch bitmask ``[max_num_seqs, ceil(vocab_size / 32)]``."""
        return munch.allocate_token_bitmask(max_num_seqs, self.vocab_size, torch=True)

    def destroy(self) -> None:
        """Drops the compiled grammars."""
        with self._lock:
            self._compiled.clear()

    def _compiled_for(self, kind: str, spec: str) -> "munch.CompiledGrammar":
        key = (kind, spec)
        with self._lock:
            compiled = self._compiled.get(key)
        if compiled is None:
            compiled = munch.compile(
                grammar_for(kind, spec),
                self.munch_tokenizer,
                masker=self.masker,
                fallback=self.fallback,
                max_memory=self.max_memory,
            )
            with self._lock:
                compiled = self._compiled.setdefault(key, compiled)
        return compiled


def _kind(request_type: Any) -> str:
    """The name of a ``StructuredOutputOptions`` member (or a name given as text)."""
    return getattr(request_type, "name", str(request_type)).upper()


def _loads(spec: str, what: str) -> Tuple[Any, Optional[str]]:
    """``spec`` as JSON and no error, or no value and ``what`` with the parser's message."""
    try:
        return json.loads(spec), None
    except ValueError as e:
        return None, f"{what}: {e}"


def refusal(kind: str, spec: str) -> Optional[str]:
    """Why munch does not serve a request of ``kind`` (a ``StructuredOutputOptions`` name) and
    ``spec``, or ``None`` when it does (Lark errors are found when the grammar compiles)."""
    if kind == "GRAMMAR":
        if not spec.strip():
            return "the grammar is empty"
        if _GBNF.search(spec):
            return (
                "munch reads Lark grammars (rule: a | b, TERMINAL: /regex/), not GBNF "
                "(root ::= ...): rewrite the grammar in Lark syntax"
            )
        return None
    if kind == "JSON_OBJECT":
        return None
    if kind == "CHOICE":
        choices, error = _loads(spec, "the choices are not a JSON list")
        if error:
            return error
        if not isinstance(choices, list) or not choices:
            return "choice must be a non-empty list of strings"
        if not all(isinstance(c, str) for c in choices):
            return "choice must be a list of strings"
        return None
    if kind == "JSON":
        schema, error = _loads(spec, "the JSON Schema is not JSON")
        if error:
            return error
        if schema in ({}, {"type": "object"}):
            return None
        return (
            "munch has no JSON Schema support yet: it serves only the schemas {} and "
            '{"type": "object"} (and json_object); give a Lark grammar instead'
        )
    if kind == "REGEX":
        return (
            "munch has no regex support yet: write the constraint as a Lark grammar with a "
            "regex terminal, e.g. start: /[0-9]+/"
        )
    if kind == "STRUCTURAL_TAG":
        return "munch does not support structural tags"
    return f"munch does not support {kind} constraints"


def grammar_for(kind: str, spec: str) -> "munch.Grammar":
    """The munch grammar of a request; ``ValueError`` with :func:`refusal`'s reason."""
    why = refusal(kind, spec)
    if why is not None:
        raise ValueError(why)
    if kind == "GRAMMAR":
        rules = {m.group(1) for m in _RULE.finditer(spec)}
        start = "root" if "start" not in rules and "root" in rules else "start"
        return munch.Grammar.from_lark(spec, start=start)
    if kind == "CHOICE":
        return munch.Grammar.from_lark(choice_grammar(json.loads(spec)))
    if kind == "JSON" and json.loads(spec) == {}:
        return munch.Grammar.builtin("json")
    # JSON_OBJECT, and JSON with the schema {"type": "object"}.
    return munch.Grammar.from_lark(munch.Grammar.builtin("json").text, start="object")


def choice_grammar(choices: Sequence[str]) -> str:
    """Lark text whose sentences are exactly ``choices``.

    Each choice is a sequence of string literals: characters other than printable ASCII are
    written as ``\\uXXXX`` escapes (``\\UXXXXXXXX`` past the BMP), and each backslash is a
    literal of its own, since Lark turns two backslashes in one string literal into one."""
    alternatives = []
    empty = False
    for choice in choices:
        if choice == "":
            empty = True
            continue
        parts = []
        for piece in re.split(r"(\\)", choice):
            if piece == "\\":
                parts.append('"\\\\"')
            elif piece:
                parts.append('"' + "".join(_lark_char(c) for c in piece) + '"')
        alternatives.append(" ".join(parts))
    body = " | ".join(alternatives)
    if empty:
        body = f"({body})?" if body else ""
    return f"start: {body}\n" if body else 'start: ""?\n'


def _lark_char(c: str) -> str:
    if " " <= c <= "~" and c not in '"\\':
        return c
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# --- Registration ----------------------------------------------------------------------------

_INSTALLED = False


def install() -> None:
    """Makes vLLM in this process compile structured outputs with munch (see the module docs
    for what is patched). Idempotent."""
    global _INSTALLED
    if _INSTALLED:
        return
    from vllm.v1.structured_output import StructuredOutputManager

    _patch_manager(StructuredOutputManager)
    patched = _patch_validation()
    if not patched:
        logger.warning(
            "munch.vllm: no request validator of this vLLM was found to patch; requests are "
            "validated by the configured structured_outputs backend before munch compiles them"
        )
    _INSTALLED = True


def _patch_manager(manager_cls: Any) -> None:
    original = manager_cls.grammar_init
    if getattr(original, "_munch", False):
        return

    def grammar_init(self: Any, request: Any) -> None:
        if getattr(request, "structured_output_request", None) is not None:
            if self.backend is None:
                self.backend = MunchBackend(
                    self.vllm_config,
                    tokenizer=self.tokenizer,
                    vocab_size=self.vllm_config.model_config.get_vocab_size(),
                )
            if hasattr(self, "backend_name"):
                self.backend_name = BACKEND_NAME
            so = getattr(getattr(request, "sampling_params", None), "structured_outputs", None)
            if so is not None and hasattr(so, "_backend"):
                so._backend = BACKEND_NAME
        return original(self, request)

    grammar_init._munch = True  # type: ignore[attr-defined]
    grammar_init.__doc__ = original.__doc__
    manager_cls.grammar_init = grammar_init


def _request_key(so: Any) -> Optional[Tuple[str, str]]:
    """The (kind, spec) vLLM makes of a ``StructuredOutputsParams``, in vLLM's order."""
    if getattr(so, "json", None) is not None:
        spec = so.json if isinstance(so.json, str) else json.dumps(so.json)
        return "JSON", spec
    if getattr(so, "json_object", None):
        return "JSON_OBJECT", ""
    if getattr(so, "regex", None) is not None:
        return "REGEX", so.regex
    if getattr(so, "choice", None) is not None:
        spec = so.choice if isinstance(so.choice, str) else json.dumps(so.choice)
        return "CHOICE", spec
    if getattr(so, "grammar", None) is not None:
        return "GRAMMAR", so.grammar
    if getattr(so, "structural_tag", None) is not None:
        return "STRUCTURAL_TAG", so.structural_tag
    return None


def validate_structured_outputs(so: Any) -> None:
    """What :func:`install` puts in place of vLLM's request validation: ``ValueError`` when
    munch does not serve the request; marks it for munch otherwise."""
    if so is None:
        return
    key = _request_key(so)
    if key is None:
        raise ValueError("no structured output constraint was given")
    why = refusal(*key)
    if why is not None:
        raise ValueError(f"structured output ({key[0].lower()}): {why}")
    if hasattr(so, "_backend"):
        so._backend = BACKEND_NAME


def _patch_validation() -> List[str]:
    """Replaces the request validators this vLLM has; returns what was patched."""
    import importlib

    patched = []
    try:
        sampling = importlib.import_module("vllm.sampling_params")
        cls = sampling.SamplingParams
        if hasattr(cls, "_validate_structured_outputs"):

            def _validate_structured_outputs(self: Any, *args: Any, **kwargs: Any) -> None:
                validate_structured_outputs(getattr(self, "structured_outputs", None))

            cls._validate_structured_outputs = _validate_structured_outputs
            patched.append("SamplingParams._validate_structured_outputs")
    except ImportError:
        pass
    for module, name in (
        ("vllm.v1.engine.input_processor", "InputProcessor"),
        ("vllm.v1.engine.processor", "Processor"),
    ):
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if hasattr(cls, "_validate_structured_output"):

            def _validate_structured_output(self: Any, params: Any) -> None:
                validate_structured_outputs(getattr(params, "structured_outputs", None))

            cls._validate_structured_output = _validate_structured_output
            patched.append(f"{name}._validate_structured_output")
    return patched
