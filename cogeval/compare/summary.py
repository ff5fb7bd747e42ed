"""A run's metric with its interval: the one rule the leaderboard, ``RunStore.history`` and ``plot_history`` share.

- **Units.** A unit is one case (case key, occurrence). Its value is the mean
  of the metric over the unit's trials, with the failure rules of a comparison
  (:func:`~cogeval.compare.pairing.unit_values`): a trial the target failed on
  scores 0 on a higher-is-better metric and is left out on a lower-is-better one.
- **score** is the mean of the unit values; **n** counts the units with a
  value: cases, not case × trial.
- **Interval** at level ``confidence``: ``"wilson"``, the Wilson score interval
  of ``successes / n``, when every unit value of the runs shown together is 0
  or 1; else ``"bootstrap"``, the percentile bootstrap of the mean over the
  units (10 000 resamples, seeded with ``seed``, so a table is the same at
  every call).
- **No scores**: ``score``, ``ci_low`` and ``ci_high`` are NaN (never 0),
  ``n`` is 0 and ``interval`` None.

>>> import pandas as pd
>>> from cogeval import EvalRun
>>> run = EvalRun.from_frame(pd.DataFrame({"input": list("aabbcc"), "trial": [0, 1] * 3,
...                                        "exact_match": [1, 1, 1, 0, 0, 0]}))
>>> s = metric_summary(run, "exact_match", seed=0)
>>> s.score, s.n, s.interval          # case values 1, 0.5, 0: three cases, not six trials
(0.5, 3, 'bootstrap')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_choice, check_probability, check_seed, describe
from cogeval.compare.pairing import metrics_of, unit_values
from cogeval.compare.runs import as_run, score_frame
from cogeval.data import EvalRun
from cogeval.errors import InputError
from cogeval.stats import Interval, bootstrap_ci, wilson_interval
from cogeval.stats.result import StatResult

_INTERVALS = ("wilson", "bootstrap")
"""The interval kinds: Wilson's for 0/1 unit values, else the percentile bootstrap of the mean."""

HISTORY_COLUMNS = (col.RUN_ID, col.NAME, col.STARTED_AT, col.METRIC, col.HIGHER_IS_BETTER, col.SCORE, col.N,
                   col.CI_LOW, col.CI_HIGH, col.INTERVAL)
"""The columns of :meth:`RunStore.history <cogeval.RunStore.history>` (:func:`history_frame`), in order."""


@dataclasses.dataclass(frozen=True)
class MetricSummary(StatResult):
    """A run's metric with its interval (see the module docstring for the rule).

    ``to_frame()`` is one row: ``metric, score, n, ci_low, ci_high, interval, confidence``.
    """

    metric: str
    """The metric's name."""
    score: float
    """Mean over the units of each unit's mean over its trials; NaN without scores."""
    n: int
    """Units (cases) with a value."""
    ci: Interval
    """The interval of ``score`` at level ``confidence``; NaN without scores."""
    interval: str | None
    """``"wilson"`` or ``"bootstrap"``; None without scores."""
    confidence: float
    """The interval's level."""


def unit_scores(run: Any, metric: str) -> np.ndarray:
    """The run's unit values of ``metric`` in unit order, units without a value left out.

    ``run`` is an :class:`~cogeval.EvalRun`, a suite result or a run-file path.
    The metric's direction (which decides what a failed trial is worth) is the
    run's, higher-is-better when the run does not declare it. A metric the run
    did not score gives no values, whatever its failures.
    """
    run = as_run(run, "run")
    return _unit_scores(run, score_frame(run), metric)


def _unit_scores(run: EvalRun, frame: pd.DataFrame, metric: str) -> np.ndarray:
    if metric not in metrics_of(frame):
        return np.array([], dtype=float)  # unit_values would give a failed unit 0 on a metric never scored
    _, wide, _ = unit_values(frame, {metric: run.directions.get(metric, True)})
    values = wide[metric].to_numpy(dtype=float)
    return values[~np.isnan(values)]


def interval_kind(values: Iterable[Any]) -> str:
    """``"wilson"`` when there is a value and every value of every array is 0 or 1, else ``"bootstrap"``.

    >>> interval_kind([[1.0, 0.0], [1.0]]), interval_kind([[1.0, 0.5], [1.0]]), interval_kind([[]])
    ('wilson', 'bootstrap', 'bootstrap')
    """
    arrays = [np.asarray(v, dtype=float) for v in values]
    binary = any(len(v) for v in arrays) and all(np.isin(v, (0.0, 1.0)).all() for v in arrays)
    return _INTERVALS[0] if binary else _INTERVALS[1]


