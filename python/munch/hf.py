"""munch in transformers' ``generate``: :class:`LogitsProcessor`.

>>> import munch, munch.hf                                                       # doctest: +SKIP
>>> tokenizer = munch.Tokenizer.from_huggingface(hf_tokenizer, model.config.vocab_size)
>>> compiled = munch.compile(munch.Grammar.builtin("json"), tokenizer)
>>> processor = munch.hf.LogitsProcessor(compiled, batch_size=len(prompts))
>>> model.generate(**inputs, logits_processor=[processor], max_new_tokens=256)

How it follows the sequences
----------------------------
``generate`` calls the processor once per step with every row's tokens so far (``input_ids``,
the prompt then what was generated) and that step's logits. The processor keeps one
:class:`munch.Matcher` per row and, beside it, the generated tokens that matcher has accepted.
The first call records the prompt's length; at every later call, each row's generated tokens
are its new tokens. A row whose tokens are its own matcher's tokens plus one (greedy search,
sampling) accepts that one token. Beam search reorders rows between steps: a row's tokens may
continue another row's. Such a row finds, among the previous step's matchers of the same
prompt, the one whose accepted tokens are its tokens but the last, takes a fork of it and
accepts the last token; only when no row matches (a processor shared between calls it was not
told about) does it replay all its tokens into a fresh matcher. Each step thus costs one
``accept_token`` per row, a comparison of each row's tokens with its own matcher's, and a
dictionary lookup for reordered rows; the bitmask rows are then filled on munch's thread pool
with the GIL released, and the logits masked on their own device.

A row whose matcher has terminated (its stop token was accepted) ignores the padding that
``generate`` appends after it. A row whose last token was not allowed (beam search keeps
``-inf`` candidates when fewer allowed tokens exist than beams) cannot continue the grammar:
it is allowed only its stop tokens from then on, so it ends, with ``-inf`` as its score.

A new ``generate`` call is detected when the sequences are not one token longer than at the
previous call (or the batch changed); :meth:`LogitsProcessor.reset` starts over explicitly.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import munch

__all__ = ["LogitsProcessor"]


class LogitsProcessor:
    """A transformers logits processor that masks each row's logits to its grammar.

    ``compiled``: one :class:`munch.CompiledGrammar` for every prompt, or a list of
    ``batch_size`` of them (one per prompt). ``batch_size``: the number of prompts; the rows of
    ``input_ids`` are ``batch_size`` times ``num_beams`` (or ``num_return_sequences``), each
    prompt's rows next to each other, as ``generate`` lays them out. ``stop_token_ids``: the ids
    that end a text (default: the tokenizer's EOS ids). ``threads``: the batch fill's thread
    pool (default: one thread per core).

    Usable with greedy search, sampling and beam search (see the module docs for how it
    follows reordered rows). Use one processor per ``generate`` call, or call :meth:`reset`.
    """

    def __init__(
        self,
        compiled: Union["munch.CompiledGrammar", Sequence["munch.CompiledGrammar"]],
        batch_size: int = 1,
        stop_token_ids: Optional[Sequence[int]] = None,
        threads: Optional[int] = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size}")
        if isinstance(compiled, munch.CompiledGrammar):
            grammars = [compiled] * batch_size
        else:
            grammars = list(compiled)
            if len(grammars) != batch_size:
                raise ValueError(
                    f"{len(grammars)} compiled grammars for a batch of {batch_size} prompts"
                )
        for g in grammars:
            if not isinstance(g, munch.CompiledGrammar):
                raise ValueError(f"expected munch.CompiledGrammar; got {type(g).__name__}")
        self.compiled = grammars
        self.batch_size = batch_size
        self.stop_token_ids = None if stop_token_ids is None else [int(t) for t in stop_token_ids]
        self.threads = threads
        self.reset()

    def reset(self) -> None:
        """Forgets the sequences: the next call starts a new generation."""
        self.matchers: List[munch.Matcher] = []
        # The generated tokens each row's matcher has accepted (a stop token included).
        self.accepted: List[List[int]] = []
        # Rows whose last token was not allowed: only stop tokens from then on.
        self.dead: List[bool] = []
        self.prompt_len: Optional[int] = None
        self.seq_len: Optional[int] = None
        self.bitmask: Any = None

    def _matcher(self, prompt: int) -> "munch.Matcher":
        return munch.Matcher(self.compiled[prompt], self.stop_token_ids)

    def _start(self, input_ids: Any) -> None:
        rows = input_ids.shape[0]
        if rows % self.batch_size != 0:
            raise ValueError(
                f"input_ids has {rows} rows, not a multiple of batch_size {self.batch_size}"
            )
        self.reset()
        self.per_prompt = rows // self.batch_size
        self.prompt_len = input_ids.shape[1]
        self.matchers = [self._matcher(r // self.per_prompt) for r in range(rows)]
        self.accepted = [[] for _ in range(rows)]
        self.dead = [False] * rows

    def _advance(self, generated: List[List[int]]) -> None:
        """Brings every row's matcher to the row's generated tokens."""
        old_matchers, old_accepted, old_dead = self.matchers, self.accepted, self.dead
        # Which previous row each row continues: its own when its tokens but the last are its
        # matcher's; else a row of the same prompt with those tokens (beam search moved it).
        index: Optional[Dict[Tuple[int, Tuple[int, ...]], int]] = None
        sources: List[Optional[int]] = []
        for r, tokens in enumerate(generated):
            prefix = tokens[:-1]
            if old_accepted[r] == prefix:
                sources.append(r)
                continue
            if index is None:
                index = {}
                for k, acc in enumerate(old_accepted):
                    index.setdefault((k // self.per_prompt, tuple(acc)), k)
            sources.append(index.get((r // self.per_prompt, tuple(prefix))))
        # Every fork is taken before any matcher moves on.
        taken = [False] * len(old_matchers)
        matchers: List[munch.Matcher] = []
        dead: List[bool] = []
        for r, source in enumerate(sources):
            if source is None:
                m, row_dead = self._replay(r // self.per_prompt, generated[r][:-1])
            else:
                m = old_matchers[source].fork() if taken[source] else old_matchers[source]
                taken[source] = True
                row_dead = old_dead[source]
            matchers.append(m)
            dead.append(row_dead)
        for r, tokens in enumerate(generated):
            m = matchers[r]
            if tokens and not dead[r] and not m.is_terminated():
                dead[r] = not m.accept_token(tokens[-1])
        self.matchers, self.accepted, self.dead = matchers, generated, dead

    def _replay(self, prompt: int, tokens: List[int]) -> Tuple["munch.Matcher", bool]:
        """A fresh matcher that accepted ``tokens``, and whether one was not allowed."""
        m = self._matcher(prompt)
        for t in tokens:
            if m.is_terminated():
                break
            if not m.accept_token(t):
                return m, True
        return m, False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Masks ``scores`` (``[rows, vocab]``) in place to what each row's grammar allows
        after its tokens ``input_ids`` (``[rows, length]``), and returns them."""
        import torch

        rows, length = input_ids.shape
        if (
            self.prompt_len is None
            or self.seq_len is None
            or length != self.seq_len + 1
            or rows != len(self.matchers)
        ):
            self._start(input_ids)
        else:
            generated = input_ids[:, self.prompt_len :].tolist()
            self._advance(generated)
        self.seq_len = length
        vocab = scores.shape[-1]
        width = max(munch.bitmask_width(vocab), *(c.bitmask_width for c in self.compiled))
        if self.bitmask is None or tuple(self.bitmask.shape) != (rows, width):
            self.bitmask = torch.empty((rows, width), dtype=torch.int32)
        live = [r for r in range(rows) if not self.dead[r]]
        if len(live) == rows:
            munch.fill_next_token_bitmask_batch(self.matchers, self.bitmask, threads=self.threads)
        elif live:
            munch.fill_next_token_bitmask_batch(
                [self.matchers[r] for r in live], self.bitmask, live, threads=self.threads
            )
        for r in range(rows):
            if self.dead[r]:
                self.bitmask[r] = 0
                for t in self._stop_ids(r):
                    if t < width * 32:
                        self.bitmask[r, t // 32] |= _bit(t % 32)
        munch.apply_token_bitmask_inplace(scores, self.bitmask)
        return scores

    def _stop_ids(self, row: int) -> List[int]:
        return self.matchers[row].stop_token_ids


def _bit(i: int) -> int:
    """Bit ``i`` of an int32 word, as a Python int that fits int32."""
    return -(1 << 31) if i == 31 else 1 << i
