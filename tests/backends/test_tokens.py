"""Offline token counts: known token ids from OpenAI's own examples, model → encoding mapping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import count_tokens, encoding_name_for, token_counter

# Token ids published in OpenAI's tiktoken cookbook ("How to count tokens with tiktoken").
KNOWN_IDS = {
    ("cl100k_base", "tiktoken is great!"): [83, 1609, 5963, 374, 2294, 0],
    ("o200k_base", "tiktoken is great!"): [83, 8251, 2488, 382, 2212, 0],
    ("cl100k_base", "antidisestablishmentarianism"): [519, 85342, 34500, 479, 8997, 2191],
    ("cl100k_base", "hello world"): [15339, 1917],
    ("o200k_base", "hello world"): [24912, 2375],
}


@pytest.mark.parametrize(("encoding", "text"), sorted(KNOWN_IDS))
def test_known_token_ids(encoding, text):
    counter = token_counter(encoding)
    assert list(counter.encode(text)) == KNOWN_IDS[encoding, text]
    assert counter(text) == len(KNOWN_IDS[encoding, text])
    assert counter.decode(KNOWN_IDS[encoding, text]) == text


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4", "gpt-3.5-turbo", "gpt-4o"])
def test_hello_world_is_two_tokens(model):
    assert count_tokens("hello world", model) == 2


def test_default_model_counts_with_o200k():
    assert count_tokens("tiktoken is great!") == 6
    assert count_tokens("") == 0


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("openai/gpt-4o-mini", "o200k_base"),  # provider prefixes are stripped
        ("cl100k_base", "cl100k_base"),  # an encoding name is accepted as is
    ],
)
def test_model_to_encoding(model, encoding):
    assert encoding_name_for(model) == encoding
    counter = token_counter(model)
    assert (counter.encoding, counter.exact) == (encoding, True)


def test_gpt4o_and_gpt4_really_differ():
    # same count (2), different vocabularies: the mapping must pick the right table
    assert list(token_counter("gpt-4o").encode("hello world")) != list(token_counter("gpt-4").encode("hello world"))


def test_unknown_models_are_estimates_and_say_so():
    assert encoding_name_for("SmolLM2-135M-Instruct") is None
    counter = token_counter("SmolLM2-135M-Instruct")
    assert counter.exact is False
    assert counter("hello world") == 2  # o200k estimate


def test_special_token_text_is_counted_as_plain_text():
    # a conversation may quote "<|endoftext|>"; it must count, not raise
    assert count_tokens("<|endoftext|>", "gpt-4") == 7
    assert count_tokens("<|endoftext|>", "gpt-4o") == 7


def test_a_server_tokenizer_counter_counts_with_it():
    counter = token_counter("local-model", tokenize=lambda text: list(text.encode()))
    assert (counter.encoding, counter.exact) == ("server", True)
    assert counter("héllo") == len("héllo".encode())
    with pytest.raises(NotImplementedError):
        counter.decode([1, 2])


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), encoding=st.sampled_from(["cl100k_base", "o200k_base"]))
def test_encode_decode_round_trip(text, encoding):
    counter = token_counter(encoding)
    ids = counter.encode(text)
    assert counter.decode(ids) == text
    # counts never exceed the UTF-8 length (each token covers at least one byte)
    assert len(ids) <= len(text.encode("utf-8"))


def test_threads_asking_for_an_encoding_at_once_build_it_once(monkeypatch):
    """Cells starting side by side share one BPE table instead of each building its own."""
    import threading

    import bpe_openai

    from lyra_lab.backends import _tokens

    built = []
    real = bpe_openai.get_encoding

    def counted(name):
        built.append(name)
        return real(name)

    monkeypatch.setattr(bpe_openai, "get_encoding", counted)
    monkeypatch.setattr(_tokens, "_ENCODINGS", {})
    start = threading.Barrier(6)
    got = []

    def ask():
        start.wait()
        got.append(_tokens._encoding("cl100k_base"))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == ["cl100k_base"] and len({id(e) for e in got}) == 1
