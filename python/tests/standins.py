"""Stand-ins for SGLang's and vLLM's backend base classes, for machines without those packages.

Written from the interfaces' documented signatures and behaviour (SGLang's
``sglang/srt/constrained/base_grammar_backend.py``, vLLM's
``vllm/v1/structured_output/backend_types.py``), keeping only what a backend relies on: the
methods a subclass must override raise ``NotImplementedError`` (SGLang) or are abstract
(vLLM), and the base behaviour SGLang's scheduler uses (its key dispatch, cache and registry)
works as documented. ``install_*`` puts a stand-in under the real module's name in
``sys.modules`` through pytest's ``monkeypatch``, so ``munch.sglang`` / ``munch.vllm`` import
it as they would the real one; the tests that use them run against the real classes too where
the packages import.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import importlib
import sys
import types
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import pytest


def _modules(monkeypatch, path: str) -> types.ModuleType:
    """Empty modules for the dotted ``path`` and its parents, each an attribute of its parent;
    the last."""
    parts = path.split(".")
    made: Dict[str, types.ModuleType] = {}
    for name in (".".join(parts[: i + 1]) for i in range(len(parts))):
        module = types.ModuleType(name)
        module.__path__ = []  # a package, so that submodules resolve
        monkeypatch.setitem(__import__("sys").modules, name, module)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(made[parent], child, module)
        made[name] = module
    return made[path]


def framework(request, monkeypatch, label: str, real: str, install, adapter: str):
    """The body of a test fixture run against a framework's own module and its stand-in:
    yields ``base``, the module ``real`` (``request.param`` other than ``"stand-in"``; skipped,
    with the reason, where it does not import) or the stand-in ``install`` puts in its place,
    ``mod``, munch's ``adapter`` module imported against it, and ``real``, whether ``base`` is
    the framework's."""
    if request.param == "stand-in":
        base = install(monkeypatch)
    else:
        try:
            base = importlib.import_module(real)
        except Exception as e:  # ImportError, or a dependency failing at import
            pytest.skip(f"{label} does not import here: {type(e).__name__}: {e}")
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    mod = importlib.import_module(adapter)
    yield types.SimpleNamespace(base=base, mod=mod, real=request.param != "stand-in")
    sys.modules.pop(adapter, None)


# --- SGLang --------------------------------------------------------------------------------


