"""``[qa] prompts`` and ``[qa] repeats`` in one small run on fake backends (``FakeLLM``, named as fakes).

Every QA'd probe is answered under each prompt (and each repeat) over the SAME context, every judge grades
each answer, the rows name the prompt and repeat, the plan counts the repeats' calls, and a spec without
the new keys keeps its cell ids (a resume of a run made before them pays no call).
"""

from __future__ import annotations

import re

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, plan, run_experiment
from lyra_lab.experiments.cells import grid_cells
from lyra_lab.stats import compare, row_pipeline_labels

RUN = """
name = "prompts"
[corpus]
path = "tiny.jsonl"
conversations = 2
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
cache = "run"
"""
QA = """
[qa]
enabled = true
"""


def answer_by_prompt(messages) -> str:
    """The fake answerer: right under the LoCoMo prompt (it sees "Short answer:"), wrong otherwise."""
    text = messages[-1]["content"]
    asked = re.search(r"what did I say: (\w+)\?", text)
    if asked is None:
        return "no idea"
    return asked.group(1) if "Short answer:" in text else "no idea"


def test_each_probe_is_answered_under_each_prompt_over_one_context_and_graded_by_each_judge(write_toml, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN, QA + 'prompts = ["short_v1", "locomo", "mem0"]\n'
                                               'judges = [{ prompt = "correct_wrong_v1", backend = "judge" }]\n'))
    answerer = FakeLLM(respond=answer_by_prompt)
    judge = FakeLLM(respond=lambda msgs: "CORRECT", name="judge")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": answerer, "judge": judge}))
    qa = df[df["metric"] == "qa_em"]
    assert sorted(qa["answer_prompt"].unique()) == ["locomo", "mem0", "short_v1"]
    assert qa.groupby("answer_prompt")["probe_id"].nunique().tolist() == [8, 8, 8]  # 2 conversations x 4 probes
    assert qa[qa["answer_prompt"] == "locomo"]["value"].sum() == 6  # the six fact probes, right under LoCoMo's prompt
    assert qa[qa["answer_prompt"] != "locomo"]["value"].sum() == 0
    # one context per probe: the three prompts' texts hold the same context block
    asked = [c[-1]["content"] for c in answerer.calls if "Biscuit" in c[-1]["content"] and "dog" in c[-1]["content"]]
    assert len(asked) >= 3
    # every answer graded by the judge: 8 probes x 3 prompts
    judged = df[df["metric"] == "judge"]
    assert len(judged) == 24 and sorted(judged["answer_prompt"].unique()) == ["locomo", "mem0", "short_v1"]
    # recall rows are the probe's, once, with no prompt
    recall = df[df["metric"] == "evidence_recall@1"]
    assert len(recall) == 6 and recall["answer_prompt"].isna().all()  # the 6 probes with evidence
    # the one home of what a pipeline is tells the prompts apart, and a paired comparison runs between them
    labels = set(row_pipeline_labels(df[df["metric"] == "qa_em"]))
    assert labels == {f"turn_window+none+none|bm25|answer_prompt={p}" for p in ("short_v1", "locomo", "mem0")}
    diff = compare(df, "turn_window+none+none|bm25|answer_prompt=locomo",
                   "turn_window+none+none|bm25|answer_prompt=short_v1", "qa_em", n_boot=50)
    assert diff.difference == pytest.approx(6 / 8) and diff.n_probes == 8


