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
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Mapping
from numbers import Real
from typing import Annotated, Any, ClassVar, Literal

import pandas as pd
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from cogeval import _columns as col
from cogeval._check import check_json_metadata, describe
from cogeval._html import badge, html_table, key_value_table, safe_html
from cogeval.data.case import FIELDS, Case
from cogeval.data.dataset import Dataset, missing_to_none
from cogeval.data.jsonable import jsonable
from cogeval.data.run_id import check_run_id, iso_utc, new_run_id, utc_now
from cogeval.errors import InputError
from cogeval.stats import Aggregate, aggregate

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
    "StatsRecord",
    "TurnRecord",
    "UsageRecord",
]

FORMAT = "cogitator.eval-run"
VERSION = 1


def _nan_if_none(value: Any) -> Any:
    return math.nan if value is None else value


def _none_if_not_finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


Number = Annotated[float, BeforeValidator(_nan_if_none), PlainSerializer(_none_if_not_finite)]
"""A float that is NaN in memory where the file has ``null``; NaN and ±inf are written as ``null``."""

Json = Annotated[Any, BeforeValidator(jsonable), PlainSerializer(jsonable)]
"""Any value, made JSON-safe (bytes and objects as text, circular references as ``"[Circular]"``)."""

Count = Annotated[int, Field(ge=0)]


class _Record(BaseModel):
    """Base of every part of the file: camelCase keys, unknown keys kept, NaN-aware equality."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    _omit_if_none: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _jsonable_extra(self) -> Any:
        if self.__pydantic_extra__:
            for key, value in self.__pydantic_extra__.items():
                self.__pydantic_extra__[key] = jsonable(value)
        return self

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: Any) -> Any:
        data = handler(self)
        for name in self._omit_if_none:
            value = getattr(self, name)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                data.pop(name, None)
                data.pop(to_camel(name), None)
        return data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.model_dump(by_alias=True) == other.model_dump(by_alias=True)

    __hash__ = None  # type: ignore[assignment]


class DatasetRecord(_Record):
    """``dataset``: which cases were run."""

    fingerprint: str
    """SHA-256 hex of the canonical JSON of the list of cases run (``Dataset.fingerprint``)."""
    cases: Count
    """Number of cases run (the length of the case list, duplicates included, before trials)."""


class MetricRecord(_Record):
    """One entry of ``config.metrics`` or ``config.statisticalMetrics``: what made a metric."""

    name: str
    """The metric's name: the key of its scores everywhere."""
    higher_is_better: bool = True
    """The metric's direction; ``False`` for latency, cost and other smaller-is-better metrics."""
    params: dict[str, Json] = Field(default_factory=dict)
    """The arguments the metric was made with."""
    kind: str = "case"
    """``"case"`` for a per-case metric, ``"run"`` for a statistical one; other values from other implementations are kept."""


class ConfigRecord(_Record):
    """``config``: how the run was made. Extra keys (``timeoutS``, ``retries``...) are kept."""

    metrics: list[MetricRecord] = Field(default_factory=list)
    """Per-case metrics, in the order the suite listed them."""
    statistical_metrics: list[MetricRecord] = Field(default_factory=list)
    """Run-level metrics (latency, cost...): aggregated, no per-case scores; per-case values in ``results[].statisticalValues``
    for custom ones, read from ``duration`` and ``usage`` for the built-ins."""
    judge: dict[str, Json] | None = None
    """The LLM judge's configuration (such as ``{model, temperature, samples}``), or ``None``."""
    trials: Count = 1
    """How many times each case was run."""
    concurrency: Count = 1
    """How many cases ran at once."""
    target: dict[str, Json] = Field(default_factory=dict)
    """The target, e.g. ``{"type": "function", "name": "my_fn"}`` or ``{"type": "chat", "model": ...}``; never a secret."""


class PromptRecord(_Record):
    """Which prompt made an answer (an entry of ``prompts``, or ``results[].prompt``)."""

    key: str | None = None
    """The prompt's key in a prompt registry."""
    version_id: Json = None
    """The id of the prompt version."""
    version: Json = None
    """The prompt version (a number or a label)."""
    ab_test: Json = None
    """The A/B test arm or test the prompt belongs to, if any."""


