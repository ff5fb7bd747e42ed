"""Hostile files are errors, never crashes: every reader against deep nesting, numbers it cannot hold,
duplicate result identities and CSV rows of the wrong width (the limits of cogeval.data.json_limits)."""

from __future__ import annotations

import json
import math
import pathlib

import pandas as pd
import pytest

from cogeval import RunStore, compare_runs
from cogeval.data import Case, Dataset, EvalRun, load_run, save_run
from cogeval.data.json_limits import MAX_CASE_DEPTH, MAX_DEPTH, check_depth, check_json, loads
from cogeval.data.runfile import run_from_json
from cogeval.errors import DatasetError, InputError, RunFileError
from cogeval.pairwise.file import read_pairwise_file
from cogeval.pairwise.labels import export_pairwise_cases, human_labels
from cogeval.scoring.judge import JudgeError
from cogeval.scoring.judge_answer import parse_judgement

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PAIRWISE = pathlib.Path(__file__).parents[1] / "pairwise" / "fixtures" / "v1.pairwise.json"
KEY = Case("What is 2+2?", expected="4").key
NESTED = "__nested__"


def nested(levels: int) -> str:
    """JSON text of ``levels`` arrays, one inside the other."""
    return "[" * levels + "1" + "]" * levels


def run_text(result: dict | None = None, **top) -> str:
    """A one-line run file (the fixture minimal.json) with changes; the string NESTED stands for raw text."""
    data = json.loads((FIXTURES / "runs" / "minimal.json").read_text(encoding="utf-8"))
    data["results"][0].update(result or {})
    data.update(top)
    return json.dumps(data)


def write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run_error(path: pathlib.Path) -> str:
    with pytest.raises(RunFileError) as caught:
        load_run(path)
    return str(caught.value)


# -- run files: nesting ------------------------------------------------------------------------------------


def test_nesting_beyond_the_limit_names_the_field_line_and_column(tmp_path):
    text = run_text(metadata={"model": NESTED}).replace(f'"{NESTED}"', nested(150))
    column = text.index("[[") + (MAX_DEPTH - 2) + 1  # the root and metadata are levels 1 and 2
    path = write(tmp_path, "run.json", text)
    assert run_error(path) == (
        f"run file '{path}' is invalid: metadata.model[0][0][0][0]…: nested deeper than 100 levels (column {column})"
    )


def test_nesting_past_the_parser_s_own_limit_is_the_same_error(tmp_path):
    text = run_text({"toolCalls": NESTED}, name="deep").replace(f'"{NESTED}"', nested(5000))
    path = write(tmp_path, "run.json", text.replace(', "', ',\n "'))  # several lines: the line is named
    assert run_error(path) == (  # the result is on line 7, its toolCalls on line 12; results[0] is level 3
        f"run file '{path}' is invalid: results[0].toolCalls[0][0][0]…: nested deeper than 100 levels (line 12 column 112)"
    )


def test_a_document_exactly_at_the_limit_loads_and_what_cogeval_writes_of_it_too(tmp_path):
    text = run_text(metadata={"model": NESTED}).replace(f'"{NESTED}"', nested(MAX_DEPTH - 2))
    run = load_run(write(tmp_path, "run.json", text))
    assert load_run(save_run(run, tmp_path / "again.json")).metadata.keys() == {"model"}  # the writer cuts deeper


def test_a_case_at_its_limit_round_trips_through_a_run_file(tmp_path):
    inner: object = "leaf"
    for _ in range(MAX_CASE_DEPTH - 1):
        inner = [inner]
    deep = [inner]  # MAX_CASE_DEPTH levels, as is the metadata holding inner
    case = Case(deep, metadata={"d": inner})
    run = EvalRun.model_validate({"run_id": "20261022T101530123Z-1a2b3c4d", "started_at": "2026-10-22T10:15:30.123Z",
                                  "finished_at": "2026-10-22T10:15:31.000Z",
                                  "results": [{"case_key": case.key, "case": case, "output": deep,
                                               "scores": [{"metric": "m", "score": math.nan}]}]})
    again = load_run(save_run(run, tmp_path / "run.json"))
    assert again == run and again.results[0].case.to_case() == case


def test_a_case_nested_past_its_limit_is_named(tmp_path):
    text = run_text({"case": {"input": NESTED}}).replace(f'"{NESTED}"', nested(MAX_CASE_DEPTH + 1))
    path = write(tmp_path, "run.json", text)
    assert run_error(path) == (
        f"run file '{path}' is invalid: results[0].case: Case field 'input' is nested deeper than 80 levels "
        "(at input[0][0][0][0][0]…)"
    )


