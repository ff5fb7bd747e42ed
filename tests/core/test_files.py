import json
import os
import pathlib
import stat
import time

import pytest

from cogeval._files import remove_stale_temporaries, write_text_atomic


def test_atomic_writes_get_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_text_atomic(tmp_path / "report.html", "<p>x</p>")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = write_text_atomic(tmp_path / "run.json", "old")

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_lone_surrogate_is_written_as_its_escape(tmp_path):
    # UTF-8 cannot encode half an emoji; the writer puts the six characters \ud83d instead of failing,
    # which inside a JSON string is the JSON escape of that very character.
    path = write_text_atomic(tmp_path / "a.json", json.dumps({"output": "cut \ud83d"}, ensure_ascii=False))
    assert path.read_bytes() == b'{"output": "cut \\ud83d"}'
    assert json.loads(path.read_text(encoding="utf-8")) == {"output": "cut \ud83d"}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def _age(path, seconds):
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))
    return path


def test_stale_temporaries_older_than_an_hour_are_removed_younger_ones_kept(tmp_path):
    def made(name, seconds):
        (tmp_path / name).write_text("x")
        return _age(tmp_path / name, seconds)

    old = made(".run.json.ab12cd_9.tmp", 3601)
    young = made(".run.json.zz12cd34.tmp", 3500)
    others = [made(name, 7200) for name in ("run.json", ".run.json.tmp", "x.ab12cd34.tmp", ".a.b.short.tmp")]
    folder = tmp_path / ".dir.ab12cd34.tmp"
    folder.mkdir()
    _age(folder, 7200)
    assert remove_stale_temporaries(tmp_path) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [young.name, folder.name, *(p.name for p in others)])
    assert remove_stale_temporaries(tmp_path / "missing") == []


def test_a_temporary_left_by_a_killed_write_is_one_the_cleanup_recognises(tmp_path, monkeypatch):
    def killed(*args):
        raise KeyboardInterrupt  # as if the process died between writing and os.replace

    monkeypatch.setattr(os, "replace", killed)
    monkeypatch.setattr(pathlib.Path, "unlink", lambda self, missing_ok=False: None)  # a kill -9 cleans nothing up
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(tmp_path / "run.json", "{}")
    monkeypatch.undo()
    [left] = tmp_path.iterdir()
    assert left.name.startswith(".run.json.") and left.name.endswith(".tmp")
    assert remove_stale_temporaries(tmp_path) == []  # young: another process may still be writing it
    _age(left, 3601)
    assert remove_stale_temporaries(tmp_path) == [left]
