"""munch.sglang against SGLang's grammar-backend interface.

Every test runs twice: against SGLang's own ``base_grammar_backend`` where ``sglang`` imports
(skipped otherwise, with the reason), and against the stand-in of ``standins.py``. The decode
loop drives the grammar objects the way SGLang's scheduler does (``get_cached_or_future_value``,
the cache's copies, ``allocate_vocab_mask`` / ``fill_vocab_mask_batched`` /
``move_vocab_mask`` / ``apply_vocab_mask``, ``accept_token``) and checks every row against a
plain munch.Matcher walking the same text.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import munch
import standins
from conftest import JSON_TEXTS, bits

torch = pytest.importorskip(
    "torch", reason="torch is not installed (MUNCH_TORCH=1 bash python/run-tests.sh installs it)"
)

JSON_LARK = munch.Grammar.builtin("json").text


@pytest.fixture(params=["sglang", "stand-in"])
def sgl(request, monkeypatch):
    """``base``: SGLang's base_grammar_backend module (or the stand-in); ``mod``: munch.sglang
    imported against it."""
    yield from standins.framework(
        request,
        monkeypatch,
        "SGLang",
        "sglang.srt.constrained.base_grammar_backend",
        standins.install_sglang,
        "munch.sglang",
    )


def make_backend(sgl, tokenizer, eos=None):
    """The backend as SGLang makes it: the registry's factory with SGLang's arguments."""
    factory = sgl.base.GRAMMAR_BACKEND_REGISTRY["munch"]
    return factory(SimpleNamespace(), tokenizer, tokenizer.vocab_size, eos)


def get_grammar(backend, key):
    """A request's grammar object as SGLang's grammar manager gets it: from the cache, or from
    the compile future, caching a copy."""
    try:
        value, hit = backend.get_cached_or_future_value(key, False)
    except TypeError:  # SGLang versions before the reasoning argument
        value, hit = backend.get_cached_or_future_value(key)
    if not hit:
        value = value.result()
        backend.set_cache(key, value.copy())
    return value


def is_invalid(sgl, value):
    invalid = getattr(sgl.base, "InvalidGrammarObject", None)
    if invalid is not None:
        return isinstance(value, invalid)
    return value is None or value is getattr(sgl.base, "INVALID_GRAMMAR_OBJ", None)


def test_registered_and_a_subclass_of_sglangs_bases(sgl, tokenizer):
    assert "munch" in sgl.base.GRAMMAR_BACKEND_REGISTRY
    backend = make_backend(sgl, tokenizer)
    assert isinstance(backend, sgl.base.BaseGrammarBackend)
    grammar = get_grammar(backend, ("ebnf", JSON_LARK))
    assert isinstance(grammar, sgl.base.BaseGrammarObject)
    # Every method SGLang's base leaves to backends is munch's own.
    Base, Ours = sgl.base.BaseGrammarObject, sgl.mod.MunchGrammar
    for name in (
        "accept_token",
        "rollback",
        "is_terminated",
        "allocate_vocab_mask",
        "fill_vocab_mask",
        "fill_vocab_mask_batched",
        "reset_vocab_mask",
        "move_vocab_mask",
        "apply_vocab_mask",
        "copy",
        "try_jump_forward",
        "jump_forward_str_state",
        "jump_and_retokenize",
    ):
        if hasattr(Base, name):
            assert Ours.__dict__.get(name) is not None, name


def test_decode_loop_as_sglangs_scheduler(sgl, tokenizer, compiled):
    backend = make_backend(sgl, tokenizer)
    key = ("ebnf", JSON_LARK)
    texts = JSON_TEXTS
    grammars = [get_grammar(backend, key) for _ in texts] + [None]  # a row without a grammar
    refs = [munch.Matcher(compiled) for _ in texts]
    tokens = [tokenizer.encode(t) + tokenizer.eos_token_ids[:1] for t in texts]
    vocab = tokenizer.vocab_size
    rows = len(grammars)
    first = grammars[0]
    step = 0
    while any(g is not None and not g.is_terminated() for g in grammars):
        mask = first.allocate_vocab_mask(vocab_size=vocab, batch_size=rows, device="cpu")
        live = [
            r
            for r, g in enumerate(grammars)
            if g is not None and not g.finished and not g.is_terminated()
        ]
        if hasattr(sgl.base, "GrammarRow"):
            entries = [sgl.base.GrammarRow(row=r, grammar=grammars[r]) for r in live]
            first.fill_vocab_mask_batched(entries, mask)
        else:
            for r in live:
                grammars[r].fill_vocab_mask(mask, r)
        mask = first.move_vocab_mask(mask, "cpu")
        logits = torch.zeros((rows, vocab))
        first.apply_vocab_mask(logits=logits, vocab_mask=mask)
        for r in range(rows):
            allowed = set(torch.isfinite(logits[r]).nonzero().flatten().tolist())
            if r in live:
                assert allowed == set(refs[r].allowed_token_ids()), (r, step)
                assert bits(mask[r].numpy()) == refs[r].allowed_token_ids()
            else:
                assert allowed == set(range(vocab)), (r, step)  # unconstrained row
        for r in live:
            t = tokens[r][min(step, len(tokens[r]) - 1)]
            assert torch.isfinite(logits[r, t])
            grammars[r].accept_token(t)
            assert refs[r].accept_token(t)
            grammars[r].finished = grammars[r].is_terminated()
        step += 1
    assert all(g.is_terminated() for g in grammars[:-1])
    assert step == max(len(t) for t in tokens)


def test_a_refused_token_raises_value_error_and_changes_nothing(sgl, tokenizer):
    grammar = get_grammar(make_backend(sgl, tokenizer), ("ebnf", JSON_LARK))
    (brace,) = tokenizer.encode("}")
    with pytest.raises(ValueError, match="not allowed"):
        grammar.accept_token(brace)
    assert grammar.matcher.num_accepted == 0
    with pytest.raises(ValueError):
        grammar.accept_token(tokenizer.vocab_size)  # out of range


def test_rollback_copy_and_termination(sgl, tokenizer):
    backend = make_backend(sgl, tokenizer)
    grammar = get_grammar(backend, ("ebnf", JSON_LARK))
    ids = tokenizer.encode("[1, 2]")
    for t in ids:
        grammar.accept_token(t)
    other = grammar.copy()
    assert other is not grammar and other.matcher.num_accepted == len(ids)
    grammar.rollback(2)
    assert grammar.matcher.num_accepted == len(ids) - 2
    assert other.matcher.num_accepted == len(ids)  # copies are independent
    eos = tokenizer.eos_token_ids[0]
    other.accept_token(eos)
    assert other.is_terminated()
    other.accept_token(ids[0])  # after the stop token: ignored
    other.rollback(1)
    assert not other.is_terminated()
    # A cache hit is a copy standing at the start of the text.
    hit = get_grammar(backend, ("ebnf", JSON_LARK))
    assert hit.matcher.num_accepted == 0


def test_keys(sgl, tokenizer):
    backend = make_backend(sgl, tokenizer)
    dispatch = backend._init_value_dispatch

    def grammar(key):
        try:
            return dispatch(key, False)
        except TypeError:  # SGLang versions before the reasoning argument
            return dispatch(key)

    def accepts(g, text):
        m = g.matcher.fork()
        return m.accept_string(text) and m.is_accepting()

    any_json = grammar(("json", "$$ANY$$"))
    assert accepts(any_json, "[1, 2]") and accepts(any_json, '{"a": 1}')
    assert accepts(grammar(("json", "{}")), "true")
    obj = grammar(("json", '{"type": "object"}'))
    assert accepts(obj, '{"a": [1]}') and not accepts(obj, "[1]")
    lark = grammar(("lark", 'start: "a" "b"+'))
    assert accepts(lark, "abb") and not accepts(lark, "a")
    root = grammar(("ebnf", 'root: "x"'))  # no start rule: GBNF's root
    assert accepts(root, "x")

    refused = {
        ("json", '{"type": "string"}'): "no JSON Schema support",
        ("json", "{not json"): "not JSON",
        ("regex", "[0-9]+"): "no regex support",
        ("structural_tag", "{}"): "structural tags",
        ("ebnf", 'root ::= "a"'): "not GBNF",
        ("ebnf", "start: missing"): "rule `missing` is used but not defined",
    }
    for key, message in refused.items():
        value = grammar(key)
        assert is_invalid(sgl, value), key
        if hasattr(value, "error_message"):
            assert message in value.error_message, (key, value.error_message)
    bad = grammar(("ebnf", "start: missing"))
    if hasattr(bad, "error_message"):
        assert "1:8" in bad.error_message and "^" in bad.error_message  # line:column, caret


def test_jump_forward(sgl, tokenizer):
    backend = make_backend(sgl, tokenizer)
    lark = 'start: "true" | "{\\"name\\": " NAME "}"\nNAME: /[a-z]+/'
    grammar = get_grammar(backend, ("lark", lark))
    assert grammar.try_jump_forward(None) is None  # a choice
    (brace,) = tokenizer.encode("{")
    grammar.accept_token(brace)
    helper = grammar.try_jump_forward(None)
    assert helper is not None
    text, state = grammar.jump_forward_str_state(helper)
    assert text == '"name": '
    # SGLang appends the text to the output and retokenizes the whole output: the old ids
    # ([brace]) become the new ones, whose first token may differ (here: '{"').
    new_ids = tokenizer.encode("{" + text)
    assert new_ids[0] != brace
    grammar.jump_and_retokenize([brace], new_ids, state)
    assert grammar.matcher.num_accepted == len(new_ids)
    ref = munch.Matcher(grammar.matcher.compiled)
    assert ref.accept_string('{"name": ')
    assert grammar.matcher.allowed_token_ids() == ref.allowed_token_ids()


def test_transformers_tokenizer_and_the_models_eos(sgl, tokenizer_path):
    transformers = pytest.importorskip(
        "transformers",
        reason="transformers is not installed (MUNCH_TORCH=1 bash python/run-tests.sh)",
    )
    hf = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(tokenizer_path), eos_token="<|endoftext|>"
    )
    vocab = len(hf) + 40  # the model's logits, padded
    extra_eos = 7  # a model may end texts with a token its tokenizer does not call EOS
    backend = sgl.base.GRAMMAR_BACKEND_REGISTRY["munch"](SimpleNamespace(), hf, vocab, {extra_eos})
    grammar = get_grammar(backend, ("ebnf", JSON_LARK))
    assert grammar.matcher.vocab_size == vocab
    assert set(grammar.matcher.stop_token_ids) == {extra_eos, hf.eos_token_id}
    for t in hf.encode("[1]", add_special_tokens=False):
        grammar.accept_token(t)
    grammar.accept_token(extra_eos)
    assert grammar.is_terminated()


def test_register_under_another_name_with_compile_options(sgl, tokenizer):
    sgl.mod.register("munch-trie", masker="trie", fallback=None)
    backend = sgl.base.GRAMMAR_BACKEND_REGISTRY["munch-trie"](
        SimpleNamespace(), tokenizer, tokenizer.vocab_size, None
    )
    grammar = get_grammar(backend, ("ebnf", JSON_LARK))
    assert grammar.matcher.compiled.masker == "trie"


def test_batched_fill_equals_one_by_one(sgl, tokenizer):
    backend = make_backend(sgl, tokenizer)
    grammars = []
    for text in JSON_TEXTS:
        g = get_grammar(backend, ("ebnf", JSON_LARK))
        ids = tokenizer.encode(text)
        for t in ids[: len(ids) // 2]:
            g.accept_token(t)
        grammars.append(g)
    vocab = tokenizer.vocab_size
    rows = [3, 0, 2, 5]  # rows in any order, some rows left out
    batched = grammars[0].allocate_vocab_mask(vocab, 6, "cpu")
    entries = [SimpleNamespace(row=r, grammar=g) for r, g in zip(rows, grammars)]
    grammars[0].fill_vocab_mask_batched(entries, batched)
    single = grammars[0].allocate_vocab_mask(vocab, 6, "cpu")
    for r, g in zip(rows, grammars):
        g.fill_vocab_mask(single, r)
    assert torch.equal(batched, single)
    assert (batched[1] == -1).all() and (batched[4] == -1).all()
    grammars[0].reset_vocab_mask(batched)
    assert (batched == -1).all()



def test_the_entry_point_registers(sgl):
    import munch._plugins

    sgl.base.GRAMMAR_BACKEND_REGISTRY.pop("munch")
    munch._plugins.sglang()
    assert "munch" in sgl.base.GRAMMAR_BACKEND_REGISTRY
