"""RunStore: save, list newest first, filters, summaries, strict load, and bad files that never hide good ones."""

from __future__ import annotations

import json
import math
import pathlib
import re
import warnings

import pandas as pd
import pytest

from cogeval import EvalRun, EvalSuite, RunStore, exact_match, load_run
from cogeval.errors import InputError, RunFileError, RunSkippedWarning

FIXED_COLUMNS = ["id", "name", "started_at", "finished_at", "cases", "path"]


def frame_run(quality, *, name=None, started_at, run_id=None, metadata=None):
    frame = pd.DataFrame({"input": ["a", "b"], "quality": quality})
    return EvalRun.from_frame(frame, name=name, started_at=started_at, run_id=run_id, metadata=metadata)


@pytest.fixture
def store(tmp_path):
    store = RunStore(tmp_path / "runs")
    runs = {
        "old": frame_run([1.0, 0.0], name="nightly", started_at="2026-01-01T08:00:00Z", run_id="20260101T080000000Z-0000000c"),
        "new": frame_run([1.0, 1.0], name="nightly", started_at="2026-01-03T08:00:00Z", run_id="20260103T080000000Z-0000000a"),
        "mid": frame_run([0.0, 0.5], name="adhoc", started_at="2026-01-02T08:00:00Z", run_id="20260102T080000000Z-0000000b",
                         metadata={"model": "small"}),
    }
    for run in runs.values():
        store.save(run)
    store.runs_by_label = runs
    return store


def run_file_text(store):
    return (store.path / "20260101T080000000Z-0000000c.json").read_text(encoding="utf-8")


# -- save and load -----------------------------------------------------------------------------------


def test_save_writes_run_id_json_and_returns_the_path(tmp_path):
    run = frame_run([1.0, 0.0], started_at="2026-01-01T00:00:00Z")
    store = RunStore(tmp_path / "missing" / "runs")  # no trailing slash, folder does not exist yet
    path = store.save(run)
    assert path == tmp_path / "missing" / "runs" / f"{run.run_id}.json"
    assert load_run(path) == run
    assert store.load(run.run_id) == run


def test_save_takes_a_suite_result(tmp_path):
    result = EvalSuite([{"input": "2+2", "expected": "4"}], lambda q: "4", metrics=[exact_match()],
                       progress=False, name="calc").run()
    store = RunStore(tmp_path)
    assert store.save(result) == tmp_path / f"{result.run_id}.json"
    assert store.load(result.run_id) == result.to_run()
    assert store.latest().run_id == result.run_id


def test_save_refuses_other_things(tmp_path):
    with pytest.raises(InputError) as caught:
        RunStore(tmp_path).save({"runId": "x"})
    assert str(caught.value) == "RunStore.save takes an EvalRun or a suite result; got {'runId': 'x'}"


def test_load_is_strict(store):
    with pytest.raises(FileNotFoundError) as caught:
        store.load("20300101T000000000Z-00000000")
    assert caught.value.filename == str(store.path / "20300101T000000000Z-00000000.json")
    with pytest.raises(InputError) as caught:
        store.load("../x")
    assert str(caught.value) == (
        "run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got '../x'")
    broken = store.path / "20300101T000000000Z-00000001.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(RunFileError) as caught:
        store.load("20300101T000000000Z-00000001")
    assert str(caught.value) == (
        f"run file '{broken}' is not valid JSON: line 1 column 2: Expecting property name enclosed in double quotes")


def test_constructor_checks_its_arguments():
    with pytest.raises(InputError) as caught:
        RunStore(42)
    assert str(caught.value) == "path must be a file or folder path (str or os.PathLike); got 42"
    with pytest.raises(InputError) as caught:
        RunStore("runs", on_skip="print")
    assert str(caught.value) == "on_skip must be a callable taking {path, reason}; got 'print'"


# -- list, filters, summaries, latest ------------------------------------------------------------------


def test_list_is_newest_first_with_full_summaries(store):
    summaries = store.list()
    assert [s["id"] for s in summaries] == [
        "20260103T080000000Z-0000000a", "20260102T080000000Z-0000000b", "20260101T080000000Z-0000000c"]
    assert summaries[1] == {
        "id": "20260102T080000000Z-0000000b", "name": "adhoc", "metadata": {"model": "small"},
        "started_at": "2026-01-02T08:00:00.000Z", "finished_at": "2026-01-02T08:00:00.000Z", "cases": 2,
        "metrics": {"quality": 0.25}, "path": str(store.path / "20260102T080000000Z-0000000b.json"),
    }