def summarise(metric: str, values: Any, *, interval: str | None = None, confidence: float = 0.95,
              seed: int | np.random.Generator | None = 0) -> MetricSummary:
    """The :class:`MetricSummary` of ``metric`` from its unit values (NaN left out).

    ``interval`` is ``"wilson"``, ``"bootstrap"`` or None (chosen from
    ``values`` by :func:`interval_kind`); callers showing several runs together
    pass the kind chosen over all of them. A Wilson interval needs 0/1 values.

    >>> low, high = summarise("exact_match", [1, 1, 0, 1]).ci  # R: prop.test(3, 4, correct=FALSE)$conf.int
    >>> round(low, 7), round(high, 7)
    (0.3006418, 0.9544127)
    >>> summarise("quality", []).score, summarise("quality", []).n
    (nan, 0)
    """
    confidence = check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    kind = interval_kind([v]) if interval is None else check_choice("interval", interval, _INTERVALS)
    if not len(v):
        return MetricSummary(metric, math.nan, 0, Interval(math.nan, math.nan), None, confidence)
    if kind == "wilson":
        other = v[~np.isin(v, (0.0, 1.0))]
        if len(other):
            raise InputError(f"interval 'wilson' needs values that are 0 or 1; {metric!r} has {float(other[0])!r}")
        ci = wilson_interval(int(v.sum()), len(v), confidence=confidence)
    else:
        ci = bootstrap_ci(v, confidence=confidence, seed=seed)
    return MetricSummary(metric, float(v.mean()), len(v), Interval(float(ci.low), float(ci.high)), kind, confidence)


def metric_summary(run: Any, metric: str, *, confidence: float = 0.95,
                   seed: int | np.random.Generator | None = 0) -> MetricSummary:
    """A run's ``metric`` with its interval: unit-averaged, Wilson for 0/1, else a seeded bootstrap.

    ``run`` is an :class:`~cogeval.EvalRun`, a suite result or a run-file path;
    ``metric`` any metric with per-case values (statistical ones included). A
    metric the run has no score for gives NaN, ``n = 0``.
    """
    return summarise(metric, unit_scores(run, metric), confidence=confidence, seed=seed)


def history_frame(runs: Sequence[Any], metric: str, *, confidence: float = 0.95,
                  seed: int | np.random.Generator | None = 0) -> pd.DataFrame:
    """One row per run, in the order given, with the :data:`HISTORY_COLUMNS`.

    The interval kind is chosen over every run (Wilson only when every unit
    value of every run is 0 or 1), so the rows' intervals are alike. A run
    without a score for ``metric`` has NaN, ``n = 0``, interval None; when no
    run has ``metric`` at all, an :class:`InputError` lists the metrics they have.
    """
    if not isinstance(metric, str) or not metric:
        raise InputError(f"metric must be a metric name (a non-empty string); got {describe(metric)}")
    confidence = check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    found = [as_run(run, f"runs[{i}]") for i, run in enumerate(runs)]
    frames = [score_frame(run) for run in found]
    have = dict.fromkeys(m for frame in frames for m in metrics_of(frame))
    if found and metric not in have:
        raise InputError(f"metric {metric!r} has no score in the runs; their metrics are "
                         f"{', '.join(map(repr, have)) or 'none'}")
    values = [_unit_scores(run, frame, metric) for run, frame in zip(found, frames)]
    kind = interval_kind(values)
    rows = []
    for run, v in zip(found, values):
        s = summarise(metric, v, interval=kind, confidence=confidence, seed=seed)
        rows.append((run.run_id, run.name, run.started_at, metric, run.directions.get(metric), s.score, s.n,
                     s.ci.low, s.ci.high, s.interval))
    numbers: dict[str, type[float] | str] = {col.SCORE: float, col.N: "int64", col.CI_LOW: float, col.CI_HIGH: float}
    columns = zip(*rows) if rows else [()] * len(HISTORY_COLUMNS)
    return pd.DataFrame({name: pd.Series(list(cells), dtype=numbers.get(name, object))  # None stays None
                         for name, cells in zip(HISTORY_COLUMNS, columns)})
