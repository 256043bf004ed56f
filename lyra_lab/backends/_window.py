"""``context_window(spec)``: how many tokens the window of the model a backend spec answers with holds.

One home for the figure every consumer reads (the ``full_context`` ceiling's room, the plan):

* a spec's own ``context_window = N`` key (any preset, or a table of ``BackendConfig`` fields) wins:
  a positive integer, else one ``ConfigError`` line; for the ``local`` preset at most the server's
  ``n_ctx`` (``DEFAULT_N_CTX``), which lyra-lab starts it with;
* ``local`` (and ``fake``, which stands in for it in tests): the local server's ``n_ctx``,
  ``DEFAULT_N_CTX`` = 8,192, SmolLM2's trained context;
* ``openai/<model>`` and ``simulated`` (a stand-in for a cloud API): 128,000, the window of
  gpt-4o and gpt-4o-mini on OpenAI's model pages (models with a larger one, gpt-4.1's 1,047,576,
  need ``context_window`` to use it; an older model with a smaller one needs it too);
* a server lyra-lab does not start (``ollama``, ``vllm``, ``llamacpp``, a table of fields): 4,096,
  Ollama's default below 24 GiB of VRAM (ollama ``docs/context-length.mdx``); such a server sets
  its own (vLLM: the model's ``max_model_len``; llama.cpp: ``--ctx-size``): say yours.

>>> context_window("local"), context_window("openai/gpt-4o-mini"), context_window({"preset": "local",
...     "context_window": 4096})
(8192, 128000, 4096)
"""

from __future__ import annotations

from typing import Any, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.backends._local_server import DEFAULT_N_CTX

#: The backend spec key that sets the answerer's window (stripped before the backend is built).
WINDOW_KEY = "context_window"
CLOUD_WINDOW = 128_000  # gpt-4o, gpt-4o-mini (OpenAI's model pages)
SERVED_WINDOW = 4_096  # Ollama's default context below 24 GiB VRAM (ollama docs/context-length.mdx)
_BY_PRESET = {"local": DEFAULT_N_CTX, "fake": DEFAULT_N_CTX, "openai": CLOUD_WINDOW, "simulated": CLOUD_WINDOW}


def context_window(spec: str | Mapping[str, Any] | object) -> int:
    """The tokens the window of ``spec``'s model holds (see the module docstring for where each comes from).

    ``spec`` is a backend spec (a preset name or a table); a built backend that carries an
    integer ``context_window`` attribute gives it, any other the local server's ``n_ctx``.

    Raises:
        ConfigError: a ``context_window`` that is not a positive integer, or, for the ``local``
            preset, above the server's ``n_ctx``.
    """
    if isinstance(spec, str):
        spec = {"preset": spec}
    if not isinstance(spec, Mapping):
        own = getattr(spec, WINDOW_KEY, None)
        return own if isinstance(own, int) and not isinstance(own, bool) and own > 0 else DEFAULT_N_CTX
    kind = str(spec.get("preset", "")).partition("/")[0]
    if WINDOW_KEY in spec:
        return _checked(spec[WINDOW_KEY], kind)
    return _BY_PRESET.get(kind, SERVED_WINDOW)


def _checked(value: object, kind: str) -> int:
    where = f"backend preset {kind!r}" if kind else "backend"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: context_window must be a positive integer (tokens), got {value!r}")
    if kind == "local" and value > DEFAULT_N_CTX:
        raise ConfigError(f"backend preset 'local': context_window {value} is above the local server's "
                          f"n_ctx {DEFAULT_N_CTX}, which lyra-lab starts it with")
    return value


def without_window(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` without its ``context_window`` key, checked first (what the backend is built from)."""
    out = dict(spec)
    if WINDOW_KEY in out:
        _checked(out.pop(WINDOW_KEY), str(spec.get("preset", "")).partition("/")[0])
    return out
