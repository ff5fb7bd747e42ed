"""A run's data from a tidy table of per-case scores: what :meth:`EvalRun.from_frame <cogeval.data.EvalRun.from_frame>` reads.

The rules of a frame, in the order they apply:

- cases are identified by a ``case_key`` column, or else by ``input`` (and
  ``expected``): ``case_key = Case(input, expected).key``; ``occurrence`` and
  ``trial`` are optional columns (0 when absent);
- a frame with both ``metric`` and ``score`` columns is in the **long form**
  (one row per case × metric; ``error`` is the score's error), any other in the
  **wide form** (one row per case; ``error`` is the target's error): the
  columns named in ``metrics``, or else every column not in :data:`_FRAME_KNOWN`
  whose values are all numbers (or numeric text, or missing), hold a metric's scores;
- any other column (``topic``, ``difficulty``...) is a field of the case's
  ``metadata``, so ``compare_runs(..., by="topic")`` and every per-case table keep it;
- a score is a number or numeric text; a missing one is NaN;
- every metric is higher-is-better unless ``directions`` says otherwise; a metric ``directions`` does not name
  has its direction *assumed* (``direction_assumed`` in the run file), and a comparison says so, or lets it
  only inform when its name reads as a cost (``docs/comparing.md``, Directions nobody gave).

>>> data = run_data_from_frame(pd.DataFrame({"input": ["2+2"], "quality": [1.0]}), run_id="20261022T101530123Z-1a2b3c4d")
>>> data["results"][0]["scores"], data["config"]["metrics"]
([{'metric': 'quality', 'score': 1.0}], [{'name': 'quality', 'higher_is_better': True, 'kind': 'case', 'direction_assumed': True}])
"""

from __future__ import annotations

import datetime
import math
import operator
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_json_metadata, describe
from cogeval.data.case import FIELDS, Case
from cogeval.data.dataset import missing_to_none
from cogeval.data.records import MAX_COUNT, ResultRecord
from cogeval.data.run_id import check_run_id, new_run_id, utc_now
from cogeval.errors import InputError


