"""A suite run's finished work: kept as it comes, written to a checkpoint, picked up again by a resumed run.

A job is one case-trial, numbered ``index · trials + trial``. :class:`Finished`
holds, per job, the target's answer (a :class:`~cogeval.execution.CaseOutcome`)
and, once every metric has scored it, the :class:`CaseResult`. An interrupted
run is made of it (answers not yet scored have no scores), and so is a
checkpoint; :func:`earlier_work` reads an earlier run back into it, so a
resumed run asks the target only for the jobs that run lacks (or failed, with
``retry_errors``) and scores only the answers that have no scores yet (or a
failed score, with ``retry_errors``).

>>> from cogeval import Case, EvalSuite, exact_match
>>> suite = EvalSuite([Case("a", expected="A"), Case("b", expected="B")], str.upper, metrics=[exact_match()], progress=False)
>>> run = suite.run().run
>>> earlier = run.model_copy(update={"results": run.results[:1]})  # as if stopped after the first case
>>> work = earlier_work(suite, list(suite.dataset), earlier, retry_errors=True)
>>> sorted(work.outcomes), sorted(work.results)
([0], [0])
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import pathlib
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from cogeval._check import check_path, is_real
from cogeval.data import Case, Dataset, EvalRun
from cogeval.data.records import ConfigRecord, MetricRecord
from cogeval.data.run_id import check_run_id
from cogeval.data.run_writer import RunFileWriter
from cogeval.data.runfile import as_run, load_run
from cogeval.errors import InputError
from cogeval.evaluate.result import CaseResult
from cogeval.evaluate.shards import shard_text
from cogeval.execution import CaseOutcome
from cogeval.execution.target import TurnOutcome
from cogeval.scoring import Score


@dataclasses.dataclass
class Finished:
    """One suite's finished jobs: ``outcomes`` (answers) and ``results`` (answers with every score), by job.

    Read from an earlier run, it also keeps that run's ``run_id``, ``started_at`` and ``duration_s``:
    the resumed run goes on under the same id, and its duration adds up both sessions.
    """

    outcomes: dict[int, CaseOutcome] = dataclasses.field(default_factory=dict)
    results: dict[int, CaseResult] = dataclasses.field(default_factory=dict)
    run_id: str | None = None
    started_at: str | None = None
    duration_s: float = 0.0

    def unscored(self) -> list[tuple[int, CaseOutcome]]:
        """The answered jobs that have no scores yet, in job order."""
        return [(job, self.outcomes[job]) for job in sorted(self.outcomes) if job not in self.results]

    def case_results(self) -> list[CaseResult]:
        """Every answered job in job order: scored, or its answer with no scores."""
        return [self.results.get(job) or CaseResult.from_outcome(self.outcomes[job], {}) for job in sorted(self.outcomes)]


def earlier_work(suite: Any, cases: Sequence[Case], run: Any, *, retry_errors: bool,
                 rescore_changed: bool = False, shard: tuple[int, int] | None = None) -> Finished:
    """What ``run`` (an :class:`EvalRun`, a suite result or a run-file path) already did of ``suite`` (an
    :class:`~cogeval.EvalSuite`) over ``cases`` (in ``shard``, ``(index, count)``, of them).

    Refuses (:class:`~cogeval.errors.InputError`) a run of other cases (another
    dataset fingerprint), of another shard (or a whole run for a shard, and the
    other way round) or of another target. A result the target failed is
    kept only without ``retry_errors``; its scores are reused when every metric
    of the suite has one (a failed one only without ``retry_errors``). A metric
    of the same name made otherwise (parameters, direction, kind, or the judge of
    a judged metric: :func:`_changed_metrics`) is refused too, or, with
    ``rescore_changed``, scored afresh.
    """
    earlier = as_run(_latest_in(run), "resume")
    fingerprint = Dataset(list(cases)).fingerprint
    if earlier.dataset.fingerprint != fingerprint:
        raise InputError(
            f"resume: run {earlier.run_id!r} was made on other cases (dataset fingerprint {earlier.dataset.fingerprint[:12]}…, "
            f"{earlier.dataset.cases} cases) than this suite runs ({fingerprint[:12]}…, {len(cases)} cases)"
        )
    was_shard = None if earlier.shard is None else (earlier.shard.index, earlier.shard.count)
    if was_shard != shard:
        raise InputError(f"resume: run {earlier.run_id!r} is {shard_text(was_shard)}, but this run is "
                         f"{shard_text(shard)}; resume each shard from its own run or checkpoint")
    target, was = _without_module(suite.target.describe()), _without_module(earlier.config.target)
    if was and was != target:
        raise InputError(f"resume: run {earlier.run_id!r} was made with target {was}, "
                         f"not this suite's {target}; a resumed run must keep its target")
    changed = _changed_metrics(suite, earlier)
    if changed and not rescore_changed:
        raise InputError(f"resume: run {earlier.run_id!r} scored {'; '.join(changed.values())}; resume with "
                         "rescore_changed=True to score those metrics afresh, or keep the metrics as they were")
    jobs = _jobs(cases, suite.trials)
    earlier_duration = earlier.stats.duration_s
    work = Finished(run_id=earlier.run_id, started_at=earlier.started_at,
                    duration_s=earlier_duration if math.isfinite(earlier_duration) else 0.0)
    names = [m.name for m in suite.metrics]
    for record in earlier.results:
        found = jobs.get((record.case_key, record.occurrence, record.trial))
        if found is None or (record.error is not None and retry_errors):
            continue
        job, index = found
        outcome = _outcome(record, index, cases[index])
        work.outcomes[job] = outcome
        scores = {s.metric: Score(s.score, s.details, s.error) for s in record.scores if s.metric not in changed}
        if all(n in scores and (scores[n].error is None or not retry_errors) for n in names):
            work.results[job] = CaseResult.from_outcome(outcome, {n: scores[n] for n in names})
    return work


def _changed_metrics(suite: Any, earlier: EvalRun) -> dict[str, str]:
    """The suite's metrics that ``earlier`` knew under the same name but made otherwise, each with what differs:
    ``{"exact_match": "exact_match with params {} (now {'case_sensitive': True})"}``. Only what the earlier run
    recorded is compared (a run that names its metrics alone says nothing of their parameters)."""
    was = {record.name: record for record in earlier.config.metrics}
    judge = _judge(suite.judge)
    changed = {}
    for metric in suite.metrics:
        record = was.get(metric.name)
        if record is None:
            continue
        now = MetricRecord.model_validate(metric.describe())
        for field in sorted(record.model_fields_set & {"higher_is_better", "params", "kind"}):
            before, after = getattr(record, field), getattr(now, field)
            if before != after:
                changed[metric.name] = f"{metric.name!r} with {field} {before!r} (now {after!r})"
                break
        else:
            if getattr(metric, "requires_judge", False) and getattr(metric, "judge", None) is None and (
                    earlier.config.judge is not None and earlier.config.judge != judge):
                changed[metric.name] = f"{metric.name!r} with judge {earlier.config.judge!r} (now {judge!r})"
    return changed


def _judge(judge: Any) -> dict[str, Any] | None:
    """A suite's judge as the run file holds it (made JSON-safe as the file makes it)."""
    return None if judge is None else ConfigRecord.model_validate({"judge": judge.describe()}).judge


