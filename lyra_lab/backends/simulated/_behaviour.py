"""What the simulated server does with each request: its spec, faults, latency and reply.

Kept apart from the HTTP plumbing (``_server.py``) so the behaviour model
can be read, and tested, on its own.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from lyra_lab.backends.simulated._judge import SimulatedJudge

# What a request can be made to do. Status codes answer with a provider-style
# JSON error; "hang" holds the request past any sane client timeout;
# "malformed" answers 200 with broken JSON; "cut" ends a stream before it finishes.
ERROR_STATUSES = {"400": 400, "429": 429, "500": 500, "502": 502, "503": 503, "504": 504, "529": 529}
OUTCOMES = frozenset({"ok", "hang", "malformed", "cut", *ERROR_STATUSES})

SIMULATED_FINGERPRINT = "lyra-lab-simulated"  # the system_fingerprint of every simulated answer
_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_error",
                529: "overloaded_error"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PIECE = re.compile(r"\S+")


@dataclass(frozen=True)
class FaultRule:
    """A scripted fault for the chat requests that match: one named call made to fail, say on every attempt.

    A request matches when its messages' text contains every string of
    ``contains`` and none of ``excludes``. The rule lets the first ``skip``
    matching requests through, then gives the next ``times`` of them
    ``outcome`` (``times`` None: every matching request from then on, so a
    call fails on every attempt).

    Attributes:
        outcome: what a struck request gets (``"503"``, ``"hang"``, ``"malformed"``…; see ``OUTCOMES``).
        contains: strings that must all appear in the request's messages.
        excludes: strings none of which may appear.
        skip: matching requests let through before the rule strikes (the Nth request: ``skip = N - 1``).
        times: how many matching requests it strikes (None: all of them).

    >>> FaultRule("503", contains=("item5",), excludes=("Combine the summaries",))
    FaultRule(outcome='503', contains=('item5',), excludes=('Combine the summaries',), skip=0, times=None)
    """

    outcome: str
    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    skip: int = 0
    times: int | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES or self.outcome == "ok":
            raise ValueError(f"fault rule: unknown outcome {self.outcome!r}; known: "
                             f"{', '.join(sorted(OUTCOMES - {'ok'}))}")
        for name in ("contains", "excludes"):
            value = (getattr(self, name),) if isinstance(getattr(self, name), str) else tuple(getattr(self, name))
            if not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"fault rule: {name} must be non-empty strings, got {value!r}")
            object.__setattr__(self, name, value)
        if isinstance(self.skip, bool) or not isinstance(self.skip, int) or self.skip < 0:
            raise ValueError(f"fault rule: skip must be an integer >= 0, got {self.skip!r}")
        if self.times is not None and (isinstance(self.times, bool) or not isinstance(self.times, int)
                                       or self.times < 1):
            raise ValueError(f"fault rule: times must be an integer >= 1 or None, got {self.times!r}")

    def matches(self, text: str) -> bool:
        """Whether a request whose messages hold ``text`` is one this rule is about."""
        return all(c in text for c in self.contains) and not any(e in text for e in self.excludes)


@dataclass(frozen=True)
class SimulatedSpec:
    """How the simulated server behaves.

    Attributes:
        model: model name it reports.
        latency_s: time to first token: fixed, or the median of a lognormal.
        latency_sigma: > 0 draws latency from a lognormal with this sigma (seeded).
        tokens_per_s: generation rate after the first token (None: instant).
        max_concurrency: requests served at once; more wait in a FIFO queue.
        rate_limit_rps: token-bucket rate; a request over it gets 429 + Retry-After.
        rate_limit_burst: bucket size.
        fault_rates: outcome → probability per request (e.g. ``{"503": 0.1}``).
        fault_rules: scripted faults for requests that match (``FaultRule``),
            checked in order after the ``enqueue`` script and before the random draw.
        retry_after_s: ``Retry-After`` sent with injected 429s (None: no header).
        hang_s: how long a "hang" holds the request (ended early by ``stop``).
        include_usage: report usage (false: a server that omits it).
        reject_stream_options: answer 400 to requests carrying ``stream_options``.
        default_max_tokens: reply length cap when a request sets none.
        embedding_dim: dimension of ``/v1/embeddings`` vectors.
        embedding_tokens_per_s: the embeddings endpoint's speed, GPU-shaped: one device
            embeds the requests' batches one after another at this many tokens a second
            (None: instantly). ``embedding_latency_s`` is added to each request before it
            queues (network and tokenizing).
        embedding_max_batch: inputs a request may hold; more get 413, as TEI answers.
        embedding_base64: offer ``encoding_format="base64"`` (false: 400, as servers that lack it).
        seed: seeds fault draws, latency draws and reply choice.
        api_key: if set, requests without ``Authorization: Bearer <api_key>``
            get 401, whose message (like a careless provider's) repeats the
            key they sent.
        judge: how judge prompts are answered (``SimulatedJudge``: a simulated judge with set
            error rates); None: they get the usual extractive reply.
    """

    model: str = "simulated-llm"
    latency_s: float = 0.0
    latency_sigma: float = 0.0
    tokens_per_s: float | None = None
    max_concurrency: int | None = None
    rate_limit_rps: float | None = None
    rate_limit_burst: int = 1
    fault_rates: Mapping[str, float] = field(default_factory=dict, hash=False)
    fault_rules: tuple[FaultRule, ...] = ()
    retry_after_s: float | None = 1.0
    hang_s: float = 30.0
    include_usage: bool = True
    reject_stream_options: bool = False
    default_max_tokens: int = 64
    embedding_dim: int = 64
    embedding_tokens_per_s: float | None = None
    embedding_latency_s: float = 0.0
    embedding_max_batch: int | None = None
    embedding_base64: bool = True
    seed: int = 0
    api_key: str | None = field(default=None, repr=False)
    judge: SimulatedJudge | None = None

    def __post_init__(self) -> None:
        if self.latency_s < 0 or self.latency_sigma < 0 or self.hang_s < 0:
            raise ValueError("latency_s, latency_sigma and hang_s must be >= 0")
        if self.tokens_per_s is not None and self.tokens_per_s <= 0:
            raise ValueError("tokens_per_s must be > 0 (or None for instant)")
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1 (or None for unlimited)")
        if self.rate_limit_rps is not None and self.rate_limit_rps <= 0:
            raise ValueError("rate_limit_rps must be > 0 (or None for no limit)")
        if self.rate_limit_burst < 1 or self.default_max_tokens < 1 or self.embedding_dim < 1:
            raise ValueError("rate_limit_burst, default_max_tokens and embedding_dim must be >= 1")
        if (self.embedding_tokens_per_s is not None and self.embedding_tokens_per_s <= 0) \
                or self.embedding_latency_s < 0 or (self.embedding_max_batch is not None and self.embedding_max_batch < 1):
            raise ValueError("embedding_tokens_per_s and embedding_max_batch must be > 0 (or None), "
                             "embedding_latency_s >= 0")
        bad = sorted(set(self.fault_rates) - OUTCOMES)
        if bad:
            raise ValueError(f"unknown fault {bad[0]!r}; known: {', '.join(sorted(OUTCOMES))}")
        if any(not 0 <= p <= 1 for p in self.fault_rates.values()) or sum(self.fault_rates.values()) > 1:
            raise ValueError("fault_rates must be probabilities summing to at most 1")
        object.__setattr__(self, "fault_rates", dict(self.fault_rates))  # a private copy
        # rules given as plain dicts (a spec sent to a server in another process) become FaultRules
        rules = tuple(r if isinstance(r, FaultRule) else FaultRule(**r) for r in self.fault_rules)
        object.__setattr__(self, "fault_rules", rules)
        if isinstance(self.judge, Mapping):  # a spec sent to a server in another process
            object.__setattr__(self, "judge", SimulatedJudge(**self.judge))


class _RuleState:
    """A fault rule and how many matching requests it has seen."""

    def __init__(self, rule: FaultRule):
        self.rule = rule
        self.seen = 0

    def strikes(self, text: str) -> bool:
        if not self.rule.matches(text):
            return False
        self.seen += 1
        struck = self.seen - self.rule.skip
        return struck >= 1 and (self.rule.times is None or struck <= self.rule.times)


class Behaviour:
    """The mutable side of a spec: the fault script and rules, seeded draws, the rate-limit bucket."""

    def __init__(self, spec: SimulatedSpec):
        self.spec = spec
        self._lock = threading.Lock()
        self._script: deque[str] = deque()
        self._rules = [_RuleState(r) for r in spec.fault_rules]
        self._faults = random.Random(spec.seed)
        self._latency = random.Random(spec.seed + 1)
        self._tokens = float(spec.rate_limit_burst)
        self._refilled = time.monotonic()

    def enqueue(self, outcomes: Sequence[str]) -> None:
        bad = [o for o in outcomes if o not in OUTCOMES]
        if bad:
            raise ValueError(f"unknown outcome {bad[0]!r}; known: {', '.join(sorted(OUTCOMES))}")
        with self._lock:
            self._script.extend(outcomes)

    def add_rule(self, rule: FaultRule) -> int:
        """Add a fault rule (after the spec's and earlier ones); return its index in ``RequestRecord.rule``."""
        if not isinstance(rule, FaultRule):
            raise TypeError(f"add_rule needs a FaultRule, got {type(rule).__name__}")
        with self._lock:
            self._rules.append(_RuleState(rule))
            return len(self._rules) - 1

    def clear(self) -> None:
        """Drop the unused script and the rules added at run time; the spec's rules start counting afresh."""
        with self._lock:
            self._script.clear()
            self._rules = [_RuleState(r) for r in self.spec.fault_rules]

    def next_outcome(self, text: str = "") -> str:
        """The next scripted outcome, else the first fault rule ``text`` triggers, else a seeded draw."""
        return self.decide(text)[0]

    def decide(self, text: str = "") -> tuple[str, int | None]:
        """``(outcome, index of the rule that struck or None)`` for a request whose messages hold ``text``.

        Every rule that matches counts the request (so ``skip`` counts matching requests, whatever decided them).
        """
        with self._lock:
            struck = [i for i, state in enumerate(self._rules) if state.strikes(text)]
            if self._script:
                return self._script.popleft(), None
            if struck:
                return self._rules[struck[0]].rule.outcome, struck[0]
            draw, total = self._faults.random(), 0.0
            for outcome, p in sorted(self.spec.fault_rates.items()):
                total += p
                if draw < total:
                    return outcome, None
            return "ok", None

    def rate_limit_wait(self) -> float:
        """0 if a request may pass now (and take a token), else seconds until it could."""
        rps = self.spec.rate_limit_rps
        if rps is None:
            return 0.0
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.spec.rate_limit_burst, self._tokens + (now - self._refilled) * rps)
            self._refilled = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / rps

    def latency(self) -> float:
        if self.spec.latency_sigma <= 0 or self.spec.latency_s <= 0:
            return self.spec.latency_s
        with self._lock:
            return self._latency.lognormvariate(math.log(self.spec.latency_s), self.spec.latency_sigma)


def error_body(status: int, message: str) -> dict[str, Any]:
    """A provider-style error body."""
    kind = _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": str(status)}}


def count_pieces(messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt "tokens" as the simulated server counts them: whitespace-separated pieces."""
    return sum(len(_PIECE.findall(_text(m.get("content")))) for m in messages)


def extractive_reply(messages: Sequence[Mapping[str, Any]], max_tokens: int,
                     seed: int = 0) -> tuple[list[str], str]:
    """Real sentences of the last user message, chosen by a seeded hash, capped at ``max_tokens`` pieces.

    Returns:
        The reply's pieces (words, each a "token") and its finish reason
        (``"length"`` when the cap cut it).
    """
    user = [m for m in messages if m.get("role") == "user"] or list(messages)
    text = _text(user[-1].get("content")) if user else ""
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if not sentences:
        return ["Nothing", "to", "say."][:max_tokens], "stop"
    rank = sorted(range(len(sentences)),
                  key=lambda i: hashlib.blake2b(f"{seed}\x00{sentences[i]}".encode(), digest_size=8).digest())
    chosen, words = [], 0
    for i in rank:
        chosen.append(i)
        words += len(_PIECE.findall(sentences[i]))
        if words >= max_tokens:
            break
    pieces = [p for i in sorted(chosen) for p in _PIECE.findall(sentences[i])]
    if len(pieces) > max_tokens:
        return pieces[:max_tokens], "length"
    return pieces, "stop"


def messages_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of every message, one per line: what fault rules match against."""
    return "\n".join(_text(m.get("content")) for m in messages if isinstance(m, Mapping))


def _text(content: object) -> str:
    # Content may be a list of parts ({"type": "text", "text": ...}).
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(content or "")


_FEATURE_WORD = re.compile(r"\w+")


class _FeatureHashes(dict[str, int]):
    """feature -> its 64-bit blake2b hash, computed on first lookup; emptied when it reaches ``MAX`` features.

    A dict's own ``__getitem__`` mapped over the features (about half the cost of an ``lru_cache`` lookup).
    """

    MAX = 1 << 18

    def __missing__(self, feature: str) -> int:
        if len(self) >= self.MAX:
            self.clear()
        value = self[feature] = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(),
                                               "little")
        return value


_feature_hash = _FeatureHashes().__getitem__


def hashed_vectors(texts: Sequence[str], dim: int) -> np.ndarray:
    """Deterministic unit vectors from hashed word uni- and bigrams (the simulated embedding model).

    The simulated server's ``/v1/embeddings`` and the in-process ``HashingEmbedder`` both use it.
    Each feature (a lower-cased word, or two adjacent ones joined by a space) adds +1 or -1
    (the top bit of its 64-bit hash) to bin ``hash % dim`` of its text's row; rows are then
    scaled to unit length.

    >>> v = hashed_vectors(["a cat", "a cat", ""], 8)
    >>> v.shape, bool((v[0] == v[1]).all()), float(v[2].sum())
    ((3, 8), True, 0.0)
    """
    features = [_features(text) for text in texts]
    hashes = np.array(list(map(_feature_hash, itertools.chain.from_iterable(features))), dtype=np.uint64)
    cells = (hashes % np.uint64(dim)).astype(np.int64)
    if len(texts) > 1:
        cells += np.repeat(np.arange(0, len(texts) * dim, dim), list(map(len, features)))
    signs = np.where(hashes >> np.uint64(63), 1.0, -1.0)
    # Integer sums of +-1 are exact in any order: the float32 rows are those of adding features one by one.
    out = np.bincount(cells, weights=signs, minlength=len(texts) * dim).reshape(len(texts), dim).astype(np.float32)
    for row in out:
        norm = np.sqrt(row.dot(row))  # np.linalg.norm(row), without its checks
        if norm > 0:
            row /= norm
    return out


def _features(text: str) -> list[str]:
    words = list(map(str.lower, _FEATURE_WORD.findall(text)))
    return words + list(map(" ".join, zip(words, words[1:])))
