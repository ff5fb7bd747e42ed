"""Assertions: threshold honours directions, no_regression against a baseline file, custom checks."""

from __future__ import annotations

import json
import math
import os

import pytest

from cogeval.errors import InputError
from cogeval.scoring import (
    Assertion,
    AssertionResult,
    assertion,
    no_regression,
    read_baseline,
    threshold,
    write_baseline,
)
from cogeval.stats import aggregate

AGG = {
    "exact_match": aggregate([1, 1, 1, 0]),  # mean 0.75
    "latency": aggregate([1.0, 2.0, 3.0, 4.0]),  # mean 2.5; p95 = 3.85 (R: quantile(1:4, .95))
    "broken": aggregate([math.nan, math.nan]),
}
DIRS = {"exact_match": True, "latency": False, "broken": True}


# --- threshold -----------------------------------------------------------------


def test_threshold_on_the_mean_of_a_higher_is_better_metric():
    assert threshold("exact_match", 0.7).check(AGG, DIRS) == AssertionResult(
        "threshold(exact_match, 0.7)", True, "exact_match mean 0.75 >= 0.7", 0.75, 0.7
    )
    failed = threshold("exact_match", 0.8).check(AGG, DIRS)
    assert (failed.passed, failed.message) == (False, "exact_match mean 0.75 < 0.8 (must be >= 0.8; higher is better)")
    assert threshold("exact_match", 0.75).check(AGG, DIRS).passed  # the boundary passes


def test_threshold_honours_lower_is_better_for_latency():
    assert threshold("latency", 3.0).check(AGG, DIRS).passed  # 2.5 <= 3
    assert not threshold("latency", 2.0).check(AGG, DIRS).passed  # 2.5 > 2
    result = threshold("latency.p95", 3.0).check(AGG, DIRS)
    assert result.passed is False
    assert result.actual == pytest.approx(3.85)
    assert result.message == "latency p95 3.85 > 3 (must be <= 3; lower is better)"
    assert threshold("latency.p95", 4).check(AGG, DIRS).message == "latency p95 3.85 <= 4"


def test_threshold_fields_with_a_fixed_sense():
    assert threshold("exact_match.missing", 0).check(AGG, DIRS).passed  # at most 0 missing
    assert not threshold("broken.missing", 0).check(AGG, DIRS).passed
    assert threshold("latency.count", 4).check(AGG, DIRS).passed  # at least 4 values, even for latency
    assert not threshold("latency.count", 5).check(AGG, DIRS).passed
    assert threshold("exact_match.std_dev", 0.6).check(AGG, DIRS).passed  # sd 0.5, at most 0.6


def test_threshold_missing_metric_fails():
    result = threshold("faithfulness", 0.5).check(AGG, DIRS)
    assert (result.passed, result.actual, result.expected) == (False, None, 0.5)
    assert result.message == "no metric 'faithfulness' in this run (metrics: broken, exact_match, latency)"


def test_threshold_nan_fails():
    result = threshold("broken", 0.0).check(AGG, DIRS)
    assert result.passed is False
    assert result.message == "broken mean is NaN (no values: every case errored or was unknown?); a threshold never passes on NaN"


def test_threshold_unknown_direction_fails():
    result = threshold("latency", 5).check(AGG, {})
    assert (result.passed, result.message) == (False, "the direction of metric 'latency' is unknown")


def test_threshold_reads_mappings_too():
    assert threshold("latency.p95", 4).check({"latency": AGG["latency"].to_dict()}, DIRS).passed
    result = threshold("latency.p95", 4).check({"latency": {"mean": 1.0}}, DIRS)
    assert result.passed is False and result.message.startswith("latency p95 is not available; valid fields are mean, ")


def test_threshold_construction_errors():
    with pytest.raises(InputError) as info:
        threshold("latency.p90", 2.0)
    assert str(info.value) == (
        "threshold path 'latency.p90': unknown field 'p90'; "
        "valid fields are mean, median, min, max, std_dev, p50, p95, p99, count, missing"
    )
    with pytest.raises(InputError, match="threshold value must be a finite number; got nan"):
        threshold("exact_match", math.nan)
    with pytest.raises(InputError, match=r"threshold value must be a finite number; got '0\.8'"):
        threshold("exact_match", "0.8")
    with pytest.raises(InputError, match="threshold path must be a string"):
        threshold(None, 1)
    with pytest.raises(InputError, match="threshold path's metric name must be a non-empty string"):
        threshold(".p95", 1)


