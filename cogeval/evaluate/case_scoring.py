"""A case's metrics, scored off the event loop, each score within ``timeout`` seconds.

Sync metrics run one after another in a worker thread, so a slow or looping metric never stalls the
target calls, the progress bar or Ctrl-C. A score that takes longer than ``timeout`` is an error on
that case (``"metric 'm' took over 60 s; ..."``) and the case's other metrics go on in another worker;
the stuck thread is a daemon, left to finish on its own, and never holds up the interpreter's exit.
Async metrics are awaited on the loop within the same timeout. Judged metrics are bounded by their
judge's own ``timeout`` and ``retries`` (:class:`~cogeval.JudgeConfig`) instead.

>>> import asyncio
>>> from cogeval import exact_match
>>> from cogeval.data import Case
>>> asyncio.run(score_case([exact_match()], "4", Case("2+2", expected="4"), judge=None, timeout=60))
[Score(value=1.0, details=None, error=None)]
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from cogeval.scoring import Metric, Score


async def score_case(metrics: Sequence[Any], output: Any, case: Any, *, judge: Any, timeout: float) -> list[Score]:
    """The scores of ``output`` by every metric, in order: the sync ones in a worker thread, the others on the loop."""
    in_thread = [m for m in metrics if _runs_in_thread(m)]
    on_loop = [m for m in metrics if not _runs_in_thread(m)]

    async def awaited() -> list[Score]:
        return [await _score_on_loop(m, output, case, judge, timeout) for m in on_loop]

    threaded, looped = await asyncio.gather(_score_in_thread(in_thread, output, case, timeout), awaited())
    by_metric = dict(zip(map(id, in_thread), threaded)) | dict(zip(map(id, on_loop), looped))
    return [by_metric[id(m)] for m in metrics]


def _runs_in_thread(metric: Any) -> bool:
    """A :class:`Metric` whose ``compute`` (or ``fn``) is a plain function; judged and async ones stay on the loop."""
    if not isinstance(metric, Metric) or metric.requires_judge:
        return False
    own = type(metric).compute is Metric.compute
    return not inspect.iscoroutinefunction(metric.fn if own else metric.compute)


async def _score_on_loop(metric: Any, output: Any, case: Any, judge: Any, timeout: float) -> Score:
    if getattr(metric, "requires_judge", False):
        return await metric.ascore(output, case, judge=judge)  # type: ignore[no-any-return]
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await metric.ascore(output, case)  # type: ignore[no-any-return]
    except TimeoutError:
        if deadline.expired():
            return _timed_out(metric, timeout)
        raise


@dataclasses.dataclass
class _Job:
    """One case's sync metrics for a worker: ``raw`` gets each one's (result, error) in turn, and ``position``
    the index of the metric being computed with when it started (one assignment, so the loop reads it whole)."""

    metrics: Sequence[Metric]
    output: Any
    case: Any
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]
    raw: list[tuple[Any, BaseException | None]] = dataclasses.field(default_factory=list)
    position: tuple[int, float] = (0, 0.0)
    abandoned: bool = False

    def __call__(self) -> None:
        for index, metric in enumerate(self.metrics):
            self.position = (index, time.monotonic())
            try:
                outcome: tuple[Any, BaseException | None] = (metric.compute(self.output, self.case), None)
            except BaseException as error:  # noqa: BLE001 - a metric's exit() or error is its score's error
                outcome = (None, error)
            if self.abandoned:
                return
            self.raw.append(outcome)
        self.position = (len(self.metrics), time.monotonic())
        try:
            self.loop.call_soon_threadsafe(self._settle)
        except RuntimeError:  # the loop closed meanwhile: nobody waits
            pass


    def _settle(self) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _score_in_thread(metrics: Sequence[Metric], output: Any, case: Any, timeout: float) -> list[Score]:
    """Score with each of ``metrics`` in turn in a worker thread; one that takes over ``timeout`` is an error
    score, and the rest go on in another worker."""
    scores: list[Score] = []
    while len(scores) < len(metrics):
        loop = asyncio.get_running_loop()
        job = _Job(metrics[len(scores):], output, case, loop, loop.create_future(), position=(0, time.monotonic()))
        _WORKERS.submit(job)
        try:
            while not job.done.done():
                index, started = job.position  # the metric at work, and since when
                left = None if index == len(job.metrics) else started + timeout - time.monotonic()
                if left is not None and left <= 0:
                    break
                await asyncio.wait({job.done}, timeout=left)
        finally:
            job.abandoned = not job.done.done()
        raw = job.raw[:index] if job.abandoned else job.raw
        scores += [await _finished(m, result, error, timeout) for m, (result, error) in zip(job.metrics, raw)]
        if job.abandoned:
            scores.append(_timed_out(job.metrics[index], timeout))
    return scores


async def _finished(metric: Metric, result: Any, error: BaseException | None, timeout: float) -> Score:
    """The score of what ``metric.compute`` gave in a worker; an awaitable it returned is awaited here."""
    if error is None and inspect.isawaitable(result):
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                result = await result
        except Exception as failure:  # noqa: BLE001 - a scoring failure is data, not a crash
            if deadline.expired():
                return _timed_out(metric, timeout)
            error = failure
    if error is not None:
        return metric._error(f"raised {type(error).__name__}: {error}")
    return metric.to_score(result)


def _timed_out(metric: Any, timeout: float) -> Score:
    return Score(float("nan"), None, f"metric {metric.name!r} took over {timeout:g} s (metric_timeout); "
                                     "its score is left out")


class _Workers:
    """Daemon threads that run jobs: an idle one takes the next job, else a new one is started."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.idle = 0
        self.lock = threading.Lock()

    def submit(self, job: _Job) -> None:
        with self.lock:  # every job put is one an idle worker is counted for
            if self.idle:
                self.idle -= 1
                self.jobs.put(job)
                return
        threading.Thread(target=self._work, args=(job,), name="cogeval-metrics", daemon=True).start()

    def _work(self, job: _Job) -> None:
        while True:
            job()
            with self.lock:
                self.idle += 1
            job = self.jobs.get()


_WORKERS = _Workers()
