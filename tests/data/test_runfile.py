"""load_run / save_run: hand-written files, round trips, every error message, where files go, atomic writes."""

from __future__ import annotations

import json
import math
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cogeval.data import EvalRun, load_run, save_run
from cogeval.errors import InputError, RunFileError

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "runs"
RUN_ID = "20261022T101530123Z-1a2b3c4d"


def minimal() -> dict:
    return json.loads((FIXTURES / "minimal.json").read_text(encoding="utf-8"))


def write_json(tmp_path: pathlib.Path, data, name: str = "run.json") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run_error(path: pathlib.Path) -> str:
    with pytest.raises(RunFileError) as caught:
        load_run(path)
    return str(caught.value)


# -- reading hand-written files ----------------------------------------------------------------------


def test_the_minimal_file_loads():
    run = load_run(FIXTURES / "minimal.json")
    assert run.run_id == RUN_ID
    assert run.name is None and run.metadata == {}
    assert run.results[0].case.to_case().key == run.results[0].case_key
    assert run.aggregated["exact_match"].mean == 1.0
    assert math.isnan(run.aggregated["exact_match"].std_dev)
    assert run.dataset.cases == 1 and run.stats.total == 1


def test_the_full_file_loads():
    run = load_run(str(FIXTURES / "full.json"))
    assert len(run.results) == 3 and run.results[2].turns is not None
    assert math.isnan(run.aggregated["cost"].mean)


@pytest.mark.parametrize("name", ["minimal.json", "full.json"])
def test_round_trip_load_save_load_is_equal(tmp_path, name):
    run = load_run(FIXTURES / name)
    again = load_run(save_run(run, tmp_path / name))
    assert again == run
    assert again.to_dict() == run.to_dict()


def test_a_file_cogeval_wrote_before_following_the_format_loads_the_same_run():
    """full-seconds.json is full.json as cogeval wrote it before issue 13: metric objects, seconds, a prompts map."""
    old, new = load_run(FIXTURES / "full-seconds.json"), load_run(FIXTURES / "full.json")
    assert old == new
    seconds = json.loads((FIXTURES / "full-seconds.json").read_text(encoding="utf-8"))
    assert [r.duration for r in new.results] == [r["duration"] * 1000 for r in seconds["results"]]
    assert new.stats.duration_s == seconds["stats"]["duration"]


def test_a_file_follows_the_format(tmp_path):
    data = json.loads(save_run(load_run(FIXTURES / "full.json"), tmp_path / "x.json").read_text(encoding="utf-8"))
    assert data["config"]["metrics"] == ["exact_match", "correctness"]
    assert data["config"]["statisticalMetrics"] == ["latency", "cost"]
    assert [m["higherIsBetter"] for m in data["config"]["statisticalMetricDetails"]] == [False, False]
    assert data["prompts"] == [{"key": "qa-system", "versionId": "pv_123", "version": 3, "abTest": "short-vs-long"}]
    assert data["stats"]["duration"] == 4377.0 and [r["duration"] for r in data["results"]] == [800.0, 1200.0, 2100.0]
    assert (data["stats"]["cost"], data["stats"]["targetCost"]) == (0.0021, None)  # the judge's; the target's unknown


def test_the_full_file_is_written_back_as_it_was_read(tmp_path):
    original = json.loads((FIXTURES / "full.json").read_text(encoding="utf-8"))
    written = json.loads(save_run(load_run(FIXTURES / "full.json"), tmp_path / "x.json").read_text(encoding="utf-8"))
    assert written == original  # every key, known or not, numbers and nulls included
    assert list(written) == list(original)


def test_an_unknown_key_survives_a_round_trip(tmp_path):
    data = minimal()
    data["x-origin"] = {"tool": "other", "values": [1, None]}
    data["results"][0]["scores"][0]["confidence"] = 0.9
    again = load_run(save_run(load_run(write_json(tmp_path, data)), tmp_path / "out.json"))
    assert again.to_dict()["x-origin"] == {"tool": "other", "values": [1, None]}
    assert again.to_dict()["results"][0]["scores"][0]["confidence"] == 0.9


