"""compare_sequential(method="group"): the looks on the demo, the tables, errors, and simulations of the rule.

The simulations run the rule itself (``_group_looks``, what compare_sequential drives) on simulated scores,
and a few replications through compare_sequential with cheap function targets check that the two agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cogeval import Case, exact_match, metric
from cogeval.compare import compare_sequential
from cogeval.compare.sequential import DECISION_COLUMNS, LOOK_COLUMNS, SEQUENCE_COLUMNS, _group_looks, _Planned
from cogeval.errors import InputError
from cogeval.examples import assistant_v1, assistant_v2, questions
from cogeval.present.sequential_plot import plot_sequential
from cogeval.stats import group_sequential_design, plan_sample_size

DESIGN = group_sequential_design(10, alpha=0.05, sided=2, spending=("kim-demets", 2), futility="pocock")
"""compare_sequential's default design for one metric."""


@pytest.fixture(scope="module")
def better():
    return compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], method="group", effect=0.1,
                              margin=0.1)


def _scores(result):
    return [np.array([r.scores["exact_match"].value for r in side.results]) for side in (result.base, result.head)]


def test_the_demo_stops_for_efficacy_at_a_planned_look(better):
    assert (better.verdict, better.method, better.stopped_at) == ("better", "group", 90)
    assert better.design.looks == 10 and better.design.sided == 2 and better.design.alpha == 0.05
    assert better.design.inflation_factor == pytest.approx(DESIGN.inflation_factor)
    frame = better.to_frame()
    assert list(frame.columns) == DECISION_COLUMNS
    assert (frame.verdict[0], frame.decided_at[0], frame.n[0], frame.alpha[0]) == ("better", 90.0, 90, 0.05)
    assert list(better.looks.columns) == LOOK_COLUMNS and list(better.sequence.columns) == SEQUENCE_COLUMNS


def test_each_look_is_mcnemars_z_against_the_designs_bounds_on_the_planned_schedule(better):
    b, h = _scores(better)
    looks = better.looks
    assert looks.look.tolist() == [1, 2] and looks.n.tolist() == [45, 90]
    for row in looks.itertuples():
        up, down = int(np.sum(h[: row.n] > b[: row.n])), int(np.sum(h[: row.n] < b[: row.n]))
        assert row.statistic == pytest.approx((up - down) / math.sqrt(up + down))
    assert looks.statistic.iloc[0] < looks.efficacy.iloc[0] and looks.statistic.iloc[1] >= looks.efficacy.iloc[1]
    # the schedule: first the pilot of 20 cases (batch_size); then the maximum is planned, ceil(inflation × the
    # fixed-n plan with the discordance seen so far), and look 1 set for t_1 = 0.1 of it; after each look the
    # maximum is re-planned and the next look set for its share of it: looks at 45 and 90 cases. Each look's
    # bounds are the design's at the fractions reached: the cases at each look over the maximum planned then.
    def maximum(done):
        discordance = max(np.count_nonzero(h[:done] != b[:done]) / done, 0.1)
        return math.ceil(plan_sample_size(0.1, discordance=discordance) * DESIGN.inflation_factor)

    done, taken = 20, []
    for look in range(2):
        done = math.floor(DESIGN.information[look] * maximum(done) + 0.5)
        taken.append(done)
        efficacy, futility = DESIGN.bounds_at([n / maximum(done) for n in taken])
        assert looks.efficacy.iloc[look] == efficacy and np.isnan(futility) and np.isnan(looks.futility.iloc[look])
    assert taken == [45, 90]
    # planned_cases: the fixed-n plan for the effect with the discordance of the cases run
    assert better.planned_cases == plan_sample_size(0.1, discordance=np.count_nonzero(h != b) / 90) == 364
    assert better.calls_saved == 2 * (300 - 90)


def test_the_sequence_holds_the_repeated_confidence_intervals(better):
    b, h = _scores(better)
    seq = better.sequence
    for row, look in zip(seq.itertuples(), better.looks.itertuples()):
        d = h[: row.n] - b[: row.n]
        half = look.efficacy * math.sqrt(np.count_nonzero(d)) / row.n  # excludes 0 exactly when |z| >= efficacy
        assert (row.estimate, row.ci_low, row.ci_high) == pytest.approx((d.mean(), d.mean() - half, d.mean() + half))
    assert seq.ci_low.iloc[0] < 0 < seq.ci_low.iloc[1]


@metric("quality")
def quality(output, case):
    return float(output)


def _graded_case(i, shift, rng):
    base = float(rng.integers(0, 11)) / 10
    head = round(min(max(base + shift + rng.normal(0, 0.25), 0.0), 1.0), 1)
    return Case(f"q{i}", metadata={"base": base, "head": head})


def _side(key):
    return lambda question, case: str(case.metadata[key])


