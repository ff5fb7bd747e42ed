"""compare_sequential: batches on the demo, the runs it keeps, its tables, errors, and the decision rule's type-I error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cogeval import Case, compare_runs, contains, exact_match, load_run, metric
from cogeval.compare import DECISION_COLUMNS, SEQUENCE_COLUMNS, SequentialComparison, compare_sequential
from cogeval.compare.sequential import _verdicts
from cogeval.data import Dataset
from cogeval.errors import InputError
from cogeval.examples import assistant_v1, assistant_v2, questions
from cogeval.present.sequential_plot import plot_sequential
from cogeval.stats import confidence_sequence, split_alpha


@pytest.fixture(scope="module")
def better() -> SequentialComparison:
    return compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1)


def test_stops_at_the_first_batch_end_where_the_metric_is_decided(better):
    assert (better.verdict, better.stopped_at) == ("better", 80)
    frame = better.to_frame()
    assert list(frame.columns) == DECISION_COLUMNS
    row = frame.iloc[0]
    assert (row.metric, row.verdict, row.n, row.alpha, row.margin) == ("exact_match", "better", 80, 0.05, 0.1)
    assert row.ci_low > 0 and 60 < row.decided_at <= 80  # undecided after the batch ending at 60
    seq = better.sequence
    assert list(seq.columns) == SEQUENCE_COLUMNS
    assert not (seq[seq.n == 60].ci_low > 0).any() and (seq[seq.n == 80].ci_low > 0).all()


def test_the_sequence_is_that_of_the_runs_paired_differences(better):
    b, h = (np.array([r.scores["exact_match"].value for r in side.results]) for side in (better.base, better.head))
    assert better.method == "planned"  # the default "auto": every metric has a margin
    cs = confidence_sequence(h - b, alpha=0.05, method="planned", effect=0.1)
    assert better.sequence[SEQUENCE_COLUMNS[1:]].to_numpy().tolist() == cs.to_frame().to_numpy().tolist()
    assert better.to_frame().estimate[0] == pytest.approx(float(np.mean(h - b)))


def test_the_cases_run_are_ordinary_runs_of_the_seeded_order(better, tmp_path):
    order = np.random.default_rng(0).permutation(300)[:80]
    ran = Dataset([list(questions())[i] for i in order])
    for side, name in ((better.base, "base"), (better.head, "head")):
        assert side.run.name == name and side.run.dataset.fingerprint == ran.fingerprint
        assert [r.case.input for r in side.results] == [c.input for c in ran]
        assert side.run.stats.total == 80 and side.aggregated["exact_match"].count == 80
    assert load_run(better.base.save_run(tmp_path / "base.json")).run_id == better.base.run.run_id
    comparison = compare_runs(better.base, better.head, margins={"exact_match": 0.1})
    assert comparison.to_frame().equals(better.comparison.to_frame())
    assert better.planned_cases == better.comparison.metrics["exact_match"].n_needed == 342
    assert better.calls_saved == 2 * (300 - 80)  # a fixed design could run at most the 300 cases there are


def test_each_case_is_asked_once_per_side():
    asked: list[str] = []

    def counting(question):
        asked.append(question)
        return assistant_v2(question)

    r = compare_sequential(questions(), assistant_v1, counting, [exact_match()], batch_size=10)
    assert len(asked) == len(set(asked)) == r.stopped_at


def test_identical_targets_are_equivalent_within_the_margin_with_alpha_split():
    r = compare_sequential(questions(), assistant_v1, assistant_v1, [exact_match(), contains()], margin=0.05,
                           batch_size=10)
    frame = r.to_frame()
    assert r.verdict == "equivalent" and frame.verdict.tolist() == ["equivalent", "equivalent"]
    assert frame.alpha.tolist() == [split_alpha(0.05, 2)] * 2
    assert (frame.ci_low > -0.05).all() and (frame.ci_high < 0.05).all()
    assert r.stopped_at % 10 == 0 and r.stopped_at < 300


def test_max_cases_stops_undecided_metrics_as_inconclusive():
    r = compare_sequential(questions(), assistant_v1, assistant_v1, [exact_match()], max_cases=30, batch_size=20)
    assert (r.verdict, r.stopped_at, r.method) == ("inconclusive", 30, "betting")  # "auto" without a margin
    assert r.to_frame().verdict[0] == "inconclusive" and math.isnan(r.to_frame().decided_at[0])
    assert r.planned_cases is None and r.calls_saved is None  # no margin and no difference: nothing to plan for


def test_a_sequence_that_ran_every_case_saved_nothing_even_when_the_plan_wants_more():
    data = questions()[:40]
    fixed = {case.input for case in list(data)[:3]}

    def head(question):  # v1, but right on three more questions: a small difference these cases cannot settle
        return next(c.expected for c in data if c.input == question) if question in fixed else assistant_v1(question)

    r = compare_sequential(data, assistant_v1, head, [exact_match()], margin=0.01, batch_size=20)
    assert r.stopped_at == 40 and r.verdict == "inconclusive"
    assert r.planned_cases is not None and r.planned_cases > 40  # a fixed design would want more than there are
    assert r.calls_saved == 0


@pytest.mark.parametrize("method", ["betting", "eb", "planned"])
def test_the_method_chosen_makes_the_sequence(method):
    r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1, method=method)
    b, h = (np.array([x.scores["exact_match"].value for x in side.results]) for side in (r.base, r.head))
    cs = confidence_sequence(h - b, method=method, effect=0.1 if method == "planned" else None)
    assert r.method == method
    np.testing.assert_array_equal(r.sequence.ci_low, cs.ci_low)


def test_the_order_depends_on_the_seed():
    def first(seed):
        r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], seed=seed, max_cases=5)
        return [x.case.input for x in r.base.results]

    assert first(3) == first(3) != first(4)


@metric("stars")
def stars(output, case):
    return 7.0 if output == case.expected else 2.0


def test_scores_outside_the_bounds_are_refused_and_bounds_widen_them():
    data = [Case("a", expected="a"), Case("b", expected="b")] * 3
    with pytest.raises(InputError, match=r"metric 'stars' scored 7 on case [0-9a-f]{12}… \('[ab]'\), outside its bounds \[0, 1\]; "
                                         r"give compare_sequential bounds=\{'stars': \(low, high\)\}"):
        compare_sequential(data, str, str.upper, [stars])
    r = compare_sequential(data, str.upper, str, [stars], bounds={"stars": (0, 10)})
    assert r.to_frame().n[0] == 6 and r.sequence.ci_low.min() >= -10


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"metrics": []}, r"metrics must be a non-empty list of per-case metrics; got \[\]"),
    ({"margin": -0.1}, r"margin\['exact_match'\] must be a finite number >= 0 in the metric's units; got -0.1"),
    ({"margin": {"quality": 0.1}}, "margin names 'quality', which is not one of the metrics: exact_match"),
    ({"bounds": {"exact_match": (1, 0)}}, r"bounds\['exact_match'\] must be a \(low, high\) pair, low < high"),
    ({"names": ("v", "v")}, r"names must be two different strings \(base, head\)"),
    ({"batch_size": 0}, "batch_size must be"),
    ({"method": "wald"}, "method must be one of 'auto', 'betting', 'planned', 'eb'; got 'wald'"),
    ({"method": "planned", "margin": {"exact_match": 0.0}},
     "method='planned' bets on the margin, and metric 'exact_match' has none: give margin=... \\(> 0\\) for every "
     "metric, or use method='betting'"),
])
def test_input_errors(kwargs, message):
    arguments = {"metrics": [exact_match()], **kwargs}
    with pytest.raises(InputError, match=message):
        compare_sequential(questions(), assistant_v1, assistant_v2, **arguments)


def test_display_and_plot(better):
    html = better._repr_html_()
    assert "Sequential comparison" in html and "better" in html and "342" in html
    assert repr(better) == "SequentialComparison(verdict='better', stopped_at=80, planned_cases=342, calls_saved=440)"
    fig = plot_sequential(better)
    assert [t.name for t in fig.data] == ["exact_match: sequence", "exact_match: estimate"]
    assert list(fig.data[1].x) == list(range(1, 81))
    assert better.plot().layout.title.text == fig.layout.title.text  # through cogeval._backend


def test_the_decision_rule():
    low, high = np.array([0.1, -0.4, -0.02, -0.3, 0.0]), np.array([0.5, -0.1, 0.03, 0.4, 0.2])
    assert _verdicts(low, high, True, 0.05).tolist() == ["better", "worse", "equivalent", "inconclusive", "inconclusive"]
    assert _verdicts(low, high, False, 0.0).tolist() == ["worse", "better", "inconclusive", "inconclusive", "inconclusive"]


@pytest.mark.slow
@pytest.mark.parametrize(("method", "margins"), [("betting", (0.0, 0.05)), ("planned", (0.05,)), ("planned", (0.2,))])
def test_type_one_error_of_the_decision_rule_checked_after_every_case(method, margins):
    # Two deciding metrics with no true difference, compare_sequential's rule checked after every case
    # (batch_size=1) up to 100 cases: the share of 2,000 replications in which any metric is ever called better
    # or worse must not exceed alpha = 0.05 beyond Monte-Carlo error (3 standard errors: 0.0646).
    # Each sequence is computed once on all 100 differences: its rows never change, so row t is what
    # compare_sequential sees after t cases ("planned" bets on the margin, so it is computed for each margin).
    # Measured (seed 11): betting 0.009 with either margin (binary 0.0075, graded 0.0015); planned 0.0155 with
    # margin 0.05 (binary 0.0105, graded 0.005), 0.0255 with margin 0.2 (binary 0.0135, graded 0.012).
    reps, n, alpha = 2000, 100, 0.05
    rng = np.random.default_rng(11)
    binary = rng.choice([-1.0, 0.0, 1.0], p=[0.25, 0.5, 0.25], size=(reps, n))  # paired Bernoulli(0.5) pass/fail
    graded = np.round(rng.random((reps, n)), 1) - np.round(rng.random((reps, n)), 1)  # two scores in [0, 1]
    level = split_alpha(alpha, 2)
    for margin in margins:
        effect = margin if method == "planned" else None
        bounds = [[confidence_sequence(d, alpha=level, method=method, effect=effect).to_frame()[["ci_low", "ci_high"]]
                   .to_numpy().T for d in metric] for metric in (binary, graded)]
        low, high = np.array(bounds).transpose(2, 0, 1, 3)  # (metric, replication, case)
        wrong = np.isin(_verdicts(low, high, True, margin), ["better", "worse"]).any(axis=(0, 2)).mean()
        assert wrong <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)
