"""Judge metrics inside EvalSuite: stats, the run file, the cache across runs, and scripted judge faults."""

from __future__ import annotations

import functools
import json
import math
import re

import chat_server
import pytest
from chat_server import completion, error, malformed

from cogeval import EvalBuilder, EvalSuite, correctness, exact_match, faithfulness, load_run
from cogeval.errors import InputError

SECRET = chat_server.JUDGE_KEY
DATA = [
    {"input": "Capital of France?", "expected": "Paris", "context": "Paris is the capital of France."},
    {"input": "2+2?", "expected": "4", "context": "Arithmetic."},
    {"input": "Largest planet?", "expected": "Jupiter", "context": "Jupiter is the largest planet."},
]
ANSWERS = {"Capital of France?": "Paris", "2+2?": "5", "Largest planet?": "Jupiter"}


make_judge = functools.partial(chat_server.make_judge, retries=1)


def suite(judge, data=DATA, metrics=None, **options):
    metrics = [exact_match(), correctness(), faithfulness()] if metrics is None else metrics
    return EvalSuite(data, lambda q: ANSWERS.get(q, "?"), metrics=metrics, judge=judge, progress=False, **options)


def prompt_field(body, tag):
    return re.search(rf"<{tag}>\n(.*?)\n</{tag}>", body["messages"][1]["content"], re.S)[1]


def fair_judge(body):
    right = prompt_field(body, "response") == prompt_field(body, "expected")
    return completion(json.dumps({"score": 5 if right else 1, "reasoning": "compared"}),
                      prompt_tokens=100, completion_tokens=10)


def test_suite_scores_with_the_judge_and_records_its_usage_apart(chat_server, tmp_path):
    chat_server.responder = fair_judge
    judge = make_judge(chat_server, tmp_path, samples=2, prices={"input": 1.0, "output": 10.0})
    result = suite(judge).run()
    assert result.aggregated["correctness"].mean == pytest.approx(2 / 3)
    assert result.to_frame()["faithfulness"].tolist() == [1.0, 0.0, 1.0]
    stats = result.stats
    assert (stats.judge_errors, stats.judge_calls, stats.judge_cache_hits) == (0, 12, 0)
    assert (stats.judge_input_tokens, stats.judge_output_tokens) == (1200, 120)
    assert stats.judge_cost_usd == pytest.approx(12 * 200e-6)
    assert math.isnan(stats.cost_usd)  # the target (a function) reported no cost; the judge's is apart
    path = result.save_run(tmp_path / "runs/")
    text = path.read_text()
    assert SECRET not in text
    data = json.loads(text)
    assert data["config"]["judge"] == {"model": "judge-model", "baseUrl": chat_server.url, "temperature": 0,
                                       "maxTokens": None, "samples": 2}
    assert data["stats"]["judgeCost"] == pytest.approx(12 * 200e-6)
    assert (data["stats"]["judgeCalls"], data["stats"]["judgeCacheHits"], data["stats"]["judgeErrors"]) == (12, 0, 0)
    run = load_run(path)
    score = next(s for s in run.results[0].scores if s.metric == "correctness")
    assert score.details["samples"][0]["reasoning"] == "compared" and score.details["std_dev"] == 0


def test_second_identical_suite_run_makes_no_http_calls(chat_server, tmp_path):
    chat_server.responder = fair_judge
    first = suite(make_judge(chat_server, tmp_path)).run()
    calls = len(chat_server.requests)
    assert calls == 6 and first.stats.judge_calls == 6
    second = suite(make_judge(chat_server, tmp_path)).run()
    assert len(chat_server.requests) == calls
    assert (second.stats.judge_calls, second.stats.judge_cache_hits) == (0, 6)
    assert second.to_frame()["correctness"].tolist() == first.to_frame()["correctness"].tolist()
    assert second.to_run().to_dict()["stats"]["judgeCacheHits"] == 6


FAULTS = {
    "garbage": lambda: completion("I cannot judge this."),
    "500": lambda: error(500, "overloaded"),
    "slow": lambda: completion('{"score": 5, "reasoning": "late"}', delay=1.0),
    "range": lambda: completion('{"score": 11, "reasoning": "off the scale"}'),
    "empty": lambda: completion(None),
    "malformed": lambda: malformed(),
    "400": lambda: error(400, "bad request"),
    "429": lambda: error(429, "rate limited", retry_after=0),
    "words": lambda: completion('{"score": "excellent", "reasoning": "words"}'),
    "zero-over": lambda: completion("Score: 0/10"),
}


