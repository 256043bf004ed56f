"""Replay one LoCoMo conversation through a rollup and print what the memory became.

Turns are added in time order; the rollup compacts after every session, on the
replay clock (``now`` = the last turn's time).  Prints LLM calls, digests by
level, tokens under the budget, dropped turns and wall time.  Asserts nothing.

    .venv/bin/python benchmarks/rollup_locomo.py [--rollup time_ladder] [--budget 2000] [--local]
"""

from __future__ import annotations

import argparse
import collections
import time

from lyra_lab import datasets
from lyra_lab.backends import FakeLLM, Usage, token_counter
from lyra_lab.corpus import load
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.rollup import ROLLUPS, CompactRequest, render_memory

DATASET = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollup", default="time_ladder", choices=ROLLUPS.names())
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--conversation", type=int, default=0)
    parser.add_argument("--sessions", type=int, default=0, help="stop after N sessions (0: all)")
    parser.add_argument("--local", action="store_true", help="the bundled SmolLM2 server instead of FakeLLM")
    args = parser.parse_args()
    if not DATASET.exists():
        raise SystemExit(datasets.missing_message("locomo"))
    conversation = load(DATASET).conversations[args.conversation]
    if args.local:
        from lyra_lab.backends._presets import make_backend

        backend = make_backend("local")
    else:
        backend = FakeLLM(respond=lambda msgs: "fake digest " + " ".join(msgs[-1]["content"].split()[-40:]))
    rollup, count = ROLLUPS.build(args.rollup), token_counter("gpt-4o-mini")
    store, usage, dropped, llm_s = MemoryStore(), Usage(), set(), 0.0
    sessions = conversation.sessions[: args.sessions or None]
    started = time.perf_counter()
    for session in sessions:
        store.add([MemoryEntry.from_turn(t) for t in session.turns])
        now = max(t.timestamp for t in session.turns if t.timestamp)
        t0 = time.perf_counter()
        report = rollup.compact(store, conversation.id,
                                CompactRequest(budget=args.budget, backend=backend, now=now, count=count))
        llm_s += time.perf_counter() - t0
        if report.error:
            print(f"session {session.id}: {report.error}")
        usage, dropped = usage + report.usage, dropped | set(report.dropped)
    entries = store.entries(conversation.id)
    levels = collections.Counter((e.kind, e.level) for e in entries)
    turns = sum(len(s.turns) for s in sessions)
    print(f"conversation={conversation.id} sessions={len(sessions)} turns={turns} rollup={rollup!r}")
    print(f"backend={backend.name}/{backend.model} calls={usage.calls} prompt_tokens={usage.prompt_tokens} "
          f"completion_tokens={usage.completion_tokens}")
    print(f"memory: {dict(sorted(levels.items()))} tokens={count(render_memory(entries))} "
          f"budget={args.budget} dropped_turns={len(dropped)}")
    print(f"wall={time.perf_counter() - started:.1f}s of which compact={llm_s:.1f}s")


if __name__ == "__main__":
    main()
