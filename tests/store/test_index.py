"""The store index (cogeval.store.index): listing reads only new or changed run files, and a stale,
broken or unwritable index makes listing slower, never different."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

import cogeval.store.run_store as store_module
from cogeval import EvalRun, RunStore
from cogeval.store import index as store_index
from cogeval.store.index import INDEX_FILE


def frame_run(quality, *, name=None, day=1, metadata=None):
    frame = pd.DataFrame({"input": ["a", "b"], "quality": quality})
    return EvalRun.from_frame(frame, name=name, started_at=f"2026-01-{day:02d}T08:00:00Z",
                              run_id=f"202601{day:02d}T080000000Z-{day:08x}", metadata=metadata)


@pytest.fixture
def reads(monkeypatch):
    """The names of the files the store reads in full, in order."""
    names = []
    real = store_module._run_in
    monkeypatch.setattr(store_module, "_run_in", lambda path: names.append(path.name) or real(path))
    return names


@pytest.fixture
def store(tmp_path):
    store = RunStore(tmp_path / "runs")
    for day, quality in [(1, [1.0, 0.0]), (2, [1.0, 1.0]), (3, [0.0, 0.5])]:
        store.save(frame_run(quality, name=f"run {day}", day=day))
    return store


def ids(summaries):
    return [summary["id"][-1] for summary in summaries]


def listing_without_index(store):
    """The store's listing read from every file: a copy of its folder without the index."""
    copy = store.path.with_name(store.path.name + "-copy")
    shutil.copytree(store.path, copy)
    (copy / INDEX_FILE).unlink(missing_ok=True)
    return [{**summary, "path": summary["path"].replace(str(copy), str(store.path))} for summary in RunStore(copy).list()]


def same(a, b):
    return json.dumps(a) == json.dumps(b)  # NaN means compare equal


def index_names(store):
    return sorted(json.loads((store.path / INDEX_FILE).read_text())["runs"])


def test_saving_writes_the_index_so_listing_reads_no_run_file(store, reads):
    assert index_names(store) == sorted(p.name for p in store.path.glob("*.json"))
    assert ids(store.list()) == ["3", "2", "1"] and reads == []
    store.save(frame_run([1.0, 1.0], name="run 4", day=4))
    assert len(index_names(store)) == 4
    assert ids(RunStore(store.path).list()) == ["4", "3", "2", "1"] and reads == []
    assert same(store.list(), listing_without_index(store))


def test_the_first_listing_of_a_folder_without_index_writes_it(store, reads):
    (store.path / INDEX_FILE).unlink()  # as in a folder of files copied in, or written before the index
    assert ids(store.list()) == ["3", "2", "1"] and len(reads) == 3
    assert index_names(store) == sorted(p.name for p in store.path.glob("*.json"))
    assert ids(RunStore(store.path).list()) == ["3", "2", "1"] and len(reads) == 3


def test_an_empty_folder_gets_an_index_that_saving_then_fills(tmp_path, reads):
    store = RunStore(tmp_path)
    assert store.list() == [] and (tmp_path / INDEX_FILE).is_file()
    store.save(frame_run([1.0, 0.0], day=1))
    assert ids(RunStore(tmp_path).list()) == ["1"] and reads == []


def test_listing_with_a_fresh_index_reads_no_run_file(store, monkeypatch):
    expected = store.list()

    def refuse(path):
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(store_module, "_run_in", refuse)
    assert RunStore(store.path).list() == expected
    assert RunStore(store.path).to_frame()["id"].tolist() == [s["id"] for s in expected]


def test_a_changed_file_is_read_again(store, reads):
    store.list()
    path = store.path / "20260101T080000000Z-00000001.json"
    document = json.loads(path.read_text())
    document["name"] = "run X"  # same size and, below, same modification time: a new inode tells
    status = path.stat()
    replacement = store.path / "elsewhere.tmp"
    replacement.write_text(json.dumps(document, indent=2) + "\n")
    os.replace(replacement, path)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert path.stat().st_size == status.st_size
    assert [s["name"] for s in RunStore(store.path).list()] == ["run 3", "run 2", "run X"]
    assert reads == ["20260101T080000000Z-00000001.json"]  # the saves indexed all three; only the changed one is read


def test_a_deleted_file_leaves_the_listing_and_the_index(store):
    store.list()
    (store.path / "20260102T080000000Z-00000002.json").unlink()
    assert ids(RunStore(store.path).list()) == ["3", "1"]
    assert len(index_names(store)) == 2


def test_a_file_copied_in_by_another_tool_is_listed(store, tmp_path, reads):
    store.list()
    other = RunStore(tmp_path / "other")
    shutil.copy2(other.save(frame_run([0.0, 0.0], day=9)), store.path)  # copy2 keeps the modification time
    assert ids(RunStore(store.path).list()) == ["9", "3", "2", "1"]
    assert reads[-1] == "20260109T080000000Z-00000009.json"


