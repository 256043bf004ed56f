"""Judge controls through a run on the simulated server: measured error rates cover the set ones; the plan counts them.

The simulated server's judge (``SimulatedJudge``, a simulation with known error rates) accepts a
right answer with probability ``ACCEPT_RIGHT`` and a wrong but on-topic one with ``ACCEPT_WRONG``.
The report's false- and true-positive rates are measured on the controls alone; their Wilson
intervals must cover the rates the simulation was given.
"""

from __future__ import annotations

import re

import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.backends.simulated import SimulatedJudge
from lyra_lab.experiments import ExperimentSpec, forecast_text, plan, run_experiment
from lyra_lab.measures import ControlPool, judge_controls
from lyra_lab.reports import write_report
from tests.helpers.locomo import locomo_path

ACCEPT_RIGHT = 0.9
# each judge prompt's set false-positive rate: lyra-lab's own 0.3, mem0's 0.5 (generous), strict_v1's 0.1.
# mem0's text is judged under mem0_locomo_lenient: the simulated judge replies one word, which mem0's own
# rule (mem0_locomo: a JSON label) does not read.
ACCEPT_WRONG = {"own": 0.3, "mem0": 0.5, "strict": 0.1}
SIMULATED = SimulatedJudge(accept_wrong=ACCEPT_WRONG["own"], accept_right=ACCEPT_RIGHT,
                           accept_wrong_when=(("be generous with your grading", ACCEPT_WRONG["mem0"]),
                                              ("Be strict:", ACCEPT_WRONG["strict"])))

RUN = """
name = "controls"
[corpus]
path = "{corpus}"
conversations = 1
max_probes = 80
[grid]
chunkers = [{{ name = "turn_window", max_turns = 4 }}]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = [{{ preset = "simulated", base_url = "{url}" }}]
embedders = ["none"]
ks = [5]
cache = "off"
[qa]
enabled = true
judges = [{{ prompt = "correct_wrong_v1", backend = {{ preset = "simulated", base_url = "{url}" }}, name = "own", corrected = true{controls} }},
          {{ prompt = "mem0_locomo_lenient", backend = {{ preset = "simulated", base_url = "{url}" }}, name = "mem0" }},
          {{ prompt = "strict_v1", backend = {{ preset = "simulated", base_url = "{url}" }}, name = "strict" }}]
"""


def _spec(tmp_path, url: str, controls: str = "") -> ExperimentSpec:
    path = tmp_path / f"exp{len(controls)}.toml"
    text = RUN.format(corpus=locomo_path(), url=url, controls=controls)
    path.write_text(text.replace(", corrected = true, controls = false", ", controls = false"), encoding="utf-8")
    return ExperimentSpec.from_toml(path)


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory):
    """One run of 80 LoCoMo probes, three judges on a simulated judge with set error rates, and its report."""
    tmp = tmp_path_factory.mktemp("controls")
    with SimulatedServer(judge=SIMULATED) as server:
        spec = _spec(tmp, server.base_url)
        forecast = plan(spec, measure=False)
        off = plan(_spec(tmp, server.base_url, ", controls = false"), measure=False)
        df = run_experiment(spec, tmp / "run")
        chats = len(server.chat_log())
    write_report(tmp / "run")
    report = tmp / "run" / "report"
    assert (report / "judge_prompts.png").stat().st_size > 0
    assert 'src="judge_prompts.png"' in (report / "report.html").read_text(encoding="utf-8") or \
        "judge_prompts.png" in (report / "report.html").read_text(encoding="utf-8")
    return spec, forecast, off, df, chats, (report / "summary.md").read_text(encoding="utf-8")


def _rates(summary: str, judge: str) -> list[tuple[float, float, float, int]]:
    """The (rate, low, high, n) of the TPR and the FPR the report prints for ``judge``."""
    line = next(x for x in summary.splitlines() if x.startswith("|") and f"| {judge} | 80 |" in x)
    cells = re.findall(r"([\d.]+) \[([\d.]+), ([\d.]+)\] \((\d+)\)", line)
    assert len(cells) == 2, line
    return [(float(a), float(b), float(c), int(d)) for a, b, c, d in cells]


def test_the_printed_false_positive_rate_covers_the_simulated_judges(judged_run):
    *_, summary = judged_run
    for judge in ("own", "mem0", "strict"):
        (tpr, low, high, n), (fpr, f_low, f_high, f_n) = _rates(summary, judge)
        assert f_n >= 60 and f_low <= ACCEPT_WRONG[judge] <= f_high, (judge, fpr, f_low, f_high, f_n)
        assert n >= 30 and low <= ACCEPT_RIGHT <= high, (judge, tpr, low, high, n)
    assert "Wilson score interval" in summary and "Rogan–Gladen" in summary
    head = summary[:summary.index("## Judges")]  # beside the summary table's judged figures too
    assert "`own` TPR 0." in head and "FPR 0." in head


