"""``[qa] judges``: several judges (prompts x models) grade every answer in one run; rows name the judge."""

from __future__ import annotations

import json
import re

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.reports import judge_agreement, judge_table
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment

RUN = """
name = "judges"
[corpus]
path = "tiny.jsonl"
conversations = 1
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
cache = "off"
"""
JUDGES = """
[qa]
enabled = true
judges = [{ prompt = "correct_wrong_v1", backend = "strict" },
          { prompt = "longmemeval_v1", backend = "lenient", name = "lenient-lme" }]
"""


def answer_some(messages) -> str:
    """The fake answerer: right for the dog and the sister, 'no idea' otherwise."""
    text = messages[-1]["content"]
    question = re.search(r"Question: (.*)\nAnswer:", text)
    if question is None:
        return "ok"
    word = question.group(1).rpartition(": ")[2].rstrip("?")
    return word if word in ("Biscuit", "nurse") else "no idea"


def strict_judge(messages) -> str:
    """CORRECT exactly when the generated answer equals the gold answer."""
    text = messages[-1]["content"]
    gold = re.search(r"Gold answer: (.*)\n", text).group(1)
    answer = re.search(r"Generated answer: (.*)\n", text).group(1)
    return "CORRECT" if answer.strip().lower() == gold.strip().lower() else "WRONG"


def test_judges_parse_into_configs_with_labels_and_reach_spec_json(write_toml, corpus_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN, JUDGES))
    assert [j.label for j in spec.qa.judges] == ["correct_wrong_v1@strict", "lenient-lme"]
    saved = spec.to_dict()["qa"]["judges"]
    assert saved == [{"prompt": "correct_wrong_v1", "backend": "strict", "max_tokens": 8, "name": None,
                      "controls": True, "corrected": False},
                     {"prompt": "longmemeval_v1", "backend": "lenient", "max_tokens": 10, "name": "lenient-lme",
                      "controls": True, "corrected": False}]
    # one way to name a judge: the old [judge] table is refused, saying where judges go now
    with pytest.raises(ConfigError, match=r"the \[judge\] table is gone: list the judges in \[qa\] judges"):
        ExperimentSpec.from_toml(write_toml(RUN, JUDGES + '[judge]\nenabled = true\nbackend = "strict"\n'))


@pytest.mark.parametrize("qa, message", [
    ('enabled = true\njudges = [{ prompt = "nope", backend = "x" }]', r"judges\[0\]: unknown judge prompt 'nope'"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1" }]', r"judges\[0\]: .*needs a 'backend'"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1", backend = "x", model = "y" }]',
     r"judges\[0\]: unknown key 'model'; allowed: prompt, backend, max_tokens, name, controls, corrected"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1", backend = "x", controls = 1 }]',
     "controls must be true or false"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1", backend = "x", controls = false, corrected = true }]',
     "corrected = true needs controls = true"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1", backend = "x", max_tokens = 0 }]',
     "max_tokens must be a positive integer"),
    ('enabled = true\njudges = [{ prompt = "mem0_locomo", backend = "x", max_tokens = 8 }]',
     r"^\[qa\] judges\[0\]: judge 'mem0_locomo': max_tokens = 8 is below its prompt's minimum of 128$"),
    ('enabled = true\njudges = [{ prompt = "longmemeval_v1", backend = "x", max_tokens = 9 }]',
     "max_tokens = 9 is below its prompt's minimum of 10"),
    ('judges = [{ prompt = "correct_wrong_v1", backend = "x" }]', r"\[qa\] judges needs \[qa\] enabled"),
    ('enabled = true\njudges = [{ prompt = "correct_wrong_v1", backend = "x" }, '
     '{ prompt = "correct_wrong_v1", backend = "x" }]', "'correct_wrong_v1@x' is listed twice"),
    ('enabled = true\njudges = "correct_wrong_v1"', "must be a list of tables"),
])
def test_bad_judges_fail_in_one_line_naming_the_place(write_toml, qa, message):
    with pytest.raises(ConfigError, match=message):
        ExperimentSpec.from_toml(write_toml(RUN, f"[qa]\n{qa}\n"))


