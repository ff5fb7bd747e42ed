"""RunStore: a folder of run files, listed newest first, where one bad file never hides the others.

Shard runs (``suite.run(shard=(i, n))``) saved in a store are parts of a run, not runs: ``list()``,
``runs()`` and ``latest()`` (and every table made from them) leave them out, so a store holding the
shards and their merged run (:func:`~cogeval.merge_runs`) shows that run once; ``shards=True`` lists
them too, each summary with ``shard: {index, count}``.

>>> import tempfile
>>> store = RunStore(tempfile.mkdtemp())
>>> store.list()
[]
"""

from __future__ import annotations

import builtins
import datetime
import math
import os
import pathlib
import stat
import sys
import warnings
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _backend
from cogeval._check import check_choice, check_path, describe
from cogeval._files import remove_stale_temporaries, write_parquet_atomic
from cogeval._html import html_table, safe_html
from cogeval.compare.clusters import check_cluster
from cogeval.compare.summary import history_frame
from cogeval.data import EvalRun, load_run
from cogeval.data.gc_pause import paused_gc
from cogeval.data.json_limits import loads
from cogeval.data.jsonable import json_text, jsonable
from cogeval.data.run_id import check_run_id
from cogeval.data.runfile import run_from_json, run_from_text
from cogeval.errors import InputError, RunFileError, RunSkippedWarning
from cogeval.store import index as store_index
from cogeval.store import parquet as store_parquet
from cogeval.store.index import StoreIndex, Unlisted

_RunSummary = dict[str, Any]
"""``{id, name, metadata, started_at, finished_at, cases, path, metrics}`` (metrics: name → mean)."""

RUN_FORMAT = "cogitator.eval-run"
_SUMMARY_FIELDS = ("id", "name", "metadata", "started_at", "finished_at", "cases", "path", "metrics")