def test_newest_first_follows_the_time_not_the_text(tmp_path):
    # Another implementation may write offsets: 01:00+02:00 is 23:00Z the day before, earlier than 23:30Z.
    def hand_written(run_id, started_at):
        return EvalRun.model_validate({"run_id": run_id, "started_at": started_at, "finished_at": started_at})

    store = RunStore(tmp_path)
    store.save(hand_written("20260101T230000000Z-00000001", "2026-01-02T01:00:00+02:00"))
    store.save(hand_written("20260101T233000000Z-00000002", "2026-01-01T23:30:00Z"))
    store.save(hand_written("20260101T220000000Z-00000003", "2026-01-01T22:00:00"))  # naive: taken as UTC
    assert [s["id"][-1] for s in store.list()] == ["2", "1", "3"]


def test_filter_by_mapping_and_by_predicate(store):
    assert [s["name"] for s in store.list({"name": "nightly"})] == ["nightly", "nightly"]
    assert [s["id"][-1] for s in store.list({"name": "nightly"})] == ["a", "c"]
    assert [s["id"][-1] for s in store.list({"metadata": {"model": "small"}})] == ["b"]
    assert [s["id"][-1] for s in store.list(lambda s: s["metrics"]["quality"] >= 0.5)] == ["a", "c"]
    assert store.list({"name": "nope"}) == []


def test_a_filter_naming_no_summary_field_is_refused(store):
    with pytest.raises(InputError) as caught:
        store.list({"nmae": "nightly"})
    assert str(caught.value) == (
        "filter names 'nmae', which is not a field of a run summary; "
        "the fields are id, name, metadata, started_at, finished_at, cases, path, metrics")
    with pytest.raises(InputError) as caught:
        store.list("nightly")
    assert str(caught.value) == (
        "filter must be a mapping such as {'name': 'nightly'} or a predicate over a run summary; got 'nightly'")


def test_latest_and_runs(store):
    assert store.latest().run_id == "20260103T080000000Z-0000000a"
    assert store.latest({"name": "adhoc"}) == store.runs_by_label["mid"]
    assert store.latest({"name": "nope"}) is None
    assert [r.run_id[-1] for r in store.runs({"name": "nightly"})] == ["a", "c"]


def test_to_frame_has_one_row_per_run(store):
    frame = store.to_frame()
    assert list(frame.columns) == [*FIXED_COLUMNS, "quality"]
    assert frame["id"].str[-1].tolist() == ["a", "b", "c"]
    assert frame["quality"].tolist() == [1.0, 0.25, 0.5]
    assert frame["cases"].tolist() == [2, 2, 2]
    assert frame["path"].tolist() == [str(store.path / f"{i}.json") for i in frame["id"]]


def test_a_missing_folder_lists_nothing_and_says_so_once(tmp_path):
    store = RunStore(tmp_path / "nowhere")
    with pytest.warns(UserWarning) as caught:
        assert store.list() == [] and store.latest() is None and store.runs() == []
        frame = store.to_frame()
    assert [str(w.message) for w in caught] == [
        f"RunStore({str(tmp_path / 'nowhere')!r}): the folder does not exist, so it holds no runs"]
    assert frame.empty and list(frame.columns) == FIXED_COLUMNS
    assert not (tmp_path / "nowhere").exists()


def test_a_typo_in_the_folder_name_is_pointed_out(tmp_path):
    (tmp_path / "runs").mkdir()
    with pytest.warns(UserWarning, match=r"the folder does not exist, so it holds no runs; did you mean '.*/runs'\?$"):
        RunStore(tmp_path / "run").runs()


def test_an_index_past_the_runs_found_says_how_many_there_are(tmp_path):
    store = RunStore(tmp_path)
    store.save(frame_run([1.0, 0.0], started_at="2026-01-01T00:00:00Z"))
    runs = store.runs()
    assert runs[0].run_id and runs[-1] is runs[0]
    with pytest.raises(IndexError, match=rf"^RunStore\({re.escape(repr(str(tmp_path)))}\) found 1 run, so there is no \[1\]$"):
        runs[1]
    with pytest.raises(IndexError, match=r"found 1 run summary, so there is no \[-2\]$"):
        store.list()[-2]


def test_nan_means_stay_nan_in_summaries(tmp_path):
    store = RunStore(tmp_path)
    store.save(frame_run([None, None], started_at="2026-01-01T00:00:00Z"))
    assert math.isnan(store.list()[0]["metrics"]["quality"])


def test_html_display_lists_the_runs(store):
    html = store._repr_html_()
    assert "20260103T080000000Z-0000000a" in html and "3 runs" in html


# -- bad files -----------------------------------------------------------------------------------------


