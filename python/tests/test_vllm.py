"""munch.vllm against vLLM's structured-output backend interface.

Every test runs against vLLM's own ``backend_types`` where ``vllm`` imports (skipped otherwise,
with the reason) and against the stand-in of ``standins.py``. The decode loop drives the
grammars as vLLM's ``StructuredOutputManager.grammar_bitmask`` and scheduler do (a row per
request and per speculative position, ``fill_bitmask``, ``accept_tokens`` of the scheduled
drafts then ``rollback``, ``validate_tokens`` with padding, ``accept_tokens`` of the sampled
tokens) and checks every row against a plain munch.Matcher. :func:`munch.vllm.install` is
tested on vLLM's own classes only.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import munch
import standins
from conftest import JSON_TEXTS, bits

torch = pytest.importorskip(
    "torch", reason="torch is not installed (MUNCH_TORCH=1 bash python/run-tests.sh installs it)"
)

JSON_LARK = munch.Grammar.builtin("json").text


@pytest.fixture(params=["vllm", "stand-in"])
def v(request, monkeypatch):
    """``base``: vLLM's backend_types module (or the stand-in); ``mod``: munch.vllm imported
    against it; ``real``: whether it is vLLM's."""
    yield from standins.framework(
        request,
        monkeypatch,
        "vLLM",
        "vllm.v1.structured_output.backend_types",
        standins.install_vllm,
        "munch.vllm",
    )


def make_backend(v, tokenizer):
    vocab = tokenizer.vocab_size
    return v.mod.MunchBackend(SimpleNamespace(), tokenizer=tokenizer, vocab_size=vocab)


def test_subclasses_of_vllms_bases_with_nothing_abstract(v, tokenizer):
    assert issubclass(v.mod.MunchBackend, v.base.StructuredOutputBackend)
    assert issubclass(v.mod.MunchGrammar, v.base.StructuredOutputGrammar)
    assert not v.mod.MunchBackend.__abstractmethods__
    assert not v.mod.MunchGrammar.__abstractmethods__
    backend = make_backend(v, tokenizer)
    grammar = backend.compile_grammar(v.base.StructuredOutputOptions.GRAMMAR, JSON_LARK)
    assert isinstance(grammar, v.base.StructuredOutputGrammar)


def test_decode_loop_as_vllms_manager_and_scheduler(v, tokenizer, compiled):
    O = v.base.StructuredOutputOptions
    backend = make_backend(v, tokenizer)
    eos = tokenizer.eos_token_ids
    texts = JSON_TEXTS
    grammars = [backend.compile_grammar(O.GRAMMAR, JSON_LARK, set(eos)) for _ in texts]
    refs = [munch.Matcher(compiled) for _ in texts]
    tokens = [tokenizer.encode(t) + eos[:1] for t in texts]
    spec = 2  # speculative tokens per request
    bitmask = backend.allocate_token_bitmask(len(texts) * (1 + spec))
    full = torch.tensor(-1, dtype=torch.int32)
    pos = [0] * len(texts)
    while not all(g.is_terminated() for g in grammars):
        index = 0
        for r, g in enumerate(grammars):
            # The scheduled drafts: the next tokens of the text. One row per draft, and one
            # for the bonus token after them.
            drafts = tokens[r][pos[r] : pos[r] + spec]
            advanced = 0
            for token in drafts + [-1]:
                if not g.is_terminated():
                    g.fill_bitmask(bitmask, index)
                    assert bits(bitmask[index].numpy()) == refs[r].allowed_token_ids()
                else:
                    bitmask[index].fill_(full)
                index += 1
                if token == -1 or g.is_terminated():
                    break
                assert g.accept_tokens(f"req{r}", [token])
                assert refs[r].accept_token(token)
                advanced += 1
            if advanced:
                g.rollback(advanced)
                refs[r].rollback(advanced)
        # The target model accepts the first draft and the bonus token.
        for r, g in enumerate(grammars):
            if g.is_terminated():
                continue
            sampled = tokens[r][pos[r] : pos[r] + 2]
            assert g.validate_tokens(sampled + [-1, 5]) == sampled
            assert g.accept_tokens(f"req{r}", sampled)
            assert refs[r].accept_tokens(sampled)
            pos[r] += len(sampled)
        assert [g.is_terminated() for g in grammars] == [m.is_terminated() for m in refs]
    for g in grammars:
        assert g.accept_tokens("done", [eos[0]])  # after termination: ignored
        assert g.validate_tokens([eos[0]]) == []


def test_refusals_and_grammar_errors(v, tokenizer):
    O = v.base.StructuredOutputOptions
    backend = make_backend(v, tokenizer)
    refused = {
        (O.JSON, '{"type": "string"}'): "no JSON Schema support",
        (O.REGEX, "[0-9]+"): "no regex support",
        (O.STRUCTURAL_TAG, "{}"): "structural tags",
        (O.GRAMMAR, 'root ::= "a"'): "not GBNF",
        (O.CHOICE, "[]"): "non-empty list",
    }
    for (kind, spec), message in refused.items():
        with pytest.raises(ValueError, match=message):
            backend.compile_grammar(kind, spec)
    with pytest.raises(munch.GrammarError, match="1:8"):
        backend.compile_grammar(O.GRAMMAR, "start: missing")


def accepts(grammar, text, tokenizer):
    m = grammar.matcher.fork()
    return m.accept_string(text) and m.is_accepting()


