"""``write_report(run_dir)``: the summary tables and plots of a run folder.

Reads the tidy rows (``lyra_lab.runs.load_results``) and writes into ``report/``:

* ``summary.csv`` — one row per pipeline: quality means with 95% CIs, context
  tokens, build cost and latency (see ``_summary``);
* ``metrics.csv`` — every metric aggregated per pipeline (long form: mean,
  ci_low, ci_high, n), and ``by_category.csv`` — the same per probe category;
* ``summary.md`` — the summary as Markdown, with a per-category table; a pipeline whose cells fell back
  or lost calls (``degraded`` > 0 in the rows) is marked ``⚠ degraded (n)`` in every table and figure
  label, with a warning and a "Degradation and retries" section (what degraded where, and how many
  attempts the run's calls needed; see ``_degraded``);
* "Paired comparisons" in ``summary.md``: each pipeline against the best on the
  lead metric (the summary's first quality metric), paired on the same probes,
  clustered by conversation, Holm-corrected (see ``_compare``), with
  ``paired_comparisons.csv`` and ``paired_differences.png``;
* "Retrieval and answering apart" in ``summary.md``, for a run that answered probes: per pipeline the share
  of probes with their evidence in the answerer's context and the accuracy either way, and how much of
  each gap to the best pipeline comes from retrieval and from answering (see ``_split``); "Distance to
  the ceilings", for a grid with ``oracle``/``full_context`` among its recallers (see ``_ceiling_report``),
  both drawn in ``retrieval_and_answering.png`` (see ``_split_plot``);
* "Frontier: quality against cost" in ``summary.md``: the headline measure against context tokens, latency
  and dollars per probe, the Pareto frontier marked and each dominated pipeline named with what dominates
  it (see ``_frontier``), drawn in ``frontier.png`` (see ``_frontier_plot``);
* "Planted turns among the hits" in ``summary.md``, for a corpus with planted probes: per pipeline,
  the share of its top-k hits that are planted turns, and a warning where planted text is in another
  language than the history (see ``_planted_report``);
* ``quality_vs_cost.png``, ``latency.png``, ``by_category.png``;
* ``report.html`` — all of it in one self-contained file, opening on the headline (the lead metric's
  best pipelines, see ``_headline``) and the first figure, plus a per-probe drill-down (see ``_html``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from lyra_lab._errors import ConfigError
from lyra_lab._run_records import read_spec
from lyra_lab.runs import ResultsFormatError, load_results
from lyra_lab.stats import aggregate
from lyra_lab.stats import row_pipeline_labels
from lyra_lab.reports import _degraded
from lyra_lab.reports._compare_report import lead_metric, paired_section
from lyra_lab._terminal import fit
from lyra_lab.reports._headline import Headline, headline
from lyra_lab.reports._html import ReportPage, probe_views, render_html
from lyra_lab.reports._judge_parts import error_rates_line
from lyra_lab.reports._planted_report import planted_section
from lyra_lab.reports._judge_report import judge_section
from lyra_lab.reports._qa_prompts import prompt_section
from lyra_lab.reports._labels import label_categories
from lyra_lab.reports._category_plot import by_category
from lyra_lab.reports._ceiling_report import ceiling_section
from lyra_lab.reports._latency_plot import latency_boxes
from lyra_lab.reports._plots import quality_vs_context_tokens, quality_vs_cost
from lyra_lab.reports._split import split_section
from lyra_lab.reports._split_plot import split_figure
from lyra_lab.reports._frontier import frontier_section
from lyra_lab.reports._frontier_plot import frontier_figure
from lyra_lab.reports._sections import TableSection
from lyra_lab.recall import ceiling_names
from lyra_lab.reports._contenders import ceiling_pipelines
from lyra_lab.reports._summary import (
    FAIR_NOTE,
    MARKDOWN_METRICS,
    ci_warnings,
    expand_metrics,
    format_cells,
    format_markdown,
    group_columns,
    headline_metric,
    main_quality_metric,
    summarize_results,
)

class WrittenReport(list[Path]):
    """The files ``write_report`` wrote (a list of paths, as ever) and the headline its page opens on.

    ``lyra-lab report`` prints that headline (``commands.report.report_digest``) without reading the rows again.
    """

    headline: Headline | None = None


def write_report(
    run_dir: str | os.PathLike[str],
    *,
    category_scheme: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    cluster: str | None = None,
) -> WrittenReport:
    """Write ``report/`` for ``run_dir`` and return the files written (tables, plots, then report.html).

    Args:
        run_dir: the run folder.
        category_scheme: a ``LOCOMO_LABELS`` scheme name to label categories with
            (``"locomo_paper"`` or ``"mem0"``); None shows the raw category.
        n_resamples: bootstrap resamples of the CIs.
        seed: of the bootstrap.
        cluster: resample whole clusters for the CIs, e.g. ``"conversation_id"``:
            probes of one conversation are correlated, so with few conversations
            (LoCoMo has 10) the per-probe intervals are too narrow.  The paired
            comparisons always cluster (by ``conversation_id`` unless this names
            another column; a run of one conversation pairs its probes as units).
    """
    run_dir = Path(run_dir)
    df = load_results(run_dir)
    if "category" not in df.columns:
        df["category"] = ""
    df["category"] = df["category"].fillna("").astype(str)
    if category_scheme is not None:
        df = label_categories(df, category_scheme)
        category_col = "category_label"
    else:
        category_col = "category"
    out = run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    keys = group_columns(df)
    simulated = _simulated(df)

    if cluster is not None and cluster not in df.columns:
        raise ResultsFormatError(f"{run_dir}: cannot cluster by {cluster!r}: results have no such column")
    summary = summarize_results(df, n_resamples=n_resamples, seed=seed, cluster=cluster)
    written = [out / "summary.csv", out / "metrics.csv"]
    summary.to_csv(written[0], index=False)
    aggregate(df, by=keys, n_resamples=n_resamples, seed=seed, cluster=cluster).to_csv(written[1], index=False)
    metric = main_quality_metric(sorted(df["metric"].unique()))
    def breakdown(rows: pd.DataFrame, column: str, name: str) -> pd.DataFrame:
        """The headline metric per pipeline group and ``column`` (mean, CI, n), written to ``report/<name>``."""
        agg = aggregate(rows[rows["metric"] == metric], by=keys + [column], n_resamples=n_resamples, seed=seed,
                        cluster=cluster)
        written.append(out / name)
        agg.to_csv(written[-1], index=False)
        return agg

    by_cat = by_origin = None
    if metric is not None and (df[category_col] != "").any():
        by_cat = breakdown(df[df[category_col] != ""], category_col, "by_category.csv")
    # planted vs drafted vs the dataset's own probes, when a run mixes them
    if metric is not None and "probe_origin" in df.columns and df["probe_origin"].dropna().nunique() > 1:
        by_origin = breakdown(df[df["probe_origin"].notna()], "probe_origin", "by_probe_origin.csv")

    unit = f"resampling whole {cluster} clusters" if cluster else "resampling probes"
    md = [f"# Report: {run_dir.name}\n", FAIR_NOTE + "\n", (
          f"Quality metrics: mean over probes [95% bootstrap CI, {unit}]; n = the values behind each figure "
          "(a probe run under several seeds counts once, its seeds averaged). "
          "Context tokens and recall latency: mean per probe (`recall_latency_p50_s`/`_p95_s`: percentiles "
          "over a pipeline's probes). A memory system's ingest (`ingest.*`): mean per conversation; "
          "\"cannot trace\": a system whose hits name no source turns has no turn-level retrieval figure. "
          "Cost and latency of summarize/rollup: mean per conversation, as measured when the calls were paid "
          "(`latency_s` = sum of per-call latencies; a response-cache hit keeps its original latency and cost). "
          "What this run paid: `paid_latency_s` (wall time), `paid_cost_usd`, `cached_calls`.\n")]
    if "qa.scorer" in df.columns and df["qa.scorer"].notna().any():
        scorers = sorted(str(s) for s in df["qa.scorer"].dropna().unique())
        md.append(f"QA answers (`qa_em`, `qa_f1`) scored with: {', '.join(scorers)}"
                  + (" — DIFFERENT scorers: do not compare their QA figures directly" if len(scorers) > 1 else "")
                  + ".\n")
    degraded = _degraded.degraded_pipelines(df)
    warnings = ci_warnings(df, cluster)
    degraded_warning = _degraded.warning(degraded)
    if degraded_warning:
        warnings.insert(0, degraded_warning)
    marked = _degraded.relabel(df, degraded)  # a degraded pipeline is marked wherever its figures appear
    prompts = prompt_section(marked, out, n_resamples, seed)  # [qa] prompts / repeats side by side
    if prompts is not None:
        md.append(prompts.summary_note + "\n")
    planted = planted_section(run_dir, marked)  # None unless the corpus has planted turns
    if planted is not None:
        warnings += planted.warnings
    for text in warnings:
        print(fit(f"warning: {text}"), file=sys.stderr)
    md += [f"> **Warning:** {text}\n" for text in warnings]
    aliases = _aliases(run_dir)
    if aliases:
        md.append("Aliases (same memory as another pipeline, run once, rows copied; see spec.json `aliases`): "
                  + "; ".join(f"`{a['pipeline']}` = `{a['same_as']}` ({', '.join(a['because'])})" for a in aliases)
                  + "\n")
    if any(simulated.values()):
        md.append("Rows marked (simulated) come from the simulated server: their latency and cost are not real.\n")
    # columns that are the same on every row (one backend, one embedder) go in a line above the table
    constant = [k for k in keys if k != "pipeline" and summary[k].nunique(dropna=False) == 1]
    if constant:
        md.append("  ·  ".join(f"{k}: {summary[k].iloc[0]}" for k in constant) + "\n")
    shown = [k for k in keys if k not in constant]
    md.append(format_markdown(summary, shown, expand_metrics(list(summary.columns), MARKDOWN_METRICS)))
    md.append("All metrics, with CIs: summary.csv and metrics.csv.\n")
    rates_line = error_rates_line(df)  # each judge's measured TPR/FPR beside the judged figures above
    if rates_line is not None:
        md.append(rates_line)
    if planted is not None:
        md.append(planted.markdown())
    paired_cluster = cluster or ("conversation_id" if "conversation_id" in df.columns else None)
    paired = paired_section(marked, lead_metric(summary, df, metric), out, cluster=paired_cluster,
                            n_resamples=n_resamples, seed=seed)
    md.append(paired.markdown())
    written += [f for f in paired.files if f.suffix == ".csv"]
    judges = judge_section(marked, out)
    if judges is not None:
        md.append(judges.markdown())
        written += judges.files
    split, ceilings = split_section(marked, n_resamples, seed), ceiling_section(marked, n_resamples, seed)
    frontier = frontier_section(_degraded.relabel(summary, degraded), marked,
                                headline_metric([str(c) for c in summary.columns]), ceiling_names(),
                                n_resamples=n_resamples, seed=seed)
    sections: list[TableSection] = [s for s in (split, ceilings, prompts, frontier) if s is not None]
    # retrieval and answering apart (with the ceilings' distances in its figure); the ceilings; answer
    # prompts and repeats side by side; the frontier
    if split is not None:
        split.figures += [f for f in [split_figure(split, ceilings, out / "retrieval_and_answering.png")] if f]
    if frontier is not None:
        frontier.figures += [f for f in [frontier_figure(frontier, out / "frontier.png")] if f]
    md += [section.markdown() for section in sections]
    written += prompts.files if prompts is not None else []
    if by_cat is not None and metric is not None:
        md += [f"\n## {metric} by probe category\n", _category_caption(df, category_scheme) + "\n",
               format_markdown(_degraded.relabel(_ci_wide(by_cat, metric), degraded).drop(columns=constant),
                               shown + [category_col])]
    if by_origin is not None and metric is not None:
        md += [f"\n## {metric} by probe origin\n",
               "Planted probes (`plant_probes`: facts inserted into your history, exact evidence), drafted "
               "probes (model-written from your history, reviewed) and the dataset's own (`source`) are "
               "scored apart: a planted fact sits in a session of its own, so it may be easier or harder "
               "to find than a fact in real conversation.\n",
               format_markdown(_degraded.relabel(_ci_wide(by_origin, metric), degraded).drop(columns=constant),
                               shown + ["probe_origin"])]
    md += _degraded.markdown(run_dir, df, degraded)
    written.append(out / "summary.md")
    written[-1].write_text("\n".join(md), encoding="utf-8")

    plot_df = _plot_labels(marked, keys)
    simulated = _simulated(plot_df)
    drawn: list[Path | None] = []
    if metric is not None:
        drawn.append(quality_vs_cost(plot_df, metric, simulated, out / "quality_vs_cost.png"))
        drawn.append(by_category(plot_df, metric, category_col, simulated, out / "by_category.png"))
    drawn.append(quality_vs_context_tokens(plot_df, "answer_in_context", simulated,
                                           out / "quality_vs_context_tokens.png", n_resamples=n_resamples, seed=seed))
    drawn.append(latency_boxes(plot_df, simulated, out / "latency.png"))
    drawn += [f for f in paired.files if f.suffix == ".png"]
    plots = [p for p in drawn if p is not None]

    columns = expand_metrics(list(summary.columns), MARKDOWN_METRICS)
    category_table = None
    if by_cat is not None and metric is not None:
        category_table = format_cells(_degraded.relabel(_ci_wide(by_cat, metric), degraded).drop(columns=constant),
                                      shown + [category_col])
    notes = [line.strip().replace("`", "") for line in md[1:]
             if line.strip() and not line.strip().startswith(("|", ">", "#")) and "summary.csv" not in line]
    n_probes = df.loc[df["probe_id"].astype(str) != "", ["conversation_id", "probe_id"]].drop_duplicates().shape[0] \
        if {"probe_id", "conversation_id"} <= set(df.columns) else 0
    top = headline(summary, headline_metric([str(c) for c in summary.columns]), shown, degraded,
                   ceiling_pipelines(df))
    page = ReportPage(f"Report: {run_dir.name}", notes, warnings, format_cells(summary, shown, columns),
                      category_table, plots, probe_views(run_dir, df), n_probes, paired, judges,
                      headline=top, planted=planted, sections=sections)
    (out / "report.html").write_text(render_html(page), encoding="utf-8")
    in_sections = [*(judges.figures if judges is not None else []), *(f for s in sections for f in s.figures)]
    files = WrittenReport(written + plots + in_sections
                          + [out / "report.html"])
    files.headline = top
    return files


def _plot_labels(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Plots group by ``pipeline``; when a run varies backend or embedder, fold them into that label."""
    if not any(df[k].nunique(dropna=False) > 1 for k in keys if k != "pipeline"):
        return df
    return df.assign(pipeline=row_pipeline_labels(df))


