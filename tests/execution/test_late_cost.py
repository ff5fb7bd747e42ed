"""The cost of an attempt that timed out but still answered is counted: the money was spent.

A sync function target keeps running in its daemon thread after its timeout; when it returns a
``TargetResponse`` with a cost while the run goes on, the case-trial's ``cost_usd`` counts it and
``late_cost_usd`` says how much came late. No test here depends on timing: the slow call waits for
an event that only the next call sets, so it always times out, and the next call waits until the
slow call's thread has finished, so its late answer always reaches the event loop first.
"""

from __future__ import annotations

import threading

import pytest

from cogeval import EvalSuite
from cogeval.data import Case
from cogeval.execution import TargetResponse, run_cases, run_sync


def _slow_then_fast():
    """A target whose "slow" call answers (cost 0.25) only after the "fast" one (cost 0.5) started."""
    release, slow = threading.Event(), {}

    def target(text):
        if text == "slow":
            slow["thread"] = threading.current_thread()
            release.wait(30)
            return TargetResponse("late", usage={"cost_usd": 0.25})
        release.set()
        slow["thread"].join(30)  # the late answer is handed to the event loop before this one
        return TargetResponse("on time", usage={"cost_usd": 0.5})

    return target


def test_a_late_answer_after_the_outcome_replaces_it_and_is_reported_again():
    seen = []
    outcomes = run_sync(run_cases([Case("slow"), Case("fast")], _slow_then_fast(), timeout=0.2, concurrency=1,
                                  on_outcome=lambda o, done, total: seen.append((o.case.input, o.cost_usd, done, total))))
    slow, fast = outcomes
    assert (slow.output, slow.error) == ("", "Timed out after 0.2 s")
    assert (slow.cost_usd, slow.late_cost_usd) == (0.25, 0.25)
    assert (fast.output, fast.cost_usd, fast.late_cost_usd) == ("on time", 0.5, None)
    assert seen == [("slow", None, 1, 2), ("slow", 0.25, 1, 2), ("fast", 0.5, 2, 2)]


def test_a_late_answer_during_the_retries_joins_the_final_attempts_cost():
    release, first = threading.Event(), {}

    def target(text):
        if "thread" not in first:  # attempt 1: answers only after attempt 2 started
            first["thread"] = threading.current_thread()
            release.wait(30)
            return TargetResponse("late", usage={"cost_usd": 0.25})
        release.set()
        first["thread"].join(30)
        return TargetResponse("retried", usage={"cost_usd": 0.5})

    [outcome] = run_sync(run_cases([Case("q")], target, timeout=0.2, retries=1, backoff=0.0))
    assert (outcome.output, outcome.error, outcome.attempts) == ("retried", None, 2)
    assert (outcome.cost_usd, outcome.late_cost_usd) == (0.75, 0.25)


def test_an_on_time_answer_has_no_late_cost():
    [outcome] = run_sync(run_cases([Case("q")], lambda q: TargetResponse("a", usage={"cost_usd": 0.1})))
    assert (outcome.cost_usd, outcome.late_cost_usd) == (0.1, None)


def test_the_suite_runs_stats_cost_counts_the_late_answer():
    result = EvalSuite([{"input": "slow"}, {"input": "fast"}], _slow_then_fast(), timeout=0.2, concurrency=1,
                       progress=False).run()
    assert [r.late_cost_usd for r in result.results] == [0.25, None]
    assert [r.cost_usd for r in result.results] == [0.25, 0.5]
    assert result.stats.cost_usd == pytest.approx(0.75)
    assert result.stats.errors == 1