def test_json_object_json_and_choice(v, tokenizer):
    O = v.base.StructuredOutputOptions
    backend = make_backend(v, tokenizer)
    obj = backend.compile_grammar(O.JSON_OBJECT, "")
    assert accepts(obj, '{"a": [1]}', tokenizer) and not accepts(obj, "[1]", tokenizer)
    assert accepts(backend.compile_grammar(O.JSON, '{"type": "object"}'), "{}", tokenizer)
    assert accepts(backend.compile_grammar(O.JSON, "{}"), "[true]", tokenizer)
    choices = ["yes", "no", 'say "hi"', "back\\\\slash", "tab\there", "é 😀", ""]
    grammar = backend.compile_grammar(O.CHOICE, json.dumps(choices))
    for c in choices:
        assert accepts(grammar, c, tokenizer), c
    for wrong in ["ye", "yess", "back\\slash", 'say "hi', "é"]:
        assert not accepts(grammar, wrong, tokenizer), wrong
    root = backend.compile_grammar(O.GRAMMAR, 'root: "x"')
    assert accepts(root, "x", tokenizer)


def test_stop_token_ids_and_jump_string(v, tokenizer):
    O = v.base.StructuredOutputOptions
    backend = make_backend(v, tokenizer)
    (stop,) = tokenizer.encode("!")  # a request's own stop token
    grammar = backend.compile_grammar(O.GRAMMAR, 'start: "{\\"a\\": " ("1" | "2") "}"', {stop})
    assert grammar.matcher.stop_token_ids == [stop]
    assert grammar.find_jump_string() == '{"a": '
    ids = tokenizer.encode('{"a": 1}')
    assert grammar.validate_tokens(ids + [stop, 9]) == ids + [stop]
    assert grammar.accept_tokens("r", ids + [stop] + ids)  # what follows the stop is ignored
    assert grammar.is_terminated()
    grammar.rollback(1)
    assert not grammar.is_terminated() and grammar.find_jump_string() is None
    grammar.reset()
    assert grammar.matcher.num_accepted == 0
    assert not grammar.accept_tokens("r", tokenizer.encode("{}"))
    assert grammar.matcher.num_accepted == 0  # all or none


def test_compiled_grammars_are_shared_and_destroyed(v, tokenizer):
    O = v.base.StructuredOutputOptions
    backend = make_backend(v, tokenizer)
    a = backend.compile_grammar(O.GRAMMAR, JSON_LARK)
    b = backend.compile_grammar(O.GRAMMAR, JSON_LARK)
    assert a.matcher is not b.matcher
    assert len(backend._compiled) == 1
    backend.destroy()
    assert not backend._compiled
    bitmask = backend.allocate_token_bitmask(3)
    assert bitmask.dtype == torch.int32 and tuple(bitmask.shape) == (3, compiled_width(tokenizer))


def compiled_width(tokenizer):
    return (tokenizer.vocab_size + 31) // 32


def test_install_on_vllms_own_classes(v, tokenizer_path):
    if not v.real:
        pytest.skip("install() patches vLLM's own manager and validators: needs vLLM")
    transformers = pytest.importorskip("transformers")
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams
    from vllm.v1.structured_output import StructuredOutputManager

    v.mod.install()
    hf = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(tokenizer_path), eos_token="<|endoftext|>"
    )
    vocab = len(hf) + 40
    # The manager's state as its __init__ leaves it (without building a whole engine).
    manager = object.__new__(StructuredOutputManager)
    manager.backend = None
    manager.backend_name = None
    manager.tokenizer = hf
    manager.vllm_config = SimpleNamespace(
        model_config=SimpleNamespace(get_vocab_size=lambda: vocab)
    )
    manager._use_async_grammar_compilation = False
    O = v.base.StructuredOutputOptions
    so = StructuredOutputsParams(grammar=JSON_LARK)
    request = SimpleNamespace(
        request_id="r",
        structured_output_request=SimpleNamespace(
            structured_output_key=(O.GRAMMAR, JSON_LARK), grammar=None
        ),
        sampling_params=SimpleNamespace(
            structured_outputs=so, all_stop_token_ids={hf.eos_token_id}
        ),
    )
    manager.grammar_init(request)
    assert isinstance(manager.backend, v.mod.MunchBackend)
    grammar = request.structured_output_request.grammar
    if not isinstance(grammar, v.mod.MunchGrammar):  # a Future where compilation failed
        grammar = grammar.result()
    assert isinstance(grammar, v.mod.MunchGrammar)
    assert grammar.matcher.vocab_size == vocab
    assert grammar.accept_tokens("r", hf.encode("[1]", add_special_tokens=False))

    # The front end's validation now asks munch.
    params = SamplingParams(structured_outputs=StructuredOutputsParams(regex="[0-9]+"))
    with pytest.raises(ValueError, match="no regex support"):
        params._validate_structured_outputs(None, SimpleNamespace(backend="auto"), hf)
    params = SamplingParams(structured_outputs=StructuredOutputsParams(grammar=JSON_LARK))
    params._validate_structured_outputs(None, SimpleNamespace(backend="auto"), hf)
    assert params.structured_outputs._backend == "munch"


def test_the_entry_point_installs_only_when_asked(v, monkeypatch):
    import munch._plugins

    called = []
    monkeypatch.setattr(v.mod, "install", lambda: called.append(True))
    monkeypatch.setattr(munch, "vllm", v.mod, raising=False)
    monkeypatch.delenv("MUNCH_VLLM", raising=False)
    munch._plugins.vllm()
    assert not called
    monkeypatch.setenv("MUNCH_VLLM", "1")
    munch._plugins.vllm()
    assert called
