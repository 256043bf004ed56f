"""How to reach one OpenAI-compatible endpoint, as a frozen, recordable value.

The API key itself is never part of a config: ``api_key_env`` names the
environment variable that holds it, and ``describe()``/``identity()`` (what
run records and cache keys use) carry neither the key nor URL credentials.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, overload
from urllib.parse import urlsplit, urlunsplit

from lyra_lab._records import Schema, from_record, plain, record, to_record
from lyra_lab._registry import ConfigError
from lyra_lab.backends._prices import Price, price_for
from lyra_lab.backends._retry import DEFAULT_MAX_ATTEMPTS, RetryPolicy
from lyra_lab.backends._types import BackendSpec

_POLICY_NAMES = {"base_delay_s": "retry_base_s", "max_delay_s": "retry_max_s",
                 "max_retry_after_s": "retry_after_max_s"}  # RetryPolicy field -> BackendConfig field
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DUMMY_KEY = "sk-no-key-needed"  # local servers ignore the key but the client wants one


def _scrub(fields: dict[str, Any]) -> dict[str, Any]:
    # A record on disk never holds a key: the URL loses its credentials, credential-like params are masked.
    return redact({**fields, "base_url": safe_url(fields["base_url"])})


#: How a backend is reached, not what it answers: how many calls at once, how long one attempt may take, how
#: often and how patiently to retry.  A cell's identity leaves them out (``result_settings``), so tuning a grid's
#: speed never re-runs its finished cells; the run's ``spec.json`` still records them.
TRANSPORT_FIELDS: tuple[str, ...] = ("max_concurrency", "timeout_s", "max_attempts", "retry_base_s", "retry_max_s",
                                     "retry_after_max_s")


def result_settings(spec: BackendSpec) -> BackendSpec:
    """A backend spec without its ``TRANSPORT_FIELDS``: what changes its answers (a cell id hashes this).

    A preset name, or a table that sets none of them, comes back as it is (the same hash as before).
    """
    if isinstance(spec, str) or not any(k in spec for k in TRANSPORT_FIELDS):
        return spec
    return {k: v for k, v in spec.items() if k not in TRANSPORT_FIELDS}


@record(Schema("backend_config", 1, legacy=1, encode=_scrub))
@dataclass(frozen=True)
class BackendConfig:
    """One OpenAI-compatible backend: where it is, what it costs, how patient to be.

    Attributes:
        name: label in results ("openai", "local", "simulated"…).
        base_url: the endpoint, e.g. ``http://127.0.0.1:8080/v1``.
        model: the model name sent with each request.
        api_key_env: NAME of the env var holding the key; None sends a dummy key.
        price_in_per_m: USD per 1M prompt tokens (None: look up the price table).
        price_out_per_m: USD per 1M completion tokens (set both or neither).
        max_concurrency: calls in flight at once through this backend.
        timeout_s: the per-attempt timeout: the bound on every wait for the
            server (connect, first byte, and each stream chunk) within one
            attempt. No caller widens it; a caller's ``deadline`` bounds the
            whole call, retries included.
        max_attempts: attempts per call, the first included (default 8, sized
            to the fault rate: ``lyra_lab.backends._retry``).
        retry_base_s: first backoff delay (doubles per retry, plus jitter).
        retry_max_s: cap on one backoff delay.
        retry_after_max_s: cap on a server's ``Retry-After`` (asked for longer,
            the call still retries after this cap rather than stalling the run).
        simulated: label every completion as simulated (the SimulatedServer).
        stream: stream responses (gives time to first token).
        params: default generation params (``temperature``…); non-OpenAI ones
            such as ``repeat_penalty`` travel in the request's ``extra_body``.
    """

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    price_in_per_m: float | None = None
    price_out_per_m: float | None = None
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    retry_base_s: float = 0.5
    retry_max_s: float = 20.0
    retry_after_max_s: float = 60.0
    simulated: bool = False
    stream: bool = True
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        for attr in ("name", "base_url", "model"):
            if not isinstance(getattr(self, attr), str) or not getattr(self, attr).strip():
                raise ConfigError(f"backend config: {attr} must be a non-empty string")
        if urlsplit(self.base_url).scheme not in ("http", "https") or not urlsplit(self.base_url).netloc:
            raise ConfigError(
                f"backend {self.name!r}: base_url must be an http(s) URL, got {safe_url(self.base_url)!r}")
        if self.api_key_env is not None and not _ENV_NAME.match(str(self.api_key_env)):
            # Never echo the value: it may be the key itself pasted by mistake.
            raise ConfigError(
                f"backend {self.name!r}: api_key_env must be the NAME of an environment variable "
                f"(like OPENAI_API_KEY), not a key; the value given is not a variable name"
            )
        if not isinstance(self.max_concurrency, int) or self.max_concurrency < 1:
            raise ConfigError(f"backend {self.name!r}: max_concurrency must be an integer >= 1")
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise ConfigError(f"backend {self.name!r}: timeout_s must be a number of seconds > 0, "
                              f"got {self.timeout_s!r}")
        if (self.price_in_per_m is None) != (self.price_out_per_m is None):
            raise ConfigError(
                f"backend {self.name!r}: set both price_in_per_m and price_out_per_m, or neither")
        if any(p is not None and p < 0 for p in (self.price_in_per_m, self.price_out_per_m)):
            raise ConfigError(f"backend {self.name!r}: prices must not be negative")
        if not isinstance(self.params, Mapping):
            raise ConfigError(f"backend {self.name!r}: params must be a mapping")
        if "stream" in self.params or "messages" in self.params or "model" in self.params:
            raise ConfigError(f"backend {self.name!r}: params may not set stream, messages or model")
        try:
            self.retry_policy
        except ValueError as exc:  # named as this config names the field
            message = str(exc)
            for policy_name, config_name in _POLICY_NAMES.items():
                message = message.replace(policy_name, config_name)
            raise ConfigError(f"backend {self.name!r}: {message}") from None
        # A private copy (not a read-only proxy: the config must pickle for process pools).
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], source: str | None = None) -> "BackendConfig":
        """Build from plain fields or a ``backend_config`` record; an unknown key is a ``ConfigError`` naming it."""
        return from_record(cls, spec, source or "backend config")

    def to_record(self) -> dict[str, Any]:
        """The ``backend_config/1`` record, safe to write: no key, no URL credentials, credential params masked."""
        return to_record(self)

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_attempts, self.retry_base_s, self.retry_max_s, self.retry_after_max_s)

    def price(self) -> Price:
        """Explicit prices if set, else the price table's (0 and ``known=False`` if unknown)."""
        if self.price_in_per_m is not None and self.price_out_per_m is not None:
            return Price(self.model, float(self.price_in_per_m), float(self.price_out_per_m))
        return price_for(self.model)

    def api_key(self) -> str:
        """The key from the environment (or a dummy for keyless local servers).

        Raises:
            ConfigError: naming the variable (never a value) when it is unset.
        """
        if self.api_key_env is None:
            return DUMMY_KEY
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise ConfigError(
                f"backend {self.name!r} needs its API key in the environment variable "
                f"{self.api_key_env}, which is not set"
            )
        return key

    def identity(self) -> dict[str, Any]:
        """What determines an answer: backend, endpoint, model and default params (cache keys use it).

        The endpoint is part of it because two servers may both call their model
        ``"default"``; it is ``endpoint_url(base_url)``, without credentials, and
        credential-like params (``extra_headers`` values, ``api_key``…) are masked.
        """
        return {"backend": self.name, "endpoint": endpoint_url(self.base_url), "model": self.model,
                "params": redact(plain(self.params))}

    def describe(self) -> dict[str, Any]:
        """Every field, safe to record: no key, and no credentials or query in the URL."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["base_url"] = safe_url(self.base_url)
        out["params"] = redact(plain(self.params))
        price = self.price()
        out["price_known"] = price.known
        out["price_in_per_m"], out["price_out_per_m"] = price.input_per_m, price.output_per_m
        return out


def safe_url(url: str) -> str:
    """``url`` without user:password, query string or fragment (they may hold secrets)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "<unparseable url>"