def test_null_in_the_file_is_nan_in_memory_and_null_again_on_write(tmp_path):
    data = minimal()
    data["results"][0]["scores"][0]["score"] = None
    run = load_run(write_json(tmp_path, data))
    assert math.isnan(run.results[0].scores[0].score)
    written = json.loads(save_run(run, tmp_path / "out.json").read_text(encoding="utf-8"))
    assert written["results"][0]["scores"][0]["score"] is None
    assert written["aggregated"]["exact_match"]["mean"] is None


def test_files_are_indented_utf8_in_model_order(tmp_path):
    data = minimal()
    data["name"] = "café ✓"
    path = save_run(load_run(write_json(tmp_path, data)), tmp_path / "out.json")
    text = path.read_text(encoding="utf-8")
    assert '"name": "café ✓"' in text
    assert text.startswith('{\n  "format": "cogitator.eval-run",\n  "version": 1,\n  "runId": ')
    assert list(json.loads(text)) == [
        "format", "version", "runId", "startedAt", "finishedAt", "name", "metadata", "dataset", "config",
        "prompts", "results", "aggregated", "assertions", "stats",
    ]


# -- reading errors ----------------------------------------------------------------------------------------


def test_a_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError) as caught:
        load_run(path)
    assert str(caught.value) == f"[Errno 2] run file not found: '{path}'"


def test_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "cogitator.eval-run",\n    oops\n}', encoding="utf-8")
    assert run_error(path) == (
        f"run file '{path}' is not valid JSON: line 3 column 5: Expecting property name enclosed in double quotes"
    )


def test_not_utf8(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"name": "\xff"}')
    assert run_error(path) == f"run file '{path}' is not UTF-8 text (invalid start byte at byte 10)"


@pytest.mark.parametrize(("value", "kind"), [([1, 2], "an array"), ("run", "a string"), (None, "null"), (3, "a number")])
def test_not_an_object(tmp_path, value, kind):
    path = write_json(tmp_path, value)
    assert run_error(path) == f"run file '{path}' must hold a JSON object; got {kind}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "foo"}, "has format 'foo'; expected 'cogitator.eval-run'"),
        ({"format": None}, "has format None; expected 'cogitator.eval-run'"),
        ({"version": 2}, "is format version 2; this cogeval reads version 1 (upgrade cogeval to read it)"),
        ({"version": "1"}, "has version '1'; expected 1"),
        ({"version": True}, "has version True; expected 1"),
    ],
)
def test_another_format_or_version(tmp_path, change, message):
    path = write_json(tmp_path, {**minimal(), **change})
    assert run_error(path) == f"run file '{path}' {message}"


@pytest.mark.parametrize(
    ("key", "message"),
    [("format", "has no 'format' field; expected 'cogitator.eval-run'"), ("version", "has no 'version' field; expected 1")],
)
def test_no_format_or_version(tmp_path, key, message):
    data = minimal()
    del data[key]
    path = write_json(tmp_path, data)
    assert run_error(path) == f"run file '{path}' {message}"


def test_a_schema_error_names_the_field_in_camel_case(tmp_path):
    data = minimal()
    data["results"] = [data["results"][0]] * 4
    data["results"][3] = json.loads(json.dumps(data["results"][3]))
    data["results"][3]["scores"][0]["score"] = "abc"
    path = write_json(tmp_path, data)
    assert run_error(path) == (
        f"run file '{path}' is invalid: results[3].scores[0].score: "
        "Input should be a valid number, unable to parse string as a number"
    )


