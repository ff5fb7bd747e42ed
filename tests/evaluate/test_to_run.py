"""EvalSuiteResult.to_run() / save_run(): the suite's run as a Cogitator run file (DESIGN §5)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import pathlib

import pytest

from cogeval import (
    Case,
    Dataset,
    EvalRun,
    EvalSuite,
    TargetResponse,
    cost,
    exact_match,
    latency,
    load_run,
    metric,
    token_usage,
)
from cogeval.errors import InputError

ANSWERS = {"2+2": "4", "capital of France": "Lyon", "hi": "hello", "what is 2+2?": "4"}
CASES = [
    Case("2+2", expected="4", metadata={"topic": "math"}),
    Case("capital of France", expected="Paris", context=["France's capital is Paris."]),
    Case(None, turns=["hi", "what is 2+2?"], expected="4"),
]
BAD_ID = "run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got '../x'"


@metric("broken")
def broken(output, case):
    raise ValueError("no score today")


def make_target():
    calls = itertools.count()

    def target(text):
        version = 2 if text == "what is 2+2?" else 1
        key = "support" if text in ("2+2", "capital of France") else "chat"
        return TargetResponse(
            ANSWERS[text],
            usage={"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.25},
            trace_id=f"tr-{text}-{next(calls)}",
            prompt={"key": key, "version_id": f"{key}_v{version}", "version": version, "ab_test": "arm-a"},
        )

    return target


@pytest.fixture(scope="module")
def result():
    suite = EvalSuite(
        CASES, make_target(), metrics=[exact_match(), broken], statistical_metrics=[latency(), cost(), token_usage()],
        trials=2, progress=False, name="nightly", metadata={"commit": "abc123"},
    )
    return suite.run()


@pytest.fixture(scope="module")
def saved(result, tmp_path_factory):
    path = result.save_run(tmp_path_factory.mktemp("runs"))
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_save_then_load_gives_the_same_run(result, saved):
    path, _ = saved
    assert path.name == f"{result.run_id}.json"
    assert load_run(path) == result.to_run()


def test_the_file_has_the_format_header_and_identity(result, saved):
    _, data = saved
    assert list(data)[:4] == ["format", "version", "runId", "startedAt"]
    assert data["format"] == "cogitator.eval-run" and data["version"] == 1
    assert data["runId"] == result.run_id
    assert (data["startedAt"], data["finishedAt"]) == (result.started_at, result.finished_at)
    assert data["name"] == "nightly" and data["metadata"] == {"commit": "abc123"}


def _keys(value, skip=("case", "metadata", "params", "details", "toolCalls", "input", "output", "aggregated")):
    """Every object key of the file's structure (user data and metric names left out)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            if key not in skip:
                yield from _keys(inner, skip)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner, skip)


def test_every_structural_key_is_camel_case(saved):
    _, data = saved
    keys = set(_keys(data)) | {k for agg in data["aggregated"].values() for k in agg}
    assert not [k for k in keys if "_" in k]
    assert {"caseKey", "traceId", "toolCalls", "statisticalMetrics", "higherIsBetter", "inputTokens",
            "outputTokens", "versionId", "abTest", "stdDev", "metricErrors"} <= keys


def test_dataset_is_the_fingerprint_of_the_cases_run(saved):
    _, data = saved
    assert data["dataset"] == {"fingerprint": Dataset(CASES).fingerprint, "cases": 3}


def test_one_record_per_case_and_trial_with_its_case_key(saved):
    _, data = saved
    records = data["results"]
    assert [(r["caseKey"], r["trial"]) for r in records] == [(c.key, t) for c in CASES for t in (0, 1)]
    assert [r["case"] for r in records[::2]] == [c.to_dict() for c in CASES]
    assert all(r["occurrence"] == 0 and r["error"] is None for r in records)
    trace_ids = [r["traceId"] for r in records]
    assert len(set(trace_ids)) == 6  # each trial keeps its own call's trace id
    assert all(t.startswith("tr-2+2-") for t in trace_ids[:2])
    assert [r["output"] for r in records] == ["4", "4", "Lyon", "Lyon", "4", "4"]
    assert records[0]["usage"] == {"inputTokens": 10, "outputTokens": 2, "cost": 0.25}
    assert records[0]["prompt"] == {"key": "support", "versionId": "support_v1", "version": 1, "abTest": "arm-a"}
    assert records[0]["duration"] > 0


def test_multi_turn_records_keep_each_turn_with_its_trace_id_and_prompt(saved):
    _, data = saved
    for record in data["results"][4:]:
        first, second = record["turns"]
        assert (first["input"], first["output"], second["input"], second["output"]) == ("hi", "hello", "what is 2+2?", "4")
        assert first["traceId"].startswith("tr-hi-") and second["traceId"].startswith("tr-what is 2+2?-")
        assert first["prompt"] == {"key": "chat", "versionId": "chat_v1", "version": 1, "abTest": "arm-a"}
        assert second["prompt"] == {"key": "chat", "versionId": "chat_v2", "version": 2, "abTest": "arm-a"}
        assert first["usage"] == {"inputTokens": 10, "outputTokens": 2, "cost": 0.25}
        assert "toolCalls" in first and "tool_calls" not in first
        # the case's answer is the last turn's, with usage summed over the turns
        assert record["traceId"] == second["traceId"] and record["prompt"] == second["prompt"]
        assert record["usage"] == {"inputTokens": 20, "outputTokens": 4, "cost": 0.5}
    assert data["results"][0]["turns"] is None


