"""Result folders: save/load round trip, plots, and no key anywhere in the saved files."""

from __future__ import annotations

import pandas as pd
import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.bench import (BenchResult, SweepSpec, bench_backend, combine, load_result, plot_sweep,
                            run_sweep, synthetic_prompts)

KEY = "sk-bench-test-0123456789abcdef"


@pytest.fixture(scope="module")
def keyed_result():
    """A small sweep against a server that demands a key, sent from an env var."""
    mp = pytest.MonkeyPatch()
    mp.setenv("LYRA_BENCH_TEST_API_KEY", KEY)
    try:
        with SimulatedServer(api_key=KEY, latency_s=0.01) as server:
            backend = bench_backend({"preset": "simulated", "base_url": server.base_url,
                                     "api_key_env": "LYRA_BENCH_TEST_API_KEY"}, 2)
            result = run_sweep(backend, synthetic_prompts(4, prompt_tokens=40),
                               SweepSpec(concurrency=(1, 2), rates=(20.0,), requests=4, max_tokens=6,
                                         max_in_flight=2), progress=False)
            assert all(r.has_auth and r.status == 200 for r in server.chat_log())  # the key was really sent
        yield result, mp
    finally:
        mp.undo()


def test_save_and_load_round_trip(keyed_result, tmp_path):
    result, _ = keyed_result
    paths = result.save(tmp_path / "run")
    assert {p.name for p in paths} == {"records.parquet", "summary.csv", "spec.json", "sweep.png"}
    again = load_result(tmp_path / "run")
    pd.testing.assert_frame_equal(again.records, result.records)
    pd.testing.assert_frame_equal(again.summary(), result.summary())
    assert again.meta["backend"]["api_key_env"] == "LYRA_BENCH_TEST_API_KEY"  # the variable's NAME
    assert again.meta["sweep"]["rates"] == [20.0]
    assert again.meta["environment"]["packages"]  # versions recorded
    assert again.meta["prompts"]["n"] == 4 and len(again.meta["prompts"]["sha256"]) == 64
    from_csv = pd.read_csv(tmp_path / "run" / "summary.csv")
    assert from_csv["throughput_rps"].tolist() == pytest.approx(result.summary()["throughput_rps"].tolist())


def test_no_key_in_any_saved_file(keyed_result, tmp_path):
    result, _ = keyed_result
    result.save(tmp_path / "run")
    files = list((tmp_path / "run").iterdir())
    assert files
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path.name


def test_save_refuses_to_write_a_credential(keyed_result, tmp_path):
    result, _ = keyed_result
    leaky = BenchResult(result.records, {**result.meta, "note": f"key was {KEY}"})
    with pytest.raises(ValueError, match="LYRA_BENCH_TEST_API_KEY"):
        leaky.save(tmp_path / "leaky")
    assert not (tmp_path / "leaky" / "spec.json").exists()


def test_load_names_the_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="records.parquet"):
        load_result(tmp_path)


def test_plots_have_one_line_per_backend_and_say_simulated(keyed_result, tmp_path):
    result, _ = keyed_result
    records = result.records
    # a second backend twice as slow: every request takes twice as long, so the level lasts twice as long
    other = records.assign(label="local/SmolLM2", start_s=records["start_s"] * 2, end_s=records["end_s"] * 2,
                           latency_s=records["latency_s"] * 2)
    both = combine([result, BenchResult(other)])
    fig = plot_sweep(BenchResult(both).summary(), {"e2el": 0.5})
    assert len(fig.axes) == 6  # closed and open rows: throughput, latency, throughput against latency
    throughput = fig.axes[0]
    named = sorted(line.get_label() for line in throughput.get_lines() if not line.get_label().startswith("_"))
    assert named == ["local/SmolLM2", "simulated/simulated-llm (simulated)"]
    # each line is labelled at its end, not in a legend
    assert throughput.get_legend() is None and sorted(t.get_text() for t in throughput.texts
                                                      if "err" not in t.get_text()) == named
    assert throughput.get_xlabel().startswith("concurrency")
    assert fig.axes[3].get_xlabel().startswith("offered rate")
    tradeoff = fig.axes[2]
    assert tradeoff.get_xlabel() == "end-to-end latency p90 (s)"
    slo_lines = [line for line in tradeoff.get_lines() if list(line.get_xdata()) == [0.5, 0.5]]
    assert len(slo_lines) == 1 and any(t.get_text() == "SLO e2el <= 0.5 s" for t in tradeoff.texts)
    latency_labels = {line.get_label() for line in fig.axes[1].get_lines()}
    assert any("simulated/simulated-llm (simulated) p95" in label for label in latency_labels)
    from lyra_lab.reports import figure_problems

    assert figure_problems(fig) == []
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_a_backend_that_measured_the_same_is_drawn_once_and_named_with_the_other(keyed_result):
    result, _ = keyed_result
    twin = result.records.assign(label="twin")
    fig = plot_sweep(BenchResult(combine([result, BenchResult(twin)])).summary())
    named = [line.get_label() for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert named == ["simulated/simulated-llm (simulated) = twin"]


@pytest.mark.parametrize("p90_at_16, names", [(1.5005, ["c=1", "c=2", "c=4", "c=8, 16"]),  # on the same point
                                               (1.53, ["c=1", "c=16", "c=2", "c=4", "c=8"])])  # a few px apart
def test_levels_on_the_tradeoff_are_named_without_overlapping(p90_at_16, names):
    """A saturated server: c=8 and c=16 land at (nearly) the same throughput and p90."""
    from lyra_lab.bench import plot_tradeoff
    from lyra_lab.reports import figure_problems

    summary = pd.DataFrame({"mode": "closed", "label": "simulated", "level": [1.0, 2.0, 4.0, 8.0, 16.0],
                            "requests": 12, "errors": 0, "throughput_rps": [1.0, 2.0, 4.0, 5.0, 5.0],
                            "e2el_p90_s": [0.20, 0.40, 0.60, 1.50, p90_at_16]})
    fig = plot_tradeoff(summary)
    assert sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("c=")) == names
    assert figure_problems(fig) == []


