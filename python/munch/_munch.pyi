"""Type stubs of munch's native module (re-exported by ``munch``)."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

class MunchError(ValueError):
    """Base of munch's exceptions: the message is the Rust error's text."""

class GrammarError(MunchError):
    """The grammar is invalid or unknown (``file:line:column``, the line and a caret)."""

    subschemas: List[Tuple[str, List[str]]]
    """For a JSON Schema refused at some of its subschemas: each one's JSON pointer and the
    keywords at fault (the one that cannot be compiled exactly, or those shaping strings whose
    lexer exceeds a budget); empty otherwise."""

class TokenizerError(MunchError):
    """The tokenizer could not be loaded."""

class CompileError(MunchError):
    """No masker could be built, or an artifact does not fit the grammar and tokenizer."""

class MatcherError(MunchError):
    """A matcher refused a call (rollback too far, a parser budget, a batch's shapes)."""

_Path = Union[str, PathLike]
_Ids = Union[Sequence[int], Any]

class Tokenizer:
    """A tokenizer's vocabulary (each id's exact bytes, the EOS ids) and the logits width."""

    @staticmethod
    def from_file(path: _Path, vocab_size: Optional[int] = None) -> Tokenizer:
        """Loads a Hugging Face ``tokenizer.json`` (and the ``tokenizer_config.json`` beside it)."""
    @staticmethod
    def from_json(
        json: Union[str, bytes],
        name: str = "tokenizer.json",
        eos_token: Optional[str] = None,
        vocab_size: Optional[int] = None,
    ) -> Tokenizer:
        """Reads the contents of a ``tokenizer.json``; ``eos_token`` joins the EOS ids."""
    @staticmethod
    def from_huggingface(tokenizer: Any, vocab_size: Optional[int] = None) -> Tokenizer:
        """The vocabulary of a transformers fast tokenizer; ``vocab_size``: the model's logits width."""
    @property
    def vocab_size(self) -> int:
        """The width of the model's logits: token ids are ``0 .. vocab_size``."""
    @property
    def eos_token_ids(self) -> List[int]:
        """The end-of-sequence ids, ascending."""
    @property
    def name(self) -> str:
        """The tokenizer's name."""
    def __len__(self) -> int:
        """The number of the tokenizer's own ids (``vocab_size`` may be larger)."""
    def token_bytes(self, token_id: int) -> Optional[bytes]:
        """The exact bytes of a token; ``None`` for special tokens and padded ids."""
    def decode_bytes(self, token_ids: Sequence[int]) -> bytes:
        """The bytes of ``token_ids`` one after another."""
    def encode(self, text: str) -> List[int]:
        """Token ids whose bytes are exactly ``text``'s (no special tokens, no BOS)."""

class Grammar:
    """A grammar to compile: Lark text with its start rule, or a grammar by name."""

    @staticmethod
    def from_lark(
        text: str, start: str = "start", postlex: Optional[str] = None, *,
        reserved_literals: bool = False, prefer_shift: bool = False
    ) -> Grammar:
        """Lark grammar text starting at rule ``start``; ``postlex="python"``: Lark's PythonIndenter."""
    @staticmethod
    def from_file(
        path: _Path, start: str = "start", postlex: Optional[str] = None, *,
        reserved_literals: bool = False, prefer_shift: bool = False
    ) -> Grammar:
        """The Lark grammar in a file."""
    @staticmethod
    def builtin(name: str) -> Grammar:
        """One of munch's own grammars (``json``, ``tricky``)."""
    @staticmethod
    def syncode(name: str) -> Grammar:
        """One of SynCode's grammars (``json go java sql c calc tiny prover9 invariants python``)."""
    @staticmethod
    def from_json_schema(
        schema: Union[str, Dict[str, Any], bool],
        *,
        whitespace: str = "flexible",
        max_whitespace: int = 16,
        item_separator: str = ",",
        key_separator: str = ":",
        property_order: str = "schema",
        lenient: bool = False,
    ) -> Grammar:
        """The JSON texts valid under a JSON Schema, exactly (``GrammarError`` names a keyword that cannot be)."""
    @staticmethod
    def from_regex(pattern: str) -> Grammar:
        """The whole matches of a regex (ECMA-262 syntax)."""
    @property
    def relaxations(self) -> List[Tuple[str, str, str]]:
        """What a ``lenient`` schema compile dropped: ``(pointer, keyword, reason)``."""
    @property
    def name(self) -> str:
        """The name errors give the grammar."""
    @property
    def postlex(self) -> Optional[str]:
        """The post-lexer: ``"python"`` or ``None``."""
    @property
    def start(self) -> str:
        """The start rule."""
    @property
    def text(self) -> str:
        """The Lark source text."""

class CompiledGrammar:
    """A grammar compiled for a tokenizer with one masker, shared by its matchers."""

    def save(self, path: _Path) -> None:
        """Writes the compiled masker (``wda`` only) to ``path``."""
    @staticmethod
    def load(
        path: _Path, grammar: Grammar, tokenizer: Tokenizer, masker: str = "wda"
    ) -> CompiledGrammar:
        """Reads an artifact written by ``save`` for this grammar and tokenizer."""
    @property
    def stats(self) -> Dict[str, Any]:
        """What the compilation built and cost."""
    @property
    def masker(self) -> str:
        """The masker built (the fallback's name when ``fell_back`` is set)."""
    @property
    def fell_back(self) -> Optional[str]:
        """Why the masker asked for was not built, or ``None``."""
    def wait(self) -> None:
        """Waits for a background build; raises ``CompileError`` if it failed."""
    @property
    def is_ready(self) -> bool:
        """Whether the masker asked for is built (``False`` only during a background build)."""
    @property
    def vocab_size(self) -> int:
        """The model's logits width."""
    @property
    def bitmask_width(self) -> int:
        """Words of one bitmask row: ``ceil(vocab_size / 32)``."""
    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer it was compiled for."""
    @property
    def grammar_name(self) -> str:
        """The grammar's name."""

def compile(
    grammar: Grammar,
    tokenizer: Tokenizer,
    masker: str = "wda",
    fallback: Optional[str] = "trie",
    max_memory: Optional[int] = None,
    lazy: bool = False,
    background: bool = False,
) -> CompiledGrammar:
    """Compiles ``grammar`` for ``tokenizer`` with ``masker`` (``wda``, ``spanner``, ``trie``,
    ``oracle``), building ``fallback`` instead when its build fails; ``lazy``: the wda on
    demand, or the trie without token classes; ``background``: mask at once with the trie
    walk while ``masker`` builds."""

class Matcher:
    """One sequence's constraint: the text accepted so far under a compiled grammar."""

    def __init__(
        self, compiled: CompiledGrammar, stop_token_ids: Optional[_Ids] = None
    ) -> None: ...
    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Writes the allowed next tokens into row ``index`` of an int32 bitmask, in place."""
    def accept_token(self, token_id: int) -> bool:
        """Accepts the next token: ``False`` (unchanged) when it is not allowed."""
    def accept_tokens(self, token_ids: _Ids) -> bool:
        """Accepts tokens, all or none."""
    def accept_string(self, text: str) -> bool:
        """Accepts text whatever tokens spell it: ``False`` (unchanged) when not allowed."""
    def accept_bytes(self, data: bytes) -> bool:
        """``accept_string`` of raw bytes."""
    def validate_tokens(self, token_ids: _Ids) -> int:
        """How many of ``token_ids``, from the first, would be accepted (nothing is)."""
    def rollback(self, num_tokens: int = 1) -> None:
        """Undoes the last ``num_tokens`` accepted steps."""
    def reset(self) -> None:
        """Back to the start of the text."""
    def fork(self) -> Matcher:
        """An independent copy at the same text."""
    def is_accepting(self) -> bool:
        """Whether the text so far is a sentence (a stop token is allowed now)."""
    def is_terminated(self) -> bool:
        """Whether a stop token was accepted."""
    def forced_string(self) -> str:
        """The text every continuation starts with (jump-forward)."""
    def forced_bytes(self) -> bytes:
        """The bytes every continuation starts with."""
    def allowed_token_ids(self) -> List[int]:
        """The ids allowed next, ascending."""
    @property
    def num_accepted(self) -> int:
        """Steps ``rollback`` can undo."""
    @property
    def stop_token_ids(self) -> List[int]:
        """The ids that end the text."""
    @property
    def compiled(self) -> CompiledGrammar:
        """The compiled grammar this matcher reads."""
    @property
    def vocab_size(self) -> int:
        """The model's logits width."""

def fill_next_token_bitmask_batch(
    matchers: Sequence[Matcher],
    bitmask: Any,
    indices: Optional[_Ids] = None,
    threads: Optional[int] = None,
) -> None:
    """Fills the matchers' bitmask rows in parallel, with the GIL released."""

def accept_token_batch(
    matchers: Sequence[Matcher], token_ids: _Ids, threads: Optional[int] = None
) -> List[bool]:
    """Accepts ``token_ids[i]`` in ``matchers[i]`` in parallel: one answer per matcher."""
