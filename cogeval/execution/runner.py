"""The async runner: every case × trial against a target, concurrently, in order.

>>> from cogeval.data import Case
>>> outcomes = run_sync(run_cases([Case("a"), Case("b")], str.upper, trials=2))
>>> [(o.index, o.trial, o.output) for o in outcomes]
[(0, 0, 'A'), (0, 1, 'A'), (1, 0, 'B'), (1, 1, 'B')]

A fixed pool of ``concurrency`` workers pulls (case, trial) jobs from a lazy
iterator, so 10,000 cases cost 10,000 small outcomes, not 10,000 pending tasks.
Each attempt has its own timeout; failed or timed-out attempts are retried
with exponential backoff and jitter; a case whose every attempt fails gets
``output=""`` and an ``error``, and never stops the others.

Each attempt runs the target in a task of its own. At the deadline that task
is cancelled; one that ignores its cancellation for :data:`CANCEL_GRACE_S` more
is abandoned (its case errors, the run goes on without waiting for it, and
:func:`run_sync` does not wait for it at the end either).

A sync target that hangs cannot be killed: its attempt times out, the runner
moves on, and the call finishes (or not) in its daemon thread. When it does
return an answer with a cost while the run goes on, that money was spent: the
case-trial's ``cost_usd`` counts it, and ``late_cost_usd`` says how much of it
came late (see :class:`CaseOutcome`).

:func:`run_interleaved` runs several targets over the same cases fairly: each
(case, trial) job calls every target back to back, the order rotating by one
target per job, so load that changes over time (another process, a warming
cache, a rate-limited API) meets every target alike. :func:`run_cases` is
the one-target case of it.

>>> calls = []
>>> def a(text): calls.append(("a", text)); return text
>>> def b(text): calls.append(("b", text)); return text.upper()
>>> by_target = run_sync(run_interleaved([Case("x"), Case("y"), Case("z")], [a, b], concurrency=1))
>>> calls
[('a', 'x'), ('b', 'x'), ('b', 'y'), ('a', 'y'), ('a', 'z'), ('b', 'z')]
>>> [[o.output for o in outcomes] for outcomes in by_target]
[['x', 'y', 'z'], ['X', 'Y', 'Z']]
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

from cogeval._check import check_positive_int, check_retries, check_timeout, describe, is_real
from cogeval.data import Case
from cogeval.errors import ExecutionError, InputError
from cogeval.execution.retry import MAX_BACKOFF_S, error_text, retry_delay, retryable
from cogeval.execution.target import Target, TargetResponse, TurnOutcome, as_target, converse, late_cost

CANCEL_GRACE_S = 1.0
"""Seconds a target's task is given to end once cancelled (at its deadline, or when the run or its event loop
ends); one still running then ignores its cancellation, and is abandoned: left to run, never waited for."""

_abandoned: set[asyncio.Task[Any]] = set()
"""The abandoned tasks still running, kept from the garbage collector (an event loop holds its tasks weakly)."""


class RunInterrupted(ExecutionError):
    """A run was cancelled (or interrupted with Ctrl-C); ``outcomes`` holds the finished case-trials.

    ``by_target`` holds them split by target, one list per target in the order
    given (one list for a one-target run); ``outcomes`` is every list of it
    joined, target after target. ``total`` counts the case-trials of one target.
    A suite's run (:meth:`~cogeval.EvalSuite.run`) also sets ``results``: one
    partial :class:`~cogeval.EvalSuiteResult` per suite (``status="interrupted"``,
    every finished answer and score), which saves like any run; ``result`` is the first.
    """

    results: list[Any]
    """The partial suite results (empty when the runner was used alone)."""

    def __init__(self, completed: int, total: int, outcomes: list[CaseOutcome],
                 by_target: list[list[CaseOutcome]] | None = None) -> None:
        by_target = [list(outcomes)] if by_target is None else by_target
        if len(by_target) > 1:
            counts = ", ".join(str(len(finished)) for finished in by_target)
            super().__init__(f"Run interrupted after {counts} of {total} cases (one count per target)")
        else:
            super().__init__(f"Run interrupted after {completed} of {total} cases")
        self.outcomes = outcomes
        self.by_target = by_target
        self.results = []

    @property
    def result(self) -> Any:
        """The first partial suite result, or ``None`` when the runner was used alone."""
        return self.results[0] if self.results else None


@dataclasses.dataclass(frozen=True)
class CaseOutcome:
    """The result of one trial of one case.

    ``index`` is the case's position in the list, ``occurrence`` counts earlier
    cases with the same key (0 for the first), ``trial`` is 0-based. ``output`` is
    the answer (text, or the number, bool, list or dict the target returned, JSON-safe;
    :data:`~cogeval.execution.target.ANSWER_RULE`), ``""`` when every attempt failed, and ``error`` then says why (``None`` on
    success). ``duration_s`` is the time of the final attempt (backoff waits are
    not counted): the latency the target reported itself
    (:attr:`TargetResponse.duration_s`), else for a sync function's answer its
    call timed in its own thread, else the attempt's wall-clock time (which can
    include the event loop's other work); tokens and cost are ``None`` when the
    target did not report them. ``attempts`` counts the calls made (1 +
    retries used); ``turns`` holds one :class:`TurnOutcome` per call of a
    multi-turn case, else ``None``.

    ``cost_usd`` is the money the case-trial spent: with the cost of the
    attempts a sync function target answered after their timeout (its thread
    kept running), when the answer came before the run ended; that part is
    also ``late_cost_usd`` (``None``: no late answer with a cost). An async
    target is cancelled at its deadline and returns nothing, so it has no late cost
    (one that ignores its cancellation is abandoned: whatever it returns is dropped).
    """

    index: int
    case: Case
    case_key: str
    occurrence: int
    trial: int
    output: Any
    error: str | None
    duration_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    trace_id: str | None = None
    prompt: dict[str, Any] | None = None
    tool_calls: Any = None
    attempts: int = 1
    turns: tuple[TurnOutcome, ...] | None = None
    late_cost_usd: float | None = None


async def _run_one(target: Target, case: Case, timeout: float, retries: int, backoff: float,
                   late: list[float]) -> dict[str, Any]:
    """Every attempt at one case-trial; returns the outcome's fields, with the ``late`` costs reported so far."""
    for attempt in range(retries + 1):
        started = time.perf_counter()
        error: BaseException | None = None
        response, turns = TargetResponse(""), None
        try:
            response, turns = await _attempt(target, case, timeout)
        except _Expired as exc:
            error, text = exc, str(exc)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():  # the run itself is being cancelled
                raise
            error = exc  # the target raised CancelledError on its own: a failure of this case only
            text = error_text(exc)
        except KeyboardInterrupt:  # the target passed on a Ctrl-C: the run stops, keeping what finished
            raise asyncio.CancelledError from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - recorded on the outcome; a target's exit() fails its case
            error = exc
            text = error_text(exc)
        duration = time.perf_counter() - started
        if error is None:
            if response.duration_s is not None:  # the target's own timing (a sync function's, in its thread) wins
                duration = response.duration_s
            return dict(output=response.output, error=None, duration_s=duration,
                        input_tokens=response.get("input_tokens"), output_tokens=response.get("output_tokens"),
                        trace_id=response.trace_id, prompt=response.prompt,
                        tool_calls=response.tool_calls, attempts=attempt + 1, turns=turns,
                        **_with_late(response.get("cost_usd"), late))
        if attempt == retries or not retryable(error):
            return dict(output="", error=text, duration_s=duration, attempts=attempt + 1, **_with_late(None, late))
        await asyncio.sleep(retry_delay(attempt, backoff, error))
    raise AssertionError("unreachable")