def test_a_level_name_is_not_written_across_the_lines_when_it_fits_beside_them():
    """A steep rise: above c=1 is where the series climbs to c=2; the name goes where no line is."""
    from lyra_lab.bench import plot_tradeoff
    from lyra_lab.reports import figure_problems

    summary = pd.DataFrame({"mode": "closed", "label": "simulated", "level": [1.0, 2.0, 4.0],
                            "requests": 12, "errors": 0, "throughput_rps": [1.0, 5.0, 5.5],
                            "e2el_p90_s": [0.200, 0.201, 0.60]})
    fig = plot_tradeoff(summary, slo={"e2el": 0.4})
    ax = fig.axes[0]
    fig.draw_without_rendering()
    names = [t for t in ax.texts if t.get_text().startswith("c=")]
    assert sorted(t.get_text() for t in names) == ["c=1", "c=2", "c=4"]
    paths = [line.get_transform().transform_path(line.get_path()) for line in ax.get_lines()
             if line.get_linestyle() not in ("None", "none", "", " ")]
    assert len(paths) >= 2  # the series and the SLO
    for text in names:
        box = text.get_window_extent()
        assert not any(path.intersects_bbox(box, filled=False) for path in paths), text.get_text()
    assert figure_problems(fig) == []


def test_a_level_name_stands_clear_of_the_slo_line_not_just_off_it():
    """A sweep measured on the GPU-shaped server: above its point, c=16's box stopped 2 px short of the
    SLO line and its last glyph was drawn on it; names keep 2 points from a line where they fit."""
    from lyra_lab.bench import plot_sweep
    from lyra_lab.reports import figure_problems

    summary = pd.DataFrame({"mode": "closed", "label": "simulated/simulated-gpu (simulated)",
                            "level": [1.0, 8.0, 16.0, 32.0], "requests": 96, "errors": 0,
                            "throughput_rps": [10.32, 65.06, 107.52, 123.85],
                            "latency_p50_s": [0.0966, 0.1192, 0.1444, 0.2226],
                            "latency_p95_s": [0.0994, 0.1287, 0.1723, 0.3453],
                            "ttft_p90_s": [0.02217, 0.02828, 0.04377, 0.08064],
                            "tpot_p90_s": [0.00120, 0.00160, 0.00187, 0.00440]})
    fig = plot_sweep(summary, slo={"ttft": 0.05, "tpot": 0.002})
    ax = fig.axes[2]
    fig.draw_without_rendering()
    names = [t for t in ax.texts if t.get_text().startswith("c=")]
    assert sorted(t.get_text() for t in names) == ["c=1", "c=16", "c=32", "c=8"]
    paths = [line.get_transform().transform_path(line.get_path()) for line in ax.get_lines()
             if line.get_linestyle() not in ("None", "none", "", " ")]
    clearance = 2 * fig.dpi / 72
    for text in names:
        box = text.get_window_extent().padded(clearance)
        assert not any(path.intersects_bbox(box, filled=False) for path in paths), text.get_text()
    assert figure_problems(fig) == []


@pytest.mark.parametrize("p90", [[0.001, 0.0012, 0.0014, 0.40, 0.40], [0.0005, 0.2, 0.4, 0.0006, 0.0006]])
def test_level_names_stay_inside_the_panel_clear_of_the_tick_labels(p90):
    """Points on the panel's left edge: a name placed (or grown by a joined level) to their left ran
    into the y tick labels ('5' and 'c=8, 16' in notebook 02 under load); names stay inside the panel."""
    from lyra_lab.bench import plot_tradeoff
    from lyra_lab.reports import figure_problems

    summary = pd.DataFrame({"mode": "closed", "label": "simulated", "level": [1.0, 2.0, 4.0, 8.0, 16.0],
                            "requests": 12, "errors": 0, "throughput_rps": [1.0, 2.0, 4.0, 5.0, 5.0],
                            "e2el_p90_s": p90})
    fig = plot_tradeoff(summary)
    ax = fig.axes[0]
    fig.draw_without_rendering()
    panel = ax.get_window_extent()
    names = [t for t in ax.texts if t.get_text().startswith("c=")]
    assert ", ".join(sorted(t.get_text() for t in names)).count("16") == 1
    for text in names:
        box = text.get_window_extent()
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1, text.get_text()
    assert figure_problems(fig) == []
