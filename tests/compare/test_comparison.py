"""EvalComparison: two targets on one dataset, run interleaved, compared with the compare_runs engine."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from cogeval import (
    Case,
    ComparisonResult,
    EvalComparison,
    EvalSuite,
    EvalSuiteResult,
    RunInterrupted,
    TargetResponse,
    compare_runs,
    exact_match,
    latency,
    metric,
)
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
    # The interval inverts the exact test: R binom.test(10, 10)$conf.int = 0.6915029 1 for the share of
    # discordant pairs head won, times the discordance 10/20, mapped by (2·share − 1): [0.1915029, 0.5].
    assert result.summary == {
        "winner": "challenger",
        "verdict": "better",
        "metrics": {"exact_match": {
            "baseline": 0.5, "challenger": 1.0, "difference": 0.5,
            "ci_low": pytest.approx(0.1915029, abs=1e-7), "ci_high": pytest.approx(0.5, abs=1e-12),
            "p_value": pytest.approx(p), "adjusted_p_value": pytest.approx(p), "significant": True,
            "winner": "challenger", "verdict": "better", "role": "decides",
        }},
    }
    assert result.comparison.winner == "head"
    assert result.comparison.warnings == [
        "Fewer than 30 paired cases for exact_match (20): the tests have little power, so 'inconclusive' may "
        "only mean too few cases (see n_needed)"]
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


def test_targets_are_read_by_name_in_either_order():
    given = compare({"baseline": wrong_on_evens, "challenger": right})
    swapped = compare({"challenger": right, "baseline": wrong_on_evens})
    for result in (given, swapped):
        assert (result.baseline.name, result.challenger.name) == ("baseline", "challenger")
        assert result.baseline.aggregated["exact_match"].mean == 0.5  # wrong_on_evens is the baseline
        assert (result.summary["winner"], result.summary["verdict"]) == ("challenger", "better")
    assert swapped.summary == given.summary


def test_cases_run_concurrently_and_the_targets_of_a_case_back_to_back():
    # Five cases, concurrency 5: each wave of calls waits until five are in flight (run one case
    # at a time, the first call would wait in vain and fail with BrokenBarrierError after 5 s),
    # and the two calls of one case never overlap: the second starts when the first has ended.
    together = threading.Barrier(5, timeout=5)
    lock = threading.Lock()
    spans = {}

    def target(question):
        start = time.perf_counter()
        together.wait()
        time.sleep(0.05)
        with lock:
            spans.setdefault(question, []).append((start, time.perf_counter()))
        return right(question)

    result = EvalComparison(DATA[:5], targets={"baseline": target, "challenger": lambda q: target(q)},
                            metrics=[exact_match()], concurrency=5, progress=False).run()
    assert result.baseline.stats.errors == 0 and result.challenger.stats.errors == 0
    assert sorted(spans) == ["q0", "q1", "q2", "q3", "q4"]
    assert all(first_end <= second_start for [(_, first_end), (second_start, _)] in spans.values())


def test_the_targets_alternate_who_answers_a_case_first():
    calls, lock = [], threading.Lock()

    def recording(name):
        def target(question):
            with lock:
                calls.append((name, question))
            return right(question)
        return target

    EvalComparison(DATA[:4], targets={"baseline": recording("base"), "challenger": recording("head")},
                   metrics=[exact_match()], concurrency=1, progress=False).run()
    assert calls == [("base", "q0"), ("head", "q0"), ("head", "q1"), ("base", "q1"),
                     ("base", "q2"), ("head", "q2"), ("head", "q3"), ("base", "q3")]


def drifting_service():
    """A service that gets 10 ms slower with every call, timed by itself (no wall clock involved)."""
    count = itertools.count()
    lock = threading.Lock()

    def answer(question):
        with lock:
            call = next(count)
        return TargetResponse(right(question), duration_s=0.1 + 0.01 * call)

    return answer


def test_load_that_drifts_over_time_no_longer_makes_the_second_side_look_slower():
    # One after the other (as two separate suite runs), the same service looks 0.2 s slower
    # the second time: each case's second call comes 20 calls later.
    service = drifting_service()
    first, second = (EvalSuite(DATA, service, statistical_metrics=[latency()], concurrency=1, progress=False).run()
                     for _ in range(2))
    apart = compare_runs(first, second, seed=0).metrics["latency"]
    assert apart.head - apart.base == pytest.approx(0.2)

    # Interleaved, both sides see the same drift: who goes first alternates, so the paired
    # differences are -10 ms, +10 ms, ... and the means are equal.
    service = drifting_service()
    result = EvalComparison(DATA, targets={"baseline": service, "challenger": lambda q: service(q)}, metrics=[exact_match()],
                            statistical_metrics=[latency()], concurrency=1, progress=False, seed=0).run()
    durations = [[r.duration_s for r in side.results] for side in (result.baseline, result.challenger)]
    assert sum(durations[0]) == pytest.approx(sum(durations[1]))
    assert [b - a for a, b in zip(*durations)] == pytest.approx([0.01, -0.01] * 10)
    row = result.summary["metrics"]["latency"]
    assert row["difference"] == pytest.approx(0, abs=1e-12)
    assert not row["significant"] and row["winner"] == "tie"


def test_interrupting_a_comparison_keeps_each_sides_finished_outcomes():
    waiting = None

    async def quick(question):
        return right(question)

    async def stuck_from_q2(question):
        if int(question[1:]) >= 2:
            waiting.set()
            await asyncio.sleep(10)
        return right(question)

    async def main():
        nonlocal waiting
        waiting = asyncio.Event()
        comparison = EvalComparison(DATA, targets={"baseline": quick, "challenger": stuck_from_q2},
                                    metrics=[exact_match()], concurrency=1, progress=False)
        task = asyncio.create_task(comparison.arun())
        await waiting.wait()  # q0, q1 done by both; q2: the baseline answered, the challenger waits
        task.cancel()
        return await task

    with pytest.raises(RunInterrupted) as info:
        asyncio.run(main())
    assert str(info.value) == ("Run interrupted after 3, 2 of 20 cases (one count per target); each run so far is in "
                               "this exception's .results (status 'interrupted'), to save")
    assert [[r.case.input for r in partial.results] for partial in info.value.results] == [["q0", "q1", "q2"], ["q0", "q1"]]
    assert [partial.run.status for partial in info.value.results] == ["interrupted", "interrupted"]
    assert [[o.case.input for o in side] for side in info.value.by_target] == [["q0", "q1", "q2"], ["q0", "q1"]]


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


KEYS_EXPECTED = "targets must have exactly the keys 'baseline' and 'challenger'; got "


@pytest.mark.parametrize("targets, message", [
    ({"baseline": right}, KEYS_EXPECTED + "the keys 'baseline'"),
    ({"old": right, "new": right}, KEYS_EXPECTED + "the keys 'old', 'new'"),
    ({"baseline": right, "challenger": right, "c": right}, KEYS_EXPECTED + "the keys 'baseline', 'challenger', 'c'"),
    ({1: right, 2: right}, KEYS_EXPECTED + "the keys 1, 2"),
    ({}, KEYS_EXPECTED + "no keys"),
])
def test_targets_must_have_the_keys_baseline_and_challenger(targets, message):
    with pytest.raises(InputError) as caught:
        EvalComparison(DATA, targets=targets, metrics=[exact_match()], progress=False)
    assert str(caught.value) == message


def test_targets_must_be_a_mapping():
    with pytest.raises(InputError) as caught:
        EvalComparison(DATA, targets=[str.upper, str.lower], metrics=[exact_match()], progress=False)
    assert str(caught.value) == ("targets must be a mapping with the keys 'baseline' and 'challenger' "
                                 "({'baseline': ..., 'challenger': ...}); got [<method 'upper' of 'str' objects>, "
                                 "<method 'lower' of 's...")


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
