"""run_on_ray: a suite's shards as Ray tasks, merged into one run (docs/distributed.md).

- each shard (:mod:`cogeval.evaluate.shards`) is one Ray task that runs ``suite.run(shard=(i, n))``: the
  suite's own async runner, with the suite's concurrency, in a Ray worker; the largest shards are sent
  first, so the last to finish are small; Ray retries a task whose worker died (``max_retries`` times),
  not one whose code raised;
- the shard runs come back to the driver and :func:`~cogeval.merge_runs` makes them one run, checking
  the suite's assertions on it; one progress bar on the driver counts every shard's case-trials, which
  the workers report to a small Ray actor;
- with ``checkpoint`` (a folder every worker can write: local disk for a local cluster, a shared file
  system for a real one) each shard keeps its run so far in ``<checkpoint>/shard-<i>-of-<n>/``; a retried
  task resumes from there, and running again after the driver crashed takes the finished shards as they
  are and resumes the partial ones;
- the target, the metrics and the judge go to the workers pickled (by ``cloudpickle``, as Ray does): each is
  checked first, and one that cannot be pickled is named. A :class:`~cogeval.ChatTarget` (and a judge)
  leaves its clients behind: each worker opens its own connection pool;
- ``ray`` is imported only here, when called (``pip install 'cogeval[ray]'``).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import pathlib
import time
import uuid
import warnings
from collections.abc import Mapping
from typing import Any

from cogeval._check import check_path, check_positive_int, check_retries, describe, is_real
from cogeval.data import EvalRun, load_run
from cogeval.errors import ExecutionError, InputError
from cogeval.evaluate.merge import merge_runs
from cogeval.evaluate.progress import ProgressBar
from cogeval.evaluate.resume import earlier_work
from cogeval.evaluate.shards import case_shards
from cogeval.evaluate.suite import EvalSuite

_TASK_OPTIONS = ("num_cpus", "num_gpus", "memory")
"""``resources`` keys that are Ray task options; any other key names a custom resource."""
_REPORT_EVERY_S = 0.2
"""Seconds between a worker's progress reports (and the driver's looks at them)."""


def run_on_ray(suite: EvalSuite, shards: int, *, address: str | None = None, max_retries: int = 2,
               resources: Mapping[str, float] | None = None, checkpoint: str | os.PathLike[str] | None = None,
               checkpoint_every: float = 30.0) -> EvalRun:
    """Run ``suite`` as ``shards`` Ray tasks and return the merged run (:mod:`cogeval.evaluate.ray_runner`).

    - ``address``: ``None`` starts (or joins) a local cluster; ``"auto"`` or ``"ray://host:10001"``
      connects to a running one. A process already connected to Ray (``ray.init()``) keeps its connection.
    - ``max_retries``: times Ray runs a shard again whose worker died (0 to 10).
    - ``resources``: what each task needs, e.g. ``{"num_cpus": 2, "num_gpus": 1}`` or a custom resource
      ``{"accelerator": 1}``; default one CPU.
    - ``checkpoint``: a folder for the shards' checkpoints (written every ``checkpoint_every`` seconds);
      run again with the same folder to finish a run whose driver stopped.

    The suite's ``on_progress`` is called on the driver with ``{completed, total, current_case: None}``.

    >>> from cogeval import EvalSuite, exact_match  # doctest: +SKIP
    >>> run = run_on_ray(EvalSuite(cases, target, metrics=[exact_match()]), shards=8)  # doctest: +SKIP
    """
    if not isinstance(suite, EvalSuite):
        raise InputError(f"suite must be an EvalSuite; got {describe(suite)}")
    count = check_positive_int("shards", shards)
    retries = check_retries("max_retries", max_retries)
    options = _task_options(resources)
    if address is not None and not isinstance(address, str):
        raise InputError(f"address must be None, 'auto' or a Ray address such as 'ray://host:10001'; got {describe(address)}")
    folder = None if checkpoint is None else check_path("checkpoint", checkpoint)
    if not is_real(checkpoint_every) or not checkpoint_every >= 0:
        raise InputError(f"checkpoint_every must be a number of seconds >= 0; got {describe(checkpoint_every)}")
    shipped = _pickled(_for_workers(suite))
    finished = {} if folder is None else _finished_shards(suite, folder, count)

    ray = _connect(address)
    task = ray.remote(max_retries=retries, **options)(_run_shard)
    progress, token = _progress_actor(ray), uuid.uuid4().hex
    suite_ref = ray.put(shipped)  # the pickled suite, sent to each worker once
    folder_text = None if folder is None else str(folder)
    sizes = collections.Counter(case_shards(list(suite.dataset), count))  # the largest shards first: a short tail
    running = {task.remote(suite_ref, index, count, folder_text, float(checkpoint_every), (progress, token)): index
               for index in sorted(range(count), key=lambda i: -sizes[i]) if index not in finished}
    runs = dict(finished)
    try:
        with ProgressBar(suite.progress, len(suite.dataset) * suite.trials, suite.name) as bar:
            shown = _Shown(bar, suite)
            shown.show(sum(len(run.results) for run in runs.values()))
            reported: dict[int, int] = {}
            asked = progress.counts.remote(token)  # never waited for: the actor may still be starting
            while running:
                ready, _ = ray.wait(list(running), num_returns=len(running), timeout=_REPORT_EVERY_S)
                for ref in ready:
                    index = running.pop(ref)
                    runs[index] = _got(ray, ref, f"shard {index} of {count}", retries)
                if ray.wait([asked], timeout=0)[0]:
                    reported, asked = ray.get(asked), progress.counts.remote(token)
                shown.show(sum(len(runs[i].results) if i in runs else reported.get(i, 0) for i in range(count)))
    except BaseException:
        for ref in running:
            ray.cancel(ref)
        raise
    finally:
        with contextlib.suppress(Exception):  # a connection already gone
            progress.forget.remote(token)
    return merge_runs([runs[index] for index in range(count)], assertions=suite.assertions)


class _Shown:
    """The driver's view of the progress: the bar and the suite's ``on_progress``, moved on to ``answered``
    case-trials (of all shards); an ``on_progress`` that raises warns once and the run goes on."""

    def __init__(self, bar: ProgressBar, suite: EvalSuite) -> None:
        self.bar, self.callback, self.total, self.answered = bar, suite.on_progress, len(suite.dataset) * suite.trials, 0

    def show(self, answered: int) -> None:
        if answered <= self.answered:
            return
        for _ in range(answered - self.answered):
            self.bar.update()
        self.answered = answered
        if self.callback is not None:
            try:
                self.callback({"completed": answered, "total": self.total, "current_case": None})
            except Exception as error:  # noqa: BLE001 - a progress display must not throw away the run
                self.callback = None
                warnings.warn(f"on_progress raised {type(error).__name__}: {error}; the run goes on (further "
                              "progress is not reported to it)", RuntimeWarning, stacklevel=3)


def _task_options(resources: Any) -> dict[str, Any]:
    """Ray's options of each shard's task: ``num_cpus`` (default 1), ``num_gpus``, ``memory`` and custom
    ``resources``, from ``resources``."""
    if resources is None:
        return {"num_cpus": 1}
    if not isinstance(resources, Mapping) or not all(isinstance(k, str) for k in resources):
        raise InputError(f"resources must be a mapping such as {{'num_cpus': 1, 'num_gpus': 1}}; got {describe(resources)}")
    for name, amount in resources.items():
        if not is_real(amount) or not amount >= 0:
            raise InputError(f"resources[{name!r}] must be a number >= 0; got {describe(amount)}")
    options: dict[str, Any] = {"num_cpus": 1}
    options.update({k: v for k, v in resources.items() if k in _TASK_OPTIONS})
    custom = {k: v for k, v in resources.items() if k not in _TASK_OPTIONS}
    if custom:
        options["resources"] = custom
    return options


def _for_workers(suite: EvalSuite) -> EvalSuite:
    """The suite as its workers run it: no bar or callback of its own (the driver shows progress) and no
    assertions (checked on the merged run)."""
    shipped = copy.copy(suite)
    shipped.progress, shipped.on_progress, shipped.assertions = False, None, []
    return shipped


def _pickled(suite: EvalSuite) -> bytes:
    """``suite`` pickled by cloudpickle (Ray's pickler); an InputError names the target, metric or judge that
    cannot be pickled."""
    from ray import cloudpickle

    parts: list[tuple[str, Any]] = [(f"target {_target_name(suite)}", suite.target)]
    parts += [(f"metrics[{i}] {m.name!r}", m) for i, m in enumerate(suite.metrics)]
    parts += [(f"statistical_metrics[{i}] {m.name!r}", m) for i, m in enumerate(suite.statistical_metrics)]
    parts += [("judge", suite.judge), ("the suite (its dataset or metadata)", suite)]
    for label, part in parts:
        try:
            pickled: bytes = cloudpickle.dumps(part)
        except Exception as error:  # noqa: BLE001 - any pickling failure: named, with its reason
            raise InputError(f"{label} cannot be sent to Ray workers: pickling it failed ({type(error).__name__}: "
                             f"{error}); targets and metrics must be picklable (cloudpickle): open clients, locks "
                             "and files inside the call, not in the object") from None
    return pickled  # the last part's: the whole suite


def _target_name(suite: EvalSuite) -> str:
    described = suite.target.describe()
    return repr(described.get("name") or described.get("model") or described.get("type"))


def shard_folder(folder: str | os.PathLike[str], index: int, count: int) -> pathlib.Path:
    """The checkpoint folder of shard ``index`` of ``count`` in ``folder``: ``shard-<index>-of-<count>``."""
    return pathlib.Path(folder) / f"shard-{index}-of-{count}"


def _newest_run(folder: pathlib.Path) -> pathlib.Path | None:
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return files[-1] if files else None  # run ids sort by start time


def _finished_shards(suite: EvalSuite, folder: pathlib.Path, count: int) -> dict[int, EvalRun]:
    """The shards whose checkpoint holds their complete run, checked to be runs of ``suite``'s shards."""
    finished = {}
    for index in range(count):
        newest = _newest_run(shard_folder(folder, index, count))
        if newest is None:
            continue
        run = load_run(newest)
        try:
            earlier_work(suite, list(suite.dataset), run, retry_errors=False, shard=(index, count))
        except InputError as error:
            raise InputError(f"checkpoint {str(newest)!r} is not a shard of this suite's run ({error}); "
                             "give another checkpoint folder") from None
        if run.status is None:
            finished[index] = run
    return finished


def _connect(address: str | None) -> Any:
    """``ray``, connected: to the cluster this process is connected to, else to ``address``."""
    try:
        import ray
    except ImportError:
        raise InputError("run_on_ray needs Ray: pip install 'cogeval[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=address)
    return ray


def _got(ray: Any, ref: Any, shard: str, retries: int) -> EvalRun:
    """A finished task's shard run; a task whose worker died more often than it was retried: an ExecutionError."""
    try:
        run: EvalRun = ray.get(ref)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ExecutionError(f"{shard} failed: its worker died and was retried {retries} time{'' if retries == 1 else 's'} "
                             f"({type(error).__name__}: {first}); its checkpoint, if it has one, keeps what it "
                             "finished: run_on_ray again to resume it") from None
    return run


def _run_shard(pickled: bytes, index: int, count: int, folder: str | None, every: float,
               progress: tuple[Any, str]) -> EvalRun:
    """A Ray task: shard ``index`` of ``count`` of the pickled suite, resumed from its checkpoint when there is one."""
    from ray import cloudpickle

    suite: EvalSuite = cloudpickle.loads(pickled)
    keep = None if folder is None else shard_folder(folder, index, count)
    earlier = None if keep is None else _newest_run(keep)
    base = 0 if earlier is None else sum(r.error is None for r in load_run(earlier).results)
    suite.on_progress = _Reporter(*progress, index, base)
    result = suite.run(shard=(index, count), resume=keep if earlier is not None else None,
                       checkpoint=None if keep is None else f"{keep}{os.sep}", checkpoint_every=every)
    return result.run


class _Reporter:
    """A shard's ``on_progress`` in its worker: the case-trials answered, sent to the progress actor (for the
    run ``token``) at most every :data:`_REPORT_EVERY_S` seconds."""

    def __init__(self, progress: Any, token: str, index: int, base: int) -> None:
        self.progress, self.token, self.index, self.base, self.last = progress, token, index, base, 0.0

    def __call__(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        if now - self.last >= _REPORT_EVERY_S or event["completed"] == event["total"]:
            self.last = now
            self.progress.report.remote(self.token, self.index, self.base + event["completed"])


_ACTORS: dict[tuple[str, str], Any] = {}
"""The progress actor of this driver, by Ray job and node: made once per cluster connection (an actor is a
process of its own), then reused by every run_on_ray call."""


def _progress_actor(ray: Any) -> Any:
    """The Ray actor the workers report to: run token → shard → case-trials answered. Its class is made here,
    so that cloudpickle sends it by value and the actor's process starts without importing cogeval."""
    context = ray.get_runtime_context()
    key = (context.get_job_id(), context.get_node_id())
    if key not in _ACTORS:

        class Progress:
            def __init__(self) -> None:
                self.answered: dict[str, dict[int, int]] = {}

            def report(self, token: str, index: int, answered: int) -> None:
                self.answered.setdefault(token, {})[index] = answered

            def counts(self, token: str) -> dict[int, int]:
                return dict(self.answered.get(token, {}))

            def forget(self, token: str) -> None:
                self.answered.pop(token, None)

        _ACTORS.clear()  # another cluster's: gone with its connection
        _ACTORS[key] = ray.remote(num_cpus=0)(Progress).remote()
    return _ACTORS[key]
