"""One rule for a run's metric with its interval: the leaderboard, RunStore.history and plot_history agree."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, Leaderboard, RunStore
from cogeval.compare.summary import (
    HISTORY_COLUMNS,
    MetricSummary,
    history_frame,
    metric_summary,
    summarise,
    unit_scores,
)
from cogeval.errors import InputError
from cogeval.stats import Interval, bootstrap_ci, wilson_interval

CASES = 20


def trials_run(first, second, *, name="nightly", day=1, errors=None, directions=None, metric="exact_match"):
    """A hand-built run of CASES cases × 2 trials: ``first[i]`` and ``second[i]`` are case i's two scores."""
    rows = []
    for i in range(CASES):
        for trial, value in enumerate((first[i], second[i])):
            failed = errors is not None and (i, trial) in errors
            rows.append({"input": f"q{i}", "trial": trial, metric: value, "error": "boom" if failed else None})
    return EvalRun.from_frame(pd.DataFrame(rows), name=name, started_at=f"2026-01-0{day}T08:00:00Z",
                              run_id=f"2026010{day}T080000000Z-0000000{day}", directions=directions)


def leaderboard_row(run, metric="exact_match"):
    return Leaderboard({"only": run}).leaderboard(metric).iloc[0]


def plotted(store, metric="exact_match"):
    from cogeval.present.plots import plot_history

    (trace,) = plot_history(store, metric).data
    y = trace.y[0]
    return trace.customdata[0][1], (y - trace.error_y.arrayminus[0], y + trace.error_y.array[0])


# -- the case: 20 cases × 2 trials ------------------------------------------------------------


def test_right_once_wrong_once_gives_n_20_and_one_interval_everywhere(tmp_path):
    # Every case right in one trial, wrong in the other: 20 case values of 0.5. The old chart counted
    # 40 "independent" trials (n = 40, Wilson [0.35, 0.65]); the rule counts cases: n = 20, and
    # the bootstrap of 20 equal values is (0.5, 0.5).
    run = trials_run([1] * CASES, [0] * CASES)
    store = RunStore(tmp_path)
    store.save(run)
    row = leaderboard_row(run)
    (history,) = store.history("exact_match").itertuples()
    assert (row.n, history.n) == (20, 20) and plotted(store)[0] == 20
    assert (row.ci_low, row.ci_high) == (history.ci_low, history.ci_high) == (0.5, 0.5)
    assert plotted(store)[1] == pytest.approx((0.5, 0.5))
    assert history.interval == "bootstrap" and history.score == row.score == 0.5
    assert wilson_interval(20, 40) != (0.5, 0.5)  # what case × trial counting gave


def test_mixed_case_values_give_the_same_bootstrap_in_leaderboard_history_and_chart(tmp_path):
    # cases 0-9 right twice, 10-14 once, 15-19 never: case values 1 × 10, 0.5 × 5, 0 × 5
    first = [1] * 15 + [0] * 5
    second = [1] * 10 + [0] * 10
    run = trials_run(first, second)
    store = RunStore(tmp_path)
    store.save(run)
    by_hand = bootstrap_ci([1.0] * 10 + [0.5] * 5 + [0.0] * 5, seed=0)  # in case order, as unit_values lists them
    row = leaderboard_row(run)
    (history,) = store.history("exact_match").itertuples()
    n, interval = plotted(store)
    assert (row.n, history.n, n) == (20, 20, 20)
    assert row.score == history.score == 0.625
    assert (row.ci_low, row.ci_high) == (history.ci_low, history.ci_high) == tuple(by_hand)
    assert interval == pytest.approx(tuple(by_hand), abs=1e-12)
    assert metric_summary(run, "exact_match") == MetricSummary("exact_match", 0.625, 20, by_hand, "bootstrap", 0.95)


def test_trials_that_agree_are_binary_and_get_wilson_over_cases(tmp_path):
    values = [1] * 15 + [0] * 5
    run = trials_run(values, values)
    store = RunStore(tmp_path)
    store.save(run)
    row = leaderboard_row(run)
    (history,) = store.history("exact_match").itertuples()
    assert history.interval == "wilson" and (row.n, history.n) == (20, 20)
    # Wilson of 15 successes in 20 cases, not of 30 in 40 trials (R: prop.test(15, 20, correct = FALSE))
    assert (row.ci_low, row.ci_high) == (history.ci_low, history.ci_high) == tuple(wilson_interval(15, 20))
    assert (round(history.ci_low, 4), round(history.ci_high, 4)) == (0.5313, 0.8881)


# -- the rule ------------------------------------------------------------------------------------------


def test_failed_trials_count_as_in_a_comparison():
    ones = [1.0] * CASES
    # case 0 failed in trial 1: on a higher-is-better metric the trial scores 0, so case 0 is worth 0.5
    run = trials_run(ones, ones, errors={(0, 1)})
    assert unit_scores(run, "exact_match").tolist() == [0.5] + [1.0] * 19
    # on a lower-is-better metric the failed trial is left out: case 0 is its other trial's value
    slow = trials_run([2.0] * CASES, [4.0] * CASES, errors={(0, 1)}, directions={"latency_s": False},
                      metric="latency_s")
    assert unit_scores(slow, "latency_s").tolist() == [2.0] + [3.0] * 19
    # a metric the run never scored has no values, failures or not
    assert unit_scores(run, "quality").tolist() == []