class RunStore:
    """Run files in one folder, named ``<run_id>.json``.

    ``list()`` and ``latest()`` skip what cannot be read as a run: JSON that is
    not a run file at all (a baseline, a config, an array: anything but an
    object with ``"format": "cogitator.eval-run"`` or a ``runId``) is passed
    over silently; a ``*.json`` that is unreadable, not UTF-8, not JSON (a
    truncated run file), invalid or of another version, or a folder named
    ``x.json``, is reported to ``on_skip({"path", "reason"})`` or, without it,
    as a :class:`~cogeval.RunSkippedWarning`. Listing reads a hidden index,
    ``.cogeval-index`` (:mod:`cogeval.store.index`), which :meth:`save` and
    every listing keep up to date, and reads and validates only the run
    files new or changed since (every file when the index is missing or broken);
    :meth:`load`, :meth:`runs` and :meth:`latest` read runs in full.

    Opening a store removes the hidden temporary files (``.<name>.<8 characters>.tmp``)
    that a write killed half-way left in its folder, once they are more than an hour old
    (:func:`~cogeval._files.remove_stale_temporaries`); younger ones may belong to a write
    still under way and are kept.
    """

    def __init__(self, path: str | os.PathLike[str], on_skip: Callable[[dict[str, str]], Any] | None = None) -> None:
        if on_skip is not None and not callable(on_skip):
            raise InputError(f"on_skip must be a callable taking {{path, reason}}; got {describe(on_skip)}")
        self.path = check_path("path", path)
        self.on_skip = on_skip
        remove_stale_temporaries(self.path)
        self._index = StoreIndex(self.path)
        self._told_missing = False

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def _where(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def save(self, run: Any) -> pathlib.Path:
        """Save a run (an :class:`EvalRun` or anything with ``to_run()``) as ``<run_id>.json``; returns the path."""
        run = _as_run(run)
        path = run.save(self.path / f"{check_run_id(run.run_id)}.json")
        summary = jsonable(_listed(run))  # as reading the file back gives it: JSON values, NaN or ±inf means as NaN
        self._index.record(path, {**summary, "metrics": {k: math.nan if v is None else v for k, v in summary["metrics"].items()}})
        return path

    def load(self, run_id: str) -> EvalRun:
        """The run with this id; strict: a missing or broken file raises (a file that is not a regular file
        in the folder, or is too large, too: :class:`~cogeval.errors.RunFileError`)."""
        path = self.path / f"{check_run_id(run_id)}.json"
        try:
            _check_regular(path)
        except Unlisted as problem:
            if path.exists() or path.is_symlink():
                raise RunFileError(f"run file '{path}' {problem}") from None
        return load_run(path)

    def runs(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None, *,
             shards: bool = False) -> list[EvalRun]:
        """Every readable run matching ``filter``, newest first (shard runs too with ``shards=True``)."""
        runs = (self._read(pathlib.Path(summary["path"])) for summary in self._scan(filter, shards))
        return _Found([run for run in runs if run is not None], self._where(), "run")

    def list(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None, *,
             shards: bool = False) -> list[_RunSummary]:
        """Summaries of the readable runs matching ``filter``, newest first.

        ``filter`` is a mapping of summary fields to required values
        (``{"name": "nightly"}``) or a predicate over a summary. Shard runs are left out
        unless ``shards=True``; their summaries have ``shard: {index, count}``.
        """
        return _Found(self._scan(filter, shards), self._where(), "run summary")

    def latest(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None, *,
               shards: bool = False) -> EvalRun | None:
        """The newest readable run matching ``filter``, or ``None`` (a shard run only with ``shards=True``)."""
        for summary in self._scan(filter, shards):
            run = self._read(pathlib.Path(summary["path"]))
            if run is not None:
                return run
        return None

    def to_frame(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None) -> pd.DataFrame:
        """One row per run, newest first: id, name, started_at, finished_at, cases, path, then one column per metric mean."""
        rows = []
        for summary in self.list(filter):
            row = {k: summary[k] for k in ("id", "name", "started_at", "finished_at", "cases", "path")}
            row.update(summary["metrics"])
            rows.append(row)
        return pd.DataFrame(rows, columns=None if rows else ["id", "name", "started_at", "finished_at", "cases", "path"])

    def scores(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None) -> pd.DataFrame:
        """Every score of every run matching ``filter``, newest run first: one tidy table with the DESIGN §2
        ``scores`` columns (``run_id`` joins it to :meth:`to_frame`)."""
        frames = [run.scores for run in self.runs(filter)]
        return pd.concat(frames, ignore_index=True) if frames else EvalRun.model_construct(results=[]).scores

    def to_parquet(self, path: str | os.PathLike[str],
                   filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None,
                   table: str = "scores", *, partition_by: str | None = None) -> pathlib.Path:
        """Write :meth:`scores` (``table="scores"``) or :meth:`runs_table` (``table="runs"``) as a Parquet file
        (pyarrow; for DuckDB, pandas, Dask...); returns its path. The two join on ``run_id``
        (docs/run-files.md has a DuckDB query over both).

        ``partition_by`` (``"run_id"``, ``"name"`` or ``"day"``) writes a folder instead, Hive-partitioned,
        one file per run, reading one run at a time (:mod:`cogeval.store.parquet`): what DuckDB
        (``read_parquet('scores/*/*.parquet', hive_partitioning = true)``), pandas and Ray Data
        (``ray.data.read_parquet("scores")``) read lazily over thousands of runs.
        """
        tables = {"scores": self.scores, "runs": self.runs_table}
        table = check_choice("table", table, tables)
        if partition_by is None:
            return write_parquet_atomic(check_path("path", path), tables[table](filter))
        key = check_choice("partition_by", partition_by, store_parquet.PARTITIONS)
        summaries = self.list(filter)
        rows = self.runs_table(filter).set_index("run_id", drop=False) if table == "runs" else None

        def parts() -> Any:
            for summary in summaries:
                if rows is not None:
                    frame = rows.loc[[summary["id"]]].reset_index(drop=True)
                else:
                    run = self._read(pathlib.Path(summary["path"]))
                    if run is None:
                        continue
                    frame = run.scores
                yield (store_parquet.partition_value(key, summary), summary["id"],
                       frame.drop(columns="run_id") if key == "run_id" else frame)

        return store_parquet.write_partitioned(check_path("path", path), key, parts())

    def runs_table(self, filter: Mapping[str, Any] | Callable[[_RunSummary], bool] | None = None) -> pd.DataFrame:
        """One row per run, newest first, from the index: ``run_id``, ``name``, ``started_at`` and ``finished_at``
        (UTC timestamps), ``cases`` and ``metadata`` (JSON text, so each run keeps its own fields in one column)."""
        summaries = self.list(filter)
        return pd.DataFrame({
            "run_id": pd.Series([s["id"] for s in summaries], dtype=object),
            "name": pd.Series([s["name"] for s in summaries], dtype=object),
            "started_at": pd.to_datetime(pd.Series([s["started_at"] for s in summaries], dtype=object), utc=True),
            "finished_at": pd.to_datetime(pd.Series([s["finished_at"] for s in summaries], dtype=object), utc=True),
            "cases": pd.Series([s["cases"] for s in summaries], dtype="int64"),
            "metadata": pd.Series([json_text(s["metadata"] or {}) for s in summaries], dtype=object),
        })

    def history(self, metric: str, name: str | None = None, *, confidence: float = 0.95,
                seed: int | np.random.Generator | None = 0, cluster: Any = None) -> pd.DataFrame:
        """A metric's score with its interval in every run, oldest first: one row per run.

        Columns (:data:`~cogeval.compare.summary.HISTORY_COLUMNS`): ``run_id``,
        ``name``, ``started_at``, ``metric``, ``higher_is_better`` (as the run
        declares it; None when it does not), ``score``, ``n``, ``ci_low``,
        ``ci_high``, ``interval``, ``clusters``. The rule is the leaderboard's
        (:mod:`cogeval.compare.summary`): ``score`` is the mean over cases of
        each case's mean over its trials (failures as in a comparison), ``n``
        the cases scored (not case × trial), the interval at ``confidence`` is
        Wilson's (``interval == "wilson"``) when every case value of every run
        shown is 0 or 1, else a percentile bootstrap of the mean over cases
        seeded with ``seed`` (``"bootstrap"``). A run without the metric's
        scores has NaN, ``n = 0``, interval None. Rows are in ``started_at``
        order (then run id).

        ``cluster`` (a case-metadata field such as ``"passage"``, or a function
        of the :class:`~cogeval.Case`) says which cases are not independent:
        each run's interval is then the clustered one, ``"clustered-t"``
        (:func:`~cogeval.stats.clustered_t_test` of the case values against 0,
        CR2 standard error, Bell–McCaffrey degrees of freedom; one case per
        cluster gives the t-interval), and ``clusters`` is the run's G (a
        nullable integer, <NA> without ``cluster`` or for a run without the
        metric's scores). A case without the field is an
        :class:`~cogeval.errors.InputError` naming the case and the field.

        ``name`` keeps the runs of that name. An empty store gives an empty
        table; a ``name`` no run has, or a metric no run scored, raises
        :class:`~cogeval.errors.InputError` listing the names or metrics there are.
        """
        if name is not None and not isinstance(name, str):
            raise InputError(f"name must be a run name (a string) or None; got {describe(name)}")
        cluster = check_cluster(cluster)
        everything = self.runs()
        runs = [run for run in everything if name is None or run.name == name]
        if name is not None and not runs:
            names = ", ".join(repr(n) for n in dict.fromkeys(r.name for r in everything)) or "none"
            raise InputError(f"no run named {name!r} in {self.path}; the run names there are {names}")
        return history_frame(runs[::-1], metric, confidence=confidence, seed=seed, cluster=cluster)

    def _scan(self, filter: Any, shards: bool = False) -> builtins.list[_RunSummary]:  # `list`: the method above
        if not self.path.is_dir() and not self._told_missing:
            self._told_missing = True
            warnings.warn(_missing_folder(self.path), UserWarning, stacklevel=_caller_level())
        keep = _predicate(filter)
        found = [summary for summary in self._index.summaries(self._summary)
                 if (shards or "shard" not in summary) and keep(summary)]
        found.sort(key=lambda summary: (_moment(summary["started_at"]), summary["id"]), reverse=True)
        return found

    def _summary(self, path: pathlib.Path) -> _RunSummary | None:
        """The summary (without its path) of the run in a new or changed file, for the index; None for JSON that
        is not a run; :class:`~cogeval.store.index.Unlisted` once a bad file is reported."""
        try:
            run = _run_in(path)
        except Unlisted as skipped:
            self._skip(path, str(skipped))
            raise
        return None if run is None else _listed(run)

    def _read(self, path: pathlib.Path) -> EvalRun | None:
        try:
            return _run_in(path)
        except Unlisted as skipped:
            self._skip(path, str(skipped))
            return None

    def _skip(self, path: pathlib.Path, reason: str) -> None:
        event = {"path": str(path), "reason": reason}
        if self.on_skip is not None:
            self.on_skip(event)
        else:
            warnings.warn(f"skipped {path}: {reason}", RunSkippedWarning, stacklevel=_caller_level())
        return None

    def plot(self, metric: str, name: str | None = None, *, confidence: float = 0.95,
             seed: int | np.random.Generator | None = 0, cluster: Any = None) -> Any:
        """A metric's score with its interval across the runs over time: :meth:`history` drawn by
        :func:`cogeval.plot_history`, reached through :mod:`cogeval._backend` (``cluster`` as in :meth:`history`)."""
        return _backend.presenter("plot_history")(self, metric, name, confidence=confidence, seed=seed,
                                                  cluster=cluster)

    @safe_html
    def _repr_html_(self) -> str:
        frame = self.to_frame().drop(columns=["finished_at", "path"])  # compact: one line per run, metric means
        return html_table(frame.to_dict("records"), list(frame.columns), caption=f"RunStore {self.path} · {len(frame)} runs",
                          max_rows=20)


def _listed(run: EvalRun) -> _RunSummary:
    """A run's summary as the store lists it: :meth:`EvalRun.summary`, a shard run's with ``shard: {index, count}``."""
    summary = run.summary()
    if run.shard is not None:
        summary["shard"] = run.shard.model_dump()
    return summary


def _run_in(path: pathlib.Path) -> EvalRun | None:
    """The run in ``path``, read and validated as :func:`~cogeval.data.load_run` does; None for JSON that is not
    a run (a baseline, a config: not ours to report); :class:`~cogeval.store.index.Unlisted` with the
    reason for anything else."""
    _check_regular(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise Unlisted(f"cannot be read: {error.strerror or error}") from None
    with paused_gc():
        run = run_from_text(raw, f"run file '{path}'")  # a valid run file, at load_run's speed
    if run is not None:
        return run
    try:
        document = loads(raw.decode("utf-8-sig"), "is invalid", error=RunFileError)  # as load_run
    except UnicodeDecodeError as error:
        raise Unlisted(f"is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except RunFileError as error:  # nested too deep, or a number it cannot hold
        raise Unlisted(str(error)) from None
    except ValueError as error:  # JSONDecodeError
        raise Unlisted(f"is not valid JSON: {error}") from None
    if not (isinstance(document, dict) and (document.get("format") == RUN_FORMAT or "runId" in document)):
        return None
    try:
        return run_from_json(document, f"run file '{path}'")  # parsed once, validated as load_run does
    except (RunFileError, ValueError) as error:
        raise Unlisted(str(error)) from None


_MAX_RUN_FILE_BYTES = 4 * 2**30
"""The largest file a store reads (4 GiB: a run of a million cases with five metrics takes about 1.6 GB)."""


def _check_regular(path: pathlib.Path) -> None:
    """Raises :class:`Unlisted` unless ``path`` is a regular file in its folder (a link may point only within
    it) of at most :data:`_MAX_RUN_FILE_BYTES`: a FIFO would hang a listing, ``/dev/zero`` would fill memory."""
    try:
        status = path.stat()
        outside = path.is_symlink() and not path.resolve().is_relative_to(path.parent.resolve())
    except OSError as error:
        raise Unlisted(f"cannot be read: {error.strerror or error}") from None
    if outside:
        raise Unlisted("is a link to a file outside the store's folder")
    if stat.S_ISDIR(status.st_mode):
        raise Unlisted("is a folder, not a run file")
    if not stat.S_ISREG(status.st_mode):
        raise Unlisted("is not a regular file (a FIFO, a device or a socket)")
    if status.st_size > _MAX_RUN_FILE_BYTES:
        raise Unlisted(f"holds {status.st_size:,} bytes, more than a store reads ({_MAX_RUN_FILE_BYTES:,}); "
                       "read it with load_run")


def _predicate(filter: Any) -> Callable[[_RunSummary], bool]:
    if filter is None:
        return lambda summary: True
    if isinstance(filter, Mapping):
        wanted = dict(filter)
        unknown = [k for k in wanted if k not in _SUMMARY_FIELDS]
        if unknown:
            raise InputError(f"filter names {unknown[0]!r}, which is not a field of a run summary; "
                             f"the fields are {', '.join(_SUMMARY_FIELDS)}")
        return lambda summary: all(summary.get(k) == v for k, v in wanted.items())
    if callable(filter):
        return filter
    raise InputError(f"filter must be a mapping such as {{'name': 'nightly'}} or a predicate over a run summary; got {describe(filter)}")


def _moment(started_at: str | None) -> datetime.datetime:
    """``started_at`` as an aware datetime, so runs sort by time whatever the offset they were written with."""
    try:
        moment = datetime.datetime.fromisoformat(started_at)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this module and the index's, so a warning names the user's line."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename in (__file__, store_index.__file__):
        frame, level = frame.f_back, level + 1
    return level


def _as_run(run: Any) -> EvalRun:
    if isinstance(run, EvalRun):
        return run
    if hasattr(run, "to_run"):
        return run.to_run()
    raise InputError(f"RunStore.save takes an EvalRun or a suite result; got {describe(run)}")


class _Found(builtins.list):  # type: ignore[type-arg]
    """What a listing found: a list, whose index past its end says how many it holds, and where.

    >>> _Found([], "RunStore('runs')", "run")[1]
    Traceback (most recent call last):
    ...
    IndexError: RunStore('runs') found 0 runs, so there is no [1]
    """

    def __init__(self, items: Any, where: str, what: str) -> None:
        super().__init__(items)
        self.where, self.what = where, what

    def __getitem__(self, index: Any) -> Any:
        try:
            return super().__getitem__(index)
        except IndexError:
            found = len(self)
            raise IndexError(f"{self.where} found {found} {self.what}{'' if found == 1 else 's'}, "
                             f"so there is no [{index}]") from None


def _missing_folder(path: pathlib.Path) -> str:
    """What a store on a folder that is not there says: so, and the folders of a similar name beside it."""
    import difflib

    if path.exists():
        return f"RunStore({str(path)!r}) is not a folder, so it holds no runs"
    beside = [p.name for p in path.parent.iterdir() if p.is_dir()] if path.parent.is_dir() else []
    near = difflib.get_close_matches(path.name, beside, n=3)
    hint = f"; did you mean {' or '.join(repr(str(path.parent / n)) for n in near)}?" if near else ""
    return f"RunStore({str(path)!r}): the folder does not exist, so it holds no runs{hint}"
