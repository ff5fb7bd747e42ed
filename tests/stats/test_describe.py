"""aggregate, mean, median, std_dev and percentile against R."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from cogeval.errors import InputError
from cogeval.stats import Aggregate, StatResult, aggregate, mean, median, percentile, std_dev

FIELDS = ["mean", "median", "min", "max", "std_dev", "p50", "p95", "p99", "count", "missing"]


def test_matches_r_on_one_to_ten():
    # R: quantile(1:10, c(.5, .95, .99))  # 5.5 9.55 9.91 (type 7);  sd(1:10)  # 3.02765
    result = aggregate(range(1, 11))
    assert (result.p50, result.p95, result.p99) == pytest.approx((5.5, 9.55, 9.91), abs=1e-12)
    assert result.std_dev == pytest.approx(3.0276503540974917, rel=1e-12)
    assert (result.mean, result.median, result.min, result.max) == (5.5, 5.5, 1.0, 10.0)
    assert (result.count, result.missing) == (10, 0)
    assert percentile(range(1, 11), 0.95) == pytest.approx(9.55)
    assert std_dev(range(1, 11)) == result.std_dev


def test_fields_and_tidy_row():
    result = aggregate([1.0, 2.0])
    assert isinstance(result, StatResult)
    assert [field.name for field in dataclasses.fields(Aggregate)] == FIELDS
    assert list(result.to_frame().columns) == FIELDS
    assert "Aggregate" in result._repr_html_()
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.mean = 0.0


def test_nan_and_none_are_left_out_and_counted():
    result = aggregate([1.0, math.nan, 3.0, None, 2.0])
    assert (result.count, result.missing) == (3, 2)
    assert (result.mean, result.median, result.min, result.max, result.std_dev) == (2.0, 2.0, 1.0, 3.0, 1.0)
    assert mean([1.0, math.nan, 3.0]) == 2.0
    assert median([1.0, math.nan, 3.0, 10.0]) == 3.0
    assert std_dev([1.0, math.nan, 3.0]) == pytest.approx(math.sqrt(2))
    assert percentile([math.nan, 1.0, 3.0], 0.5) == 2.0


def test_matches_pandas_on_random_data():
    values = pd.Series(np.random.default_rng(1).lognormal(size=101))
    values[[3, 50]] = np.nan
    result = aggregate(values)
    assert result.mean == pytest.approx(values.mean())
    assert result.std_dev == pytest.approx(values.std())
    assert (result.p95, result.p99) == pytest.approx(tuple(values.quantile([0.95, 0.99])))


@pytest.mark.parametrize("values", [[], [math.nan, math.nan]])
def test_no_values_gives_nan_never_zero(values):
    result = aggregate(values)
    assert (result.count, result.missing) == (0, len(values))
    assert all(math.isnan(getattr(result, name)) for name in FIELDS[:8])
    assert all(math.isnan(f(values)) for f in (mean, median, std_dev))
    assert math.isnan(percentile(values, 0.5))


def test_one_value_has_no_std_dev():
    result = aggregate([4.0])
    assert math.isnan(result.std_dev) and math.isnan(std_dev([4.0]))
    assert (result.mean, result.median, result.p99, result.count) == (4.0, 4.0, 4.0, 1)


def test_percentile_ends_are_min_and_max():
    assert (percentile([3, 1, 2], 0), percentile([3, 1, 2], 1)) == (1.0, 3.0)


@pytest.mark.parametrize(
    ("p", "message"),
    [
        (95, "p must be a number in [0, 1]; got 95 (p is a fraction: for 95% pass 0.95)"),
        (-0.1, "p must be a number in [0, 1]; got -0.1"),
        (True, "p must be a number in [0, 1]; got True"),
        ("0.5", "p must be a number in [0, 1]; got '0.5'"),
    ],
)
def test_percentile_p_outside_zero_one(p, message):
    with pytest.raises(InputError) as caught:
        percentile([1.0, 2.0], p)
    assert str(caught.value) == message


def test_text_and_infinity_are_refused():
    with pytest.raises(InputError, match="values must be a sequence of numbers"):
        aggregate(["a", "b"])
    with pytest.raises(InputError, match="values must not contain infinite values"):
        mean([1.0, math.inf])
