"""The report's "Judges" section: how often each judge errs, and how much a conclusion depends on who grades.

Shown when a run judged its answers (``[qa] judges``): with controls, each judge's measured
true- and false-positive rates beside every judged accuracy (``_judge_parts``); with two or
more judges, J per pipeline under each judge beside exact match, each judge's ranking, the
pairwise agreement (Cohen's kappa), one sentence, computed from those tables, saying whether
the judges agree on the best pipeline, and the judge prompts side by side (a table and a
figure with paired differences).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lyra_lab.reports._agreement import EXACT_MATCH, judge_agreement, judge_table
from lyra_lab.reports._judge_parts import error_rates_part, prompts_part
from lyra_lab.reports._sections import Table, TableSection

TITLE, ANCHOR = "Judges", "judges"


@dataclass
class JudgeSection(TableSection):
    """The section (its figure, the judge prompts', in ``figures``), with the CSVs written for it in ``files``."""

    files: list[Path] = field(default_factory=list)


def _judges(notes: list[str], tables: list[Table], files: list[Path],
            figures: list[Path] | None = None) -> JudgeSection:
    return JudgeSection(TITLE, ANCHOR, notes, tables, figures=figures or [], files=files)


def judge_names(df: pd.DataFrame) -> list[str]:
    """The judges that graded answers in ``df`` (empty when there was no judge or no judge column)."""
    if "judge" not in df.columns:
        return []
    return sorted(df.loc[df["metric"] == "judge", "judge"].dropna().astype(str).unique())


def judge_section(df: pd.DataFrame, out: Path) -> JudgeSection | None:
    """The section for a judged run: error rates (with controls), agreement and prompts (several judges).

    None for a run without judges.  Its parts, in order: each judge's measured error rates beside
    the judged accuracies (``_judge_errors``; when the run sent controls), then, with two judges or
    more, the agreement tables and the judge-prompt sensitivity table and figure (``_judge_prompts``).
    """
    judges = judge_names(df)
    if not judges:
        return None
    parts = [p for p in (error_rates_part(df, out), agreement_part(df, out, judges), prompts_part(df, out, judges))
             if p is not None]
    if not parts:
        return None
    # each part's notes lead its first table, so a reader meets them together
    tables = [((" ".join([*p.notes, caption]) if i == 0 else caption), header, rows)
              for p in parts for i, (caption, header, rows) in enumerate(p.tables)]
    return _judges([], tables, [f for p in parts for f in p.files], [f for p in parts for f in p.figures])


def agreement_part(df: pd.DataFrame, out: Path, judges: list[str]) -> JudgeSection | None:
    """J per pipeline under each judge, their ranks and agreement (two judges or more; else None)."""
    if len(judges) < 2:
        return None
    table, agreement = judge_table(df), judge_agreement(df)
    files = [out / "judges.csv", out / "judge_agreement.csv"]
    table.to_csv(files[0], index=False)
    agreement.to_csv(files[1], index=False)
    best = {j: str(table.loc[table[j].idxmax(), "pipeline"]) for j in judges if table[j].notna().any()}
    winners = sorted(set(best.values()))
    if len(winners) == 1:
        verdict = f"{'Both' if len(judges) == 2 else f'All {len(judges)}'} judges rank `{winners[0]}` first."
    else:
        verdict = ("The judges disagree on the best pipeline: "
                   + "; ".join(f"{j} → `{p}`" for j, p in best.items())
                   + ". A conclusion drawn from one judge's J does not hold under the others.")
    spread = float(table["spread"].max()) if len(table) else float("nan")
    notes = [
        f"Answers graded by {len(judges)} judges ({', '.join(f'`{j}`' for j in judges)}), compared only on the "
        "answers every judge graded. J = share judged correct; exact match beside it for reference.",
        f"{verdict} The largest spread of one pipeline's J across judges is {spread:.3f}.",
    ]
    header = ["pipeline", "n", *judges, EXACT_MATCH, "spread", *(f"rank: {j}" for j in judges)]
    rows = [[str(r["pipeline"]), str(int(r["n"])), *(f"{r[j]:.3f}" for j in judges), _fmt(r[EXACT_MATCH]),
             f"{r['spread']:.3f}", *(str(int(r[f'rank:{j}'])) for j in judges)] for _, r in table.iterrows()]
    agree_rows = [[str(r["rater"]), str(r["other"]), str(int(r["n"])), _fmt(r["rater_mean"]), _fmt(r["other_mean"]),
                   _fmt(r["agreement"]), _fmt(r["kappa"])] for _, r in agreement.iterrows()]
    tables = [("J per pipeline under each judge:", header, rows),
              ("Agreement between raters (Cohen's kappa corrects for chance; NaN when both are constant):",
               ["rater", "other", "n", "rater mean", "other mean", "agreement", "kappa"], agree_rows)]
    return _judges(notes, tables, files)


def _fmt(value: float) -> str:
    return "NaN" if pd.isna(value) else f"{value:.3f}"