def test_a_failing_judge_leaves_no_cell_scored_zero(chat_server, tmp_path):
    chat_server.responder = lambda body: FAULTS[prompt_field(body, "input")]()
    data = [{"input": fault, "expected": "x", "context": "c"} for fault in FAULTS]
    judge = make_judge(chat_server, tmp_path, timeout=0.3, retries=1)
    result = suite(judge, data=data, metrics=[correctness(), faithfulness()], concurrency=10).run()
    scores = result.scores
    assert len(scores) == 2 * len(FAULTS)
    assert (scores["score"] == 0).sum() == 0
    assert scores["score"].isna().all() and scores["error"].notna().all()
    assert result.stats.judge_errors == 2 * len(FAULTS) and result.stats.metric_errors == 0
    assert result.aggregated["correctness"].count == 0 and math.isnan(result.aggregated["correctness"].mean)
    saved = load_run(result.save_run(tmp_path / "runs/"))
    assert saved.scores["score"].isna().all() and saved.stats.judge_errors == 2 * len(FAULTS)


def test_a_judge_metric_without_a_judge_is_refused_at_construction():
    with pytest.raises(InputError, match=r"^metric 'correctness' needs a judge: pass judge=JudgeConfig\(model=\.\.\.\) to the suite or to the metric$"):
        suite(None)
    builder = EvalBuilder().with_dataset(DATA).with_target(lambda q: q).with_metrics(exact_match(), faithfulness())
    with pytest.raises(InputError, match="metric 'faithfulness' needs a judge"):
        builder.build()
    with pytest.raises(InputError, match=r"^judge must be a JudgeConfig\(model=\.\.\.\) or None; got 'gpt-4o'$"):
        suite("gpt-4o")


# -- a judge per metric (issue 14) -----------------------------------------------------------------


def test_a_suite_can_mix_judges_and_needs_none_when_every_judge_metric_has_its_own(chat_server, tmp_path):
    chat_server.responder = fair_judge
    judge_a = make_judge(chat_server, tmp_path, model="judge-a", prices={"input": 1.0, "output": 10.0})
    judge_b = make_judge(chat_server, tmp_path, model="judge-b", prices={"input": 1.0, "output": 10.0})
    result = suite(None, metrics=[exact_match(), correctness(judge=judge_a), faithfulness(judge=judge_b)]).run()
    by_model = {}
    for body in chat_server.requests:
        asked = "correctness" if "for: correctness." in body["messages"][1]["content"] else "faithfulness"
        by_model.setdefault(body["model"], set()).add(asked)
    assert by_model == {"judge-a": {"correctness"}, "judge-b": {"faithfulness"}}
    assert result.to_frame()["correctness"].tolist() == [1.0, 0.0, 1.0]
    stats = result.stats  # every judge is counted: 3 calls each, 110 tokens a call
    assert (stats.judge_calls, stats.judge_input_tokens, stats.judge_output_tokens) == (6, 600, 60)
    assert stats.judge_cost_usd == pytest.approx(6 * 200e-6)
    data = json.loads(result.save_run(tmp_path / "runs/").read_text())
    assert data["config"]["judge"] is None and data["stats"]["judgeCalls"] == 6
    params = {m["name"]: m["params"] for m in data["config"]["metricDetails"]}
    assert params["correctness"]["judge"]["model"] == "judge-a" and params["faithfulness"]["judge"]["model"] == "judge-b"
    assert SECRET not in json.dumps(data)


def test_a_metrics_own_judge_overrides_the_suites(chat_server, tmp_path):
    chat_server.responder = fair_judge
    shared = make_judge(chat_server, tmp_path, model="suite-judge")
    own = make_judge(chat_server, tmp_path, model="own-judge")
    result = suite(shared, metrics=[correctness(judge=own), faithfulness()]).run()
    models = {(body["model"], "for: correctness." in body["messages"][1]["content"]) for body in chat_server.requests}
    assert models == {("own-judge", True), ("suite-judge", False)}
    assert result.run.config.judge == shared.describe() and result.stats.judge_calls == 6


def test_a_metrics_own_judge_of_the_targets_model_is_warned_about(chat_server, tmp_path):
    from cogeval import ChatTarget, SelfPreferenceWarning

    target = ChatTarget("judge-a", base_url=chat_server.url, api_key="k")
    own = make_judge(chat_server, tmp_path, model="judge-a")
    with pytest.warns(SelfPreferenceWarning, match="the judge is model 'judge-a', the same model as the target"):
        EvalSuite(DATA, target, metrics=[correctness(judge=own)], progress=False)
    assert chat_server.requests == []
