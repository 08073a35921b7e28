"""munch as an SGLang grammar backend: :class:`MunchGrammarBackend` and :class:`MunchGrammar`.

Selecting it
------------
Importing this module registers the backend under the name ``munch`` with SGLang's
``register_grammar_backend`` (and adds ``munch`` to the choices of ``--grammar-backend`` where
SGLang has ``add_grammar_backend_choices``). munch's package also declares the entry point
``munch = munch._plugins:sglang`` in SGLang's plugin group ``sglang.srt.plugins``, which SGLang
loads in every process it starts (the launcher, the schedulers) when it has that group, so
with munch installed this is enough::

    python -m sglang.launch_server --model-path MODEL --grammar-backend munch

Where SGLang has no plugin group, import ``munch.sglang`` at the top of a launch script (SGLang
starts its scheduler processes with ``spawn``, which imports the script's module again, so the
registration reaches them) and start the server from that script. ``register(name, masker=...,
fallback=..., max_memory=...)`` registers under another name or with other compile options.

What SGLang sends, and what munch does with it
-----------------------------------------------
SGLang turns a request's constraint into a key ``(key_type, key_string)`` and calls the
backend's ``dispatch_<key_type>(key_string)`` on a worker thread; the grammar object it returns
is cached per key and each request gets a ``copy()``.

- ``"ebnf"``: the request's ``ebnf`` text, verbatim. munch reads it as a **Lark** grammar whose
  start rule is ``start`` (or ``root``, when there is no ``start`` rule and a ``root`` one, the
  name GBNF grammars use). GBNF's own syntax (``root ::= ...``) is refused with a message
  saying so.
- ``"lark"`` (not sent by SGLang's HTTP API; for callers that make their own keys): Lark text,
  as for ``"ebnf"``.
- ``"json"``: the JSON Schema text of ``json_schema`` (``response_format`` with
  ``json_schema``), ``'{"type": "object"}'`` for ``response_format`` ``json_object``, or
  ``"$$ANY$$"``. munch has no JSON Schema compiler yet: ``"$$ANY$$"`` and the schema ``{}``
  (any JSON value) and ``{"type": "object"}`` (any JSON object) are served exactly by munch's
  JSON grammar; every other schema is refused.
- ``"regex"`` and ``"structural_tag"``: refused (munch has no regex front end yet).

A refused or invalid grammar is returned as SGLang's ``InvalidGrammarObject`` carrying the
reason, which SGLang caches and reports when it aborts the request ("Failed to compile ebnf
grammar: ..."); older SGLang versions get their ``INVALID_GRAMMAR_OBJ`` or ``None``.

The grammar objects
-------------------
A :class:`MunchGrammar` wraps one :class:`munch.Matcher`. Compiled grammars are shared by every
request with the same key (SGLang's cache holds one grammar object per key and hands out
copies; :meth:`MunchGrammar.copy` forks the matcher, which shares the compiled tables). Masks are
``int32`` bitmasks allocated on the CPU, filled in place by munch with the GIL released (a batch
through munch's thread pool in ``fill_vocab_mask_batched``), moved to the logits' device, and
applied there with :func:`munch.apply_token_bitmask_inplace`. ``accept_token`` raises
``ValueError`` for a token the grammar does not allow, which SGLang turns into an aborted
request; tokens after the stop token are ignored. Jump-forward returns munch's forced text.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from functools import partial
from typing import Any, Dict, List, Optional, Sequence, Tuple

import munch

try:
    from sglang.srt.constrained import base_grammar_backend as _base
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "munch.sglang needs SGLang (pip install sglang): "
        f"sglang.srt.constrained.base_grammar_backend did not import ({e})"
    ) from e

BaseGrammarBackend = _base.BaseGrammarBackend
BaseGrammarObject = _base.BaseGrammarObject

__all__ = ["MunchGrammar", "MunchGrammarBackend", "create_backend", "register"]

logger = logging.getLogger(__name__)

#: The name ``import munch.sglang`` registers the backend under.
BACKEND_NAME = "munch"

# A GBNF rule definition (`name ::= ...`), which Lark does not read.
_GBNF = re.compile(r"^\s*[A-Za-z_][\w-]*\s*::=", re.M)
_RULE = re.compile(r"^\s*[?!]?(\w+)\s*(\.\s*-?\d+\s*)?:", re.M)


def _stats(dispatch_type: str) -> Any:
    """SGLang's ``GrammarStats`` for a grammar object, where this SGLang has it."""
    stats = getattr(_base, "GrammarStats", None)
    return stats(dispatch_type=dispatch_type) if stats is not None else None