def test_prompts_are_listed_one_entry_per_version_used(saved):
    _, data = saved
    assert [(p["key"], p["versionId"]) for p in data["prompts"]] == [  # the answer's (its last turn's), then turn 1's
        ("support", "support_v1"), ("chat", "chat_v2"), ("chat", "chat_v1")]


def test_config_says_how_the_run_was_made_without_functions(saved):
    _, data = saved
    config = data["config"]
    assert config["metrics"] == ["exact_match", "broken"]  # the format's names; cogeval's detail beside them
    assert config["metricDetails"] == [
        {"name": "exact_match", "higherIsBetter": True, "params": {"case_sensitive": False}, "kind": "case"},
        {"name": "broken", "higherIsBetter": True, "params": {}, "kind": "case"},
    ]
    assert config["statisticalMetrics"] == ["latency", "cost", "token_usage"]
    assert [(m["name"], m["higherIsBetter"], m["kind"]) for m in config["statisticalMetricDetails"]] == [
        ("latency", False, "run"), ("cost", False, "run"), ("token_usage", False, "run")]
    assert config["judge"] is None and config["trials"] == 2 and config["concurrency"] == 5
    assert config["target"] == {"type": "function", "name": "make_target.<locals>.target", "module": __name__}
    text = json.dumps(config)
    assert "<function" not in text and "api_key" not in text and "apiKey" not in text


def test_scores_aggregates_and_stats(saved):
    _, data = saved
    first = data["results"][0]["scores"]
    assert first == [
        {"metric": "exact_match", "score": 1, "error": None, "details": None},
        {"metric": "broken", "score": None, "error": "metric 'broken' raised ValueError: no score today", "details": None},
    ]
    assert data["aggregated"]["exact_match"]["mean"] == pytest.approx(4 / 6)
    assert data["aggregated"]["broken"] == {
        "mean": None, "median": None, "min": None, "max": None, "stdDev": None, "p50": None, "p95": None,
        "p99": None, "count": 0, "missing": 6}
    assert data["aggregated"]["cost"]["mean"] == pytest.approx((0.25 * 2 + 0.25 * 2 + 0.5 * 2) / 6)
    assert data["aggregated"]["token_usage"]["mean"] == pytest.approx((12 * 4 + 24 * 2) / 6)
    stats = data["stats"]
    assert (stats["total"], stats["errors"], stats["metricErrors"], stats["judgeErrors"]) == (6, 0, 6, 0)
    assert stats["cost"] == pytest.approx(2.0) and stats["duration"] > 0


def test_nan_is_null_in_the_file_and_nan_again_in_memory(saved):
    path, _ = saved
    run = load_run(path)
    assert math.isnan(run.results[0].scores[1].score)
    assert math.isnan(run.aggregated["broken"].mean) and run.aggregated["broken"].missing == 6


def test_unknown_cost_is_null(tmp_path):
    result = EvalSuite([Case("2+2", expected="4")], lambda q: "4", metrics=[exact_match()],
                       statistical_metrics=[cost()], progress=False).run()
    data = json.loads(result.save_run(tmp_path).read_text())
    assert data["stats"]["cost"] is None and data["aggregated"]["cost"]["mean"] is None
    assert data["results"][0]["usage"] == {"inputTokens": None, "outputTokens": None, "cost": None}
    assert math.isnan(load_run(tmp_path / f"{result.run_id}.json").stats.cost)


# -- where save_run writes ---------------------------------------------------------------------------


def test_a_path_ending_in_a_slash_is_a_folder_created_on_demand(result, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = result.save_run("runs/")
    assert path == pathlib.Path("runs") / f"{result.run_id}.json"
    assert load_run(tmp_path / "runs" / f"{result.run_id}.json") == result.to_run()


def test_an_existing_folder_gets_the_run_id_as_file_name(result, tmp_path):
    assert result.save_run(tmp_path) == tmp_path / f"{result.run_id}.json"
    assert result.save_run(str(tmp_path)) == tmp_path / f"{result.run_id}.json"


def test_any_other_path_is_the_file_itself(result, tmp_path):
    target = tmp_path / "deep" / "er" / "latest.json"
    assert result.save_run(target) == target
    assert load_run(target) == result.to_run()
    assert [p.name for p in target.parent.iterdir()] == ["latest.json"]  # no temporary file left


def test_a_run_id_that_would_escape_its_folder_is_refused_before_writing(result, tmp_path):
    bad = dataclasses.replace(result, run=result.run.model_copy(update={"run_id": "../x"}))
    with pytest.raises(InputError) as caught:
        bad.save_run(tmp_path / "runs")
    assert str(caught.value) == BAD_ID
    with pytest.raises(InputError) as caught:
        bad.to_run()
    assert str(caught.value) == BAD_ID

    run = result.to_run().model_copy(update={"run_id": "../x"})
    with pytest.raises(InputError) as caught:
        run.save(tmp_path / "runs")
    assert str(caught.value) == BAD_ID
    assigned = result.to_run().model_copy()  # to_run() is the result's own run: change a copy
    assigned.run_id = "../x"
    with pytest.raises(InputError) as caught:
        assigned.save(tmp_path / "runs/")
    assert str(caught.value) == BAD_ID
    assert list(tmp_path.iterdir()) == []


def test_to_run_is_an_eval_run_with_the_suite_tables(result):
    run = result.to_run()
    assert isinstance(run, EvalRun)
    assert run.directions == result.directions
    assert run.scores[["case_key", "trial", "metric", "score"]].fillna(-1).values.tolist() == \
        result.scores[["case_key", "trial", "metric", "score"]].fillna(-1).values.tolist()
    assert run.results_frame.drop(columns="duration_s").equals(result.results_frame.drop(columns="duration_s"))
