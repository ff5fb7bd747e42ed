"""A target that ignores cancellation is abandoned at its deadline and cannot hang the run (issue 24 item 2).

Each attempt runs the target in a task of its own. At the deadline the task is cancelled; one that is still
running :data:`~cogeval.execution.runner.CANCEL_GRACE_S` later is abandoned: its case errors, the run goes
on, and ``run_sync`` ends its event loop without waiting for it (``asyncio.run`` would wait forever). No
test depends on timing: the stubborn target never ends, and every bound on elapsed time is far above what
the run needs.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time

import pytest

from cogeval.data import Case
from cogeval.execution import RunInterrupted, run_cases, run_sync
from cogeval.execution import runner as runner_module

ABANDONED = "Timed out after 1 s; the target ignored its cancellation and was abandoned"


async def ignore_cancellation() -> None:
    """Keep running whatever happens, as a target that catches ``CancelledError`` and goes on."""
    while True:
        try:
            await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            pass


def cases(n):
    return [Case(f"q{i}") for i in range(n)]


def test_a_target_ignoring_its_cancellation_is_abandoned_and_the_other_cases_are_answered():
    async def target(text):
        if text == "q1":
            await ignore_cancellation()
        return text.upper()

    started = time.perf_counter()
    outcomes = run_sync(run_cases(cases(3), target, timeout=1.0, concurrency=2))
    assert time.perf_counter() - started < 60
    assert [(o.output, o.error) for o in outcomes] == [("Q0", None), ("", ABANDONED), ("Q2", None)]
    assert not runner_module._abandoned  # let go with its event loop, which has closed


def test_an_abandoned_attempt_is_retried():
    attempts = []

    async def target(text):
        attempts.append(text)
        if len(attempts) == 1:
            await ignore_cancellation()
        return "second"

    [outcome] = run_sync(run_cases([Case("q")], target, timeout=1.0, retries=1, backoff=0.0))
    assert (outcome.output, outcome.error, outcome.attempts) == ("second", None, 2)


def test_a_target_that_ends_soon_after_its_cancellation_has_timed_out_and_its_answer_is_dropped():
    async def target(text):
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # well within the grace period
        return "too late"

    [outcome] = run_sync(run_cases([Case("q")], target, timeout=1.0))
    assert (outcome.output, outcome.error) == ("", "Timed out after 1 s")


def test_cancelling_the_run_during_such_a_hang_raises_run_interrupted_with_the_finished_outcomes():
    async def main():
        q2_started = asyncio.Event()

        async def target(text):
            if text == "q2":  # q0 and q1 have finished (concurrency 1)
                q2_started.set()
                await ignore_cancellation()
            return text

        task = asyncio.create_task(run_cases(cases(5), target, concurrency=1, timeout=600))
        await q2_started.wait()
        task.cancel()
        return await task

    started = time.perf_counter()
    with pytest.raises(RunInterrupted) as info:
        run_sync(main())
    assert time.perf_counter() - started < 60  # neither the 600 s deadline nor the abandoned task held it
    assert str(info.value) == "Run interrupted after 2 of 5 cases"
    assert [o.output for o in info.value.outcomes] == ["q0", "q1"]


def test_an_async_target_passing_on_keyboard_interrupt_stops_the_run_and_keeps_what_finished():
    async def target(text):
        if text == "q1":
            raise KeyboardInterrupt
        return text

    with pytest.raises(RunInterrupted) as info:
        run_sync(run_cases(cases(3), target, concurrency=1))
    assert [o.output for o in info.value.outcomes] == ["q0"]


def test_an_async_target_raising_system_exit_fails_its_case_only():
    async def target(text):
        if text == "q1":
            sys.exit(3)
        return text

    outcomes = run_sync(run_cases(cases(3), target, concurrency=1))
    assert [(o.output, o.error) for o in outcomes] == [("q0", None), ("", "SystemExit: 3"), ("q2", None)]


_PROGRAM = textwrap.dedent("""
    import asyncio, os, signal, sys
    from cogeval import EvalSuite, RunInterrupted, exact_match

    async def target(text):  # q1 never ends; with "interrupt", Ctrl-C first
        if text == "q1":
            if sys.argv[1] == "interrupt":
                os.kill(os.getpid(), signal.SIGINT)
            while True:
                try:
                    await asyncio.sleep(0.1)
                except asyncio.CancelledError:
                    pass
        return text

    suite = EvalSuite([{"input": f"q{i}", "expected": f"q{i}"} for i in range(3)], target,
                      metrics=[exact_match()], progress=False, concurrency=1, timeout=1.0)
    try:
        result = suite.run()
        print("finished", [r.error for r in result.results])
    except RunInterrupted as stop:
        print("interrupted", [r.case.input for r in stop.result.run.results])
""")


@pytest.mark.parametrize(("how", "printed"), [
    ("run", f"finished [None, {ABANDONED!r}, None]"),
    ("interrupt", "interrupted ['q0']"),
])
def test_a_suite_with_such_a_target_ends_its_program_cleanly(how, printed):
    done = subprocess.run([sys.executable, "-c", _PROGRAM, how], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, printed), done.stderr
    assert "Task was destroyed" not in done.stderr and "pending" not in done.stderr, done.stderr