class MunchGrammar(BaseGrammarObject):
    """One request's constraint in SGLang: a :class:`munch.Matcher` and the calls SGLang makes.

    ``key_type`` and ``grammar_name`` only label it (``repr``, errors, SGLang's stats).
    """

    def __init__(
        self, matcher: "munch.Matcher", key_type: str = "ebnf", grammar_stats: Any = None
    ) -> None:
        super().__init__()
        self.matcher = matcher
        self.key_type = key_type
        self.grammar_stats = grammar_stats

    def __repr__(self) -> str:
        return f"MunchGrammar({self.key_type}, {self.matcher!r})"

    def accept_token(self, token: int) -> None:
        """Accepts the sampled ``token``; ``ValueError`` when the grammar does not allow it
        (SGLang aborts the request). Tokens after the stop token are ignored."""
        if self.matcher.is_terminated():
            return
        self.current_token = token
        if not self.matcher.accept_token(token):
            raise ValueError(
                f"token {token} is not allowed by the grammar "
                f"{self.matcher.compiled.grammar_name!r} after "
                f"{self.matcher.num_accepted} accepted tokens"
            )

    def rollback(self, k: int) -> None:
        """Undoes the last ``k`` accepted tokens (speculative decoding's rejected drafts)."""
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        """Whether a stop token was accepted."""
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        """A CPU ``int32`` torch bitmask ``[batch_size, ceil(vocab_size / 32)]`` allowing every
        token: rows SGLang does not fill (finished requests, requests without a grammar) stay
        unconstrained. It is filled on the CPU and moved by :meth:`move_vocab_mask`."""
        return munch.allocate_token_bitmask(batch_size, vocab_size, torch=True)

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        """Writes this request's allowed tokens into row ``idx`` of ``vocab_mask``."""
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def fill_vocab_mask_batched(entries: Sequence[Any], vocab_mask: Any) -> None:
        """Fills the rows of ``entries`` (SGLang's ``GrammarRow(row, grammar)``) in one call on
        munch's thread pool with the GIL released; other grammar objects fill their own row."""
        matchers: List["munch.Matcher"] = []
        rows: List[int] = []
        for entry in entries:
            if isinstance(entry.grammar, MunchGrammar):
                matchers.append(entry.grammar.matcher)
                rows.append(entry.row)
            else:
                entry.grammar.fill_vocab_mask(vocab_mask, entry.row)
        if matchers:
            munch.fill_next_token_bitmask_batch(matchers, vocab_mask, rows)

    @staticmethod
    def reset_vocab_mask(vocab_mask: Any) -> None:
        """Allows every token again in a reused bitmask."""
        munch.reset_token_bitmask(vocab_mask)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        """The bitmask on the logits' device."""
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        """Sets the logits of the tokens ``vocab_mask`` does not allow to ``-inf``, in place, on
        the logits' device."""
        munch.apply_token_bitmask_inplace(logits, vocab_mask)

    def copy(self) -> "MunchGrammar":
        """An independent grammar object at the same text (SGLang copies its cached object,
        which stands at the start, for each request): a fork of the matcher."""
        stats = _stats(self.key_type)
        if stats is not None and hasattr(stats, "is_cache_hit"):
            stats.is_cache_hit = True
        return MunchGrammar(self.matcher.fork(), self.key_type, stats)

    def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
        """``([], text)`` where every continuation starts with ``text``; ``None`` otherwise."""
        text = self.matcher.forced_string()
        return ([], text) if text else None

    def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
        """The forced text of :meth:`try_jump_forward` (munch needs no state beside it)."""
        return helper[1], -1

    def jump_and_retokenize(
        self, old_output_ids: List[int], new_output_ids: List[int], next_state: int
    ) -> None:
        """Brings the matcher from ``old_output_ids`` (what it accepted) to
        ``new_output_ids`` (the output retokenized after the jump): rolls back to their common
        prefix and accepts the rest."""
        k = 0
        for old, new in zip(old_output_ids, new_output_ids):
            if old != new:
                break
            k += 1
        if k < len(old_output_ids):
            self.matcher.rollback(len(old_output_ids) - k)
        for token in new_output_ids[k:]:
            self.accept_token(token)