def test_other_json_is_passed_over_silently(store):
    (store.path / "baseline.json").write_text(json.dumps({"exact_match": 0.8}), encoding="utf-8")
    (store.path / "baseline-v2.json").write_text(
        json.dumps({"format": "cogeval.baseline", "version": 1, "metrics": {"exact_match": {"mean": 0.8}}}), encoding="utf-8")
    (store.path / "list.json").write_text("[1, 2, 3]", encoding="utf-8")  # not an object: not a run file either
    (store.path / "null.json").write_text("null", encoding="utf-8")
    (store.path / "notes.txt").write_text("not json at all", encoding="utf-8")  # not *.json: not looked at
    reports = []
    assert len(RunStore(store.path, on_skip=reports.append).list()) == 3
    assert reports == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(RunStore(store.path).list()) == 3


@pytest.fixture
def broken_store(store):
    folder = store.path
    good = json.loads(run_file_text(store))
    (folder / "a-not-json.json").write_text("hello", encoding="utf-8")
    text = json.dumps(good)
    assert text.startswith('{"format": "cogitator.eval-run"')
    (folder / "b-truncated.json").write_text(text[:120], encoding="utf-8")
    (folder / "c-latin1.json").write_bytes(b'{"format": "cogitator.eval-run", "name": "caf\xe9"}')
    invalid = json.loads(text)
    invalid["results"][0]["scores"][0]["score"] = "high"
    (folder / "d-invalid.json").write_text(json.dumps(invalid), encoding="utf-8")
    (folder / "e-version-2.json").write_text(json.dumps({**good, "version": 2}), encoding="utf-8")
    (folder / "f-folder.json").mkdir()
    (folder / "g-dangling.json").symlink_to(folder / "nowhere.json")  # cannot be read (root can read chmod 000)
    (folder / "h-no-version.json").write_text(json.dumps({"format": "cogitator.eval-run", "runId": "x"}), encoding="utf-8")
    (folder / "i-other-format.json").write_text(json.dumps({**good, "format": "cogitator.eval-log"}), encoding="utf-8")
    (folder / "j-empty.json").write_text("", encoding="utf-8")
    bom = {**good, "runId": "20250101T000000000Z-000000bb", "startedAt": "2025-01-01T00:00:00.000Z"}
    (folder / "k-bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(bom).encode())  # load_run reads it: so must list
    return store


def expected_reports(folder: pathlib.Path) -> list[dict[str, str]]:
    def at(name):
        return str(folder / name)

    return [
        {"path": at("a-not-json.json"), "reason": "is not valid JSON: Expecting value: line 1 column 1 (char 0)"},
        {"path": at("b-truncated.json"), "reason": None},  # the decoder's wording: checked by prefix below
        {"path": at("c-latin1.json"), "reason": "is not UTF-8 text (invalid continuation byte at byte 45)"},
        {"path": at("d-invalid.json"), "reason": f"run file '{at('d-invalid.json')}' is invalid: "
                                                 "results[0].scores[0].score: Input should be a valid number, "
                                                 "unable to parse string as a number"},
        {"path": at("e-version-2.json"), "reason": f"run file '{at('e-version-2.json')}' is format version 2; "
                                                   "this cogeval reads version 1 (upgrade cogeval to read it)"},
        {"path": at("f-folder.json"), "reason": "is a folder, not a run file"},
        {"path": at("g-dangling.json"), "reason": "cannot be read: No such file or directory"},
        {"path": at("h-no-version.json"), "reason": f"run file '{at('h-no-version.json')}' has no 'version' field; expected 1"},
        {"path": at("i-other-format.json"), "reason": f"run file '{at('i-other-format.json')}' has format "
                                                      "'cogitator.eval-log'; expected 'cogitator.eval-run'"},
        {"path": at("j-empty.json"), "reason": "is not valid JSON: Expecting value: line 1 column 1 (char 0)"},
    ]


def check_reports(reports, folder):
    expected = expected_reports(folder)
    assert [r["path"] for r in reports] == [e["path"] for e in expected]
    for report, wanted in zip(reports, expected):
        if wanted["reason"] is None:
            assert report["reason"].startswith("is not valid JSON: Unterminated string starting at: line 1")
        else:
            assert report["reason"] == wanted["reason"]


def test_bad_run_files_are_skipped_and_reported_to_on_skip(broken_store):
    reports = []
    store = RunStore(broken_store.path, on_skip=reports.append)
    summaries = store.list()
    assert [s["id"][-1] for s in summaries] == ["a", "b", "c", "b"]  # the three good runs and the BOM one, newest first
    assert summaries[-1]["id"] == "20250101T000000000Z-000000bb"
    check_reports(reports, broken_store.path)
    assert all(set(r) == {"path", "reason"} for r in reports)


def test_latest_and_to_frame_skip_bad_files_too(broken_store):
    reports = []
    store = RunStore(broken_store.path, on_skip=reports.append)
    assert store.latest().run_id == "20260103T080000000Z-0000000a"
    check_reports(reports, broken_store.path)
    assert len(store.to_frame()) == 4


def test_without_on_skip_each_bad_file_is_a_run_skipped_warning(broken_store):
    assert issubclass(RunSkippedWarning, UserWarning)
    with pytest.warns(RunSkippedWarning) as caught:
        summaries = RunStore(broken_store.path).list()
    assert len(summaries) == 4
    messages = [str(w.message) for w in caught]
    expected = expected_reports(broken_store.path)
    assert len(messages) == len(expected)
    assert messages[0] == f"skipped {expected[0]['path']}: {expected[0]['reason']}"
    assert messages[5] == f"skipped {broken_store.path / 'f-folder.json'}: is a folder, not a run file"
    assert {w.filename for w in caught} == {__file__}  # the warning points at the caller's line


def test_warnings_from_to_frame_and_latest_point_at_the_caller(broken_store):
    store = RunStore(broken_store.path)
    with pytest.warns(RunSkippedWarning) as caught:
        store.to_frame()
        store.latest()
    assert {w.filename for w in caught} == {__file__}


def test_a_bad_file_alone_leaves_an_empty_list(tmp_path):
    (tmp_path / "x.json").write_text('{"format": "cogitator.eval-run", "version": 1', encoding="utf-8")
    with pytest.warns(RunSkippedWarning, match=r"x\.json: is not valid JSON"):
        assert RunStore(tmp_path).list() == []



def test_listing_again_reads_only_changed_files(tmp_path, monkeypatch):
    import cogeval.store.run_store as store_module

    store = RunStore(tmp_path)
    first = store.save(frame_run([1.0, 0.0], name="a", started_at="2026-01-01T00:00:00Z"))
    store.save(frame_run([1.0, 1.0], name="b", started_at="2026-01-02T00:00:00Z"))
    assert [s["name"] for s in store.list()] == ["b", "a"]
    reads = []
    real = store_module._run_in
    monkeypatch.setattr(store_module, "_run_in", lambda path: reads.append(f"run file '{path}'") or real(path))
    listed = store.list()
    assert [s["name"] for s in listed] == ["b", "a"] and reads == []
    listed[0]["metrics"]["quality"] = -1  # a caller's change does not leak into the store's memory
    assert store.list()[0]["metrics"]["quality"] == 1.0
    changed = frame_run([0.0, 0.0], name="a2", started_at="2026-01-03T00:00:00Z", run_id=first.stem)
    changed.save(first)
    assert [s["name"] for s in store.list()] == ["a2", "b"] and reads == [f"run file '{first}'"]
    assert store.latest().name == "a2"


def test_opening_a_store_removes_temporaries_older_than_an_hour_only(tmp_path):
    import os
    import time

    folder = tmp_path / "runs"
    run = frame_run([1.0, 0.0], started_at="2026-01-01T08:00:00Z", run_id="20260101T080000000Z-0000000c")
    RunStore(folder).save(run)
    names = {".20260101T080000000Z-0000000d.json.k3j_x9q2.tmp": 3601, ".report.md.aaaaaaaa.tmp": 7200,
             ".20260101T080000000Z-0000000e.json.b7c8d9e0.tmp": 3500, "notes.tmp": 7200}
    for name, age in names.items():
        (folder / name).write_text("{")  # what a write killed before os.replace leaves
        os.utime(folder / name, (time.time() - age, time.time() - age))
    store = RunStore(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        ".20260101T080000000Z-0000000e.json.b7c8d9e0.tmp", ".cogeval-index", "20260101T080000000Z-0000000c.json",
        "notes.tmp"]
    assert [s["id"] for s in store.list()] == ["20260101T080000000Z-0000000c"]
    RunStore(tmp_path / "not yet")  # a folder that does not exist yet: nothing to clean, no error


def test_scores_of_every_run_in_one_table_and_as_parquet(tmp_path):
    import pandas as pd

    store = RunStore(tmp_path / "runs")
    first = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1.0, 0.0]}), run_id="20261022T101530123Z-00000001",
                               started_at="2026-10-22T10:15:30.123Z")
    second = EvalRun.from_frame(pd.DataFrame({"input": ["a"], "q": [0.5]}), run_id="20261023T101530123Z-00000002",
                                started_at="2026-10-23T10:15:30.123Z")
    store.save(first), store.save(second)
    scores = store.scores()
    assert scores[["run_id", "score"]].values.tolist() == [["20261023T101530123Z-00000002", 0.5],
                                                           ["20261022T101530123Z-00000001", 1.0],
                                                           ["20261022T101530123Z-00000001", 0.0]]
    pd.testing.assert_frame_equal(pd.read_parquet(store.to_parquet(tmp_path / "all.parquet")), scores, check_dtype=False)
    assert list(RunStore(tmp_path / "empty").scores().columns) == list(first.scores.columns)
