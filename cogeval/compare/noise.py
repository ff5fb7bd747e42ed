"""noise_report: how much the results of one configuration move between reruns (A/A runs).

Reruns are k ≥ 2 runs of one configuration on one dataset, or one run with k ≥ 2 trials, whose trials are
then the reruns. Each rerun gives a value per case (its mean over the case's trials, with a comparison's
failure rules: :func:`~cogeval.compare.pairing.unit_values`). Per metric, on the n cases with a value in
every rerun (a case the target failed on in every rerun is left out, as a comparison leaves out a case both
runs failed), ``x[i, j]`` is case i in rerun j:

- ``mean``: the mean of every ``x[i, j]``;
- ``run_sd``: the standard deviation (ddof 1) of the k rerun means ``mean_i x[i, j]``;
- ``case_sd``: the pooled within-case standard deviation, ``sqrt(MSW)`` with
  ``MSW = Σ_ij (x[i, j] - x̄_i)² / (n (k - 1))``;
- ``flip_rate``: for a 0/1 metric, the mean over the k(k-1)/2 pairs of reruns of the share of cases whose
  score differs between the two (NaN for other metrics);
- ``icc``: ICC(1), the one-way random-effects intraclass correlation with cases as subjects (Shrout & Fleiss
  1979, ICC(1,1)): ``(MSB - MSW) / (MSB + (k - 1) MSW)`` with ``MSB = k Σ_i (x̄_i - x̄)² / (n - 1)``; near 1 the
  cases differ and reruns agree, near 0 (or below) reruns move as much as cases differ; NaN when every value
  is the same;
- ``aa_pairs`` = k(k-1)/2 and ``aa_decided``: how many of those pairs (the earlier rerun as base)
  :func:`~cogeval.compare_runs` calls ``better`` or ``worse`` on the metric: false alarms, since nothing changed;
- ``suggested_margin`` = ``z(1 - alpha/2) · √2 · run_sd``: two single runs whose means differ by less than this
  differ within rerun noise (the difference of two runs has sd ``√2 · run_sd``).

- ``suggested_margin_low`` and ``suggested_margin_high``: its 95 % interval, from the chi-square interval of a
  standard deviation estimated on ``k - 1`` degrees of freedom (``run_sd · √((k - 1) / χ²(0.975 or 0.025, k - 1))``);
  with 3 reruns the margin could be half or six times as large, so a report of fewer than
  :data:`_FEW_RERUNS` reruns warns that it is a rough guide.

With ``cluster=`` (cases that share a passage or a conversation move together between reruns too), the sd
of the difference of two runs is the clustered standard error of the per-case differences between reruns
(CR2, :func:`~cogeval.stats.cluster_se`), pooled over the pairs of reruns: ``suggested_margin =
z(1 - alpha/2) · √(mean over pairs of SE²)``, its interval on ``G - 1`` degrees of freedom (the clusters the
variance rests on); and the A/A comparisons are clustered too.

>>> import pandas as pd
>>> from cogeval import EvalRun
>>> run = EvalRun.from_frame(pd.DataFrame({"input": list("aabbccdd"), "trial": [0, 1] * 4,
...                                        "exact_match": [1, 1, 1, 0, 0, 0, 1, 0]}))
>>> print(noise_report(run).to_frame()[["runs", "cases", "mean", "flip_rate", "aa_pairs"]].to_string(index=False))
 runs  cases  mean  flip_rate  aa_pairs
    2      4   0.5        0.5         1
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import pandas as pd

from cogeval import _backend
from cogeval import _columns as col
from cogeval import _numbers as numbers
from cogeval._check import check_probability
from cogeval._html import escape, html_table, safe_html
from cogeval.compare.clusters import check_cluster, cluster_name, unit_clusters
from cogeval.compare.engine import compare_scores
from cogeval.compare.pairing import metrics_of, unit_codes, unit_ids, unit_values
from cogeval.compare.runs import changes_between, compare_runs, score_frame
from cogeval.data import EvalRun
from cogeval.data.runfile import as_run
from cogeval.errors import InputError
from cogeval.stats import cluster_se

Source = Literal["runs", "trials"]


@dataclasses.dataclass(frozen=True)
class NoiseReport:
    """Reruns of one configuration, metric by metric (see :func:`noise_report` and ``docs/noise.md``).

    ``to_frame()`` is one row per metric with :data:`~cogeval._columns.NOISE_COLUMNS`; :attr:`cases` one row per
    case × metric (``case_key``, ``occurrence``, ``input``, ``metric``, ``mean``, ``sd`` across the reruns and
    the case's ``flip_rate``: the share of pairs of reruns whose scores differ, NaN for a metric that is not 0/1).
    ``source`` is ``"runs"`` (k runs) or ``"trials"`` (one run's k trials); ``run_ids`` the runs' ids.
    """

    source: Source
    run_ids: tuple[str, ...]
    reruns: int
    alpha: float
    cases: pd.DataFrame = dataclasses.field(repr=False)
    _table: pd.DataFrame = dataclasses.field(repr=False)
    cluster: str | None = None
    """What the cases were clustered by (``noise_report(..., cluster=)``), None when taken as independent."""

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric, runs, cases, mean, run_sd, case_sd, flip_rate, icc, aa_pairs, aa_decided,
        suggested_margin, suggested_margin_low, suggested_margin_high`` (a copy)."""
        return self._table.copy()

    @property
    def suggested_margins(self) -> dict[str, float]:
        """Each metric's ``suggested_margin``: what :func:`~cogeval.compare_runs` ``(..., noise=report)`` reads."""
        return dict(zip(self._table[col.METRIC], self._table["suggested_margin"].astype(float)))

    def plot(self) -> Any:
        """Per-case flip rates of the 0/1 metrics: :func:`cogeval.plot_noise`, reached through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_noise")(self)

    def __repr__(self) -> str:
        return (f"NoiseReport(source={self.source!r}, reruns={self.reruns}, metrics={list(self._table[col.METRIC])!r}, "
                f"cases={int(self._table['cases'].max()) if len(self._table) else 0})")

    @safe_html
    def _repr_html_(self) -> str:
        rows = [{**row, "aa decided": f"{row['aa_decided']} of {row['aa_pairs']}"}
                for row in self._table.to_dict("records")]
        what = (f"{self.reruns} trials of run {self.run_ids[0]}" if self.source == "trials"
                else f"{self.reruns} runs ({', '.join(self.run_ids)})")
        lead = (f'<div class="cogeval">Noise of {escape(what)} · α = {escape(numbers.number(self.alpha))} · '
                "suggested_margin: a difference between two single runs smaller than this is within rerun noise</div>")
        rows = [{**row, "95 % interval": f"[{numbers.number(row['suggested_margin_low'])}, "
                                          f"{numbers.number(row['suggested_margin_high'])}]"} for row in rows]
        return lead + html_table(rows, ["metric", "runs", "cases", "mean", "run_sd", "case_sd", "flip_rate", "icc",
                                        "aa decided", "suggested_margin", "95 % interval"], caption="NoiseReport")


def noise_report(runs: Any, *, alpha: float = 0.05, cluster: Any = None) -> NoiseReport:
    """The noise of one configuration: k ≥ 2 reruns of it on one dataset, metric by metric (module docstring).

    ``runs`` is a list of runs, suite results or run-file paths (what :func:`~cogeval.compare_runs` takes), all of
    one configuration (metrics, target, trials, judge, prompts) on one dataset (fingerprint); or one run (or a
    list of one) with k ≥ 2 trials, whose trials are the reruns. Anything else raises
    :class:`~cogeval.errors.InputError` saying what differs. ``alpha`` is the level of the A/A comparisons and
    of ``suggested_margin``. Pass the report to ``compare_runs(base, head, noise=report)`` to see which
    differences lie beyond rerun noise. ``cluster``: a case-metadata field or a function of the case, for
    cases that are not independent (module docstring).
    """
    alpha = check_probability("alpha", alpha, open_interval=True)
    cluster = check_cluster(cluster)
    found = _runs_of(runs)
    source: Source
    if len(found) == 1:
        frames, source = _trial_frames(found[0]), "trials"
    else:
        _check_reruns(found)
        frames, source = [score_frame(run) for run in found], "runs"
    scored = dict.fromkeys(m for frame in frames for m in metrics_of(frame))
    directions = {**dict.fromkeys(scored, True), **{k: v for run in found for k, v in run.directions.items()}}
    metrics = [m for m in metrics_of(frames[0]) if all(m in metrics_of(frame) for frame in frames[1:])]
    values, units = _aligned(frames, {m: directions[m] for m in metrics})
    decided = _decided(found, frames, directions, alpha, source, cluster)
    clusters = None if cluster is None else _unit_clusters(found[0], cluster, units)
    pairs = len(frames) * (len(frames) - 1) // 2
    z = NormalDist().inv_cdf(1 - alpha / 2)
    rows, cases = [], []
    inputs = found[0].inputs
    for m in metrics:
        x = values[m]
        complete = ~np.isnan(x).any(axis=1)
        row = _noise(x[complete])
        if clusters is None:
            spread, df = math.sqrt(2) * row["run_sd"], len(frames) - 1
        else:
            spread, df = _clustered_spread(x[complete], clusters[complete]), len(np.unique(clusters[complete])) - 1
        low, high = _sd_interval(df)
        rows.append({col.METRIC: m, "runs": len(frames), "cases": int(complete.sum()), **row,
                     "aa_pairs": pairs, "aa_decided": decided.get(m, 0), "suggested_margin": z * spread,
                     "suggested_margin_low": z * spread * low, "suggested_margin_high": z * spread * high})
        kept = units[complete]
        keys = [str(k) for k in kept.get_level_values(0)]
        cases.append(pd.DataFrame({
            col.CASE_KEY: pd.Series(keys, dtype=object), col.OCCURRENCE: kept.get_level_values(1).to_numpy(np.int64),
            col.INPUT: pd.Series([inputs.get(k) for k in keys], dtype=object), col.METRIC: m,
            "mean": x[complete].mean(axis=1), "sd": _row_sd(x[complete]), "flip_rate": _case_flips(x[complete])}))
    table = pd.DataFrame(rows, columns=list(col.NOISE_COLUMNS)).astype(
        {"runs": "int64", "cases": "int64", "aa_pairs": "int64", "aa_decided": "int64"})
    case_table = (pd.concat(cases, ignore_index=True) if cases else pd.DataFrame(columns=list(col.NOISE_CASES_COLUMNS)))
    if len(frames) < _FEW_RERUNS and clusters is None:
        warnings.warn(f"noise_report of {len(frames)} reruns: suggested_margin is a rough guide (its 95 % interval, "
                      "suggested_margin_low to suggested_margin_high, spans a factor of "
                      f"{numbers.number(_sd_interval(len(frames) - 1)[1] / _sd_interval(len(frames) - 1)[0])}); "
                      f"{_FEW_RERUNS} or more reruns pin it down better", UserWarning, stacklevel=2)
    return NoiseReport(source, tuple(str(run.run_id) for run in found), len(frames), alpha,
                       case_table[list(col.NOISE_CASES_COLUMNS)], table, cluster_name(cluster))


_FEW_RERUNS = 5
"""A noise report of fewer reruns than this warns that its margin is a rough guide."""


def _sd_interval(df: int) -> tuple[float, float]:
    """The 95 % interval of a standard deviation estimated on ``df`` degrees of freedom, as multiples of the
    estimate: ``√(df / χ²(0.975, df))`` and ``√(df / χ²(0.025, df))`` (NaN for df < 1)."""
    if df < 1:
        return math.nan, math.nan
    from scipy import stats

    return math.sqrt(df / stats.chi2.ppf(0.975, df)), math.sqrt(df / stats.chi2.ppf(0.025, df))


def _unit_clusters(run: EvalRun, cluster: Any, units: pd.MultiIndex) -> np.ndarray:
    """Each unit's cluster code, from its case in ``run`` (:func:`~cogeval.compare.clusters.unit_clusters`)."""
    labels = unit_clusters(cluster, run.results)
    return pd.factorize(pd.Series([labels[unit] for unit in units], dtype=object))[0].astype(np.int64)


def _clustered_spread(x: np.ndarray, clusters: np.ndarray) -> float:
    """The sd of the difference of two reruns' means: the clustered SE (CR2) of the per-case differences of each
    pair of reruns, pooled over the pairs (NaN with fewer than 2 clusters)."""
    if len(x) < 2 or len(np.unique(clusters)) < 2:
        return math.nan
    codes = np.unique(clusters, return_inverse=True)[1]
    squares = [cluster_se(x[:, i] - x[:, j], codes, kind="CR2") ** 2
               for i, j in itertools.combinations(range(x.shape[1]), 2)]
    return math.sqrt(float(np.mean(squares)))


def _runs_of(runs: Any) -> list[EvalRun]:
    """The runs of ``runs``: one run-like value, or a list or tuple of them."""
    if isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
        return [as_run(runs, "runs")]
    if not runs:
        raise InputError("runs must hold k >= 2 reruns of one configuration, or one run with k >= 2 trials; got an "
                         "empty list")
    return [as_run(run, f"runs[{i}]") for i, run in enumerate(runs)]


def _check_reruns(runs: Sequence[EvalRun]) -> None:
    """Every run is a rerun of ``runs[0]``: another run, of the same dataset, metrics and configuration."""
    first = runs[0]
    names = [m.name for m in first.config.metrics]
    for i, run in enumerate(runs[1:], start=1):
        if run.run_id == first.run_id:
            raise InputError(f"runs[{i}] is runs[0] again (run id {run.run_id!r}); noise_report needs k >= 2 "
                             "different reruns")
        if run.fingerprint != first.fingerprint:
            raise InputError(f"runs[{i}] ran another dataset than runs[0] (fingerprint {str(run.fingerprint)[:8]}, "
                             f"not {str(first.fingerprint)[:8]}); noise_report needs reruns on one dataset")
        other = [m.name for m in run.config.metrics]
        if other != names:
            raise InputError(f"runs[{i}] scored other metrics than runs[0] ({', '.join(other) or 'none'}, not "
                             f"{', '.join(names) or 'none'}); noise_report needs reruns of one configuration")
        changed = changes_between(first, run)
        if changed:
            raise InputError(f"runs[{i}] is not a rerun of runs[0]: {'; '.join(changed)}; noise_report needs reruns "
                             "of one configuration (metrics, target, trials, judge, prompts) on one dataset")


def _trial_frames(run: EvalRun) -> list[pd.DataFrame]:
    """One score table per trial of ``run`` (each as trial 0): the reruns of a run with k >= 2 trials."""
    frame = score_frame(run)
    trials = sorted(int(t) for t in pd.unique(frame[col.TRIAL]))
    if len(trials) < 2:
        raise InputError(f"noise_report needs k >= 2 reruns: a list of runs of one configuration, or one run with "
                         f"trials >= 2; got one run ({run.run_id!r}) with {len(trials)} trial per case")
    return [frame[frame[col.TRIAL] == t].assign(**{col.TRIAL: 0}) for t in trials]


def _aligned(frames: Sequence[pd.DataFrame], directions: Mapping[str, bool]) -> tuple[dict[str, np.ndarray],
                                                                                        pd.MultiIndex]:
    """Per metric, a cases × reruns array of case values over the units every rerun has (the first rerun's order;
    units the target failed on in every rerun left out), and those units."""
    coded = unit_codes(*frames)
    found = [unit_values(frame, directions, codes) for frame, codes in zip(frames, coded)]
    first_units = found[0][0]
    ids = [unit_ids(units) for units, _, _ in found]
    where = [pd.Index(other).get_indexer(ids[0]) for other in ids]
    common = np.all([w >= 0 for w in where], axis=0)
    failed = np.all([errored.to_numpy(dtype=bool)[w[common]] for (_, _, errored), w in zip(found, where)], axis=0)
    keep = np.flatnonzero(common)[~failed]
    values = {m: np.column_stack([wide[m].to_numpy(dtype=float)[w[keep]] for (_, wide, _), w in zip(found, where)])
              for m in directions}
    return values, first_units[keep]


def _noise(x: np.ndarray) -> dict[str, float]:
    """``mean, run_sd, case_sd, flip_rate, icc`` of a cases × reruns array without NaN."""
    n, k = x.shape
    if n == 0:
        return dict.fromkeys(("mean", "run_sd", "case_sd", "flip_rate", "icc"), math.nan)
    case_means = x.mean(axis=1)
    grand = float(x.mean())
    within = float(((x - case_means[:, None]) ** 2).sum()) / (n * (k - 1))
    between = k * float(((case_means - grand) ** 2).sum()) / (n - 1) if n > 1 else math.nan
    total = between + (k - 1) * within
    icc = (between - within) / total if n > 1 and total > 0 else math.nan
    binary = bool(np.isin(x, (0.0, 1.0)).all())
    flips = float(np.mean([np.mean(x[:, i] != x[:, j]) for i, j in itertools.combinations(range(k), 2)]))
    return {"mean": grand, "run_sd": float(x.mean(axis=0).std(ddof=1)), "case_sd": math.sqrt(within),
            "flip_rate": flips if binary else math.nan, "icc": icc}


def _row_sd(x: np.ndarray) -> np.ndarray:
    """Each case's standard deviation (ddof 1) across the reruns."""
    return x.std(axis=1, ddof=1) if len(x) else np.zeros(0)


def _case_flips(x: np.ndarray) -> np.ndarray:
    """Each case's share of pairs of reruns whose scores differ (0/1 values; NaN for a metric that is not 0/1)."""
    k = x.shape[1]
    if not np.isin(x, (0.0, 1.0)).all():
        return np.full(len(x), math.nan)
    ones = x.sum(axis=1)
    return ones * (k - ones) / (k * (k - 1) / 2)


def _decided(runs: Sequence[EvalRun], frames: Sequence[pd.DataFrame], directions: Mapping[str, bool], alpha: float,
             source: Source, cluster: Any = None) -> dict[str, int]:
    """Per metric, how many pairs of reruns (earlier as base) the comparison calls ``better`` or ``worse``."""
    statistical = [m.name for run in runs for m in run.config.statistical_metrics]
    decided: dict[str, int] = {}
    for i, j in itertools.combinations(range(len(frames)), 2):
        if source == "runs":
            comparison = compare_runs(runs[i], runs[j], alpha=alpha, cluster=cluster)
        else:
            labels = None if cluster is None else unit_clusters(cluster, runs[0].results)
            comparison = compare_scores(frames[i], frames[j], directions=directions, alpha=alpha, informing=statistical,
                                        cluster=None if labels is None else _by_unit(labels))
        for name, m in comparison.metrics.items():
            decided[name] = decided.get(name, 0) + (m.verdict in ("better", "worse"))
    return decided


def _by_unit(labels: Mapping[tuple[str, int], Any]) -> Any:
    """The ``compare_scores(cluster=)`` function of units reading each unit's label from ``labels``."""
    return lambda units: np.array([labels[unit] for unit in units], dtype=object)