def _without_module(target: dict[str, Any]) -> dict[str, Any]:
    """A target's description without the module of its function (``__main__`` in a script, another name when imported)."""
    return {k: v for k, v in target.items() if k != "module"}


def _jobs(cases: Sequence[Case], trials: int) -> dict[tuple[str, int, int], tuple[int, int]]:
    """(case key, occurrence, trial) → (job, case index)."""
    seen: dict[str, int] = {}
    jobs = {}
    for index, case in enumerate(cases):
        occurrence = seen.get(case.key, 0)
        seen[case.key] = occurrence + 1
        for trial in range(trials):
            jobs[(case.key, occurrence, trial)] = (index * trials + trial, index)
    return jobs


def _outcome(record: Any, index: int, case: Case) -> CaseOutcome:
    """A result of a run file as the answer the runner gave."""
    turns = None if record.turns is None else tuple(
        TurnOutcome(turn=i, input=t.input, output=t.output, duration_s=t.duration / 1000, input_tokens=t.usage.input_tokens,
                    output_tokens=t.usage.output_tokens, cost_usd=t.usage.cost, trace_id=t.trace_id,
                    tool_calls=(t.model_extra or {}).get("toolCalls"), prompt=t.prompt.model_dump() if t.prompt else None)
        for i, t in enumerate(record.turns))
    return CaseOutcome(
        index=index, case=case, case_key=record.case_key, occurrence=record.occurrence, trial=record.trial,
        output=record.output, error=record.error, duration_s=record.duration / 1000,
        input_tokens=record.usage.input_tokens, output_tokens=record.usage.output_tokens, cost_usd=record.usage.cost,
        trace_id=record.trace_id, prompt=record.prompt.model_dump() if record.prompt else None,
        tool_calls=record.tool_calls, turns=turns,
    )


