"""Blinded labelling at scale: sources paired by task id, the JSONL manifest, labels read back, evaluate_pairwise."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cogeval import (
    Case,
    DirectoryTraceSource,
    EvalSuite,
    evaluate_pairwise,
    export_pairwise_cases,
    human_labels,
    human_pairwise,
    run_pairwise,
)
from cogeval.errors import DatasetError, InputError
from cogeval.pairwise import MANIFEST_FIELDS, source_tasks

DATA = [{"input": "2+2", "expected": "4"}, {"input": "3+3", "expected": "6"}, {"input": "5*5", "expected": "25"},
        {"input": "2+2", "expected": "4"}]
KEY = {q: Case(q, expected=e).key for q, e in [("2+2", "4"), ("3+3", "6"), ("5*5", "25")]}
TASKS = [KEY["2+2"], KEY["3+3"], KEY["5*5"], KEY["2+2"] + "#1"]


def guess(q: str) -> str:
    return "4" if q == "2+2" else "?"


def run_a():
    return EvalSuite(DATA, guess, progress=False, name="a").run()


def traces_b(folder):
    """Variant B as a folder of traces (no task ids: they come from the case keys, numbered by repeat)."""
    folder.mkdir()
    lines = [json.dumps({"input": d["input"], "expected": d["expected"], "output": str(eval(d["input"])),
                         "latency_ms": 12}) for d in DATA]
    (folder / "b.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "notes.txt").write_text("ignored")
    (folder / ".hidden.json").write_text("not json")
    return DirectoryTraceSource(folder)


def label(line: dict) -> str:
    """A person who prefers the numeric answer, and sees nothing but the responses."""
    numeric = [r.isdigit() for r in (line["response_1"], line["response_2"])]
    return "tie" if numeric[0] == numeric[1] else ("1" if numeric[0] else "2")


def test_blinded_round_trip_with_seeded_orders(tmp_path):
    a, b = run_a(), traces_b(tmp_path / "b")
    path = export_pairwise_cases(a, b, ["correct", "concise"], tmp_path / "pairs.jsonl", seed=5)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [tuple(line) for line in lines] == [MANIFEST_FIELDS] * 8
    assert MANIFEST_FIELDS == ("case_id", "task_id", "criterion", "task_input", "response_1", "response_2",
                               "first_variant")
    assert [(line["task_id"], line["criterion"]) for line in lines] == [
        (t, c) for t in TASKS for c in ("correct", "concise")]
    firsts = ["a" if draw == 0 else "b" for draw in np.random.default_rng(5).integers(0, 2, size=4)]
    assert [line["first_variant"] for line in lines] == [f for f in firsts for _ in range(2)]
    for line in lines:
        outputs = {"a": guess(line["task_input"]), "b": str(eval(line["task_input"]))}
        second = "b" if line["first_variant"] == "a" else "a"
        assert (line["response_1"], line["response_2"]) == (outputs[line["first_variant"]], outputs[second])
    assert len({line["case_id"] for line in lines}) == 8
    assert export_pairwise_cases(a, b, ["correct", "concise"], tmp_path / "again.jsonl", seed=5).read_text() == path.read_text()

    for line in lines:
        line["preferred"] = label(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    labels = human_labels(path, "correct", "people")
    assert labels.missing == []
    result = evaluate_pairwise(a, b, None, [labels])
    assert [t.task_id for t in result.tasks] == TASKS
    assert [v.winner for v in result.verdicts["people"]] == ["tie", "b", "b", "tie"]
    win = result.win_rate("people")
    assert (win.wins, win.losses, win.ties, win.rate) == (2, 0, 2, 0.75)
    assert result.comparators["people"] == {"kind": "labels", "path": str(path), "criterion": "correct"}


def test_missing_labels_are_reported_not_tied(tmp_path):
    path = export_pairwise_cases(run_a(), traces_b(tmp_path / "b"), "correct", tmp_path / "pairs.jsonl", seed=0)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["preferred"], lines[1]["preferred"], lines[2]["preferred"] = "", None, "tie"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.warns(UserWarning) as caught:
        labels = human_labels(path, "correct", "people")
    assert str(caught[0].message) == (f"{path}: 3 of 4 tasks have no label for criterion 'correct' "
                                      f"({TASKS[0]!r}, {TASKS[1]!r}, {TASKS[3]!r}); they get no verdict")
    assert labels.missing == [TASKS[0], TASKS[1], TASKS[3]]
    result = evaluate_pairwise(run_a(), tmp_path / "b", DATA, [labels])
    win = result.win_rate("people")
    assert (win.n, win.ties, win.missing) == (1, 1, 3)
    assert result.to_frame()["error"].tolist() == ["not labelled", "not labelled", None, "not labelled"]


@pytest.mark.parametrize("change, message", [
    ({"first_variant": "c"}, "line 2: 'first_variant' must be 'a' or 'b'; got 'c'"),
    ({"first_variant": None}, "line 2: 'first_variant' must be 'a' or 'b'; got None"),
    ({"preferred": "A"}, "line 2: 'preferred' must be \"1\", \"2\" or \"tie\" (or empty when not labelled); got 'A'"),
    ({"preferred": 3}, "line 2: 'preferred' must be \"1\", \"2\" or \"tie\" (or empty when not labelled); got 3"),
    ({"task_id": "t1"}, "line 2: task 't1' is labelled twice for criterion 'c' (also on line 1)"),
])
def test_invalid_label_lines_are_named(tmp_path, change, message):
    path = tmp_path / "labels.jsonl"
    lines = [{"task_id": "t1", "criterion": "c", "first_variant": "a", "preferred": "1"},
             {"task_id": "t2", "criterion": "c", "first_variant": "b", "preferred": "2", **change}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DatasetError) as caught:
        human_labels(path, "c", "people")
    assert str(caught.value) == f"{path}: {message}"


def test_labels_file_problems_are_named(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"task_id": "t1", "criterion": "c", "first_variant": "a", "preferred": "1"}\n\n{oops\n')
    with pytest.raises(DatasetError) as caught:
        human_labels(path, "c", "people")
    assert str(caught.value).startswith(f"{path}: line 3 is not valid JSON: ")
    path.write_text('{"task_id": "t1", "criterion": "c", "first_variant": "a", "preferred": "1"}\n')
    with pytest.raises(DatasetError) as caught:
        human_labels(path, "concise", "people")
    assert str(caught.value) == f"{path} has no line with criterion 'concise'; its criteria: 'c'"
    labels = human_labels(path, "c", "people")
    assert labels.verdicts["t1"].winner == "a" and labels.verdicts["t1"].ab == "a"


def test_export_skips_failed_tasks_and_checks_criteria(tmp_path):
    a = [{"task_id": "t1", "input": "q1", "output": "x"}, {"task_id": "t2", "input": "q2", "output": "", "error": "boom"}]
    b = [{"task_id": "t1", "input": "q1", "output": "y"}, {"task_id": "t2", "input": "q2", "output": "z"}]
    path = export_pairwise_cases(a, b, ["c"], tmp_path / "m.jsonl")
    assert [json.loads(line)["task_id"] for line in path.read_text().splitlines()] == ["t1"]
    with pytest.raises(InputError) as caught:
        export_pairwise_cases(a, b, ["c", "c"], tmp_path / "m.jsonl")
    assert str(caught.value) == "criteria must be distinct; got ['c', 'c']"
    with pytest.raises(InputError) as caught:
        export_pairwise_cases(a, b, [], tmp_path / "m.jsonl")
    assert str(caught.value) == "criteria must be a non-empty string or list of strings; got []"


def test_tasks_in_one_source_only_are_left_out_with_a_warning():
    a = [{"task_id": "t1", "input": "q1", "output": "x"}, {"task_id": "t2", "input": "q2", "output": "x"}]
    b = [{"task_id": "t1", "input": "q1", "output": "y"}, {"task_id": "t3", "input": "q3", "output": "y"}]
    with pytest.warns(UserWarning) as caught:
        result = evaluate_pairwise(a, b, None, [human_pairwise("h", ask=lambda c, x, y: "tie")])
    assert str(caught[0].message) == "2 task(s) not in both sources are left out: 't2', 't3'"
    assert [t.task_id for t in result.tasks] == ["t1"]


def test_a_dataset_chooses_the_tasks_their_order_and_the_cases(tmp_path):
    run = run_a()
    traces = traces_b(tmp_path / "b")
    wanted = [{"input": "5*5", "expected": "25", "context": "arithmetic"}, {"input": "3+3", "expected": "6"}]
    seen = []
    with pytest.warns(UserWarning, match=r"^2 task\(s\) not in both sources and the dataset are left out: "):
        result = evaluate_pairwise(run, traces, wanted,
                                   [human_pairwise("h", ask=lambda case, x, y: seen.append(case.context) or "2")])
    assert [t.task_id for t in result.tasks] == [KEY["5*5"], KEY["3+3"]] and seen == ["arithmetic", None]


def test_run_pairwise_and_evaluate_pairwise_pair_the_same_tasks(tmp_path):
    ask = human_pairwise("h", ask=lambda case, x, y: "tie")
    live = run_pairwise(DATA, guess, lambda q: str(eval(q)), [ask])
    run_b = EvalSuite(DATA, lambda q: str(eval(q)), progress=False).run()
    run_b.save_run(tmp_path / "runs/")
    stored = evaluate_pairwise(run_a().to_run(), tmp_path / "runs", None, [ask])
    assert [t.task_id for t in live.tasks] == [t.task_id for t in stored.tasks] == TASKS
    assert [(t.output_a, t.output_b) for t in live.tasks] == [(t.output_a, t.output_b) for t in stored.tasks]


# -- sources -----------------------------------------------------------------------------------


def test_directory_source_reads_run_files_and_traces(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    EvalSuite(DATA[:2], guess, progress=False).run().save_run(folder / "run.json")
    (folder / "more.json").write_text(json.dumps([{"task_id": "extra", "input": "q", "output": "o"}]))
    (folder / "one.json").write_text(json.dumps({"input": "5*5", "output": "25", "expected": "25"}))
    (folder / "20261130T000000000Z-00000000.pairwise.json").write_text('{"format": "cogeval.pairwise"}')
    source = DirectoryTraceSource(folder)
    assert [p.name for p in source.files()] == ["more.json", "one.json", "run.json"]
    assert source.task_ids() == ["extra", KEY["5*5"], KEY["2+2"], KEY["3+3"]]
    tasks = source_tasks(source)
    assert tasks[KEY["3+3"]][3] == "?" and tasks["extra"][2] == Case("q")


def test_a_task_twice_in_one_source_is_named(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"task_id": "t", "input": "q", "output": "o"}\n')
    (folder / "b.jsonl").write_text('{"task_id": "t", "input": "q", "output": "p"}\n')
    with pytest.raises(InputError) as caught:
        DirectoryTraceSource(folder).task_ids()
    assert str(caught.value) == (f"task id 't' appears twice in one source: {folder / 'a.jsonl'}: line 1 and "
                                 f"{folder / 'b.jsonl'}: line 1")


def test_bad_traces_and_sources_are_named(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"input": "q"}\n')
    with pytest.raises(InputError) as caught:
        source_tasks(path)
    assert str(caught.value) == (f"{path}: line 1: a trace needs 'input' and 'output' (and may have 'task_id', "
                                 "'case_key', 'expected', 'context', 'metadata', 'error'); got keys 'input'")
    with pytest.raises(InputError) as caught:
        DirectoryTraceSource(path)
    assert str(caught.value) == f"DirectoryTraceSource needs a folder of run files or traces; '{path}' is not one"
    with pytest.raises(InputError) as caught:
        source_tasks(42, "source_a")
    assert str(caught.value) == ("source_a must be a run, a suite result, a run or trace file, a folder, a "
                                 "DirectoryTraceSource or a list of trace records; got 42")
