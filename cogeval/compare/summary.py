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
- **Clustered** (``cluster=``, a case-metadata field or a function of the case,
  resolved by :func:`~cogeval.compare.clusters.cluster_labels`; every case
  needs one): each unit takes its case's cluster, and the interval, whatever the
  values, is ``"clustered-t"``: :func:`~cogeval.stats.clustered_t_test` of the
  unit values against 0 (CR2 standard error, Bell–McCaffrey degrees of
  freedom); ``clusters`` is G. One case per cluster gives the t-interval
  ``mean ± t(n − 1)·sd/√n``. Fewer than 2 clusters: the interval is NaN.
- **No scores**: ``score``, ``ci_low`` and ``ci_high`` are NaN (never 0),
  ``n`` is 0, ``interval`` and ``clusters`` None.

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
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_choice, check_probability, check_seed, describe
from cogeval.compare.clusters import check_cluster, cluster_labels
from cogeval.compare.pairing import metrics_of, unit_codes, unit_ids, unit_values
from cogeval.compare.runs import as_run, score_frame
from cogeval.data import EvalRun
from cogeval.errors import InputError
from cogeval.stats import Interval, bootstrap_ci, clustered_t_test, wilson_interval
from cogeval.stats.result import StatResult

_INTERVALS = ("wilson", "bootstrap", "clustered-t")
"""The interval kinds: Wilson's for 0/1 unit values, else the percentile bootstrap of the mean; with clusters,
the clustered t-interval."""
_CLUSTERED = _INTERVALS[2]

HISTORY_COLUMNS = (col.RUN_ID, col.NAME, col.STARTED_AT, col.METRIC, col.HIGHER_IS_BETTER, col.SCORE, col.N,
                   col.CI_LOW, col.CI_HIGH, col.INTERVAL, col.CLUSTERS)
"""The columns of :meth:`RunStore.history <cogeval.RunStore.history>` (:func:`history_frame`), in order."""


@dataclasses.dataclass(frozen=True)
class MetricSummary(StatResult):
    """A run's metric with its interval (see the module docstring for the rule).

    ``to_frame()`` is one row: ``metric, score, n, ci_low, ci_high, interval, confidence, clusters``.
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
    """``"wilson"``, ``"bootstrap"`` or, with clusters, ``"clustered-t"``; None without scores."""
    confidence: float
    """The interval's level."""
    clusters: int | None = None
    """G, the clusters of the ``n`` units, with clusters; None without them (or without scores)."""


def unit_scores(run: Any, metric: str) -> np.ndarray:
    """The run's unit values of ``metric`` in unit order, units without a value left out.

    ``run`` is an :class:`~cogeval.EvalRun`, a suite result or a run-file path.
    The metric's direction (which decides what a failed trial is worth) is the
    run's, higher-is-better when the run does not declare it. A metric the run
    did not score gives no values, whatever its failures.
    """
    run = as_run(run, "run")
    return _unit_scores(run, score_frame(run), metric)[0]


