"""rescore: an existing run scored again, without calling the target, against a real local judge server."""

from __future__ import annotations

import json
import math
import re

import chat_server
import pandas as pd
import pytest
from chat_server import completion, make_judge

from cogeval import (
    EvalRun,
    EvalSuite,
    correctness,
    exact_match,
    faithfulness,
    load_run,
    metric,
    rescore,
    threshold,
)
from cogeval.errors import InputError

SECRET = chat_server.JUDGE_KEY
DATA = [
    {"input": "Capital of France?", "expected": "Paris", "context": "Paris is the capital of France."},
    {"input": "2+2?", "expected": "4", "context": "Arithmetic."},
    {"input": "Largest planet?", "expected": "Jupiter", "context": "Jupiter is the largest planet."},
]
ANSWERS = {"Capital of France?": "Paris", "2+2?": "5", "Largest planet?": "Jupiter"}


def field(body, tag):
    return re.search(rf"<{tag}>\n(.*?)\n</{tag}>", body["messages"][1]["content"], re.S)[1]


def fair_judge(body):
    right = field(body, "response") == field(body, "expected")
    return completion(json.dumps({"score": 5 if right else 1, "reasoning": "compared"}))


@pytest.fixture
def source(chat_server, tmp_path):
    """A saved run scored by a judge that could not answer (every correctness cell NaN); the target's calls counted."""
    calls = []

    def target(question):
        calls.append(question)
        return ANSWERS[question]

    chat_server.responder = lambda body: completion("no idea")
    result = EvalSuite(DATA, target, metrics=[exact_match(), correctness()],
                       judge=make_judge(chat_server, tmp_path, model="weak-judge", cache=False), progress=False,
                       metadata={"commit": "abc123"}).run()
    assert result.stats.judge_errors == 3 and len(calls) == 3
    chat_server.calls.clear()
    return result.save_run(tmp_path / "runs/"), calls


def test_rescore_a_run_file_with_another_judge(chat_server, tmp_path, source):
    path, target_calls = source
    old = load_run(path)
    chat_server.responder = fair_judge
    new = rescore(path, [correctness()], judge=make_judge(chat_server, tmp_path))
    assert len(target_calls) == 3 and len(chat_server.requests) == 3  # judge calls only
    assert new.run_id != old.run_id and new.run_id > old.run_id
    assert new.metadata["commit"] == "abc123"
    assert new.metadata["rescore"]["from_run_id"] == old.run_id
    assert new.metadata["rescore"]["metrics"] == ["correctness"]
    assert new.metadata["rescore"]["judge"]["model"] == "judge-model"
    assert new.config.judge == {"model": "judge-model", "baseUrl": chat_server.url, "temperature": 0.0,
                                "maxTokens": None, "samples": 1}
    assert new.metric_names == ["exact_match", "correctness"]
    assert new.to_frame()["correctness"].tolist() == [1.0, 0.0, 1.0]
    assert new.to_frame()["exact_match"].tolist() == old.to_frame()["exact_match"].tolist()
    assert new.results_frame["output"].tolist() == old.results_frame["output"].tolist()
    assert new.aggregated["correctness"].mean == pytest.approx(2 / 3)
    assert new.aggregated["exact_match"] == old.aggregated["exact_match"]
    assert (new.stats.total, new.stats.errors, new.stats.duration) == (old.stats.total, old.stats.errors, old.stats.duration)
    assert (new.stats.judge_errors, new.stats.metric_errors) == (0, 0)
    saved = new.save(tmp_path / "rescored/")
    assert SECRET not in saved.read_text()
    assert load_run(saved) == new
    assert new.to_dict()["stats"]["judgeCalls"] == 3


