"""Datasets: found the same way everywhere, installed only when their bytes match the pin.

Downloads go to a real HTTP server on 127.0.0.1 serving a file; the catalog entry's URL
is the only thing a test swaps (``dataclasses.replace``), so the path through pooch,
the checksum and the move into place is the one a user's download takes.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from lyra_lab import ConfigError, datasets
from lyra_lab.datasets import CATALOG, ChecksumError, DatasetError
from tests.helpers.locomo import needs_locomo

REAL_LOCOMO = datasets.find("locomo")  # the user's copy, found before each test moves the data folder
BYTES = b'[{"sample_id": "conv-1", "conversation": {}, "qa": []}]\n' * 50


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path, monkeypatch) -> Path:
    """Every test installs into its own data folder, never the user's, with no LYRA_* override set."""
    folder = tmp_path / "data"
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(folder))
    for ds in CATALOG.values():
        monkeypatch.delenv(ds.env_var, raising=False)
    return folder


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[str, dict[str, int]]]:
    """A real HTTP server on 127.0.0.1 over a folder, and how many GETs each path received."""
    root = tmp_path / "www"
    root.mkdir()
    hits: dict[str, int] = {}

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):  # noqa: N802 - the http.server name
            hits[self.path] = hits.get(self.path, 0) + 1
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def entry_for(data: bytes, url: str) -> datasets.Dataset:
    """LoCoMo's catalog entry, pinned to ``data`` and fetched from ``url``."""
    return replace(CATALOG["locomo"], url=url, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def test_absent_everywhere_it_is_one_message_naming_the_command(private_data_dir):
    assert datasets.find("locomo") is None
    with pytest.raises(DatasetError) as err:
        datasets.path("locomo")
    message = str(err.value)
    assert message == datasets.missing_message("locomo")
    assert "`lyra-lab datasets get locomo`" in message and str(private_data_dir) in message
    assert "\n" not in message
    assert isinstance(err.value, ConfigError)  # the CLI prints it as one line


def test_the_environment_variable_wins_over_the_installed_copy(tmp_path, monkeypatch, private_data_dir):
    private_data_dir.mkdir()
    (private_data_dir / "locomo10.json").write_bytes(BYTES)
    assert datasets.path("locomo") == private_data_dir / "locomo10.json"
    mine = tmp_path / "elsewhere.json"
    mine.write_bytes(BYTES)
    monkeypatch.setenv("LYRA_LOCOMO", str(mine))
    assert datasets.path("locomo") == mine
    # set but wrong: no silent fall-back to the installed copy, and the message says which setting is wrong
    monkeypatch.setenv("LYRA_LOCOMO", str(tmp_path / "typo.json"))
    assert datasets.find("locomo") is None
    assert f"LYRA_LOCOMO={tmp_path / 'typo.json'} is not a file" in datasets.missing_message("locomo")


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(DatasetError, match=r"unknown dataset 'locomo10'; known: locomo, longmemeval-oracle.*"
                                           r"did you mean 'locomo'\?"):
        datasets.path("locomo10")


def test_download_from_a_local_server_checks_the_pin_and_installs_once(served, private_data_dir):
    url, hits = served
    www = private_data_dir.parent / "www"
    (www / "locomo10.json").write_bytes(BYTES)
    entry = entry_for(BYTES, f"{url}/locomo10.json")

    done = datasets.install(entry, progress=False)
    assert done.how == "downloaded" and done.path == private_data_dir / "locomo10.json"
    assert done.path.read_bytes() == BYTES
    assert hits == {"/locomo10.json": 1}
    assert datasets.install(entry, progress=False).how == "already installed"  # checked, not fetched again
    assert hits == {"/locomo10.json": 1}
    assert sorted(p.name for p in private_data_dir.iterdir()) == ["locomo10.json"]  # no temporary left


def test_a_download_that_does_not_match_the_pin_installs_nothing(served, private_data_dir):
    url, _ = served
    (private_data_dir.parent / "www" / "locomo10.json").write_bytes(BYTES + b"tampered")
    with pytest.raises(ChecksumError) as err:
        datasets.install(entry_for(BYTES, f"{url}/locomo10.json"), progress=False)
    assert "not the pinned" in str(err.value) and "nothing installed" in str(err.value)
    assert hashlib.sha256(BYTES + b"tampered").hexdigest() in str(err.value)
    assert not private_data_dir.exists() or not any(private_data_dir.iterdir())


def test_a_failed_download_is_one_line_that_suggests_from(served, private_data_dir):
    url, _ = served
    with pytest.raises(DatasetError) as err:
        datasets.install(entry_for(BYTES, f"{url}/missing.json"), progress=False)
    message = str(err.value)
    assert "HTTP 404" in message and "--from FILE" in message and "\n" not in message
    assert not (private_data_dir / "locomo10.json").exists()


def test_from_a_copy_is_checked_the_same_way_and_keeps_what_was_there(tmp_path, private_data_dir):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_bytes(BYTES)
    bad.write_bytes(BYTES[:-1] + b" ")  # same size, different bytes
    entry = entry_for(BYTES, "http://127.0.0.1:9/never-fetched")

    assert datasets.install(entry, source=good).how == "copied"
    with pytest.raises(ChecksumError) as err:
        datasets.install(entry, source=bad)
    assert str(err.value).startswith(f"{bad}: not the pinned locomo10.json ({len(BYTES):,} bytes, sha256 ")
    assert hashlib.sha256(bad.read_bytes()).hexdigest() in str(err.value)
    assert (private_data_dir / "locomo10.json").read_bytes() == BYTES  # the good copy stayed
    with pytest.raises(FileNotFoundError):
        datasets.install(entry, source=tmp_path / "nope.json")


@needs_locomo
def test_the_real_locomo_file_matches_its_pin_from_a_copy_and_over_http(served, private_data_dir):
    real = REAL_LOCOMO
    assert real is not None
    assert datasets.sha256_of(real) == CATALOG["locomo"].sha256 and real.stat().st_size == CATALOG["locomo"].size
    url, _ = served
    (private_data_dir.parent / "www" / "locomo10.json").write_bytes(real.read_bytes())
    entry = replace(CATALOG["locomo"], url=f"{url}/locomo10.json")  # the real pin, a local server
    assert datasets.install(entry, progress=False).how == "downloaded"
    assert datasets.path("locomo") == private_data_dir / "locomo10.json"
    (private_data_dir / "locomo10.json").unlink()
    assert datasets.install("locomo", source=real).how == "copied"


def test_every_catalog_entry_is_pinned_and_names_its_published_location():
    for name, ds in CATALOG.items():
        assert ds.name == name and len(ds.sha256) == 64 and int(ds.sha256, 16) >= 0 and ds.size > 0
        assert ds.url.startswith("https://") and ds.url.endswith("/" + ds.filename)
        assert ds.env_var.startswith("LYRA_") and ds.license and ds.pinned_from
    assert CATALOG["locomo"].url.startswith("https://raw.githubusercontent.com/snap-research/LoCoMo/")
    # LongMemEval at a fixed revision of its authors' release, so a pinned checksum cannot go stale
    assert all("/xiaowu0162/longmemeval-cleaned/resolve/98d7416" in CATALOG[n].url
               for n in ("longmemeval-oracle", "longmemeval-s", "longmemeval-m"))
