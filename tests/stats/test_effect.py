"""cohens_d (paired d_z) against R and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cogeval.errors import InputError
from cogeval.stats import cohens_d

# R datasets::sleep: extra[group == 1], extra[group == 2]
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_sleep_data_matches_r():
    # R: with(sleep, {d <- extra[group == 1] - extra[group == 2]; mean(d) / sd(d)})  # -1.284558
    # (mean(d) = -1.58, sd(d) = 1.229995)
    assert cohens_d(SLEEP_1, SLEEP_2) == pytest.approx(-1.284558, abs=1e-6)
    assert cohens_d(SLEEP_1, SLEEP_2) == pytest.approx(-1.58 / 1.2299955, rel=1e-7)


def test_d_is_the_paired_t_statistic_over_sqrt_n():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=25), rng.normal(0.3, size=25)
    assert cohens_d(a, b) == pytest.approx(stats.ttest_rel(a, b).statistic / math.sqrt(25), rel=1e-12)


def test_d_changes_sign_with_the_order_and_returns_a_float():
    d = cohens_d(SLEEP_2, SLEEP_1)
    assert type(d) is float and d == pytest.approx(-cohens_d(SLEEP_1, SLEEP_2))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),  # every difference 0
        ([2.0, 3.0, 4.0], [1.0, 2.0, 3.0]),  # every difference 1: sd 0
        ([1.1, 2.2, 3.3], [0.1, 1.2, 2.3]),  # differences 1 up to rounding, as R's t.test calls it constant
        ([1.0], [0.0]),  # one pair: no sd
        ([], []),
    ],
)
def test_undefined_d_is_nan(a, b):
    assert math.isnan(cohens_d(a, b))


def test_unequal_lengths_name_both_arguments():
    with pytest.raises(InputError) as caught:
        cohens_d([1, 2, 3], [1, 2])
    assert str(caught.value) == "a and b must be paired (the same length); got 3 and 2 values"


def test_nan_is_refused():
    with pytest.raises(InputError) as caught:
        cohens_d([1, 2, 3], [1, float("nan"), 2])
    assert str(caught.value) == "b must not contain NaN; found one at position 1"
