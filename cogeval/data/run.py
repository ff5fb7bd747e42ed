"""The run model: one evaluation run as the Cogitator ``cogitator.eval-run`` file holds it (DESIGN §5).

:class:`EvalRun` is a pydantic model of the file, version 1. Python attributes are
snake_case, the file's keys camelCase; both are accepted when building a run::

    >>> run = EvalRun.model_validate({
    ...     "runId": "20261022T101530123Z-1a2b3c4d",
    ...     "startedAt": "2026-10-22T10:15:30.123Z", "finishedAt": "2026-10-22T10:15:31.000Z",
    ...     "results": [{"case_key": "k1", "case": {"input": "2+2?"}, "output": "4",
    ...                  "scores": [{"metric": "exact_match", "score": 1.0}]},
    ...                 {"case_key": "k2", "case": {"input": "3+3?"}, "output": "7",
    ...                  "scores": [{"metric": "exact_match", "score": None}]}],
    ... })
    >>> run.scores[["case_key", "metric", "score"]]
      case_key       metric  score
    0       k1  exact_match    1.0
    1       k2  exact_match    NaN
    >>> run.aggregated["exact_match"].mean, run.dataset.cases
    (1.0, 2)

Every float is NaN in memory where the file has ``null`` (a missing score, the
mean of no values, an unknown cost), and NaN or ±inf is written as ``null``.
Values JSON cannot hold (outputs, tool calls, details, metadata) are made
JSON-safe with :func:`~cogeval.data.jsonable.jsonable` when the run is built, so
writing never fails. Keys this model does not know are kept and written back,
since other implementations share the format. ``dataset``, ``prompts``,
``aggregated`` and ``stats`` are derived from the results when not given.

The parts of the file are the records of :mod:`cogeval.data.records` (also
importable from here); reading a table into a run is :mod:`cogeval.data.from_frame`.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import json
import math
import os
import pathlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any, Final, Literal

import numpy as np
import pandas as pd
from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticSerializationError

from cogeval import _backend
from cogeval import _columns as col
from cogeval._check import check_choice, check_path, describe
from cogeval._files import write_parquet_atomic, write_text_atomic
from cogeval._html import safe_html
from cogeval._numbers import number
from cogeval.data.case import FIELDS, Case
from cogeval.data.dataset import Dataset
from cogeval.data.file_form import to_file
from cogeval.data.from_frame import check_results, number_repeats, run_data_from_frame
from cogeval.data.gc_pause import paused_gc
from cogeval.data.json_limits import MAX_DEPTH
from cogeval.data.jsonable import jsonable
from cogeval.data.records import (
    FORMAT,
    VERSION,
    AggregateRecord,
    AssertionRecord,
    CaseRecord,
    ConfigRecord,
    DatasetRecord,
    Json,
    MetricRecord,
    PromptRecord,
    ResultRecord,
    ScoreRecord,
    ShardRecord,
    StatsRecord,
    TurnRecord,
    UsageRecord,
    _omitted,
    _Record,
)
from cogeval.data.run_display import run_html
from cogeval.data.run_errors import errors_frame, metric_errors_frame
from cogeval.data.run_id import check_run_id, iso_utc
from cogeval.errors import InputError
from cogeval.stats import aggregate

__all__ = [
    "FORMAT",
    "VERSION",
    "AggregateRecord",
    "AssertionRecord",
    "CaseRecord",
    "ConfigRecord",
    "DatasetRecord",
    "EvalRun",
    "MetricRecord",
    "PromptRecord",
    "ResultRecord",
    "ScoreRecord",
    "ShardRecord",
    "StatsRecord",
    "TurnRecord",
    "UsageRecord",
]

_AGGREGATE_COLUMNS = ("mean", "median", "min", "max", "std_dev", "p50", "p95", "p99", "count", "missing")
"""The fields of an aggregate, as the columns of :attr:`EvalRun.aggregated_frame` after ``metric`` and ``higher_is_better``."""


def _same(a: float, b: float) -> bool:
    """Equal but for float noise (relative 1e-9); NaN equals NaN."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _number(value: float) -> str:
    """A mean as a warning shows it: ``0.9``, ``0.3333``, ``NaN``."""
    return "NaN" if math.isnan(value) else number(value)


