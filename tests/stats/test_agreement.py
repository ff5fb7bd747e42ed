"""cohen_kappa against a textbook example and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from cogeval.errors import InputError
from cogeval.stats import cohen_kappa


def _from_table(both_yes, a_yes_b_no, a_no_b_yes, both_no):
    a = ["yes"] * (both_yes + a_yes_b_no) + ["no"] * (a_no_b_yes + both_no)
    b = ["yes"] * both_yes + ["no"] * a_yes_b_no + ["yes"] * a_no_b_yes + ["no"] * both_no
    return a, b


def test_textbook_two_by_two():
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15 -> po = 0.7, pe = 0.5, kappa = 0.4
    assert cohen_kappa(*_from_table(20, 5, 10, 15)) == 0.4


@pytest.mark.parametrize("seed", range(5))
def test_matches_statsmodels_on_a_contingency_table(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, size=200))
    table = pd.crosstab(a, b).reindex(index=range(4), columns=range(4), fill_value=0).to_numpy()
    assert cohen_kappa(a.tolist(), b.tolist()) == pytest.approx(sm_cohens_kappa(table).kappa, rel=1e-12)


def test_labels_are_any_hashable_and_only_equality_matters():
    a, b = _from_table(20, 5, 10, 15)
    as_ints = [int(label == "yes") for label in a], [int(label == "yes") for label in b]
    assert cohen_kappa(*as_ints) == cohen_kappa(a, b)
    assert cohen_kappa(pd.Series(a), np.array(b, dtype=object)) == cohen_kappa(a, b)
    assert cohen_kappa([(1, "x"), (2, "y"), (1, "x")], [(1, "x"), (2, "y"), (2, "y")]) == pytest.approx(0.4)


def test_union_of_labels_counts_a_label_only_one_rater_used():
    # A uses {x, y}, B uses {x, y, z}: po = 2/4, pe = (2*2 + 2*1 + 0*1) / 16 = 6/16, kappa = (8/16 - 6/16) / (10/16) = 0.2
    assert cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "z"]) == pytest.approx(0.2)


def test_symmetric_and_perfect_agreement():
    a, b = _from_table(3, 4, 7, 9)
    assert cohen_kappa(a, b) == cohen_kappa(b, a)
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == 1.0


def test_nan_when_expected_agreement_is_one():
    assert math.isnan(cohen_kappa(["x"] * 4, ["x"] * 4))


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (["x", "y"], ["x"], "labels_a and labels_b must be paired (the same length); got 2 and 1 values"),
        ([], [], "labels_a and labels_b must hold at least one rated item; got none"),
        (["x", None], ["x", "y"], "labels_a must not contain missing labels; found None at position 1"),
        (["x", "y"], [float("nan"), "y"], "labels_b must not contain missing labels; found nan at position 0"),
        ("xy", ["x", "y"], "labels_a must be a sequence of labels (one per item); got 'xy'"),
        (["x", ["y"]], ["x", "y"], "labels_a must hold hashable labels; got ['y'] at position 1"),
    ],
)
def test_bad_input_names_the_argument(a, b, message):
    with pytest.raises(InputError) as caught:
        cohen_kappa(a, b)
    assert str(caught.value) == message