class UsageRecord(_Record):
    """``usage``: tokens and cost of a call; ``null`` (``None`` / NaN) when the target did not report them."""

    input_tokens: Count | None = None
    """Prompt tokens."""
    output_tokens: Count | None = None
    """Completion tokens."""
    cost: Number = math.nan
    """Cost in USD; NaN (``null``) when unknown."""


class CaseRecord(_Record):
    """``results[].case``: the case as :meth:`Case.to_dict` writes it; absent fields left out."""

    _omit_if_none = FIELDS
    input: Json = None
    """What the target received (required unless ``turns`` is given)."""
    expected: Json = None
    """The reference answer, if any."""
    context: Json = None
    """Grounding documents, if any."""
    metadata: Json = None
    """Labels of the case (a JSON object), if any."""
    turns: Json = None
    """The user messages of a multi-turn case, if any."""

    @model_validator(mode="after")
    def _valid_case(self) -> CaseRecord:
        self.to_case()  # raises InputError, a ValueError, naming the field
        return self

    def to_case(self) -> Case:
        """This record as a :class:`Case`."""
        return Case(**{name: getattr(self, name) for name in FIELDS})


class TurnRecord(_Record):
    """One turn of a multi-turn case (``results[].turns[]``)."""

    _omit_if_none = ("error",)
    input: Json = None
    """The user message sent."""
    output: Json = None
    """The answer."""
    error: str | None = None
    """Why the turn failed (left out of the file when it did not)."""
    duration: Number = math.nan
    """Seconds the turn took."""
    usage: UsageRecord = Field(default_factory=UsageRecord)
    """Tokens and cost of the turn."""
    trace_id: str | None = None
    """Id of the call in a tracing system."""
    prompt: PromptRecord | None = None
    """Which prompt made the answer."""


class ScoreRecord(_Record):
    """``results[].scores[]``: one metric's score of one answer."""

    metric: str
    """The metric's name."""
    score: Number
    """The score; NaN (``null``) when the metric could not score, and ``error`` says why."""
    error: str | None = None
    """Why there is no score, or ``None``."""
    details: Json = None
    """Details of the score (a judge's reasoning, precision and recall...)."""


class ResultRecord(_Record):
    """``results[]``: one trial of one case."""

    _omit_if_none = ("statistical_values",)
    case_key: str = Field(min_length=1)
    """The case's key: SHA-256 of the canonical JSON of ``{input, turns, expected}`` (``Case.key``)."""
    occurrence: Count = 0
    """Counts earlier cases with the same key in the dataset (0 for the first)."""
    trial: Count = 0
    """The trial, from 0."""
    case: CaseRecord
    """The case that was run."""
    output: Json = None
    """The target's answer (``""`` when it failed)."""
    error: str | None = None
    """Why the target failed, or ``None``."""
    duration: Number = math.nan
    """Seconds the final attempt took."""
    usage: UsageRecord = Field(default_factory=UsageRecord)
    """Tokens and cost of the answer."""
    trace_id: str | None = None
    """Id of the call in a tracing system."""
    prompt: PromptRecord | None = None
    """Which prompt made the answer, or ``None``."""
    tool_calls: Json = None
    """The tool calls the model made, as the target gave them."""
    turns: list[TurnRecord] | None = None
    """One record per turn of a multi-turn case, else ``None``."""
    scores: list[ScoreRecord] = Field(default_factory=list)
    """One score per per-case metric."""
    statistical_values: dict[str, Number] | None = None
    """This result's value of each statistical metric that writes its per-case values (``statisticalValues``:
    name → number, ``null`` when unknown): custom ones, not latency, cost or token_usage, which ``duration``
    and ``usage`` give back. Left out of the file when ``None``; other readers of the format ignore it."""


