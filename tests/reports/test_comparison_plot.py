"""The paired-comparison figure: its n, and the significantly worse pipeline drawn hollow."""

from __future__ import annotations

import pandas as pd

from lyra_lab.stats import compare_all

A, B, C = "chunks|bm25", "chunks|dense", "digests|dense"


def frame(values: dict[str, dict[tuple[str, str], float]], metric: str = "m") -> pd.DataFrame:
    """Tidy rows from {pipeline: {(conversation, probe): value}}."""
    return pd.DataFrame([{"pipeline": p, "backend": "fake", "embedder": "hashing", "seed": 0,
                          "conversation_id": conv, "probe_id": probe, "metric": metric, "value": v}
                         for p, by_probe in values.items() for (conv, probe), v in by_probe.items()])


def test_comparison_plot_says_its_n_and_marks_the_worse(tmp_path, monkeypatch):
    from lyra_lab.reports import _compare_plots, comparison_plot

    probes = {(f"c{i}", f"q{i}"): 1.0 for i in range(10)}
    table = compare_all(frame({A: probes, B: {k: 0.0 for k in probes}, C: probes}), "m", n_boot=100)
    assert comparison_plot(table, tmp_path / "d.png").stat().st_size > 1000
    seen = []
    monkeypatch.setattr(_compare_plots, "_save", lambda fig, path: seen.append(fig) or path)
    comparison_plot(table, tmp_path / "e.png")
    ax = seen[0].axes[0]
    assert "n = 10 paired probes, each its own unit" in ax.get_title()  # one probe per conversation
    hollow = [line for line in ax.lines if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and hollow[0].get_xdata()[0] == -1.0  # B, the one significantly worse
