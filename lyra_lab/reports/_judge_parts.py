"""The report's judge parts added for issue 36: each judge's error rates, and the judge prompts side by side.

``error_rates_part``: every judged accuracy beside the judge's true- and false-positive rates
measured on its controls (Wilson intervals), the corrected accuracy for judges whose
``corrected`` option is set (Rogan–Gladen), and the false-positive rate by kind of control.
``prompts_part``: one table and one figure of the same answers under each judge prompt, with
each prompt's source and the paired differences to the reference judge.  Both write their CSVs
(and the figure) under the report folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lyra_lab.measures import CONTROL_KINDS
from lyra_lab.reports._judge_errors import ROGAN_GLADEN, WILSON, error_rates_by_kind, judged_accuracy
from lyra_lab.reports._judge_prompts import (ALL, INTERVAL, judge_prompts, prompt_accuracy, prompt_differences,
                                             prompt_figure, prompt_source)


@dataclass(frozen=True)
class SectionPart:
    """Notes, tables ``(caption, header, rows)``, CSV files and figures of one part of the judge section."""

    notes: list[str]
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)


def _ci(mean: float, low: float, high: float) -> str:
    if pd.isna(mean):
        return "—"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]" if not pd.isna(low) else f"{mean:.3f}"


def error_rates_part(df: pd.DataFrame, out: Path) -> SectionPart | None:
    """Judged accuracy beside each judge's TPR and FPR (None when the run sent no controls)."""
    if not df["metric"].isin(["judge_tpr", "judge_fpr"]).any():
        return None
    table = judged_accuracy(df)
    kinds = error_rates_by_kind(df)
    files = [out / "judge_error_rates.csv", out / "judge_controls_by_kind.csv"]
    table.to_csv(files[0], index=False)
    kinds.to_csv(files[1], index=False)
    corrected = bool(table.get("corrected", pd.Series(dtype=bool)).fillna(False).astype(bool).any())
    notes = [
        "Judge error rates, measured: beside the real answers each judge graded controls of known truth for "
        "every judged probe — the gold answer itself (true-positive rate, TPR: share accepted) and wrong but "
        "on-topic answers built from the conversation (" + "; ".join(
            f"{k}: {v}" for k, v in CONTROL_KINDS.items() if k != "gold") + ") (false-positive rate, FPR: share "
        "accepted). Controls are rows of their own (`judge_tpr`, `judge_fpr`), never part of J. Each control "
        f"counts once per judge. Intervals: {WILSON}.",
    ]
    if corrected:
        notes.append(f"Corrected J (asked for with `corrected = true`): {ROGAN_GLADEN}.")
    header = ["pipeline", "judge", "n", "J [95% CI]", "judge TPR [95% CI] (n)", "judge FPR [95% CI] (n)"]
    header += ["corrected J [95% CI]"] if corrected else []
    rows = []
    for _, r in table.iterrows():
        tpr = f"{_ci(r.get('tpr'), r.get('tpr_low'), r.get('tpr_high'))} ({int(r['tpr_n']) if pd.notna(r.get('tpr_n')) else 0})"
        fpr = f"{_ci(r.get('fpr'), r.get('fpr_low'), r.get('fpr_high'))} ({int(r['fpr_n']) if pd.notna(r.get('fpr_n')) else 0})"
        row = [str(r["pipeline"]), str(r["judge"]), str(int(r["n"])), _ci(r["j"], r["j_low"], r["j_high"]), tpr, fpr]
        if corrected:
            if not r.get("corrected"):
                row.append("not asked")
            elif pd.isna(r["corrected_j"]):  # TPR <= FPR: the verdicts carry no information to correct
                row.append("undefined (TPR ≤ FPR: the judge tells right from wrong no better than chance)")
            else:
                row.append(_ci(r["corrected_j"], r["corrected_low"], r["corrected_high"]))
        rows.append(row)
    kind_rows = [[str(r["judge"]), str(r["judge_control"]), str(r["truth"]), str(int(r["n"])),
                  _ci(r["accepted"], r["low"], r["high"])] for _, r in kinds.iterrows()]
    return SectionPart(notes, [("Judged accuracy J beside the judge's measured error rates:", header, rows),
                               ("Share of each kind of control the judge accepted:",
                                ["judge", "control", "truth", "n", "accepted [95% CI]"], kind_rows)], files)


def error_rates_line(df: pd.DataFrame) -> str | None:
    """One line for under the summary table: each judge's measured TPR and FPR (None without controls)."""
    if "judge" not in df.columns or not df["metric"].isin(["judge_tpr", "judge_fpr"]).any():
        return None
    from lyra_lab.reports._judge_errors import judge_error_rates

    rates = judge_error_rates(df)
    parts = [f"`{r['judge']}` TPR {_ci(r['tpr'], r['tpr_low'], r['tpr_high'])} (n={int(r['tpr_n'])}), "
             f"FPR {_ci(r['fpr'], r['fpr_low'], r['fpr_high'])} (n={int(r['fpr_n'])})" for _, r in rates.iterrows()]
    return ("Judged figures (`judge`) rest on judges with measured error rates (controls of known truth, "
            f"{WILSON}): " + "; ".join(parts) + ". See the Judges section.\n")


def prompts_part(df: pd.DataFrame, out: Path, judges: list[str]) -> SectionPart | None:
    """The same answers under each judge prompt: a table, a figure, paired differences (two judges or more)."""
    if len(judges) < 2:
        return None
    accuracy, differences = prompt_accuracy(df), prompt_differences(df)
    files = [out / "judge_prompts.csv", out / "judge_prompt_differences.csv"]
    accuracy.to_csv(files[0], index=False)
    differences.to_csv(files[1], index=False)
    figure = prompt_figure(accuracy, differences, out / "judge_prompts.png")
    prompts = judge_prompts(df)
    reference = str(differences["reference"].iloc[0]) if not differences.empty else judges[0]
    pipelines = [p for p in dict.fromkeys(accuracy["pipeline"]) if p != ALL]
    shown = pipelines + [ALL] if len(pipelines) > 1 else [ALL]
    header = ["judge", "prompt", "source", *(f"J: {p} (n)" for p in shown), f"J minus {reference} [95% CI]"]
    wide = accuracy.set_index(["judge", "pipeline"])
    diff = differences[differences["pipeline"] == ALL].set_index("judge")
    rows = []
    for judge in judges:
        prompt = prompts.get(judge, "")
        cells = []
        for p in shown:
            r = wide.loc[(judge, p)]
            cells.append(f"{_ci(r['j'], r['low'], r['high'])} ({int(r['n'])})")
        delta = "reference" if judge == reference else (_ci(*diff.loc[judge, ["diff", "low", "high"]])
                                                         if judge in diff.index else "—")
        rows.append([judge, prompt or "?", prompt_source(prompt), *cells, delta])
    notes = [f"Judge prompts side by side: the same answers (only those every judge graded) under each judge, "
             f"each prompt with its source; differences are paired, answer by answer, against `{reference}`. "
             f"Intervals: {INTERVAL}. Figure: judge_prompts.png."]
    return SectionPart(notes, [("J under each judge prompt, and the paired difference to the reference:",
                                header, rows)], files, [figure] if figure is not None else [])
