"""Verdicts you can trust: the noise floor, roles, margins, verdicts, agreeing intervals, power and warnings.

Every reference number is computed independently: scipy / statsmodels called here, R values quoted with
the R call, or worked by hand in a comment.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import ttost_paired

from cogeval import EvalRun, compare_runs
from cogeval.compare.engine import compare_scores
from cogeval.errors import InputError

COLUMNS = ["run_id", "case_key", "occurrence", "trial", "metric", "score", "error", "case_error"]
Z = NormalDist().inv_cdf


def table(*rows, run_id="r"):
    """Rows of (case_key, occurrence, trial, metric, score, case_error)."""
    return pd.DataFrame([(run_id, k, o, t, m, s, "boom" if e else None, e) for k, o, t, m, s, e in rows],
                        columns=COLUMNS)


def wide(**metrics):
    """One row per case c0, c1, ... and metric (one trial, no failures)."""
    return table(*[(f"c{i}", 0, 0, m, float(s), False) for m, scores in metrics.items() for i, s in enumerate(scores)])


def run(frame, **config):
    """An EvalRun from a wide frame (input + one column per metric), with config fields set."""
    r = EvalRun.from_frame(frame)
    return r.model_copy(update={"config": r.config.model_copy(update=config)}) if config else r


# -- 1. the noise floor ----------------------------------------------------------------------------------------


def test_float_noise_is_no_change_for_every_test():
    base = [0.3] * 8
    head = [0.1 + 0.2] * 7 + [0.3]  # 0.30000000000000004: equal up to rounding
    for test in ("t", "wilcoxon"):
        c = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, test=test)
        m = c.metrics["q"]
        assert (m.p_value, m.difference, m.winner, m.verdict) == (1.0, 0.0, "tie", "inconclusive")
        assert (m.n_improved, m.n_regressed, len(c.changes)) == (0, 0, 0)
        assert tuple(m.ci) == (0.0, 0.0) and math.isnan(m.effect_size)


def test_trial_order_does_not_decide():
    # Each case scored 0.1, 0.2, 0.7 over three trials; head lists the same trials in another order.
    scores, shuffled = [0.1, 0.2, 0.7], [0.7, 0.1, 0.2]
    base = table(*[(f"c{i}", 0, t, "q", s, False) for i in range(12) for t, s in enumerate(scores)])
    head = table(*[(f"c{i}", 0, t, "q", s, False) for i in range(12) for t, s in enumerate(shuffled)])
    m = compare_scores(base, head, directions={"q": True}).metrics["q"]
    assert m.head == m.base and (m.p_value, m.winner, m.n_improved, m.n_regressed) == (1.0, "tie", 0, 0)
    assert m.base == 1 / 3  # the correctly rounded mean of 0.1, 0.2, 0.7


def test_wilcoxon_on_trial_means_matches_r():
    # Two trials per case. R 4.2 on the float case means (sapply(bt, mean), sapply(ht, mean)) gives V = 23.5,
    # p-value = 0.1275083305: in floats 0.3 - 0.35 and 0.45 - 0.4 differ in the last bit, so R ranks true ties
    # apart. The exact differences, in hundredths, are c(10, -5, 20, 0, 20, -5, 5, 15):
    #   wilcox.test(c(10, -5, 20, 0, 20, -5, 5, 15))  ->  V = 24 (a zero and ties: normal approximation), p =
    #   2 * pnorm(-(24 - 14 - 0.5) / sqrt(35 - 30 / 48)) = 0.1051623859 (scipy.stats.wilcoxon(..., method="approx"))
    b_trials = [(0.1, 0.2), (0.3, 0.4), (0.5, 0.5), (0.6, 0.7), (0.2, 0.3), (0.4, 0.5), (0.5, 0.6), (0.1, 0.3)]
    h_trials = [(0.2, 0.3), (0.2, 0.4), (0.7, 0.7), (0.7, 0.6), (0.4, 0.5), (0.3, 0.5), (0.6, 0.6), (0.3, 0.4)]

    def rows(trials):
        return table(*[(f"c{i}", 0, t, "q", s, False) for i, pair in enumerate(trials) for t, s in enumerate(pair)])

    m = compare_scores(rows(b_trials), rows(h_trials), directions={"q": True}, test="wilcoxon").metrics["q"]
    assert m.p_value == pytest.approx(0.1051623859, abs=1e-10)
    assert m.statistic == 24


def test_wilcoxon_ties_of_trial_means_survive_averaging():
    # 3 trials of a 0/1 metric; (hits of base, hits of head) per case. The trial means 1/3 and 1 - 2/3 differ in
    # the last bit (0/3 -> 1/3 is 0.33333333333333337, 1/3 -> 2/3 is 0.3333333333333333), so without the noise
    # floor's rounding Wilcoxon saw no ties and took the exact test: p = 0.1206. The exact differences in thirds
    # are c(1, 1, 2, -1, 1, 1, 1): six tie at |d| = 1, rank 3.5 each, and 2 has rank 7, so V = 5 * 3.5 + 7 = 24.5;
    #   R: wilcox.test(c(1, 1, 2, -1, 1, 1, 1))  (ties: normal approximation, continuity corrected)
    #   p = 2 * pnorm(-(24.5 - 14 - 0.5) / sqrt(35 - (6^3 - 6) / 48)) = 0.0707598148
    hits = [(0, 1), (0, 1), (0, 2), (1, 0), (1, 2), (1, 2), (2, 3)]

    def run(side, run_id):
        rows = [{"input": f"q{i}", "trial": t, "correct": float(t < pair[side])}
                for i, pair in enumerate(hits) for t in range(3)]
        return EvalRun.from_frame(pd.DataFrame(rows), run_id=run_id)

    base, head = run(0, "20260101T000000000Z-0000000a"), run(1, "20260101T000000001Z-0000000b")
    m = compare_runs(base, head, test="wilcoxon").metrics["correct"]
    thirds = [h - b for b, h in hits]
    reference = stats.wilcoxon(thirds, zero_method="wilcox", correction=True, method="approx").pvalue
    assert reference == pytest.approx(0.0707598148, abs=1e-10)
    assert (m.test, m.statistic, m.n) == ("wilcoxon", 24.5, 7)
    assert m.p_value == pytest.approx(reference, rel=1e-12)
    # The float means' differences hold 4 values for the 3 exact ones (the noise the floor removes).
    means = [run.scores.groupby("case_key").score.mean().to_numpy() for run in (base, head)]
    assert len(np.unique(means[1] - means[0])) == 4


# -- 2. roles: deciding and informing metrics --------------------------------------------------------------------


def frame_with_latency(quality, latency, n=40):
    return pd.DataFrame({"input": [f"q{i}" for i in range(n)], "exact_match": quality, "latency": latency})


def test_statistical_metrics_inform_and_form_their_own_holm_family():
    rng = np.random.default_rng(5)
    quality_base = (rng.random(40) < 0.5).astype(float)
    quality_head = np.where(rng.random(40) < 0.8, 1.0, quality_base)
    latency_base = rng.normal(1.0, 0.05, 40)
    latency_head = latency_base + 0.2 + rng.normal(0, 0.05, 40)  # head much slower
    base = EvalRun.from_frame(frame_with_latency(quality_base, latency_base))
    head = EvalRun.from_frame(frame_with_latency(quality_head, latency_head))
    base = base.model_copy(update={"config": base.config.model_copy(update={
        "statistical_metrics": [m.model_copy(update={"higher_is_better": False}) for m in base.config.metrics
                                if m.name == "latency"],
        "metrics": [m for m in base.config.metrics if m.name != "latency"]})})
    head = head.model_copy(update={"config": base.config})
    c = compare_runs(base, head)
    em, lat = c.metrics["exact_match"], c.metrics["latency"]
    assert (em.role, lat.role) == ("decides", "informs")
    # each family has one test, so Holm leaves each p-value as it is
    assert (em.adjusted_p_value, lat.adjusted_p_value) == (em.p_value, lat.p_value)
    assert lat.p_value == pytest.approx(stats.ttest_rel(latency_head, latency_base).pvalue, rel=1e-10)
    assert (em.verdict, lat.verdict, c.verdict, c.winner) == ("better", "worse", "better", "head")
    assert c.regressions == [] and c.decide_on == ["exact_match"]
    # decide_on makes latency decide: now the runs are mixed and latency is a regression
    c = compare_runs(base, head, decide_on=["exact_match", "latency"])
    assert (c.verdict, c.regressions, c.metrics["latency"].role) == ("mixed", ["latency"], "decides")
    assert c.metrics["latency"].adjusted_p_value == pytest.approx(min(1, 2 * lat.p_value), rel=1e-12)
    assert list(c.to_frame()["role"]) == ["decides", "decides"]


# -- 3. margins and verdicts -----------------------------------------------------------------------------------


def continuous(shift, sd=0.05, n=60, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.3, 0.7, n)
    return base, base + shift + rng.normal(0, sd, n)


def test_better_needs_the_interval_beyond_the_margin():
    base, head = continuous(0.03)
    plain = compare_scores(wide(q=base), wide(q=head), directions={"q": True}).metrics["q"]
    low, high = plain.ci
    assert plain.verdict == "better" and 0 < low < 0.03 < high  # significant, interval straddles 0.03
    within = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, margins={"q": low / 2}).metrics["q"]
    assert within.verdict == "better" and within.margin == low / 2
    across = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, margins={"q": 0.03}).metrics["q"]
    assert (across.significant, across.winner, across.verdict) == (True, "head", "inconclusive")


def test_equivalent_is_tost_on_continuous_metrics():
    base, head = continuous(0.002, sd=0.01)
    c = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, margins={"q": 0.01})
    # statsmodels, independently: the TOST p-value is below alpha
    p, _, _ = ttost_paired(head, base, -0.01, 0.01)
    assert p < 0.05 and c.metrics["q"].verdict == "equivalent" and c.verdict == "equivalent"
    tight = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, margins={"q": 0.003})
    p_tight, _, _ = ttost_paired(head, base, -0.003, 0.003)
    assert p_tight >= 0.05 and tight.metrics["q"].verdict in ("inconclusive", "better")


def test_without_a_margin_nothing_is_equivalent():
    base, head = continuous(0.0, sd=0.001)
    m = compare_scores(wide(q=base), wide(q=head), directions={"q": True}).metrics["q"]
    assert (m.margin, m.verdict) == (0.0, "inconclusive")


def test_binary_equivalence_uses_newcombes_interval():
    # 400 pairs, 3 discordant each way: Tango's 90% score interval is ±0.012
    base = [1] * 200 + [0] * 194 + [1] * 3 + [0] * 3
    head = [1] * 200 + [0] * 194 + [0] * 3 + [1] * 3
    assert compare_scores(wide(em=base), wide(em=head), directions={"em": True},
                          margins={"em": 0.05}).metrics["em"].verdict == "equivalent"
    # Five cases that all agree do not show equivalence: the discordance itself is uncertain.
    few = compare_scores(wide(em=[1, 0, 1, 1, 0]), wide(em=[1, 0, 1, 1, 0]), directions={"em": True},
                         margins={"em": 0.05})
    assert few.metrics["em"].verdict == "inconclusive"


def test_run_verdict_words():
    up = np.linspace(0.2, 0.8, 40)
    better, worse = up + 0.1 + 0.001 * np.arange(40), up - 0.1 - 0.001 * np.arange(40)
    d = dict.fromkeys("abc", True)
    assert compare_scores(wide(a=up, b=up, c=up), wide(a=better, b=up, c=up), directions=d).verdict == "better"
    assert compare_scores(wide(a=up, b=up, c=up), wide(a=worse, b=up, c=up), directions=d).verdict == "worse"
    assert compare_scores(wide(a=up, b=up, c=up), wide(a=better, b=worse, c=up), directions=d).verdict == "mixed"
    assert compare_scores(wide(a=up, b=up, c=up), wide(a=up, b=up, c=up), directions=d).verdict == "inconclusive"


def test_three_improvements_out_of_three_are_inconclusive_and_say_how_many_cases_would_settle_it():
    c = compare_scores(wide(em=[0, 0, 0]), wide(em=[1, 1, 1]), directions={"em": True})
    m = c.metrics["em"]
    # binom.test(3, 3)$p.value = 0.25: McNemar cannot go lower with 3 discordant pairs
    assert (m.p_value, m.verdict, c.verdict) == (0.25, "inconclusive", "inconclusive")
    # Connor's formula with p_d = 1 and effect 1 (the observed difference): n = (1.96 + 0.8416 * 0)^2 = 3.84 -> 4
    assert m.n_needed == 4
    assert any(w.startswith("Fewer than 30 paired cases for em (3)") for w in c.warnings)
    assert any(w.startswith("Fewer than 10 discordant pairs") and "em (3)" in w for w in c.warnings)


# -- 4. the interval agrees with the verdict ---------------------------------------------------------------------


def test_intervals_are_t_intervals_at_each_holm_step():
    rng = np.random.default_rng(11)
    base = {m: rng.normal(0.5, 0.1, 15) for m in ("m1", "m2", "m3")}
    head = {m: base[m] + rng.normal(shift, 0.05, 15) for m, shift in zip(base, (0.08, 0.035, 0.01))}
    c = compare_scores(wide(**base), wide(**head), directions=dict.fromkeys(base, True))
    p = {m: stats.ttest_rel(head[m], base[m]).pvalue for m in base}
    order = sorted(base, key=p.get)
    # Holm: step j of 3 is tested at 0.05 / (3 - j + 1) until the first step not rejected, whose level the rest keep
    levels, stopped = {}, None
    for j, m in enumerate(order):
        level = 0.05 / (3 - j)
        if stopped is None and p[m] >= level:
            stopped = level
        levels[m] = stopped or level
    for m in base:
        reference = stats.ttest_rel(head[m], base[m]).confidence_interval(1 - levels[m])
        assert tuple(c.metrics[m].ci) == pytest.approx((reference.low, reference.high), rel=1e-9)
        assert c.metrics[m].ci_level == pytest.approx(1 - levels[m])


scores = st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=40)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    n=st.integers(2, 60),
    shifts=st.lists(st.floats(-0.6, 0.6), min_size=1, max_size=6),
    kind=st.sampled_from(["binary", "continuous", "discrete"]),
    test=st.sampled_from(["t", "wilcoxon"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_interval_excludes_zero_exactly_when_significant(n, shifts, kind, test, seed):
    rng = np.random.default_rng(seed)
    base, head = {}, {}
    for i, shift in enumerate(shifts):
        if kind == "binary":
            b = (rng.random(n) < 0.5).astype(float)
            h = np.where(rng.random(n) < abs(shift), float(shift > 0), b)
        elif kind == "continuous":
            b = rng.normal(0, 1, n)
            h = b + shift + rng.normal(0, 0.5, n)
        else:
            b = rng.integers(0, 5, n) / 4
            h = np.clip(b + np.round(rng.normal(shift, 0.3, n) * 4) / 4, 0, 1)
        base[f"m{i}"], head[f"m{i}"] = b, h
    c = compare_scores(wide(**base), wide(**head), directions=dict.fromkeys(base, True), test=test)
    for m in c.metrics.values():
        low, high = m.ci
        if math.isnan(m.p_value):
            assert math.isnan(low) and not m.significant
            continue
        assert (low > 0 or high < 0) == m.significant, (m.metric, m.ci, m.p_value, m.adjusted_p_value)
        assert (m.verdict in ("better", "worse")) == m.significant  # no margin: better/worse is significance


# -- 5. power and planning -------------------------------------------------------------------------------------


def test_mde_and_n_needed_of_a_continuous_metric():
    base, head = continuous(0.01, sd=0.05, n=50, seed=3)
    m = compare_scores(wide(q=base), wide(q=head), directions={"q": True}, margins={"q": 0.02}).metrics["q"]
    sd = np.std(head - base, ddof=1)
    # Miller (2024): MDE = (z_{1-a/2} + z_{0.8}) sd / sqrt(n), here at the metric's level (a family of one: alpha)
    assert m.mde == pytest.approx((Z(0.975) + Z(0.8)) * sd / math.sqrt(50), rel=1e-12)
    # statsmodels, independently: cases for the margin 0.02 at power 0.8
    assert m.n_needed == math.ceil(TTestPower().solve_power(effect_size=0.02 / sd, alpha=0.05, power=0.8))


def test_n_needed_of_a_binary_metric_is_connors():
    base = [1, 0] * 20 + [1] * 4 + [0] * 6
    head = [1, 0] * 20 + [0] * 4 + [1] * 6
    m = compare_scores(wide(em=base), wide(em=head), directions={"em": True}).metrics["em"]
    # 50 pairs, 10 discordant: p_d = 0.2, observed difference 0.04. Connor (1987):
    # n = [1.959964·√0.2 + 0.841621·√(0.2 − 0.0016)]² / 0.0016 = (0.876523 + 0.374876)² / 0.0016 = 978.7… → 979
    p_d, delta = 0.2, 0.04
    assert m.n_needed == math.ceil((Z(0.975) * math.sqrt(p_d) + Z(0.8) * math.sqrt(p_d - delta**2)) ** 2 / delta**2)
    assert m.n_needed == 979


# -- 6. warnings that name what happened -------------------------------------------------------------------------


def test_scoring_failures_are_counted_per_side():
    rows = []
    for i in range(10):
        rows.append((f"c{i}", 0, 0, "judge", math.nan if i < 4 else 0.5, False))
    base = table(*[(f"c{i}", 0, 0, "judge", 0.4, False) for i in range(10)])
    c = compare_scores(base, table(*rows), directions={"judge": True})
    assert c.metrics["judge"].n == 6
    assert ("Metric 'judge': n = 6 of 10 matched cases, because scoring failed on 0 case(s) in the base run "
            "and 4 in the head run") in c.warnings


def test_more_than_one_thing_changed():
    frame = pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1.0] * 30})
    base = run(frame, target={"type": "chat", "model": "model-a", "system": "Be brief.", "temperature": 0.0}, trials=1)
    head = run(frame, target={"type": "chat", "model": "model-b", "system": "Be kind.", "temperature": 0.7}, trials=2)
    [warning] = [w for w in compare_runs(base, head).warnings if w.startswith("More than one thing changed")]
    assert warning.startswith("More than one thing changed between the runs: model 'model-a' → 'model-b'; "
                              "system prompt sha256:")
    assert "temperature 0.0 → 0.7; trials 1 → 2." in warning
    only_model = run(frame, target={"type": "chat", "model": "model-b", "system": "Be brief.", "temperature": 0.0})
    assert not [w for w in compare_runs(base, only_model).warnings if w.startswith("More than one thing")]


def test_a_judge_that_is_its_own_target_is_named():
    frame = pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1.0] * 30})
    base = run(frame, target={"type": "chat", "model": "gpt-x"}, judge={"model": "GPT-X"})
    head = run(frame, target={"type": "chat", "model": "gpt-y"}, judge={"model": "GPT-X"})
    notes = [w for w in compare_runs(base, head).warnings if "self-preference" in w]
    assert notes == ["In the base run, the judge is model 'GPT-X', the same model as the base run's target: a model "
                     "judging answers it wrote tends to prefer them (self-preference bias), so it favours the base "
                     "run's target; use a judge from another model family"]


def test_comparison_rows_stack_with_statistics_results():
    from cogeval.stats import paired_t_test

    base, head = continuous(0.03, n=20)
    row = compare_scores(wide(q=base), wide(q=head), directions={"q": True}).to_frame()
    alone = paired_t_test(head, base).to_frame()
    stacked = pd.concat([row, alone], ignore_index=True)[["test", "n", "statistic", "p_value"]]
    # scipy, independently: the paired t statistic and p-value of head against base
    reference = stats.ttest_rel(head, base)
    assert stacked["test"].tolist() == ["t", "t"] and stacked["n"].tolist() == [20, 20]
    assert stacked["statistic"].tolist() == pytest.approx([reference.statistic] * 2, rel=1e-10)
    assert stacked["p_value"].tolist() == pytest.approx([reference.pvalue] * 2, rel=1e-10)


def test_the_same_trials_give_the_same_mean_whatever_the_other_cases_hold():
    # A case with identical trials in both runs; the other case differs, at a scale where one ulp is above 1e-9.
    trials = [132653840.06369562, 15505313.346581561, 36117726.339356616, 467396028.7689042, 406487465.94426733]
    base = table(*[("c0", 0, t, "q", s, False) for t, s in enumerate(trials)],
                 *[("c1", 0, t, "q", s, False) for t, s in enumerate(trials)])
    head = table(*[("c0", 0, t, "q", s, False) for t, s in enumerate(reversed(trials))],
                 *[("c1", 0, t, "q", s * 1e-3, False) for t, s in enumerate(trials)])
    c = compare_scores(base, head, directions={"q": True})
    assert c.changes["case_key"].tolist() == ["c1"] and c.metrics["q"].n_regressed == 1


def test_margins_need_alpha_below_one_half():
    with pytest.raises(InputError, match=r"margins need alpha below 0.5: .*; got alpha=0.5"):
        compare_scores(wide(m=[1, 0, 1]), wide(m=[1, 1, 1]), directions={"m": True}, margins={"m": 0.05}, alpha=0.5)


def test_a_scorer_failing_on_one_trial_of_a_case_is_named():
    # c0's second head trial has no score (the scorer failed, the target answered): c0 is the mean of its first trial
    base = table(*[(f"c{i}", 0, t, "judge", 0.5, False) for i in range(3) for t in range(2)])
    head = table(*[(f"c{i}", 0, t, "judge", math.nan if (i, t) == (0, 1) else 0.7, False)
                   for i in range(3) for t in range(2)])
    c = compare_scores(base, head, directions={"judge": True})
    assert c.metrics["judge"].n == 3 and c.metrics["judge"].head == pytest.approx(0.7)
    assert ("Metric 'judge': scoring failed on 0 trial(s) in the base run and 1 in the head run of cases still "
            "compared; those cases are means over their other trials") in c.warnings
