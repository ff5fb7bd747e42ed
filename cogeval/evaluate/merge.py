"""merge_runs: the shard runs of one suite run (``suite.run(shard=(i, n))``) made into that one run.

- the shards are the runs of shards 0 … n−1 of one run: each once, every one of them, each complete, made
  with the same configuration (``config``, ``name``, ``metadata``) on the same dataset (fingerprint and
  case count), holding disjoint cases; anything else is refused, naming the shard;
- the results go back in dataset order (each result's ``caseIndex``, then its trial), so the merged run's
  cases make up the dataset its shards name (its fingerprint is checked again) and its results are those
  of the single-process run, in its order, repeated cases included;
- ``aggregated`` is computed again from the merged results (scores; statistical metrics from their per-case
  values), and ``stats``: counts added up, ``duration`` the wall time from the first shard's start to the
  last one's finish, ``shardsDuration`` the shards' durations summed;
- the merged run has a new run id (from its start), no ``shard``, no ``caseIndex``, and ``mergedFrom``: the
  shards' run ids in shard order. A shard's assertions judged its part: the merged run checks ``assertions``.

>>> from cogeval import Dataset, EvalSuite, exact_match
>>> data = Dataset.from_records([{"input": f"q{i}", "expected": f"Q{i}"} for i in range(10)])
>>> suite = EvalSuite(data, str.upper, metrics=[exact_match()], progress=False)
>>> merged = merge_runs([suite.run(shard=(i, 3)) for i in range(3)])
>>> merged.fingerprint == data.fingerprint, [r.case.input for r in merged.results][:3], len(merged.merged_from)
(True, ['q0', 'q1', 'q2'], 3)
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import warnings
from collections.abc import Sequence
from typing import Any

from cogeval import _columns as col
from cogeval._check import describe
from cogeval.data import Dataset, EvalRun
from cogeval.data.records import AggregateRecord, AssertionRecord, ResultRecord, StatsRecord
from cogeval.data.run_id import new_run_id
from cogeval.data.runfile import as_run
from cogeval.errors import InputError
from cogeval.scoring.judge_summary import judge_usage_totals
from cogeval.scoring.usage import BUILTIN_STATISTICAL_METRICS
from cogeval.stats import Aggregate, aggregate

_JUDGE_STATS = {"judge_cost": "cost_usd", "judge_calls": "calls", "judge_cache_hits": "cache_hits",
                "judge_input_tokens": "input_tokens", "judge_output_tokens": "output_tokens"}
"""The run's judge counts (``stats``) and the totals of :func:`judge_usage_totals` they are."""


def merge_runs(runs: Sequence[Any], *, assertions: Sequence[Any] = ()) -> EvalRun:
    """One run from the shard runs of one suite run (runs, suite results or run-file paths, in any order).

    ``assertions`` (``threshold(...)``...) are checked on the merged run, as the suite checks them;
    the rules are in :mod:`cogeval.evaluate.merge`. Refusals raise :class:`~cogeval.errors.InputError`
    naming the shard, e.g. ``shard 2 of 4 is missing (given: shards 0, 1, 3)``.
    """
    shards = _checked(runs)
    first = shards[0]
    results = _in_dataset_order(shards)
    started = min(shards, key=lambda run: _moment(run.started_at)).started_at
    finished = max(shards, key=lambda run: _moment(run.finished_at)).finished_at
    merged = EvalRun.model_validate({
        "run_id": new_run_id(_moment(started)), "started_at": started, "finished_at": finished,
        "name": first.name, "metadata": first.metadata, "dataset": first.dataset, "config": first.config,
        "results": results, "aggregated": {}, "stats": {}, "merged_from": [run.run_id for run in shards],
    })
    summaries = _aggregated(merged, first)
    merged.aggregated = {name: AggregateRecord.model_validate(dataclasses.asdict(s)) for name, s in summaries.items()}
    merged.stats = StatsRecord.model_validate(_stats(merged, shards, started, finished))
    directions = merged.directions
    merged.assertions = [AssertionRecord.model_validate(dataclasses.asdict(a.check(summaries, directions)))
                         for a in _checked_assertions(assertions)]
    return merged