class Checkpoint:
    """Writes the run so far to ``path`` (atomically) at most every ``every`` seconds, and the final run at the end.

    ``path`` is a run file, or a folder (an existing one, or a path ending in ``/``) that gets
    ``<run_id>.json``, as :meth:`EvalRun.save` takes it. :meth:`start` checks it before the first call: a
    folder that cannot be written, or a file holding another run (or no run), is refused. A write that fails
    later warns once, naming the path and the reason, and the run goes on.

    The writes while the run goes on (:meth:`write_soon`) are made in a thread, off the event loop, one at a
    time, each encoding only the results new since the last (:class:`~cogeval.data.run_writer.RunFileWriter`);
    while results keep coming, one begins ``every`` seconds after the last began (with ``every=0``, as soon
    as it is done), and results kept after a write are written by the next even when no more come.
    """

    def __init__(self, path: Any, every: Any) -> None:
        self.path = check_path("checkpoint", path)
        self.folder = self.path.is_dir() or str(path).endswith(("/", os.sep))
        if not is_real(every) or not every >= 0:
            raise InputError(f"checkpoint_every must be a number of seconds >= 0; got {every!r}")
        self.every = float(every)
        self.last = time.monotonic()
        self.latest: dict[int, CaseResult] = {}
        self.changes = 0  # results kept so far, counted
        self.writer = RunFileWriter()
        self.writer_thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.warned = False

    def file(self, run_id: str) -> pathlib.Path:
        """The file the run ``run_id`` is written to."""
        return self.path / f"{run_id}.json" if self.folder else self.path

    def start(self, run_id: str) -> None:
        """Check that the run ``run_id`` can be written here, before any call is made."""
        file = self.file(run_id)
        if file.is_dir():
            raise InputError(f"checkpoint {str(file)!r} is a folder; pass the folder itself, or a file path")
        if file.exists():
            try:
                held = load_run(file).run_id
            except (OSError, ValueError):
                held = None
            if held != run_id:
                what = "no run file" if held is None else f"run {held!r}"
                raise InputError(f"checkpoint {str(file)!r} already holds {what}; resume it with resume= that "
                                 "path, or choose another checkpoint path (it is never overwritten)")
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=file.parent).close()
        except OSError as error:
            raise InputError(f"checkpoint {str(file)!r} cannot be written: {error.strerror or error}") from None
        self.run_id = run_id

    def keep(self, job: int, result: CaseResult) -> None:
        """Note the latest result of ``job`` (its answer, or its answer and scores) for the next write."""
        self.latest[job] = result
        self.changes += 1

    def write_soon(self, parts: Callable[[list[CaseResult]], tuple[EvalRun, Callable[[int], Any]]]) -> None:
        """See that the results kept so far get written, in a thread, once ``every`` seconds have passed since
        the last write began. ``parts(results)`` (called in that thread) gives the run's head and a function
        making the record of ``results[position]``: :meth:`EvalSuite._checkpoint_parts`."""
        self._warn()
        with self.lock:
            if self.writer_thread is None:
                self.writer_thread = threading.Thread(target=self._write_while_kept, args=(parts,),
                                                      name="cogeval-checkpoint", daemon=True)
                self.writer_thread.start()

    def _write_while_kept(self, parts: Callable[..., Any]) -> None:
        """Write what was kept, again while more comes, each write ``every`` seconds after the last began."""
        written = -1
        while True:
            self.stopping.wait(max(0.0, self.last + self.every - time.monotonic()))
            with self.lock:
                if self.stopping.is_set() or written == self.changes:
                    self.writer_thread = None
                    return
                written = self.changes
            self.last = time.monotonic()
            kept = dict(self.latest)  # one step under the GIL, while the loop goes on keeping results
            try:
                jobs = sorted(kept)
                results = [kept[job] for job in jobs]
                head, record = parts(results)
                self.writer.write(self.file(self.run_id), head,
                                  ((job, results[at], functools.partial(record, at)) for at, job in enumerate(jobs)))
            except Exception as error:  # noqa: BLE001 - warned about on the loop (_warn); the run goes on
                self.error = error

    def write(self, run: EvalRun) -> None:
        """Write the whole ``run`` (complete, or as it was interrupted), after any write under way."""
        self.stopping.set()
        with self.lock:
            thread = self.writer_thread
        if thread is not None:
            thread.join()
        try:
            run.save(self.file(run.run_id))
        except OSError as error:
            self.error = error
        self._warn(stacklevel=4)

    def _warn(self, stacklevel: int = 5) -> None:
        """The first write that failed, as one warning naming the file and the reason."""
        if self.error is None or self.warned:
            return
        self.warned = True
        error = self.error
        reason = error.strerror if isinstance(error, OSError) and error.strerror else f"{type(error).__name__}: {error}"
        warnings.warn(f"checkpoint {str(self.file(self.run_id))!r} could not be written ({reason}); "
                      "the run goes on and keeps every answer in memory", RuntimeWarning, stacklevel=stacklevel)


def _latest_in(path: Any) -> Any:
    """What ``resume=`` names: a run, a result, a run file, or a folder (a checkpoint folder), read as its newest
    run file (run ids sort by start time)."""
    if isinstance(path, (str, os.PathLike)) and pathlib.Path(path).is_dir():
        files = sorted(f for f in pathlib.Path(path).glob("*.json") if _is_run_id(f.stem))
        if not files:
            raise InputError(f"resume: folder {str(path)!r} holds no run file (<run id>.json)")
        return files[-1]
    return path


def _is_run_id(text: str) -> bool:
    try:
        check_run_id(text)
    except InputError:
        return False
    return True