def _unit_scores(run: EvalRun, frame: pd.DataFrame, metric: str,
                 cluster: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The unit values of :func:`unit_scores` and, with ``cluster``, each one's cluster label (else None).

    A unit's label is its case's: that of the first result of its (case key, occurrence), as
    :func:`~cogeval.compare.clusters.cluster_labels` gives it; every result's case needs one (when the run
    scored ``metric``), a failed one too.
    """
    if metric not in metrics_of(frame):  # unit_values would give a failed unit 0 on a metric never scored
        return np.array([], dtype=float), None if cluster is None else np.array([], dtype=object)
    if cluster is None:
        _, wide, _ = unit_values(frame, {metric: run.directions.get(metric, True)})
        values = wide[metric].to_numpy(dtype=float)
        return values[~np.isnan(values)], None
    labels = cluster_labels(cluster, run.results)
    # The score rows and the results coded over the same keys and occurrences, so a unit finds its results.
    rows, results = unit_codes(frame, run.result_columns(col.CASE_KEY, col.OCCURRENCE))
    units, wide, _ = unit_values(frame, {metric: run.directions.get(metric, True)}, codes=rows)
    first = np.flatnonzero(~pd.Index(results.ids).duplicated())
    found = first[pd.Index(results.ids[first]).get_indexer(unit_ids(units))]
    values = wide[metric].to_numpy(dtype=float)
    kept = ~np.isnan(values)
    return values[kept], labels[found[kept]]


def interval_kind(values: Iterable[Any]) -> str:
    """``"wilson"`` when there is a value and every value of every array is 0 or 1, else ``"bootstrap"``.

    >>> interval_kind([[1.0, 0.0], [1.0]]), interval_kind([[1.0, 0.5], [1.0]]), interval_kind([[]])
    ('wilson', 'bootstrap', 'bootstrap')
    """
    arrays = [np.asarray(v, dtype=float) for v in values]
    binary = any(len(v) for v in arrays) and all(np.isin(v, (0.0, 1.0)).all() for v in arrays)
    return _INTERVALS[0] if binary else _INTERVALS[1]


def summarise(metric: str, values: Any, *, interval: str | None = None, confidence: float = 0.95,
              seed: int | np.random.Generator | None = 0, clusters: Any = None) -> MetricSummary:
    """The :class:`MetricSummary` of ``metric`` from its unit values (NaN left out).

    ``interval`` is ``"wilson"``, ``"bootstrap"`` or None (chosen from
    ``values`` by :func:`interval_kind`); callers showing several runs together
    pass the kind chosen over all of them. A Wilson interval needs 0/1 values.

    ``clusters``: one cluster label per value (a unit's case's cluster, e.g.
    :func:`~cogeval.compare.clusters.cluster_labels`), or None. With them the
    interval is ``"clustered-t"`` (``interval`` None or ``"clustered-t"``):
    ``clustered_t_test(values, zeros, clusters, kind="CR2", confidence=confidence).ci``
    (:func:`~cogeval.stats.clustered_t_test`), and ``clusters`` counts G.
    A NaN value is left out with its label. Fewer than 2 clusters: a NaN
    interval, with a warning.

    >>> low, high = summarise("exact_match", [1, 1, 0, 1]).ci  # R: prop.test(3, 4, correct=FALSE)$conf.int
    >>> round(low, 7), round(high, 7)
    (0.3006418, 0.9544127)
    >>> summarise("quality", []).score, summarise("quality", []).n
    (nan, 0)
    """
    confidence = check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    v = np.asarray(values, dtype=float).ravel()
    if clusters is not None:
        return _clustered(metric, v, clusters, interval, confidence)
    v = v[~np.isnan(v)]
    kind = interval_kind([v]) if interval is None else check_choice("interval", interval, _INTERVALS)
    if kind == _CLUSTERED:
        raise InputError(f"interval {_CLUSTERED!r} needs clusters (one label per value); got none for {metric!r}")
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


def _clustered(metric: str, values: np.ndarray, clusters: Any, interval: str | None,
               confidence: float) -> MetricSummary:
    """:func:`summarise` with cluster labels: the clustered t-interval of the mean of ``values``."""
    if interval is not None and check_choice("interval", interval, _INTERVALS) != _CLUSTERED:
        raise InputError(f"interval {interval!r} takes no clusters; with clusters the interval is {_CLUSTERED!r}")
    labels = np.fromiter(clusters, dtype=object)  # the labels as given, a tuple too: never coerced to one dtype
    if len(labels) != len(values):
        raise InputError(f"clusters must give one label per value; got {len(labels)} labels for {len(values)} "
                         f"values of {metric!r}")
    kept = ~np.isnan(values)
    v, labels = values[kept], labels[kept]
    if not len(v):
        return MetricSummary(metric, math.nan, 0, Interval(math.nan, math.nan), None, confidence)
    with warnings.catch_warnings():  # a constant metric's SE is 0: the test (unused here) is undefined, its ci is (c, c)
        warnings.filterwarnings("ignore", message="clustered_t_test: the differences are constant", category=UserWarning)
        test = clustered_t_test(v, np.zeros(len(v)), labels, kind="CR2", confidence=confidence)
    return MetricSummary(metric, float(v.mean()), len(v), Interval(float(test.ci.low), float(test.ci.high)),
                         _CLUSTERED, confidence, int(test.clusters))


def metric_summary(run: Any, metric: str, *, confidence: float = 0.95,
                   seed: int | np.random.Generator | None = 0, cluster: Any = None) -> MetricSummary:
    """A run's ``metric`` with its interval: unit-averaged, Wilson for 0/1, else a seeded bootstrap.

    ``run`` is an :class:`~cogeval.EvalRun`, a suite result or a run-file path;
    ``metric`` any metric with per-case values (statistical ones included). A
    metric the run has no score for gives NaN, ``n = 0``. ``cluster`` (a
    case-metadata field or a function of the case) gives the clustered
    t-interval instead, and ``clusters`` (G); a case without a cluster is an
    :class:`InputError` naming the case and the field.
    """
    cluster = check_cluster(cluster)
    run = as_run(run, "run")
    values, labels = _unit_scores(run, score_frame(run), metric, cluster)
    return summarise(metric, values, confidence=confidence, seed=seed, clusters=labels)


def history_frame(runs: Sequence[Any], metric: str, *, confidence: float = 0.95,
                  seed: int | np.random.Generator | None = 0, cluster: Any = None) -> pd.DataFrame:
    """One row per run, in the order given, with the :data:`HISTORY_COLUMNS`.

    The interval kind is chosen over every run (Wilson only when every unit
    value of every run is 0 or 1), so the rows' intervals are alike. A run
    without a score for ``metric`` has NaN, ``n = 0``, interval None; when no
    run has ``metric`` at all, an :class:`InputError` lists the metrics they have.
    With ``cluster`` (a case-metadata field or a function of the case) every
    row's interval is ``"clustered-t"`` and ``clusters`` its G (a nullable
    integer: <NA> without ``cluster``, or for a run without scores); every
    case of every run that scored ``metric`` needs a cluster (an
    :class:`InputError` names the first case without one and the field).
    """
    if not isinstance(metric, str) or not metric:
        raise InputError(f"metric must be a metric name (a non-empty string); got {describe(metric)}")
    confidence = check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    cluster = check_cluster(cluster)
    found = [as_run(run, f"runs[{i}]") for i, run in enumerate(runs)]
    frames = [score_frame(run) for run in found]
    have = dict.fromkeys(m for frame in frames for m in metrics_of(frame))
    if found and metric not in have:
        raise InputError(f"metric {metric!r} has no score in the runs; their metrics are "
                         f"{', '.join(map(repr, have)) or 'none'}")
    units = [_unit_scores(run, frame, metric, cluster) for run, frame in zip(found, frames)]
    kind = _CLUSTERED if cluster is not None else interval_kind(v for v, _ in units)
    rows = []
    for run, (v, labels) in zip(found, units):
        s = summarise(metric, v, interval=kind, confidence=confidence, seed=seed, clusters=labels)
        rows.append((run.run_id, run.name, run.started_at, metric, run.directions.get(metric), s.score, s.n,
                     s.ci.low, s.ci.high, s.interval, pd.NA if s.clusters is None else s.clusters))
    numbers: dict[str, type[float] | str] = {col.SCORE: float, col.N: "int64", col.CI_LOW: float, col.CI_HIGH: float,
                                             col.CLUSTERS: "Int64"}
    columns = zip(*rows) if rows else [()] * len(HISTORY_COLUMNS)
    return pd.DataFrame({name: pd.Series(list(cells), dtype=numbers.get(name, object))  # None stays None
                         for name, cells in zip(HISTORY_COLUMNS, columns)})