# Query parameters whose name suggests a credential (``?api_key=``, ``?sig=``, ``?access_token=``).
_SECRET_PARAM = re.compile(r"key|token|secret|pass|pwd|sig|auth|cred|session|code", re.IGNORECASE)


def endpoint_url(url: str) -> str:
    """``url`` as an endpoint identity: no user:password, fragment or credential-like query params.

    Query params that select something (``?api-version=2024-06-01``) stay, sorted,
    since they may change the answer; the host is lower-cased and a trailing
    slash dropped, so spellings of one endpoint agree.

    >>> endpoint_url("https://user:sk-1@API.example.com:8443/v1/?api_key=sk-2&api-version=3")
    'https://api.example.com:8443/v1?api-version=3'
    """
    from urllib.parse import parse_qsl, urlencode

    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        query = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if not _SECRET_PARAM.search(k))
        return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), urlencode(query), ""))
    except ValueError:
        return "<unparseable url>"


# Names of mapping keys whose values are credentials, wherever they appear in a spec.
_SECRET_NAME = re.compile(r"(api[_-]?key|secret|token|password|passwd|authorization|auth|cookie|credential)$"
                          r"|^(key|x-api-key|api-key)$", re.IGNORECASE)
MASK = "***"


@overload
def redact(value: str) -> str: ...
@overload
def redact(value: Mapping[str, object]) -> dict[str, Any]: ...
@overload
def redact(value: object) -> object: ...
def redact(value: object) -> object:
    """A copy of a backend spec (or any plain JSON-like value) safe to record.

    URLs lose user:password, fragments and credential-like query params
    (``endpoint_url``); values under credential-like names (``api_key``,
    ``Authorization``, ``token``…) and every header value under
    ``extra_headers``/``headers`` become ``"***"``. ``api_key_env`` stays: it
    is a variable's name, not a key. Anything else passes through unchanged.

    >>> redact({"base_url": "https://u:sk-1@h/v1", "params": {"extra_headers": {"X-Org": "o"}}})
    {'base_url': 'https://h/v1', 'params': {'extra_headers': {'X-Org': '***'}}}
    """
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if name.lower() in ("extra_headers", "headers") and isinstance(item, Mapping):
                out[name] = {str(h): MASK for h in item}
            elif name != "api_key_env" and _SECRET_NAME.search(name) and item not in (None, ""):
                out[name] = MASK
            else:
                out[name] = redact(item)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return _redact_url(value)
    return value


def _redact_url(text: str) -> str:
    parts = urlsplit(text)
    if not parts.scheme or not parts.netloc or " " in text:
        return text
    if "@" not in parts.netloc and not parts.query and not parts.fragment:
        return text
    return endpoint_url(text)

