"""Read a conversation export or benchmark file and show what is in it.

Usage: lyra-lab import PATH [--format F] [--probes P] [--name N] [--no-attachments] [--out FILE] [--json].

Prints the counts a user checks first (conversations, sessions, turns by role,
probes, date span) and a per-conversation table; --json prints
Corpus.stats() instead; --out also saves the corpus in lyra-lab's own
format for fast, exact reloading.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from lyra_lab.commands._checks import input_file
from lyra_lab.commands._errors import UsageError
from lyra_lab.corpus import FORMATS, Corpus, load

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers

MAX_ROWS = 12


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab import`` and its options on ``subparsers``."""
    parser = subparsers.add_parser(
        "import", help="import a conversation export or benchmark file and print its statistics",
        description=__doc__.splitlines()[0])
    parser.add_argument("path", metavar="PATH", help="conversations.json, export .zip, locomo10.json, "
                        "LongMemEval JSON, JSONL, Lyra SQLite DB or a saved lyra-lab corpus")
    parser.add_argument("--format", default="auto", choices=("auto", *FORMATS),
                        help="skip content sniffing and read PATH as this format (default: auto)")
    parser.add_argument("--probes", metavar="P", help="probes JSONL to check against the corpus and add to it")
    parser.add_argument("--name", help="corpus name / conversation id for single-user exports (default: file stem)")
    parser.add_argument("--no-attachments", dest="include_attachments", action="store_false",
                        help="leave out ChatGPT canvas documents and Claude attachment text (imported as turns "
                             "marked meta['part'] by default)")
    parser.add_argument("--out", metavar="FILE", help="also save the corpus as lyra-lab JSONL to FILE")
    parser.add_argument("--json", action="store_true", help="print Corpus.stats() as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab import`` with the parsed ``args``; the exit code (0: done)."""
    input_file(args.path, "corpus file")
    if args.probes:
        input_file(args.probes, "probes file")
    if args.out and Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a folder; give a file name")
    corpus = load(args.path, args.format, probes=args.probes, name=args.name,
                  include_attachments=args.include_attachments)
    if args.out:
        corpus.save(args.out)
    if args.json:
        print(json.dumps(corpus.stats(), indent=2, ensure_ascii=False))
    else:
        print_summary(corpus, sys.stdout)
        if args.out:
            print(f"\nsaved to {args.out}")
    return 0


def print_summary(corpus: Corpus, out: TextIO) -> None:
    """A small readable table: totals, then one row per conversation (the first few)."""
    s = corpus.stats()
    span = f"{_day(s['first'])} → {_day(s['last'])}" if s["first"] else "no timestamps"
    rows = [
        ("corpus", f"{s['name']}  ({s['format']}" + (f", sha256 {s['sha256'][:12]}…)" if s["sha256"] else ")")),
        ("source", str(corpus.source)),
        ("conversations", f"{s['conversations']:,}"),
        ("sessions", f"{s['sessions']:,}"),
        ("turns", f"{s['turns']:,}  (user {s['user_turns']:,} · assistant {s['assistant_turns']:,})"
                  + _parts(s["part_turns"])),
        ("probes", f"{s['probes']:,}"),
        ("date span", span),
    ]
    for label, value in rows + _notes(corpus):
        print(f"{label:<14} {value}", file=out)
    print(file=out)
    header = ("conversation", "sessions", "turns", "probes", "first", "last")
    table = [header]
    probe_counts: dict[str, int] = {}
    for probe in corpus.probes:
        probe_counts[probe.conversation_id] = probe_counts.get(probe.conversation_id, 0) + 1
    for conv in corpus.conversations[:MAX_ROWS]:
        stamps = [t.timestamp for t in conv.turns() if t.timestamp is not None]
        table.append((conv.id, f"{len(conv.sessions):,}", f"{sum(len(x.turns) for x in conv.sessions):,}",
                      f"{probe_counts.get(conv.id, 0):,}", _day(min(stamps).isoformat()) if stamps else "-",
                      _day(max(stamps).isoformat()) if stamps else "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        print("  ".join(cells).rstrip(), file=out)
    hidden = len(corpus.conversations) - MAX_ROWS
    if hidden > 0:
        print(f"… and {hidden:,} more conversations", file=out)


def _notes(corpus: Corpus) -> list[tuple[str, str]]:
    """What the importer left out or mended, from the records' meta, so a user can trust the counts."""
    skipped: Counter[str] = Counter()
    pruned = 0
    for conv in corpus.conversations:
        skipped["empty chats"] += conv.meta.get("empty_chats", 0)
        for session in conv.sessions:
            skipped.update(session.meta.get("skipped") or {})
            pruned += session.meta.get("pruned_nodes", 0)
    notes = []
    parts = [f"{kind} {n:,}" for kind, n in sorted(skipped.items()) if n]
    if pruned:
        parts.append(f"edited-away branch nodes {pruned:,}")
    if parts:
        notes.append(("skipped", " · ".join(parts)))
    dropped = sum(len(p.meta.get("dropped_evidence") or ()) for p in corpus.probes)
    mended = sum(1 for p in corpus.probes if "raw_evidence" in p.meta)
    if dropped or mended:
        notes.append(("evidence", (f"{mended:,} probes with ids mended from the source, "
                                  f"{dropped:,} ids dropped (they name no turn)")))
    return notes


def _day(iso: str) -> str:
    return iso[:10]


def _parts(parts: dict[str, int]) -> str:
    """Why there are more turns than messages: ``; 15 of them attachments' text`` (empty when none)."""
    from lyra_lab._terminal import count

    names = {"attachment": ("attachment's text", "attachments' text"), "canvas": ("canvas document", "canvas documents")}
    said = [count(n, *names.get(part, (f"{part} part", f"{part} parts"))) for part, n in parts.items()]
    return f"; of them {', '.join(said)}, a turn each" if said else ""