def _checked_assertions(assertions: Any) -> list[Any]:
    if isinstance(assertions, (str, bytes)) or not isinstance(assertions, Sequence):
        raise InputError(f"assertions must be a list of threshold(...), no_regression(...) or assertion(...); "
                         f"got {describe(assertions)}")
    for index, item in enumerate(assertions):
        if not callable(getattr(item, "check", None)):
            raise InputError(f"assertions[{index}] must be made with threshold(...), no_regression(...) or "
                             f"assertion(...); got {describe(item)}")
    return list(assertions)


def _label(position: int, run: EvalRun) -> str:
    where = f"runs[{position}] (run {run.run_id}"
    return where + (")" if run.shard is None else f", shard {run.shard.index} of {run.shard.count})")


def _checked(runs: Any) -> list[EvalRun]:
    """The shards in shard order, each checked against the first and the others."""
    if isinstance(runs, (str, bytes, EvalRun)) or not isinstance(runs, Sequence) or not runs:
        raise InputError(f"runs must be a non-empty list of shard runs (runs, suite results or run files); "
                         f"got {describe(runs)}")
    given = [as_run(run, f"runs[{position}]") for position, run in enumerate(runs)]
    for position, run in enumerate(given):
        if run.shard is None:
            raise InputError(f"{_label(position, run)} is not a shard run (it has no shard); merge_runs takes the "
                             "shards of one suite run, each made with suite.run(shard=(index, count))")
        if run.status is not None:
            raise InputError(f"{_label(position, run)} is {run.status}; finish it first with "
                             f"suite.run(shard=({run.shard.index}, {run.shard.count}), resume=<its file>)")
    first = given[0]
    by_index: dict[int, int] = {}
    for position, run in enumerate(given):
        assert run.shard is not None and first.shard is not None  # checked above
        if run.shard.count != first.shard.count:
            raise InputError(f"{_label(position, run)} is one of {run.shard.count} shards, but {_label(0, first)} "
                             f"one of {first.shard.count}; the shards of one run share their count")
        if run.shard.index in by_index:
            other = by_index[run.shard.index]
            raise InputError(f"{_label(position, run)} is given twice: {_label(other, given[other])} is shard "
                             f"{run.shard.index} too; give each shard once")
        by_index[run.shard.index] = position
        if position:
            _same_run(position, run, first)
    count = first.shard.count if first.shard is not None else 0
    missing = [index for index in range(count) if index not in by_index]
    if missing:
        held = ", ".join(str(index) for index in sorted(by_index))
        raise InputError(f"shard {missing[0]} of {count} is missing (given: shard{'s' if len(by_index) > 1 else ''} "
                         f"{held}); merge every shard of the run")
    return [given[by_index[index]] for index in range(count)]


def _same_run(position: int, run: EvalRun, first: EvalRun) -> None:
    """Refuse a shard of another dataset or made otherwise than ``first`` (the shard at ``runs[0]``)."""
    if (run.dataset.fingerprint, run.dataset.cases) != (first.dataset.fingerprint, first.dataset.cases):
        raise InputError(f"{_label(position, run)} was made on another dataset (fingerprint "
                         f"{run.dataset.fingerprint[:12]}…, {run.dataset.cases} cases) than {_label(0, first)} "
                         f"({first.dataset.fingerprint[:12]}…, {first.dataset.cases} cases)")
    made = {"name": (run.name, first.name), "metadata": (run.metadata, first.metadata)}
    mine, theirs = run.config.model_dump(by_alias=True), first.config.model_dump(by_alias=True)
    made.update({f"config.{key}": (mine.get(key), theirs.get(key)) for key in dict.fromkeys([*theirs, *mine])})
    for field, (value, expected) in made.items():
        if value != expected:
            raise InputError(f"{_label(position, run)} was made with another configuration than {_label(0, first)}: "
                             f"its {field} is {describe(value)}, not {describe(expected)}")


