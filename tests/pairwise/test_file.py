"""The pairwise file: a versioned pydantic model; files written before it still load, byte for byte."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from cogeval import load_pairwise
from cogeval.errors import RunFileError
from cogeval.pairwise import FORMAT, VERSION, PairwiseFile, PairwiseResult

# Written by PairwiseResult.save before the pairwise package existed (cogeval/compare/pairwise.py): two comparators,
# a failed target, a multi-turn case, non-ASCII text, a JSON output, a judge's details and a pending human label.
V1 = pathlib.Path(__file__).parent / "fixtures" / "v1.pairwise.json"


def test_a_file_written_before_loads_and_saves_byte_for_byte(tmp_path):
    result = load_pairwise(V1)
    assert isinstance(result, PairwiseResult) and result.path == V1
    assert result.names == ("old", "new") and [t.task_id for t in result.tasks] == ["k1", "k1#1", "k2"]
    assert result.tasks[1].output_a == {"answer": 4} and result.tasks[1].error_b == "TimeoutError: 30 s"
    assert result.tasks[2].case.turns == ["Bonjour", "Ça va ?"]
    assert [v.winner for v in result.verdicts["quality"]] == ["b", "a", None]
    assert result.verdicts["quality"][0].details["judge_usage"] == {"calls": 2, "cache_hits": 0}
    assert result.verdicts["people"][2].error == "not labelled yet"
    assert result.save(tmp_path).read_bytes() == V1.read_bytes()
    assert json.loads(V1.read_text()) == result.to_dict()


def test_a_file_without_format_and_version_is_read_as_version_1(tmp_path):
    document = json.loads(V1.read_text())
    del document["format"], document["version"]
    path = tmp_path / "old.pairwise.json"
    path.write_text(json.dumps(document))
    loaded = load_pairwise(path)
    assert loaded == load_pairwise(V1)
    assert (loaded.to_dict()["format"], loaded.to_dict()["version"]) == (FORMAT, VERSION) == ("cogeval.pairwise", 1)


def test_every_field_is_documented_in_the_schema():
    from cogeval.pairwise import TaskRecord, VerdictRecord

    for model in (PairwiseFile, TaskRecord, VerdictRecord):
        undocumented = [name for name, field in model.model_fields.items() if not field.description]
        assert model.__doc__ and undocumented == []
    schema = PairwiseFile.model_json_schema()
    assert schema["properties"]["version"]["description"].startswith("The format version: 1")


def rewrite(tmp_path, change) -> pathlib.Path:
    document = json.loads(V1.read_text())
    change(document)
    path = tmp_path / "x.pairwise.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(version=2), "has version 2; this cogeval reads version 1"),
    (lambda d: d.update(version=True), "has version True; this cogeval reads version 1"),
    (lambda d: d.update(format="cogitator.eval-run"), "has format 'cogitator.eval-run'; expected 'cogeval.pairwise'"),
    (lambda d: d["verdicts"]["quality"][2].update(winner="B"),
     "is invalid: verdicts.quality[2].winner: Input should be 'a', 'b' or 'tie'"),
    (lambda d: d["tasks"][0].pop("case_key"), "is invalid: tasks[0].case_key: Field required"),
    (lambda d: d["tasks"][0].update(extra=1), "is invalid: tasks[0].extra: Extra inputs are not permitted"),
    (lambda d: d["verdicts"]["people"].pop(), "is invalid: verdicts: comparator 'people' has 2 verdicts for 3 tasks; "
                                              "it needs one verdict per task"),
    (lambda d: d["comparators"].pop("people"),
     "is invalid: verdicts: comparator 'people' has verdicts but no description in 'comparators'"),
    (lambda d: d.update(names=["x", "x"]),
     "is invalid: names: names must be two different non-empty strings (A's, then B's); got ('x', 'x')"),
    (lambda d: d.update(id="../../etc"), "is invalid: id: run_id must look like '20261022T101530123Z-1a2b3c4d' "
                                         "(UTC start time, '-', 8 hex digits); got '../../etc'"),
])
def test_errors_name_the_file_and_the_field(tmp_path, change, message):
    path = rewrite(tmp_path, change)
    with pytest.raises(RunFileError) as caught:
        load_pairwise(path)
    assert str(caught.value) == f"pairwise file '{path}' {message}"


def test_unreadable_files_are_named(tmp_path):
    path = tmp_path / "x.pairwise.json"
    path.write_text("[1, 2]")
    with pytest.raises(RunFileError) as caught:
        load_pairwise(path)
    assert str(caught.value) == f"pairwise file '{path}' must hold a JSON object; got an array"
    path.write_text("{oops")
    with pytest.raises(RunFileError, match=r"^pairwise file '.*' is not valid JSON: "):
        load_pairwise(path)
    with pytest.raises(FileNotFoundError, match="pairwise file not found"):
        load_pairwise(tmp_path / "missing.pairwise.json")


def test_values_json_cannot_hold_are_written_as_text(tmp_path):
    shutil.copy(V1, tmp_path / "v1.json")
    result = load_pairwise(tmp_path / "v1.json")
    from cogeval.pairwise import PairTask

    odd = PairTask("t", "t", result.tasks[0].case, b"bytes", {1, 2})
    changed = PairwiseResult(result.id, result.created_at, result.names, (odd,),
                             {"quality": result.verdicts["quality"][:1]}, {"quality": result.comparators["quality"]})
    loaded = load_pairwise(changed.save(tmp_path))
    assert (loaded.tasks[0].output_a, loaded.tasks[0].output_b) == ("b'bytes'", "{1, 2}")