# -- run files: numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "field", "message"), [
    ("NaN", "score", "NaN is not a JSON number; write null for a missing number"),
    ("Infinity", "score", "Infinity is not a JSON number; write null for a missing number"),
    ("-Infinity", "score", "-Infinity is not a JSON number; write null for a missing number"),
    ("1e999", "score", "1e999 is beyond the range of a float (about ±1.8e308)"),
    ("9" * 5000, "score", "an integer of 5000 digits is too long (at most 4300)"),
    ("1" + "0" * 400, "score", "Input should be a valid number"),
])
def test_numbers_a_run_file_cannot_hold_are_named(tmp_path, raw, field, message):
    text = run_text({"scores": [{"metric": "exact_match", "score": NESTED}]}).replace(f'"{NESTED}"', raw)
    path = write(tmp_path, "run.json", text)
    assert run_error(path) == f"run file '{path}' is invalid: results[0].scores[0].{field}: {message}"


@pytest.mark.parametrize("field", ["duration", "usage"])
def test_a_float_field_past_the_float_range_is_named(tmp_path, field):
    value = {"cost": NESTED} if field == "usage" else NESTED
    text = run_text({field: value}).replace(f'"{NESTED}"', "-1e400")
    path = write(tmp_path, "run.json", text)
    where = "results[0].usage.cost" if field == "usage" else "results[0].duration"
    assert run_error(path) == f"run file '{path}' is invalid: {where}: -1e400 is beyond the range of a float (about ±1.8e308)"


@pytest.mark.parametrize("field", ["occurrence", "trial"])
def test_a_count_past_int64_is_named(tmp_path, field):
    path = write(tmp_path, "run.json", run_text({field: 10**30}))
    assert run_error(path) == (
        f"run file '{path}' is invalid: results[0].{field}: 1000000000000000000000000000000 is too large (at most 2**63 - 1)"
    )


def test_null_numbers_load_as_nan_and_compare(tmp_path):
    text = run_text({"duration": None, "scores": [{"metric": "exact_match", "score": None}]})
    run = load_run(write(tmp_path, "run.json", text))
    assert math.isnan(run.results[0].scores[0].score) and math.isnan(run.results[0].duration)
    compare_runs(run, run).to_frame()


# -- run files: duplicate identities --------------------------------------------------------------------------


def test_a_result_identity_twice_in_a_file_is_named(tmp_path):
    data = json.loads(run_text({"occurrence": 0, "trial": 0}))
    data["results"].append({**data["results"][0], "output": "5"})
    path = write(tmp_path, "run.json", json.dumps(data))
    assert run_error(path) == (
        f"run file '{path}' is invalid: results[1] has the same case key, occurrence and trial as results[0] "
        f"('{KEY}', 0, 0); a run holds one result per case key, occurrence and trial"
    )


def test_repeats_without_occurrence_are_numbered_not_refused(tmp_path):
    data = json.loads(run_text())
    data["results"].append(data["results"][0])
    run = load_run(write(tmp_path, "run.json", json.dumps(data)))
    assert [r.occurrence for r in run.results] == [0, 1]


def test_every_constructor_refuses_a_duplicate_identity():
    result = {"case_key": "k", "case": {"input": "q"}, "occurrence": 2, "trial": 1}
    with pytest.raises(ValueError, match=r"results\[1\] has the same case key, occurrence and trial as results\[0\] "
                                         r"\('k', 2, 1\)"):
        EvalRun.model_validate({"run_id": "20261022T101530123Z-1a2b3c4d", "started_at": "2026-10-22T10:15:30.123Z",
                                "finished_at": "2026-10-22T10:15:31.000Z", "results": [result, result]})


def test_from_frame_refuses_numbers_past_the_float_range():
    frame = pd.DataFrame({"input": ["a", "b"], "quality": pd.Series([1.0, 10**400], dtype=object)})
    with pytest.raises(InputError) as caught:
        EvalRun.from_frame(frame)
    assert str(caught.value) == (
        "column 'quality' in row 1 is not a finite number: "
        "100000000000000000000000000000000000000000000000000000000... (leave a missing number empty or NaN)"
    )


def test_from_frame_refuses_a_count_past_int64():
    with pytest.raises(ValueError, match=r"results\[0\]\.trial: 9223372036854775808 is too large \(at most 2\*\*63 - 1\)"):
        EvalRun.from_frame(pd.DataFrame({"input": ["a"], "quality": [1.0], "trial": pd.Series([2**63], dtype=object)}))


# -- parsed data (what RunStore hands to run_from_json) and the store ------------------------------------------


def test_run_from_json_checks_data_parsed_by_plain_json():
    data = json.loads(run_text({"duration": NESTED}).replace(f'"{NESTED}"', "Infinity"))
    with pytest.raises(RunFileError) as caught:
        run_from_json(data, "run file 'x.json'")
    assert str(caught.value) == (
        "run file 'x.json' is invalid: results[0].duration: Infinity is not a JSON number; write null for a missing number"
    )
    deep = json.loads(run_text(metadata={"model": NESTED}).replace(f'"{NESTED}"', nested(300)))
    with pytest.raises(RunFileError, match=r"metadata\.model\[0\]\[0\]\[0\]\[0\]…: nested deeper than 100 levels$"):
        run_from_json(deep, "run file 'x.json'")