class MunchGrammarBackend(BaseGrammarBackend):
    """SGLang's engine-level grammar backend: compiles each key's grammar with munch.

    ``tokenizer``: the server's transformers tokenizer (a fast one), or a
    :class:`munch.Tokenizer`. ``vocab_size``: the model's logits width. ``eos_token_ids``: the
    model's EOS ids, added to the tokenizer's as stop tokens. ``masker``, ``fallback``,
    ``max_memory``: as for :func:`munch.compile`.
    """

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: Optional[int] = None,
        eos_token_ids: Optional[Sequence[int]] = None,
        masker: str = "wda",
        fallback: Optional[str] = "trie",
        max_memory: Optional[int] = None,
    ) -> None:
        super().__init__()
        if isinstance(tokenizer, munch.Tokenizer):
            if vocab_size is not None and vocab_size != tokenizer.vocab_size:
                raise ValueError(
                    f"vocab_size {vocab_size} differs from the munch.Tokenizer's "
                    f"{tokenizer.vocab_size}: give it to Tokenizer.from_file(..., vocab_size=)"
                )
            self.tokenizer = tokenizer
        else:
            self.tokenizer = munch.Tokenizer.from_huggingface(tokenizer, vocab_size)
        stops = set(self.tokenizer.eos_token_ids)
        stops.update(int(t) for t in eos_token_ids or ())
        self.stop_token_ids = sorted(stops)
        self.compile_options: Dict[str, Any] = {
            "masker": masker,
            "fallback": fallback,
            "max_memory": max_memory,
        }
        self._compiled: Dict[Tuple[str, str], "munch.CompiledGrammar"] = {}
        self._lock = threading.Lock()

    # Keys.

    def dispatch_ebnf(self, key_string: str) -> Any:
        """The request's ``ebnf`` text, read as Lark (see the module docs)."""
        return self._lark("ebnf", key_string)

    def dispatch_lark(self, key_string: str) -> Any:
        """Lark grammar text."""
        return self._lark("lark", key_string)

    def dispatch_json(self, key_string: str) -> Any:
        """``$$ANY$$``, ``{}`` and ``{"type": "object"}``; other schemas are refused."""
        if key_string.strip() == "$$ANY$$":
            return self._grammar("json", munch.Grammar.builtin("json"))
        try:
            schema = json.loads(key_string)
        except ValueError as e:
            return self._refuse("json", f"the JSON Schema is not JSON: {e}")
        if schema == {}:
            return self._grammar("json", munch.Grammar.builtin("json"))
        if schema == {"type": "object"}:
            return self._grammar("json", _json_object_grammar())
        return self._refuse(
            "json",
            "munch has no JSON Schema support yet: it serves only '$$ANY$$', {} and "
            '{"type": "object"} (response_format json_object); give a Lark grammar as ebnf, '
            "or use another --grammar-backend for JSON Schemas",
        )

    def dispatch_regex(self, key_string: str) -> Any:
        """Refused: munch has no regex front end yet."""
        return self._refuse(
            "regex",
            "munch has no regex support yet: write the constraint as a Lark grammar "
            "(ebnf) with a regex terminal, e.g. start: /[0-9]+/",
        )

    def dispatch_structural_tag(self, key_string: str) -> Any:
        """Refused: munch has no structural tags."""
        return self._refuse("structural_tag", "munch does not support structural tags")

    def dispatch_fallback(self, key_type: str, key_string: str) -> Any:
        """``"lark"`` keys; any other key type is refused."""
        if key_type == "lark":
            return self.dispatch_lark(key_string)
        return self._refuse(key_type, f"munch does not support {key_type!r} constraints")

    def reset(self) -> None:
        """Forgets the cached grammar objects and compiled grammars."""
        super().reset()
        with self._lock:
            self._compiled.clear()

    # Compiling.

    def _lark(self, key_type: str, text: str) -> Any:
        if _GBNF.search(text):
            return self._refuse(
                key_type,
                "munch reads Lark grammars (rule: a | b, TERMINAL: /regex/), not GBNF "
                "(root ::= ...): rewrite the grammar in Lark syntax",
            )
        rules = {m.group(1) for m in _RULE.finditer(text)}
        start = "root" if "start" not in rules and "root" in rules else "start"
        return self._grammar(key_type, munch.Grammar.from_lark(text, start=start))

    def compiled_grammar(self, grammar: "munch.Grammar") -> "munch.CompiledGrammar":
        """``grammar`` compiled for this backend's tokenizer, once per text and start rule."""
        key = (grammar.text, grammar.start)
        with self._lock:
            compiled = self._compiled.get(key)
        if compiled is None:
            # Compiled outside the lock: two threads may compile one grammar twice, but no
            # compilation waits for another grammar's.
            compiled = munch.compile(grammar, self.tokenizer, **self.compile_options)
            with self._lock:
                compiled = self._compiled.setdefault(key, compiled)
        return compiled

    def _grammar(self, key_type: str, grammar: "munch.Grammar") -> Any:
        try:
            compiled = self.compiled_grammar(grammar)
        except munch.MunchError as e:
            return self._refuse(key_type, str(e))
        matcher = munch.Matcher(compiled, self.stop_token_ids)
        return MunchGrammar(matcher, key_type, _stats(key_type))

    def _refuse(self, key_type: str, message: str) -> Any:
        logger.warning("munch refused a %s grammar: %s", key_type, message)
        invalid = getattr(_base, "InvalidGrammarObject", None)
        if invalid is not None:
            return invalid(message)
        return getattr(_base, "INVALID_GRAMMAR_OBJ", None)