def _version(prompt: PromptRecord | None) -> Any:
    """A prompt's version: its ``version``, else its ``version_id``; None without a prompt."""
    if prompt is None:
        return None
    return prompt.version if prompt.version is not None else prompt.version_id


_RESULT_FIELDS: dict[str, tuple[str, Callable[[Any], Any], Any]] = {
    col.CASE_KEY: ("", attrgetter("case_key"), object),
    col.OCCURRENCE: ("", attrgetter("occurrence"), "int64"),
    col.TRIAL: ("", attrgetter("trial"), "int64"),
    col.OUTPUT: ("", attrgetter("output"), object),
    col.ERROR: ("", attrgetter("error"), object),
    col.DURATION_S: ("", attrgetter("duration"), float),
    col.INPUT_TOKENS: ("usage", attrgetter("input_tokens"), "Int64"),
    col.OUTPUT_TOKENS: ("usage", attrgetter("output_tokens"), "Int64"),
    col.COST_USD: ("usage", attrgetter("cost"), float),
    col.TRACE_ID: ("", attrgetter("trace_id"), object),
    **{field: ("case", attrgetter(field), object) for field in FIELDS},
    "prompt_version": ("prompt", _version, object),
}
"""What :meth:`EvalRun.result_columns` reads of each result: the record holding it (``""``: the result itself,
else the result's ``case``, ``usage`` or ``prompt``), how to read it there, and the column's dtype."""

_SCORE_FIELDS = {col.METRIC: object, col.SCORE: float, col.ERROR: object}
"""The fields :meth:`EvalRun._score_columns` reads of each score, and their dtypes."""


def _column(values: Iterator[Any], count: int, dtype: Any) -> pd.Series:
    """A table column of the ``count`` ``values``, filled as they come (no list in between)."""
    if dtype in (float, "int64"):  # numbers straight into their array
        return pd.Series(np.fromiter(values, dtype=dtype, count=count), copy=False)
    column: pd.Series = pd.Series(np.fromiter(values, dtype=object, count=count), dtype=dtype, copy=False)
    return column


_TURNS_ROOM = MAX_DEPTH - 3
"""Levels a result's ``turns`` list (level 4 of the file) keeps: :func:`jsonable`'s cut of the whole file there."""


def _json_safe(data: dict[str, Any]) -> dict[str, Any]:
    """``jsonable(data)`` of a run's ``model_dump`` whose every field held a value of its type, without walking
    every result: the records' types and :data:`~cogeval.data.records.Json` serializer already made each value
    JSON-safe and cut it to ``VALUE_DEPTH`` levels. Left to walk: the parts beside the results (few, and they
    may hold integers of more digits than readers take), and a result's ``turns``, whose prompts and usage sit
    deep enough for a value cut to ``VALUE_DEPTH`` to pass the file's limit.
    """
    safe = {key: jsonable(value, max_depth=MAX_DEPTH - 1) for key, value in data.items() if key != "results"}
    if "results" in data:
        for result in data["results"]:
            if result.get("turns"):
                result["turns"] = jsonable(result["turns"], max_depth=_TURNS_ROOM)
    return {key: data[key] if key == "results" else safe[key] for key in data}


def result_file_form(record: ResultRecord) -> dict[str, Any]:
    """One result as :meth:`EvalRun.to_dict` writes it in ``results`` (for :mod:`cogeval.data.run_writer`)."""
    try:
        data: dict[str, Any] = record.model_dump(by_alias=True, warnings="error")
    except PydanticSerializationError:  # a field given a value of another type after validation
        return jsonable(record.model_dump(by_alias=True), max_depth=MAX_DEPTH - 2)  # type: ignore[no-any-return]
    if data.get("turns"):
        data["turns"] = jsonable(data["turns"], max_depth=_TURNS_ROOM)
    return data


COUNTED: Final = "cogeval.counted"
"""A validation context key: the results' counts are known to fit (records read from text), so
``EvalRun.model_validate(data, context={COUNTED: True})`` does not look at them again."""


