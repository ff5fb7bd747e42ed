"""EvalSuite: run a dataset against a target, score every answer, check assertions.

>>> from cogeval import Dataset, EvalSuite, exact_match
>>> data = Dataset.from_records([{"input": "2+2", "expected": "4"}, {"input": "3+3", "expected": "6"}])
>>> result = EvalSuite(data, lambda q: str(eval(q)), metrics=[exact_match()], progress=False).run()
>>> result.aggregated["exact_match"].mean
1.0

:func:`arun_interleaved` runs several suites over the same cases at once,
each case's targets back to back in an order that rotates per case (see
:func:`~cogeval.execution.run_interleaved`), so changing load meets every
target alike; ``EvalComparison`` and ``run_variants`` run their suites so,
and :meth:`EvalSuite.arun` is its one-suite case.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import os
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cogeval._check import check_json_metadata, check_positive_int, check_retries, check_timeout, describe
from cogeval.data import Case, Dataset, EvalRun
from cogeval.data.run_id import iso_utc, new_run_id, utc_now
from cogeval.errors import InputError
from cogeval.evaluate.case_scoring import score_case
from cogeval.evaluate.progress import ProgressBar
from cogeval.evaluate.result import CaseResult, EvalSuiteResult
from cogeval.evaluate.resume import Checkpoint, Finished, earlier_work
from cogeval.evaluate.run_record import result_record, run_stats, suite_run
from cogeval.evaluate.shards import check_shard, shard_jobs
from cogeval.execution import RunInterrupted, as_target, run_interleaved, run_sync
from cogeval.scoring import JudgeConfig, Metric, StatisticalMetric
from cogeval.stats import aggregate


def as_dataset(dataset: Any) -> Dataset:
    """Accept a :class:`Dataset`, or a list of cases or records."""
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, (list, tuple)):
        if all(isinstance(c, Case) for c in dataset):
            return Dataset(list(dataset))
        return Dataset.from_records(list(dataset))
    raise InputError(f"dataset must be a Dataset or a list of cases or records; got {describe(dataset)}")


_HINTS = {
    "metrics": "per-case metrics such as exact_match() or ones made with metric(...)",
    "statistical_metrics": "run-level metrics such as latency(), cost() or token_usage()",
}


def _not_a_list(items: Any) -> bool:
    """True for a single item (a metric, an assertion, a string) where a list of them is expected."""
    return isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable) or hasattr(items, "name")


def _is_kind(kind: str, m: Any) -> bool:
    if kind == "metrics":
        return isinstance(m, Metric) or (callable(getattr(m, "ascore", None)) and not isinstance(m, StatisticalMetric))
    return isinstance(m, StatisticalMetric) or (callable(getattr(m, "compute", None)) and not isinstance(m, Metric))


def _not_a_metric(kind: str, index: int, item: Any) -> str:
    """Why ``item`` is no metric; for one of cogeval's factories passed uncalled (``metrics=[exact_match]``): call it."""
    if inspect.isfunction(item) and item.__module__.startswith("cogeval.scoring"):
        return f"{kind}[{index}] is the function {item.__name__}, which makes a metric: call it, {item.__name__}()"
    hint = ""
    if callable(item) and not isinstance(item, type):
        hint = "; a function of (output, case) becomes one with @metric(\"name\")"
    return f"{kind} must hold metrics (made with metric(...) or the built-ins); got {describe(item)}{hint}"


def _unique_names(kind: str, metrics: Iterable[Any]) -> list[Any]:
    if _not_a_list(metrics):
        raise InputError(f"{kind} must be a list of {_HINTS[kind]}; got {describe(metrics)}")
    metrics = list(metrics)
    seen: set[str] = set()
    for index, m in enumerate(metrics):
        name = getattr(m, "name", None)
        if not isinstance(name, str):
            raise InputError(_not_a_metric(kind, index, m))
        if not _is_kind(kind, m):
            other = "statistical_metrics" if kind == "metrics" else "metrics"
            hint = f" (it belongs in {other}=)" if _is_kind(other, m) else ""
            raise InputError(f"{kind}[{index}] must be one of the {_HINTS[kind]}; got {describe(m)}{hint}")
        if name in seen:
            raise InputError(f"{kind} has two metrics named {name!r}; give one of them another name")
        seen.add(name)
    return metrics


