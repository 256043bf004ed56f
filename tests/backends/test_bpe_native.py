"""Counts through bpe-openai's Rust extension equal its Python API's, and need no ``import bpe_openai``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import token_counter
from lyra_lab.backends._bpe_native import native_counter, native_encoder, native_encodings, token_byte_lengths
from lyra_lab.backends._tokens import _encoding
from tests.helpers.locomo import locomo_path, needs_locomo

ENCODINGS = ("cl100k_base", "o200k_base")
MESSY = [
    "", " ", "\n\n", "<|endoftext|> and <|fim_prefix|> as plain text",
    "private use \ue000\uf8ff markup", "a lone \ud800 surrogate", "emoji 👩‍👩‍👧 and 漢字 and Ünïcödé",
    "[2023-05-08] user: ok\n[2023-05-09] assistant: fine", "x" * 5000, "   leading spaces", "tabs\tand\r\nCRLF",
]


def python_encode(encoding: str, text: str) -> list[int]:
    return _encoding(encoding).encode(text, disallowed_special=())


def python_count(encoding: str, text: str) -> int:
    return len(python_encode(encoding, text))


def test_the_extension_loads_with_the_encodings_lyra_lab_counts():
    assert set(ENCODINGS) <= set(native_encodings())


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_messy_texts_count_and_encode_as_the_python_api_does(encoding):
    count, encode = native_counter(encoding), native_encoder(encoding)
    assert count is not None and encode is not None
    assert [count(t) for t in MESSY] == [python_count(encoding, t) for t in MESSY]
    assert [list(encode(t)) for t in MESSY] == [python_encode(encoding, t) for t in MESSY]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_length_table_holds_every_tokens_length_in_bytes(encoding):
    lengths = token_byte_lengths(encoding)
    python = _encoding(encoding)
    assert lengths is not None
    assert lengths.tolist() == [len(python.decode_single_token_bytes(i)) for i in range(len(lengths))]
    assert len(lengths) >= 100_000


@needs_locomo
def test_every_locomo_turn_counts_as_the_python_api_counts():
    count = native_counter("o200k_base")
    assert count is not None
    texts = [turn.get("text", "") for conv in json.loads(locomo_path().read_text())
             for session in conv["conversation"].values() if isinstance(session, list) for turn in session]
    assert len(texts) > 5000
    assert [count(t) for t in texts] == [python_count("o200k_base", t) for t in texts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=30) | st.sampled_from(["\ud800", "\udfff", "<|endoftext|>", "\n[", " ", "\ue000"]),
                max_size=12).map("".join))
def test_any_text_counts_as_the_python_api_counts(text):
    for encoding in ENCODINGS:
        assert native_counter(encoding)(text) == python_count(encoding, text)  # type: ignore[misc]
        assert list(native_encoder(encoding)(text)) == python_encode(encoding, text)  # type: ignore[misc]


def test_an_unknown_encoding_has_no_native_counter_and_counts_through_python():
    assert native_counter("p50k_base") is None
    assert native_encoder("no_such_encoding") is None
    assert token_byte_lengths("no_such_encoding") is None


def test_token_lengths_fall_back_to_the_python_api_without_a_table(monkeypatch):
    from lyra_lab.backends import _tokens

    counter = token_counter("gpt-4o")
    tokens = counter.encode("naïve 漢字 emoji 👩‍👩‍👧")
    expected = [len(b) for b in counter.token_bytes(tokens)]
    assert counter.token_lengths(tokens) == expected
    monkeypatch.setattr(_tokens, "token_byte_lengths", lambda encoding: None)
    assert counter.token_lengths(tokens) == expected


def test_counting_encoding_and_cutting_lines_do_not_import_the_python_package():
    code = ("import sys; from lyra_lab.backends import token_counter; from lyra_lab.memory._cuts import Cuts; "
            "c = token_counter('gpt-4o-mini'); n = c('hello world'); c.encode('hello world'); "
            "Cuts(c, '[x] ', 'a longer text to cut into words').line(10); "
            "print(n, 'bpe_openai' in sys.modules, 'bpe_openai._bindings' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", "False", "True"]


def test_the_python_package_imported_afterwards_reuses_the_loaded_extension():
    code = ("from lyra_lab.backends import count_tokens; count_tokens('hi', 'gpt-4o'); "
            "import bpe_openai; print(len(bpe_openai.get_encoding('o200k_base').encode('hello world')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2"]


def test_a_counter_counts_long_texts_in_pieces_the_same_way():
    text = "word " * 30_000  # beyond PIECE_CHARS: counted piece by piece
    assert token_counter("gpt-4o")(text) == python_count("o200k_base", text)