def _in_dataset_order(shards: list[EvalRun]) -> list[ResultRecord]:
    """Every shard's results in dataset order (case index, then trial), without their ``caseIndex``; refuses a
    case two shards hold, or a set of cases that is not the dataset the shards name."""
    owner: dict[int, int] = {}
    keyed: list[tuple[int, int, ResultRecord]] = []
    for index, run in enumerate(shards):
        for at, record in enumerate(run.results):
            position = record.case_index
            if position is None:
                raise InputError(f"{_label(index, run)}: results[{at}] has no caseIndex, which a shard run writes "
                                 "for every result (was the file edited?)")
            held = owner.setdefault(position, index)
            if held != index:
                raise InputError(f"{_label(index, run)} and {_label(held, shards[held])} both hold the case at "
                                 f"position {position} ({record.case_key[:12]}…, occurrence {record.occurrence}); "
                                 "the shards of one run hold disjoint cases")
            keyed.append((position, record.trial, record))
    keyed.sort(key=lambda item: (item[0], item[1]))
    results = [record.model_copy(update={"case_index": None}) for _, _, record in keyed]
    dataset = shards[0].dataset
    cases: dict[int, Any] = {}
    for position, _, record in keyed:
        cases.setdefault(position, record.case)
    made = Dataset([record.to_case() for record in cases.values()])
    if list(cases) != list(range(dataset.cases)) or made.fingerprint != dataset.fingerprint:
        raise InputError(f"the shards' {len(cases)} cases do not make up the dataset they name ({dataset.cases} "
                         f"cases, fingerprint {dataset.fingerprint[:12]}…; theirs: {made.fingerprint[:12]}…)")
    return results


def _aggregated(merged: EvalRun, first: EvalRun) -> dict[str, Aggregate]:
    """Every metric of the shards' ``aggregated`` (in their order) summarised again over the merged results."""
    scores: dict[str, list[float]] = {}
    for record in merged.results:
        for score in record.scores:
            scores.setdefault(score.metric, []).append(score.score)
    rows: Any = None
    summaries: dict[str, Aggregate] = {}
    for name in dict.fromkeys([*(m.name for m in merged.config.metrics), *first.aggregated,
                               *(m.name for m in merged.config.statistical_metrics)]):
        if name in scores:
            summaries[name] = aggregate(scores[name])
            continue
        if any(r.statistical_values is not None and name in r.statistical_values for r in merged.results):
            values = [math.nan if r.statistical_values is None else r.statistical_values.get(name, math.nan)
                      for r in merged.results]
        elif name in BUILTIN_STATISTICAL_METRICS:
            if rows is None:
                rows = list(merged.result_columns(col.DURATION_S, col.COST_USD, col.INPUT_TOKENS,
                                                  col.OUTPUT_TOKENS).itertuples(index=False))
            values = BUILTIN_STATISTICAL_METRICS[name]().values(rows)
        else:
            warnings.warn(f"merge_runs: metric {name!r} has no per-case values in the shards, so its aggregate "
                          "cannot be computed again over the merged run: it is NaN", RuntimeWarning, stacklevel=3)
            values = []
        summaries[name] = aggregate(values)
    return summaries


def _stats(merged: EvalRun, shards: list[EvalRun], started: str, finished: str) -> dict[str, Any]:
    """The merged run's ``stats``: counted again over its results, the judge's usage over its scores, the
    error counts added up; ``duration`` the wall time, ``shardsDuration`` the shards' durations summed."""
    results = merged.results
    costs = [r.usage.cost for r in results if not math.isnan(r.usage.cost)]
    stats: dict[str, Any] = {
        "total": len(results), "errors": sum(r.error is not None for r in results),
        "duration": (_moment(finished) - _moment(started)).total_seconds() * 1000,
        "cost": sum(costs) if costs else math.nan,
        "shardsDuration": math.fsum(run.stats.duration for run in shards),
    }
    for name in ("metric_errors", "judge_errors"):
        counts = [getattr(run.stats, name) for run in shards]
        stats[name] = None if all(c is None for c in counts) else sum(c or 0 for c in counts)
    if any(run.stats.judge_calls is not None for run in shards):
        usage = judge_usage_totals(s.details for r in results for s in r.scores)
        stats.update({name: usage[total] for name, total in _JUDGE_STATS.items()})
    return stats


def _moment(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