def test_several_errors_list_the_first_three(tmp_path):
    data = minimal()
    del data["runId"]
    data["results"][0]["occurrence"] = -1
    data["results"][0]["usage"] = {"inputTokens": "many"}
    data["results"][0]["scores"] = [{"score": 1}]
    data["stats"] = {"total": "all"}
    path = write_json(tmp_path, data)
    assert run_error(path) == (
        f"run file '{path}' is invalid: runId: Field required; "
        "results[0].occurrence: Input should be greater than or equal to 0; "
        "results[0].usage.inputTokens: Input should be a valid integer, unable to parse string as an integer; "
        "and 2 more errors"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"runId": "../../etc/passwd"},
         "runId: run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); "
         "got '../../etc/passwd'"),
        ({"startedAt": "22/10/2026"},
         "startedAt: must be an ISO 8601 time such as '2026-10-22T10:15:30.123Z'; got '22/10/2026'"),
        ({"results": [{"caseKey": "k", "case": {"expected": "4"}}]},
         "results[0].case: Case field 'input' is required (or give 'turns' for a multi-turn case)"),
        ({"results": [{"caseKey": "k", "case": {"input": "q"}, "scores": [{"metric": "m", "score": 1}], "turns": {}}]},
         "results[0].turns: Input should be a valid list"),
        ({"dataset": {"fingerprint": "abc", "cases": -2}}, "dataset.cases: Input should be greater than or equal to 0"),
        ({"aggregated": {"m": {"mean": "high"}}},
         "aggregated.m.mean: Input should be a valid number, unable to parse string as a number"),
    ],
)
def test_schema_errors(tmp_path, change, message):
    path = write_json(tmp_path, {**minimal(), **change})
    assert run_error(path) == f"run file '{path}' is invalid: {message}"


def test_run_file_error_is_a_value_error():
    assert issubclass(RunFileError, ValueError)


# -- where save_run writes ---------------------------------------------------------------------------------


@pytest.fixture
def run() -> EvalRun:
    return load_run(FIXTURES / "minimal.json")


def test_save_to_an_existing_folder(tmp_path, run):
    assert save_run(run, tmp_path) == tmp_path / f"{RUN_ID}.json"
    assert load_run(tmp_path / f"{RUN_ID}.json") == run


def test_save_to_a_path_ending_in_a_slash_creates_the_folder(tmp_path, run):
    path = save_run(run, f"{tmp_path}/runs/2026/")
    assert path == tmp_path / "runs" / "2026" / f"{RUN_ID}.json"
    assert path.is_file()


def test_save_to_a_file_path_creates_missing_folders(tmp_path, run):
    path = save_run(run, tmp_path / "a" / "b" / "baseline.json")
    assert path == tmp_path / "a" / "b" / "baseline.json"
    assert load_run(path) == run


def test_save_replaces_an_existing_file(tmp_path, run):
    target = tmp_path / "run.json"
    target.write_text("old", encoding="utf-8")
    save_run(run, target)
    assert load_run(target) == run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no temporary file left


def test_the_run_method_saves(tmp_path, run):
    assert run.save(tmp_path) == tmp_path / f"{RUN_ID}.json"


@pytest.mark.parametrize("bad_id", ["../x", "/etc/passwd", "20261022T101530123Z-1a2b3c4d/../../x"])
def test_a_run_id_that_could_escape_its_folder_is_refused_before_writing(tmp_path, run, bad_id):
    run.run_id = bad_id  # construction refuses it; an assignment is checked by save_run
    target = tmp_path / "runs"
    with pytest.raises(InputError) as caught:
        save_run(run, f"{target}/")
    assert str(caught.value) == (
        "run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); "
        f"got {bad_id!r}"
    )
    assert list(tmp_path.iterdir()) == []


def test_save_run_needs_a_run(tmp_path):
    with pytest.raises(InputError) as caught:
        save_run({"runId": RUN_ID}, tmp_path)
    assert str(caught.value) == "save_run needs an EvalRun; got {'runId': '20261022T101530123Z-1a2b3c4d'}"