def test_repeats_are_calls_of_their_own_and_nest_inside_a_probe(write_toml, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN, QA + 'prompts = ["short_v1", "locomo"]\nrepeats = 3\n'
                                               'temperature = 0.7\n'
                                               'judges = [{ prompt = "correct_wrong_v1", backend = "judge" }]\n'))
    answerer = FakeLLM(respond=answer_by_prompt)
    judge = FakeLLM(respond=lambda msgs: "CORRECT", name="judge")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": answerer, "judge": judge}))
    qa = df[df["metric"] == "qa_em"]
    assert sorted(qa["repeat"].unique()) == [0, 1, 2]
    assert len(qa) == 8 * 2 * 3 and len(df[df["metric"] == "judge"]) == 8 * 2 * 3
    answers = [c for c in answerer.calls if "Question" in c[-1]["content"]]
    assert len(answers) == 8 * 2 * 3  # never one cached answer for three repeats
    # the paired test averages the repeats within a probe: still 8 probes, not 24
    diff = compare(df, "turn_window+none+none|bm25|answer_prompt=locomo",
                   "turn_window+none+none|bm25|answer_prompt=short_v1", "qa_em", n_boot=50)
    assert diff.n_probes == 8
    # a resume of the finished run pays nothing (each repeat was cached under its own seed)
    again = FakeLLM(respond=answer_by_prompt)
    run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": again, "judge": judge}))
    assert again.calls == []


def test_the_plan_of_three_repeats_counts_three_times_a_single_runs_answer_calls(write_toml):
    one = plan(ExperimentSpec.from_toml(write_toml(RUN, QA + "max_probes = 3\n")))
    three = plan(ExperimentSpec.from_toml(write_toml(RUN, QA + "max_probes = 3\nrepeats = 3\ntemperature = 0.5\n")))
    calls_one = sum(c.calls.low for c in one.per_cell)
    assert calls_one == 2 * 3  # two conversations, three answered probes, no other LLM call in this grid
    assert sum(c.calls.low for c in three.per_cell) == 3 * calls_one
    assert all(c.calls.exact for c in three.per_cell)


def test_a_spec_without_the_new_keys_keeps_its_cell_ids_and_spec_json(write_toml, corpus_path, tmp_path):
    from lyra_lab.corpus import load

    corpus = load(corpus_path)
    plain = ExperimentSpec.from_toml(write_toml(RUN, QA))
    # the keys at their defaults are not part of the identity either
    same = ExperimentSpec.from_toml(write_toml(RUN, QA + 'repeats = 1\ntemperature = 0.0\n'))
    ids = [c.cell_id for c in grid_cells(plain, corpus, "sha")]
    # cell ids as this spec hashed them before [qa] prompts/repeats existed (computed on the code before them)
    assert ids == [c.cell_id for c in grid_cells(same, corpus, "sha")]
    assert ids == ["u0-72f965e301f6", "u1-c076d1277360"]
    assert plain.to_dict()["qa"] == {"enabled": True, "backend": None, "prompt": "short_v1", "max_probes": None,
                                     "max_tokens": 32, "scorer": "squad", "judges": []}  # spec.json as before
    varied = ExperimentSpec.from_toml(write_toml(RUN, QA + 'prompts = ["short_v1", "locomo"]\n'))
    assert [c.cell_id for c in grid_cells(varied, corpus, "sha")] != ids
    # a run of the plain spec, resumed: every cell kept, no answer asked again
    run_experiment(plain, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=answer_by_prompt)}))
    again = FakeLLM(respond=answer_by_prompt)
    run_experiment(plain, tmp_path / "run", None, Injected(backends={"fake": again}))
    assert again.calls == []


@pytest.mark.parametrize("qa, message", [
    ('repeats = 3', r"^\[qa\] repeats = 3 at temperature 0 is one answer 3 times: set temperature > 0$"),
    ('repeats = 0\ntemperature = 0.5', "repeats must be a positive integer"),
    ('prompts = ["short_v1", "nope"]', r"unknown answer prompt 'nope'; known: dated_v1, locomo, longmemeval, mem0"),
    ('prompts = ["locomo", "locomo"]', "prompts lists 'locomo' twice"),
    ('prompts = []', "prompts must be a list of answer prompt names"),
    ('prompt = "mem0"\nprompts = ["locomo"]', "prompt = 'mem0' is not in prompts"),
    ('temperature = -1', "temperature must be a number >= 0"),
])
def test_bad_prompts_and_repeats_fail_in_one_line(write_toml, qa, message):
    with pytest.raises(ConfigError, match=message) as caught:
        ExperimentSpec.from_toml(write_toml(RUN, QA + qa + "\n"))
    assert "\n" not in str(caught.value) and len("error: " + str(caught.value)) <= 100