class EvalSuite:
    """A dataset, a target, metrics and assertions, ready to run.

    ``run()`` works in a script and inside Jupyter's running event loop;
    ``await arun()`` is the async form. ``timeout`` is seconds per attempt of the
    target; ``metric_timeout`` seconds per score (default 60): sync metrics run in
    worker threads, off the event loop, and a score that takes longer is an error
    on that case (judged metrics are bounded by their judge's ``timeout`` instead).
    """

    def __init__(
        self,
        dataset: Any,
        target: Any,
        metrics: Sequence[Metric] = (),
        statistical_metrics: Sequence[Any] = (),
        judge: Any = None,
        assertions: Sequence[Any] = (),
        concurrency: int = 5,
        timeout: float = 30.0,
        retries: int = 0,
        trials: int = 1,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        progress: bool = True,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        metric_timeout: float = 60.0,
    ) -> None:
        self.dataset = as_dataset(dataset)
        self.target = as_target(target)
        self.metrics = _unique_names("metrics", metrics)
        self.statistical_metrics = _unique_names("statistical_metrics", statistical_metrics)
        clash = {m.name for m in self.metrics} & {m.name for m in self.statistical_metrics}
        if clash:
            raise InputError(f"metrics and statistical_metrics both have a metric named {sorted(clash)[0]!r}")
        judged = [m for m in self.metrics if getattr(m, "requires_judge", False)]
        needing_judge = [m.name for m in judged if getattr(m, "judge", None) is None]  # a metric's own judge wins
        if needing_judge and judge is None:
            raise InputError(f"metric {needing_judge[0]!r} needs a judge: pass judge=JudgeConfig(model=...) to the "
                             "suite or to the metric")
        if judge is not None and not isinstance(judge, JudgeConfig):
            raise InputError(f"judge must be a JudgeConfig(model=...) or None; got {describe(judge)}")
        self.judge = judge
        if _not_a_list(assertions):
            raise InputError(
                "assertions must be a list of threshold(...), no_regression(...) or assertion(...); "
                f"got {describe(assertions)}"
            )
        self.assertions = list(assertions)
        for index, item in enumerate(self.assertions):
            if not callable(getattr(item, "check", None)):
                raise InputError(
                    f"assertions[{index}] must be made with threshold(...), no_regression(...) or assertion(...); "
                    f"got {describe(item)}"
                )
        self.concurrency = check_positive_int("concurrency", concurrency)
        self.timeout = check_timeout("timeout", timeout)
        self.retries = check_retries("retries", retries)
        self.trials = check_positive_int("trials", trials)
        self.metric_timeout = check_timeout("metric_timeout", metric_timeout)
        if on_progress is not None and not callable(on_progress):
            raise InputError(f"on_progress must be a callable taking a dict; got {describe(on_progress)}")
        self.on_progress = on_progress
        self.progress = bool(progress)
        if name is not None and not isinstance(name, str):
            raise InputError(f"name must be a string; got {describe(name)}")
        self.name = name
        self.metadata = check_json_metadata("metadata", metadata)
        if judged:  # a judge (the suite's or a metric's own) that judges its own model's answers: say so now
            from cogeval.errors import SelfPreferenceWarning
            from cogeval.scoring.judge import self_preference_message

            judges = [getattr(m, "judge", None) or self.judge for m in judged]
            for message in dict.fromkeys(self_preference_message(j, self.target) for j in judges):  # each once
                if message is not None:
                    warnings.warn(message, SelfPreferenceWarning, stacklevel=2)

    def __repr__(self) -> str:
        names = [m.name for m in self.metrics + self.statistical_metrics]
        return f"EvalSuite(name={self.name!r}, cases={len(self.dataset)}, target={self.target!r}, metrics={names})"

    def run(self, max_cases: int | None = None, *, resume: Any = None, retry_errors: bool = True,
            checkpoint: str | os.PathLike[str] | None = None, checkpoint_every: float = 30.0,
            rescore_changed: bool = False, shard: tuple[int, int] | None = None) -> EvalSuiteResult:
        """Run the suite and return its result (also inside a running event loop).

        - Ctrl-C (or cancelling) raises :class:`~cogeval.execution.RunInterrupted`
          whose ``result`` is the run so far (``status="interrupted"``): every
          finished answer, and the scores of the answers scored; save it like any run.
        - ``resume``: an earlier run of this suite (an :class:`EvalRun`, a result or a
          run-file path, e.g. an interrupted one or a checkpoint). Only the case-trials
          it lacks are run, and with ``retry_errors`` (the default) those the target
          failed; only answers without scores (or, with ``retry_errors``, with a failed
          score) are scored, the judge's cache answering what it judged before. The
          result is one complete run under the earlier run's id. Another dataset,
          another target, or a metric of the same name made otherwise (parameters,
          direction, judge) is refused; ``rescore_changed=True`` scores such metrics afresh.
        - ``checkpoint``: a run-file path (or a folder) the run so far is written to
          (atomically) at most every ``checkpoint_every`` seconds as case-trials finish,
          on Ctrl-C, and, complete, at the end; after a crash, ``resume=`` it. Checked
          before the first call; it never overwrites another run; a failed write warns.
        - ``shard``: ``(index, count)`` runs only the cases of shard ``index`` of ``count``
          (:mod:`cogeval.evaluate.shards`: a hash of each case's key and occurrence, whole with its
          trials); the run records ``shard``, the whole dataset's fingerprint and case count, and
          checks no assertions (they judge the whole run). :func:`~cogeval.merge_runs` makes the
          shards one run (docs/distributed.md). A shard resumes only from a run of the same shard.

        A per-case metric with no score on any case (every judge call failed, say) fails the run
        (:attr:`~EvalSuiteResult.failures`, ``exit_code`` 2) and gets a ``UserWarning`` when the run ends.
        """
        result: EvalSuiteResult = run_sync(self._arun(
            max_cases, resume=resume, retry_errors=retry_errors, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, rescore_changed=rescore_changed, shard=shard))
        result._warn_failed_metrics()
        return result

    async def arun(self, max_cases: int | None = None, *, resume: Any = None, retry_errors: bool = True,
                   checkpoint: str | os.PathLike[str] | None = None, checkpoint_every: float = 30.0,
                   rescore_changed: bool = False, shard: tuple[int, int] | None = None) -> EvalSuiteResult:
        """Async form of :meth:`run`."""
        result = await self._arun(max_cases, resume=resume, retry_errors=retry_errors, checkpoint=checkpoint,
                                  checkpoint_every=checkpoint_every, rescore_changed=rescore_changed, shard=shard)
        result._warn_failed_metrics()
        return result

    async def _arun(self, max_cases: int | None = None, *, resume: Any = None, retry_errors: bool = True,
                    checkpoint: str | os.PathLike[str] | None = None, checkpoint_every: float = 30.0,
                    rescore_changed: bool = False, shard: tuple[int, int] | None = None) -> EvalSuiteResult:
        """:meth:`arun` without its warnings, which :meth:`run` gives in the caller's thread."""
        part = None if shard is None else check_shard(shard)
        keeper = None if checkpoint is None else Checkpoint(checkpoint, checkpoint_every)
        [result] = await _run_suites([self], max_cases, resume=resume, retry_errors=retry_errors, checkpoint=keeper,
                                     rescore_changed=rescore_changed, shard=part)
        return result

    async def _score(self, work: Finished, on_scored: Callable[[int], None]) -> None:
        """Score every answer of ``work`` that has no scores yet, keeping each result as it is done."""
        limit = asyncio.Semaphore(self.concurrency)

        async def score_one(job: int, outcome: Any) -> None:
            async with limit:
                scores = await score_case(self.metrics, outcome.output, outcome.case, judge=self.judge,
                                          timeout=self.metric_timeout)
            work.results[job] = CaseResult.from_outcome(outcome, {m.name: s for m, s in zip(self.metrics, scores)})
            on_scored(job)

        await asyncio.gather(*(score_one(job, outcome) for job, outcome in work.unscored()))

    def _result(self, results: list[CaseResult], run_id: str, started_at: str, duration: float, dataset: dict[str, Any],
                status: str | None = None, shard: tuple[int, int] | None = None) -> EvalSuiteResult:
        """The result: the run (built and validated once, here) and the live ``results``; ``dataset`` is the
        ``{fingerprint, cases}`` of the cases run; ``status`` is ``"interrupted"`` for a run stopped early;
        ``shard`` the ``(index, count)`` of a shard run."""
        head, per_case = self._run_head(results, run_id, started_at, duration, dataset, status, shard)
        if per_case:  # written with each result, so a comparison of the run files can pair them
            results = [dataclasses.replace(r, statistical_values={name: column[i] for name, column in per_case.items()})
                       for i, r in enumerate(results)]
        return EvalSuiteResult(suite_run(results=results, **head), results)

    def _run_head(self, results: list[CaseResult], run_id: str, started_at: str, duration: float,
                  dataset: dict[str, Any], status: str | None,
                  shard: tuple[int, int] | None) -> tuple[dict[str, Any], dict[str, list[float]]]:
        """What the run of ``results`` holds beside them (:func:`suite_run`'s other arguments), and the
        per-case values of each statistical metric that writes them, in the order of ``results``."""
        aggregated = {m.name: aggregate([r.scores[m.name].value for r in results if m.name in r.scores])
                      for m in self.metrics}  # an interrupted run has answers not yet scored
        per_case: dict[str, list[float]] = {}
        for m in self.statistical_metrics:
            aggregated[m.name], values = _run_level(m, results)
            if values is not None and getattr(m, "writes_per_case", False):
                per_case[m.name] = values
        directions = {m.name: m.higher_is_better for m in self.metrics + self.statistical_metrics}
        checks = [] if shard is not None else [a.check(aggregated, directions) for a in self.assertions]
        judge_metrics = {m.name for m in self.metrics if getattr(m, "requires_judge", False)}
        judged = self.judge is not None or any(isinstance(getattr(m, "judge", None), JudgeConfig) for m in self.metrics)
        return dict(
            run_id=run_id, name=self.name, metadata=self.metadata, status=status, shard=shard,
            started_at=started_at, finished_at=iso_utc(utc_now()), dataset=dataset, config=self.config(),
            aggregated=aggregated, assertions=checks,
            stats=run_stats(results, judge_metrics, duration, judged=judged),  # every judge: the suite's, a metric's
        ), per_case

    def _checkpoint_parts(self, results: list[CaseResult], run_id: str, started_at: str, duration: float,
                          dataset: dict[str, Any],
                          shard: tuple[int, int] | None) -> tuple[EvalRun, Callable[[int], dict[str, Any]]]:
        """The interrupted run of ``results`` as a checkpoint writes it: its head (no results), and a function
        that makes the record of ``results[position]`` (:class:`~cogeval.evaluate.resume.Checkpoint`)."""
        head, per_case = self._run_head(results, run_id, started_at, duration, dataset, "interrupted", shard)

        def record(position: int) -> dict[str, Any]:
            values = {name: column[position] for name, column in per_case.items()}
            result = results[position]
            return result_record(dataclasses.replace(result, statistical_values=values) if values else result,
                                 indexed=shard is not None)

        return suite_run(results=[], **head), record

    def config(self) -> dict[str, Any]:
        """How this suite runs, as the run file's ``config``: metrics, judge, trials, concurrency, target, timeoutS, retries."""
        return {
            "metrics": [m.describe() for m in self.metrics],
            "statistical_metrics": [m.describe() for m in self.statistical_metrics],
            "judge": self.judge.describe() if self.judge is not None else None,
            "trials": self.trials,
            "concurrency": self.concurrency,
            "target": self.target.describe(),
            "timeoutS": self.timeout,
            "retries": self.retries,
        }