def test_a_graded_metric_uses_the_paired_t_mapped_to_z_and_needs_no_bounds():
    rng = np.random.default_rng(3)
    data = [_graded_case(i, 0.3, rng) for i in range(200)]  # head far better: decided at an early look
    r = compare_sequential(data, _side("base"), _side("head"), [quality], method="group", effect=0.1, batch_size=10)
    assert r.verdict == "better" and r.stopped_at < 60
    b, h = (np.array([x.scores["quality"].value for x in side.results]) for side in (r.base, r.head))
    for row in r.looks.itertuples():  # independent: scipy's paired t-test, its one-sided p-value back to z
        p = stats.ttest_rel(h[: row.n], b[: row.n], alternative="greater").pvalue
        assert row.statistic == pytest.approx(stats.norm.isf(p), rel=1e-9)
    stars = metric("stars")(lambda output, case: 5 * float(output))  # on another scale: still no bounds needed
    r = compare_sequential(data, _side("base"), _side("head"), [stars], method="group", effect=0.5, batch_size=10)
    assert r.verdict == "better"


def test_identical_targets_stop_for_futility_and_are_equivalent_when_the_margin_is_shown():
    # no discordant pair: the plan takes the discordance as the effect (the least that can hold it), so the
    # maximum is small and the third planned look (the first with a futility bound) comes after 30 cases
    runs = {margin: compare_sequential(questions(), assistant_v1, assistant_v1, [exact_match()], method="group",
                                       effect=0.1, margin=margin) for margin in (None, 0.1, 0.15)}
    assert {r.stopped_at for r in runs.values()} == {30}
    row = runs[None].looks.iloc[-1]
    assert row.statistic == 0.0 and row.futility > 0  # stopped inside the futility region
    # equivalent when the house's equivalence test (Tango's interval for 0/1 scores) shows the margin at half the
    # level, alpha / 2: its 95% interval for 0 discordant pairs of 30 reaches past 0.1, not past 0.15
    from cogeval.stats import paired_proportion_interval

    low, high = paired_proportion_interval(np.ones(30), np.ones(30), confidence=0.95)
    assert -0.15 < low < -0.1 and 0.1 < high < 0.15
    assert [r.verdict for r in runs.values()] == ["inconclusive", "inconclusive", "equivalent"]
    assert all(r.to_frame().decided_at[0] == 30 for r in runs.values())


def test_cases_running_out_leave_the_metric_undecided():
    r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], method="group", effect=0.1,
                           max_cases=40)
    assert (r.verdict, r.stopped_at) == ("inconclusive", 40)
    assert math.isnan(r.to_frame().decided_at[0]) and r.calls_saved == 0


def test_display_and_plot(better):
    html = better._repr_html_()
    assert "group design" in html and "kim-demets(2)" in html and "pocock" in html
    fig = plot_sequential(better)
    assert [t.name for t in fig.data] == ["exact_match: futility", "exact_match: +efficacy", "exact_match: -efficacy",
                                          "exact_match: z"]
    assert list(fig.data[3].x) == [45, 90] and list(fig.data[1].y) == better.looks.efficacy.tolist()
    assert fig.layout.title.text.startswith("Group-sequential comparison: better, stopped at 90 cases")
    assert better.plot().layout.title.text == fig.layout.title.text


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "group"}, "method='group' plans for a difference, and metric 'exact_match' has none: give effect=... "
                          r"\(> 0\) for every metric"),
    ({"method": "group", "effect": -0.1}, r"effect\['exact_match'\] must be a finite number > 0 in the metric's units "
                                          r"\(the difference to detect\); got -0.1"),
    ({"method": "group", "effect": {"quality": 0.1}}, "effect names 'quality', which is not one of the metrics"),
    ({"effect": 0.1}, "effect is the planned difference of method='group'; method='auto' takes none, got effect=0.1"),
    ({"method": "group", "effect": 0.1, "looks": 0}, "looks must be an integer >= 1; got 0"),
    ({"method": "group", "effect": 0.1, "spending": "wald"}, "spending must be 'obrien-fleming', 'pocock' or"),
    ({"method": "group", "effect": 0.1, "futility": 2}, "futility must be None, 'obrien-fleming'"),
    ({"method": "wald"}, r"method must be one of 'auto', 'betting', 'planned', 'eb'; got 'wald' \(or 'group': a "
                         r"group-sequential design, planned with effect=...\)"),
])
def test_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], **kwargs)


def _pass_fail(rng, effect, n):
    return np.stack([rng.random(n) < 0.7, rng.random(n) < 0.7 + effect]).astype(float)


def _graded(rng, effect, n):
    base = rng.integers(0, 11, n) / 10
    return np.stack([base, np.round(np.clip(base + effect + rng.normal(0, 0.25, n), 0, 1), 1)])


def _rule(scores, effect, margin=0.0, pilot=20):
    """Drive compare_sequential's rule on simulated scores of one metric: (cases run, verdict)."""
    rule = _group_looks(DESIGN, [_Planned("m", True, effect, margin)], scores.shape[1], pilot, 0.05)
    target = next(rule)
    while True:
        try:
            target = rule.send({"m": scores[:, :target]})
        except StopIteration as stopped:
            return target, stopped.value[0].get("m", ("inconclusive", math.nan))[0]


