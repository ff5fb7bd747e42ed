"""run_cases and run_sync: order, concurrency, timeouts, retries, trials, interruption."""

from __future__ import annotations

import asyncio
import collections
import itertools
import random
import threading
import time

import pytest

from cogeval.data import Case
from cogeval.errors import ExecutionError, InputError
from cogeval.execution import CaseOutcome, RunInterrupted, Target, TargetResponse, run_cases, run_interleaved, run_sync


def run(cases, target, **options):
    return run_sync(run_cases(cases, target, **{"backoff": 0.0, **options}))


def cases(n):
    return [Case(f"q{i}") for i in range(n)]


def test_outcome_fields_on_success():
    response = TargetResponse("A", usage={"input_tokens": 3, "output_tokens": 1, "cost_usd": 0.5},
                              trace_id="t1", prompt={"key": "p", "version_id": "v1"}, tool_calls=[{"name": "f"}])
    [outcome] = run([Case("a", expected="A")], lambda text: response)
    assert isinstance(outcome, CaseOutcome)
    assert (outcome.index, outcome.occurrence, outcome.trial, outcome.attempts) == (0, 0, 0, 1)
    assert outcome.case_key == Case("a", expected="A").key
    assert (outcome.output, outcome.error, outcome.trace_id) == ("A", None, "t1")
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (3, 1, 0.5)
    assert outcome.prompt == {"key": "p", "version_id": "v1"}
    assert outcome.tool_calls == [{"name": "f"}]
    assert outcome.turns is None
    assert outcome.duration_s >= 0


def test_plain_string_leaves_usage_unknown():
    [outcome] = run([Case("a")], str.upper)
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd, outcome.trace_id) == (None,) * 4


def test_order_is_kept_whatever_the_completion_order():
    rng = random.Random(0)
    delays = {f"q{i}": rng.uniform(0, 0.02) for i in range(40)}

    async def target(text):
        await asyncio.sleep(delays[text])
        return text

    outcomes = run(cases(40), target, concurrency=10, trials=2)
    assert [(o.index, o.trial, o.output) for o in outcomes] == [(i, t, f"q{i}") for i in range(40) for t in range(2)]


def test_occurrence_counts_equal_keys_in_list_order():
    outcomes = run([Case("a"), Case("b"), Case("a"), Case("a", metadata={"x": 1})], str.upper)
    assert [o.occurrence for o in outcomes] == [0, 0, 1, 2]


def test_trials_run_each_case_several_times():
    calls = []

    def target(text):
        calls.append(text)
        return text

    outcomes = run(cases(3), target, trials=3)
    assert sorted(calls) == ["q0"] * 3 + ["q1"] * 3 + ["q2"] * 3
    assert [o.trial for o in outcomes] == [0, 1, 2] * 3


def test_concurrency_limit_is_respected():
    in_flight = peak = 0

    async def target(text):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return text

    run(cases(50), target, concurrency=4)
    assert peak == 4


def test_sync_targets_run_concurrently_too():
    lock = threading.Lock()
    in_flight = peak = 0

    def target(text):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1
        return text

    run(cases(12), target, concurrency=6)
    assert peak == 6


def test_exceptions_become_errors_and_never_lose_other_cases():
    def target(text):
        if text == "q1":
            raise RuntimeError("boom")
        return text

    outcomes = run(cases(3), target)
    assert [(o.output, o.error) for o in outcomes] == [("q0", None), ("", "RuntimeError: boom"), ("q2", None)]


def test_a_target_raising_cancelled_error_fails_its_case_only():
    # A target whose own code raises CancelledError (not a cancellation of the run)
    # is a failed case, as any other exception: the run finishes and loses nothing.
    async def target(text):
        if text == "q1":
            raise asyncio.CancelledError()
        return text.upper()

    outcomes = run(cases(3), target, retries=1)
    assert [(o.output, o.error, o.attempts) for o in outcomes] == [
        ("Q0", None, 1), ("", "CancelledError", 2), ("Q2", None, 1)]


def test_wrong_return_type_is_an_error_and_not_retried():
    calls = []

    def target(text):
        calls.append(text)
        return None

    [outcome] = run([Case("a")], target, retries=3)
    assert outcome.error == "target returned NoneType; expected a str, or a number, bool, list or dict, or a TargetResponse"
    assert (outcome.output, outcome.attempts, len(calls)) == ("", 1, 1)