def test_rescoring_again_is_free(chat_server, tmp_path, source):
    path, _ = source
    chat_server.responder = fair_judge
    first = rescore(path, [correctness()], judge=make_judge(chat_server, tmp_path))
    calls = len(chat_server.requests)
    again = rescore(path, [correctness()], judge=make_judge(chat_server, tmp_path))
    assert len(chat_server.requests) == calls == 3
    assert again.to_dict()["stats"]["judgeCalls"] == 0 and again.to_dict()["stats"]["judgeCacheHits"] == 3
    assert again.to_frame()["correctness"].tolist() == first.to_frame()["correctness"].tolist()


def test_new_metrics_are_added_after_the_old_ones_and_assertions_checked(chat_server, tmp_path, source):
    path, _ = source
    chat_server.responder = fair_judge
    new = rescore(load_run(path), [faithfulness(), exact_match().renamed("exact_again")],
                  judge=make_judge(chat_server, tmp_path), assertions=[threshold("faithfulness", 0.9)], name="v2")
    assert new.metric_names == ["exact_match", "correctness", "faithfulness", "exact_again"]
    assert new.name == "v2"
    assert new.to_frame()["faithfulness"].tolist() == [1.0, 0.0, 1.0]
    assert new.stats.judge_errors == 3  # the old correctness cells are still NaN, and counted as judge errors
    assert [(a.name, a.passed) for a in new.assertions] == [("threshold(faithfulness, 0.9)", False)]


def test_rescore_without_a_judge_for_a_plain_metric():
    old = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "expected": ["a", "c"], "output": ["a", "b"]}))

    @metric("shout")
    def shout(output, case):
        return output.isupper()

    new = rescore(old, [exact_match(), shout])
    assert new.to_frame()[["exact_match", "shout"]].values.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert new.metadata["rescore"]["judge"] is None and new.config.judge is None


def test_rescore_validates_its_arguments(tmp_path):
    run = EvalRun.from_frame(pd.DataFrame({"input": ["a"], "quality": [1.0]}))
    with pytest.raises(InputError, match=r"^metric 'correctness' needs a judge: pass judge=JudgeConfig\(model=\.\.\.\) to rescore or to the metric$"):
        rescore(run, [correctness()])
    with pytest.raises(InputError, match="needs at least one metric"):
        rescore(run, [])
    with pytest.raises(InputError, match="two metrics named 'exact_match'"):
        rescore(run, [exact_match(), exact_match()])
    with pytest.raises(InputError, match=r"^run must be an EvalRun, a suite result or a run-file path; got 42$"):
        rescore(42, [exact_match()])
    with pytest.raises(FileNotFoundError):
        rescore(tmp_path / "missing.json", [exact_match()])


def test_rescore_keeps_nan_scores_nan(chat_server, tmp_path):
    old = EvalRun.from_frame(pd.DataFrame({"input": ["q"], "expected": ["x"], "output": ["x"]}))
    chat_server.responder = lambda body: completion("garbage")
    new = rescore(old, [correctness()], judge=make_judge(chat_server, tmp_path))
    [value] = new.to_frame()["correctness"].tolist()
    assert math.isnan(value) and new.stats.judge_errors == 1


def test_rescore_uses_a_metrics_own_judge_without_a_rescore_judge(chat_server, tmp_path, source):
    # issue 14: a metric's own judge (correctness(judge=...)) is honoured by rescore as by the suite.
    path, _ = source
    old = load_run(path)
    chat_server.responder = fair_judge
    new = rescore(path, [correctness(judge=make_judge(chat_server, tmp_path, model="own-judge"))])
    assert {body["model"] for body in chat_server.requests} == {"own-judge"} and len(chat_server.requests) == 3
    assert new.to_frame()["correctness"].tolist() == [1.0, 0.0, 1.0]
    assert new.config.judge == old.config.judge and new.metadata["rescore"]["judge"] is None
    described = next(m for m in new.to_dict()["config"]["metricDetails"] if m["name"] == "correctness")
    assert described["params"]["judge"]["model"] == "own-judge"
    assert (new.to_dict()["stats"]["judgeCalls"], new.stats.judge_errors) == (3, 0)