def test_threshold_describe_and_custom_name():
    t = threshold("latency.p95", 2.0, name="fast enough")
    assert isinstance(t, Assertion)
    assert t.describe() == {"kind": "threshold", "name": "fast enough", "params": {"path": "latency.p95", "value": 2.0}}
    json.dumps(t.describe())


# --- baseline files ------------------------------------------------------------


def test_write_and_read_baseline(tmp_path):
    path = write_baseline(tmp_path / "sub" / "baseline.json", AGG, DIRS)
    document = json.loads(path.read_text())
    assert document == {
        "format": "cogeval.baseline",
        "version": 1,
        "metrics": {
            "broken": {"mean": None, "higher_is_better": True},
            "exact_match": {"mean": 0.75, "higher_is_better": True},
            "latency": {"mean": 2.5, "higher_is_better": False},
        },
    }
    baseline = read_baseline(path)
    assert baseline["latency"] == (2.5, False)
    assert math.isnan(baseline["broken"][0])
    assert os.listdir(path.parent) == ["baseline.json"]  # no temporary file left


def test_write_baseline_is_atomic_when_it_fails(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text("old")
    with pytest.raises(InputError, match="no direction for metric 'latency'"):
        write_baseline(path, AGG, {"exact_match": True, "broken": True})
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["baseline.json"]


def test_write_baseline_accepts_plain_means(tmp_path):
    path = write_baseline(str(tmp_path / "b.json"), {"acc": 0.5}, {"acc": True})
    assert read_baseline(path) == {"acc": (0.5, True)}


# --- no_regression -------------------------------------------------------------


def _baseline(tmp_path, **means):
    aggregated = {name: aggregate([mean]) for name, (mean, _) in means.items()}
    directions = {name: higher for name, (_, higher) in means.items()}
    return write_baseline(tmp_path / "baseline.json", aggregated, directions)


def test_no_regression_passes_within_tolerance(tmp_path):
    path = _baseline(tmp_path, exact_match=(0.78, True), latency=(2.4, False))
    # exact_match may fall to 0.78 - 0.05 * 0.78 = 0.741; latency may rise to 2.4 * 1.05 = 2.52
    result = no_regression(path).check(AGG, DIRS)
    assert result.passed is True
    assert result.actual == {"exact_match": 0.75, "latency": 2.5}
    assert result.expected == pytest.approx({"exact_match": 0.741, "latency": 2.52})
    assert result.message == (
        f"no metric regressed beyond tolerance 0.05 × |baseline mean|, from {str(path)!r}; not in baseline: broken"
    )


def test_no_regression_fails_a_worse_higher_is_better_metric(tmp_path):
    path = _baseline(tmp_path, exact_match=(0.9, True))
    result = no_regression(path).check(AGG, DIRS)
    assert result.passed is False
    assert result.message.startswith(
        "exact_match regressed: mean 0.75 vs baseline 0.9, allowed >= 0.855 (higher is better) (tolerance 0.05"
    )


def test_no_regression_fails_slower_latency(tmp_path):
    path = _baseline(tmp_path, latency=(2.0, False))
    result = no_regression(path, tolerance=0.1).check(AGG, DIRS)
    assert result.passed is False
    assert "latency regressed: mean 2.5 vs baseline 2, allowed <= 2.2 (lower is better)" in result.message
    # improvements never fail, however large
    faster = {"latency": aggregate([0.1])}
    assert no_regression(path).check(faster, DIRS).passed


def test_no_regression_boundary_is_exact_despite_float_rounding(tmp_path):
    path = _baseline(tmp_path, exact_match=(0.8, True))
    assert no_regression(path).check({"exact_match": aggregate([0.76])}, DIRS).passed  # 0.8 * 0.95 = 0.76


def test_no_regression_zero_tolerance_and_zero_baseline(tmp_path):
    path = _baseline(tmp_path, latency=(0.0, False))
    assert not no_regression(path).check({"latency": aggregate([0.001])}, DIRS).passed
    assert no_regression(path, tolerance=0).check({"latency": aggregate([0.0])}, DIRS).passed


def test_no_regression_missing_metric_nan_and_direction_change(tmp_path):
    path = _baseline(tmp_path, exact_match=(0.5, True), faithfulness=(0.9, True), broken=(0.5, True))
    result = no_regression(path).check(AGG, DIRS)
    assert result.passed is False
    assert "faithfulness is in the baseline but not in this run" in result.message
    assert "broken mean is NaN (baseline 0.5)" in result.message
    flipped = no_regression(path).check(AGG, {**DIRS, "exact_match": False})
    assert "exact_match changed direction since the baseline (higher_is_better=True there)" in flipped.message


def test_no_regression_skips_a_null_baseline_mean(tmp_path):
    path = write_baseline(tmp_path / "b.json", {"exact_match": aggregate([math.nan])}, {"exact_match": True})
    result = no_regression(path).check(AGG, DIRS)
    assert result.passed is True and "exact_match has no baseline mean" in result.message


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read baseline file '{path}': No such file or directory"),
        ("{not json", "baseline file '{path}' is not valid JSON: "),
        ('{"format": "other"}', "baseline file '{path}' is not a cogeval baseline: 'format' must be 'cogeval.baseline'"),
        ('{"format": "cogeval.baseline", "version": 2, "metrics": {}}', "baseline file '{path}': unsupported 'version' 2; expected 1"),
        ('{"format": "cogeval.baseline", "version": 1, "metrics": []}', "baseline file '{path}': 'metrics' must be an object"),
        (
            '{"format": "cogeval.baseline", "version": 1, "metrics": {"acc": {"mean": "high", "higher_is_better": true}}}',
            "baseline file '{path}': metrics.acc.mean must be a number or null; got 'high'",
        ),
        (
            '{"format": "cogeval.baseline", "version": 1, "metrics": {"acc": {"mean": 1}}}',
            "baseline file '{path}': metrics.acc.higher_is_better must be true or false; got None",
        ),
    ],
)
def test_a_bad_baseline_fails_the_check_and_names_the_file(tmp_path, content, problem):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    result = no_regression(path).check(AGG, DIRS)
    assert result.passed is False
    assert result.message.startswith(problem.format(path=path))
    with pytest.raises(InputError):
        read_baseline(path)


