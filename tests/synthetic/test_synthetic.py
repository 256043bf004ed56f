"""The synthetic corpus: determinism, the committed file, and the invariants every probe relies on."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import _native
from lyra_lab.corpus._model import Corpus
from lyra_lab.synthetic import CATEGORIES, category_counts, generate_synthetic
from lyra_lab.synthetic._cli import main
from lyra_lab.synthetic._templates import CLOSERS_USER, OPENERS_USER, SLOTS, TOPICS

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "datasets" / "synthetic_small.jsonl"
README = REPO / "datasets" / "README.md"
TURN_ID = re.compile(r"^syn-\d+:s\d{2}:t\d{2}$")
# the ranges datasets/README.md promises for the committed file
RANGES = {"conversations": (1, 2), "sessions": (25, 40), "turns": (300, 500), "probes": (40, 80)}


def check_invariants(corpus: Corpus) -> None:
    """Everything a probe's scoring relies on; raises AssertionError naming the probe or turn."""
    turns = {t.id: t for t in corpus.turns()}
    assert len(turns) == sum(1 for _ in corpus.turns()), "turn ids are not unique"
    for conv in corpus.conversations:
        last = None
        for session in conv.sessions:
            assert session.id.startswith(f"{conv.id}:s")
            stamps = [t.timestamp for t in session.turns]
            assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), f"{session.id}: not increasing"
            assert all(s.utcoffset() == timedelta(0) for s in stamps), f"{session.id}: not UTC"
            assert session.started_at == stamps[0]
            assert [t.role for t in session.turns] == ["user", "assistant"] * (len(session.turns) // 2)
            assert all(TURN_ID.match(t.id) and t.id.startswith(session.id + ":t") for t in session.turns)
            assert all(t.speaker for t in session.turns)
            if last is not None:
                assert session.started_at.date() > last.date(), f"{session.id}: shares a day or goes back"
            last = stamps[-1]
        probes = corpus.probes_for(conv.id)
        assert probes and all(p.asked_at > last for p in probes), f"{conv.id}: a probe is asked too early"
        text = "\n".join(t.text for t in conv.turns()).lower()
        for p in probes:
            assert p.category in CATEGORIES, p.id
            assert all(turns[e].conversation_id == conv.id and turns[e].role == "user" for e in p.evidence), p.id
            if p.category == "abstention":
                assert p.abstention and p.answer == "not mentioned" and p.evidence == (), p.id
                assert p.meta["absent_terms"], p.id
                for term in p.meta["absent_terms"]:
                    assert term.lower() not in text, f"{p.id}: {term!r} is mentioned"
                continue
            assert not p.abstention and p.evidence, p.id
            said = turns[p.evidence[-1]]
            if p.category == "temporal":
                day = said.timestamp.date() - timedelta(days=p.meta["days_before"])
                assert p.answer == day.isoformat(), p.id
                assert p.meta["relative"] in said.text, p.id
                assert p.meta["natural"] == f"{day.day} {day.strftime('%B')} {day.year}", p.id
            else:
                assert p.answer in said.text, f"{p.id}: {p.answer!r} not in {said.text!r}"
            if p.category == "updated_fact":
                (old_id,) = p.meta["superseded"]
                old = turns[old_id]
                assert said.timestamp - old.timestamp >= timedelta(days=14), p.id
                assert p.meta["old_value"] != p.answer and p.meta["old_value"] in old.text, p.id
                assert p.answer not in old.text, p.id
            if p.category == "multi_hop":
                intro, link = (turns[e] for e in p.evidence)
                assert intro.session_id < link.session_id, p.id
                assert p.meta["person"] in intro.text and p.meta["relation"] in intro.text, p.id
                assert p.meta["person"] in link.text and p.meta["relation"] not in link.text, p.id
                assert p.answer not in intro.text, p.id


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return generate_synthetic(0)


def test_committed_file_is_regenerated_byte_for_byte(tmp_path, capsys):
    if not COMMITTED.exists():
        pytest.fail(f"{COMMITTED} is missing: python -m lyra_lab.synthetic --seed 0 --out {COMMITTED}")
    out = tmp_path / "again.jsonl"
    assert main(["--seed", "0", "--out", str(out)]) == 0
    assert "56 probes" in capsys.readouterr().out
    assert out.read_bytes() == COMMITTED.read_bytes()


def test_committed_file_loads_with_native_parse_and_equals_the_generator(corpus):
    with open(COMMITTED, encoding="utf-8") as fh:
        loaded = _native.parse(COMMITTED, fh)
    assert loaded == corpus
    check_invariants(loaded)


def test_same_seed_same_corpus_and_different_seeds_differ(corpus, tmp_path):
    assert generate_synthetic(0) == corpus
    a, b = generate_synthetic(1).save(tmp_path / "a.jsonl"), generate_synthetic(2).save(tmp_path / "b.jsonl")
    assert a.read_bytes() != b.read_bytes()
    assert [p.answer for p in generate_synthetic(1).probes] != [p.answer for p in generate_synthetic(2).probes]


def test_a_conversation_does_not_depend_on_how_many_follow_it(corpus):
    one = generate_synthetic(0, conversations=1)
    assert one.conversations[0] == corpus.conversations[0]
    assert one.probes == corpus.probes_for("syn-0")


def test_counts_are_in_the_readme_ranges_and_match_its_table(corpus):
    stats = corpus.stats()
    for key, (low, high) in RANGES.items():
        assert low <= stats[key] <= high, (key, stats[key])
    counts = category_counts(corpus)
    assert all(counts[c] > 0 for c in CATEGORIES), counts
    table = dict(re.findall(r"^\| `?([a-z_]+)`? \| (\d+) \|", README.read_text(encoding="utf-8"), re.MULTILINE))
    expected = {k: stats[k] for k in ("conversations", "sessions", "turns", "probes")} | counts
    assert {k: int(v) for k, v in table.items()} == expected


def test_the_committed_corpus_keeps_its_invariants(corpus):
    check_invariants(corpus)


def test_the_invariant_check_catches_a_broken_probe(corpus):
    """The checker is not vacuous: a probe whose answer is not in its evidence fails it."""
    probe = next(p for p in corpus.probes if p.category == "single_fact")
    broken = corpus.with_probes([p if p is not probe else type(p)(**{
        **{f: getattr(p, f) for f in p.__dataclass_fields__}, "answer": "zeppelin"}) for p in corpus.probes])
    with pytest.raises(AssertionError, match="zeppelin"):
        check_invariants(broken)


def test_filler_is_varied(corpus):
    greetings = set(OPENERS_USER) | set(CLOSERS_USER)
    for conv in corpus.conversations:
        lines = [t.text for t in conv.turns() if t.role == "user" and t.text not in greetings]
        assert len(lines) > 60 and len(set(lines)) == len(lines), conv.id
    pool = sum(len({u.format(**{s: v for s in topic.slots}) for v in SLOTS[topic.slots[0]]})
               for topic in TOPICS for u, _ in topic.exchanges)
    assert pool >= 300  # distinct lines even varying only each topic's first slot


def test_updated_fact_answer_is_the_newer_value(corpus):
    turns = {t.id: t for t in corpus.turns()}
    updated = [p for p in corpus.probes if p.category == "updated_fact"]
    assert len(updated) == 8
    for p in updated:
        assert turns[p.evidence[0]].timestamp > turns[p.meta["superseded"][0]].timestamp


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), conversations=st.integers(1, 2), sessions=st.integers(12, 24),
       months=st.integers(3, 6), exchanges=st.tuples(st.integers(0, 3), st.integers(0, 4)))
