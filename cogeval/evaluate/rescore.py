"""rescore: score a finished run again (new metrics, another judge) without calling the target.

>>> import pandas as pd
>>> from cogeval import EvalRun, exact_match
>>> old = EvalRun.from_frame(pd.DataFrame({"input": ["2+2", "3+3"], "expected": ["4", "6"],
...                                        "output": ["4", "7"], "quality": [0.9, 0.4]}))
>>> new = rescore(old, [exact_match()])
>>> new.metric_names, new.aggregated["exact_match"].mean
(['quality', 'exact_match'], 0.5)
>>> new.metadata["rescore"]["from_run_id"] == old.run_id, new.run_id != old.run_id
(True, True)
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from cogeval._check import check_positive_int, check_timeout, describe
from cogeval.data import EvalRun
from cogeval.data.run_id import iso_utc, new_run_id, utc_now
from cogeval.data.runfile import as_run
from cogeval.errors import InputError
from cogeval.evaluate.case_scoring import score_case
from cogeval.execution import run_sync
from cogeval.scoring import JudgeConfig, Metric, Score
from cogeval.scoring.judge import judge_usage_totals
from cogeval.stats import aggregate


def rescore(run: Any, metrics: Sequence[Metric], judge: JudgeConfig | None = None, *,
            assertions: Sequence[Any] = (), name: str | None = None, concurrency: int = 5,
            metric_timeout: float = 60.0) -> EvalRun:
    """Score the outputs of ``run`` (an :class:`EvalRun`, a suite result or a run file path) with ``metrics``.

    Returns a new run (new ``run_id``) with the same results: each metric's
    scores replace the run's scores of that name, or are added after them;
    other metrics' scores are kept. Judge metrics need ``judge``, unless they
    have their own (``correctness(judge=...)``, which wins over ``judge``);
    with a judge's cache on, re-scoring what was already judged makes no calls.
    Sync metrics run off the event loop, each score within ``metric_timeout``
    seconds, as in :class:`~cogeval.EvalSuite`.

    - ``metadata["rescore"]`` records ``from_run_id``, the rescored ``metrics``,
      the ``judge`` (``JudgeConfig.describe()``) and ``duration_s``;
      ``config.metrics`` and ``config.judge`` are updated.
    - ``stats`` keeps the target's counts, time and cost; ``metricErrors`` and
      ``judgeErrors`` are recounted; with a judge (``judge`` or a metric's
      own), the calls, cache hits, tokens and ``judgeCost`` of every judge are this rescore's.
    - The run's old assertion results are dropped (they judged the old
      scores); ``assertions`` are checked against the new aggregates.

    Works in a script and inside Jupyter; ``await arescore(...)`` is the async form.
    """
    return run_sync(arescore(run, metrics, judge, assertions=assertions, name=name, concurrency=concurrency,
                             metric_timeout=metric_timeout))


async def arescore(run: Any, metrics: Sequence[Metric], judge: JudgeConfig | None = None, *,
                   assertions: Sequence[Any] = (), name: str | None = None, concurrency: int = 5,
                   metric_timeout: float = 60.0) -> EvalRun:
    """Async form of :func:`rescore`."""
    source = as_run(run, "run")
    metrics = _checked_metrics(metrics, judge)
    limit = asyncio.Semaphore(check_positive_int("concurrency", concurrency))
    timeout = check_timeout("metric_timeout", metric_timeout)
    started, clock = utc_now(), time.perf_counter()

    async def score(result: Any) -> dict[str, Score]:
        async with limit:
            scores = await score_case(metrics, result.output, result.case.to_case(), judge=judge, timeout=timeout)
        return {m.name: s for m, s in zip(metrics, scores)}

    new_scores = await asyncio.gather(*(score(r) for r in source.results))
    data = source.model_dump()
    for record, old, scores in zip(data["results"], source.results, new_scores):
        record["scores"] = _merged(old.scores, scores)
    described = {m.name: m.describe() for m in metrics}
    config = data["config"]
    config["metrics"] = _merged_descriptions(config["metrics"], described)
    if judge is not None:
        config["judge"] = judge.describe()
    aggregates = {k: v.to_aggregate() for k, v in source.aggregated.items()}
    aggregates.update({m: aggregate([scores[m].value for scores in new_scores]) for m in described})
    data["aggregated"] = {k: dataclasses.asdict(v) for k, v in aggregates.items()}
    data["stats"] = _stats(source, data["stats"], new_scores, metrics, judge)
    directions = {**source.directions, **{m.name: m.higher_is_better for m in metrics}}
    data["assertions"] = [dataclasses.asdict(a.check(aggregates, directions)) for a in assertions]
    data["metadata"]["rescore"] = {
        "from_run_id": source.run_id, "metrics": list(described),
        "judge": None if judge is None else judge.describe(), "duration_s": time.perf_counter() - clock,
    }
    if name is not None:
        data["name"] = name
    data.update(run_id=new_run_id(started), started_at=iso_utc(started), finished_at=iso_utc(utc_now()))
    return EvalRun.model_validate(data)


def _checked_metrics(metrics: Any, judge: Any) -> list[Metric]:
    if isinstance(metrics, Metric):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise InputError("rescore needs at least one metric: rescore(run, [correctness()], judge=JudgeConfig(...))")
    seen: set[str] = set()
    for m in metrics:
        if not isinstance(m, Metric):
            raise InputError(f"rescore metrics must be per-case metrics (Metric); got {describe(m)}")
        if m.name in seen:
            raise InputError(f"rescore metrics has two metrics named {m.name!r}; give one of them another name")
        seen.add(m.name)
    needing = [m.name for m in metrics if m.requires_judge and getattr(m, "judge", None) is None]
    if needing and judge is None:
        raise InputError(f"metric {needing[0]!r} needs a judge: pass judge=JudgeConfig(model=...) to rescore "
                         "or to the metric")
    if judge is not None and not isinstance(judge, JudgeConfig):
        raise InputError(f"judge must be a JudgeConfig(model=...) or None; got {describe(judge)}")
    return metrics


def _merged(old: Sequence[Any], new: dict[str, Score]) -> list[dict[str, Any]]:
    """Old score records with the new scores in place of same-named ones, then the other new ones."""
    new_records = {name: {"metric": name, "score": s.value, "error": s.error, "details": s.details}
                   for name, s in new.items()}
    merged = [new_records.pop(s.metric) if s.metric in new_records else s.model_dump() for s in old]
    return merged + list(new_records.values())


def _merged_descriptions(old: list[dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    pending = dict(new)
    merged = [pending.pop(m["name"]) if m["name"] in pending else m for m in old]
    return merged + list(pending.values())


def _stats(source: EvalRun, stats: dict[str, Any], new_scores: list[dict[str, Score]],
           metrics: list[Metric], judge: JudgeConfig | None) -> dict[str, Any]:
    """Recount score errors; kept scores' errors split as the source counted them."""
    rescored = {m.name for m in metrics}
    judged = {m.name for m in metrics if m.requires_judge}
    old_cells = [s for r in source.results for s in r.scores if s.error is not None]
    replaced_judge = sum(s.metric in judged for s in old_cells)
    kept = sum(s.metric not in rescored for s in old_cells)
    kept_judge = min(kept, max((source.stats.judge_errors or 0) - replaced_judge, 0))
    new_cells = [(name, s) for scores in new_scores for name, s in scores.items() if s.error is not None]
    new_judge = sum(name in judged for name, _ in new_cells)
    stats.update(judge_errors=kept_judge + new_judge, metric_errors=kept - kept_judge + len(new_cells) - new_judge)
    if judge is not None or any(isinstance(getattr(m, "judge", None), JudgeConfig) for m in metrics):
        usage = judge_usage_totals(s.details for scores in new_scores for name, s in scores.items() if name in judged)
        stats.update(judge_cost=usage["cost_usd"], judge_calls=usage["calls"], judge_cache_hits=usage["cache_hits"],
                     judge_input_tokens=usage["input_tokens"], judge_output_tokens=usage["output_tokens"])
    return stats