def test_controls_never_mix_into_the_judged_accuracy(judged_run):
    spec, _, _, df, _, summary = judged_run
    judged = df[df["metric"] == "judge"]
    controls = df[df["metric"].isin(["judge_tpr", "judge_fpr"])]
    answered = df[df["metric"] == "qa_f1"]["probe_id"].nunique()
    assert len(judged) == 3 * answered  # one verdict per judge per answered probe, nothing else
    assert judged["judge_control"].isna().all() and controls["judge_control"].notna().all()
    # the J the error-rate table prints is the mean of the real verdicts alone
    own = judged[judged["judge"] == "own"]["value"]
    line = next(x for x in summary.splitlines() if x.startswith("|") and "| own | 80 |" in x)
    assert f"| own | 80 | {own.mean():.3f} [" in line
    # controls: the gold (truth 1) and wrong ones (truth 0), built from the conversation
    corpus = spec.corpus
    assert set(controls["judge_control"]) <= {"gold", "shifted_date", "other_value", "negated"}
    assert (controls[controls["metric"] == "judge_tpr"]["judge_control"] == "gold").all()
    assert corpus is not None


def test_the_plan_counts_the_control_calls_and_controls_switch_off(judged_run):
    _, forecast, off, df, chats, _ = judged_run
    rows = df[df["metric"].isin(["judge_tpr", "judge_fpr"])]
    assert forecast.judge_controls is not None and forecast.judge_controls.calls == len(rows) > 0
    assert "judge controls (answers of known truth" in forecast_text(forecast)
    assert f"{len(rows):,} calls" in forecast_text(forecast)
    assert off.judge_controls is not None  # two judges still send controls
    backend = {b.label: b.calls for b in forecast.backends}
    without = {b.label: b.calls for b in off.backends}
    own_controls = len(rows[rows["judge"] == "own"])
    assert [backend[k].low - without[k].low for k in backend] == [own_controls]
    assert chats == backend["simulated"].low  # the plan's calls are the calls the server got
    assert df[df["metric"] == "judge_control.calls"]["value"].sum() == len(rows)


def test_controls_are_deterministic_and_skip_abstention():
    from lyra_lab.corpus import load

    corpus = load(locomo_path())
    conv = corpus.conversations[0]
    probes = list(corpus.probes_for(conv.id))
    pool = ControlPool.from_texts((t.text for t in conv.turns()), (p.answer for p in probes))
    again = ControlPool.from_texts((t.text for t in conv.turns()), (p.answer for p in probes))
    assert [judge_controls(p, pool) for p in probes] == [judge_controls(p, again) for p in probes]
    adversarial = [p for p in probes if p.adversarial or p.abstention]
    assert adversarial and all(judge_controls(p, pool) == () for p in adversarial)


def test_the_same_answers_under_three_named_prompts_in_one_table_and_one_figure(judged_run):
    from lyra_lab.reports import draw_prompt_figure, figure_problems, prompt_accuracy, prompt_differences

    _, _, _, df, _, summary = judged_run
    table = summary[summary.index("J under each judge prompt"):]
    lines = [x for x in table.splitlines() if x.startswith("| ") and not x.startswith("| judge |")]
    rows = {line.split("|")[1].strip(): line for line in lines[:3]}
    assert set(rows) == {"own", "mem0", "strict"}
    assert "| mem0_locomo_lenient |" in rows["mem0"] and "mem0ai/mem0" in rows["mem0"] and "Apache-2.0" in rows["mem0"]
    assert "| strict_v1 |" in rows["strict"] and "| correct_wrong_v1 |" in rows["own"]
    assert rows["own"].rstrip(" |").endswith("reference")
    # the simulated mem0 prompt is more lenient than lyra-lab's own, strict_v1 stricter: paired CIs say so
    diff = {j: [float(x) for x in re.findall(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", rows[j])[-1]]
            for j in ("mem0", "strict")}
    assert diff["mem0"][1] > 0 and diff["strict"][2] < 0, diff
    assert "(80)" in rows["own"]  # n shown
    accuracy = prompt_accuracy(df)
    assert set(accuracy["prompt"]) == {"correct_wrong_v1", "mem0_locomo_lenient", "strict_v1"}
    assert figure_problems(draw_prompt_figure(accuracy, prompt_differences(df))) == []