def test_no_scores_is_nan_never_0():
    s = summarise("quality", [math.nan, math.nan])
    assert math.isnan(s.score) and s.n == 0 and s.interval is None
    assert all(math.isnan(x) for x in s.ci)
    assert list(s.to_frame().columns) == ["metric", "score", "n", "ci_low", "ci_high", "interval", "confidence", "clusters"]
    assert s.clusters is None  # no clusters given (tests/compare/test_summary_clusters.py gives them)


def test_summarise_checks_its_arguments():
    with pytest.raises(InputError) as caught:
        summarise("q", [1.0], confidence=1.5)
    assert str(caught.value) == "confidence must be a number in (0, 1); got 1.5"
    with pytest.raises(InputError) as caught:
        summarise("q", [1.0], seed=-1)
    assert str(caught.value) == "seed must be None, an integer >= 0, a string or a numpy Generator; got -1"
    with pytest.raises(InputError) as caught:
        summarise("q", [1.0], interval="wald")
    assert str(caught.value) == "interval must be one of 'wilson', 'bootstrap', 'clustered-t'; got 'wald'"
    with pytest.raises(InputError) as caught:
        summarise("q", [1.0, 0.5], interval="wilson")
    assert str(caught.value) == "interval 'wilson' needs values that are 0 or 1; 'q' has 0.5"
    s = summarise("q", [0.2, 0.4, 0.9], seed=np.random.default_rng(3))  # a Generator is a seed too
    assert s.interval == "bootstrap" and s.ci == bootstrap_ci([0.2, 0.4, 0.9], seed=np.random.default_rng(3))


# -- the history table ------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    store = RunStore(tmp_path)
    store.save(trials_run([1] * 20, [1] * 10 + [0] * 10, day=3))  # case values 1 × 10, 0.5 × 10
    store.save(trials_run([1] * 20, [1] * 20, day=1))
    store.save(trials_run([0] * 20, [0] * 20, name="adhoc", day=2))
    store.save(trials_run([0.3] * 20, [0.5] * 20, name="other", day=4, metric="quality"))
    return store


def test_history_is_one_row_per_run_in_time_order_with_one_interval_kind(store):
    table = store.history("exact_match")
    assert list(table.columns) == list(HISTORY_COLUMNS) == [
        "run_id", "name", "started_at", "metric", "higher_is_better", "score", "n", "ci_low", "ci_high", "interval",
        "clusters"]
    assert table["started_at"].str[:10].tolist() == ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]
    assert table["name"].tolist() == ["nightly", "adhoc", "nightly", "other"]
    assert table["score"].tolist()[:3] == [1.0, 0.0, 0.75] and math.isnan(table["score"].iloc[3])
    assert table["n"].tolist() == [20, 20, 20, 0]
    # the run of day 3 is not binary, so every run shown gets the bootstrap: (1, 1) for the all-right run
    assert table["interval"].tolist() == ["bootstrap", "bootstrap", "bootstrap", None]
    assert tuple(table.loc[0, ["ci_low", "ci_high"]]) == (1.0, 1.0)
    assert table["higher_is_better"].tolist() == [True, True, True, None]
    assert table.dtypes[["score", "n", "ci_low", "ci_high"]].tolist() == [float, np.int64, float, float]


def test_history_filters_by_name_and_chooses_the_kind_over_the_runs_shown(store):
    table = store.history("exact_match", "nightly", confidence=0.9, seed=1)
    assert table["n"].tolist() == [20, 20] and table["interval"].tolist() == ["bootstrap", "bootstrap"]
    assert tuple(table.loc[1, ["ci_low", "ci_high"]]) == bootstrap_ci([1.0] * 10 + [0.5] * 10, confidence=0.9, seed=1)
    binary = store.history("exact_match", "adhoc")
    assert binary["interval"].tolist() == ["wilson"]
    assert tuple(binary.loc[0, ["ci_low", "ci_high"]]) == wilson_interval(0, 20)


def test_history_errors_name_what_there_is(store, tmp_path):
    with pytest.raises(InputError) as caught:
        store.history("exact_match", "weekly")
    assert str(caught.value) == f"no run named 'weekly' in {store.path}; the run names there are 'other', 'nightly', 'adhoc'"
    with pytest.raises(InputError) as caught:
        store.history("accuracy")
    assert str(caught.value) == "metric 'accuracy' has no score in the runs; their metrics are 'exact_match', 'quality'"
    with pytest.raises(InputError) as caught:
        store.history(42)
    assert str(caught.value) == "metric must be a metric name (a non-empty string); got 42"
    empty = RunStore(tmp_path / "empty").history("exact_match")
    assert empty.empty and list(empty.columns) == list(HISTORY_COLUMNS)


def test_history_frame_takes_runs_in_the_order_given():
    runs = [trials_run([1] * 20, [1] * 20, day=2), trials_run([0] * 20, [1] * 20, day=1)]
    table = history_frame(runs, "exact_match", seed=0)
    assert table["run_id"].tolist() == [r.run_id for r in runs]
    assert table["score"].tolist() == [1.0, 0.5] and table["interval"].tolist() == ["bootstrap"] * 2
    assert tuple(table.loc[1, ["ci_low", "ci_high"]]) == Interval(0.5, 0.5)