class AggregateRecord(_Record):
    """``aggregated[metric]``: the summary of a metric over the run (see :func:`cogeval.stats.aggregate`)."""

    mean: Number = math.nan
    """Mean of the scores present."""
    median: Number = math.nan
    """Median."""
    min: Number = math.nan
    """Smallest score."""
    max: Number = math.nan
    """Largest score."""
    std_dev: Number = math.nan
    """Sample standard deviation (ddof=1)."""
    p50: Number = math.nan
    """50th percentile (linear interpolation)."""
    p95: Number = math.nan
    """95th percentile."""
    p99: Number = math.nan
    """99th percentile."""
    count: Count = 0
    """Scores present."""
    missing: Count = 0
    """Scores missing (NaN) and left out."""

    def to_aggregate(self) -> Aggregate:
        """This record as a :class:`cogeval.stats.Aggregate`."""
        return Aggregate(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Aggregate)})


class AssertionRecord(_Record):
    """``assertions[]``: one checked assertion."""

    name: str
    """The assertion's name."""
    passed: bool
    """Whether it held."""
    message: str = ""
    """What was checked and what came."""
    actual: Json = None
    """The value compared (a number, or ``{metric: value}``)."""
    expected: Json = None
    """The value it was compared with."""


class StatsRecord(_Record):
    """``stats``: counts and totals of the run."""

    _omit_if_none = ("metric_errors", "judge_errors", "judge_cost")
    total: Count = 0
    """Results (case × trial)."""
    errors: Count = 0
    """Results whose target failed."""
    duration: Number = math.nan
    """Seconds the run took."""
    cost: Number = math.nan
    """Total cost in USD; NaN (``null``) when unknown."""
    metric_errors: Count | None = None
    """Scores left NaN because a metric failed (optional; left out of the file when ``None``)."""
    judge_errors: Count | None = None
    """Scores left NaN because the judge failed (optional; left out of the file when ``None``)."""
    judge_cost: Number = math.nan
    """Cost of judge calls in USD (optional; left out of the file when NaN)."""


