"""Many completions on a bounded thread pool, errors kept in place of results."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Sequence

from lyra_lab.backends._types import Backend, BackendError, Completion, Message


def complete_many(
    backend: Backend, batch: Sequence[Sequence[Message]], *, max_concurrency: int,
    progress: bool | None = None, **params: Any,
) -> list[Completion | BackendError]:
    """Complete every message list in ``batch`` with at most ``max_concurrency`` calls in flight.

    Returns:
        One entry per input, in input order: a ``Completion``, or the
        ``BackendError`` of a call that failed for good (other errors raise).
        ``progress=None`` shows a tqdm bar only on a terminal.
    """
    from tqdm.auto import tqdm

    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
    results: list[Completion | BackendError | None] = [None] * len(batch)
    with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix=f"{backend.name}-call") as pool:
        futures = {pool.submit(backend.complete, messages, **params): i for i, messages in enumerate(batch)}
        with tqdm(total=len(batch), desc=f"{backend.name}/{backend.model}", unit="call",
                  disable=None if progress is None else not progress) as bar:
            try:
                for future in as_completed(futures):
                    try:
                        results[futures[future]] = future.result()
                    except BackendError as exc:
                        results[futures[future]] = exc
                    bar.update(1)
            except BaseException:
                for future in futures:  # an unexpected error: do not start the rest
                    future.cancel()
                raise
    return results  # type: ignore[return-value]
