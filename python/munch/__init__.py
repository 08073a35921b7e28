"""munch: grammar-constrained decoding for LLMs.

At every step of generation, munch computes the set of vocabulary tokens that keep the output a
prefix of a sentence of a context-free grammar, as the ``int32`` bitmask that logits kernels
read (shape ``[batch, ceil(vocab_size / 32)]``, bit ``t % 32`` of word ``t // 32`` set iff
token ``t`` is allowed: the layout vLLM, XGrammar and llguidance share).

An inference engine holds three things:

- a :class:`Grammar`: Lark text or a file with its start rule, or one of munch's or SynCode's
  grammars by name;
- a :class:`CompiledGrammar` from :func:`compile`: the grammar for a :class:`Tokenizer` with
  one masker, built once and shared by every sequence (and thread) using that grammar;
- a :class:`Matcher` per sequence.

>>> import munch
>>> tokenizer = munch.Tokenizer.from_file("tokenizer.json")            # doctest: +SKIP
>>> compiled = munch.compile(munch.Grammar.builtin("json"), tokenizer)  # doctest: +SKIP
>>> matcher = munch.Matcher(compiled)                                   # doctest: +SKIP
>>> bitmask = munch.allocate_token_bitmask(1, tokenizer.vocab_size)     # doctest: +SKIP
>>> matcher.fill_next_token_bitmask(bitmask)                            # doctest: +SKIP
>>> munch.apply_token_bitmask_inplace(logits, bitmask)                  # doctest: +SKIP
>>> matcher.accept_token(int(logits.argmax()))                          # doctest: +SKIP

``munch.hf.LogitsProcessor`` plugs a compiled grammar into transformers' ``generate``. numpy is
the only dependency; torch and transformers are imported only by the calls that use them.
"""

from munch._munch import (
    CompiledGrammar,
    CompileError,
    Grammar,
    GrammarError,
    Matcher,
    MatcherError,
    MunchError,
    Tokenizer,
    TokenizerError,
    __version__,
    accept_token_batch,
    compile,
    fill_next_token_bitmask_batch,
)
from munch._bitmask import (
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    bitmask_width,
    reset_token_bitmask,
)

__all__ = [
    "CompileError",
    "CompiledGrammar",
    "Grammar",
    "GrammarError",
    "Matcher",
    "MatcherError",
    "MunchError",
    "Tokenizer",
    "TokenizerError",
    "__version__",
    "accept_token_batch",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_width",
    "compile",
    "fill_next_token_bitmask_batch",
    "reset_token_bitmask",
]
