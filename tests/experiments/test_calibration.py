"""Calibration of this machine's model speeds: measured once, kept per machine with its date, measured again when stale."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from lyra_lab.experiments.forecast._calibrate import Rates, calibration, machine_key, measure_embedder


def test_rates_are_kept_per_machine_and_measured_again_when_stale_or_forced(tmp_path):
    path = tmp_path / "calibration.json"
    measured = []

    def measure() -> Rates:
        measured.append(1)
        return Rates("k", 0.01, 0.001, measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))

    first = calibration("k", measure, path=path)
    assert calibration("k", measure, path=path) == first and len(measured) == 1  # kept
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert kept[machine_key()]["k"]["per_in"] == 0.001
    calibration("k", measure, force=True, path=path)
    assert len(measured) == 2
    old = (datetime.now(timezone.utc) - timedelta(days=40)).isoformat(timespec="seconds")
    kept[machine_key()]["k"]["measured_at"] = old
    path.write_text(json.dumps(kept), encoding="utf-8")
    calibration("k", measure, path=path)
    assert len(measured) == 3  # older than STALE_DAYS: measured again


def test_an_embedder_calibration_fits_seconds_per_text_and_per_token():
    import time

    def embed(texts: list[str]) -> None:  # 1 ms a text plus 0.1 ms a word
        time.sleep(sum(0.001 + 0.0001 * len(t.split()) for t in texts))

    rates = measure_embedder("fake", embed, lambda text: len(text.split()))
    assert 0.00007 < rates.per_in < 0.00015 and rates.seconds(10, 1000) > 0.1
    assert rates.measured_at != "assumed" and 0 <= rates.spread <= 1


def test_a_forecast_scales_rates_by_how_much_busier_the_machine_is_now(monkeypatch):
    from lyra_lab.experiments.forecast import _calibrate

    monkeypatch.setattr(_calibrate, "usable_cores", lambda: 2)
    rates = Rates("k", 0.0, 0.01, measured_at="2026-01-01T00:00:00+00:00", load=2.0)  # one task per core then
    monkeypatch.setattr(_calibrate, "load_now", lambda: 6.0)
    assert _calibrate.busier_now(rates) == 3.0  # three runnable tasks per core now
    monkeypatch.setattr(_calibrate, "load_now", lambda: 0.5)
    assert _calibrate.busier_now(rates) == 1.0  # an idle machine is no faster than one task per core
    assert _calibrate.busier_now(Rates("remote", 0.6, 0.0)) == 1.0  # assumed rates are not scaled


def test_the_load_of_a_run_just_interrupted_does_not_slow_its_re_plan(monkeypatch):
    """The 1-minute load average still counts an interrupted run; the re-plan of less work must not take longer.

    Here the average says 8 (the run's threads, gone a few seconds ago), while nothing else runs now.
    """
    import os

    from lyra_lab.experiments.forecast import _calibrate

    monkeypatch.setattr(_calibrate, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 6.0, 3.0))
    monkeypatch.setattr(_calibrate, "_runnable", lambda: 1)  # only the reader itself is runnable
    rates = Rates("k", 0.0, 0.01, measured_at="2026-01-01T00:00:00+00:00", load=1.0)
    assert _calibrate.load_now() == 1.0
    assert _calibrate.busier_now(rates) == 1.0
    monkeypatch.setattr(_calibrate, "_runnable", lambda: 7)  # six other tasks runnable now: three per core with ours
    assert _calibrate.busier_now(rates) == 3.5


def test_an_embedder_is_calibrated_on_the_runs_own_texts_of_the_sizes_measured_prose_filling_in():
    from lyra_lab.experiments.forecast._calibrate import PER_SIZE, calibration_texts

    run = {f"short {i}": 20 + i for i in range(5)} | {f"long {i}": 200 + i for i in range(40)}
    run |= {"tiny": 3, "huge": 5000}
    chosen = calibration_texts(run)
    short, long = [t for rep in chosen.short for t in rep], [t for rep in chosen.long for t in rep]
    assert all(len(rep) == PER_SIZE for rep in (*chosen.short, *chosen.long))
    assert set(short) > {f"short {i}" for i in range(5)} and len(set(short)) == 2 * PER_SIZE  # 11 of prose
    assert set(long) == {f"long {i}" for i in range(40 - 2 * PER_SIZE, 40)}  # nearest 256 tokens
    assert chosen.load == "tiny" and "huge" not in chosen.all()  # past the window: not what is counted
    assert calibration_texts({}).load not in run and len(set(calibration_texts({}).all())) == 1 + 4 * PER_SIZE


def test_the_plans_calibration_vectors_are_in_the_shared_cache_and_a_second_embed_hits_them(tmp_path,
                                                                                            monkeypatch):
    """The forecast calibrates through the run's embedding cache: embedding those texts again embeds nothing."""
    from lyra_lab.backends import CachedEmbedder, EmbeddingCache, HashingEmbedder, token_counter
    from lyra_lab.experiments.forecast._calibrate import calibration_texts
    from lyra_lab.experiments.forecast._forecast import _measured
    from lyra_lab.experiments.grid import embedding_cache_path

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    count = token_counter("o200k_base")
    passages = {text: count(text) for text in (" ".join(["word"] * n) + f" {n}" for n in range(10, 300, 7))}
    embedder = HashingEmbedder()
    rates = _measured("k", embedder, count, passages, "run")
    assert rates.per_in >= 0 and rates.measured_at != "assumed"
    chosen = calibration_texts(passages).all()
    with EmbeddingCache(embedding_cache_path()) as store:
        again = CachedEmbedder(embedder, store)
        again.embed(chosen)
        assert (again.hits, again.misses) == (len(chosen), 0)
        again.embed(["a text the calibration never saw"])
        assert again.misses == 1  # the count can fail
    off = tmp_path / "off"
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(off))
    _measured("k", embedder, count, passages, "off")
    assert not embedding_cache_path().exists()  # cache = "off": nothing written
