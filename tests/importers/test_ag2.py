"""read_ag2_run: AG2 ag2.eval run files written by AG2's own code (fixtures/ag2/make_fixtures.py) as runs."""

from __future__ import annotations

import json
import math
import pathlib

import pytest
from scipy import stats

import cogeval
from cogeval.data import Case, load_run
from cogeval.errors import InputError, RunFileError
from cogeval.importers.ag2 import _looks_like, read_ag2_run

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "ag2"
MINI, LARGE, REPEATS = FIXTURES / "mini.json", FIXTURES / "large.json", FIXTURES / "repeats.json"
METRICS = ["final_answer_matches", "tool_called[lookup_capital]", "no_tool_errors", "token_budget", "brevity"]
COUNTRIES = ["France", "Japan", "Brazil", "Australia", "Canada", "Kenya"]
TIMEOUT = "TimeoutError: no answer after 30 s"


def column(run, metric: str) -> list[float]:
    return run.to_frame()[metric].tolist()


def document(path: pathlib.Path = MINI) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(tmp_path, data, name: str = "run.json") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def changed(tmp_path, change) -> pathlib.Path:
    data = document()
    change(data)
    return write(tmp_path, data)


def error_of(path, **kwargs) -> str:
    with pytest.raises(RunFileError) as caught:
        read_ag2_run(path, **kwargs)
    return str(caught.value)


# -- the mapping -----------------------------------------------------------------------------------------


def test_an_ag2_run_is_a_run_of_its_tasks():
    run = read_ag2_run(MINI)
    assert len(run.results) == 6 and run.dataset.cases == 6 and run.config.trials == 1
    assert [r.case.input for r in run.results] == [f"What is the capital of {c}?" for c in COUNTRIES]
    assert run.results[2].case.expected == {"answer": "Brasília"}
    assert all(r.case_key == Case(r.case.input, expected=r.case.expected).key for r in run.results)
    assert run.metric_names == METRICS  # the label scorer `tone` is no metric
    assert run.directions == dict.fromkeys(METRICS, True)
    assert column(run, "final_answer_matches") == [1, 1, 0, 0, 0, 1]
    assert column(run, "tool_called[lookup_capital]") == [1, 1, 1, 1, 0, 0]
    assert column(run, "no_tool_errors") == [1, 1, 0, 1, 1, 1]
    assert column(run, "token_budget") == [1, 1, 0, 1, 1, 1]
    brevity = column(run, "brevity")  # 1 - (words - 1) / 19, our scorer in make_fixtures.py
    assert brevity[:4] + brevity[5:] == [1 - 12 / 19, 1 - 10 / 19, 1 - 15 / 19, 1 - 10 / 19, 1 - 12 / 19]
    assert math.isnan(brevity[4])


def test_the_run_carries_label_model_and_times():
    run = read_ag2_run(MINI)
    assert run.name == "capitals"
    assert {k: v for k, v in run.metadata.items() if k != "ag2"} == {
        "source": "ag2", "label": "capitals", "suite": "capitals", "target": "trace-source:InMemoryTraceSource",
        "models": ["gpt-4o-mini"], "schema_version": "0.2"}
    kept = run.metadata["ag2"]
    assert kept["run_id"] == "0f1e2d3c4b5a69788796a5b4c3d2e1f0" and "tasks" not in kept
    assert kept["suite"] == {"name": "capitals", "size": 6, "source": "inline"}
    assert kept["aggregates"]["pass_rate"]["final_answer_matches"] == 0.5
    assert kept["aggregates"]["value_counts"] == {"tone": {"chatty": 5, "terse": 1}}
    assert run.config.target == {"type": "ag2", "name": "trace-source:InMemoryTraceSource", "model": "gpt-4o-mini"}
    assert run.config.concurrency == 2
    assert (run.started_at, run.finished_at) == ("2026-12-01T02:00:00.000Z", "2026-12-01T02:00:04.321Z")
    assert (run.stats.total, run.stats.errors, run.stats.duration_s) == (6, 1, 4.321) and math.isnan(run.stats.cost)
    assert run.run_id.startswith("20261201T020000000Z-") and read_ag2_run(MINI).run_id == run.run_id