def test_a_number_list_or_dict_answer_is_kept_as_the_output():
    answers = {"n": 42, "l": (1, "x"), "d": {"a": float("nan")}, "b": True}
    outcomes = run([Case(k) for k in answers], lambda text: answers[text])
    assert [(o.output, o.error) for o in outcomes] == [(42, None), ([1, "x"], None), ({"a": None}, None), (True, None)]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_hanging_target_times_out_and_the_run_moves_on(kind):
    release = threading.Event()

    def sync(text):
        if text == "q0":
            release.wait(600)
        return text

    async def async_(text):
        if text == "q0":
            await asyncio.sleep(600)
        return text

    started = time.perf_counter()
    outcomes = run(cases(3), sync if kind == "sync" else async_, timeout=2.0)
    release.set()
    assert time.perf_counter() - started < 300  # q0 would answer at 600 s: the timeout ended it
    assert [(o.output, o.error) for o in outcomes] == [("", "Timed out after 2 s"), ("q1", None), ("q2", None)]


def test_retries_then_success_counts_attempts():
    attempts = {"n": 0}

    async def flaky(text):
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ConnectionError("flaky")
        return "ok"

    [outcome] = run([Case("a")], flaky, retries=5)
    assert (outcome.output, outcome.error, outcome.attempts, attempts["n"]) == ("ok", None, 3, 3)


def test_timeouts_are_retried():
    attempts = {"n": 0}

    async def slow_then_fast(text):
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(600)
        return "fast"

    [outcome] = run([Case("a")], slow_then_fast, retries=1, timeout=1.0)
    assert (outcome.output, outcome.attempts) == ("fast", 2)


def test_every_attempt_failing_keeps_the_last_error():
    [outcome] = run([Case("a")], lambda text: 1 / 0, retries=2)
    assert (outcome.output, outcome.error, outcome.attempts) == ("", "ZeroDivisionError: division by zero", 3)


def test_backoff_grows_between_attempts():
    times = []

    def failing(text):
        times.append(time.perf_counter())
        raise RuntimeError("x")

    run([Case("a")], failing, retries=2, backoff=0.04)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 0.02 <= gaps[0] < 0.2  # 0.04 s, jittered to [0.02, 0.04]
    assert 0.04 <= gaps[1] < 0.3  # 0.08 s, jittered to [0.04, 0.08]


def test_multi_turn_outcome_records_turns():
    def bot(text):
        return TargetResponse(text[::-1], usage={"input_tokens": 1, "output_tokens": 2, "cost_usd": 0.25})

    [outcome] = run([Case(turns=["ab", "cd"])], bot)
    assert outcome.output == "dc"
    assert [t.output for t in outcome.turns] == ["ba", "dc"]
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (2, 4, 0.5)


def test_on_outcome_is_called_once_per_case_trial():
    seen = []
    run(cases(5), str.upper, trials=2, on_outcome=lambda o, done, total: seen.append((done, total, o.output)))
    assert [(done, total) for done, total, _ in seen] == [(i, 10) for i in range(1, 11)]
    assert sorted(output for *_, output in seen) == sorted(f"Q{i}" for i in range(5) for _ in range(2))


def test_on_outcome_errors_stop_the_run():
    def callback(outcome, done, total):
        raise ValueError("bad callback")

    with pytest.raises(ValueError, match="bad callback"):
        run(cases(5), str.upper, on_outcome=callback)


def test_empty_case_list():
    assert run([], str.upper) == []


def test_cancellation_raises_run_interrupted_with_the_finished_outcomes():
    async def main():
        q6_started = asyncio.Event()

        async def target(text):
            if text == "q6":
                q6_started.set()
            await asyncio.sleep(0 if int(text[1:]) < 3 else 600)
            return text

        task = asyncio.create_task(run_cases(cases(10), target, concurrency=4))
        await q6_started.wait()  # q0-q2 have finished: their workers went on to q4-q6
        task.cancel()
        return await task

    started = time.perf_counter()
    with pytest.raises(RunInterrupted) as info:
        asyncio.run(main())
    assert time.perf_counter() - started < 300
    assert isinstance(info.value, ExecutionError)
    assert str(info.value) == "Run interrupted after 3 of 10 cases"
    assert [o.output for o in info.value.outcomes] == ["q0", "q1", "q2"]


