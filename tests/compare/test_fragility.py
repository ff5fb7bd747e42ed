"""Fragility by brute force: remove the most supporting cases one by one and rerun the metric's own test with
scipy (binomtest / chi2 for McNemar, ttest_1samp, wilcoxon), at the metric's own Holm level."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval import EvalRun, compare_runs
from cogeval.compare import compare_scores
from cogeval.compare.fragility import fragility


def scipy_p(x: np.ndarray, test: str) -> float:
    """The metric's test of the paired differences ``x`` with scipy, as DESIGN §4 defines each."""
    if len(x) < 2:
        return math.nan
    if test.startswith("mcnemar"):
        worse, better = int(np.sum(x < 0)), int(np.sum(x > 0))
        if worse + better == 0:
            return 1.0
        if worse + better < 25:
            return stats.binomtest(better, worse + better).pvalue
        excess = max(abs(worse - better) - 1, 0)
        return 1.0 if excess == 0 else stats.chi2.sf(excess**2 / (worse + better), 1)
    if test == "t":
        if not x.any():
            return 1.0
        if np.all(x == x[0]):
            return math.nan  # constant non-zero differences: undefined
        return stats.ttest_1samp(x, 0.0).pvalue
    nonzero = x[x != 0]
    if len(nonzero) == 0:
        return 1.0
    exact = len(nonzero) < 50 and len(np.unique(np.abs(nonzero))) == len(nonzero) and len(nonzero) == len(x)
    return stats.wilcoxon(nonzero, correction=True, method="exact" if exact else "approx").pvalue


def brute_force(d: np.ndarray, test: str, level: float) -> int | None:
    """Remove the cases with the largest differences in the effect's direction first, one at a time, until the
    test is no longer significant at ``level``."""
    side = 1.0 if (np.sum(d > 0) >= np.sum(d < 0) if test != "t" else d.mean() >= 0) else -1.0
    if test == "wilcoxon":
        nonzero = d[d != 0]
        ranks = stats.rankdata(np.abs(nonzero))
        side = 1.0 if ranks[nonzero > 0].sum() >= len(nonzero) * (len(nonzero) + 1) / 4 else -1.0
    order = np.argsort(-side * d, kind="stable")  # most supporting first
    if not scipy_p(d, test) < level:
        return None
    for r in range(1, len(d)):
        if not scipy_p(d[order[r:]], test) < level:
            return r
    return len(d) - 1


def rows(values: np.ndarray, metric: str) -> pd.DataFrame:
    return pd.DataFrame({"run_id": "r", "case_key": [f"c{i}" for i in range(len(values))], "occurrence": 0, "trial": 0,
                         "metric": metric, "score": values, "error": None, "case_error": False})


def compared(base: np.ndarray, head: np.ndarray, test: str):
    c = compare_scores(rows(base, "m"), rows(head, "m"), directions={"m": True}, test=test)
    return c.metrics["m"]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("test", ["mcnemar", "t", "wilcoxon"])
def test_fragility_equals_brute_force_removal(seed, test):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 90))
    if test == "mcnemar":
        base = (rng.random(n) < 0.4).astype(float)
        head = np.where(rng.random(n) < 0.35, 1.0, base)
    else:
        base = np.round(rng.normal(0, 1, n) * 4) / 4  # quarters: ties and zeros for the rank test
        head = base + np.round(rng.normal(0.45, 1, n) * 4) / 4
    m = compared(base, head, test if test != "mcnemar" else "t")
    assert m.test.startswith(test)
    expected = brute_force(head - base, m.test, 1 - m.ci_level)
    assert m.fragility == expected
    assert (m.fragility is None) == (not m.significant)