@pytest.mark.parametrize("text", [
    "", "{", "not json", "[]", "null", '{"format": "cogeval.store-index", "version": 4, "runs": {}}',
    '{"format": "other", "version": 2, "runs": {}}', '{"format": "cogeval.store-index", "version": 3, "runs": []}',
    "[" * 100_000,
], ids=["empty", "truncated", "not-json", "array", "null", "version-4", "other-format", "runs-not-a-mapping", "too-deep"])
def test_a_broken_index_is_rebuilt_with_the_same_listing(store, text):
    expected = store.list()
    (store.path / INDEX_FILE).write_text(text)
    assert RunStore(store.path).list() == expected
    assert index_names(store) == sorted(p.name for p in store.path.glob("*.json"))


def test_index_entries_of_the_wrong_shape_or_for_missing_files_are_ignored(store):
    expected = store.list()
    document = json.loads((store.path / INDEX_FILE).read_text())
    first, second, third = sorted(document["runs"])
    document["runs"][first]["summary"].pop("started_at")  # cannot be used: read again
    document["runs"][second]["stamp"] = "new"
    document["runs"][third]["extra"] = 1
    document["runs"]["20300101T000000000Z-00000000.json"] = {**document["runs"][first], "stamp": [1, 2, 3]}  # no such file
    (store.path / INDEX_FILE).write_text(json.dumps(document))
    assert RunStore(store.path).list() == expected


def test_an_unreadable_index_and_a_read_only_folder_still_list(store, monkeypatch, reads):
    (store.path / INDEX_FILE).unlink()
    (store.path / INDEX_FILE).mkdir()  # neither readable nor replaceable
    assert ids(store.list()) == ["3", "2", "1"]
    (store.path / INDEX_FILE).rmdir()

    def read_only(path, text):
        raise PermissionError(13, "Permission denied", str(path))  # what a read-only folder gives (root ignores chmod)

    monkeypatch.setattr(store_index, "write_text_atomic", read_only)
    reads.clear()
    reader = RunStore(store.path)
    os.chmod(store.path, 0o555)
    try:
        assert ids(reader.list()) == ["3", "2", "1"] and len(reads) == 3
        assert ids(reader.list()) == ["3", "2", "1"] and len(reads) == 3  # remembered in memory
    finally:
        os.chmod(store.path, 0o755)
    assert not (store.path / INDEX_FILE).exists()


def test_bad_files_are_reported_at_every_listing_and_other_json_is_read_once(store, reads):
    (store.path / "broken.json").write_text('{"format": "cogitator.eval-run", "version": 1', encoding="utf-8")
    (store.path / "baseline.json").write_text('{"exact_match": 0.8}', encoding="utf-8")
    for _ in range(2):
        reports = []
        assert ids(RunStore(store.path, on_skip=reports.append).list()) == ["3", "2", "1"]
        assert [r["path"] for r in reports] == [str(store.path / "broken.json")]
        assert reports[0]["reason"].startswith("is not valid JSON")
    assert reads.count("broken.json") == 2 and reads.count("baseline.json") == 1
    assert "broken.json" not in index_names(store) and "baseline.json" in index_names(store)


def test_the_listing_with_the_index_is_the_listing_without(store, reads):
    store.list()
    odd = frame_run([None, None], day=4, metadata={"text": "café \ud83d", "deep": [[{"n": -0.0, "big": 10**30}]]})
    odd.metadata.update({"bytes": b"x", "set": {1}, "nan": float("nan")})  # set after validation: not JSON
    store.save(odd)
    store.save(frame_run([0.25, 1.0], name=None, day=5))
    assert index_names(store) == sorted(p.name for p in store.path.glob("*.json"))  # saved into the index
    listed = RunStore(store.path).list()
    assert reads == []  # every run came from the index
    assert same(listed, listing_without_index(store))


SAVER = """
import sys
import pandas as pd
from cogeval import EvalRun, RunStore
store = RunStore(sys.argv[1])
for i in range(int(sys.argv[3])):
    frame = pd.DataFrame({"input": ["a"], "quality": [i / 10]})
    store.save(EvalRun.from_frame(frame, run_id=f"20260101T0000{i:05d}Z-{sys.argv[2]}", started_at="2026-01-01T00:00:00Z"))
"""


def test_two_processes_saving_at_once_lose_no_run(tmp_path):
    store = RunStore(tmp_path)
    store.save(frame_run([1.0, 0.0], day=1))
    store.list()  # the index exists: both processes update it
    savers = [subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path), marker, "30"])
              for marker in ("aaaaaaaa", "bbbbbbbb")]
    assert [saver.wait(timeout=120) for saver in savers] == [0, 0]
    listed = RunStore(tmp_path).list()
    assert len(listed) == 61
    assert len(index_names(store)) == 61  # the listing mended what the racing saves dropped
    assert same(listed, listing_without_index(store))