_SHARED_OPTIONS = ("concurrency", "timeout", "retries", "trials")


def _check_suites(suites: Any) -> list[EvalSuite]:
    """Suites that can run interleaved: the same cases and the same run options."""
    if isinstance(suites, (str, bytes, EvalSuite)) or not isinstance(suites, Sequence) or not suites:
        raise InputError(f"suites must be a non-empty list of EvalSuite; got {describe(suites)}")
    suites = list(suites)
    for index, suite in enumerate(suites):
        if not isinstance(suite, EvalSuite):
            raise InputError(f"suites[{index}] must be an EvalSuite; got {describe(suite)}")
    first = suites[0]
    for index, suite in enumerate(suites[1:], start=1):
        for option in _SHARED_OPTIONS:
            if getattr(suite, option) != getattr(first, option):
                raise InputError(
                    f"suites[{index}] has {option}={getattr(suite, option)!r} but suites[0] has "
                    f"{getattr(first, option)!r}; interleaved suites must share {', '.join(_SHARED_OPTIONS)}"
                )
        if suite.dataset is not first.dataset and suite.dataset.fingerprint != first.dataset.fingerprint:
            raise InputError(f"suites[{index}] has another dataset than suites[0]; interleaved suites must run the same cases")
    return suites


async def arun_interleaved(suites: Sequence[EvalSuite], max_cases: int | None = None) -> list[EvalSuiteResult]:
    """Run several suites over the same cases, interleaved; one result per suite, in order.

    The targets answer each (case, trial) back to back, in an order rotating by
    one target per case-trial (with two suites A and B and one trial: case 0 A
    then B, case 1 B then A, ...; see :func:`~cogeval.execution.run_interleaved`),
    so load that changes over time meets every target alike and their latencies
    compare fairly. Up to ``concurrency`` case-trials are in flight at once.

    The suites must share their dataset, ``concurrency``, ``timeout``,
    ``retries`` and ``trials`` (an :class:`InputError` names the first
    difference); each keeps its own target, metrics, judge, assertions, name,
    metadata, progress bar and ``on_progress``. Each result is what the
    suite's own :meth:`EvalSuite.arun` gives: its own ``run_id``, the common
    start time, and its end and duration when its scoring is done. Cancelling
    (or Ctrl-C under ``run_sync``) raises
    :class:`~cogeval.execution.RunInterrupted` with every target's finished
    outcomes in ``by_target``. A per-case metric with no score on any case warns as in :meth:`EvalSuite.run`.
    """
    results = await _run_suites(suites, max_cases)
    for result in results:
        result._warn_failed_metrics()
    return results


