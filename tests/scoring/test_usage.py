"""Statistical metrics: latency, cost, token_usage read outcomes; unknown values are missing, never 0."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from cogeval.errors import InputError
from cogeval.scoring import StatisticalMetric, cost, from_description, latency, token_usage
from cogeval.scoring.usage import BUILTIN_STATISTICAL_METRICS
from cogeval.stats import Aggregate


def outcome(duration_s=None, cost_usd=None, input_tokens=None, output_tokens=None):
    return SimpleNamespace(
        duration_s=duration_s, cost_usd=cost_usd, input_tokens=input_tokens, output_tokens=output_tokens
    )


def test_latency_aggregates_durations():
    # durations 1..10 s; R: quantile(1:10, 0.95) = 9.55, sd(1:10) = 3.02765
    summary = latency().compute([outcome(duration_s=float(d)) for d in range(1, 11)])
    assert isinstance(summary, Aggregate)
    assert summary.mean == 5.5
    assert summary.p95 == pytest.approx(9.55)
    assert summary.std_dev == pytest.approx(3.02765, abs=1e-5)
    assert (summary.min, summary.max, summary.count, summary.missing) == (1.0, 10.0, 10, 0)


def test_unknown_values_are_missing_not_zero():
    summary = cost().compute([outcome(cost_usd=0.002), outcome(cost_usd=None), outcome(cost_usd=0.004)])
    assert summary.mean == pytest.approx(0.003)
    assert (summary.count, summary.missing) == (2, 1)


def test_all_unknown_gives_nan_and_count_zero():
    summary = cost().compute([outcome(), outcome()])
    assert math.isnan(summary.mean) and math.isnan(summary.p95)
    assert (summary.count, summary.missing) == (0, 2)


def test_no_outcomes():
    summary = latency().compute([])
    assert math.isnan(summary.mean) and (summary.count, summary.missing) == (0, 0)


def test_missing_attributes_and_non_numbers_are_unknown():
    summary = latency().compute([SimpleNamespace(), outcome(duration_s="fast"), outcome(duration_s=True), outcome(duration_s=2)])
    assert (summary.mean, summary.count, summary.missing) == (2.0, 1, 3)


def test_token_usage_adds_input_and_output_tokens():
    outcomes = [
        outcome(input_tokens=100, output_tokens=20),  # 120
        outcome(input_tokens=50, output_tokens=None),  # 50: one count unknown counts as 0
        outcome(input_tokens=None, output_tokens=None),  # unknown
    ]
    assert token_usage().values(outcomes)[:2] == [120.0, 50.0]
    summary = token_usage().compute(outcomes)
    assert (summary.mean, summary.count, summary.missing) == (85.0, 2, 1)


@pytest.mark.parametrize("factory", [latency, cost, token_usage])
def test_usage_metrics_are_lower_is_better_run_metrics(factory):
    m = factory()
    assert m.name == factory.__name__
    assert m.describe() == {"name": factory.__name__, "higher_is_better": False, "params": {}, "kind": "run"}
    assert repr(m) == f"StatisticalMetric({factory.__name__!r})"
    assert from_description(m.describe()).describe() == m.describe()


def test_custom_statistical_metric():
    calls = StatisticalMetric("tool_calls", lambda o: len(o.tool_calls), params={"kind": "all"})
    summary = calls.compute([SimpleNamespace(tool_calls=[1, 2]), SimpleNamespace(tool_calls=[])])
    assert (summary.mean, summary.max) == (1.0, 2.0)
    assert repr(calls) == "StatisticalMetric('tool_calls', kind='all')"


def test_a_failing_value_function_names_the_metric_and_outcome():
    broken = StatisticalMetric("tool_calls", lambda o: len(o.tool_calls))
    with pytest.raises(InputError) as info:
        broken.compute([SimpleNamespace(tool_calls=[]), SimpleNamespace()])
    assert str(info.value) == (
        "statistical metric 'tool_calls' failed on outcome 1: "
        "AttributeError: 'types.SimpleNamespace' object has no attribute 'tool_calls'"
    )


def test_construction_errors():
    with pytest.raises(InputError, match=r"must not contain '\.'"):
        StatisticalMetric("latency.ms", lambda o: 1)
    with pytest.raises(InputError, match="value must be a callable value\\(outcome\\); got 3"):
        StatisticalMetric("x", 3)


# -- one per-case mapping ---------------------------------------------------------------------------


def test_per_case_is_the_one_mapping_and_compute_summarises_it():
    outcomes = [outcome(duration_s=1.5, cost_usd=0.01, input_tokens=7, output_tokens=3), outcome()]
    for factory, first in ((latency, 1.5), (cost, 0.01), (token_usage, 10.0)):
        m = factory()
        assert m.per_case(outcomes[0]) == first and math.isnan(m.per_case(outcomes[1]))
        assert m.values(outcomes)[0] == first and m.compute(outcomes).mean == first


def test_per_case_reads_a_row_of_a_results_table():
    import pandas as pd

    frame = pd.DataFrame({"duration_s": [0.5], "cost_usd": [float("nan")], "input_tokens": pd.array([None], "Int64"),
                          "output_tokens": pd.array([4], "Int64")})
    (row,) = frame.itertuples(index=False)
    assert latency().per_case(row) == 0.5 and math.isnan(cost().per_case(row)) and token_usage().per_case(row) == 4.0


def test_only_custom_statistical_metrics_write_their_per_case_values():
    assert [f().writes_per_case for f in (latency, cost, token_usage)] == [False, False, False]
    assert StatisticalMetric("tool_calls", lambda o: 1).writes_per_case
    assert StatisticalMetric("latency", lambda o: 1).writes_per_case  # not the built-in reader: its values are its own
    assert list(BUILTIN_STATISTICAL_METRICS) == ["latency", "cost", "token_usage"]
    assert all(BUILTIN_STATISTICAL_METRICS[name]().name == name for name in BUILTIN_STATISTICAL_METRICS)