def install_sglang(monkeypatch) -> types.ModuleType:
    """``sglang.srt.constrained.base_grammar_backend`` (a stand-in) in ``sys.modules``."""
    base = _modules(monkeypatch, "sglang.srt.constrained.base_grammar_backend")

    @dataclasses.dataclass
    class GrammarStats:
        compilation_time: Optional[float] = None
        is_cache_hit: bool = False
        dispatch_type: Optional[str] = None

    class GrammarRow(NamedTuple):
        row: int
        grammar: Any

    class BaseGrammarObject:
        def __init__(self) -> None:
            self._finished = False
            self.grammar_stats = None
            self.current_token = None

        @property
        def finished(self) -> bool:
            return self._finished

        @finished.setter
        def finished(self, value: bool) -> None:
            self._finished = value

        def maybe_init_reasoning(self, reasoning: bool) -> None:
            pass

        def is_terminated(self) -> bool:
            return False

        def copy(self) -> "BaseGrammarObject":
            return self

        @staticmethod
        def fill_vocab_mask_batched(entries: List[GrammarRow], vocab_mask: Any) -> None:
            for entry in entries:
                entry.grammar.fill_vocab_mask(vocab_mask, entry.row)

        # What a backend's grammar object must override.

        def accept_token(self, token: int) -> None:
            raise NotImplementedError()

        def rollback(self, k: int) -> None:
            raise NotImplementedError()

        def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
            raise NotImplementedError()

        def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
            raise NotImplementedError()

        @staticmethod
        def reset_vocab_mask(vocab_mask: Any) -> None:
            raise NotImplementedError()

        @staticmethod
        def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
            raise NotImplementedError()

        @staticmethod
        def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
            raise NotImplementedError()

        def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
            raise NotImplementedError()

        def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
            raise NotImplementedError()

        def jump_and_retokenize(
            self, old_output_ids: List[int], new_output_ids: List[int], next_state: int
        ) -> None:
            raise NotImplementedError()

    class InvalidGrammarObject(BaseGrammarObject):
        def __init__(self, error_message: str = "Unknown grammar error") -> None:
            super().__init__()
            self.error_message = error_message

    class BaseGrammarBackend:
        def __init__(self) -> None:
            self.executor = ThreadPoolExecutor()
            self.cache: Dict[Tuple[str, str], BaseGrammarObject] = {}

        def _not_supported(self, key_type: str, key_string: str) -> BaseGrammarObject:
            return InvalidGrammarObject()

        def dispatch_json(self, key_string: str) -> BaseGrammarObject:
            return self._not_supported("json", key_string)

        def dispatch_regex(self, key_string: str) -> BaseGrammarObject:
            return self._not_supported("regex", key_string)

        def dispatch_ebnf(self, key_string: str) -> BaseGrammarObject:
            return self._not_supported("ebnf", key_string)

        def dispatch_structural_tag(self, key_string: str) -> BaseGrammarObject:
            return self._not_supported("structural_tag", key_string)

        def dispatch_fallback(self, key_type: str, key_string: str) -> BaseGrammarObject:
            raise ValueError(f"Invalid key_type: {key_type}={key_string}")

        def _init_value_dispatch(
            self, key: Tuple[str, str], require_reasoning: bool = False
        ) -> BaseGrammarObject:
            key_type, key_string = key
            dispatch = {
                "json": self.dispatch_json,
                "regex": self.dispatch_regex,
                "ebnf": self.dispatch_ebnf,
                "structural_tag": self.dispatch_structural_tag,
            }.get(key_type)
            if dispatch is None:
                return self.dispatch_fallback(key_type, key_string)
            return dispatch(key_string)

        def get_cached_or_future_value(
            self, key: Tuple[str, str], require_reasoning: bool = False
        ) -> Tuple[Any, bool]:
            value = self.cache.get(key)
            if value:
                copied = value.copy()
                copied.maybe_init_reasoning(require_reasoning)
                return copied, True
            future: Future = self.executor.submit(self._init_value_dispatch, key, require_reasoning)
            return future, False

        def set_cache(self, key: Tuple[str, str], value: BaseGrammarObject) -> None:
            self.cache[key] = value

        def reset(self) -> None:
            self.cache.clear()

    registry: Dict[str, Callable[..., BaseGrammarBackend]] = {}

    def register_grammar_backend(name: str, init_func: Callable[..., BaseGrammarBackend]) -> None:
        registry[name] = init_func

    for obj in (GrammarStats, GrammarRow, BaseGrammarObject, InvalidGrammarObject):
        setattr(base, obj.__name__, obj)
    base.BaseGrammarBackend = BaseGrammarBackend
    base.GRAMMAR_BACKEND_REGISTRY = registry
    base.register_grammar_backend = register_grammar_backend
    return base


# --- vLLM ----------------------------------------------------------------------------------


def install_vllm(monkeypatch) -> types.ModuleType:
    """``vllm.v1.structured_output.backend_types`` (a stand-in) in ``sys.modules``."""
    base = _modules(monkeypatch, "vllm.v1.structured_output.backend_types")

    class StructuredOutputOptions(enum.Enum):
        JSON = enum.auto()
        JSON_OBJECT = enum.auto()
        REGEX = enum.auto()
        GRAMMAR = enum.auto()
        CHOICE = enum.auto()
        STRUCTURAL_TAG = enum.auto()

    class StructuredOutputGrammar(abc.ABC):
        @abc.abstractmethod
        def accept_tokens(self, request_id: str, tokens: List[int]) -> bool: ...

        @abc.abstractmethod
        def validate_tokens(self, tokens: List[int]) -> List[int]: ...

        @abc.abstractmethod
        def rollback(self, num_tokens: int) -> None: ...

        @abc.abstractmethod
        def fill_bitmask(self, bitmask: Any, batch_index: int) -> None: ...

        @abc.abstractmethod
        def is_terminated(self) -> bool: ...

        @abc.abstractmethod
        def reset(self) -> None: ...

    @dataclasses.dataclass
    class StructuredOutputBackend(abc.ABC):
        vllm_config: Any
        tokenizer: Any
        vocab_size: int

        @abc.abstractmethod
        def compile_grammar(
            self, request_type: StructuredOutputOptions, grammar_spec: str, stop_token_ids=None
        ) -> StructuredOutputGrammar: ...

        @abc.abstractmethod
        def allocate_token_bitmask(self, max_num_seqs: int) -> Any: ...

        @abc.abstractmethod
        def destroy(self) -> None: ...

    base.StructuredOutputOptions = StructuredOutputOptions
    base.StructuredOutputGrammar = StructuredOutputGrammar
    base.StructuredOutputBackend = StructuredOutputBackend
    return base
