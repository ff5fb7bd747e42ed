"""adjust_p_values against R's p.adjust; each reference number names its R call."""

from __future__ import annotations

import numpy as np
import pytest

from cogeval.errors import InputError
from cogeval.stats import adjust_p_values
from cogeval.stats.multitest import METHODS

P5 = [0.01, 0.02, 0.03, 0.04, 0.05]
BY_FACTOR = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5  # sum(1 / (1:5)) = 2.283333

# Benjamini & Hochberg (1995), section 4: the 15 p-values of the myocardial infarction example
BH_1995 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
           0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("holm", [0.05, 0.08, 0.09, 0.09, 0.09]),  # R: p.adjust(c(.01, .02, .03, .04, .05), "holm")
        ("bonferroni", [0.05, 0.10, 0.15, 0.20, 0.25]),  # R: p.adjust(..., "bonferroni")
        ("bh", [0.05] * 5),  # R: p.adjust(..., "BH")
        ("by", [0.1141667] * 5),  # R: p.adjust(..., "BY"); 0.05 * 2.283333
    ],
)
def test_matches_r_p_adjust(method, expected):
    assert adjust_p_values(P5, method) == pytest.approx(expected, abs=5e-8)


def test_by_by_hand():
    assert adjust_p_values(P5, "by") == pytest.approx([0.05 * BY_FACTOR] * 5)


def test_holm_by_hand_on_unsorted_input():
    # sorted: 0.01, 0.02, 0.04 -> 3 * 0.01, 2 * 0.02, 1 * 0.04 -> cummax 0.03, 0.04, 0.04
    assert adjust_p_values([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_benjamini_hochberg_1995_example():
    # B&H (1995): at level 0.05 the FDR procedure rejects the 4 smallest, Holm (Bonferroni-type) 3
    assert int((adjust_p_values(BH_1995, "bh") <= 0.05).sum()) == 4
    assert int((adjust_p_values(BH_1995, "holm") <= 0.05).sum()) == 3


@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh"), ("by", "fdr_by")])
def test_agrees_with_statsmodels_given_explicit_method(ours, theirs):
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(7).uniform(0, 0.2, 40) ** 2
    assert adjust_p_values(p, ours) == pytest.approx(multipletests(p, method=theirs)[1])


def test_holm_is_holm_not_statsmodels_default_holm_sidak():
    # multipletests defaults to Holm-Sidak ("hs"); adjust_p_values must ask for "holm" explicitly.
    # R: p.adjust(c(0.01, 0.02, 0.03), "holm") -> 0.03 0.04 0.04
    # Holm-Sidak by hand: 1 - 0.99^3 = 0.029701, 1 - 0.98^2 = 0.0396, max(0.0396, 0.03) = 0.0396
    from statsmodels.stats.multitest import multipletests

    p = [0.01, 0.02, 0.03]
    holm = adjust_p_values(p, "holm")
    assert holm == pytest.approx([0.03, 0.04, 0.04], abs=1e-15)
    holm_sidak = multipletests(p)[1]  # statsmodels' default method
    assert holm_sidak == pytest.approx([0.029701, 0.0396, 0.0396], abs=1e-15)
    assert not np.allclose(holm, holm_sidak)
    assert adjust_p_values(p) == pytest.approx(holm)  # the default method is Holm too


def test_nan_is_not_passed_to_statsmodels():
    # statsmodels counts a NaN among the tests: multipletests([0.01, nan, 0.04], method="holm") gives 0.03, nan, 0.08
    # R: p.adjust(c(0.01, NA, 0.04), "bonferroni") -> 0.02 NA 0.08
    assert adjust_p_values([0.01, np.nan, 0.04], "bonferroni") == pytest.approx([0.02, np.nan, 0.08], nan_ok=True)


def test_nan_stays_nan_and_is_not_counted():
    # R: p.adjust(c(0.01, NA, 0.04), "holm") -> 0.02 NA 0.04
    result = adjust_p_values([0.01, np.nan, 0.04], "holm")
    assert np.isnan(result[1])
    assert result[[0, 2]] == pytest.approx([0.02, 0.04])


def test_ties_and_case_insensitive_names():
    assert adjust_p_values([0.01, 0.01], "Holm") == pytest.approx([0.02, 0.02])
    assert adjust_p_values(P5, "BH") == pytest.approx([0.05] * 5)
    assert adjust_p_values(P5, "BY") == pytest.approx(adjust_p_values(P5, "by"))


@pytest.mark.parametrize("method", METHODS)
def test_invariants(method):
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0, 1, 30), rng.uniform(0, 0.01, 10), [0.0, 1.0, 0.5, 0.5]])
    rng.shuffle(p)
    adjusted = adjust_p_values(p, method)
    assert isinstance(adjusted, np.ndarray) and adjusted.shape == p.shape
    assert (adjusted >= p).all() and (adjusted <= 1).all()
    order = np.argsort(p, kind="stable")
    assert (np.diff(adjusted[order]) >= 0).all()  # order preserved
    # input order: adjusting a permutation permutes the answer
    perm = rng.permutation(len(p))
    assert adjust_p_values(p[perm], method) == pytest.approx(adjusted[perm])


@pytest.mark.parametrize("method", METHODS)
def test_empty_single_and_all_nan(method):
    empty = adjust_p_values([], method)
    assert isinstance(empty, np.ndarray) and empty.shape == (0,)
    assert adjust_p_values([0.03], method) == pytest.approx([0.03])
    assert np.isnan(adjust_p_values([np.nan, np.nan], method)).all()


@pytest.mark.parametrize(
    ("p", "method", "message"),
    [
        ([0.1, 0.2], "hochberg", "method must be one of 'holm', 'bonferroni', 'bh', 'by'; got 'hochberg'"),
        ([0.1, 0.2], None, "method must be one of 'holm', 'bonferroni', 'bh', 'by'; got None"),
        ([0.1, 1.5], "holm", "p must hold p-values in [0, 1]; got 1.5 at position 1"),
        ([-0.1], "holm", "p must hold p-values in [0, 1]; got -0.1 at position 0"),
        (["a"], "holm", "p must be a sequence of numbers; got ['a']"),
        (0.5, "holm", "p must be a sequence of numbers, not a single value; got 0.5"),
    ],
)
def test_bad_input_names_the_argument(p, method, message):
    with pytest.raises(InputError) as info:
        adjust_p_values(p, method)
    assert str(info.value) == message
