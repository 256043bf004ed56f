"""The plan's one-line way to a first look in minutes, on the bundled Claude export (one conversation).

A plan over two minutes prints ``a first look in ~T (L–H): [corpus] max_sessions = N (of M sessions)``,
N sized from the plan's own per-session figures; the plan again with that N falls inside the stated
range and under two minutes.  The embedder's rates are kept ones (a slow machine's, written to the
calibration file of a private user cache, load 0: no scaling by today's load), so nothing is measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lyra_lab._terminal import COLUMNS
from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, forecast_text, plan
from lyra_lab.experiments.forecast._calibrate import identity_key, machine_key
from lyra_lab.experiments.forecast._first_look import OVER_S, first_look

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "tests" / "fixtures" / "corpus" / "claude" / "conversations.json"
GRID = """name = "first"
[corpus]
path = "planted.jsonl"
{cut}
[grid]
chunkers = [{{ name = "turn_window", max_turns = 1 }}]
summarizers = ["none"]
keep_raw = [false]
recallers = ["bm25", "hybrid"]
[run]
embedders = ["e5"]
ks = [10]
"""


def _slow_e5(cache: Path) -> None:
    """Kept rates for the e5 embedder as a slow machine measured them: 4 s a text, 50 ms a token, 4 s to load."""
    from lyra_lab.backends import make_embedder

    key = identity_key(dict(make_embedder("e5").identity()))
    rates = {"key": key, "per_item": 4.0, "per_in": 0.05, "per_out": 0.0, "load_s": 4.0, "spread": 0.0,
             "measured_at": "2099-01-01T00:00:00+00:00", "load": 0.0}
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "calibration.json").write_text(json.dumps({machine_key(): {key: rates}}), encoding="utf-8")


def test_a_long_plan_names_the_sessions_of_a_first_look_and_they_plan_within_its_range(tmp_path, monkeypatch,
                                                                                         capsys):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _slow_e5(tmp_path / "cache")
    assert main(["import", str(CLAUDE), "--out", "me.jsonl"]) == 0
    assert main(["probes", "plant", "me.jsonl", "--n", "20", "--out", "planted.jsonl"]) == 0
    (tmp_path / "grid.toml").write_text(GRID.format(cut=""), encoding="utf-8")
    whole = plan(ExperimentSpec.from_toml(tmp_path / "grid.toml"))
    assert whole.conversations == 1 and whole.wall_s.mid > OVER_S  # one conversation: `conversations = N` cuts nothing
    capsys.readouterr()
    assert main(["plan", "grid.toml"]) == 0  # the command prints it (its N may differ by one: the harness's own
    assert "\na first look in ~" in capsys.readouterr().out  # time is measured anew)
    line = next(x for x in forecast_text(whole).splitlines() if x.startswith("a first look in "))
    found = re.search(r"^a first look in ~\S+ \(\S+–\S+\): \[corpus\] max_sessions = (\d+) \(of (\d+) sessions\)$",
                      line)
    assert found and len(line) <= COLUMNS, line
    n, of = int(found.group(1)), int(found.group(2))
    look = first_look(whole)
    assert look is not None and (look.max_sessions, look.sessions) == (n, of) and 1 <= n < of

    (tmp_path / "look.toml").write_text(GRID.format(cut=f"max_sessions = {n}"), encoding="utf-8")
    cut = plan(ExperimentSpec.from_toml(tmp_path / "look.toml"))
    assert look.wall_s.low <= cut.wall_s.mid <= look.wall_s.high and cut.wall_s.mid <= OVER_S
    assert cut.turns < whole.turns and 0 < cut.probes
    assert "a first look" not in forecast_text(cut)  # under two minutes: no line


def test_a_short_plan_prints_no_first_look(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(CLAUDE), "--out", "planted.jsonl"]) == 0
    (tmp_path / "grid.toml").write_text(GRID.format(cut="").replace(', "hybrid"', "").replace(
        '["e5"]', '["none"]'), encoding="utf-8")
    f = plan(ExperimentSpec.from_toml(tmp_path / "grid.toml"))
    assert f.wall_s.mid < OVER_S and first_look(f) is None and "a first look" not in forecast_text(f)