class _Expired(TimeoutError):
    """An attempt that outlived its timeout; the message is the case's error."""


_Answer = tuple[TargetResponse, tuple[TurnOutcome, ...] | None]


async def _attempt(target: Target, case: Case, timeout: float) -> _Answer:
    """One attempt: the target's call (a multi-turn case's conversation) in a task of its own, given ``timeout`` s.

    The task hands its answer, or its exception, to a future this awaits, which the deadline settles first
    when it comes first. Not ``asyncio.timeout`` around an ``await``, which waits for the cancelled call
    to end: past the deadline, or when the run is cancelled, the task is stopped (:func:`_stop`), so a
    target that ignores its cancellation cannot hold the run. Past the deadline this raises
    :class:`_Expired`. A future and a timer, not ``asyncio.wait``, which costs about 4 µs more per attempt
    (``benchmarks/README.md``, Runner).
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[_Answer | None] = loop.create_future()
    task = loop.create_task(_call(target, case, timeout, answer))
    deadline = loop.call_later(timeout, _expire, answer)
    try:
        result = await answer
    except asyncio.CancelledError:
        if not task.done():  # the run is being cancelled (not a CancelledError the target raised)
            await _stop(task)
        raise
    finally:
        deadline.cancel()
    if result is None:
        ended = await _stop(task)
        raise _Expired(f"Timed out after {timeout:g} s" if ended else
                       f"Timed out after {timeout:g} s; the target ignored its cancellation and was abandoned")
    return result


async def _call(target: Target, case: Case, timeout: float, answer: asyncio.Future[_Answer | None]) -> None:
    """The attempt's task: the target's answer to ``case``, or its exception, handed to ``answer`` unless the
    attempt gave up. A ``KeyboardInterrupt`` or ``SystemExit`` too: raised out of a task, it would leave
    the event loop itself, past the runner."""
    result: _Answer
    try:
        if case.turns is not None:
            result = await converse(target, case, timeout=timeout)
        else:
            result = await target.call(case, timeout=timeout), None
    except BaseException as exc:  # noqa: BLE001 - raised again where the attempt awaits it
        if not answer.done():
            answer.set_exception(exc)
        return
    if not answer.done():
        answer.set_result(result)


def _expire(answer: asyncio.Future[_Answer | None]) -> None:
    """The deadline: the attempt stops waiting for its answer (``None``)."""
    if not answer.done():
        answer.set_result(None)


async def _stop(task: asyncio.Task[None]) -> bool:
    """Cancel an attempt's task and wait for it at most :data:`CANCEL_GRACE_S`; whether it ended.

    One that did not is abandoned (:func:`_abandon`), also when this wait itself is cancelled.
    """
    task.cancel()
    try:
        await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
    finally:
        if not task.done():
            _abandon(task)
    return task.done()


def _abandon(task: asyncio.Task[Any]) -> None:
    """Leave ``task`` to run: held in ``_abandoned`` until it ends, and silent if its loop closes first."""
    task._log_destroy_pending = False  # type: ignore[attr-defined]  # no "Task was destroyed but it is pending!"
    _abandoned.add(task)
    task.add_done_callback(_abandoned.discard)


def _with_late(cost: float | None, late: list[float]) -> dict[str, float | None]:
    """``cost_usd`` and ``late_cost_usd`` of an outcome whose final attempt cost ``cost``."""
    if not late:
        return {"cost_usd": cost, "late_cost_usd": None}
    return {"cost_usd": (cost or 0.0) + sum(late), "late_cost_usd": sum(late)}


def _late_counter(slots: list[list[CaseOutcome | None]], position: int, job: int, early: list[float],
                  report: Callable[[CaseOutcome], None]) -> Callable[[float], None]:
    """The :data:`~cogeval.execution.target.late_cost` hook of one case-trial: a cost that comes before its
    outcome is recorded joins ``early``; after, the outcome is replaced by one counting it, and ``report``-ed."""
    def add(cost: float) -> None:
        outcome = slots[position][job]
        if outcome is None:
            early.append(cost)
            return
        slots[position][job] = outcome = dataclasses.replace(
            outcome, cost_usd=(outcome.cost_usd or 0.0) + cost, late_cost_usd=(outcome.late_cost_usd or 0.0) + cost)
        report(outcome)
    return add


def _checked(cases: Any, concurrency: Any, timeout: Any, retries: Any, trials: Any, backoff: Any) -> list[Case]:
    check_positive_int("concurrency", concurrency)
    check_timeout("timeout", timeout)
    check_positive_int("trials", trials)
    check_retries("retries", retries)
    if not is_real(backoff) or not 0 <= backoff <= MAX_BACKOFF_S:
        raise InputError(f"backoff must be a number of seconds in [0, {MAX_BACKOFF_S:g}]; got {describe(backoff)}")
    if isinstance(cases, (str, bytes, Case)) or not isinstance(cases, Iterable):
        raise InputError(f"cases must be a list of Case; got {describe(cases)}")
    cases = list(cases)
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise InputError(f"cases[{index}] must be a Case; got {describe(case)}")
    return cases


async def run_cases(
    cases: Iterable[Case],
    target: Any,
    *,
    concurrency: int = 5,
    timeout: float = 30.0,
    retries: int = 0,
    trials: int = 1,
    on_outcome: Callable[[CaseOutcome, int, int], None] | None = None,
    backoff: float = 0.5,
) -> list[CaseOutcome]:
    """Run every case ``trials`` times against ``target``; outcomes in (case, trial) order.

    - ``concurrency``: at most this many case-trials in flight at once.
    - ``timeout``: seconds per attempt (a multi-turn case's whole conversation is one attempt).
    - ``retries``: extra attempts (0 to 10) after an error or a timeout, waiting
      ``backoff · 2^k`` seconds (halved at random, at most 30 s; at least a
      429's ``Retry-After``). cogeval's input errors (a wrong return type) and
      HTTP 4xx errors other than 408, 409 and 429 are not retried.
    - ``on_outcome(outcome, completed, total)``: called after each case-trial
      finishes, in completion order; ``total`` = cases × trials.

    An outcome's ``duration_s`` is the time of its final attempt: the
    :attr:`TargetResponse.duration_s` the target reported, a sync function's call
    timed in its thread, else the wall clock (see :class:`CaseOutcome`). Cancelling the
    run (or Ctrl-C under :func:`run_sync`) stops the workers and raises
    :class:`RunInterrupted` carrying the finished outcomes. An exception raised
    by ``on_outcome`` stops the run and propagates.
    """
    target = as_target(target)
    callback = None if on_outcome is None else (lambda _, outcome, done, total: on_outcome(outcome, done, total))
    [outcomes] = await run_interleaved(cases, [target], concurrency=concurrency, timeout=timeout, retries=retries,
                                       trials=trials, on_outcome=callback, backoff=backoff)
    return outcomes


async def run_interleaved(
    cases: Iterable[Case],
    targets: Sequence[Any],
    *,
    concurrency: int = 5,
    timeout: float = 30.0,
    retries: int = 0,
    trials: int = 1,
    on_outcome: Callable[[int, CaseOutcome, int, int], None] | None = None,
    backoff: float = 0.5,
    jobs: Iterable[int] | None = None,
) -> list[list[CaseOutcome]]:
    """Run several targets over the same cases, interleaved; one outcome list per target.

    Each (case, trial) job is a group: the targets answer it back to back,
    one after the other, in an order that rotates by one target per job. Job
    ``g = index · trials + trial`` starts with target ``g mod n`` and goes on
    in the order given, wrapping round: with two targets A and B and one trial,
    case 0 runs A then B, case 1 B then A, case 2 A then B, ...; with three,
    ABC, BCA, CAB, ... So every target goes first (and last) equally often,
    and load that changes over time (another process, a warming cache, a
    rate-limited API) meets every target alike: a fair comparison of latency.

    ``concurrency`` bounds the jobs in flight (so at most ``concurrency``
    target calls are open at once); ``timeout``, ``retries``, ``trials`` and
    ``backoff`` are as :func:`run_cases` has them, per target call.
    ``on_outcome(target_index, outcome, completed, total)`` is called after
    each target's case-trial, with that target's count ``completed`` and
    ``total`` = cases × trials. Each target's list is in (case, trial) order,
    as :func:`run_cases` returns it. Cancelling raises :class:`RunInterrupted`
    with the finished outcomes of every target (``by_target``). When a late
    answer's cost comes after its outcome was reported (see :class:`CaseOutcome`),
    ``on_outcome`` is called again with the outcome that counts it (same counts).

    ``jobs`` limits the run to those job numbers (``index · trials + trial``),
    e.g. the case-trials an interrupted run lacks; the lists then hold only
    their outcomes, and ``total`` counts them.
    """
    if isinstance(targets, (str, bytes, Mapping)) or not isinstance(targets, Sequence) or not targets:
        raise InputError(f"targets must be a non-empty list of targets; got {describe(targets)}")
    for position, target in enumerate(targets):
        if not isinstance(target, (Target, Mapping)) and not callable(target):
            raise InputError(f"targets[{position}] must be a callable or a ChatTarget; got {describe(target)}")
    cases = _checked(cases, concurrency, timeout, retries, trials, backoff)
    targets = [as_target(target) for target in targets]
    for target in targets:  # imports and clients, before any attempt's deadline starts
        try:
            await target.prepare()
        except Exception:  # noqa: BLE001 - the first attempt meets the same error and records it on the case
            pass
    n = len(targets)
    seen: dict[str, int] = {}
    occurrences = []
    for case in cases:
        occurrences.append(seen.get(case.key, 0))
        seen[case.key] = occurrences[-1] + 1
    every_job = range(len(cases) * trials)
    chosen = every_job if jobs is None else sorted(_checked_jobs(jobs, len(every_job)))
    total = len(chosen)
    slots: list[list[CaseOutcome | None]] = [[None] * len(every_job) for _ in targets]
    completed = [0] * n
    pending = iter(chosen)  # job = index * trials + trial; shared by the workers

    def report(position: int, outcome: CaseOutcome) -> None:
        if on_outcome is not None:
            on_outcome(position, outcome, completed[position], total)

    async def worker() -> None:
        for job in pending:
            index, trial = divmod(job, trials)
            case = cases[index]
            for step in range(n):  # back to back, starting with target job mod n
                position = (job + step) % n
                early: list[float] = []
                late_cost.set(_late_counter(slots, position, job, early, functools.partial(report, position)))
                fields = await _run_one(targets[position], case, timeout, retries, backoff, early)
                outcome = CaseOutcome(index=index, case=case, case_key=case.key, occurrence=occurrences[index],
                                      trial=trial, **fields)
                slots[position][job] = outcome
                completed[position] += 1
                if on_outcome is not None:
                    on_outcome(position, outcome, completed[position], total)

    workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, total))]
    try:
        await asyncio.gather(*workers)
    except BaseException as exc:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
            finished = [[o for o in outcomes if o is not None] for outcomes in slots]
            raise RunInterrupted(sum(completed), total, [o for f in finished for o in f], finished) from None
        raise
    return [[o for o in outcomes if o is not None] for outcomes in slots]


def _checked_jobs(jobs: Iterable[int], count: int) -> set[int]:
    chosen = set(jobs)
    wrong = [j for j in chosen if not isinstance(j, int) or not 0 <= j < count]
    if wrong:
        raise InputError(f"jobs must be job numbers in [0, {count}); got {describe(wrong)}")
    return chosen


def run_sync(awaitable: Awaitable[Any] | Callable[[], Awaitable[Any]]) -> Any:
    """Run a coroutine (or a function making one) to completion from sync code.

    With no event loop running it runs in this thread's own loop; inside a running loop (a Jupyter cell) in
    a new thread with its own loop, and this call waits for it. Ctrl-C (SIGINT) cancels the coroutine, so a
    run raises :class:`RunInterrupted` keeping what finished, in a script, a notebook or any running loop;
    see :class:`_Interrupts` for a second and third Ctrl-C, and for SIGTERM and SIGHUP. The loop ends as
    :func:`asyncio.run`'s does, except that it never waits for an abandoned task (:func:`_run_loop`).
    """
    make = awaitable if callable(awaitable) else (lambda: awaitable)
    box: dict[str, Any] = {}

    async def main() -> Any:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if "stop" in box:  # Ctrl-C came before the loop did
            box["task"].cancel()
        return await make()

    def cancel() -> None:
        box["stop"] = True
        if "loop" in box:
            box["loop"].call_soon_threadsafe(box["task"].cancel)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with _Interrupts(cancel) as interrupts:
            try:
                return _run_loop(main())
            except asyncio.CancelledError:
                if interrupts.count:  # the coroutine did not make the cancellation its own exception
                    raise KeyboardInterrupt from None
                raise
    context = contextvars.copy_context()
    done = threading.Event()  # not Thread.join: on 3.11 a join that Ctrl-C broke returns early the next time

    def work() -> None:
        try:
            box["result"] = context.run(_run_loop, main())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()

    with _Interrupts(cancel) as interrupts:  # before the thread starts, which may reach a Ctrl-C at once
        threading.Thread(target=work, name="cogeval-run-sync", daemon=True).start()
        try:
            done.wait()
        except KeyboardInterrupt:  # a third Ctrl-C, or not the main thread (whose KeyboardInterrupt cancels once)
            if interrupts.count >= 3:
                raise
            cancel()
            done.wait()
            if not isinstance(box.get("error"), RunInterrupted):
                raise
    if interrupts.count and isinstance(box.get("error"), asyncio.CancelledError):
        raise KeyboardInterrupt from None
    if "error" in box:
        raise box["error"]
    return box.get("result")


def _run_loop(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(main)``, except that its end never waits for a task that ignores its cancellation.

    A new event loop runs ``main``; then the tasks still running are cancelled and given
    :data:`CANCEL_GRACE_S` to end (``asyncio.run`` waits for them forever), the tasks abandoned earlier
    (:func:`_stop`) are not waited for at all, async generators and the default executor are shut down,
    and the loop is closed. A task left running is let go with its loop, silently.

    >>> async def answer():
    ...     return 42
    >>> _run_loop(answer())
    42
    """
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_remaining(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
            _abandoned.difference_update([task for task in _abandoned if task.get_loop() is loop])


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the loop's tasks still running but not abandoned, and wait for them at most :data:`CANCEL_GRACE_S`;
    abandon those still running then, and report an exception one ended with, as ``asyncio.run`` does."""
    remaining = asyncio.all_tasks(loop) - _abandoned
    if not remaining:
        return
    for task in remaining:
        task.cancel()
    loop.run_until_complete(asyncio.wait(remaining, timeout=CANCEL_GRACE_S))
    for task in remaining:
        if not task.done():
            _abandon(task)
        elif not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler({"message": "unhandled exception during run_sync() shutdown",
                                         "exception": task.exception(), "task": task})


class _Interrupts:
    """Signals while :func:`run_sync` runs (in the main thread; elsewhere signals never arrive).

    Ctrl-C (SIGINT): the first cancels the run, which keeps what finished and raises :class:`RunInterrupted`;
    a second, while that is being done, is told to wait; a third gives up on it (``KeyboardInterrupt``).
    SIGTERM and SIGHUP (``docker stop``, a cancelled CI job, a closed terminal) cancel the run as a Ctrl-C does,
    so a checkpoint gets the run so far; then, unless the program handles that signal itself, the process ends
    by it as it would have (exit status 128 + the signal's number). The caller's own handlers are back after.
    """

    _SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel, self.count = cancel, 0
        self.previous: dict[int, Any] = {}
        self.terminated: int | None = None

    def __call__(self, signum: int, frame: Any) -> None:
        if signum != signal.SIGINT:
            if self.terminated is None:
                self.terminated = signum
                self.count += 1
                self.cancel()
            return
        self.count += 1
        if self.count == 1:
            self.cancel()
        elif self.count == 2:
            sys.stderr.write("cogeval: stopping and keeping the answers so far; Ctrl-C again to abandon them\n")
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for number in self._SIGNALS:
                if signal.getsignal(number) is not signal.SIG_IGN:
                    self.previous[number] = signal.signal(number, self)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, previous in self.previous.items():  # None: a handler not set from Python; the default then
            signal.signal(number, signal.SIG_DFL if previous is None else previous)
        ended = self.terminated
        if ended is not None and self.previous.get(ended, signal.SIG_DFL) in (None, signal.SIG_DFL):
            sys.stderr.write(f"cogeval: {signal.Signals(ended).name}: the run stopped; what finished is in its "
                             "checkpoint, if it had one\n")
            sys.stderr.flush()
            signal.raise_signal(ended)
