"""The command line of the synthetic generator: ``python -m lyra_lab.synthetic --seed 0 --out FILE``.

Regenerate the committed dataset with::

    python -m lyra_lab.synthetic --seed 0 --out datasets/synthetic_small.jsonl

and the demo's denser one with the command in ``datasets/README.md``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from lyra_lab._registry import ConfigError
from lyra_lab.synthetic._corpus import SyntheticShape, category_counts, generate_synthetic

# The probes-per-category options: the flag and the SyntheticShape field it sets.
_PROBE_FLAGS: tuple[tuple[str, str], ...] = (
    ("--single-facts", "single_facts"), ("--updated-facts", "updated_facts"), ("--temporal", "temporal"),
    ("--multi-hop", "multi_hop"), ("--abstention", "abstention"))


def main(argv: Sequence[str] | None = None) -> int:
    """Write a synthetic corpus: ``python -m lyra_lab.synthetic --seed 0 --out FILE``."""
    parser = argparse.ArgumentParser(prog="python -m lyra_lab.synthetic",
                                     description="Generate the seeded synthetic corpus with planted facts.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output path (lyra-lab native JSONL)")
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=16, help="sessions per conversation")
    parser.add_argument("--months", type=int, default=4)
    for flag, field in _PROBE_FLAGS:
        parser.add_argument(flag, type=int, default=getattr(SyntheticShape, field), dest=field,
                            help=f"{field.replace('_', ' ')} probes per conversation (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        corpus = generate_synthetic(args.seed, conversations=args.conversations, sessions=args.sessions,
                                    months=args.months, single_facts=args.single_facts,
                                    updated_facts=args.updated_facts, temporal=args.temporal,
                                    multi_hop=args.multi_hop, abstention=args.abstention)
        path = corpus.save(args.out)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = corpus.stats()
    per_category = ", ".join(f"{k} {v}" for k, v in category_counts(corpus).items())
    print(f"wrote {path}: {stats['conversations']} conversations, {stats['sessions']} sessions, "
          f"{stats['turns']} turns, {stats['probes']} probes ({per_category}), "
          f"{stats['first'][:10]} to {stats['last'][:10]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