def run_data_from_frame(
    frame: pd.DataFrame,
    *,
    run_id: str | None = None,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    directions: Mapping[str, bool] | None = None,
    started_at: datetime.datetime | str | None = None,
    metrics: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The data of a run (snake_case keys, for ``EvalRun.model_validate``) read from ``frame`` by the rules above."""
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
    metric_columns = [] if long else _metric_columns(frame, metrics)
    extra = [c for c in columns if c not in _FRAME_KNOWN and c not in metric_columns
             and not (long and c in (col.METRIC, col.SCORE))]
    results: dict[tuple[str, int, int], dict[str, Any]] = {}
    names: dict[str, None] = dict.fromkeys(metric_columns)
    numbers = _number_columns(frame, metric_columns)  # the others are read cell by cell, and their errors name the cell
    rows = frame.drop(columns=list(numbers)).to_dict("records")
    for position, (label, cells) in enumerate(zip(frame.index, rows)):
        where = f"row {label!r}"
        row = {str(k): missing_to_none(v) for k, v in cells.items()}
        key, case = _row_case(where, row, extra)
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
            names[metric] = None
            error = row.get(col.ERROR)
            result["scores"].append({
                "metric": metric, "score": _number(f"score in {where}", row[col.SCORE]),
                "error": None if error is None else str(error),
            })
        else:
            result["scores"] += [
                {"metric": m, "score": float(numbers[m][position]) if m in numbers
                 else _number(f"column {m!r} in {where}", row[m], wide=True)} for m in metric_columns
            ]
    directions = check_directions(directions, list(names))
    started = _moment(started_at)
    return {
        "run_id": new_run_id(started) if run_id is None else check_run_id(run_id),
        "started_at": started, "finished_at": started, "name": name,
        "metadata": check_json_metadata("metadata", metadata),
        "config": {
            "metrics": [{"name": m, "higher_is_better": directions.get(m, True), "kind": "case"}
                        | ({} if m in directions else {"direction_assumed": True}) for m in names],
            "trials": max((ident[2] + 1 for ident in results), default=1),
            "target": {"type": "frame"},
        },
        "results": list(results.values()),
    }


_RESULT_FIELDS = (col.OUTPUT, col.ERROR, col.DURATION_S, col.INPUT_TOKENS, col.OUTPUT_TOKENS, col.COST_USD, col.TRACE_ID)
_FRAME_KNOWN = frozenset({col.RUN_ID, col.CASE_KEY, col.OCCURRENCE, col.TRIAL, *FIELDS, *_RESULT_FIELDS})
"""The columns of a wide frame that are not metrics: ids, the case's fields and the result's."""


def _metric_columns(frame: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    """The score columns of a wide frame: ``metrics``, or every unknown column holding only numbers."""
    if metrics is not None:
        if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
            raise InputError(f"metrics must be a list of column names; got {describe(metrics)}")
        missing = [m for m in metrics if m not in frame.columns]
        if missing:
            raise InputError(f"metrics {missing!r} are not columns of the frame (it has: {', '.join(frame.columns)})")
        return list(dict.fromkeys(metrics))
    return [c for c in frame.columns if c not in _FRAME_KNOWN and _numeric(frame[c])]


def _number_columns(frame: pd.DataFrame, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The columns of ``names`` of a number dtype (bool, integer, float) and no ±inf, as float arrays (NaN where missing)."""
    kinds = (pd.api.types.is_bool_dtype, pd.api.types.is_integer_dtype, pd.api.types.is_float_dtype)
    arrays = {m: frame[m].to_numpy(dtype=float, na_value=math.nan) for m in names
              if any(kind(frame[m].dtype) for kind in kinds)}
    return {m: values for m, values in arrays.items() if not np.isinf(values).any()}


def _numeric(column: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(column):  # bool too: a pass/fail column
        return True
    return all(_number_like(missing_to_none(value)) for value in column)


def _number_like(value: Any) -> bool:
    """A number (however large), numeric text or nothing: a score cell, even one :func:`_number` then refuses."""
    if value is None or isinstance(value, (Real, bool)):
        return True
    if not isinstance(value, str):
        return False
    try:
        float(value.strip() or "nan")
    except ValueError:
        return False
    return True


def _row_case(where: str, row: Mapping[str, Any], extra: Sequence[str] = ()) -> tuple[str, Case]:
    fields = {f: row.get(f) for f in FIELDS if row.get(f) is not None}
    labels = {c: row[c] for c in extra if row.get(c) is not None}
    if labels:
        metadata = fields.get(col.METADATA)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InputError(f"metadata in {where} must be an object to hold the columns {list(labels)}; "
                             f"got {describe(metadata)}")
        fields[col.METADATA] = {**labels, **(metadata or {})}
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
    return (case.key if key is None else key), case  # a Case, which the run's record takes without checking it again


def _row_count(where: str, row: Mapping[str, Any], column: str) -> int:
    value = row.get(column)
    if value is None:
        return 0
    if isinstance(value, Integral) and not isinstance(value, bool) and operator.index(value) >= 0:
        return operator.index(value)
    if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer() and float(value) >= 0:
        return int(float(value))  # a whole float, as a column with a missing cell holds its numbers
    raise InputError(f"{column} in {where} must be an integer >= 0; got {describe(value)}")


def _row_result(where: str, row: Mapping[str, Any], key: str, case: Case,
                ident: tuple[str, int, int], *, wide_error: bool) -> dict[str, Any]:
    error = row.get(col.ERROR) if wide_error else None
    trace = row.get(col.TRACE_ID)
    return {
        "case_key": key, "occurrence": ident[1], "trial": ident[2], "case": case,
        "output": row.get(col.OUTPUT), "error": None if error is None else str(error),
        "duration": _number(f"duration_s in {where}", row.get(col.DURATION_S)) * 1000,  # the file's milliseconds
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
    number: float | None = None
    if isinstance(value, (Real, bool)):
        try:
            number = float(value)
        except OverflowError:  # an int past the largest float
            number = math.inf
    elif isinstance(value, str):
        if not value.strip():
            return math.nan  # an empty cell of a CSV read as text
        try:
            number = float(value.strip())
        except ValueError:
            pass
    if number is not None and math.isinf(number):
        raise InputError(f"{where} is not a finite number: {describe(value)} (leave a missing number empty or NaN)")
    if number is not None:
        return number
    hint = " (metrics= names it as a score column; leave it out and a text column is case metadata)" if wide else ""
    raise InputError(f"{where} is not a number: {describe(value)}{hint}")


def check_directions(directions: Mapping[str, bool] | None, metrics: list[str], source: str = "frame") -> dict[str, bool]:
    """``directions`` checked against the ``metrics`` of the ``source`` (a frame, an imported run): names and bools."""
    if directions is None:
        return {}
    if not isinstance(directions, Mapping):
        raise InputError(f"directions must map metric names to higher_is_better (True/False); got {describe(directions)}")
    for name, higher in directions.items():
        if name not in metrics:
            raise InputError(f"directions names {name!r}, which is not a metric of the {source}; its metrics are {metrics!r}")
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
    return started_at if started_at.tzinfo else started_at.replace(tzinfo=datetime.UTC)




def number_repeats(results: list[Any]) -> list[Any]:
    """The results with each one that lacks ``occurrence`` (a file from another implementation) numbered by order
    of appearance among the results of its case key and trial; else every copy of a repeated case would be
    occurrence 0 and be paired as one case. A result is a dict (as parsed) or a record read from text (whose
    fields set tells whether it was given); a number is given as a dict key would be, and nothing is changed in place.

    >>> [r["occurrence"] for r in number_repeats([{"caseKey": "k"}, {"caseKey": "k", "trial": 1}, {"caseKey": "k"}])]
    [0, 0, 1]
    """
    if all(map(_has_occurrence, results)):
        return results
    seen: dict[tuple[Any, Any], int] = {}
    numbered = []
    for r in results:
        if isinstance(r, ResultRecord):
            ident: tuple[Any, Any] = (r.case_key, r.trial)
        elif isinstance(r, dict):
            ident = (r.get("caseKey", r.get("case_key")), r.get("trial", 0))
        else:
            ident = (None, None)
        if isinstance(ident[0], str) and isinstance(ident[1], int):  # else let validation name the field
            count = seen.get(ident, 0)
            seen[ident] = count + 1
            if not _has_occurrence(r):
                r = _with_occurrence(r, count)
        numbered.append(r)
    return numbered


def _has_occurrence(result: Any) -> bool:
    if isinstance(result, ResultRecord):
        return "occurrence" in result.model_fields_set
    return not isinstance(result, dict) or "occurrence" in result


def _with_occurrence(result: Any, occurrence: int) -> Any:
    if isinstance(result, dict):
        return {**result, "occurrence": occurrence}
    numbered = result.model_copy()
    numbered.occurrence = occurrence  # given, as by a dict key: the fields set says so
    return numbered


_IDENTITY = operator.attrgetter("case_key", "occurrence", "trial")
_TOKENS = tuple(map(operator.attrgetter, ("input_tokens", "output_tokens")))


def check_results(results: Sequence[ResultRecord], *, counted: bool = False) -> None:
    """The rule of every run, however it was made: one result per case key, occurrence and trial (a comparison
    pairs results by them), and counts within the int64 columns of the results table; errors name the result.
    ``counted``: the counts are known to be within (records read from text, whose schema holds them there)."""
    identities = list(map(_IDENTITY, results))
    largest = [0]
    if not counted:
        usages = list(map(operator.attrgetter("usage"), results))
        largest += [max(map(max, map(operator.itemgetter(1, 2), identities)), default=0)]
        largest += [max(filter(None, map(tokens, usages)), default=0) for tokens in _TOKENS]
    if max(largest) <= MAX_COUNT and len(set(identities)) == len(identities):
        return  # the common case, checked without a Python call per result; else the loop below names the problem
    seen: dict[tuple[str, int, int], int] = {}
    for index, r in enumerate(results):
        counts = {"occurrence": r.occurrence, "trial": r.trial,
                  "usage.inputTokens": r.usage.input_tokens, "usage.outputTokens": r.usage.output_tokens}
        for field, value in counts.items():
            if value is not None and value > MAX_COUNT:
                raise InputError(f"results[{index}].{field}: {describe(value)} is too large (at most 2**63 - 1)")
        first = seen.setdefault((r.case_key, r.occurrence, r.trial), index)
        if first != index:
            raise InputError(
                f"results[{index}] has the same case key, occurrence and trial as results[{first}] "
                f"({r.case_key!r}, {r.occurrence}, {r.trial}); a run holds one result per case key, occurrence and trial"
            )
