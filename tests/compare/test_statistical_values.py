"""Every statistical metric is comparable: one per-case mapping, written to run files for custom metrics."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import scipy.stats as sps

from cogeval import EvalSuite, TargetResponse, compare_runs, exact_match, latency, load_run, token_usage
from cogeval.compare.runs import score_frame, statistical_values
from cogeval.scoring import StatisticalMetric

DATA = [{"input": f"q{i}", "expected": f"q{i}"} for i in range(6)]
BASE_CALLS = {f"q{i}": 2 for i in range(6)}
HEAD_CALLS = {"q0": 1, "q1": 1, "q2": 1, "q3": 1, "q4": 2, "q5": None}  # q5: unknown (None tool_calls)


def tool_calls():
    """The documented way: a StatisticalMetric reading each outcome; None when the target reported none."""
    return StatisticalMetric("tool_calls", lambda o: None if o.tool_calls is None else len(o.tool_calls))


def answering(calls):
    def target(question):
        n = calls[question]
        return TargetResponse(question, usage={"input_tokens": 3, "output_tokens": 1},
                              tool_calls=None if n is None else [{"name": "search"}] * n)
    return target


def suite_run(calls, name):
    return EvalSuite(DATA, answering(calls), metrics=[exact_match()], statistical_metrics=[tool_calls(), latency()],
                     progress=False, name=name).run()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    return suite_run(BASE_CALLS, "base").save_run(folder), suite_run(HEAD_CALLS, "head").save_run(folder)


def test_a_custom_statistical_metric_is_compared_between_saved_run_files(files):
    base_path, head_path = files
    c = compare_runs(base_path, head_path, seed=0)
    m = c.metrics["tool_calls"]
    # paired by case; q5 has no value in head (unknown), so 5 pairs: base 2, 2, 2, 2, 2 against head 1, 1, 1, 1, 2
    base, head = [2.0] * 5, [1.0, 1.0, 1.0, 1.0, 2.0]
    assert (m.n, m.base, m.head, m.difference) == (5, 2.0, 1.2, pytest.approx(-0.8))
    assert m.p_value == pytest.approx(sps.ttest_rel(head, base).pvalue, rel=1e-12)  # R: t.test(head, base, paired=TRUE)
    assert (m.higher_is_better, m.role, m.n_improved, m.n_regressed) == (False, "informs", 4, 0)
    assert not [w for w in c.warnings if "tool_calls" in w and "per-case values" in w]


def test_the_file_keeps_custom_values_only_and_readers_get_nan_for_null(files):
    _base_path, head_path = files
    document = json.loads(head_path.read_text(encoding="utf-8"))
    written = [r["statisticalValues"] for r in document["results"]]
    assert written == [{"tool_calls": 1}, {"tool_calls": 1}, {"tool_calls": 1}, {"tool_calls": 1}, {"tool_calls": 2},
                       {"tool_calls": None}]  # latency is not written again: "duration" gives it back
    assert document["config"]["statisticalMetrics"] == ["tool_calls", "latency"]
    assert document["aggregated"]["tool_calls"]["mean"] == 1.2 and document["aggregated"]["tool_calls"]["missing"] == 1
    run = load_run(head_path)
    values = statistical_values(run, "tool_calls")
    assert values[:5] == [1.0, 1.0, 1.0, 1.0, 2.0] and math.isnan(values[5])
    assert math.isnan(run.results[5].statistical_values["tool_calls"])  # null in the file, NaN in memory
    assert run.to_dict()["results"][5]["statisticalValues"] == {"tool_calls": None}  # and null again when written


def test_suite_result_run_and_file_give_the_same_per_case_rows(files, tmp_path):
    result = suite_run(HEAD_CALLS, "head")
    from_result = score_frame(result.to_run())
    from_file = score_frame(load_run(result.save_run(tmp_path)))
    pd.testing.assert_frame_equal(from_result, from_file)
    rows = from_file[from_file["metric"] == "tool_calls"]
    assert rows["score"].tolist()[:5] == [1.0, 1.0, 1.0, 1.0, 2.0] and math.isnan(rows["score"].iloc[5])


def test_built_in_statistical_metrics_write_nothing_new(tmp_path):
    result = EvalSuite(DATA, answering(BASE_CALLS), metrics=[exact_match()],
                       statistical_metrics=[latency(), token_usage()], progress=False).run()
    document = json.loads(result.save_run(tmp_path).read_text(encoding="utf-8"))
    assert all("statisticalValues" not in r for r in document["results"])
    assert all(r.statistical_values == {} for r in result.results)
    scores = score_frame(load_run(tmp_path / f"{result.run_id}.json"))
    assert scores.loc[scores["metric"] == "token_usage", "score"].tolist() == [4.0] * 6


def test_a_custom_metric_named_like_a_built_in_keeps_its_own_values(tmp_path):
    milliseconds = StatisticalMetric("latency", lambda o: 1000 * o.duration_s)
    assert milliseconds.writes_per_case and not latency().writes_per_case
    result = EvalSuite(DATA, answering(BASE_CALLS), statistical_metrics=[milliseconds], progress=False).run()
    run = load_run(result.save_run(tmp_path))
    durations = run.results_frame["duration_s"].tolist()
    assert statistical_values(run, "latency") == pytest.approx([1000 * d for d in durations])


def test_a_file_written_before_values_were_kept_is_named_in_a_warning(files, tmp_path):
    base_path, head_path = files
    document = json.loads(base_path.read_text(encoding="utf-8"))
    for r in document["results"]:
        del r["statisticalValues"]
    old = tmp_path / base_path.name
    old.write_text(json.dumps(document), encoding="utf-8")
    assert statistical_values(load_run(old), "tool_calls") is None
    c = compare_runs(old, head_path, seed=0)
    assert "tool_calls" not in c.metrics
    assert ("Metric 'tool_calls' is a run-level metric without per-case values in the base run "
            "(a file written before cogeval kept them); it was not compared") in c.warnings
    assert c.metrics["latency"].n == 6  # built-ins are read from the results, as before


def test_a_failing_custom_metric_writes_no_values(tmp_path):
    broken = StatisticalMetric("broken", lambda o: 1 / 0)
    with pytest.warns(RuntimeWarning, match="statistical metric 'broken' failed, its aggregate is NaN"):
        result = EvalSuite(DATA, answering(BASE_CALLS), statistical_metrics=[broken], progress=False).run()
    document = json.loads(result.save_run(tmp_path).read_text(encoding="utf-8"))
    assert all("statisticalValues" not in r for r in document["results"])
    assert document["aggregated"]["broken"]["mean"] is None