def test_no_regression_construction(tmp_path):
    with pytest.raises(InputError, match="baseline_path must be a str or Path; got 3"):
        no_regression(3)
    with pytest.raises(InputError, match="tolerance must be a finite number >= 0"):
        no_regression("b.json", tolerance=-0.1)
    assert no_regression(tmp_path / "b.json").describe() == {
        "kind": "no_regression",
        "name": f"no_regression({tmp_path / 'b.json'})",
        "params": {"baseline_path": str(tmp_path / "b.json"), "tolerance": 0.05},
    }


# --- assertion -----------------------------------------------------------------


def test_custom_assertion_passes_and_fails():
    fast = assertion("fast", lambda agg: agg["latency"].max < 5)
    assert fast.check(AGG, DIRS) == AssertionResult("fast", True, "fast passed")
    strict = assertion("strict", lambda agg: agg["latency"].max < 1, message="latency max must stay under 1 s")
    assert strict.check(AGG, DIRS) == AssertionResult("strict", False, "latency max must stay under 1 s")
    assert fast.describe() == {"kind": "assertion", "name": "fast", "params": {}}


def test_custom_assertion_errors_fail_with_the_exception():
    result = assertion("typo", lambda agg: agg["latncy"].max < 5).check(AGG, DIRS)
    assert result == AssertionResult("typo", False, "typo: check raised KeyError: 'latncy'")
    result = assertion("truthy", lambda agg: 1).check(AGG, DIRS)
    assert result.message == "truthy: check returned 1; expected True or False"


def test_custom_assertion_construction():
    with pytest.raises(InputError, match="assertion name must be a non-empty string; got ''"):
        assertion("", lambda agg: True)
    with pytest.raises(InputError, match="check must be a callable check\\(aggregated\\) -> bool; got True"):
        assertion("x", True)


def test_result_html_and_dict():
    result = threshold("exact_match", 0.7).check(AGG, DIRS)
    assert result.to_dict()["passed"] is True
    assert "exact_match mean 0.75 &gt;= 0.7" in result._repr_html_()