async def _run_suites(suites: Sequence[EvalSuite], max_cases: int | None, *, resume: Any = None,
                      retry_errors: bool = True, checkpoint: Checkpoint | None = None,
                      rescore_changed: bool = False, shard: tuple[int, int] | None = None) -> list[EvalSuiteResult]:
    """:func:`arun_interleaved`, and for one suite its ``resume``, ``checkpoint`` and ``shard``: keeps every
    answer and score as it comes, so Ctrl-C raises :class:`RunInterrupted` with the partial results."""
    suites = _check_suites(suites)
    first = suites[0]
    cases = list(first.dataset)
    if max_cases is not None:
        cases = cases[: check_positive_int("max_cases", max_cases)]
    ran = first.dataset if len(cases) == len(first.dataset) else Dataset(cases)
    dataset = {"fingerprint": ran.fingerprint, "cases": len(cases)}  # of the cases run (all shards'), for every run
    started = utc_now()
    clock = time.perf_counter()
    works = [Finished(run_id=new_run_id(started), started_at=iso_utc(started)) for _ in suites]
    if resume is not None:  # one suite: EvalSuite.arun
        works[0] = earlier_work(first, cases, resume, retry_errors=bool(retry_errors),
                                rescore_changed=bool(rescore_changed), shard=shard)
    if checkpoint is not None:
        checkpoint.start(str(works[0].run_id))
        for job in works[0].outcomes:  # what a resumed run did before: in every checkpoint of it
            checkpoint.keep(job, works[0].results.get(job) or CaseResult.from_outcome(works[0].outcomes[job], {}))
    chosen = range(len(cases) * first.trials) if shard is None else shard_jobs(cases, first.trials, shard)
    todo = [job for job in chosen if job not in works[0].outcomes]

    def result(position: int, status: str | None = None) -> EvalSuiteResult:
        work = works[position]
        duration = work.duration_s + time.perf_counter() - clock
        return suites[position]._result(work.case_results(), str(work.run_id), str(work.started_at), duration, dataset,
                                        status, shard)

    def keep(position: int, job: int) -> None:
        """Give the checkpoint (the one suite's) the latest result of ``job``; it writes the run so far when due."""
        if checkpoint is None or position != 0:
            return
        work = works[0]
        checkpoint.keep(job, work.results.get(job) or CaseResult.from_outcome(work.outcomes[job], {}))
        checkpoint.write_soon(lambda results: first._checkpoint_parts(
            results, str(work.run_id), str(work.started_at), work.duration_s + time.perf_counter() - clock, dataset,
            shard))

    callback_failed: set[int] = set()  # the suites whose on_progress raised (warned once)

    def on_outcome(position: int, outcome: Any, completed: int, count: int) -> None:
        """Keep ``outcome`` (one reported again counts a late cost: it replaces the kept one, scored or not, and
        is no progress); an ``on_progress`` that raises gets one ``RuntimeWarning`` and the run goes on."""
        work, job = works[position], outcome.index * first.trials + outcome.trial
        again, work.outcomes[job] = job in work.outcomes, outcome
        if again and job in work.results:
            work.results[job] = dataclasses.replace(work.results[job], cost_usd=outcome.cost_usd,
                                                    late_cost_usd=outcome.late_cost_usd)
        keep(position, job)
        if again:
            return
        bars[position].update()
        callback = suites[position].on_progress
        try:
            if callback is not None:
                callback({"completed": completed, "total": count, "current_case": outcome.case})
        except Exception as error:  # noqa: BLE001 - a progress display must not throw away the run
            if position not in callback_failed:
                callback_failed.add(position)
                warnings.warn(f"on_progress raised {type(error).__name__}: {error}; the run goes on and keeps every "
                              "case (further errors of this callback are not reported)", RuntimeWarning, stacklevel=2)

    async def finish(position: int) -> EvalSuiteResult:
        await suites[position]._score(works[position], functools.partial(keep, position))
        return result(position)

    try:
        with contextlib.ExitStack() as stack:
            bars = [stack.enter_context(ProgressBar(s.progress, len(todo), s.name)) for s in suites]
            await run_interleaved(cases, [s.target for s in suites], concurrency=first.concurrency,
                                  timeout=first.timeout, retries=first.retries, trials=first.trials,
                                  on_outcome=on_outcome, jobs=todo)
        results = list(await asyncio.gather(*(finish(i) for i in range(len(suites)))))
    except (RunInterrupted, asyncio.CancelledError):
        partial = [result(i, "interrupted") for i in range(len(suites))]
        if checkpoint is not None:
            checkpoint.write(partial[0].run)
        by_target = [[work.outcomes[job] for job in sorted(work.outcomes)] for work in works]
        stop = RunInterrupted(sum(map(len, by_target)), len(chosen), [o for f in by_target for o in f], by_target)
        stop.args = (f"{stop}; the run so far is this exception's .result (status 'interrupted'): "
                     f"save it with .result.save_run(path), finish it with suite.run({_shard_argument(shard)}resume=path)"
                     if len(suites) == 1 else
                     f"{stop}; each run so far is in this exception's .results (status 'interrupted'), to save",)
        stop.results = partial
        raise stop from None
    if checkpoint is not None:
        checkpoint.write(results[0].run)
    return results


def _shard_argument(shard: tuple[int, int] | None) -> str:
    """``"shard=(1, 4), "`` for a shard run's message (nothing otherwise)."""
    return "" if shard is None else f"shard={shard}, "


def _run_level(metric: Any, results: list[CaseResult]) -> tuple[Any, list[float] | None]:
    """A statistical metric's aggregate and per-case values (None when unknown).

    A :class:`StatisticalMetric`'s aggregate is that of its per-case values
    (read once); another object with ``compute`` gives only its aggregate. One
    that fails gives NaN fields, no values and a warning, never a lost run.
    """
    try:
        if isinstance(metric, StatisticalMetric):
            values = metric.values(results)
            return aggregate(values), values
        return metric.compute(results), None
    except Exception as error:  # noqa: BLE001 - the target calls are done: keep every result
        warnings.warn(f"statistical metric {metric.name!r} failed, its aggregate is NaN: {error}", RuntimeWarning, stacklevel=3)
        return aggregate([]), None
