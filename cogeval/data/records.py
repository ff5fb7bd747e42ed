"""The parts of a run file (DESIGN §5): one pydantic record per object of the ``cogitator.eval-run`` format.

Every record has snake_case attributes and the file's camelCase keys; both are
accepted when building one. Every float is NaN in memory where the file has
``null`` (:data:`Number`), and values JSON cannot hold are made JSON-safe
(:data:`Json`). Keys a record does not know are kept and written back, since
other implementations share the format. :class:`~cogeval.data.EvalRun` (in
:mod:`cogeval.data.run`) is the whole file.

>>> StatsRecord.model_validate({"total": 2, "errors": 0, "duration": 1500, "cost": None, "judgeCalls": 4}).judge_calls
4
>>> StatsRecord(total=2, duration=1500).model_dump(by_alias=True)
{'total': 2, 'errors': 0, 'duration': 1500.0, 'cost': None}

Durations are milliseconds, as in the file; the tables and ``StatsRecord.duration_s`` give seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from typing import TYPE_CHECKING, Annotated, Any, Final

from annotated_types import Ge
from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainSerializer,
    Strict,
    StrictBool,
    StrictInt,
    StrictStr,
)
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema
from typing_extensions import TypeAliasType

from cogeval.data.case import FIELDS, Case
from cogeval.data.jsonable import VALUE_DEPTH, jsonable
from cogeval.stats import Aggregate

FORMAT: Final = "cogitator.eval-run"
VERSION: Final = 1


def _nan_if_none(value: Any) -> Any:
    return math.nan if value is None else value


def _none_if_not_finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class _FromText:
    """Marks a type whose values read from JSON text (``model_validate_json``: a run file) are checked by
    pydantic-core alone, with no Python call: :func:`cogeval.data.runfile.load_run`'s fast path. Values made in
    Python keep the type's own validation. What the text schema refuses (a number past the float range, NaN)
    sends that path back to the careful one, which names the problem."""

    def __init__(self, text: core_schema.CoreSchema | Any) -> None:
        self.text = text  # the schema of a value read from text, or a type to make it from

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        text = self.text if isinstance(self.text, dict) else handler.generate_schema(self.text)
        return core_schema.json_or_python_schema(json_schema=text, python_schema=handler(source))


class _CheckedInPython:
    """Marks a type whose values made in Python also pass ``check`` (a wrap validator: value, handler), while
    values read from JSON text keep the type's schema alone, with no Python call (the fast path's rule, as for
    :class:`_FromText`)."""

    def __init__(self, check: core_schema.NoInfoWrapValidatorFunction) -> None:
        self.check = check

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        python = core_schema.no_info_wrap_validator_function(self.check, handler(source))
        return core_schema.json_or_python_schema(json_schema=handler(source), python_schema=python)


_FINITE = core_schema.float_schema(allow_inf_nan=False)
_NAN = core_schema.chain_schema([core_schema.none_schema(), core_schema.no_info_plain_validator_function(_nan_if_none)])
Number = Annotated[
    float,
    BeforeValidator(_nan_if_none),
    PlainSerializer(_none_if_not_finite),
    _FromText(core_schema.union_schema([_FINITE, _NAN], mode="left_to_right")),
]
"""A float that is NaN in memory where the file has ``null``; NaN and ±inf are written as ``null``."""

def _json_value(value: Any) -> Any:
    """A value as JSON can hold it, cut at :data:`VALUE_DEPTH` so that the file it goes into loads back equal."""
    if type(value) is str:  # the common case, as jsonable gives it, without its call
        return value
    return jsonable(value, max_depth=VALUE_DEPTH)


_JsonSafe = Annotated[Any, BeforeValidator(_json_value), PlainSerializer(_json_value, when_used="unless-none")]
if TYPE_CHECKING:  # what a Json field holds, for type checkers
    Json = Any
    _TextJson = Any
else:  # text and None first, tried in order: pydantic-core takes and writes them without a Python call
    _TextJson = TypeAliasType(  # tried in order, commonest first: each refusal costs an error object
        "_TextJson",
        Annotated[
            None | StrictStr | dict[str, "_TextJson"] | list["_TextJson"] | StrictInt  # noqa: RUF036
            | Annotated[float, Strict(), AllowInfNan(False)] | StrictBool,
            Field(union_mode="left_to_right"),
        ],
    )
    """Any JSON value with finite numbers, as read from text (whose depth the reader checks first)."""
    Json = Annotated[
        Annotated[StrictStr | None | _JsonSafe, Field(union_mode="left_to_right")],  # noqa: RUF036
        _FromText(_TextJson),
    ]
"""Any value, made JSON-safe (bytes and objects as text, circular references as ``"[Circular]"``,
keys as text, structures deeper than the readers' limit cut; see :func:`~cogeval.data.jsonable.jsonable`).
Text and ``None``, most values, are taken and written by pydantic-core without a Python call."""

MAX_COUNT: Final = 2**63 - 1
"""The largest count a run holds (occurrence, trial, tokens): what the int64 columns of its tables hold."""
_Count = Annotated[int, Ge(0), _FromText(core_schema.int_schema(ge=0, le=MAX_COUNT))]
"""A count: read from text, at most :data:`MAX_COUNT` (a larger one sends the read to the careful path, which names it)."""

_is_none = functools.partial(operator.is_, None)
"""Whether a value is ``None``: a C callable, so leaving a field out of the file costs no Python call per record."""


def _absent_number(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _omitted(default: Any = None, *, number: bool = False) -> Any:
    """A field left out of the file when it is ``None`` (``number``: or NaN)."""
    return Field(default, exclude_if=_absent_number if number else _is_none)


class _Record(BaseModel):
    """Base of every part of the file: camelCase keys, unknown keys kept, NaN-aware equality."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)
    __pydantic_extra__: dict[str, Json] = Field(init=False)  # unknown keys: JSON-safe, read and written as Json

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.model_dump(by_alias=True) == other.model_dump(by_alias=True)

    __hash__ = None  # type: ignore[assignment]


class DatasetRecord(_Record):
    """``dataset``: which cases were run."""

    fingerprint: str
    """SHA-256 hex of the canonical JSON of the list of cases run (``Dataset.fingerprint``)."""
    cases: _Count
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
    direction_assumed: bool = Field(False, exclude_if=operator.not_)
    """Nobody gave the direction (a table's column read without ``directions=``, a score imported without one, a
    bare name in the format's own form), so ``higher_is_better`` is the assumed True and a comparison says so;
    written only when True."""


_GIVEN = ("higherIsBetter", "higher_is_better", "directionAssumed", "direction_assumed")
"""The keys of a metric's entry that say whether its direction was given."""


def _named_metric(value: Any) -> Any:
    """A metric's entry as its record: the format's own form, its name alone, is the record of a metric with that
    name; an entry that does not say its direction has it assumed (``direction_assumed``).

    >>> _named_metric("exactMatch"), _named_metric({"name": "latency", "higherIsBetter": False})
    ({'name': 'exactMatch', 'directionAssumed': True}, {'name': 'latency', 'higherIsBetter': False})
    """
    if isinstance(value, str):
        value = {"name": value}
    if isinstance(value, dict) and not any(key in value for key in _GIVEN):
        return {**value, "directionAssumed": True}
    return value


Metrics = list[Annotated[MetricRecord, BeforeValidator(_named_metric)]]
"""Metric records; a bare name (the format's own form, ``"metrics": ["exactMatch"]``) reads as ``{"name": ...}``."""


class ConfigRecord(_Record):
    """``config``: how the run was made. Extra keys (``timeoutS``, ``retries``...) are kept."""

    metrics: Metrics = Field(default_factory=list)
    """Per-case metrics, in the order the suite listed them."""
    statistical_metrics: Metrics = Field(default_factory=list)
    """Run-level metrics (latency, cost...): aggregated, no per-case scores; per-case values in ``results[].statisticalValues``
    for custom ones, read from ``duration`` and ``usage`` for the built-ins."""
    judge: dict[str, Json] | None = None
    """The LLM judge's configuration (such as ``{model, temperature, samples}``), or ``None``."""
    trials: _Count = 1
    """How many times each case was run."""
    concurrency: _Count = 1
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

    input_tokens: _Count | None = None
    """Prompt tokens."""
    output_tokens: _Count | None = None
    """Completion tokens."""
    cost: Number = math.nan
    """Cost in USD; NaN (``null``) when unknown."""


def _valid_case(data: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> Any:
    """A record made in Python is checked as a :class:`Case`; one made from a ``Case`` was checked when the case was made."""
    if isinstance(data, Case):
        return handler(data.to_dict())
    record = handler(data)
    record.to_case()  # raises InputError, a ValueError, naming the field
    return record


class CaseRecord(_Record):
    """``results[].case``: the case as :meth:`Case.to_dict` writes it; absent fields left out."""

    input: Json = _omitted()
    """What the target received (required unless ``turns`` is given)."""
    expected: Json = _omitted()
    """The reference answer, if any."""
    context: Json = _omitted()
    """Grounding documents, if any."""
    metadata: Annotated[Json, _FromText(dict[str, _TextJson] | None)] = _omitted()
    """Labels of the case (a JSON object), if any."""
    turns: Annotated[Json, _FromText(Annotated[list[StrictStr | dict[str, _TextJson]], Field(min_length=1)] | None)] = (
        _omitted()
    )
    """The user messages of a multi-turn case (a non-empty list of strings or objects), if any."""

    def to_case(self) -> Case:
        """This record as a :class:`Case`."""
        return Case(**{name: getattr(self, name) for name in FIELDS})


CheckedCase = Annotated[CaseRecord, _CheckedInPython(_valid_case)]
"""A field holding a case: made in Python from a :class:`Case` or checked as one; read from JSON text, checked
by the records' text schemas and :func:`check_cases_read_from_text`."""


def check_cases_read_from_text(cases: list[CaseRecord]) -> None:
    """Check as a :class:`Case` every record read from JSON text that has no input: whether it has turns is the
    one rule pydantic-core leaves unchecked (the text's limits and the fields' text schemas hold the rest). Raises
    :class:`~cogeval.errors.InputError`. Most runs have none, which one pass in C finds."""
    if any(map(_is_none, map(operator.attrgetter("input"), cases))):
        for case in cases:
            if case.input is None:
                case.to_case()


class TurnRecord(_Record):
    """One turn of a multi-turn case (``results[].turns[]``)."""

    input: Json = None
    """The user message sent."""
    output: Json = None
    """The answer."""
    error: str | None = _omitted()
    """Why the turn failed (left out of the file when it did not)."""
    duration: Number = math.nan
    """Milliseconds the turn took (the format's unit)."""
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

    case_key: str = Field(min_length=1)
    """The case's key: SHA-256 of the canonical JSON of ``{input, turns, expected}`` (``Case.key``)."""
    occurrence: _Count = 0
    """Counts earlier cases with the same key in the dataset (0 for the first)."""
    trial: _Count = 0
    """The trial, from 0."""
    case: CheckedCase
    """The case that was run."""
    output: Json = None
    """The target's answer (``""`` when it failed)."""
    error: str | None = None
    """Why the target failed, or ``None``."""
    duration: Number = math.nan
    """Milliseconds the final attempt took (the format's unit; ``duration_s`` in :attr:`EvalRun.results_frame`)."""
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
    statistical_values: dict[str, Number] | None = _omitted()
    """This result's value of each statistical metric that writes its per-case values (``statisticalValues``:
    name → number, ``null`` when unknown): custom ones, not latency, cost or token_usage, which ``duration``
    and ``usage`` give back. Left out of the file when ``None``; other readers of the format ignore it."""
    case_index: _Count | None = _omitted()
    """The case's position in the whole dataset, from 0 (``caseIndex``), written by a shard run only
    (:class:`ShardRecord`), so that :func:`~cogeval.merge_runs` puts the shards' results back in dataset order;
    left out of the file when ``None``."""


class ShardRecord(_Record):
    """``shard``: the part of a suite's run that a shard run holds (``suite.run(shard=(index, count))``).

    The run holds the cases whose case key and occurrence hash into shard ``index`` of ``count``
    (:func:`cogeval.evaluate.shards.shard_of`); its ``dataset`` is the whole dataset's.

    >>> ShardRecord(index=1, count=4).model_dump(by_alias=True)
    {'index': 1, 'count': 4}
    """

    index: _Count
    """Which shard, from 0."""
    count: Annotated[int, Ge(1), _FromText(core_schema.int_schema(ge=1, le=MAX_COUNT))]
    """How many shards the run was split into (at least 1)."""


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
    count: _Count = 0
    """Scores present."""
    missing: _Count = 0
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
    """``stats``: counts and totals of the run.

    The judge's usage is counted apart from the target's: ``judge_calls`` (HTTP
    calls, failed attempts included), ``judge_cache_hits``, the tokens its server
    reported and ``judge_cost`` (NaN when unknown: no ``prices``). A run without
    a judge has them ``None`` (and NaN), and the file leaves them out.
    """

    total: _Count = 0
    """Results (case × trial)."""
    errors: _Count = 0
    """Results whose target failed."""
    duration: Number = math.nan
    """Milliseconds the run took (the format's unit; :attr:`duration_s` in seconds)."""
    cost: Number = math.nan
    """Total cost of the target's answers in USD; NaN (``null``) when unknown."""
    metric_errors: _Count | None = _omitted()
    """Scores left NaN because a metric failed (optional; left out of the file when ``None``)."""
    judge_errors: _Count | None = _omitted()
    """Scores left NaN because the judge failed (optional; left out of the file when ``None``)."""
    judge_cost: Number = _omitted(math.nan, number=True)
    """Cost of judge calls in USD (``judgeCost``; optional, left out of the file when NaN)."""
    judge_calls: _Count | None = _omitted()
    """HTTP calls made to the judge, failed attempts included (``judgeCalls``; left out when ``None``)."""
    judge_cache_hits: _Count | None = _omitted()
    """Judge answers read from the judge's cache (``judgeCacheHits``; left out when ``None``)."""
    judge_input_tokens: _Count | None = _omitted()
    """Prompt tokens the judge's server reported (``judgeInputTokens``; left out when ``None``)."""
    judge_output_tokens: _Count | None = _omitted()
    """Completion tokens the judge's server reported (``judgeOutputTokens``; left out when ``None``)."""

    @property
    def duration_s(self) -> float:
        """The run's wall time in seconds."""
        return self.duration / 1000

    @property
    def cost_usd(self) -> float:
        """The target's cost in US dollars (NaN when unknown)."""
        return self.cost

    @property
    def judge_cost_usd(self) -> float:
        """The judge's cost in US dollars (NaN when unknown)."""
        return self.judge_cost

    def counts_text(self) -> str:
        """The counts a report opens with: ``"12 results, 0 errors, 0 metric errors, 12 judge errors"``.

        Judge errors are shown when a judge was asked (or failed) in the run,
        so a run whose every judge call failed never reads as a clean one.

        >>> StatsRecord(total=12, metric_errors=0, judge_errors=12).counts_text()
        '12 results, 0 errors, 0 metric errors, 12 judge errors'
        """
        text = f"{self.total} results, {self.errors} errors, {self.metric_errors or 0} metric errors"
        if self.judge_calls or self.judge_cache_hits or self.judge_errors:
            text += f", {self.judge_errors or 0} judge errors"
        return text
