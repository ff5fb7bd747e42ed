"""A finished suite run as its :class:`~cogeval.data.EvalRun`: built once, when the run ends.

The suite knows what a file reader has to re-derive: its cases were checked
when they were made (their records are not checked again) and its dataset's
fingerprint is known (it is not recomputed from the results). So the run is
validated once here, and ``to_run()``, ``compare_runs`` and ``RunStore.save``
use it as it is, without another trip through dicts and pydantic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from cogeval.data import EvalRun
from cogeval.execution import CaseOutcome
from cogeval.scoring import AssertionResult
from cogeval.scoring.judge import judge_usage_totals
from cogeval.stats import Aggregate


def suite_run(
    *,
    run_id: str,
    name: str | None,
    metadata: Mapping[str, Any],
    started_at: str,
    finished_at: str,
    dataset: Mapping[str, Any],
    config: Mapping[str, Any],
    results: Sequence[Any],
    aggregated: Mapping[str, Aggregate],
    assertions: Sequence[AssertionResult],
    stats: Mapping[str, Any],
    status: str | None = None,
    shard: tuple[int, int] | None = None,
) -> EvalRun:
    """The run of a suite: ``results`` are its :class:`~cogeval.evaluate.result.CaseResult` objects,
    ``dataset`` is ``{fingerprint, cases}`` of the cases run, ``stats`` what :func:`run_stats` counted;
    a shard run (``shard``: ``(index, count)``) records it, and each result its ``case_index``."""
    return EvalRun.model_validate({
        "run_id": run_id, "started_at": started_at, "finished_at": finished_at,
        "name": name, "metadata": dict(metadata), "dataset": dict(dataset), "config": dict(config),
        "results": [result_record(r, indexed=shard is not None) for r in results],
        "aggregated": {name: dataclasses.asdict(agg) for name, agg in aggregated.items()},
        "assertions": [dataclasses.asdict(a) for a in assertions],
        "stats": dict(stats), "status": status,
        "shard": None if shard is None else {"index": shard[0], "count": shard[1]},
    })


def run_stats(results: Sequence[Any], judge_metrics: set[str], duration_s: float, *, judged: bool) -> dict[str, Any]:
    """The run's ``stats``: errors counted by kind over ``results`` (case results with their scores).

    ``errors`` counts case-trials whose target failed; ``metric_errors`` and
    ``judge_errors`` count score cells left NaN with an error (in the metrics of
    ``judge_metrics`` for the judge); ``cost`` sums the target's known costs (NaN
    when no result reported one). With a judge (``judged``), its usage is counted
    apart: calls, cache hits, tokens and cost.
    """
    cells = [(name, s) for r in results for name, s in r.scores.items() if s.error is not None]
    judge = sum(1 for name, _ in cells if name in judge_metrics)
    stats = {
        "total": len(results), "errors": sum(1 for r in results if r.error is not None),
        "duration": _ms(duration_s), "cost": _cost(results), "metric_errors": len(cells) - judge, "judge_errors": judge,
    }
    if judged:
        usage = judge_usage_totals(s.details for r in results for name, s in r.scores.items() if name in judge_metrics)
        stats.update(judge_cost=usage["cost_usd"], judge_calls=usage["calls"], judge_cache_hits=usage["cache_hits"],
                     judge_input_tokens=usage["input_tokens"], judge_output_tokens=usage["output_tokens"])
    return stats


def _cost(results: Sequence[CaseOutcome]) -> float:
    known = [r.cost_usd for r in results if r.cost_usd is not None]
    return float(sum(known)) if known else math.nan


def _ms(seconds: float | None) -> float:
    """Seconds (the runner's) as milliseconds (the run file's); NaN when unknown."""
    return math.nan if seconds is None else seconds * 1000


def _usage(item: Any) -> dict[str, Any]:
    return {"input_tokens": item.input_tokens, "output_tokens": item.output_tokens, "cost": item.cost_usd}


def result_record(r: Any, *, indexed: bool = False) -> dict[str, Any]:
    """One ``results[]`` entry of the run file; the case goes in as the :class:`~cogeval.data.Case` it is.
    ``indexed`` (a shard run's results): with the case's position in the dataset, ``case_index``."""
    turns = None if r.turns is None else [
        {"input": t.input, "output": t.output, "duration": _ms(t.duration_s), "usage": _usage(t),
         "trace_id": t.trace_id, "prompt": t.prompt, "toolCalls": t.tool_calls}  # TurnRecord keeps it as an extra key
        for t in r.turns
    ]
    return {
        "case_key": r.case_key, "occurrence": r.occurrence, "trial": r.trial, "case": r.case,
        "output": r.output, "error": r.error, "duration": _ms(r.duration_s), "usage": _usage(r),
        "trace_id": r.trace_id, "prompt": r.prompt, "tool_calls": r.tool_calls, "turns": turns,
        "scores": [{"metric": name, "score": s.value, "error": s.error, "details": s.details} for name, s in r.scores.items()],
        "statistical_values": dict(r.statistical_values) or None,  # left out of the file when there are none
        "case_index": r.index if indexed else None,  # left out of the file unless indexed
    }
