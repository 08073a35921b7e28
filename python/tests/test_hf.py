"""transformers `generate` with munch.hf.LogitsProcessor: a tiny randomly initialised Llama
(built from a config: no weights are downloaded) and the real Llama 3 tokenizer.

For greedy search, sampling and beam search: every finished output parses as JSON and is
accepted by a fresh matcher, every unfinished one is a prefix of a sentence, and at every step
the processed logits are -inf exactly off the mask a fresh matcher computes for that row.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import munch
from conftest import llama3_tokenizer_path

torch = pytest.importorskip(
    "torch", reason="torch is not installed (MUNCH_TORCH=1 bash python/run-tests.sh installs it)"
)
transformers = pytest.importorskip(
    "transformers",
    reason="transformers is not installed (MUNCH_TORCH=1 bash python/run-tests.sh installs it)",
)
import munch.hf  # noqa: E402

LLAMA3 = llama3_tokenizer_path()
pytestmark = [
    pytest.mark.hf,
    pytest.mark.skipif(
        not LLAMA3.is_file(),
        reason=f"no Llama 3 tokenizer at {LLAMA3} (cargo test --workspace --release fetches it)",
    ),
]

# The model's logits are padded past the tokenizer's 128256 ids, as real models' often are.
VOCAB = 128256 + 64


@pytest.fixture(scope="module")
def tok():
    return munch.Tokenizer.from_file(LLAMA3, vocab_size=VOCAB)


@pytest.fixture(scope="module")
def compiled(tok):
    return munch.compile(munch.Grammar.builtin("json"), tok)


@pytest.fixture(scope="module")
def model(tok):
    torch.manual_seed(0)
    eos = tok.eos_token_ids
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=128000,
        eos_token_id=eos,
        pad_token_id=eos[0],
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config.pad_token_id = eos[0]
    model.generation_config.eos_token_id = eos
    return model


class Recorder:
    """Keeps each step's input_ids and the logits as munch's processor left them."""

    def __init__(self):
        self.steps = []

    def __call__(self, input_ids, scores):
        self.steps.append((input_ids.clone(), scores.clone()))
        return scores


class PreferStop:
    """Makes a stop token the model's choice wherever the grammar allows one, so that texts
    end: a random model rarely picks one of 128k tokens by itself."""

    def __init__(self, stop):
        self.stop = stop

    def __call__(self, input_ids, scores):
        scores[:, self.stop] += 1000.0
        return scores


def prompts(tok, batch):
    ids = [[128000] + tok.encode(f"JSON {i}:") for i in range(batch)]
    assert len({len(x) for x in ids}) == 1, "prompts of one length: no padding needed"
    return torch.tensor(ids)


def replay(compiled, tokens):
    """A fresh matcher after `tokens`, as the processor follows a row: it stops at the stop
    token, and a refused token leaves only the stop tokens allowed."""
    m = munch.Matcher(compiled)
    for t in tokens:
        if m.is_terminated():
            break
        if not m.accept_token(t):
            return m, False
    return m, True


def expected_off(compiled, tokens, tok):
    m, alive = replay(compiled, tokens)
    allowed = np.zeros(VOCAB, dtype=bool)
    if alive:
        row = munch.allocate_token_bitmask(1, VOCAB)[0]
        m.fill_next_token_bitmask(row)
        allowed = np.unpackbits(row.view(np.uint8), bitorder="little")[:VOCAB].astype(bool)
    else:
        allowed[m.stop_token_ids] = True
    return ~allowed


def check_steps(recorder, compiled, tok, prompt_len):
    assert recorder.steps, "the processor was called"
    for step, (input_ids, scores) in enumerate(recorder.steps):
        for r in range(input_ids.shape[0]):
            off = expected_off(compiled, input_ids[r, prompt_len:].tolist(), tok)
            got = torch.isneginf(scores[r]).numpy()
            assert (got == off).all(), (step, r, np.flatnonzero(got != off)[:10])


def check_outputs(sequences, compiled, tok, prompt_len):
    """Every finished output parses; every unfinished one is a prefix. Returns the finished."""
    eos = set(tok.eos_token_ids)
    finished = 0
    for row in sequences.tolist():
        generated = row[prompt_len:]
        end = next((i for i, t in enumerate(generated) if t in eos), None)
        m = munch.Matcher(compiled)
        if end is None:
            assert m.accept_tokens(generated), generated
            continue
        assert m.accept_tokens(generated[: end + 1]) and m.is_terminated(), generated
        text = tok.decode_bytes(generated[:end]).decode("utf-8")
        json.loads(text)
        finished += 1
    return finished


def run(model, compiled, tok, batch, prefer_stop, **kwargs):
    input_ids = prompts(tok, batch)
    processor = munch.hf.LogitsProcessor(compiled, batch_size=batch)
    recorder = Recorder()
    chain = [processor, recorder]
    if prefer_stop:
        chain.insert(0, PreferStop(tok.eos_token_ids))
    out = model.generate(
        input_ids,
        attention_mask=torch.ones_like(input_ids),
        logits_processor=transformers.LogitsProcessorList(chain),
        max_new_tokens=kwargs.pop("max_new_tokens", 24),
        return_dict_in_generate=True,
        **kwargs,
    )
    prompt_len = input_ids.shape[1]
    check_steps(recorder, compiled, tok, prompt_len)
    return check_outputs(out.sequences, compiled, tok, prompt_len)


@pytest.mark.parametrize("prefer_stop", [False, True])
def test_greedy(model, compiled, tok, prefer_stop):
    finished = run(model, compiled, tok, 3, prefer_stop, do_sample=False)
    if prefer_stop:
        assert finished > 0


@pytest.mark.parametrize("prefer_stop", [False, True])
def test_sampling(model, compiled, tok, prefer_stop):
    torch.manual_seed(1)
    finished = run(
        model, compiled, tok, 2, prefer_stop, do_sample=True, num_return_sequences=3, top_k=0
    )
    if prefer_stop:
        assert finished > 0


@pytest.mark.parametrize("prefer_stop", [False, True])
def test_beam_search(model, compiled, tok, prefer_stop):
    finished = run(
        model,
        compiled,
        tok,
        2,
        prefer_stop,
        do_sample=False,
        num_beams=3,
        num_return_sequences=3,
        early_stopping=True,
    )
    if prefer_stop:
        assert finished > 0


def test_a_processor_follows_a_second_generate_call(model, compiled, tok):
    input_ids = prompts(tok, 2)
    processor = munch.hf.LogitsProcessor(compiled, batch_size=2)
    for max_new_tokens in (5, 9):
        out = model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            logits_processor=transformers.LogitsProcessorList([processor]),
            max_new_tokens=max_new_tokens,
            do_sample=False,
        )
        check_outputs(out, compiled, tok, input_ids.shape[1])


def test_from_huggingface_matches_the_file(tok):
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(LLAMA3), eos_token="<|eot_id|>")
    from_hf = munch.Tokenizer.from_huggingface(hf, vocab_size=VOCAB)
    assert from_hf.vocab_size == VOCAB and len(from_hf) == len(tok)
    assert from_hf.eos_token_ids == tok.eos_token_ids == [128001, 128009]
    for t in list(range(0, 128256, 997)) + [128000, 128001, 128255, VOCAB - 1]:
        assert from_hf.token_bytes(t) == tok.token_bytes(t), t
    text = '{"key": [1, 2.5, "välue"]}'
    assert from_hf.encode(text) == tok.encode(text)
    assert tok.decode_bytes(tok.encode(text)) == text.encode()


def test_processor_arguments(compiled):
    with pytest.raises(ValueError, match="batch_size"):
        munch.hf.LogitsProcessor(compiled, batch_size=0)
    with pytest.raises(ValueError, match="1 compiled grammars for a batch of 2"):
        munch.hf.LogitsProcessor([compiled], batch_size=2)
    p = munch.hf.LogitsProcessor(compiled, batch_size=2)
    with pytest.raises(ValueError, match="not a multiple of batch_size 2"):
        p(torch.zeros((3, 4), dtype=torch.long), torch.zeros((3, VOCAB)))