def test_one_run_is_scored_by_every_judge_and_their_agreement_is_computed(write_toml, corpus_path, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN, JUDGES))
    strict = FakeLLM(respond=strict_judge, name="strict")
    lenient = FakeLLM(respond=lambda msgs: "yes", name="lenient")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=answer_some), "strict": strict, "lenient": lenient}))
    judged = df[df["metric"] == "judge"]
    # 4 probes (3 facts + 1 abstention) x 1 pipeline, each graded by both judges
    assert sorted(judged.groupby("judge")["probe_id"].apply(sorted).to_dict().items()) == [
        ("correct_wrong_v1@strict", ["u0:q0", "u0:q1", "u0:q2", "u0:qa"]),
        ("lenient-lme", ["u0:q0", "u0:q1", "u0:q2", "u0:qa"])]
    verdict = judged.set_index(["judge", "probe_id"])["value"].to_dict()
    assert [verdict[("correct_wrong_v1@strict", p)] for p in ("u0:q0", "u0:q1", "u0:q2", "u0:qa")] == [1, 1, 0, 0]
    assert all(verdict[("lenient-lme", p)] == 1 for p in ("u0:q0", "u0:q1", "u0:q2", "u0:qa"))
    controls = df[df["metric"].isin(["judge_tpr", "judge_fpr"])]
    assert len(controls) == 2 * len(controls[controls["judge"] == "lenient-lme"]) > 0  # both judges, same controls
    assert len(strict.calls) == len(lenient.calls) == 4 + len(controls) // 2  # 4 answers + each control
    assert all("Answer yes or no only" in c[-1]["content"] for c in lenient.calls)  # its own prompt
    assert df[df["metric"] == "judge.calls"]["value"].tolist() == [8.0]  # both judges' calls in the judge phase
    assert df[~df["metric"].isin(["judge", "judge_tpr", "judge_fpr"])]["judge"].isna().all()  # only judge rows name a judge
    table = judge_agreement(df).set_index(["rater", "other"])
    # strict = [1,1,0,0] = exact match; lenient always yes: agreement 1/2, kappa 0 (no better than chance)
    assert table.loc[("correct_wrong_v1@strict", "exact_match"), "kappa"] == pytest.approx(1.0)
    assert table.loc[("correct_wrong_v1@strict", "lenient-lme"), "agreement"] == pytest.approx(0.5)
    assert table.loc[("correct_wrong_v1@strict", "lenient-lme"), "kappa"] == pytest.approx(0.0)
    assert table.loc[("lenient-lme", "exact_match"), "rater_mean"] == pytest.approx(1.0)
    wide = judge_table(df)
    assert wide[["correct_wrong_v1@strict", "lenient-lme", "spread"]].values.tolist() == [[0.5, 1.0, 0.5]]
    saved = json.loads((tmp_path / "run" / "spec.json").read_text())
    assert [j["backend"] for j in saved["qa"]["judges"]] == ["strict", "lenient"]


def test_a_judge_label_never_carries_url_credentials():
    from lyra_lab.measures import JudgeConfig

    assert JudgeConfig("correct_wrong_v1", "llamacpp/http://me:sk-secret@host:8080/v1").label == \
        "correct_wrong_v1@llamacpp/http://host:8080/v1"
    assert JudgeConfig("longmemeval_v1", {"preset": "openai/gpt-4o-mini", "api_key": "sk-x"}).label == \
        "longmemeval_v1@openai/gpt-4o-mini"


def test_the_report_shows_each_judge_apart_and_how_much_they_agree(write_toml, corpus_path, tmp_path):
    from lyra_lab.reports import write_report

    spec = ExperimentSpec.from_toml(write_toml(RUN, JUDGES))
    run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=answer_some), "strict": FakeLLM(respond=strict_judge),
                             "lenient": FakeLLM(respond=lambda msgs: "yes")}))
    write_report(tmp_path / "run", n_resamples=50)
    md = (tmp_path / "run" / "report" / "summary.md").read_text(encoding="utf-8")
    section = md.split("\n## Judges\n")[1].split("\n## ")[0]
    # J per judge on the same 4 answers: strict 2/4, lenient 4/4; spread 0.5; one pipeline, so both rank it first
    assert "| turn_window+none+none\\|bm25 | 4 | 0.500 | 1.000 | 0.500 | 0.500 | 1 | 1 |" in section
    assert "Both judges rank `turn_window+none+none|bm25` first" in section
    assert "largest spread of one pipeline's J across judges is 0.500" in section
    assert "| correct_wrong_v1@strict | lenient-lme | 4 | 0.500 | 1.000 | 0.500 | 0.000 |" in section
    summary = (tmp_path / "run" / "report" / "summary.csv").read_text(encoding="utf-8")
    header = summary.splitlines()[0].split(",")
    # never pooled: one summary column per judge, none named plain "judge"
    assert "judge[correct_wrong_v1@strict]" in header and "judge[lenient-lme]" in header and "judge" not in header
    page = (tmp_path / "run" / "report" / "report.html").read_text(encoding="utf-8")
    assert "<h2 id=judges>Judges</h2>" in page and "lenient-lme" in page


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_mem0_judge_below_its_prompts_need_is_refused_at_plan_and_run_in_one_line(write_toml, corpus_path,
                                                                                      capsys, command):
    from lyra_lab.cli import main

    path = write_toml(RUN, '[qa]\nenabled = true\njudges = [{ prompt = "mem0_locomo", backend = "fake", '
                           'max_tokens = 8 }]\n')
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and len(err) <= 100 and "Traceback" not in err, err
    assert "judges[0]" in err and "mem0_locomo" in err and "max_tokens = 8" in err and "minimum of 128" in err
