"""Fast run files (issue 16 item 1): the same bytes written and the same runs read as before.

The references are files, not code: ``every-feature.json`` was written by cogeval before reading and
writing were made fast (from the run :func:`every_feature_run` builds), the other fixtures by hand or
by earlier cogeval, and the format's own example is copied verbatim from ``shared/formats``.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import math
import pathlib

import pytest
from formats_example import FORMAT_EXAMPLE, format_example

from cogeval.data import Case, EvalRun, load_run
from cogeval.data.file_form import from_file, to_file
from cogeval.data.gc_pause import paused_gc
from cogeval.data.json_limits import loads
from cogeval.data.jsonable import VALUE_DEPTH, jsonable
from cogeval.data.runfile import run_from_json
from cogeval.errors import InputError, RunFileError

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "runs"
EVERY_FEATURE = FIXTURES / "every-feature.json"
WRITTEN_BY_COGEVAL = [EVERY_FEATURE, FIXTURES / "full.json",
                      pathlib.Path(__file__).parents[1] / "evaluate" / "fixtures" / "suite-run.json"]


def every_feature_run() -> EvalRun:
    """Two trials of four cases: a failed answer with NaN scores, judge usage, a multi-turn case, metadata,
    unicode (a lone surrogate too), prompt versions, tool calls, statistical values and unknown keys."""
    def usage(i):
        return {"input_tokens": 10 + i, "output_tokens": 3 + i, "cost": 0.001 * (i + 1) if i % 3 else None}
    def prompt(v):
        return {"key": "qa-system", "version_id": f"pv_{v}", "version": v, "ab_test": "arm-b" if v == 2 else None}
    cases = [
        Case("What is 2+2?", expected="4", metadata={"topic": "math", "level": 1}),
        Case("Translate: 猫 🐱", expected="cat", context=["doc «a»", {"page": 3}], metadata={"topic": "langue"}),
        Case(turns=["Hi", {"role": "user", "content": "And in French? ☕"}], metadata={"thread": True}),
        Case({"question": "nested", "items": [1, 2.5, None, True]}, expected={"answer": [0.1, 1e-07, 1e+21]}),
    ]
    results = []
    for trial in range(2):
        for i, case in enumerate(cases):
            failed = (i == 1 and trial == 1)
            r = {
                "case_key": case.key, "trial": trial, "case": case.to_dict(),
                "output": "" if failed else f"answer {i}/{trial} — ✓ \ud83d" if i == 0 else ({"text": "ok", "n": i} if i == 3 else f"réponse {i}"),
                "error": "TimeoutError: no answer in 30 s" if failed else None,
                "duration": 1234.5 + i if not failed else 30000.0,
                "usage": usage(i), "trace_id": f"tr-{trial}-{i}", "prompt": prompt(1 + (i + trial) % 2),
                "tool_calls": [{"name": "search", "arguments": {"q": "chats"}}] if i == 1 else None,
                "scores": [
                    {"metric": "exact_match", "score": math.nan if failed else float(i % 2), "error": "target failed" if failed else None},
                    {"metric": "correctness", "score": math.nan if failed else 0.25 * i,
                     "details": None if failed else {"reasoning": "Juge: «correct» 👍", "votes": [1, 0, 1]}},
                ],
                "statistical_values": {"tone": 0.5 + i / 10, "unknown": None},
                "reviewer": {"name": "Zoë", "tags": ("a", "b")},
            }
            if case.turns:
                r["turns"] = [
                    {"input": t, "output": f"turn {k}", "duration": 100.0 * (k + 1), "usage": usage(k), "prompt": prompt(1),
                     **({"error": "turn failed"} if k == 1 and trial == 1 else {})}
                    for k, t in enumerate(case.turns)
                ]
            results.append(r)
    return EvalRun.model_validate({
        "run_id": "20261022T101530123Z-0badcafe", "started_at": "2026-10-22T10:15:30.123Z",
        "finished_at": "2026-10-22T10:15:34.500Z", "name": "every feature · ünïcödé",
        "metadata": {"model": "gpt-4o-mini", "commit": "a1b2c3d", "tags": ["nightly", "☾"], "seed": 7},
        "config": {"metrics": [{"name": "exact_match", "higher_is_better": True, "params": {"ignore_case": False}},
                               {"name": "correctness", "higher_is_better": True, "params": {"scale": 1}}],
                   "statistical_metrics": [{"name": "latency", "higher_is_better": False, "kind": "run"},
                                           {"name": "tone", "higher_is_better": True, "kind": "run"}],
                   "judge": {"model": "gpt-4o", "temperature": 0, "samples": 3}, "trials": 2, "concurrency": 4,
                   "target": {"type": "chat", "model": "gpt-4o-mini"}, "timeoutS": 30},
        "results": results,
        "assertions": [{"name": "mean exact_match ≥ 0.4", "passed": True, "message": "0.43 ≥ 0.4", "actual": 0.43, "expected": 0.4},
                       {"name": "no errors", "passed": False, "actual": {"errors": 1}, "expected": 0}],
        "stats": {"total": 8, "errors": 1, "duration": 4377.0, "cost": 0.012, "metric_errors": 1, "judge_errors": 0,
                  "judge_cost": 0.004, "judge_calls": 7, "judge_cache_hits": 1, "judge_input_tokens": 900,
                  "judge_output_tokens": 120},
        "status": "interrupted",
    })


def test_a_run_is_written_byte_for_byte_as_before(tmp_path):
    path = every_feature_run().save(tmp_path / "run.json")
    assert path.read_bytes() == EVERY_FEATURE.read_bytes()


@pytest.mark.parametrize("path", WRITTEN_BY_COGEVAL, ids=lambda p: p.name)
def test_a_file_cogeval_wrote_is_read_and_written_back_byte_for_byte(tmp_path, path):
    assert load_run(path).save(tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_reading_gives_the_run_that_was_written():
    run, read = every_feature_run(), load_run(EVERY_FEATURE)
    assert read == run
    assert read.model_dump() == run.model_dump()
    failed = read.results[5]
    assert failed.error and math.isnan(failed.scores[0].score) and math.isnan(failed.scores[1].score)
    assert read.results[0].output.endswith("\ud83d")  # the lone surrogate comes back as it was
    assert read.results[2].turns[1].input == {"role": "user", "content": "And in French? ☕"}
    assert read.stats.judge_calls == 7 and read.status == "interrupted"
    assert read.results[0].model_extra == {"reviewer": {"name": "Zoë", "tags": ["a", "b"]}}


@pytest.mark.parametrize("path", [FORMAT_EXAMPLE, FIXTURES / "format-example.json"], ids=["shared", "fixture"])
def test_the_formats_own_example_loads_verbatim(path):
    run = load_run(format_example() if path == FORMAT_EXAMPLE else path)  # skips when shared/ is missing, fails under CI
    assert run.run_id == "20261022T101530123Z-1a2b3c4d" and run.results[0].case_key == "3a7bd3..."
    assert run.config.metrics[0].name == "exactMatch" and run.prompts["support"].version_id == "ver_2"


def test_reading_parsed_json_leaves_it_unchanged_and_unshared():
    data = json.loads(EVERY_FEATURE.read_text(encoding="utf-8"))
    before = copy.deepcopy(data)
    run = run_from_json(data, "run file 'x.json'")
    assert data == before
    assert from_file(data) == from_file(before) and data == before
    assert run.config.metrics[0].params == {"ignore_case": False}


def test_writing_leaves_the_models_data_unchanged():
    data = every_feature_run().model_dump(by_alias=True)
    before = copy.deepcopy(data)
    to_file(data)
    assert data == before


def test_the_collector_is_paused_and_given_back():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_was_made_while_paused_leaves_the_youngest_generation_unexamined():
    gc.collect()
    with paused_gc():
        made = [[i] for i in range(200_000)]
    assert gc.get_count()[0] < 1_000, "the young generation does not hold the 200,000 lists"
    assert not any(item is made[0] for item in gc.get_objects(generation=0))
    assert any(item is made[0] for item in gc.get_objects(generation=2))
    garbage = [[]]
    garbage[0].append(garbage)  # a cycle, made after
    del garbage
    assert gc.collect() >= 1, "the collector still finds cycles"


def test_a_block_that_made_few_objects_moves_nothing():
    gc.collect()
    with paused_gc():
        few = [[i] for i in range(100)]
    assert any(item is few[0] for item in gc.get_objects(generation=0))


def test_objects_someone_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            [[i] for i in range(1_000)]
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


# -- the fast paths still refuse what they refused, with the same words --------------------------------


def run_text(**changes) -> str:
    data = json.loads(EVERY_FEATURE.read_text(encoding="utf-8"))
    data["results"][3]["scores"][0].update(changes)
    return json.dumps(data, indent=2)


def test_a_schema_error_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(run_text(score=[0.5]), encoding="utf-8")
    with pytest.raises(RunFileError) as caught:
        load_run(path)
    assert str(caught.value) == f"run file '{path}' is invalid: results[3].scores[0].score: Input should be a valid number"


@pytest.mark.parametrize(("number", "message"), [
    ("9" * 4301, "results[3].scores[0].score: an integer of 4301 digits is too long (at most 4300)"),
    ("-" + "9" * 5000, "results[3].scores[0].score: an integer of 5000 digits is too long (at most 4300)"),
    ("1e999", "results[3].scores[0].score: 1e999 is beyond the range of a float (about ±1.8e308)"),
    ("NaN", "results[3].scores[0].score: NaN is not a JSON number; write null for a missing number"),
])
def test_numbers_beyond_the_limits_are_named(tmp_path, number, message):
    path = tmp_path / "run.json"
    path.write_text(run_text(score="__n__").replace('"__n__"', number), encoding="utf-8")
    with pytest.raises(RunFileError) as caught:
        load_run(path)
    assert str(caught.value) == f"run file '{path}' is invalid: {message}"


def test_an_integer_limit_raised_by_the_interpreter_does_not_lift_ours(monkeypatch):
    monkeypatch.setattr("sys.get_int_max_str_digits", lambda: 0)
    with pytest.raises(InputError, match="an integer of 4301 digits is too long"):
        loads("[" + "1" * 4301 + "]", "x")


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '["' + "[" * 200 + '", "", "\\"", "' + "{" * 200 + '\\\\", [[]]]'
    assert loads(text, "x") == ["[" * 200, "", '"', "{" * 200 + "\\", [[]]]


def test_nesting_is_found_behind_strings_of_brackets_and_empty_strings():
    text = '["", "]]", "", ' + "[" * 101 + "]" * 101 + "]"
    with pytest.raises(InputError, match=r"^x: \[3\]\[0\]\[0\]\[0\]\[0\]\[0\]…: nested deeper than 100 levels"):
        loads(text, "x")


def test_a_case_that_is_not_plain_json_is_still_checked_in_full():
    with pytest.raises(InputError, match="collide once written as strings"):
        Case("q", metadata={"\ud83d\ude00": 1, "😀": 2})
    with pytest.raises(InputError, match="nested deeper than 80 levels"):
        Case(json.loads("[" * 81 + "]" * 81))
    assert Case(("a", 1)).to_dict() == {"input": ("a", 1)}


# -- writing without a walk of every result gives what the walk gave ----------------------------------


def walked(run: EvalRun) -> dict:
    """The file's data as it was made before: ``jsonable`` over the whole ``model_dump``."""
    with pytest.warns(UserWarning) if run.results[0].error == 5 else contextlib.nullcontext():
        return to_file(jsonable(run.model_dump(by_alias=True)))


def test_a_field_given_a_value_of_another_type_after_validation_is_written_as_before(tmp_path):
    run = every_feature_run()
    run.results[0].error = 5  # no validation on assignment: the writer walks the whole run again
    run.results[1].model_extra["reviewer"] = {("a", 1): {1, 2}}
    run.metadata[("tuple", "key")] = b"bytes"
    with pytest.warns(UserWarning):  # pydantic's, as before
        assert run.to_dict() == walked(run)
        path = run.save(tmp_path / "run.json")
    assert json.loads(path.read_text(encoding="utf-8"))["results"][0]["error"] == 5


def test_a_deep_value_in_a_turns_prompt_is_cut_to_the_files_limit(tmp_path):
    run = every_feature_run()
    deep: list = []
    for _ in range(VALUE_DEPTH - 1):
        deep = [deep]
    run.results[2].turns[0].prompt.version = deep  # level 7 of the file: 95 more levels would be 101
    assert run.to_dict() == walked(run)
    assert load_run(run.save(tmp_path / "run.json")).results[2].turns[0].prompt.version != deep
