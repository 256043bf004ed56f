"""Make probes for your own history: plant facts offline, or have a model draft questions.

Usage::

    lyra-lab probes plant EXPORT [--n 60] [--kinds single_fact,...] [--seed 0] [--language auto]
                             [--max-share 0.3] --out planted.jsonl
    lyra-lab probes draft EXPORT [--backend local] [--style json|qa] [--n 100] [--sessions 20] --out drafts.jsonl

``plant`` writes the export with planted evidence sessions and their probes as a
lyra-lab corpus (``lyra_lab.load`` reads both back), written in the history's main language where
a phrasebook exists (``lyra_lab.synthetic.PLANT_LANGUAGES``: en, ko, fr, es, de, pt, it, ja, zh); otherwise
it says plainly that planted text is in another language.  It prints planted turns' share of the
history's turns and warns when they are more than ``--max-share``.  ``draft`` writes a probes
file (``lyra_lab.load_probes``) of model-written, checked questions (``--style qa``, the
default for the bundled ``local`` model, asks for one ``A:``/``Q:`` pair per fact-stating
user turn; ``json``, the default otherwise, for several JSON drafts per session); responses are
cached next to ``--out`` so a re-run pays nothing.  Conversation text goes to a
non-local endpoint only after a notice and ``--yes`` (or a "y" at the prompt).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lyra_lab._terminal import fit
from lyra_lab.corpus import load
from lyra_lab.synthetic import (
    CATEGORIES,
    MAX_SHARE,
    PLANT_LANGUAGES,
    plant_probes,
    planted_counts,
    planted_share_warnings,
    planting_warnings,
)

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab probes`` and its options on ``subparsers``."""
    parser = subparsers.add_parser("probes", help="plant or draft probes for your own conversation history",
                                   description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="probes_command", metavar="ACTION", required=True)
    plant = sub.add_parser("plant", help="insert sessions with planted facts and probes about them (offline)")
    plant.add_argument("path", metavar="EXPORT", help="any file lyra-lab imports (export, JSONL, saved corpus)")
    plant.add_argument("--format", default="auto", help="read EXPORT as this format (default: auto)")
    plant.add_argument("--n", type=int, default=60, help="probes to plant (default 60)")
    plant.add_argument("--kinds", default=",".join(CATEGORIES), help="comma-separated probe kinds")
    plant.add_argument("--seed", type=int, default=0)
    plant.add_argument("--language", default="auto", choices=("auto", *PLANT_LANGUAGES),
                       help="write planted text in this language (default auto: the history's main language "
                            "where templates exist, else English with a warning)")
    plant.add_argument("--max-share", type=float, default=MAX_SHARE, metavar="SHARE",
                       help="shorten planted sessions so planted turns are at most this share of a "
                            f"conversation's turns, and warn past it (default {MAX_SHARE})")
    plant.add_argument("--out", required=True, metavar="FILE", help="write the planted corpus here")
    draft = sub.add_parser("draft", help="have a model draft questions about sampled sessions, checked")
    draft.add_argument("path", metavar="EXPORT")
    draft.add_argument("--format", default="auto")
    draft.add_argument("--backend", default="local", help="backend preset (default: local)")
    draft.add_argument("--n", type=int, default=100, help="stop after this many kept probes")
    draft.add_argument("--sessions", type=int, default=20, help="sessions to sample (default 20)")
    draft.add_argument("--seed", type=int, default=0)
    draft.add_argument("--style", choices=("json", "qa"),
                       help="json: JSON drafts per session (capable models); qa: one A:/Q: pair per user turn "
                            "(small models) (default: qa for --backend local, json otherwise)")
    draft.add_argument("--judge", metavar="BACKEND",
                       help="also keep drafts whose answer is a paraphrase if this backend judges the evidence "
                            "states it (default: only answers whose words are in the evidence)")
    draft.add_argument("--cache", metavar="FILE", help="response cache (default: <out>.responses.sqlite)")
    draft.add_argument("--yes", action="store_true", help="agree to send conversation text to a remote endpoint")
    draft.add_argument("--out", required=True, metavar="FILE", help="write the kept probes here (JSONL)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab probes`` with the parsed ``args``; the exit code (0: done)."""
    if args.probes_command == "plant":
        return _plant(args)
    return _draft(args)


def _plant(args: argparse.Namespace) -> int:
    corpus = load(args.path, args.format)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    planted = plant_probes(corpus, n=args.n, kinds=kinds, seed=args.seed, language=args.language,
                           max_share=args.max_share)
    path = planted.save(args.out)
    counts = planted_counts(planted)
    sessions = sum(1 for c in planted.conversations for s in c.sessions if s.meta.get("planted"))
    turns = sum(1 for t in planted.turns() if t.meta.get("planted"))
    kept = sum(counts.values())
    print(f"wrote {path}: {kept} planted probes ({', '.join(f'{k} {v}' for k, v in counts.items() if k in kinds)})")
    real = corpus.stats()["turns"]
    share = turns / (turns + real) if turns else 0.0
    print(f"  {sessions} planted sessions, {turns} planted turns beside {real:,} real turns")
    print(f"  planted turns: {share:.0%} of all turns (held to at most {args.max_share:.0%} per conversation "
          "where it fits)")
    pairs = sorted({(str(c.meta["planted"].get("language")), str(c.meta["planted"].get("history_language")))
                    for c in planted.conversations if isinstance(c.meta.get("planted"), dict)})
    for written, history in pairs:
        print(f"  planted text in {written}" + (", the history's own language" if written == history
                                                 else f"; the history's main language: {history}"))
    for line in planting_warnings(planted) + planted_share_warnings(planted):
        print(fit(f"  warning: {line}"), file=sys.stderr)
    if kept < args.n:
        print(f"  {args.n - kept} fewer than --n {args.n}: the gaps between sessions ran out (a longer history "
              "has more)", file=sys.stderr)
    return 0


def _draft(args: argparse.Namespace) -> int:
    from lyra_lab.backends import CachedBackend, ResponseCache, make_backend
    from lyra_lab.commands._consent import agree
    from lyra_lab.probes import draft_probes, endpoint_of, is_local_endpoint, save_probes

    corpus = load(args.path, args.format)
    backend = make_backend(args.backend)
    judge = make_backend(args.judge) if args.judge else None
    for model in (backend, judge):
        if model is None:
            continue
        endpoint = endpoint_of(model)
        if not is_local_endpoint(endpoint):
            agree(f"drafting sends the text of up to {args.sessions} of your sessions to {endpoint} "
                  f"({model.name}/{model.model}).", "send them?", args.yes,
                  "not sending conversation text to a remote endpoint: pass --yes to agree")
    style = args.style or ("qa" if args.backend == "local" else "json")
    out = Path(args.out)
    cache = ResponseCache(args.cache or out.with_name(out.name + ".responses.sqlite"))
    try:
        result = draft_probes(corpus, CachedBackend(backend, cache), n=args.n, sessions=args.sessions,
                              seed=args.seed, style=style,
                              judge=CachedBackend(judge, cache) if judge is not None else None)
    finally:
        cache.close()
    save_probes(result.probes, out)
    print(f"wrote {out}: kept {len(result.probes)} of {result.drafted} drafted probes "
          f"({style} style, {result.calls} model calls, {cache.hits} answered from the cache {cache.path})")
    if judge is not None:
        print(f"  judge {judge.name}/{judge.model}: asked {result.judge_calls} times about paraphrased answers, "
              f"kept {result.judge_kept}")
    for reason, count in sorted(result.dropped.items(), key=lambda kv: -kv[1]):
        print(f"  dropped {count}: {reason}")
    return 0