def test_a_task_keeps_its_metadata_tags_trace_and_feedback():
    france = read_ag2_run(MINI).results[0]
    assert france.case.metadata == {"difficulty": "easy", "ag2": {"task_id": "france", "tags": ["europe"]}}
    assert france.output == "The capital city of France is Paris, which is also its largest city."
    assert (france.error, france.duration) == (None, 1420.0)  # milliseconds, as the run file
    assert (france.usage.input_tokens, france.usage.output_tokens) == (120, 26) and math.isnan(france.usage.cost)
    assert france.trace_id == "0f1e2d3c4b5a69788796a5b4c3d2e1f0-france"
    assert [(c["type"], c["name"], c["arguments"]) for c in france.tool_calls] == [
        ("ToolCallEvent", "lookup_capital", '{"country": "France"}')]
    kept = france.model_extra["ag2"]
    assert list(kept) == ["task_id", "events", "tokens", "budget_violation", "trace_ref", "feedback"]
    assert [e["type"] for e in kept["events"]] == ["ToolCallEvent", "ToolResultEvent", "ModelResponse", "UsageEvent"]
    assert kept["tokens"] == {"input": 120, "output": 26, "cache_creation": 0, "cache_read": 0}
    assert kept["feedback"] == [{"key": "tone", "score": None, "value": "chatty", "comment": None, "detail": None}]
    assert [s.details for s in france.scores] == [None] * 5


def test_a_failed_task_and_a_failed_scorer():
    canada = read_ag2_run(MINI).results[4]
    assert (canada.output, canada.error, canada.duration) == ("", TIMEOUT, 30000.0)
    assert canada.tool_calls == [] and canada.model_extra["ag2"]["events"] == []
    brevity = canada.scores[4]
    assert math.isnan(brevity.score) and brevity.error == "scorer raised: KeyError: 'body'"
    assert brevity.details == {"comment": "scorer raised: KeyError: 'body'"}


def test_compare_runs_finds_the_planted_difference():
    mini, large = read_ag2_run(MINI), read_ag2_run(LARGE)
    assert large.config.target["model"] == "gpt-4o" and column(large, "brevity") == [1.0] * 6
    assert mini.fingerprint == large.fingerprint
    comparison = cogeval.compare_runs(mini, large)
    # AG2 records no direction: each metric's is assumed, and said; two whose names read as costs only inform
    table = comparison.to_frame().set_index("metric")
    assert table["direction_assumed"].all() and not table["higher_is_better"].eq(False).any()
    assert table.loc[table["role"] == "informs"].index.tolist() == ["no_tool_errors", "token_budget"]
    assert comparison.warnings[:3] == [
        "The base run's target failed on 1 of the 6 matched cases (16.7%): they score 0 on higher-is-better metrics "
        "and are left out of lower-is-better ones, so the verdict counts those failures; see .errored for the cases",
        *(f"Metric {name!r} has no direction given and its name reads as a cost, so it informs and does not decide the "
          f"verdict (its row reads higher as better); to make it decide, give its direction: directions={{{name!r}: "
          "False} if lower is better, True if higher is (or name it in decide_on= to let it decide as "
          "higher-is-better)" for name in ("no_tool_errors", "token_budget"))]
    assert comparison.warnings[3] == (
        "No direction was given for metrics 'final_answer_matches', 'tool_called[lookup_capital]', 'brevity': they "
        "were taken as higher-is-better (give directions={'final_answer_matches': False} if lower is better)")
    assert comparison.headline() == (
        "head is better: better on brevity (α = 0.05, 6 matched cases); assumed higher-is-better (no direction "
        "given): brevity; 1 of 6 cases errored in base, scored 0")
    # brevity: paired t on the six differences; the timed-out task counts 0 for the mini run (a failure earns nothing).
    differences = [12 / 19, 10 / 19, 15 / 19, 10 / 19, 1, 12 / 19]
    reference = stats.ttest_1samp(differences, 0.0)  # scipy.stats.ttest_1samp, as R's t.test(d)
    assert table.loc["brevity", "test"] == "t" and table.loc["brevity", "winner"] == "head"
    assert table.loc["brevity", "p_value"] == pytest.approx(reference.pvalue)
    assert table.loc["brevity", "adjusted_p_value"] == pytest.approx(3 * reference.pvalue)  # Holm, smallest of 3
    assert bool(table.loc["brevity", "significant"])
    # final_answer_matches: 3 discordant tasks all won by gpt-4o: exact McNemar p = 2 * 0.5**3, not significant.
    assert table.loc["final_answer_matches", ["difference", "p_value"]].tolist() == [0.5, 0.25]
    assert not bool(table.loc["final_answer_matches", "significant"])