class EvalRun(_Record):
    """One evaluation run, as stored in a run file (format ``cogitator.eval-run``, version 1).

    Tables (DESIGN §2): :attr:`results_frame`, :attr:`scores`, :attr:`cases_frame`,
    :attr:`aggregated_frame`, :attr:`assertions_frame` and the wide :meth:`to_frame`. Build one from a dict (snake_case or camelCase
    keys) with ``EvalRun.model_validate(data)``, from a per-case score table with
    :meth:`from_frame`, or read one with :func:`cogeval.data.load_run`.
    """

    format: Literal["cogitator.eval-run"] = FORMAT
    """Always ``"cogitator.eval-run"``."""
    version: Literal[1] = VERSION
    """The format version: 1."""
    run_id: str
    """UTC start time ``YYYYMMDDTHHMMSSmmmZ``, ``-`` and 8 hex digits; the run file's name."""
    started_at: str
    """When the run started: ISO 8601 UTC, e.g. ``2026-10-22T10:15:30.123Z`` (a datetime is converted)."""
    finished_at: str
    """When the run finished, as ``started_at``."""
    name: str | None = None
    """The run's name, or ``None``."""
    metadata: dict[str, Json] = Field(default_factory=dict)
    """Labels of the run (model, commit, ...)."""

    @field_validator("metadata", mode="before")
    @classmethod
    def _jsonable_metadata(cls, value: Any) -> Any:
        """Keys that are not text become text (JSON has no other), as in every other value."""
        return jsonable(value) if isinstance(value, dict) else value
    dataset: DatasetRecord = None  # type: ignore[assignment]  # derived from the results when not given
    """Fingerprint and number of the cases run (derived from the results when not given)."""
    config: ConfigRecord = Field(default_factory=ConfigRecord)
    """How the run was made."""
    prompts: dict[str, PromptRecord] = None  # type: ignore[assignment]
    """Prompts used, by key (derived from the results' ``prompt`` when not given)."""
    results: list[ResultRecord] = Field(default_factory=list)
    """One record per case × trial."""
    aggregated: dict[str, AggregateRecord] = None  # type: ignore[assignment]
    """Summary of every metric by name (derived from the scores when not given)."""
    assertions: list[AssertionRecord] = Field(default_factory=list)
    """Assertions checked after the run."""
    stats: StatsRecord = None  # type: ignore[assignment]
    """Counts and totals (derived from the results when not given)."""
    status: Literal["interrupted"] | None = _omitted()
    """``"interrupted"`` for a run stopped before every case-trial was answered and scored (Ctrl-C, or a
    checkpoint of a run still going); ``None`` for a complete run, and then left out of the file."""
    shard: ShardRecord | None = _omitted()
    """For a shard run (``suite.run(shard=(i, n))``): which shard, ``{index, count}``; its ``dataset`` is the
    whole dataset's and each result has its ``case_index``. ``None`` otherwise, and then left out of the file."""
    merged_from: list[str] | None = _omitted()
    """For a run made by :func:`~cogeval.merge_runs`: the run ids of its shards, in shard order
    (``mergedFrom``); ``None`` otherwise, and then left out of the file."""

    @field_validator("run_id")
    @classmethod
    def _valid_run_id(cls, value: str) -> str:
        return check_run_id(value)

    @field_validator("started_at", "finished_at", mode="before")
    @classmethod
    def _iso_time(cls, value: Any) -> Any:
        if isinstance(value, datetime.datetime):
            return iso_utc(value if value.tzinfo else value.replace(tzinfo=datetime.UTC))
        if isinstance(value, str):
            try:
                datetime.datetime.fromisoformat(value)
            except ValueError:
                raise InputError(
                    f"must be an ISO 8601 time such as '2026-10-22T10:15:30.123Z'; got {describe(value)}"
                ) from None
        return value

    @field_validator("prompts", mode="before")
    @classmethod
    def _prompts_by_key(cls, value: Any) -> Any:
        """The format's own ``prompts``, a list of ``{key, versionId, version}``, is read by key (the first entry of each key)."""
        if isinstance(value, list) and all(isinstance(p, Mapping) and isinstance(p.get("key"), str) for p in value):
            by_key: dict[str, Any] = {}
            for prompt in value:
                by_key.setdefault(prompt["key"], prompt)
            return by_key
        return value

    @model_validator(mode="before")
    @classmethod
    def _number_repeats(cls, data: Any) -> Any:
        """A result without ``occurrence`` (a file from another implementation) is numbered by order of appearance.

        Otherwise every copy of a repeated case would be occurrence 0 and be paired as one case.
        """
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            return data
        numbered = number_repeats(results)
        return data if numbered is results else {**data, "results": numbered}

    @model_validator(mode="after")
    def _one_result_per_identity(self, info: ValidationInfo) -> EvalRun:
        """Refuse two results of one case key, occurrence and trial: :func:`~cogeval.data.from_frame.check_results`."""
        check_results(self.results, counted=bool(info.context and info.context.get(COUNTED)))
        return self

    @model_validator(mode="after")
    def _derive(self) -> EvalRun:
        if self.dataset is None:
            cases = self.to_dataset()
            self.dataset = DatasetRecord(fingerprint=cases.fingerprint, cases=len(cases))
        if self.prompts is None:
            self.prompts = {r.prompt.key: r.prompt for r in self.results if r.prompt and r.prompt.key is not None}
        if self.aggregated is None:
            self.aggregated = self._scored_aggregates()
        if self.stats is None:
            costs = [r.usage.cost for r in self.results if not math.isnan(r.usage.cost)]
            self.stats = StatsRecord(
                total=len(self.results),
                errors=sum(r.error is not None for r in self.results),
                cost=sum(costs) if costs else math.nan,
            )
        return self

    # -- identity and summaries --------------------------------------------------

    def __repr__(self) -> str:
        """One line: the run's id, name and status, its size and its metrics, never the results.

        >>> EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "quality": [1.0, 0.0]}),
        ...                    run_id="20260101T000000000Z-00000000", started_at="2026-01-01T00:00:00Z")
        EvalRun(run_id='20260101T000000000Z-00000000', name=None, cases=2, results=2, metrics=['quality'])
        """
        return "EvalRun(" + ", ".join(f"{key}={value!r}" for key, value in self.__rich_repr__()) + ")"

    __str__ = __repr__

    def __rich_repr__(self) -> Iterator[tuple[str, Any]]:  # what rich's pretty printer shows, as repr does
        yield "run_id", self.run_id
        yield "name", self.name
        if self.status is not None:
            yield "status", self.status
        yield "cases", self.dataset.cases
        yield "results", len(self.results)
        names = self.metric_names
        yield "metrics", names if len(names) <= 6 else [*names[:5], f"… {len(names)} in all"]

    @property
    def fingerprint(self) -> str:
        """The dataset fingerprint (``dataset.fingerprint``): runs of the same cases share it."""
        return self.dataset.fingerprint

    @property
    def metric_names(self) -> list[str]:
        """Per-case metric names: ``config.metrics`` in order, else the scored metrics in order of appearance."""
        return [m.name for m in self.config.metrics] or list(self._score_lists())

    @property
    def directions(self) -> dict[str, bool]:
        """``higher_is_better`` of every metric in ``config.metrics`` and ``config.statisticalMetrics``."""
        return {m.name: m.higher_is_better for m in [*self.config.metrics, *self.config.statistical_metrics]}

    @property
    def inputs(self) -> dict[str, Any]:
        """The input of every case by case key (the first result's, for a repeated key)."""
        inputs: dict[str, Any] = {}
        for r in self.results:
            inputs.setdefault(r.case_key, r.case.input)
        return inputs

    def to_dataset(self) -> Dataset:
        """The distinct cases run (one per case key and occurrence), in order of first appearance."""
        seen: dict[tuple[str, int], Case] = {}
        for r in self.results:
            seen.setdefault((r.case_key, r.occurrence), r.case.to_case())
        return Dataset(seen.values(), name=self.name)

    def summary(self) -> dict[str, Any]:
        """Id, name, metadata, times, number of cases and the mean of every metric (NaN when none), the means
        of :meth:`aggregated_from_scores`: what the scores say, whatever the file's ``aggregated`` holds."""
        return {
            "id": self.run_id, "name": self.name, "metadata": self.metadata,
            "started_at": self.started_at, "finished_at": self.finished_at,
            "cases": self.dataset.cases,
            "metrics": {name: agg.mean for name, agg in self.aggregated_from_scores().items()},
        }

    def aggregated_from_scores(self) -> dict[str, AggregateRecord]:
        """``aggregated`` with every metric that has scores summarised again from them.

        A metric's aggregate is :func:`cogeval.stats.aggregate` of all its scores (case × trial,
        NaN counted as ``missing``), the rule a suite and a file without ``aggregated`` use, so a
        hand-edited ``aggregated`` cannot show a mean its scores do not have. A metric without
        scores (a statistical one: latency, cost) keeps its stored aggregate. The stored metrics
        come first, in their order, then any only the scores name.

        >>> run = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1.0, 0.0]}))
        >>> run.aggregated["q"] = run.aggregated["q"].model_copy(update={"mean": 0.9})  # a hand edit
        >>> run.aggregated_from_scores()["q"].mean, run.stored_disagreements()
        (0.5, ["stored aggregated mean of 'q' (0.9) disagrees with its scores (0.5); showing the scores' value"])
        """
        return {**self.aggregated, **self._scored_aggregates()}

    def stored_disagreements(self) -> list[str]:
        """Where the numbers the file stores disagree with its results and scores, one sentence each.

        The mean of each metric in ``aggregated`` against :meth:`aggregated_from_scores` (beyond float
        noise: a relative difference of 1e-9; NaN agrees with NaN), and ``stats.total`` and
        ``stats.errors`` against the results; empty when they agree. ``cogeval show`` prints them
        on stderr and shows the scores' and results' values.
        """
        found = []
        scored = self._scored_aggregates()
        for name, stored in self.aggregated.items():
            if name in scored and not _same(stored.mean, scored[name].mean):
                found.append(f"stored aggregated mean of {name!r} ({_number(stored.mean)}) disagrees with its scores "
                             f"({_number(scored[name].mean)}); showing the scores' value")
        counts = {"total": len(self.results), "errors": sum(r.error is not None for r in self.results)}
        for name, count in counts.items():
            if getattr(self.stats, name) != count:
                found.append(f"stored stats.{name} ({getattr(self.stats, name)}) disagrees with its results ({count}); "
                             "showing the results' count")
        return found

    def _scored_aggregates(self) -> dict[str, AggregateRecord]:
        """Every scored metric's aggregate of its scores, in order of appearance."""
        return {name: AggregateRecord.model_validate(dataclasses.asdict(aggregate(values)))
                for name, values in self._score_lists().items()}

    def to_dict(self) -> dict[str, Any]:
        """The run as the file holds it: camelCase keys, in model order, NaN as ``None``, in the format's shape
        (metric names, a list of prompts, the whole cost; :mod:`cogeval.data.file_form`)."""
        try:
            data = self.model_dump(by_alias=True, warnings="error")
        except PydanticSerializationError:  # a field given a value of another type after validation
            return to_file(jsonable(self.model_dump(by_alias=True)))
        return to_file(_json_safe(data))

    def save(self, target: str | os.PathLike[str]) -> pathlib.Path:
        """Write the run file as JSON (UTF-8, indented) and return the path written.

        ``target`` is a folder (an existing one, or a path ending in ``/``) that gets
        ``<run_id>.json``, or else the file itself. Missing folders are created; the
        write is atomic (a temporary file, then ``os.replace``), so a crash leaves
        the old file or none, never half a file. The run id is checked before
        anything is written, so it can never name a file outside the folder.
        """
        run_id = check_run_id(self.run_id)
        path = check_path("target", target)
        if path.is_dir() or str(target).endswith(("/", os.sep)):
            path = path / f"{run_id}.json"
        with paused_gc():  # the text written piece by piece, never held whole
            pieces = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False).iterencode(self.to_dict())
            return write_text_atomic(path, itertools.chain(pieces, ["\n"]))

    # -- tables --------------------------------------------------------------------

    @property
    def results_frame(self) -> pd.DataFrame:
        """One row per case × trial with the DESIGN §2 ``results`` columns."""
        return self.result_columns(*col.RESULTS_COLUMNS)

    def result_columns(self, *names: str) -> pd.DataFrame:
        """A table of the named fields, one row per result in order, each column gathered in one pass.

        ``names`` are columns of :attr:`results_frame`, the case's fields (``input``, ``expected``,
        ``context``, ``metadata``, ``turns``) and ``prompt_version`` (the result's prompt's ``version``,
        else its ``version_id``; None without one). Text stays Python objects: pandas 3 with pyarrow
        stores inferred text in Arrow, which refuses a lone surrogate (half an emoji cut at max_tokens),
        and a run holding one could not be tabled at all.

        >>> EvalRun.from_frame(pd.DataFrame({"input": ["2+2"], "q": [1.0]})).result_columns("input", "trial")
          input  trial
        0   2+2      0
        """
        results = self.results
        records: dict[str, list[Any]] = {"": results}  # each record read once, then every field wanted of it
        columns = {}
        for name in (check_choice("names", name, [col.RUN_ID, *_RESULT_FIELDS]) for name in names):
            if name == col.RUN_ID:
                columns[name] = self._run_ids(len(results))
                continue
            holder, getter, dtype = _RESULT_FIELDS[name]
            if holder not in records:
                records[holder] = list(map(attrgetter(holder), results))
            columns[name] = _column(map(getter, records[holder]), len(results), dtype)
            if name == col.DURATION_S:
                columns[name] /= 1000  # the file's milliseconds
        return pd.DataFrame(columns, copy=False)

    def _run_ids(self, rows: int) -> pd.Series:
        """The ``run_id`` column of a table of ``rows`` rows (read only when there are rows: an empty run made
        with ``model_construct`` may have no id). Every row holds the one id object (``np.full`` would make a
        string per row)."""
        return pd.Series(self.run_id if rows else None, index=pd.RangeIndex(rows), dtype=object)

    @property
    def scores(self) -> pd.DataFrame:
        """One row per case × trial × metric with the DESIGN §2 ``scores`` columns; a missing score is NaN."""
        fields, result = self._score_columns(*_SCORE_FIELDS)
        ids = self.result_columns(col.CASE_KEY, col.OCCURRENCE, col.TRIAL)
        return pd.DataFrame({
            col.RUN_ID: self._run_ids(len(result)),
            **{name: pd.Series(ids[name].to_numpy()[result], dtype=ids[name].dtype, copy=False) for name in ids},
            **{name: fields[name] for name in fields},
        }, columns=list(col.SCORES_COLUMNS), copy=False)

    def _score_columns(self, *names: str) -> tuple[pd.DataFrame, np.ndarray]:
        """The named fields (of :data:`_SCORE_FIELDS`) of every score, one row per score in order, and each row's
        result: its position in :attr:`results`. Text stays Python objects, as in :meth:`result_columns`."""
        lists = list(map(attrgetter("scores"), self.results))
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = list(itertools.chain.from_iterable(lists))
        fields = {name: _column(map(attrgetter(name), flat), len(flat), _SCORE_FIELDS[name]) for name in names}
        return pd.DataFrame(fields, copy=False), np.repeat(np.arange(len(lists)), counts)

    @property
    def cases_frame(self) -> pd.DataFrame:
        """One row per distinct case (case key, occurrence): the DESIGN §2 ``cases`` columns and ``turns``, as ``Dataset.to_frame``."""
        seen: dict[tuple[str, int], CaseRecord] = {}
        for r in self.results:
            seen.setdefault((r.case_key, r.occurrence), r.case)
        columns = {
            col.CASE_KEY: pd.Series([key for key, _ in seen], dtype=object),
            col.OCCURRENCE: pd.Series([occurrence for _, occurrence in seen], dtype="int64"),
            **{f: pd.Series([getattr(case, f) for case in seen.values()], dtype=object) for f in FIELDS},
        }
        return pd.DataFrame(columns)[[*col.CASES_COLUMNS, col.TURNS]]

    def to_frame(self) -> pd.DataFrame:
        """The wide view: :attr:`results_frame` plus ``input``, ``expected`` and one column per metric."""
        frame = self.results_frame
        case = self.result_columns(col.INPUT, col.EXPECTED)
        frame.insert(4, col.INPUT, case[col.INPUT])
        frame.insert(5, col.EXPECTED, case[col.EXPECTED])
        fields, result = self._score_columns(col.METRIC, col.SCORE)
        metric, score = fields[col.METRIC].to_numpy(), fields[col.SCORE].to_numpy()
        for name in self.metric_names:
            rows = np.flatnonzero(metric == name)
            first = rows[np.unique(result[rows], return_index=True)[1]]  # a result's first score of the metric
            values = np.full(len(frame), math.nan)
            values[result[first]] = score[first]
            frame[name] = values
        return frame

    @property
    def aggregated_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric``, ``higher_is_better`` (None when the config does not say) and every aggregate field."""
        directions = self.directions
        rows = [{col.METRIC: name, "higher_is_better": directions.get(name), **agg.model_dump()}
                for name, agg in self.aggregated.items()]
        return pd.DataFrame(rows, columns=[col.METRIC, "higher_is_better", *_AGGREGATE_COLUMNS])

    @property
    def errors_frame(self) -> pd.DataFrame:
        """The target's errors, one row per distinct message, most frequent first: ``error``, ``cases`` (results
        with it) and ``examples`` (up to 3 cases' inputs, shortened); :mod:`cogeval.data.run_errors`."""
        return errors_frame(self.results)

    @property
    def metric_errors_frame(self) -> pd.DataFrame:
        """The metrics' errors (scores left NaN), one row per metric and distinct message, most frequent first:
        ``metric``, ``error``, ``cases`` and ``examples``; :mod:`cogeval.data.run_errors`."""
        return metric_errors_frame(self.results)

    @property
    def assertions_frame(self) -> pd.DataFrame:
        """One row per assertion: ``name``, ``passed``, ``message``, ``actual``, ``expected``."""
        columns = ["name", "passed", "message", "actual", "expected"]
        return pd.DataFrame([{c: getattr(a, c) for c in columns} for a in self.assertions], columns=columns)

    def _score_lists(self) -> dict[str, list[float]]:
        lists: dict[str, list[float]] = {}
        for r in self.results:
            for s in r.scores:
                lists.setdefault(s.metric, []).append(s.score)
        return lists

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        run_id: str | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        directions: Mapping[str, bool] | None = None,
        started_at: datetime.datetime | str | None = None,
        metrics: Sequence[str] | None = None,
    ) -> EvalRun:
        """A run from a tidy table of per-case scores (a CSV export of another tool, a ``to_frame()``...).

        Cases are ``case_key`` or ``input`` (and ``expected``), with optional ``occurrence`` and ``trial``.
        Long form: ``metric`` and ``score`` columns. Wide form: the ``metrics`` columns, or every other
        column of numbers, hold scores. Any other column (``topic``...) goes into the case's metadata.
        ``directions`` maps metrics to ``higher_is_better``; a metric it does not name is taken as higher-is-better
        with its direction *assumed*, which comparisons say (never guessed from the name).
        The rules in full: :mod:`cogeval.data.from_frame`.

        >>> frame = pd.DataFrame({"input": ["2+2", "3+3"], "quality": [1.0, 0.5], "latency": [0.2, 0.4],
        ...                       "topic": ["math", "math"]})
        >>> run = EvalRun.from_frame(frame, directions={"latency": False})
        >>> run.aggregated["quality"].mean, run.directions, run.results[0].case.metadata
        (0.75, {'quality': True, 'latency': False}, {'topic': 'math'})
        """
        with paused_gc():  # millions of records that all stay alive: see cogeval.data.gc_pause
            data = run_data_from_frame(frame, run_id=run_id, name=name, metadata=metadata, directions=directions,
                                       started_at=started_at, metrics=metrics)
            return cls.model_validate(data)

    def to_parquet(self, path: str | os.PathLike[str], table: str = "scores") -> pathlib.Path:
        """Write one of the run's tables (``"scores"``, ``"results"`` or ``"cases"``) as Parquet (pyarrow), for
        DuckDB, pandas or Dask; text that is not one type in a column (inputs, outputs) is written as JSON text."""
        tables = {"scores": "scores", "results": "results_frame", "cases": "cases_frame"}
        frame = getattr(self, tables[check_choice("table", table, tables)])
        return write_parquet_atomic(check_path("path", path), frame)

    # -- display -------------------------------------------------------------------

    def plot(self, metric: str) -> Any:
        """The distribution of a metric's scores: :func:`cogeval.plot_scores`, reached through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_scores")(self, metric)

    @safe_html
    def _repr_html_(self) -> str:
        return run_html(self, f"EvalRun {self.name or ''}")