def test_writing_never_fails_because_of_a_value_in_the_run(tmp_path, run):
    circular: dict = {}
    circular["me"] = circular
    run.results[0].tool_calls = [b"\x00\x01", {1, 2}, circular, object]
    run.results[0].scores[0].details = {"nan": math.nan, "inf": math.inf}
    written = json.loads(save_run(run, tmp_path / "x.json").read_text(encoding="utf-8"))
    assert written["results"][0]["toolCalls"] == ["b'\\x00\\x01'", "{1, 2}", {"me": "[Circular]"}, "<class 'object'>"]
    assert written["results"][0]["scores"][0]["details"] == {"nan": None, "inf": None}


# -- atomic writes ------------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys
    from cogeval.data import EvalRun, save_run

    text = "x" * 2000
    results = [{"case_key": f"k{i}", "case": {"input": f"q{i}"}, "output": text,
                "scores": [{"metric": "m", "score": i % 2}]} for i in range(4000)]
    run = EvalRun.model_validate({"run_id": sys.argv[2], "started_at": "2026-10-22T10:15:30.123Z",
                                  "finished_at": "2026-10-22T10:15:31.000Z", "results": results})
    save_run(run, sys.argv[1])
    print("saved", flush=True)
    while True:
        save_run(run, sys.argv[1])
""")


def _writing(folder: pathlib.Path) -> bool:
    try:
        return any(p.stat().st_size > 0 for p in folder.glob(".*.tmp"))
    except FileNotFoundError:  # the temporary file was renamed meanwhile
        return False


def _kill_while_writing(folder: pathlib.Path, *, after_first_save: bool) -> None:
    """Start the writer and SIGKILL it as soon as a non-empty temporary file shows a write under way."""
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", WRITER, f"{folder}/", RUN_ID], stdout=subprocess.PIPE,
                               env=env, text=True)
    try:
        if after_first_save:
            assert process.stdout.readline().strip() == "saved"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _writing(folder):
            time.sleep(0.0002)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("after_first_save", [False, True], ids=["first-save", "replacing"])
def test_a_killed_save_leaves_the_old_file_or_none(tmp_path, after_first_save):
    folder = tmp_path / "runs"
    target = folder / f"{RUN_ID}.json"
    _kill_while_writing(folder, after_first_save=after_first_save)
    if target.exists() or after_first_save:
        run = load_run(target)  # whole and valid: the old file, never part of a new one
        assert len(run.results) == 4000
    assert [p.name for p in folder.iterdir() if not p.name.endswith(".tmp")] == ([target.name] if target.exists() else [])


def test_the_documented_example_file_is_a_valid_run_file(tmp_path):
    import re

    docs = pathlib.Path(__file__).resolve().parents[2] / "docs" / "run-files.md"
    example = re.search(r"```json\n(.*?)```", docs.read_text(encoding="utf-8"), re.S).group(1)
    run = load_run(write_json(tmp_path, json.loads(example)))
    assert run.to_dict() == json.loads(example)
    assert run.fingerprint == run.to_dataset().fingerprint
    assert [r.case_key for r in run.results] == [r.case.to_case().key for r in run.results]


def test_results_without_occurrence_number_repeated_cases_in_order(tmp_path):
    # The format only requires caseKey and case; a file from another implementation may leave out
    # occurrence. Repeated cases must still be told apart (0, 1, ... by order), not all read as 0.
    data = minimal()
    first = data["results"][0]
    other = {**first, "caseKey": "k-other", "case": {"input": "other"}}
    data["results"] = [first, other, {**first, "output": "5"}, {**first, "trial": 1}, {**first, "trial": 1}]
    run = load_run(write_json(tmp_path, data))
    assert [(r.case_key[:6], r.occurrence, r.trial) for r in run.results] == [
        ("990ca8", 0, 0), ("k-othe", 0, 0), ("990ca8", 1, 0), ("990ca8", 0, 1), ("990ca8", 1, 1)]
    assert run.cases_frame["occurrence"].tolist() == [0, 0, 1]
    # an explicit occurrence is kept as written
    data["results"] = [{**first, "occurrence": 3}, {**first, "occurrence": 5}]
    assert [r.occurrence for r in load_run(write_json(tmp_path, data)).results] == [3, 5]