class EvalRun(_Record):
    """One evaluation run, as stored in a run file (format ``cogitator.eval-run``, version 1).

    Tables (DESIGN §2): :attr:`results_frame`, :attr:`scores`, :attr:`cases_frame`
    and the wide :meth:`to_frame`. Build one from a dict (snake_case or camelCase
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

    @field_validator("run_id")
    @classmethod
    def _valid_run_id(cls, value: str) -> str:
        return check_run_id(value)

    @field_validator("started_at", "finished_at", mode="before")
    @classmethod
    def _iso_time(cls, value: Any) -> Any:
        if isinstance(value, datetime.datetime):
            return iso_utc(value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc))
        if isinstance(value, str):
            try:
                datetime.datetime.fromisoformat(value)
            except ValueError:
                raise InputError(
                    f"must be an ISO 8601 time such as '2026-10-22T10:15:30.123Z'; got {describe(value)}"
                ) from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _number_repeats(cls, data: Any) -> Any:
        """A result without ``occurrence`` (a file from another implementation) is numbered by order of appearance.

        Otherwise every copy of a repeated case would be occurrence 0 and be paired as one case.
        """
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list) or not any(
            isinstance(r, dict) and "occurrence" not in r for r in results
        ):
            return data
        seen: dict[tuple[Any, Any], int] = {}
        numbered = []
        for r in results:
            if isinstance(r, dict):
                ident = (r.get("caseKey", r.get("case_key")), r.get("trial", 0))
                if isinstance(ident[0], str) and isinstance(ident[1], int):  # else let validation name the field
                    count = seen.get(ident, 0)
                    seen[ident] = count + 1
                    if "occurrence" not in r:
                        r = {**r, "occurrence": count}
            numbered.append(r)
        return {**data, "results": numbered}

    @model_validator(mode="after")
    def _derive(self) -> EvalRun:
        if self.dataset is None:
            cases = self.to_dataset()
            self.dataset = DatasetRecord(fingerprint=cases.fingerprint, cases=len(cases))
        if self.prompts is None:
            self.prompts = {r.prompt.key: r.prompt for r in self.results if r.prompt and r.prompt.key is not None}
        if self.aggregated is None:
            self.aggregated = {
                name: AggregateRecord.model_validate(dataclasses.asdict(aggregate(values)))
                for name, values in self._score_lists().items()
            }
        if self.stats is None:
            costs = [r.usage.cost for r in self.results if not math.isnan(r.usage.cost)]
            self.stats = StatsRecord(
                total=len(self.results),
                errors=sum(r.error is not None for r in self.results),
                cost=sum(costs) if costs else math.nan,
            )
        return self

    # -- identity and summaries --------------------------------------------------

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
        """Id, name, metadata, times, number of cases and the mean of every metric (NaN when none)."""
        return {
            "id": self.run_id, "name": self.name, "metadata": self.metadata,
            "started_at": self.started_at, "finished_at": self.finished_at,
            "cases": self.dataset.cases,
            "metrics": {name: agg.mean for name, agg in self.aggregated.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON data with the file's camelCase keys, in model order (NaN as ``None``)."""
        return jsonable(self.model_dump(by_alias=True))

    def save(self, target: Any) -> Any:
        """Write the run file; see :func:`cogeval.data.save_run`. Returns the path written."""
        from cogeval.data.runfile import save_run

        return save_run(self, target)

    # -- tables --------------------------------------------------------------------

    @property
    def results_frame(self) -> pd.DataFrame:
        """One row per case × trial with the DESIGN §2 ``results`` columns."""
        rows = [
            (self.run_id, r.case_key, r.occurrence, r.trial, r.output, r.error, r.duration,
             r.usage.input_tokens, r.usage.output_tokens, r.usage.cost, r.trace_id)
            for r in self.results
        ]
        frame = pd.DataFrame(rows, columns=list(col.RESULTS_COLUMNS))
        return frame.astype({
            col.OCCURRENCE: "int64", col.TRIAL: "int64", col.DURATION_S: float, col.COST_USD: float,
            col.INPUT_TOKENS: "Int64", col.OUTPUT_TOKENS: "Int64",
        })

    @property
    def scores(self) -> pd.DataFrame:
        """One row per case × trial × metric with the DESIGN §2 ``scores`` columns; a missing score is NaN."""
        rows = [
            (self.run_id, r.case_key, r.occurrence, r.trial, s.metric, s.score, s.error)
            for r in self.results
            for s in r.scores
        ]
        frame = pd.DataFrame(rows, columns=list(col.SCORES_COLUMNS))
        return frame.astype({col.OCCURRENCE: "int64", col.TRIAL: "int64", col.SCORE: float})

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
        frame.insert(4, col.INPUT, pd.Series([r.case.input for r in self.results], dtype=object))
        frame.insert(5, col.EXPECTED, pd.Series([r.case.expected for r in self.results], dtype=object))
        for name in self.metric_names:
            frame[name] = pd.Series(
                [next((s.score for s in r.scores if s.metric == name), math.nan) for r in self.results], dtype=float
            )
        return frame

    def _score_lists(self) -> dict[str, list[float]]:
        lists: dict[str, list[float]] = {}
        for r in self.results:
            for s in r.scores:
                lists.setdefault(s.metric, []).append(s.score)
        return lists

    # -- from a table ------------------------------------------------------------------

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
    ) -> EvalRun:
        """A run from a tidy table of per-case scores (a CSV export of another tool, a ``to_frame()``...).

        Cases are identified by a ``case_key`` column, or else by ``input`` (and
        ``expected``): ``case_key = Case(input, expected).key``. ``occurrence`` and
        ``trial`` columns are optional (0 when absent).

        - **Long form** (the frame has both ``metric`` and ``score`` columns): one row
          per case × metric; an ``error`` column is the score's error.
        - **Wide form** (otherwise): one row per case, and every column that is not
          one of ``run_id, case_key, occurrence, trial, input, expected, context,
          metadata, turns, output, error, duration_s, input_tokens, output_tokens,
          cost_usd, trace_id`` holds a metric's scores; ``error`` is the target's error.

        Scores must be numbers (or numeric text); missing ones are NaN.
        ``directions`` maps metric names to ``higher_is_better``; every metric not
        named is higher-is-better, so pass ``directions={"latency": False}`` for
        latency- or cost-like metrics (never guessed from the name).

        >>> frame = pd.DataFrame({"input": ["2+2", "3+3"], "quality": [1.0, 0.5], "latency": [0.2, 0.4]})
        >>> run = EvalRun.from_frame(frame, directions={"latency": False})
        >>> run.aggregated["quality"].mean, run.directions
        (0.75, {'quality': True, 'latency': False})
        """
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"from_frame needs a pandas DataFrame; got {describe(frame)}")
        columns = [str(c) for c in frame.columns]
        frame = frame.set_axis(columns, axis=1)
        if col.CASE_KEY not in columns and col.INPUT not in columns:
            raise InputError(f"from_frame needs a 'case_key' or 'input' column; got columns {columns!r}")
        if col.METRIC in columns and col.SCORE not in columns:
            raise InputError(
                "from_frame got a 'metric' column but no 'score' column: the long form needs both, "
                "the wide form has one column per metric and no 'metric' column"
            )
        long = col.METRIC in columns
        metric_columns = [] if long else [c for c in columns if c not in _FRAME_KNOWN]
        results: dict[tuple[str, int, int], dict[str, Any]] = {}
        metrics: dict[str, None] = dict.fromkeys(metric_columns)
        for label, row in zip(frame.index, frame.to_dict("records")):
            where = f"row {label!r}"
            row = {k: missing_to_none(v) for k, v in row.items()}
            key, case = _row_case(where, row)
            ident = (key, _row_count(where, row, col.OCCURRENCE), _row_count(where, row, col.TRIAL))
            result = results.get(ident)
            if result is None:
                result = results[ident] = _row_result(where, row, key, case, ident, wide_error=not long)
            elif not long:
                raise InputError(_repeat_message(where, ident, None))
            if long:
                metric = row[col.METRIC]
                if not isinstance(metric, str) or not metric:
                    raise InputError(f"metric in {where} must be a metric name (a non-empty string); got {describe(metric)}")
                if any(s["metric"] == metric for s in result["scores"]):
                    raise InputError(_repeat_message(where, ident, metric))
                metrics[metric] = None
                error = row.get(col.ERROR)
                result["scores"].append({
                    "metric": metric, "score": _number(f"score in {where}", row[col.SCORE]),
                    "error": None if error is None else str(error),
                })
            else:
                result["scores"] += [
                    {"metric": m, "score": _number(f"column {m!r} in {where}", row[m], wide=True)} for m in metric_columns
                ]
        directions = _checked_directions(directions, list(metrics))
        started = _moment(started_at)
        return cls.model_validate({
            "run_id": new_run_id(started) if run_id is None else check_run_id(run_id),
            "started_at": started, "finished_at": started, "name": name,
            "metadata": check_json_metadata("metadata", metadata),
            "config": {
                "metrics": [{"name": m, "higher_is_better": directions.get(m, True), "kind": "case"} for m in metrics],
                "trials": max((ident[2] + 1 for ident in results), default=1),
                "target": {"type": "frame"},
            },
            "results": list(results.values()),
        })

    # -- display -------------------------------------------------------------------

    def plot(self, metric: str) -> Any:
        """The distribution of a metric's scores (see :func:`cogeval.plot_scores`)."""
        from cogeval.present.plots import plot_scores

        return plot_scores(self, metric)

    @safe_html
    def _repr_html_(self) -> str:
        head = key_value_table(f"EvalRun {self.name or ''}", {
            "run id": self.run_id, "started": self.started_at, "finished": self.finished_at,
            "cases": self.dataset.cases, "results": self.stats.total, "errors": self.stats.errors,
            "duration (s)": self.stats.duration, "cost (USD)": self.stats.cost,
        })
        directions = self.directions
        rows = [
            {col.METRIC: name, "direction": {True: "↑", False: "↓"}.get(directions.get(name), ""), **agg.model_dump()}
            for name, agg in self.aggregated.items()
        ]
        checks = html_table(
            [{"assertion": a.name, "result": badge("pass", "good") if a.passed else badge("fail", "bad"), "message": a.message}
             for a in self.assertions],
            ["assertion", "result", "message"], raw_columns=["result"],
        ) if self.assertions else ""
        return head + html_table(rows, [col.METRIC, "direction", "mean", "p50", "p95", "min", "max", "count", "missing"]) + checks


