"""Files written whole or not at all (``lyra_lab._atomic``)."""

from __future__ import annotations

import pytest

from lyra_lab._atomic import replaced, write_whole


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = write_whole(tmp_path / "f.json", "old")
    with pytest.raises(RuntimeError), replaced(path) as tmp:
        tmp.write_text("half of the new")
        raise RuntimeError("the writer failed")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_a_missing_folder_is_made_only_when_asked(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_whole(tmp_path / "missing" / "f.json", "x")  # a user's --out in no folder: their error to see
    assert not (tmp_path / "missing").exists()
    assert write_whole(tmp_path / "cache" / "f.json", b"x", durable=True, make_folder=True).read_bytes() == b"x"
