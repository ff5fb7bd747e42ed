"""compare_scores against hand-worked numbers and independent references (scipy, statsmodels, plain numpy)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from cogeval import _columns as col
from cogeval._text import short_input
from cogeval.compare.engine import CHANGES_COLUMNS, compare_scores
from cogeval.compare.result import RunComparison, RunInfo
from cogeval.errors import InputError

FAILED = ("The {side} run's target failed on {count} of the {matched} matched cases ({share}): they score 0 on "
          "higher-is-better metrics and are left out of lower-is-better ones, so the verdict counts those failures; "
          "see .errored for the cases")

COLUMNS = ["run_id", "case_key", "occurrence", "trial", "metric", "score", "error", "case_error"]


def quality_warnings(comparison):
    """The warnings, without the sample-size ones (tests/compare/test_verdicts.py checks those)."""
    return [w for w in comparison.warnings if not w.startswith("Fewer than")]


def table(*rows, run_id="r"):
    """Rows of (case_key, occurrence, trial, metric, score, case_error)."""
    return pd.DataFrame(
        [(run_id, k, o, t, m, s, "boom" if e else None, e) for k, o, t, m, s, e in rows], columns=COLUMNS
    )


def wide(run_id="r", **metrics):
    """One row per case c0, c1, ... and metric, from lists of scores (one trial, no failures)."""
    return table(*[(f"c{i}", 0, 0, m, float(s), False) for m, scores in metrics.items() for i, s in enumerate(scores)],
                 run_id=run_id)


# Hand-worked: exact_match on 10 cases.
#   base  1 1 0 0 1 0 1 0 1 1
#   head  1 0 1 1 1 1 1 1 0 1
#   b (base right, head wrong) = cases 1, 8 -> 2;  c (base wrong, head right) = cases 2, 3, 5, 7 -> 4
#   b + c = 6 < 25 -> exact: p = 2 * P(X <= 2 | Binom(6, 1/2)) = 2 * (1 + 6 + 15) / 64 = 0.6875
EM_BASE = [1, 1, 0, 0, 1, 0, 1, 0, 1, 1]
EM_HEAD = [1, 0, 1, 1, 1, 1, 1, 1, 0, 1]

QUALITY_BASE = [0.61, 0.72, 0.55, 0.80, 0.47, 0.66, 0.59, 0.73, 0.52, 0.69]
QUALITY_HEAD = [0.70, 0.74, 0.68, 0.83, 0.59, 0.71, 0.58, 0.84, 0.60, 0.75]


def test_binary_metric_uses_mcnemar_hand_worked():
    c = compare_scores(wide(exact_match=EM_BASE), wide(exact_match=EM_HEAD), directions={"exact_match": True}, seed=1)
    m = c.metrics["exact_match"]
    assert m.test == "mcnemar-exact"
    assert m.p_value == pytest.approx(44 / 64, abs=1e-12)
    # statsmodels: mcnemar([[a, b], [c, d]], exact=True) on the 2x2 table (both right 4, both wrong 0)
    assert m.p_value == pytest.approx(mcnemar([[4, 2], [4, 0]], exact=True).pvalue, abs=1e-12)
    assert (m.n, m.base, m.head, m.difference) == (10, 0.6, 0.8, pytest.approx(0.2))
    assert (m.n_improved, m.n_regressed) == (4, 2)
    assert m.adjusted_p_value == m.p_value  # a family of one
    assert (m.significant, m.winner, c.winner) == (False, "tie", "tie")


def test_binary_metric_uses_chi_square_from_25_discordant_pairs():
    base = [1] * 5 + [0] * 25 + [1] * 10
    head = [0] * 5 + [1] * 25 + [1] * 10
    m = compare_scores(wide(em=base), wide(em=head), directions={"em": True}, seed=1).metrics["em"]
    assert m.test == "mcnemar"
    # statsmodels: exact=False, correction=True -> chi2 = (|5 - 25| - 1)^2 / 30
    assert m.p_value == pytest.approx(mcnemar([[10, 5], [25, 0]], exact=False, correction=True).pvalue, rel=1e-12)
    assert (m.significant, m.winner) == (True, "head")


def test_continuous_metric_t_test_matches_scipy():
    c = compare_scores(wide(q=QUALITY_BASE), wide(q=QUALITY_HEAD), directions={"q": True}, seed=3)
    m = c.metrics["q"]
    ref = stats.ttest_rel(QUALITY_HEAD, QUALITY_BASE)
    d = np.subtract(QUALITY_HEAD, QUALITY_BASE)
    assert m.test == "t"
    assert m.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert m.difference == pytest.approx(d.mean())
    assert m.base == pytest.approx(np.mean(QUALITY_BASE)) and m.head == pytest.approx(np.mean(QUALITY_HEAD))
    assert m.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert (m.significant, m.winner, c.winner) == (True, "head", "head")
    assert (m.n_improved, m.n_regressed) == (9, 1)


def test_wilcoxon_matches_scipy():
    m = compare_scores(wide(q=QUALITY_BASE), wide(q=QUALITY_HEAD), directions={"q": True}, test="Wilcoxon",
                       seed=3).metrics["q"]
    assert m.test == "wilcoxon"
    # no ties, no zeros, n = 10: exact, as scipy's default
    assert m.p_value == pytest.approx(stats.wilcoxon(QUALITY_HEAD, QUALITY_BASE).pvalue, rel=1e-10)


def test_interval_of_one_metric_is_the_t_interval_at_one_minus_alpha():
    c = compare_scores(wide(q=QUALITY_BASE), wide(q=QUALITY_HEAD), directions={"q": True}, alpha=0.1)
    # scipy, independently: the paired t-test's own 90% interval (R: t.test(head, base, paired = TRUE, conf.level = 0.9))
    reference = stats.ttest_rel(QUALITY_HEAD, QUALITY_BASE).confidence_interval(0.9)
    assert tuple(c.metrics["q"].ci) == pytest.approx((reference.low, reference.high), rel=1e-10)
    assert c.metrics["q"].ci_level == pytest.approx(0.9)


def test_holm_across_metrics_matches_statsmodels():
    rng = np.random.default_rng(0)
    base = {m: rng.normal(0.5, 0.1, 12) for m in ("m1", "m2", "m3")}
    head = {m: base[m] + rng.normal(shift, 0.05, 12) for m, shift in zip(base, (0.05, 0.02, -0.01))}
    c = compare_scores(wide(**base), wide(**head), directions=dict.fromkeys(base, True), seed=0)
    raw = [stats.ttest_rel(head[m], base[m]).pvalue for m in base]
    reject, adjusted, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [c.metrics[m].p_value for m in base] == pytest.approx(raw, rel=1e-10)
    assert [c.metrics[m].adjusted_p_value for m in base] == pytest.approx(list(adjusted), rel=1e-10)
    assert [c.metrics[m].significant for m in base] == list(reject)


def test_lower_is_better_head_lower_wins():
    base = [1.2, 1.5, 1.1, 1.9, 1.4, 1.3, 1.6, 1.8]
    head = [b - 0.3 + 0.01 * i for i, b in enumerate(base)]
    c = compare_scores(wide(latency=base), wide(latency=head), directions={"latency": False}, seed=0)
    m = c.metrics["latency"]
    # differences -0.30, -0.29, ..., -0.23: mean -0.265; scipy's paired t-test gives the p-value
    assert m.difference == pytest.approx(-0.265, abs=1e-12)
    assert m.p_value == pytest.approx(stats.ttest_rel(head, base).pvalue, rel=1e-10) and m.p_value < 0.05
    assert m.significant
    assert (m.winner, c.winner, m.n_improved, m.n_regressed) == ("head", "head", 8, 0)
    assert set(c.changes["direction"]) == {"improved"}
    assert c.regressions == []


def test_overall_winner_is_the_side_more_metrics_name():
    up = [0.1 * i for i in range(10)]
    base = dict(a=up, b=up, c=up, d=up)
    better = [x + 0.2 + 0.01 * i for i, x in enumerate(up)]
    worse = [x - 0.2 - 0.01 * i for i, x in enumerate(up)]
    directions = dict.fromkeys(base, True)
    c = compare_scores(wide(**base), wide(a=better, b=worse, c=worse, d=up), directions=directions, seed=0)
    assert [m.winner for m in c.metrics.values()] == ["head", "base", "base", "tie"]
    assert c.winner == "base" and c.regressions == ["b", "c"]
    c = compare_scores(wide(**base), wide(a=better, b=worse, c=up, d=up), directions=directions, seed=0)
    assert c.winner == "tie"


def test_identical_runs_tie_everywhere_with_no_changes():
    run = wide(em=EM_BASE, q=QUALITY_BASE)
    c = compare_scores(run, run, directions={"em": True, "q": True}, seed=0)
    em, q = c.metrics["em"], c.metrics["q"]
    assert (em.test, em.p_value, em.adjusted_p_value) == ("mcnemar-exact", 1.0, 1.0)
    assert (q.test, q.p_value, q.difference, tuple(q.ci)) == ("t", 1.0, 0.0, (0.0, 0.0))
    assert math.isnan(q.effect_size)
    assert [m.winner for m in c.metrics.values()] == ["tie", "tie"] and c.winner == "tie"
    assert c.changes.empty and list(c.changes.columns) == CHANGES_COLUMNS
    assert (c.matched, c.n_added, c.n_removed, quality_warnings(c)) == (10, 0, 0, [])


def test_added_removed_and_repeated_cases():
    base = table(("a", 0, 0, "acc", 1.0, False), ("a", 1, 0, "acc", 0.0, False), ("b", 0, 0, "acc", 1.0, False),
                 ("x", 0, 0, "acc", 1.0, False), ("x", 1, 0, "acc", 1.0, False))
    head = table(("a", 0, 0, "acc", 1.0, False), ("a", 1, 0, "acc", 1.0, False), ("b", 0, 0, "acc", 1.0, False),
                 ("a", 2, 0, "acc", 1.0, False), ("y", 0, 0, "acc", 0.0, False), ("y", 1, 0, "acc", 0.0, False))
    c = compare_scores(base, head, directions={"acc": True}, seed=0, inputs={"a": "A?"})
    assert (c.matched, c.n_added, c.n_removed) == (3, 3, 2)
    # issue 14: added / removed are tables of the units only one run has (key, occurrence, input), in that run's order
    assert c.added.values.tolist() == [["a", 2, "A?"], ["y", 0, None], ["y", 1, None]]
    assert c.removed.values.tolist() == [["x", 0, None], ["x", 1, None]]
    assert list(c.added.columns) == ["case_key", "occurrence", "input"]
    assert c.changes[["case_key", "occurrence", "input", "delta"]].values.tolist() == [["a", 1, "A?", 1.0]]


def test_trials_are_averaged_before_pairing():
    base = table(*[(k, 0, t, "acc", s, False) for k, ss in (("a", (1, 0, 0)), ("b", (1, 1, 1))) for t, s in enumerate(ss)])
    head = table(("a", 0, 0, "acc", 1.0, False), ("b", 0, 0, "acc", 1.0, False))
    m = compare_scores(base, head, directions={"acc": True}, seed=0).metrics["acc"]
    assert m.n == 2  # units, not trials
    assert m.base == pytest.approx((1 / 3 + 1) / 2)
    assert m.test == "t"  # 1/3 is not binary


def test_failures_and_nan_cells():
    rows_b = [("ok", 0, 0, "acc", 1.0, False), ("ok2", 0, 0, "acc", 0.0, False),
              ("head_failed", 0, 0, "acc", 1.0, False), ("base_failed", 0, 0, "acc", math.nan, True),
              ("both_failed", 0, 0, "acc", math.nan, True), ("nan_cell", 0, 0, "acc", math.nan, False)]
    rows_h = [("ok", 0, 0, "acc", 1.0, False), ("ok2", 0, 0, "acc", 1.0, False),
              ("head_failed", 0, 0, "acc", math.nan, True), ("base_failed", 0, 0, "acc", 1.0, False),
              ("both_failed", 0, 0, "acc", math.nan, True), ("nan_cell", 0, 0, "acc", 1.0, False)]
    c = compare_scores(table(*rows_b), table(*rows_h), directions={"acc": True}, seed=0)
    m = c.metrics["acc"]
    # pairs: ok (1, 1), ok2 (0, 1), head_failed (1, 0), base_failed (0, 1); both_failed and nan_cell left out
    assert (m.n, m.base, m.head) == (4, 0.5, 0.75)
    # the failed cases moved because the target failed: errors, counted as neither improved nor regressed
    assert m.test == "mcnemar-exact" and (m.n_improved, m.n_regressed) == (1, 0)
    assert c.matched == 6
    assert c.changes[["case_key", "direction", "errored"]].values.tolist() == [
        ["ok2", "improved", None], ["head_failed", "error", "head"], ["base_failed", "error", "base"]]
    assert m.improved["case_key"].tolist() == ["ok2"] and m.regressed.empty
    assert c.errored[["case_key", "errored"]].values.tolist() == [
        ["head_failed", "head"], ["base_failed", "base"], ["both_failed", "both"]]
    assert (c.n_errored_base, c.n_errored_head) == (2, 2)


def test_all_failed_metric_is_left_out_with_a_warning():
    base = table(("a", 0, 0, "acc", 1.0, False), ("a", 0, 0, "judge", math.nan, False),
                 ("b", 0, 0, "acc", 0.0, False), ("b", 0, 0, "judge", math.nan, False))
    c = compare_scores(base, base, directions={"acc": True, "judge": True}, seed=0, warnings=["run-level note"])
    assert list(c.metrics) == ["acc"]
    assert quality_warnings(c) == ["run-level note",
                                "Metric 'judge' has no matched case scored in both runs; it was not compared"]


def test_requested_metric_with_no_pairs_is_kept_as_a_tie():
    base = table(("a", 0, 0, "judge", math.nan, False))
    c = compare_scores(base, base, directions={"judge": True}, metrics=["judge"], seed=0)
    m = c.metrics["judge"]
    assert (m.n, m.test, m.p_value, m.adjusted_p_value, m.winner) == (0, "none", 1.0, 1.0, "tie")
    assert math.isnan(m.base) and math.isnan(m.difference) and math.isnan(m.ci.low)
    assert quality_warnings(c) == ["Metric 'judge' has no matched case scored in both runs"]


def test_lower_is_better_one_sided_failure_is_left_out_with_a_warning():
    base = table(("a", 0, 0, "latency", 1.0, False), ("b", 0, 0, "latency", 2.0, False),
                 ("c", 0, 0, "latency", 3.0, False))
    head = table(("a", 0, 0, "latency", 0.5, False), ("b", 0, 0, "latency", 0.01, True),
                 ("c", 0, 0, "latency", 2.0, False))
    c = compare_scores(base, head, directions={"latency": False}, seed=0)
    assert c.metrics["latency"].n == 2
    assert quality_warnings(c) == [FAILED.format(side="head", count=1, matched=3, share="33.3%"),
                                   "Metric 'latency': 1 case(s) the target failed on in only one run were left out "
                                "(lower is better, so a failure cannot count as 0)"]


def test_metric_only_in_one_run_is_warned_about():
    base = wide(acc=[1, 0], bleu=[0.2, 0.3])
    head = wide(rouge=[0.1, 0.2], acc=[1, 1])
    c = compare_scores(base, head, directions={"acc": True}, seed=0)
    assert list(c.metrics) == ["acc"]
    assert quality_warnings(c) == ["Metric 'bleu' is only in the base run; it was not compared",
                                "Metric 'rouge' is only in the head run; it was not compared"]


def test_requested_missing_metric_names_each_runs_metrics():
    base = wide(exact_match=[1, 0], latency=[1, 2])
    head = wide(exact_match=[1, 0], bleu=[0.1, 0.2])
    with pytest.raises(InputError) as info:
        compare_scores(base, head, directions={"bleu": True}, metrics=["bleu"])
    assert str(info.value) == "metric 'bleu' is not in the base run (its metrics: exact_match, latency)"
    with pytest.raises(InputError) as info:
        compare_scores(base, head, directions={}, metrics=["rouge"])
    assert str(info.value) == ("metric 'rouge' is not in the base run (its metrics: exact_match, latency) "
                               "nor in the head run (its metrics: exact_match, bleu)")


def test_requested_metrics_set_the_order():
    run = wide(a=[1, 0], b=[0.2, 0.3])
    c = compare_scores(run, run, directions={"a": True, "b": True}, metrics=["b", "a"], seed=0)
    assert list(c.metrics) == ["b", "a"] and list(c.to_frame()["metric"]) == ["b", "a"]


def test_constant_nonzero_difference_goes_to_the_exact_sign_test_which_four_cases_cannot_settle():
    base = [0.1, 0.4, 0.2, 0.5]
    c = compare_scores(wide(q=base), wide(q=[x + 0.25 for x in base]), directions={"q": True}, seed=0)
    m = c.metrics["q"]
    assert (m.test, m.p_value) == ("sign", stats.binomtest(4, 4).pvalue)  # R: binom.test(4, 4)$p.value = 0.125
    assert (m.significant, m.winner, m.verdict, m.fragility) == (False, "tie", "inconclusive", None)
    assert tuple(m.ci) == (-math.inf, math.inf)  # every shift but +0.25 is rejected at p = 0.125 only
    assert quality_warnings(c) == ["Metric 'q': every paired difference is +0.25, so the t-test has no spread to use; "
                                   "the exact sign test decides (all 4 cases moved the same way: p = 2^(1 − 4) = 0.12)"]


def test_a_constant_slowdown_is_decided_by_the_sign_test_with_its_fragility():
    rng = np.random.default_rng(3)
    base = rng.uniform(1.0, 2.0, 40).round(3)
    c = compare_scores(wide(latency=base), wide(latency=base + 0.17), directions={"latency": False}, seed=0)
    m = c.metrics["latency"]
    assert (m.test, m.p_value) == ("sign", stats.binomtest(40, 40).pvalue)  # 2^-39
    assert (m.verdict, m.winner, tuple(m.ci), m.statistic) == ("worse", "base", (0.17, 0.17), 40.0)
    # fragility: the sign test of m equal differences stays below 0.05 while 2^(1 - m) < 0.05, i.e. m >= 6
    assert m.fragility == 40 - 5 and stats.binomtest(5, 5).pvalue >= 0.05 > stats.binomtest(6, 6).pvalue


def test_wilcoxon_also_uses_the_sign_test_and_margins_still_apply():
    base = np.linspace(0.1, 0.9, 20)
    c = compare_scores(wide(q=base), wide(q=base + 0.01), directions={"q": True}, test="wilcoxon", seed=0,
                       margins={"q": 0.05})
    m = c.metrics["q"]
    # +0.01 everywhere: shown within the margin 0.05 (both one-sided sign tests give 2^-20 < 0.05)
    assert (m.test, m.verdict, m.significant) == ("sign", "equivalent", True)


def test_clustered_equal_cluster_means_use_the_cluster_sign_test():
    d = np.array([0.1, 0.3, 0.2, 0.2, 0.0, 0.4] * 4)  # every cluster of 2 has mean difference 0.2
    base = np.linspace(0.0, 0.5, len(d))
    clusters = {f"c{i}": i // 2 for i in range(len(d))}
    c = compare_scores(wide(q=base), wide(q=base + d), directions={"q": True}, seed=0, cluster=clusters)
    m = c.metrics["q"]
    assert (m.test, m.clusters) == ("clustered-sign", 12)
    assert m.p_value == stats.binomtest(12, 12).pvalue  # the exact cluster sign flip: 2^(1 - 12)
    assert (m.verdict, tuple(m.ci)) == ("better", (0.2, 0.2))


def test_fewer_than_two_pairs_is_a_tie_outside_the_holm_family():
    base = table(("a", 0, 0, "one", 0.2, False), *[(f"c{i}", 0, 0, "q", s, False) for i, s in enumerate(QUALITY_BASE)])
    head = table(("a", 0, 0, "one", 0.9, False), *[(f"c{i}", 0, 0, "q", s, False) for i, s in enumerate(QUALITY_HEAD)])
    c = compare_scores(base, head, directions={"one": True, "q": True}, seed=0)
    one, q = c.metrics["one"], c.metrics["q"]
    assert (one.n, one.test, one.p_value, one.adjusted_p_value, one.winner) == (1, "none", 1.0, 1.0, "tie")
    # the one difference, widened to reach 0: not significant, so the interval must not exclude 0
    assert tuple(one.ci) == pytest.approx((0.0, 0.7)) and math.isnan(one.effect_size)
    assert q.adjusted_p_value == q.p_value  # "one" does not count as a test


def test_changes_sorted_by_size_then_metric_then_case_with_full_inputs():
    base = wide(m1=[0.0, 0.0, 0.0, 0.5], m2=[0.0, 0.0, 0.0, 0.0])
    head = wide(m1=[0.1, 0.3, 0.0, 0.2], m2=[0.3, -0.5, 0.0, 0.0])
    inputs = {"c0": "first\n  line   and\tmore", "c1": "x" * 200, "c3": {"q": "é"}}
    c = compare_scores(base, head, directions={"m1": True, "m2": False}, seed=0, inputs=inputs)
    ch = c.changes
    assert list(ch.columns) == [*col.CHANGES_COLUMNS, "occurrence", "errored"]
    assert ch[["case_key", "metric", "delta", "direction"]].values.tolist() == [
        ["c1", "m2", -0.5, "improved"],   # |0.5| first; lower is better, so -0.5 is an improvement
        ["c1", "m1", 0.3, "improved"],    # |0.3|: m1 before m2, then case order
        ["c3", "m1", -0.3, "regressed"],
        ["c0", "m2", 0.3, "regressed"],
        ["c0", "m1", 0.1, "improved"],
    ]
    # the whole input, so changes merge back on it; displays shorten it
    assert ch["input"].tolist() == ["x" * 200, "x" * 200, '{"q": "é"}', "first\n  line   and\tmore",
                                    "first\n  line   and\tmore"]
    assert ch[["base", "head"]].values.tolist()[2] == [0.5, 0.2]


def test_short_input():
    assert short_input(None) is None
    assert short_input(["a", 1]) == '["a", 1]'
    assert len(short_input("y" * 81)) == 80


def test_to_frame_and_run_info():
    info = RunInfo("r1", "baseline", "2024-01-01T00:00:00Z")
    c = compare_scores(wide(q=QUALITY_BASE, run_id="r1"), wide(q=QUALITY_HEAD, run_id="r2"), directions={"q": True},
                       seed=0, base_info=info)
    assert isinstance(c, RunComparison) and c.seed == 0 and c.alpha == 0.05
    assert c.base == info and c.head == RunInfo("r2", None, None)
    frame = c.to_frame()
    assert list(frame.columns[:13]) == list(col.COMPARISON_COLUMNS)
    assert frame.loc[0, "winner"] == "head"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "z"}, "test must be one of 't', 'wilcoxon'; got 'z'"),
        ({"alpha": 1.0}, "alpha must be a number in (0, 1); got 1.0"),
        ({"seed": -1}, "seed must be None, an integer >= 0, a string or a numpy Generator; got -1"),
        ({"decide_on": ["nope"]}, "decide_on names 'nope', which is not compared; the compared metrics are: q"),
        ({"margins": {"q": -1}}, "margins['q'] must be a finite number >= 0 in the metric's units; got -1"),
        ({"metrics": "q"}, "metrics must be None or a list of metric names; got 'q'"),
        ({"directions": {}}, "directions has no entry for metric 'q'; give higher_is_better for each compared "
                             "metric (directions has: none)"),
        ({"directions": {"q": "up"}}, "directions['q'] must be True or False (higher_is_better); got 'up'"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, message):
    arguments = {"directions": {"q": True}, **kwargs}
    with pytest.raises(InputError) as info:
        compare_scores(wide(q=[1, 2]), wide(q=[1, 2]), **arguments)
    assert str(info.value) == message


def test_seed_follows_the_one_rule_and_a_generator_is_recorded_as_none():
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    arguments = {"directions": {"q": True}}
    assert compare_scores(wide(q=[1, 2]), wide(q=[1, 3]), seed=np.int64(7), **arguments).seed == 7
    assert compare_scores(wide(q=[1, 2]), wide(q=[1, 3]), seed=None, **arguments).seed is None
    assert compare_scores(wide(q=[1, 2]), wide(q=[1, 3]), seed=rng, **arguments).seed is None
    assert rng.bit_generator.state == state  # the comparison draws nothing from it


def test_no_matched_cases():
    c = compare_scores(wide(q=[0.1, 0.2]), table(("z", 0, 0, "q", 1.0, False)), directions={"q": True}, seed=0)
    assert (c.matched, c.n_added, c.n_removed, dict(c.metrics), c.winner) == (0, 1, 2, {}, "tie")
    assert c.changes.empty


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_swapping_runs_mirrors_the_comparison(test):
    base, head = wide(em=EM_BASE, q=QUALITY_BASE), wide(em=EM_HEAD, q=QUALITY_HEAD)
    forward = compare_scores(base, head, directions={"em": True, "q": True}, test=test, seed=0)
    back = compare_scores(head, base, directions={"em": True, "q": True}, test=test, seed=0)
    mirror = {"head": "base", "base": "head", "tie": "tie"}
    for name, m in forward.metrics.items():
        r = back.metrics[name]
        assert (r.p_value, r.adjusted_p_value, r.test) == (pytest.approx(m.p_value), pytest.approx(m.adjusted_p_value), m.test)
        assert (r.difference, r.effect_size) == (pytest.approx(-m.difference), pytest.approx(-m.effect_size))
        assert (r.winner, r.n_improved, r.n_regressed) == (mirror[m.winner], m.n_regressed, m.n_improved)
    assert back.winner == mirror[forward.winner]


def test_changes_equal_up_to_float_noise_keep_case_order():
    # 0.8 - 1.2, 0.7 - 1.1 and 0.9 - 1.3 differ in the last bits; all are -0.4
    c = compare_scores(wide(latency=[1.2, 1.1, 1.3]), wide(latency=[0.8, 0.7, 0.9]), directions={"latency": False},
                       seed=0)
    assert c.changes["case_key"].tolist() == ["c0", "c1", "c2"]


def test_a_cost_no_case_reported_gives_one_warning_not_two():
    # c0 failed in head only; no case has a cost on either side, so cost has no pair at all
    base = table(("c0", 0, 0, "cost", math.nan, False), ("c1", 0, 0, "cost", math.nan, False))
    head = table(("c0", 0, 0, "cost", math.nan, True), ("c1", 0, 0, "cost", math.nan, False))
    c = compare_scores(base, head, directions={"cost": False})
    assert c.metrics == {}
    assert quality_warnings(c) == [FAILED.format(side="head", count=1, matched=2, share="50%"),
                                   "Metric 'cost' has no matched case scored in both runs; it was not compared",
                                   "No compared metric decides the verdict (the compared ones only inform; name the "
                                   "deciding ones with decide_on), so it is inconclusive"]


def test_improved_and_regressed_are_the_metrics_rows_of_changes():
    # issue 14: MetricComparison.improved / .regressed are DataFrame slices of changes (largest move first),
    # the counts are n_improved / n_regressed (also the comparison table's columns); reprs print no table.
    base = table(*[(k, 0, 0, m, s, False) for k, s in zip("abcd", (0.1, 0.5, 0.9, 0.4)) for m in ("q", "r")])
    head = table(*[(k, 0, 0, m, s, False) for k, s in zip("abcd", (0.6, 0.2, 1.0, 0.4)) for m in ("q", "r")])
    c = compare_scores(base, head, directions={"q": True, "r": False}, seed=0)
    q, r = c.metrics["q"], c.metrics["r"]
    assert q.improved[["case_key", "delta"]].values.tolist() == [["a", 0.5], ["c", pytest.approx(0.1)]]
    assert q.regressed[["case_key", "delta"]].values.tolist() == [["b", pytest.approx(-0.3)]]
    assert r.improved["case_key"].tolist() == ["b"] and r.regressed["case_key"].tolist() == ["a", "c"]  # lower is better
    assert (q.n_improved, q.n_regressed, r.n_improved, r.n_regressed) == (2, 1, 1, 2)
    assert c.to_frame()[["metric", "n_improved", "n_regressed"]].values.tolist() == [["q", 2, 1], ["r", 1, 2]]
    assert "improved" not in c.to_frame().columns and "_changes" not in list(q.keys()) and "_changes" not in q.to_dict()
    # equality and hash ignore the changes a metric reads from; a standalone metric has no changed cases
    alone = dataclasses.replace(q, _changes=None)
    assert alone == q and hash(alone) == hash(q) and alone.improved.empty
    assert "DataFrame" not in repr(q) and "case_key" not in repr(q) and "case_key" not in repr(c)
    assert repr(c).endswith("matched=4, n_added=0, n_removed=0, changes=6 rows)")