_RESULT_FIELDS = (col.OUTPUT, col.ERROR, col.DURATION_S, col.INPUT_TOKENS, col.OUTPUT_TOKENS, col.COST_USD, col.TRACE_ID)
_FRAME_KNOWN = frozenset({col.RUN_ID, col.CASE_KEY, col.OCCURRENCE, col.TRIAL, *FIELDS, *_RESULT_FIELDS})


def _row_case(where: str, row: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    fields = {f: row.get(f) for f in FIELDS if row.get(f) is not None}
    key = row.get(col.CASE_KEY)
    if key is None and col.CASE_KEY in row and col.INPUT not in row:
        raise InputError(f"case_key in {where} is missing")
    if key is not None and not isinstance(key, str):
        key = str(key)
    if col.INPUT not in fields and col.TURNS not in fields:
        if key is None:
            raise InputError(f"input in {where} is missing (give an input or a case_key)")
        fields[col.INPUT] = key  # only a key is known: it stands in for the input
    try:
        case = Case(**fields)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None
    return (case.key if key is None else key), case.to_dict()


def _row_count(where: str, row: Mapping[str, Any], column: str) -> int:
    value = row.get(column)
    if value is None:
        return 0
    if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer() and value >= 0:
        return int(value)
    raise InputError(f"{column} in {where} must be an integer >= 0; got {describe(value)}")


def _row_result(where: str, row: Mapping[str, Any], key: str, case: dict[str, Any],
                ident: tuple[str, int, int], *, wide_error: bool) -> dict[str, Any]:
    error = row.get(col.ERROR) if wide_error else None
    trace = row.get(col.TRACE_ID)
    return {
        "case_key": key, "occurrence": ident[1], "trial": ident[2], "case": case,
        "output": row.get(col.OUTPUT), "error": None if error is None else str(error),
        "duration": _number(f"duration_s in {where}", row.get(col.DURATION_S)),
        "usage": {
            "input_tokens": _row_count(where, row, col.INPUT_TOKENS) if row.get(col.INPUT_TOKENS) is not None else None,
            "output_tokens": _row_count(where, row, col.OUTPUT_TOKENS) if row.get(col.OUTPUT_TOKENS) is not None else None,
            "cost": _number(f"cost_usd in {where}", row.get(col.COST_USD)),
        },
        "trace_id": None if trace is None else str(trace),
        "scores": [],
    }


def _repeat_message(where: str, ident: tuple[str, int, int], metric: str | None) -> str:
    what = f"case_key {ident[0]!r} occurrence {ident[1]} trial {ident[2]}"
    if metric is not None:
        what += f" metric {metric!r}"
    return f"{where} repeats {what}; add an 'occurrence' or 'trial' column to tell repeated rows apart"


def _number(where: str, value: Any, *, wide: bool = False) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (Real, bool)):
        return float(value)
    if isinstance(value, str):
        if not value.strip():
            return math.nan  # an empty cell of a CSV read as text
        try:
            return float(value.strip())
        except ValueError:
            pass
    hint = (
        " (in the wide form every column other than "
        + ", ".join(sorted(_FRAME_KNOWN)) + " holds a metric's scores)"
    ) if wide else ""
    raise InputError(f"{where} is not a number: {describe(value)}{hint}")


def _checked_directions(directions: Mapping[str, bool] | None, metrics: list[str]) -> dict[str, bool]:
    if directions is None:
        return {}
    if not isinstance(directions, Mapping):
        raise InputError(f"directions must map metric names to higher_is_better (True/False); got {describe(directions)}")
    for name, higher in directions.items():
        if name not in metrics:
            raise InputError(f"directions names {name!r}, which is not a metric of the frame; its metrics are {metrics!r}")
        if not isinstance(higher, bool):
            raise InputError(f"directions[{name!r}] must be True or False (higher is better); got {describe(higher)}")
    return dict(directions)


def _moment(started_at: datetime.datetime | str | None) -> datetime.datetime:
    if started_at is None:
        return utc_now()
    if isinstance(started_at, str):
        try:
            started_at = datetime.datetime.fromisoformat(started_at)
        except ValueError:
            raise InputError(f"started_at must be an ISO 8601 time or a datetime; got {describe(started_at)}") from None
    if not isinstance(started_at, datetime.datetime):
        raise InputError(f"started_at must be an ISO 8601 time or a datetime; got {describe(started_at)}")
    return started_at if started_at.tzinfo else started_at.replace(tzinfo=datetime.timezone.utc)