def test_the_store_skips_hostile_files_and_lists_the_rest(tmp_path):
    good = load_run(FIXTURES / "runs" / "minimal.json")
    save_run(good, tmp_path / "good.json")
    duplicate = json.loads(run_text({"occurrence": 0}))
    duplicate["results"].append(duplicate["results"][0])
    hostile = {
        "deep.json": run_text(metadata={"m": NESTED}).replace(f'"{NESTED}"', nested(400)),
        "deeper.json": run_text(metadata={"m": NESTED}).replace(f'"{NESTED}"', nested(50_000)),
        "digits.json": run_text({"trial": NESTED}).replace(f'"{NESTED}"', "7" * 5000),
        "infinity.json": run_text({"duration": NESTED}).replace(f'"{NESTED}"', "Infinity"),
        "huge.json": run_text({"occurrence": 10**30}),
        "duplicate.json": json.dumps(duplicate),
    }
    for name, text in hostile.items():
        write(tmp_path, name, text)
    skipped: list[dict[str, str]] = []
    listed = RunStore(tmp_path, on_skip=skipped.append).list()
    assert [summary["path"] for summary in listed] == [str(tmp_path / "good.json")]
    assert sorted(pathlib.Path(s["path"]).name for s in skipped) == sorted(hostile)


# -- datasets ---------------------------------------------------------------------------------------------------


def dataset_error(reader, path: pathlib.Path) -> str:
    with pytest.raises(DatasetError) as caught:
        reader(path)
    return str(caught.value)


@pytest.mark.parametrize(("raw", "message"), [
    (nested(101), "input[0][0][0][0][0]…: nested deeper than 100 levels (column 1"),
    (nested(3000), "input[0][0][0][0][0]…: nested deeper than 100 levels (column 1"),
    (nested(MAX_CASE_DEPTH + 1), "Case field 'input' is nested deeper than 80 levels (at input[0][0][0][0][0]…)"),
    ("9" * 4301, "input: an integer of 4301 digits is too long (at most 4300)"),
    ("NaN", "input: NaN is not a JSON number; write null for a missing number"),
    ("-Infinity", "input: -Infinity is not a JSON number; write null for a missing number"),
    ("2e308", "input: 2e308 is beyond the range of a float (about ±1.8e308)"),
])
def test_jsonl_lines_beyond_the_limits_are_named(tmp_path, raw, message):
    path = write(tmp_path, "data.jsonl", '{"input": "fine"}\n{"input": ' + raw + "}\n")
    error = dataset_error(Dataset.from_jsonl, path)
    if "column" in message:  # the record is level 1, so level 101 is the input's 100th bracket, 11 + 99 characters in
        message = message + "10)"
    assert error == f"{path}, line 2: {message}"


@pytest.mark.parametrize(("text", "message"), [
    ("input,expected\nq,a,extra\n",
     "row 1: 3 fields, but the header has 2 ('input', 'expected'); every row needs one cell per column "
     "(quote a cell that holds a comma)"),
    ("input,expected\nq,a\nr,b,shifted\ns,c\n",
     "row 2: 3 fields, but the header has 2 ('input', 'expected'); every row needs one cell per column "
     "(quote a cell that holds a comma)"),
    ("input,expected,context\nq,a,c\n\nr\n",
     "row 2: 1 field, but the header has 3 ('input', 'expected', 'context'); every row needs one cell per column "
     "(an empty cell is None)"),
])
def test_csv_rows_of_the_wrong_width_are_named(tmp_path, text, message):
    path = write(tmp_path, "data.csv", text)
    assert dataset_error(Dataset.from_csv, path) == f"{path}, {message}"


def test_csv_rows_that_all_have_an_extra_field_are_not_read_shifted(tmp_path):
    path = write(tmp_path, "data.csv", "input,expected\nq,a,x\nr,b,y\n")
    assert dataset_error(Dataset.from_csv, path).startswith(f"{path}, row 1: 3 fields, but the header has 2")


def test_csv_quoted_commas_and_multiline_cells_keep_their_width(tmp_path):
    path = write(tmp_path, "data.csv", 'input,expected\n"a, b","line\none"\n\nc,d\n')
    assert Dataset.from_csv(path).to_records() == [{"input": "a, b", "expected": "line\none"}, {"input": "c", "expected": "d"}]


def test_a_csv_cell_longer_than_the_csv_module_s_limit_is_read(tmp_path):
    path = write(tmp_path, "data.csv", f"input,expected\n{'x' * 200_000},a\n")
    assert len(Dataset.from_csv(path)[0].input) == 200_000