def test_run_sync_without_a_running_loop():
    async def answer():
        return 42

    assert run_sync(answer()) == 42
    assert run_sync(answer) == 42


def test_run_sync_inside_a_running_loop_uses_a_fresh_thread():
    async def inner():
        return threading.current_thread().name

    async def notebook_cell():
        loop_thread = threading.current_thread().name
        return loop_thread, run_sync(inner())  # a sync call from inside a running loop, as in Jupyter

    outer, inner_thread = asyncio.run(notebook_cell())
    assert outer != inner_thread == "cogeval-run-sync"


def test_run_sync_inside_a_running_loop_runs_cases_and_raises_errors():
    async def cell():
        outcomes = run_sync(run_cases(cases(3), str.upper))
        with pytest.raises(KeyError):
            run_sync(_raise_key_error())
        return outcomes

    assert [o.output for o in asyncio.run(cell())] == ["Q0", "Q1", "Q2"]


async def _raise_key_error():
    raise KeyError("k")


@pytest.mark.parametrize(("options", "message"), [
    ({"concurrency": 0}, "concurrency must be an integer >= 1; got 0"),
    ({"concurrency": 2.5}, "concurrency must be an integer >= 1; got 2.5"),
    ({"retries": -1}, "retries must be an integer from 0 to 10; got -1"),
    ({"retries": 11}, "retries must be an integer from 0 to 10; got 11"),
    ({"timeout": 0}, "timeout must be a finite number > 0; got 0"),
    ({"trials": 0}, "trials must be an integer >= 1; got 0"),
    ({"backoff": -1}, "backoff must be a number of seconds in [0, 30]; got -1"),
])
def test_arguments_are_validated(options, message):
    with pytest.raises(InputError) as info:
        run(cases(1), str.upper, **options)
    assert str(info.value) == message


def test_cases_must_be_cases():
    with pytest.raises(InputError) as info:
        run([Case("a"), "b"], str.upper)
    assert str(info.value) == "cases[1] must be a Case; got 'b'"


def test_target_is_checked_before_running():
    with pytest.raises(InputError, match=r'target must be a callable, a ChatTarget or \{"fn": callable\}; got 3'):
        run(cases(1), 3)


