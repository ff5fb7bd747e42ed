"""The fast path of ``load_run`` (pydantic-core reading the text) against the careful one (``json`` + Python
validation): where both read a file they give the same run, written back to the same bytes; whatever the careful
path refuses, the fast one leaves to it. The careful path is the reference: its errors are the ones tested in
``test_hostile_files.py`` and ``test_runfile.py``.
"""

from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogeval.data import EvalRun, load_run
from cogeval.data.json_limits import MAX_CASE_DEPTH, text_depth
from cogeval.data.runfile import _read_carefully, run_from_text
from cogeval.errors import CogevalError
from tests.data.test_fuzz_readers import FUZZ, PLAIN, RUNS, run_files
from tests.data.test_runfile_fast import EVERY_FEATURE, FIXTURES, WRITTEN_BY_COGEVAL, every_feature_run

WHERE = "run file 'x.json'"
FILES = [*WRITTEN_BY_COGEVAL, *FIXTURES.glob("*.json")]


def file_text(run: EvalRun) -> str:
    """What ``save`` writes for a run: equal text means equal values of equal JSON types (``1`` is not ``1.0``)."""
    return json.dumps(run.to_dict(), ensure_ascii=False, indent=2, allow_nan=False)


def both(raw: bytes) -> tuple[EvalRun | None, EvalRun | CogevalError]:
    try:
        careful: EvalRun | CogevalError = _read_carefully(raw, WHERE)
    except CogevalError as error:
        careful = error
    return run_from_text(raw, WHERE), careful


LONE_SURROGATE = b"\\ud83d"
"""How ``every_feature_run``'s lone surrogate is written: JSON text can hold it, only ``json`` reads it."""


def without_lone_surrogates(raw: bytes) -> bytes:
    return raw.replace(LONE_SURROGATE, b"\\u00e9")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_fixture_reads_the_same_both_ways(path):
    raw = path.read_bytes()
    if LONE_SURROGATE in raw:
        assert run_from_text(raw, WHERE) is None
        raw = without_lone_surrogates(raw)
    fast, careful = both(raw)
    if path.name == "full-seconds.json":  # cogeval's own file from before the format: only the careful path converts it
        assert fast is None
    else:
        assert fast is not None, "a valid run file is read by the fast path"
        assert file_text(fast) == file_text(careful)
        assert fast.results[0].model_fields_set == careful.results[0].model_fields_set


def test_load_run_takes_the_fast_path_and_the_same_bytes_come_back(tmp_path):
    edited = tmp_path / "edited.json"
    edited.write_bytes(without_lone_surrogates(EVERY_FEATURE.read_bytes()))
    path = load_run(edited).save(tmp_path / "run.json")  # as cogeval writes it
    assert run_from_text(path.read_bytes(), WHERE) is not None
    again = load_run(path).save(tmp_path / "again.json")
    assert again.read_bytes() == path.read_bytes()


def test_a_run_with_a_lone_surrogate_loads_through_the_careful_path_unchanged(tmp_path):
    path = every_feature_run().save(tmp_path / "run.json")
    assert load_run(path) == every_feature_run() == load_run(EVERY_FEATURE)


def test_a_byte_order_mark_is_read_by_both(tmp_path):
    raw = codecs.BOM_UTF8 + (FIXTURES / "minimal.json").read_bytes()
    fast, careful = both(raw)
    assert fast is not None and file_text(fast) == file_text(careful)


def document_with(**case_fields) -> bytes:
    document = json.loads(json.dumps(RUNS[1]))  # minimal.json
    document["results"][0]["case"].update(case_fields)
    return json.dumps(document).encode()


def nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(("text", "why"), [
    (b'"metadata": {"x": NaN}', "NaN"),
    (b'"metadata": {"x": [1e999]}', "a number past the float range"),
    (b'"metadata": {"x": -Infinity}', "-Infinity"),
    (b'"metadata": {"x": "\\ud83d"}', "a lone surrogate, which only json reads"),
    (b'"metadata": ["not", "an", "object"]', "metadata that is no object"),
    (b'"turns": []', "turns that are empty"),
    (b'"turns": [1]', "a turn that is a number"),
])
def test_what_only_the_careful_path_can_judge_is_left_to_it(text, why):
    raw = document_with().replace(b'"input": ', text + b', "input": ', 1)
    fast, careful = both(raw)
    assert fast is None, why
    if why.startswith("a lone surrogate"):  # the careful path reads it: JSON escapes may hold one
        assert isinstance(careful, EvalRun) and careful.results[0].case.metadata == {"x": "\ud83d"}
    else:
        assert isinstance(careful, CogevalError)


