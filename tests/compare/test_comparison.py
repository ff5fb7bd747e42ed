"""EvalComparison: two targets on one dataset, run concurrently, compared with the compare_runs engine."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from cogeval import Case, ComparisonResult, EvalComparison, EvalSuiteResult, compare_runs, exact_match, latency, metric
from cogeval.compare.result import RunComparison
from cogeval.errors import InputError

DATA = [{"input": f"q{i}", "expected": f"a{i}"} for i in range(20)]


def right(question):
    return "a" + question[1:]


def wrong_on_evens(question):
    return "nope" if int(question[1:]) % 2 == 0 else right(question)


def compare(targets, **kw):
    return EvalComparison(DATA, targets=targets, metrics=[exact_match()], progress=False, seed=0, **kw).run()


def test_the_challenger_wins_and_the_summary_says_so():
    result = compare({"baseline": wrong_on_evens, "challenger": right})
    assert isinstance(result, ComparisonResult)
    assert isinstance(result.baseline, EvalSuiteResult) and isinstance(result.challenger, EvalSuiteResult)
    assert isinstance(result.comparison, RunComparison)
    assert (result.baseline.name, result.challenger.name) == ("baseline", "challenger")
    assert result.baseline.aggregated["exact_match"].mean == 0.5 and result.challenger.aggregated["exact_match"].mean == 1.0

    p = mcnemar([[10, 0], [10, 0]], exact=True).pvalue  # b = 0, c = 10: 2 · 0.5^10
    # plain numpy: the percentile bootstrap (seed 0, 10,000 resamples, 95%) of the paired differences,
    # 1 on the even cases the baseline gets wrong and 0 on the odd ones, in case order
    d = np.array([1.0 - i % 2 for i in range(20)])
    means = d[np.random.default_rng(0).integers(0, 20, size=(10_000, 20))].mean(axis=1)
    ci_low, ci_high = np.quantile(means, [0.025, 0.975])
    assert result.summary == {
        "winner": "challenger",
        "metrics": {"exact_match": {
            "baseline": 0.5, "challenger": 1.0, "difference": 0.5,
            "ci_low": pytest.approx(ci_low, abs=1e-12), "ci_high": pytest.approx(ci_high, abs=1e-12),
            "p_value": pytest.approx(p), "adjusted_p_value": pytest.approx(p), "significant": True,
            "winner": "challenger",
        }},
    }
    assert result.comparison.winner == "head" and result.comparison.warnings == []
    assert result.to_frame()["metric"].tolist() == ["exact_match"]
    assert len(result.changes) == 10 and set(result.changes["direction"]) == {"improved"}
    assert "exact_match" in result._repr_html_()


def test_the_baseline_can_win_and_equal_targets_tie():
    assert compare({"baseline": right, "challenger": wrong_on_evens}).summary["winner"] == "baseline"
    tie = compare({"baseline": right, "challenger": right})
    assert tie.summary["winner"] == "tie"
    assert tie.summary["metrics"]["exact_match"]["winner"] == "tie"
    assert tie.summary["metrics"]["exact_match"]["p_value"] == 1.0


def test_the_same_engine_as_compare_runs():
    result = compare({"baseline": wrong_on_evens, "challenger": right})
    again = compare_runs(result.baseline, result.challenger, seed=0)
    assert again.to_frame().equals(result.to_frame())


def test_any_two_names_first_is_the_baseline():
    result = compare({"old": wrong_on_evens, "new": right})
    assert (result.baseline.name, result.challenger.name) == ("old", "new")
    assert result.summary["winner"] == "challenger"


def test_both_targets_run_at_the_same_time():
    # Each call waits until all ten calls (5 cases × 2 targets) are in flight: run one after the
    # other, the first call would wait in vain and fail with BrokenBarrierError after 5 s.
    together = threading.Barrier(10, timeout=5)
    spans = []

    def target(question):
        start = time.perf_counter()
        together.wait()
        time.sleep(0.1)
        spans.append((start, time.perf_counter()))
        return right(question)

    result = EvalComparison(DATA[:5], targets={"baseline": target, "challenger": lambda q: target(q)},
                            metrics=[exact_match()], concurrency=5, progress=False).run()
    assert result.baseline.stats.errors == 0 and result.challenger.stats.errors == 0
    assert len(spans) == 10
    assert max(start for start, _ in spans) < min(end for _, end in spans)


def test_on_progress_gets_the_target_counts_and_case():
    events = []
    EvalComparison(DATA[:4], targets={"baseline": right, "challenger": wrong_on_evens}, metrics=[exact_match()],
                   statistical_metrics=[latency()], trials=2, progress=False, on_progress=events.append).run()
    assert len(events) == 16
    assert all(set(e) == {"target", "completed", "total", "current_case"} for e in events)
    for side in ("baseline", "challenger"):
        mine = [e for e in events if e["target"] == side]
        assert [e["completed"] for e in mine] == list(range(1, 9))
        assert {e["total"] for e in mine} == {8}
        assert sorted(e["current_case"].input for e in mine) == sorted(["q0", "q1", "q2", "q3"] * 2)
        assert all(isinstance(e["current_case"], Case) for e in mine)


@pytest.mark.parametrize("targets, shown", [
    ({"baseline": right}, "{'baseline': <function right at"),
    ({"a": right, "b": right, "c": right}, "{'a': <function right at"),
    ([right, right], "[<function right at"),
    ({1: right, 2: right}, "{1: <function right at"),
])
def test_targets_must_map_two_names(targets, shown):
    with pytest.raises(InputError) as caught:
        EvalComparison(DATA, targets=targets, metrics=[exact_match()], progress=False)
    message = str(caught.value)
    assert message.startswith(
        "targets must map two names to targets, baseline first: {'baseline': ..., 'challenger': ...}; got " + shown)


def test_runs_inside_a_running_event_loop():
    async def notebook_cell():
        comparison = EvalComparison(DATA, targets={"baseline": wrong_on_evens, "challenger": right},
                                    metrics=[exact_match()], progress=False, seed=0)
        asyncio.get_running_loop()  # a loop is running here, as in Jupyter
        return comparison.run(), await comparison.arun()

    from_run, from_arun = asyncio.run(notebook_cell())
    assert from_run.summary == from_arun.summary
    assert from_run.summary["winner"] == "challenger"


def test_alpha_and_test_are_passed_on():
    length = metric("length")(lambda output, case: float(len(output)))
    data = [{"input": f"q{i}"} for i in range(10)]
    longer = {"baseline": lambda q: q, "challenger": lambda q: q + "x" * (int(q[1:]) % 3 + 1)}
    result = EvalComparison(data, targets=longer, metrics=[length], progress=False, test="wilcoxon", alpha=0.01, seed=0).run()
    assert result.comparison.metrics["length"].test == "wilcoxon"
    assert result.comparison.alpha == 0.01