def _json_object_grammar() -> "munch.Grammar":
    """munch's JSON grammar started at its ``object`` rule: any JSON object."""
    return munch.Grammar.from_lark(munch.Grammar.builtin("json").text, start="object")


def create_backend(
    server_args: Any = None,
    tokenizer: Any = None,
    vocab_size: Optional[int] = None,
    eos_token_ids: Optional[Sequence[int]] = None,
    **options: Any,
) -> MunchGrammarBackend:
    """The factory SGLang's registry calls: ``(server_args, tokenizer, vocab_size,
    eos_token_ids)``. Keyword arguments SGLang does not define are compile options
    (``masker``, ``fallback``, ``max_memory``)."""
    known = {k: options[k] for k in ("masker", "fallback", "max_memory") if k in options}
    return MunchGrammarBackend(tokenizer, vocab_size, eos_token_ids, **known)


def register(name: str = BACKEND_NAME, **compile_options: Any) -> None:
    """Registers the backend with SGLang under ``name`` (``--grammar-backend name``), with
    :func:`munch.compile` options (``masker``, ``fallback``, ``max_memory``)."""
    factory = partial(create_backend, **compile_options) if compile_options else create_backend
    _base.register_grammar_backend(name, factory)
    try:
        from sglang.srt import server_args
    except ImportError:
        return
    add_choices = getattr(server_args, "add_grammar_backend_choices", None)
    choices = getattr(server_args, "GRAMMAR_BACKEND_CHOICES", ())
    if add_choices is not None and name not in choices:
        add_choices([name])


register()
