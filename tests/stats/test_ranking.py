"""bradley_terry against BradleyTerry2's published fit, statsmodels and scipy; min_rank and rank_intervals by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize

from cogeval.errors import InputError
from cogeval.stats import bradley_terry, min_rank, rank_intervals
from cogeval.stats.ranking import PRIOR_SD

# Stigler (1994) journal citations as BradleyTerry2 ships them (data("citations"), p. 448 of Agresti 2002),
# in the binomial form of the vignette's countsToBinomial(citations): the cited journal wins.
JOURNALS = ["Biometrika", "Comm Statist", "JASA", "JRSS-B"]
CITATIONS = [
    ("Biometrika", "Comm Statist", 730, 33),
    ("Biometrika", "JASA", 498, 320),
    ("Biometrika", "JRSS-B", 221, 284),
    ("Comm Statist", "JASA", 68, 813),
    ("Comm Statist", "JRSS-B", 17, 276),
    ("JASA", "JRSS-B", 142, 325),
]


def expand(table):
    """One row per comparison from (a, b, wins of a, wins of b[, ties]) tuples."""
    rows = []
    for a, b, wins, losses, *ties in table:
        rows += [(a, b, "a")] * wins + [(a, b, "b")] * losses + [(a, b, "tie")] * (ties[0] if ties else 0)
    return pd.DataFrame(rows, columns=["a", "b", "winner"])


@pytest.fixture(scope="module")
def citations():
    return expand(CITATIONS)


def strengths(frame):
    return frame.set_index("variant")["strength"]


# --- reference fits --------------------------------------------------------------------------


def test_citations_match_the_bradleyterry2_vignette(citations):
    s = strengths(bradley_terry(citations, n_bootstrap=0))
    # BradleyTerry2 vignette, section 2.1:
    #   BTm(cbind(win1, win2), journal1, journal2, ~ journal, id = "journal", data = citations.sf)
    #   journalComm Statist -2.9491, journalJASA -0.4796, journalJRSS-B 0.2690 (Biometrika = 0)
    assert (s - s["Biometrika"]).round(4).to_dict() == {
        "JRSS-B": 0.2690, "Biometrika": 0.0, "JASA": -0.4796, "Comm Statist": -2.9491,
    }
    #   update(citeModel, refcat = "JASA"): Biometrika 0.4796, Comm Statist -2.4695, JRSS-B 0.7485
    assert (s - s["JASA"]).round(4).to_dict() == {
        "JRSS-B": 0.7485, "Biometrika": 0.4796, "JASA": 0.0, "Comm Statist": -2.4695,
    }
    assert s.sum() == pytest.approx(0, abs=1e-12)  # centred


def test_citations_residual_deviance_matches_the_vignette(citations):
    # Vignette: "Residual Deviance: 4.293" on 3 degrees of freedom.
    s = strengths(bradley_terry(citations, n_bootstrap=0))
    deviance = 0.0
    for a, b, wins, losses in CITATIONS:
        p = 1 / (1 + math.exp(s[b] - s[a]))
        n = wins + losses
        deviance += 2 * (wins * math.log(wins / (n * p)) + losses * math.log(losses / (n * (1 - p))))
    assert deviance == pytest.approx(4.293, abs=5e-4)


def citation_glm():
    """statsmodels GLM (binomial, logit link) with +1/-1 player columns, Biometrika as reference."""
    design = np.zeros((len(CITATIONS), len(JOURNALS)))
    outcome = np.zeros((len(CITATIONS), 2))
    for row, (a, b, wins, losses) in enumerate(CITATIONS):
        design[row, JOURNALS.index(a)], design[row, JOURNALS.index(b)] = 1, -1
        outcome[row] = wins, losses
    return sm.GLM(outcome, design[:, 1:], family=sm.families.Binomial()).fit()


def test_citations_agree_with_statsmodels_glm(citations):
    fit = citation_glm()
    theirs = np.r_[0.0, fit.params]
    ours = strengths(bradley_terry(citations, n_bootstrap=0))[JOURNALS].to_numpy()
    np.testing.assert_allclose(ours, theirs - theirs.mean(), atol=1e-9)


def test_bootstrap_intervals_agree_with_the_wald_intervals(citations):
    # With large counts the percentile bootstrap should match strength ± 1.96 se, se of the centred
    # strengths from statsmodels' covariance: Var(C β) = C V Cᵀ with C = I - 1/4.
    fit = citation_glm()
    covariance = np.zeros((4, 4))
    covariance[1:, 1:] = fit.cov_params()
    centre = np.eye(4) - 1 / 4
    se = np.sqrt(np.diag(centre @ covariance @ centre.T))
    frame = bradley_terry(citations, n_bootstrap=2000, seed=7).set_index("variant").loc[JOURNALS]
    np.testing.assert_allclose((frame.ci_high - frame.ci_low) / 2, 1.959964 * se, rtol=0.1)
    np.testing.assert_allclose((frame.ci_high + frame.ci_low) / 2, frame.strength, atol=0.25 * se.max())


def negative_log_likelihood(s, pairs, names):
    index = {name: i for i, name in enumerate(names)}
    total = 0.0
    for a, b, winner in pairs.itertuples(index=False):
        d = s[index[a]] - s[index[b]]
        log_a, log_b = -np.logaddexp(0, -d), -np.logaddexp(0, d)
        total += {"a": log_a, "b": log_b, "tie": (log_a + log_b) / 2}[winner]
    return -total


SMALL = expand([("x", "y", 3, 1, 2), ("y", "z", 2, 2, 1), ("x", "z", 4, 1), ("z", "w", 1, 3, 2), ("w", "x", 1, 2)])


def test_ties_count_half_a_win_each_way_as_a_direct_scipy_mle():
    names = ["x", "y", "z", "w"]
    direct = optimize.minimize(negative_log_likelihood, np.zeros(4), args=(SMALL, names), method="BFGS",
                               options={"gtol": 1e-10})
    theirs = direct.x - direct.x.mean()
    ours = strengths(bradley_terry(SMALL, n_bootstrap=0))[names].to_numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_a_tie_is_worth_one_win_each_way_in_doubled_data():
    # Doubling every decided comparison and replacing each tie by one win for each side doubles the
    # log-likelihood, so the strengths are the same.
    doubled = []
    for a, b, winner in SMALL.itertuples(index=False):
        doubled += [(a, b, "a"), (a, b, "b")] if winner == "tie" else [(a, b, winner)] * 2
    ours = strengths(bradley_terry(SMALL, n_bootstrap=0))
    again = strengths(bradley_terry(pd.DataFrame(doubled, columns=["a", "b", "winner"]), n_bootstrap=0))
    pd.testing.assert_series_equal(ours, again[ours.index], atol=1e-10)


def test_which_side_is_a_does_not_matter():
    swapped = SMALL.rename(columns={"a": "b", "b": "a"}).assign(
        winner=SMALL["winner"].map({"a": "b", "b": "a", "tie": "tie"}))
    ours = strengths(bradley_terry(SMALL, n_bootstrap=0))
    again = strengths(bradley_terry(swapped[["a", "b", "winner"]], n_bootstrap=0))
    pd.testing.assert_series_equal(ours, again[ours.index], atol=1e-10)


# --- output shape, ranks, bootstrap ----------------------------------------------------------


def test_columns_order_and_ranks(citations):
    frame = bradley_terry(citations, n_bootstrap=200, seed=0)
    assert list(frame.columns) == ["variant", "strength", "ci_low", "ci_high", "rank"]
    assert frame["variant"].tolist() == ["JRSS-B", "Biometrika", "JASA", "Comm Statist"]
    assert frame["rank"].tolist() == [1, 2, 3, 4]
    assert ((frame.ci_low <= frame.strength) & (frame.strength <= frame.ci_high)).all()


def test_a_balanced_cycle_ties_every_variant():
    cycle = expand([("x", "y", 2, 1), ("y", "z", 2, 1), ("z", "x", 2, 1)])
    frame = bradley_terry(cycle, n_bootstrap=0)
    np.testing.assert_allclose(frame["strength"], 0, atol=1e-12)
    assert frame["rank"].tolist() == [1, 1, 1]
    assert frame["variant"].tolist() == ["x", "y", "z"]  # ties keep the order of first appearance


def test_bootstrap_is_seeded_and_leaves_the_global_generator_alone(citations):
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    first = bradley_terry(SMALL, n_bootstrap=300, seed=5)
    assert (np.random.get_state()[1] == before).all()
    pd.testing.assert_frame_equal(first, bradley_terry(SMALL, n_bootstrap=300, seed=5))
    assert not first.equals(bradley_terry(SMALL, n_bootstrap=300, seed=6))
    generator = bradley_terry(SMALL, n_bootstrap=300, seed=np.random.default_rng(5))
    pd.testing.assert_frame_equal(first, generator)


def test_no_bootstrap_gives_nan_intervals():
    frame = bradley_terry(SMALL, n_bootstrap=0)
    assert frame[["ci_low", "ci_high"]].isna().all().all()


def test_variants_may_be_any_hashable_labels():
    frame = bradley_terry(pd.DataFrame({"a": [1, 1, 2, 2], "b": [2, 3, 3, 1], "winner": ["a", "tie", "b", "a"]}),
                          n_bootstrap=0)
    assert sorted(frame["variant"].tolist()) == [1, 2, 3]
    assert type(frame["variant"].iloc[0]) is int


# --- when the MLE does not exist or the graph is disconnected ---------------------------------


def test_a_variant_that_never_loses_gets_a_finite_strength_under_a_weak_prior_and_a_warning():
    pairs = expand([("x", "y", 3, 0), ("y", "z", 2, 1), ("x", "z", 2, 0)])
    with pytest.warns(UserWarning) as caught:
        frame = bradley_terry(pairs, n_bootstrap=100, seed=0)
    assert str(caught[0].message) == (
        "bradley_terry: the maximum-likelihood strengths do not exist ('x' won every comparison with the other "
        "variants; 'y', 'z' lost every comparison with the other variants): they would be infinite. The strengths use a weak normal prior (mean 0, sd 10) instead; read them "
        "as 'much stronger / weaker than the data can measure', not as sizes"
    )
    assert frame["variant"].tolist() == ["x", "y", "z"]
    assert np.isfinite(frame[["strength", "ci_low", "ci_high"]].to_numpy()).all()
    # The penalised fit, checked directly: maximise log L(s) - sum(s²) / (2 · 10²).
    names = ["x", "y", "z"]
    direct = optimize.minimize(lambda s: negative_log_likelihood(s, pairs, names) + s @ s / (2 * PRIOR_SD**2),
                               np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(strengths(frame)[names], direct.x - direct.x.mean(), atol=1e-5)


def test_the_warning_names_groups():
    # x and y beat each other, z and w beat each other, and x, y won every game against z, w.
    pairs = expand([("x", "y", 1, 1), ("x", "z", 1, 0), ("y", "w", 1, 0), ("z", "w", 1, 1)])
    with pytest.warns(UserWarning, match=r"\('x', 'y' won every comparison with the other variants; "
                                         r"'z', 'w' lost every comparison with the other variants\)"):
        frame = bradley_terry(pairs, n_bootstrap=0)
    assert frame["rank"].tolist() == [1, 1, 3, 3]


def test_no_warning_when_the_mle_exists(citations):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bradley_terry(citations, n_bootstrap=50, seed=0)


def test_a_disconnected_comparison_graph_is_an_error():
    pairs = expand([("x", "y", 2, 1), ("z", "w", 1, 2)])
    with pytest.raises(InputError) as error:
        bradley_terry(pairs)
    assert str(error.value) == (
        "pairs must connect every variant: no comparison links these groups: 'x', 'y' | 'z', 'w'. "
        "Their strengths would share no scale; compare at least one pair across the groups"
    )


# --- input validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("x", "y", "a")], "pairs must be a pandas DataFrame with columns a, b and winner; got [('x', 'y', 'a')]"),
        (pd.DataFrame({"a": ["x"], "b": ["y"], "result": ["a"]}),
         "pairs is missing the column(s) winner; it needs a, b and winner (it has: a, b, result)"),
        (pd.DataFrame({"a": [], "b": [], "winner": []}), "pairs must hold at least one comparison; got none"),
        (pd.DataFrame({"a": ["x", None], "b": ["y", "y"], "winner": ["a", "a"]}),
         "pairs['a'] must name a variant in every row; row 1 has none"),
        (pd.DataFrame({"a": ["x", "y"], "b": ["y", "y"], "winner": ["a", "b"]}),
         "pairs row 1 compares 'y' with itself; a and b must be different variants"),
        (pd.DataFrame({"a": ["x", "x"], "b": ["y", "y"], "winner": ["a", "x"]}, index=["p", "q"]),
         "pairs['winner'] must be 'a', 'b' or 'tie'; got 'x' in row 'q'"),
    ],
)
def test_bad_pairs_are_named(pairs, message):
    with pytest.raises(InputError) as error:
        bradley_terry(pairs)
    assert str(error.value) == message


def test_bad_bootstrap_arguments_are_named():
    with pytest.raises(InputError, match=r"^n_bootstrap must be an integer >= 0; got -1$"):
        bradley_terry(SMALL, n_bootstrap=-1)
    with pytest.raises(InputError, match=r"^seed must be None, an integer >= 0, a string or a numpy Generator; got 1.5$"):
        bradley_terry(SMALL, seed=1.5)


# --- min_rank and rank_intervals ----------------------------------------------------------------


def test_min_rank_shares_ranks_between_ties():
    assert min_rank([0.9, 0.9, 0.9, 0.4]).tolist() == [1, 1, 1, 4]
    assert min_rank([0.4, 0.9, 0.7, 0.9]).tolist() == [4, 1, 3, 1]
    assert min_rank([3.0, 1.0, 1.0, 2.0], higher_is_better=False).tolist() == [4, 1, 1, 3]
    assert min_rank([0.1 + 0.2, 0.3]).tolist() == [1, 1]  # float noise is not a difference
    # pandas' own min ranking agrees
    values = [0.5, 0.2, 0.5, 0.8, 0.2]
    assert min_rank(values).tolist() == pd.Series(values).rank(method="min", ascending=False).astype(int).tolist()


def test_rank_intervals_by_hand():
    # intervals: a [0.80, 0.95], b [0.50, 0.85], c [0.10, 0.30], d [0.25, 0.45]
    low, high = [0.80, 0.50, 0.10, 0.25], [0.95, 0.85, 0.30, 0.45]
    best, worst = rank_intervals(low, high)
    # a: nothing entirely above; not entirely below a: a, b          -> 1..2
    # b: nothing entirely above; not entirely below b: a, b          -> 1..2
    # c: a, b entirely above; not entirely below: a, b, c, d         -> 3..4
    # d: a, b entirely above; not entirely below: a, b, c, d         -> 3..4
    assert best.tolist() == [1, 1, 3, 3]
    assert worst.tolist() == [2, 2, 4, 4]
    # lower is better mirrors it: c and d lead
    best, worst = rank_intervals(low, high, higher_is_better=False)
    assert best.tolist() == [3, 3, 1, 1]
    assert worst.tolist() == [4, 4, 2, 2]


def test_touching_intervals_overlap_and_nan_intervals_are_left_out():
    best, worst = rank_intervals([0.5, 0.2, math.nan], [0.9, 0.5, math.nan])
    assert best.tolist() == [1, 1, pytest.approx(math.nan, nan_ok=True)]
    assert worst[:2].tolist() == [2, 2] and math.isnan(worst[2])


def test_rank_intervals_need_paired_limits():
    with pytest.raises(InputError, match=r"^low and high must be paired \(the same length\); got 2 and 1 values$"):
        rank_intervals([0.1, 0.2], [0.3])