def test_invariants_hold_for_any_seed(seed, conversations, sessions, months, exchanges):
    low, extra = exchanges
    corpus = generate_synthetic(seed, conversations=conversations, sessions=sessions, months=months,
                                exchanges=(low, low + extra))
    check_invariants(corpus)
    assert len(corpus.probes) == 28 * conversations


@pytest.mark.parametrize("kwargs, message", [
    ({"sessions": 1}, "sessions"),
    ({"months": 0}, "months"),
    ({"conversations": 0}, "conversations"),
    ({"exchanges": (3, 1)}, "exchanges"),
    ({"single_facts": 99}, "single_facts"),
    ({"sessions": 4}, "not enough sessions"),
    ({"sessions": 200, "months": 1}, "distinct days"),
    ({"start": "8 Jan 2024"}, "start"),
])
def test_bad_parameters_raise_config_error(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        generate_synthetic(0, **kwargs)


def test_main_reports_bad_parameters_in_one_line(tmp_path, capsys):
    assert main(["--seed", "0", "--sessions", "1", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1
    assert not (tmp_path / "x.jsonl").exists()


def test_main_reports_an_unwritable_path_in_one_line(tmp_path, capsys):
    out = tmp_path / "missing-dir" / "x.jsonl"
    assert main(["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "missing-dir" in err and err.count("\n") == 1


def test_public_export():
    import lyra_lab.synthetic

    assert lyra_lab.synthetic.generate_synthetic is generate_synthetic
    assert "generate_synthetic" in lyra_lab.synthetic.__all__


def test_start_may_be_an_iso_string():
    corpus = generate_synthetic(3, conversations=1, start="2023-06-01")
    assert corpus == generate_synthetic(3, conversations=1, start=date(2023, 6, 1))
    first = next(corpus.turns()).timestamp.date()
    assert date(2023, 6, 1) <= first < date(2023, 6, 1) + timedelta(days=122)


def test_bytes_do_not_depend_on_the_hash_seed(tmp_path):
    """A set or dict ordered by hash() would change the bytes between processes."""
    import os
    import subprocess
    import sys

    outs = []
    for hash_seed in ("1", "4242"):
        out = tmp_path / f"h{hash_seed}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "lyra_lab.synthetic", "--seed", "5", "--out", str(out)],
                       check=True, env=env, capture_output=True, cwd=REPO)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] == generate_synthetic(5).save(tmp_path / "in-process.jsonl").read_bytes()
