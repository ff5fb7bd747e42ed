"""A sync function's duration is its call's, timed in its thread, not the event loop's delay (issue 24 item 5).

The event loop is kept busy (an ``on_outcome`` callback or a coroutine that ``time.sleep``s) for
``BLOCKED_S`` while the target's 0.2 s call runs; the answer waits for the loop, and the wall clock of the
attempt would count that wait. Threading events fix the order, so no test depends on timing beyond
``time.sleep`` sleeping at least as long as asked, and a 0.2 s call ending well before 2 s.
"""

from __future__ import annotations

import asyncio
import threading
import time

from cogeval.data import Case
from cogeval.execution import TargetResponse, as_target, run_cases, run_sync

CALL_S = 0.2
BLOCKED_S = 2.0


def test_a_sync_call_is_timed_in_its_thread_while_on_outcome_blocks_the_loop():
    slow_started = threading.Event()
    blocked = []

    def target(text):
        if text == "slow":
            slow_started.set()
            time.sleep(CALL_S)
        else:
            slow_started.wait(30)  # "fast" answers once "slow" is under way
        return text

    def on_outcome(outcome, completed, total):
        if not blocked:  # "fast": the loop is busy while "slow" answers
            blocked.append(outcome.case.input)
            time.sleep(BLOCKED_S)

    _, slow = run_sync(run_cases([Case("fast"), Case("slow")], target, concurrency=2, on_outcome=on_outcome))
    assert blocked == ["fast"]
    assert slow.output == "slow"
    assert CALL_S <= slow.duration_s < BLOCKED_S


def test_each_turn_of_a_conversation_is_timed_in_its_thread_while_a_coroutine_blocks_the_loop():
    first_turn = threading.Event()

    def target(text):
        first_turn.set()
        time.sleep(CALL_S)
        return text.upper()

    async def main():
        run = asyncio.create_task(run_cases([Case(turns=["a", "b"])], target))
        while not first_turn.is_set():
            await asyncio.sleep(0.01)
        time.sleep(BLOCKED_S)  # busy: turn "a" answers meanwhile, and waits for the loop
        return await run

    [outcome] = run_sync(main())
    assert [t.output for t in outcome.turns] == ["A", "B"]
    assert all(CALL_S <= t.duration_s < BLOCKED_S for t in outcome.turns)
    assert outcome.duration_s == sum(t.duration_s for t in outcome.turns)


def test_a_sync_functions_response_gets_its_calls_duration_and_keeps_everything_else():
    given = TargetResponse("A", usage={"cost_usd": 0.5}, trace_id="t-1", prompt={"key": "p"})
    response = asyncio.run(as_target(lambda text: given).call(Case("a")))
    assert (response.output, response.usage, response.trace_id, response.prompt) == (
        "A", given.usage, "t-1", {"key": "p"})
    assert 0 <= response.duration_s < BLOCKED_S


def test_a_duration_the_sync_function_reports_wins():
    def target(text):
        time.sleep(CALL_S)
        return TargetResponse(text, duration_s=12.5)

    [outcome] = run_sync(run_cases([Case("a")], target))
    assert outcome.duration_s == 12.5