def test_ctrl_c_under_run_sync_raises_run_interrupted():
    import os
    import signal

    async def target(text):
        if text == "q1":  # q0 has finished (concurrency 1): Ctrl-C now, whatever the machine's load
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(3600)
        return text

    # A process started in the background (as CI may start this one) inherits SIGINT
    # ignored; install Python's own handler so the signal means Ctrl-C here too.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(RunInterrupted) as info:
            run(cases(5), target, concurrency=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert str(info.value) == "Run interrupted after 1 of 5 cases"
    assert [o.output for o in info.value.outcomes] == ["q0"]


def test_jobs_limits_the_run_to_those_case_trials():
    calls = []

    def target(text):
        calls.append(text)
        return text

    [outcomes] = run_sync(run_interleaved(cases(3), [target], trials=2, jobs=[1, 4], concurrency=1))
    assert calls == ["q0", "q2"]
    assert [(o.index, o.trial) for o in outcomes] == [(0, 1), (2, 0)]
    with pytest.raises(InputError, match=r"^jobs must be job numbers in \[0, 6\); got \[6\]$"):
        run_sync(run_interleaved(cases(3), [target], trials=2, jobs=[6]))


def test_a_dataset_can_be_run():
    from cogeval.data import Dataset

    outcomes = run(Dataset([Case("a"), Case("b")]), str.upper)
    assert [o.output for o in outcomes] == ["A", "B"]


# --- the duration a target reports ---------------------------------------------------------------


def test_a_reported_duration_replaces_the_wall_clock():
    [outcome] = run([Case("a")], lambda text: TargetResponse("A", duration_s=12.5))
    assert outcome.duration_s == 12.5


def test_a_multi_turn_case_takes_the_sum_of_its_reported_turn_durations():
    [outcome] = run([Case(turns=["ab", "cd"])], lambda text: TargetResponse(text, duration_s=len(text) * 0.5))
    assert [t.duration_s for t in outcome.turns] == [1.0, 1.0]
    assert outcome.duration_s == 2.0


def test_a_failed_attempt_keeps_the_wall_clock():
    [outcome] = run([Case("a")], lambda text: 1 / 0)
    assert outcome.error and 0 <= outcome.duration_s < 5


# --- several targets, interleaved -----------------------------------------------------------------


def recorder(calls, lock, name, transform=str):
    def target(text):
        with lock:
            calls.append((name, text))
        return transform(text)

    target.__name__ = name
    return target


def test_interleaved_targets_answer_each_case_back_to_back_alternating_who_goes_first():
    calls, lock = [], threading.Lock()
    a, b = recorder(calls, lock, "a"), recorder(calls, lock, "b", str.upper)
    by_target = run_sync(run_interleaved(cases(4), [a, b], concurrency=1))
    assert calls == [("a", "q0"), ("b", "q0"), ("b", "q1"), ("a", "q1"),
                     ("a", "q2"), ("b", "q2"), ("b", "q3"), ("a", "q3")]
    assert [[o.output for o in outcomes] for outcomes in by_target] == [
        ["q0", "q1", "q2", "q3"], ["Q0", "Q1", "Q2", "Q3"]]
    assert [[(o.index, o.trial, o.occurrence) for o in outcomes] for outcomes in by_target] == [
        [(i, 0, 0) for i in range(4)]] * 2


def test_with_n_targets_the_order_rotates_by_one_per_case_so_each_goes_first_equally_often():
    calls, lock = [], threading.Lock()
    targets = [recorder(calls, lock, name) for name in "abc"]
    run_sync(run_interleaved(cases(6), targets, concurrency=1))
    groups = ["".join(name for name, _ in calls[i:i + 3]) for i in range(0, 18, 3)]
    assert groups == ["abc", "bca", "cab", "abc", "bca", "cab"]
    assert [text for _, text in calls] == [f"q{i}" for i in range(6) for _ in range(3)]
    assert collections.Counter(group[0] for group in groups) == {"a": 2, "b": 2, "c": 2}


def test_each_trial_is_a_back_to_back_group_and_the_order_rotates_per_case_trial():
    calls, lock = [], threading.Lock()
    a, b = recorder(calls, lock, "a"), recorder(calls, lock, "b")
    by_target = run_sync(run_interleaved(cases(2), [a, b], concurrency=1, trials=2))
    assert calls == [("a", "q0"), ("b", "q0"), ("b", "q0"), ("a", "q0"),
                     ("a", "q1"), ("b", "q1"), ("b", "q1"), ("a", "q1")]
    assert [(o.index, o.trial) for o in by_target[1]] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_interleaving_gives_every_target_the_same_drift():
    # A service that slows down with every call (a global counter adds 10 ms a call), timed by
    # the target itself (TargetResponse.duration_s), so no wall clock is involved. Two identical
    # targets: one after the other, the second looks much slower; interleaved, they see the
    # same drift (calls 0, 3, 4, 7, ... against 1, 2, 5, 6, ...), so equal sums over every 2 cases.
    def service():
        count = itertools.count()
        lock = threading.Lock()

        def target(text):
            with lock:
                call = next(count)
            return TargetResponse(text, duration_s=0.1 + 0.01 * call)

        return target

    slow = service()
    first = run(cases(20), slow, concurrency=1)
    second = run(cases(20), slow, concurrency=1)
    assert sum(o.duration_s for o in second) - sum(o.duration_s for o in first) == pytest.approx(20 * 20 * 0.01)

    slow = service()
    a, b = run_sync(run_interleaved(cases(20), [slow, lambda text: slow(text)], concurrency=1))
    assert sum(o.duration_s for o in a) == pytest.approx(sum(o.duration_s for o in b))
    differences = [x.duration_s - y.duration_s for x, y in zip(a, b)]
    assert differences == pytest.approx([-0.01, 0.01] * 10)  # who goes first alternates: the mean difference is 0


def test_interleaved_concurrency_bounds_the_cases_in_flight_and_one_case_runs_its_targets_in_turn():
    lock = threading.Lock()
    in_flight, peak, spans = 0, 0, collections.defaultdict(list)

    async def target(text):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        started = time.perf_counter()
        await asyncio.sleep(0.005)
        with lock:
            in_flight -= 1
            spans[text].append((started, time.perf_counter()))
        return text

    run_sync(run_interleaved(cases(20), [target, target], concurrency=4))
    assert peak == 4
    assert all(first_end <= second_start for [(_, first_end), (second_start, _)] in spans.values())


def test_interleaved_on_outcome_counts_per_target():
    seen = []
    run_sync(run_interleaved(cases(3), [str.upper, str.lower], trials=2,
                             on_outcome=lambda position, o, done, total: seen.append((position, done, total))))
    for position in (0, 1):
        assert [(done, total) for p, done, total in seen if p == position] == [(i, 6) for i in range(1, 7)]


def test_interleaved_failures_stay_with_their_target():
    def broken(text):
        raise RuntimeError("down")

    good, bad = run_sync(run_interleaved(cases(2), [str.upper, broken], retries=1, backoff=0.0))
    assert [(o.output, o.error) for o in good] == [("Q0", None), ("Q1", None)]
    assert [(o.output, o.error, o.attempts) for o in bad] == [("", "RuntimeError: down", 2)] * 2


def test_interleaved_cancellation_raises_run_interrupted_with_each_targets_finished_outcomes():
    waiting = None

    async def fast(text):
        return text

    async def stuck_from_q2(text):
        if int(text[1:]) >= 2:
            waiting.set()
            await asyncio.sleep(10)
        return text.upper()

    async def main():
        nonlocal waiting
        waiting = asyncio.Event()
        task = asyncio.create_task(run_interleaved(cases(10), [fast, stuck_from_q2], concurrency=1))
        await waiting.wait()  # q0 (fast, then stuck), q1 (stuck, then fast), q2: fast answered, stuck waits
        task.cancel()
        return await task

    with pytest.raises(RunInterrupted) as info:
        asyncio.run(main())
    assert str(info.value) == "Run interrupted after 3, 2 of 10 cases (one count per target)"
    assert [[o.output for o in outcomes] for outcomes in info.value.by_target] == [["q0", "q1", "q2"], ["Q0", "Q1"]]
    assert [o.output for o in info.value.outcomes] == ["q0", "q1", "q2", "Q0", "Q1"]


def test_a_one_target_interruption_keeps_its_message_and_gives_one_list():
    error = RunInterrupted(2, 5, ["x", "y"])
    assert str(error) == "Run interrupted after 2 of 5 cases" and error.by_target == [["x", "y"]]


@pytest.mark.parametrize(("targets", "message"), [
    ([], "targets must be a non-empty list of targets; got []"),
    (str.upper, "targets must be a non-empty list of targets; got <method 'upper' of 'str' objects>"),
    ({"a": str.upper}, "targets must be a non-empty list of targets; got {'a': <method 'upper' of 'str' objects>}"),
    ([str.upper, 3], "targets[1] must be a callable or a ChatTarget; got 3"),
])
def test_interleaved_targets_are_validated(targets, message):
    with pytest.raises(InputError) as info:
        run_sync(run_interleaved(cases(1), targets))
    assert str(info.value) == message


class Prepared(Target):
    """A target whose set-up takes longer than the timeout, as a cold client does."""

    def __init__(self, fail=False):
        self.fail, self.events = fail, []

    async def prepare(self):
        self.events.append("prepare")
        if self.fail:
            raise RuntimeError("no client")
        time.sleep(2.5)  # blocking, as an import is

    async def call(self, case, *, messages=None, timeout=None):
        if self.fail:
            raise RuntimeError("no client")
        self.events.append("call")
        return TargetResponse(case.input)


def test_prepare_runs_once_per_run_before_any_deadline():
    target = Prepared()
    outcomes = run(cases(3), target, timeout=2.0, concurrency=2)
    assert [(o.output, o.error, o.attempts) for o in outcomes] == [("q0", None, 1), ("q1", None, 1), ("q2", None, 1)]
    assert target.events == ["prepare", "call", "call", "call"]


def test_a_failed_prepare_is_recorded_by_the_attempts():
    target = Prepared(fail=True)
    outcomes = run(cases(2), target, timeout=2.0)
    assert [o.error for o in outcomes] == ["RuntimeError: no client"] * 2 and target.events == ["prepare"]


def test_a_timeout_under_one_millisecond_is_refused():
    with pytest.raises(InputError) as error:
        run(cases(1), str.upper, timeout=0.0001)
    assert str(error.value) == "timeout must be at least 0.001 seconds (a shorter deadline fails every call); got 0.0001"