def test_run_agent_repeats_are_trials():
    run = read_ag2_run(REPEATS)
    assert len(run.results) == 4 and run.dataset.cases == 2 and run.config.trials == 2
    assert [(r.case.input, r.occurrence, r.trial) for r in run.results] == [
        ("What is the capital of France?", 0, 0), ("What is the capital of France?", 0, 1),
        ("What is the capital of Japan?", 0, 0), ("What is the capital of Japan?", 0, 1)]
    assert [r.case.metadata["ag2"]["task_id"] for r in run.results] == ["france", "france", "japan", "japan"]
    assert [r.model_extra["ag2"]["task_id"] for r in run.results] == ["france#1", "france#2", "japan#1", "japan#2"]


def test_a_task_id_seen_again_is_the_next_trial(tmp_path):
    path = changed(tmp_path, lambda d: d["tasks"][1].update(task_id="france", inputs=d["tasks"][0]["inputs"],
                                                             reference_outputs=d["tasks"][0]["reference_outputs"]))
    run = read_ag2_run(path)
    assert [(r.case.metadata["ag2"]["task_id"], r.trial) for r in run.results[:3]] == [("france", 0), ("france", 1), ("brazil", 0)]


def test_directions_can_be_given():
    assert read_ag2_run(MINI, directions={"brevity": False}).directions["brevity"] is False
    with pytest.raises(InputError) as caught:
        read_ag2_run(MINI, directions={"tone": True})
    assert str(caught.value) == f"directions names 'tone', which is not a metric of the run; its metrics are {METRICS!r}"
    with pytest.raises(InputError) as caught:
        read_ag2_run(MINI, directions={"brevity": 1})
    assert str(caught.value) == "directions['brevity'] must be True or False (higher is better); got 1"


def test_a_trace_without_a_suite_task_is_named_by_its_task_id(tmp_path):
    def reference_free(data):
        data["tasks"][0].update(inputs={}, reference_outputs=None)
        data["tasks"][1]["inputs"]["country"] = "Japan"
        data["tasks"][2]["metadata"]["ag2"] = "mine"
    run = read_ag2_run(changed(tmp_path, reference_free))
    assert (run.results[0].case.input, run.results[0].case.expected) == ("france", None)
    assert run.results[1].case.metadata["ag2"] == {"task_id": "japan", "tags": ["asia"], "inputs": {"country": "Japan"}}
    assert run.results[2].case.metadata == {"difficulty": "hard", "ag2": "mine",
                                            "ag2_": {"task_id": "brazil", "tags": ["americas"]}}


def test_missing_and_nan_feedback_score_nan_and_say_why(tmp_path):
    def drop(data):
        for index in (0, 4):
            data["tasks"][index]["feedback"] = [f for f in data["tasks"][index]["feedback"] if f["key"] != "brevity"]
        data["tasks"][1]["feedback"][4]["score"] = math.nan  # AG2 writes with json.dumps, which writes NaN
    run = read_ag2_run(changed(tmp_path, drop))
    assert run.results[0].scores[4].error == "AG2 recorded no 'brevity' feedback for this task"
    assert run.results[4].scores[4].error == f"AG2 recorded no 'brevity' feedback for this task (the task failed: {TIMEOUT})"
    assert math.isnan(run.results[1].scores[4].score) and run.results[1].scores[4].error == "AG2 recorded nan"


def test_schema_version_0_1_is_read_too(tmp_path):
    run = read_ag2_run(changed(tmp_path, lambda d: d.update(schema_version="0.1")))
    assert run.metadata["schema_version"] == "0.1"


def test_a_run_saves_and_loads_unchanged(tmp_path):
    run = read_ag2_run(MINI)
    assert load_run(run.save(tmp_path / "runs/")) == run


# -- refusing bad input -----------------------------------------------------------------------------------