@pytest.mark.parametrize(("cell", "message"), [
    ('"' + nested(120) + '"', "field 'metadata': [0][0][0][0][0][0]…: nested deeper than 100 levels (column 101)"),
    ('"{""n"": NaN}"', "field 'metadata': n: NaN is not a JSON number; write null for a missing number"),
])
def test_csv_json_cells_beyond_the_limits_are_named(tmp_path, cell, message):
    path = write(tmp_path, "data.csv", f"input,metadata\nq,{cell}\n")
    assert dataset_error(Dataset.from_csv, path) == f"{path}, row 1: {message}"


def test_records_nested_deeper_than_a_case_allows_are_named():
    deep: object = 1
    for _ in range(2000):
        deep = {"k": deep}
    with pytest.raises(DatasetError) as caught:
        Dataset.from_records([{"input": "q"}, {"input": "q", "tags": deep}])
    assert str(caught.value) == (
        "records[1]: Case field 'metadata' is nested deeper than 80 levels (at metadata.tags.k.k.k.k…)"
    )


# -- pairwise files, label files, judge answers --------------------------------------------------------------


def test_pairwise_files_beyond_the_limits_are_named(tmp_path):
    data = json.loads(PAIRWISE.read_text(encoding="utf-8"))
    data["tasks"][0]["output_a"] = NESTED
    path = write(tmp_path, "x.pairwise.json", json.dumps(data).replace(f'"{NESTED}"', nested(2000)))
    with pytest.raises(RunFileError) as caught:
        read_pairwise_file(path)
    assert str(caught.value).startswith(
        f"pairwise file '{path}' is invalid: tasks[0].output_a[0][0][0]…: nested deeper than 100 levels (column "
    )
    path.write_text(json.dumps(data).replace(f'"{NESTED}"', "Infinity"), encoding="utf-8")
    with pytest.raises(RunFileError) as caught:
        read_pairwise_file(path)
    assert str(caught.value) == (
        f"pairwise file '{path}' is invalid: tasks[0].output_a: Infinity is not a JSON number; write null for a missing number"
    )


def test_label_lines_beyond_the_limits_are_named(tmp_path):
    line = '{"task_id": "t", "criterion": "c", "first_variant": "a", "preferred": "1", "response_1": ' + nested(999) + "}"
    path = write(tmp_path, "labels.jsonl", line + "\n")
    with pytest.raises(DatasetError) as caught:
        human_labels(path, "c", "people")
    assert str(caught.value) == f"{path}: line 1: response_1[0][0][0][0][0]…: nested deeper than 100 levels (column 189)"


@pytest.mark.parametrize(("answer", "message"), [
    ('{"score": 1, "reasoning": ' + nested(5000) + "}",
     "judge answer: reasoning[0][0][0][0][0]…: nested deeper than 100 levels (column 126)"),
    ('{"score": ' + "9" * 6000 + "}", "judge answer: score: an integer of 6000 digits is too long (at most 4300)"),
])
def test_hostile_judge_answers_are_judge_errors(answer, message):
    with pytest.raises(JudgeError) as caught:
        parse_judgement(answer)
    assert str(caught.value) == message


# -- the limits themselves -------------------------------------------------------------------------------------


def test_loads_keeps_what_json_holds():
    text = '{"a": [1, -2.5e-300, 1e308, null, true, "[[[{{{"], "b": {"c": "\\"]]]"}, "n": ' + "1" * 4300 + "}"
    assert loads(text, "x") == json.loads(text)


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"s": "[" * 500, "t": "\\\"" + "{" * 500, "u": ["]" * 300]})
    assert loads(text, "x") == json.loads(text)


def test_check_json_and_check_depth_are_iterative():
    deep: object = None
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InputError, match=r"^x: \[0\]\[0\]\[0\]\[0\]\[0\]\[0\]…: nested deeper than 100 levels$"):
        check_json(deep, "x")
    with pytest.raises(InputError, match=r"^v is nested deeper than 80 levels \(at v\[0\]\[0\]\[0\]\[0\]\[0\]…\)$"):
        check_depth(deep, "v")


def test_a_label_manifest_with_a_nan_output_reads_back(tmp_path):
    a = [{"input": "2+2", "output": math.nan}]
    b = [{"input": "2+2", "output": "4"}]
    out = export_pairwise_cases(a, b, "correct", tmp_path / "pairs.jsonl", seed=0)
    line = json.loads(out.read_text(encoding="utf-8"))
    assert None in (line["response_1"], line["response_2"])  # written as null, never as NaN
    out.write_text(json.dumps({**line, "preferred": "tie"}) + "\n", encoding="utf-8")
    assert human_labels(out, "correct", "people").verdicts[line["task_id"]].winner == "tie"