def _through_compare(scores, seed, effect):
    """compare_sequential(method="group") of two function targets that score ``scores`` (2 × n: base, head) on
    metric ``m`` case by case, against the rule on the same scores in the seeded order: (cases run, verdict)."""
    data = [Case(f"q{i}", metadata={"base": float(b), "head": float(h)}) for i, (b, h) in enumerate(scores.T)]
    m = metric("m")(lambda output, case: float(output))
    r = compare_sequential(data, _side("base"), _side("head"), [m], method="group", effect=effect, seed=seed)
    order = np.random.default_rng(seed).permutation(scores.shape[1])
    assert (r.stopped_at, r.to_frame().verdict[0]) == _rule(scores[:, order], effect)
    return r.stopped_at, r.to_frame().verdict[0]


def test_compare_sequential_runs_exactly_the_rule():
    # the same scores through the whole pipeline (targets, runs, pairing) and through the rule alone
    rng = np.random.default_rng(8)
    for shift in (0.0, 0.1):
        _through_compare(_pass_fail(rng, shift, 600), 4, 0.1)


@pytest.mark.slow
def test_replications_through_compare_sequential_follow_the_rule():
    # 10 replications of each kind and shift through compare_sequential with cheap function targets: each equals
    # the rule on its scores, so the rule's simulations below describe compare_sequential. Measured (seed 9):
    # pass/fail mean cases / n_fixed 0.79 at δ (9 of 10 better) and 0.70 under the null (none better or worse);
    # graded 0.66 (7 of 10 better) and 0.67 (none).
    rng = np.random.default_rng(9)
    for kind, draw, effect in (("pass/fail", _pass_fail, 0.1), ("graded", _graded, GRADED_EFFECT)):
        for shift in (0.1, 0.0):
            fixed = _plan_for(kind, effect, shift)
            runs = [_through_compare(draw(rng, shift, 3 * fixed), seed, effect) for seed in range(10)]
            assert all(verdict in ("better", "inconclusive") for _, verdict in runs)
            assert np.mean([n for n, _ in runs]) / fixed < (0.85 if shift else 0.8)


GRADED_EFFECT = float(np.diff(_graded(np.random.default_rng(1), 0.1, 1_000_000), axis=0).mean())
"""δ for graded scores: the true mean difference at shift 0.1 (clipping makes it less), measured on 10^6 draws."""


def _plan_for(kind, effect, shift):
    """The fixed-n plan for ``effect`` with the true spread when the true difference is ``shift`` (10^6 draws)."""
    d = np.diff((_pass_fail if kind == "pass/fail" else _graded)(np.random.default_rng(1), shift, 1_000_000), axis=0)
    if kind == "pass/fail":
        return plan_sample_size(effect, discordance=float(np.mean(d != 0)))
    return plan_sample_size(effect, sd=float(d.std()))


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "reps"), [("pass/fail", 2000), ("graded", 400)])
def test_simulated_type_one_error_power_and_cases(kind, reps):
    # The rule of compare_sequential(method="group", effect=δ) with its defaults (10 looks, Kim-DeMets(2) alpha
    # spending, Pocock beta spending, alpha 0.05, a pilot of 20 cases), on simulated scores (as
    # benchmarks/bench_group_sequential.py): pass/fail base 0.7, head 0.7 + shift; graded base uniform on 0, 0.1,
    # ..., 1, head = base + shift + N(0, 0.25) clipped and rounded to 0.1 (δ = its true mean difference at shift
    # 0.1). n_fixed is the fixed-n plan for δ with the true spread (plan_sample_size, power 0.8). Measured (seed 0):
    # pass/fail type-I 0.042, power 0.779, E[N]/n_fixed 0.759 at δ and 0.684 under the null; graded (400 reps)
    # type-I 0.035, power 0.780, 0.781 and 0.671. With 20,000 pass/fail replications (seed 7): type-I 0.039, power
    # 0.794, 0.760 and 0.685. With a margin equal to δ, called equivalent: pass/fail 2.3% at δ (wrongly), 15.5% under
    # the null; graded 1.2% and 17.5%. Re-planning the maximum from the spread seen costs about one point of power (0.804
    # with the true discordance), hence the 0.02 allowed below 0.8 on top of 3 Monte-Carlo standard errors; the
    # other bounds allow 3 standard errors.
    draw, effect = (_pass_fail, 0.1) if kind == "pass/fail" else (_graded, GRADED_EFFECT)
    rng = np.random.default_rng(0)
    for shift in (0.1, 0.0):
        fixed = _plan_for(kind, effect, shift)
        runs = [_rule(draw(rng, shift, 4 * fixed), effect, margin=effect) for _ in range(reps)]
        cases = np.array([n for n, _ in runs]) / fixed
        verdicts = np.array([v for _, v in runs])
        slack = 3 * cases.std() / math.sqrt(reps)
        if shift:
            power = np.mean(verdicts == "better")
            assert abs(power - 0.8) < 0.02 + 3 * math.sqrt(0.16 / reps)
            assert cases.mean() <= 0.85 + slack
            # the margin is the true difference: "equivalent" is wrong, at most alpha = 0.05 of the time
            assert np.mean(verdicts == "equivalent") <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
        else:
            assert np.isin(verdicts, ["better", "worse"]).mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
            assert cases.mean() <= 0.70 + slack