def _aliases(run_dir: Path) -> list[dict]:
    """The ``aliases`` recorded in the run's ``spec.json`` (none when there is no spec)."""
    path = run_dir / "spec.json"
    if not path.exists():
        return []
    try:
        return list(read_spec(path).get("aliases") or [])
    except ConfigError:  # not JSON, not an object, or a spec version this lyra-lab does not read
        return []


def _simulated(df: pd.DataFrame) -> dict[str, bool]:
    if "simulated" not in df.columns:
        return {}
    return {str(p): bool(s.astype(bool).any()) for p, s in df.groupby("pipeline")["simulated"]}


def _category_caption(df: pd.DataFrame, scheme: str | None) -> str:
    """What a category table's figures rest on: the label mapping, the QA scorer and the judges."""
    labels = f"categories labelled by the `{scheme}` mapping" if scheme else \
        "categories as the dataset names them (LongMemEval: question type; LoCoMo: its integers)"
    scorers = sorted(str(s) for s in df["qa.scorer"].dropna().unique()) if "qa.scorer" in df.columns else []
    judges = sorted(str(j) for j in df.loc[df["metric"] == "judge", "judge"].dropna().unique()) \
        if "judge" in df.columns else []
    return "; ".join([labels, f"QA scorer: {', '.join(scorers) if scorers else 'no QA'}",
                      f"judge: {', '.join(judges) if judges else 'none'}"]) + "."


def _ci_wide(agg: pd.DataFrame, metric: str) -> pd.DataFrame:
    return agg.drop(columns="metric").rename(
        columns={"mean": metric, "ci_low": f"{metric}_ci_low", "ci_high": f"{metric}_ci_high", "n": f"{metric}_n"}
    )