def test_mcnemar_counts_by_hand():
    # 12 discordant pairs for head, none against: binom.test(k, k) is 2·0.5^k, below 0.05 from k = 6 on
    base, head = np.zeros(40), np.r_[np.ones(12), np.zeros(28)]
    m = compared(base, head, "t")
    assert (m.test, m.fragility) == ("mcnemar-exact", 7)  # 12 - 7 = 5 left: p = 0.0625
    # with pairs against head, only the winning ones are removed: (b, c) = (2, 14), then (2, 10) is still
    # significant (R: binom.test(10, 12)$p.value = 0.039) and (2, 9) is not (binom.test(9, 11): 0.065)
    base, head = np.r_[np.ones(2), np.zeros(14), np.zeros(24)], np.r_[np.zeros(2), np.ones(14), np.zeros(24)]
    assert stats.binomtest(10, 12).pvalue < 0.05 <= stats.binomtest(9, 11).pvalue
    assert compared(base, head, "t").fragility == 5


def test_not_significant_has_no_fragility_and_the_level_is_the_holm_step():
    rng = np.random.default_rng(3)
    n = 200
    base = rng.normal(0, 1, n)
    a, b = base + rng.normal(0.35, 1, n), base + rng.normal(0.0, 1, n)
    c = compare_scores(pd.concat([rows(base, "a"), rows(base, "b")]), pd.concat([rows(a, "a"), rows(b, "b")]),
                       directions={"a": True, "b": True})
    assert c.metrics["b"].fragility is None and not c.metrics["b"].significant
    first = c.metrics["a"]
    assert 1 - first.ci_level == pytest.approx(0.025)  # the smaller p of two: alpha / 2
    assert first.fragility == brute_force(a - base, "t", 0.025) != brute_force(a - base, "t", 0.05)
    frame = c.to_frame()
    assert frame["fragility"].dtype == "Int64" and frame["fragility"].tolist()[1] is pd.NA


def test_a_fragile_verdict_says_so_in_the_headline():
    inputs = [str(i) for i in range(10)]

    def run(scores, i):
        return EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": scores}),
                                  run_id=f"20260101T00000{i}000Z-0000000{i}", directions={"exact_match": True})

    c = compare_runs(run([0] * 10, 1), run([1] * 6 + [0] * 4, 2))  # binom.test(6, 6): 0.031; (5, 5): 0.0625
    m = c.metrics["exact_match"]
    assert (m.verdict, m.fragility) == ("better", 1)
    assert c.headline() == ("head is better: better on exact_match (α = 0.05, 10 matched cases); fragile: exact_match "
                            "is not significant without its 1 most supporting case of 10")
    strong = compare_runs(run([0] * 10, 1), run([1] * 10, 2))
    assert strong.metrics["exact_match"].fragility == 5 and "fragile" not in strong.headline()  # 5 > 3, > 2 % of 10


def test_the_vectorised_scan_is_the_test_itself_at_every_removal():
    """Long inputs: the p-values of every r at once (sorted prefix sums, rank bookkeeping) against the test run on
    the cases left, r by r."""
    rng = np.random.default_rng(11)
    n = 3000
    base = np.round(rng.normal(0, 1, n) * 8) / 8
    head = base + np.round(rng.normal(0.09, 1, n) * 8) / 8
    for test in ("t", "wilcoxon"):
        m = compared(base, head, test)
        assert m.fragility == brute_force(head - base, test, 1 - m.ci_level), test


@pytest.mark.slow
def test_fragility_equals_brute_force_over_many_comparisons():
    rng = np.random.default_rng(20260127)
    for _ in range(150):
        n = int(rng.integers(12, 160))
        test = rng.choice(["mcnemar", "t", "wilcoxon"])
        if test == "mcnemar":
            base = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(float)
            head = np.where(rng.random(n) < rng.uniform(0, 0.5), 1 - base, base)
        else:
            base = np.round(rng.normal(0, 1, n) * 4) / 4
            head = base + np.round(rng.normal(rng.normal(0, 0.6), rng.uniform(0.2, 2), n) * 4) / 4
        m = compared(base, head, "t" if test == "mcnemar" else str(test))
        assert m.fragility == brute_force(head - base, m.test, 1 - m.ci_level), (n, test)


def test_fragility_function_refuses_nothing_it_cannot_test():
    assert fragility(np.zeros(1), np.ones(1), "none", 1.0, 0.05) is None
    assert fragility(np.zeros(5), np.ones(5), "t", 1.0, math.nan) is None
