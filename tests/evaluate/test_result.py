"""EvalSuiteResult tables (DESIGN §2), HTML display, summary and baseline."""

from __future__ import annotations

import json
import math

from cogeval import EvalSuite, exact_match, latency, no_regression
from cogeval import _columns as col


def run(outputs=("4", "6", "7"), name="calc"):
    answers = dict(zip(["2+2", "3+3", "<b>x</b>"], outputs))
    data = [{"input": "2+2", "expected": "4"}, {"input": "3+3", "expected": "6"}, {"input": "<b>x</b>", "expected": "7"}]
    return EvalSuite(data, answers.get, metrics=[exact_match()], statistical_metrics=[latency()], progress=False, name=name).run()


def test_results_frame_has_the_design_columns():
    frame = run().results_frame
    assert list(frame.columns) == list(col.RESULTS_COLUMNS)
    assert frame[col.OUTPUT].tolist() == ["4", "6", "7"]
    assert frame[col.OCCURRENCE].tolist() == [0, 0, 0] and frame[col.TRIAL].tolist() == [0, 0, 0]
    assert frame[col.DURATION_S].dtype == float


def test_scores_is_long_and_tidy():
    result = run(outputs=("4", "0", "7"))
    scores = result.scores
    assert list(scores.columns) == list(col.SCORES_COLUMNS)
    assert scores[col.SCORE].tolist() == [1.0, 0.0, 1.0]
    assert set(scores[col.METRIC]) == {"exact_match"}
    assert scores[col.RUN_ID].unique().tolist() == [result.run_id]


def test_to_frame_is_the_wide_view():
    frame = run().to_frame()
    assert frame.columns[:6].tolist() == [col.RUN_ID, col.CASE_KEY, col.OCCURRENCE, col.TRIAL, col.INPUT, col.EXPECTED]
    assert frame["exact_match"].tolist() == [1.0, 1.0, 1.0]


def test_aggregated_frame_lists_every_metric_with_its_direction():
    frame = run().aggregated_frame.set_index("metric")
    assert frame.loc["exact_match", "mean"] == 1.0 and bool(frame.loc["exact_match", "higher_is_better"])
    assert not bool(frame.loc["latency", "higher_is_better"]) and frame.loc["latency", "count"] == 3


def test_html_is_escaped():
    # The display shows the suite name (not case inputs), so the markup is planted in the name.
    html = run(name="<b>calc</b>")._repr_html_()
    assert "<caption>EvalSuiteResult &lt;b&gt;calc&lt;/b&gt; · " in html and "<b>calc</b>" not in html
    assert '<tr><td class="s">exact_match</td><td class="s">↑</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>3</td><td>0</td></tr>' in html


def test_summary_is_json():
    summary = run(outputs=("4", "0", "7")).summary()
    assert summary["success"] is True and summary["total"] == 3 and summary["assertions_passed"] is True
    assert math.isclose(summary["metrics"]["exact_match"], 2 / 3)
    assert summary["cost"] is None
    json.dumps(summary)


def test_baseline_round_trip_with_no_regression(tmp_path):
    path = run().save_baseline(tmp_path / "baseline.json")
    worse = EvalSuite(
        [{"input": "2+2", "expected": "4"}, {"input": "3+3", "expected": "6"}], lambda q: "0",
        metrics=[exact_match()], assertions=[no_regression(path)], progress=False,
    ).run()
    assert not worse.passed
    verdict = worse.assertions[0]
    # baseline mean 1 (3 of 3 right); the tolerance 0.05 × |1| allows >= 0.95; every answer "0" scores 0
    assert (verdict.actual, verdict.expected) == ({"exact_match": 0.0}, {"exact_match": 0.95})
    assert verdict.message == (
        "exact_match regressed: mean 0 vs baseline 1, allowed >= 0.95 (higher is better); latency is in the "
        f"baseline but not in this run (tolerance 0.05 × |baseline mean|, from {str(path)!r})"
    )