@pytest.mark.parametrize("levels", [MAX_CASE_DEPTH - 1, MAX_CASE_DEPTH, MAX_CASE_DEPTH + 1])
def test_a_case_nested_near_its_limit_is_read_alike_or_left_to_the_careful_path(levels):
    raw = document_with(metadata={"deep": nested(levels - 1)})  # the metadata object is one level
    fast, careful = both(raw)
    if levels <= MAX_CASE_DEPTH:
        assert isinstance(careful, EvalRun)
        assert fast is not None and file_text(fast) == file_text(careful)
    else:
        assert fast is None and isinstance(careful, CogevalError)


@pytest.mark.parametrize("field", ["occurrence", "trial", "usage"])
def test_a_count_past_int64_is_left_to_the_careful_path(field):
    document = json.loads(json.dumps(RUNS[1]))
    document["results"][0][field] = {"inputTokens": 2**63} if field == "usage" else 2**63
    fast, careful = both(json.dumps(document).encode())
    assert fast is None
    assert "is too large (at most 2**63 - 1)" in str(careful)
    document["results"][0][field] = {"inputTokens": 2**63 - 1} if field == "usage" else 2**63 - 1
    fast, careful = both(json.dumps(document).encode())
    assert fast is not None and file_text(fast) == file_text(careful)


def test_results_without_occurrence_are_numbered_alike():
    document = json.loads(json.dumps(RUNS[1]))
    first = document["results"][0]
    document["results"] = [first, {**first, "trial": 1}, {**first, "occurrence": 5}, first]
    fast, careful = both(json.dumps(document).encode())
    assert [r.occurrence for r in careful.results] == [0, 0, 5, 2]
    assert fast is not None and file_text(fast) == file_text(careful)
    assert [r.model_fields_set for r in fast.results] == [r.model_fields_set for r in careful.results]


@pytest.mark.parametrize(("text", "depth"), [
    (b"1", 0), (b"[]", 1), (b'{"a": [1, {"b": 2}]}', 3), (b'["[[[", "\\"[", "\\\\", [[]]]', 3),
    (b'{"a\\\\": "]]]"}', 1), (b'["", "", "]", [""]]', 2),
])
def test_text_depth_counts_brackets_outside_strings(text, depth):
    assert text_depth(text) == depth


@FUZZ
@given(data=run_files())
def test_fuzzed_files_read_the_same_both_ways_or_are_left_to_the_careful_path(data):
    fast, careful = both(data)
    if fast is not None:
        assert isinstance(careful, EvalRun), f"the fast path read what the careful one refuses: {careful}"
        assert file_text(fast) == file_text(careful)
        assert [r.model_fields_set for r in fast.results] == [r.model_fields_set for r in careful.results]


SCORES = st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**53, 2**53)


@FUZZ
@given(values=st.lists(PLAIN, min_size=5, max_size=5), score=SCORES, duration=SCORES)
def test_valid_files_with_any_json_values_read_the_same_both_ways(values, score, duration):
    document = json.loads(json.dumps(RUNS[1]))
    result = document["results"][0]
    result.update(output=values[0], toolCalls=values[1], duration=duration, reviewer=values[2])
    result["case"]["metadata"] = {"v": values[3]}
    result["scores"][0].update(score=score, details=values[4])
    fast, careful = both(json.dumps(document).encode())
    assert isinstance(careful, EvalRun)
    assert fast is not None, "a valid file is read by the fast path"
    assert file_text(fast) == file_text(careful)


def test_the_store_lists_a_valid_file_through_the_fast_path(tmp_path, monkeypatch):
    from cogeval import RunStore
    from cogeval.store import run_store as store

    every_feature_run().save(tmp_path / "run.json")
    read: list[bytes] = []
    monkeypatch.setattr(store, "run_from_text", lambda raw, where: read.append(raw) or run_from_text(raw, where))
    assert [s["id"] for s in RunStore(tmp_path).list()] == [every_feature_run().run_id]
    assert read == [(tmp_path / "run.json").read_bytes()]