def test_a_missing_file():
    with pytest.raises(FileNotFoundError):
        read_ag2_run(FIXTURES / "nothing.json")


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(schema_version="0.3"),
     " has schema_version '0.3'; this cogeval reads AG2 run files of schema version 0.1 and 0.2"),
    (lambda d: d.update(tasks={}), ": tasks must be a list; got {}"),
    (lambda d: d.pop("created_at"), " has no 'created_at' field"),
    (lambda d: d.update(created_at="yesterday"), ": created_at must be an ISO 8601 time; got 'yesterday'"),
    (lambda d: d.update(duration_ms=-5), ": duration_ms must be an integer >= 0; got -5"),
    (lambda d: d["tasks"].__setitem__(1, "japan"), ": tasks[1] must be an object; got 'japan'"),
    (lambda d: d["tasks"][2].pop("task_id"), ": tasks[2].task_id must be a non-empty string; got None"),
    (lambda d: d["tasks"][0].update(feedback={}), ": tasks[0]: feedback must be a list; got {}"),
    (lambda d: d["tasks"][0]["feedback"][1].pop("key"), ": tasks[0].feedback[1].key must be a non-empty string; got None"),
    (lambda d: d["tasks"][0]["feedback"][1].update(score="yes"),
     ": tasks[0].feedback[1].score must be a boolean, a number or null; got 'yes'"),
    (lambda d: d["tasks"][0]["feedback"][1].update(key="final_answer_matches"),
     ": tasks[0].feedback[1] repeats key 'final_answer_matches' of feedback[0]; cogeval keeps one score per metric and task"),
    (lambda d: d["tasks"][3]["tokens"].update(input=-1), ": tasks[3].tokens: input must be an integer >= 0; got -1"),
    (lambda d: d["tasks"][3]["tokens"].update(output=2**64),
     ": tasks[3].tokens: output is too large: 18446744073709551616 (at most 2**63 - 1)"),
])
def test_a_malformed_file_names_the_field(tmp_path, change, message):
    path = changed(tmp_path, change)
    assert error_of(path) == f"AG2 run file '{path}'{message}"


def test_not_json_not_utf8(tmp_path):
    path = write(tmp_path, '{"schema_version": "0.2",\n  "tasks": [}')
    assert error_of(path) == f"AG2 run file '{path}' is not valid JSON: line 2 column 13: Expecting value"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"label": "\xff"}')
    assert error_of(binary) == f"AG2 run file '{binary}' is not UTF-8 text (invalid start byte at byte 11)"


@pytest.mark.parametrize(("source", "kind"), [
    (pathlib.Path(__file__).parents[1] / "data" / "fixtures" / "runs" / "minimal.json",
     "a cogeval run file (read it with cogeval.load_run)"),
    (FIXTURES.parent / "lm_eval" / "acme__small-v1" / "samples_cogeval_mc_2026-12-01T10-00-00.000001.jsonl",
     "lm-eval --log_samples output (read it with cogeval.importers.read_lm_eval_samples)"),
    (FIXTURES.parent / "lm_eval" / "acme__small-v1" / "results_2026-12-01T10-00-00.000001.json",
     "an lm-eval results file"),
])
def test_a_file_of_another_kind_is_refused_by_name(source, kind):
    assert error_of(source) == f"AG2 run file '{source}' looks like {kind}, not an AG2 ag2.eval run file"


@pytest.mark.parametrize(("data", "what"), [
    ({"schema_version": "0.1", "run_id": "r", "win_rates": {}, "cases": []},
     "looks like an AG2 pairwise run file (evaluate_pairwise: win rates, no per-task scores), not an AG2 ag2.eval run file"),
    ({"version": 2, "status": "success", "eval": {"task": "t"}, "samples": []},
     "looks like an Inspect AI log (read it with cogeval.importers.read_inspect_log), not an AG2 ag2.eval run file"),
    ({"evalId": "eval-1", "results": {"version": 3, "prompts": [], "results": []}},
     "looks like a promptfoo output (read it with cogeval.importers.read_promptfoo), not an AG2 ag2.eval run file"),
    ({"tasks": [], "b": 1}, "is not an AG2 ag2.eval run file (no 'schema_version' and 'tasks'); its keys are ['b', 'tasks']"),
    ([1, 2], "must hold a JSON object (an AG2 ag2.eval run file); got an array"),
])
def test_other_json_is_refused_saying_what_it_looks_like(tmp_path, data, what):
    path = write(tmp_path, data)
    assert error_of(path) == f"AG2 run file '{path}' {what}"


def test_the_detector_names_ag2_run_files_only():
    assert _looks_like(document()) == "ag2"
    assert _looks_like({"schema_version": "0.1", "win_rates": {}}) is None  # a pairwise run
    assert _looks_like({"format": "cogitator.eval-run"}) is None and _looks_like("x") is None
