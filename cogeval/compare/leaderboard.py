"""Leaderboards: variants ranked metric by metric, with intervals, rank intervals and paired tests.

"Significant" is a paired test against the leader, Holm-adjusted over every
pair of variants, because the leader is picked from the same data
(``docs/leaderboards.md``).

>>> import pandas as pd
>>> from cogeval import EvalRun
>>> run = lambda scores: EvalRun.from_frame(pd.DataFrame({"input": [str(i) for i in range(20)], "exact_match": scores}))
>>> board = Leaderboard({"good": run([1] * 18 + [0] * 2), "poor": run([1] * 2 + [0] * 18)})
>>> board.leaderboard("exact_match")[["variant", "score", "rank", "significant"]].values.tolist()
[['good', 0.9, 1, False], ['poor', 0.1, 2, True]]
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import math
import types
from collections.abc import Hashable, Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_choice, check_probability, check_seed, describe
from cogeval._html import badge, format_value, html_table, safe_html
from cogeval.compare.clusters import check_cluster, unit_clusters
from cogeval.compare.engine import TESTS
from cogeval.compare.paired import PairedSample, PairedTest, paired_test
from cogeval.compare.pairing import UnitValues, metrics_of, pair_units, unit_values
from cogeval.compare.runs import as_run, score_frame
from cogeval.compare.summary import interval_kind, summarise
from cogeval.data import EvalRun
from cogeval.errors import InputError
from cogeval.stats import adjust_p_values
from cogeval.stats.ranking import min_rank, rank_intervals

_VARIANT = "variant"
RANK, RANK_LOW, RANK_HIGH = "rank", "rank_low", "rank_high"
LEADERBOARD_COLUMNS = (
    _VARIANT, col.SCORE, col.N, RANK, col.CI_LOW, col.CI_HIGH, RANK_LOW, RANK_HIGH,
    col.P_VALUE, col.ADJUSTED_P_VALUE, col.SIGNIFICANT,
)
"""The columns of :meth:`Leaderboard.leaderboard`, in order."""


def _check_name(kind: str, name: Any) -> str:
    """A variant name: a non-empty string."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{kind} names must be non-empty strings; got {describe(name)}")
    return name


def frozen_mapping(kind: str, mapping: Any, example: str) -> Mapping[str, Any]:
    """A read-only copy of a non-empty mapping of variant names to values."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError(f"{kind} must map at least one variant name to {example}; got {describe(mapping)}")
    return types.MappingProxyType({_check_name("variant", name): value for name, value in mapping.items()})


@dataclasses.dataclass(frozen=True, repr=False)
class Leaderboard:
    """Variants ranked metric by metric, with intervals, rank intervals and paired tests against the leader.

    ``results`` maps each variant name to its run: a suite result (as
    :func:`run_variants` gives), an :class:`~cogeval.EvalRun` or a run-file
    path; ``results[name]`` gives it back. :meth:`leaderboard` explains the
    columns; ``docs/leaderboards.md`` every rule.

    - ``alpha``: intervals are at level ``1 - alpha``; significant means
      Holm-adjusted p < ``alpha``, Holm over every pair of variants.
    - ``test``: ``"t"`` or ``"wilcoxon"``, the paired test of non-binary metrics.
    - ``seed``: seeds every bootstrap, so the table is the same at every call.
    - ``cluster``: a case-metadata field or a function of the case, when cases come in groups that succeed
      and fail together (questions on one passage): every pair of variants is then tested by the clustered
      form of its test, whole clusters being the independent units, as ``compare_runs(..., cluster=)``, and
      each variant's interval is the clustered t-interval (CR2, Bell–McCaffrey df), as ``RunStore.history``'s.
    """

    results: Mapping[str, Any]
    axis: str = "config"
    alpha: float = 0.05
    test: str = "t"
    seed: int | None = 0
    cluster: Any = None
    _cache: dict[Any, Any] = dataclasses.field(init=False, repr=False, compare=False)
    """Tables and per-case values computed once (set in ``__post_init__``; not an argument)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", frozen_mapping("results", self.results, "its run"))
        object.__setattr__(self, "alpha", check_probability("alpha", self.alpha, open_interval=True))
        object.__setattr__(self, "test", check_choice("test", self.test, TESTS))
        object.__setattr__(self, "seed", check_seed("seed", self.seed))
        object.__setattr__(self, "cluster", check_cluster(self.cluster))
        object.__setattr__(self, "_cache", {})

    def __repr__(self) -> str:
        return f"Leaderboard(variants={list(self.results)!r}, axis={self.axis!r}, alpha={self.alpha!r})"

    # -- the runs, as per-case values ----------------------------------------------------

    def _runs(self) -> dict[str, EvalRun]:
        if "runs" not in self._cache:
            self._cache["runs"] = {name: as_run(result, f"results[{name!r}]") for name, result in self.results.items()}
        return self._cache["runs"]

    @property
    def directions(self) -> dict[str, bool]:
        """``higher_is_better`` of every metric scored per case: as the first run declaring it says, else True."""
        if "directions" not in self._cache:
            runs = self._runs().values()
            scored = dict.fromkeys(m for frame in self._scores().values() for m in metrics_of(frame))
            self._cache["directions"] = {
                m: next((run.directions[m] for run in runs if m in run.directions), True) for m in scored
            }
        return dict(self._cache["directions"])

    @property
    def metrics(self) -> list[str]:
        """The metrics scored per case by at least one variant, in order of first appearance."""
        return list(self.directions)

    def _scores(self) -> dict[str, pd.DataFrame]:
        """Each variant's score table (:func:`~cogeval.compare.runs.score_frame`)."""
        if "scores" not in self._cache:
            self._cache["scores"] = {name: score_frame(run) for name, run in self._runs().items()}
        return self._cache["scores"]

    def _unit_values(self) -> dict[str, UnitValues | None]:
        """Each variant's :func:`~cogeval.compare.pairing.unit_values` over its own metrics (None without any)."""
        if "units" not in self._cache:
            values: dict[str, UnitValues | None] = {}
            for name, frame in self._scores().items():
                own = {m: self.directions[m] for m in metrics_of(frame)}
                values[name] = unit_values(frame, own) if own else None
            self._cache["units"] = values
        return self._cache["units"]

    def _values(self) -> dict[str, pd.DataFrame]:
        """Each variant's per-case values: one row per case (key, occurrence), repeats averaged, failures applied."""
        return {name: pd.DataFrame() if v is None else v[1] for name, v in self._unit_values().items()}

    # -- the table ------------------------------------------------------------------------

    def leaderboard(self, metric: str) -> pd.DataFrame:
        """One row per variant, best first, for ``metric``.

        Columns: ``variant``; ``score`` (the mean over cases of each case's
        mean over repeats: a pass rate for 0/1 metrics); ``n`` (cases scored,
        not case × repeat); ``rank`` (1 = best by the metric's direction; ties
        share a rank: 1, 1, 1, 4); ``ci_low``/``ci_high`` (a Wilson interval
        when every case value of every variant is 0 or 1, else a seeded
        percentile bootstrap of the mean over cases). Score, n and interval
        follow the one rule of :mod:`cogeval.compare.summary`, which
        :meth:`RunStore.history <cogeval.RunStore.history>` and
        :func:`~cogeval.plot_history` use too. ``rank_low``/``rank_high``
        (the best and worst rank the intervals allow, see
        :func:`cogeval.stats.ranking.rank_intervals`); ``p_value`` (the paired
        test of the variant against the leader, as :func:`~cogeval.compare_runs`
        runs it), ``adjusted_p_value`` (Holm across every pair of variants on
        this metric, because the leader is chosen from the same data) and
        ``significant`` (adjusted p < ``alpha``).
        The leader's own test columns are NaN and False.

        A variant without any score for ``metric`` has a NaN score (no data, not
        0), ``n = 0``, NaN interval and p-values, and ranks below every variant
        with scores, whatever the direction.
        """
        metric = self._check_metric(metric)
        if ("table", metric) not in self._cache:
            self._cache["table", metric] = self._table(metric)
        return self._cache["table", metric].copy()

    def _check_metric(self, metric: Any) -> str:
        if not isinstance(metric, str) or metric not in self.directions:
            raise InputError(
                f"metric {describe(metric)} is not scored per case by any variant; "
                f"the metrics are: {', '.join(self.metrics) or 'none'}"
            )
        return metric

    def _case_values(self, metric: str) -> dict[str, np.ndarray]:
        """Each variant's unit values of ``metric`` (:func:`~cogeval.compare.summary.unit_scores`' rule), NaN left out."""
        return {
            name: frame[metric].dropna().to_numpy(dtype=float) if metric in frame.columns else np.array([])
            for name, frame in self._values().items()
        }

    def _clustered_values(self, name: str, metric: str) -> tuple[np.ndarray, list[Any]]:
        """A variant's unit values of ``metric`` (NaN where it has none) and each unit's cluster label."""
        frame = self._values()[name]
        if metric not in frame.columns:
            return np.array([]), []
        labels = self._unit_clusters()[name]
        return frame[metric].to_numpy(dtype=float), [labels[unit] for unit in frame.index]

    def _binary(self, metric: str) -> bool:
        """Every case value of every variant is 0 or 1 (repeats that disagree give 0.5: not binary)."""
        return interval_kind(self._case_values(metric).values()) == "wilson"

    def _table(self, metric: str) -> pd.DataFrame:
        up = self.directions[metric]
        names = list(self.results)
        values = self._case_values(metric)
        kind = interval_kind(values.values())  # one kind for every variant, so their intervals compare
        rows = []
        for name in names:
            if self.cluster is None:
                s = summarise(metric, values[name], interval=kind, confidence=1 - self.alpha, seed=self.seed)
            else:
                unit_values, labels = self._clustered_values(name, metric)
                s = summarise(metric, unit_values, clusters=labels, confidence=1 - self.alpha)
            rows.append({_VARIANT: name, col.SCORE: s.score, col.N: s.n, col.CI_LOW: s.ci.low, col.CI_HIGH: s.ci.high})
        frame = pd.DataFrame(rows)

        scored = frame[col.N].to_numpy() > 0
        rank = np.full(len(frame), int(scored.sum()) + 1)
        if scored.any():
            rank[scored] = min_rank(frame.loc[scored, col.SCORE], higher_is_better=up)
        low, high = rank_intervals(frame[col.CI_LOW], frame[col.CI_HIGH], higher_is_better=up)
        frame[RANK] = rank
        frame[RANK_LOW] = np.where(scored, np.fmin(low, rank), rank).astype(int)
        frame[RANK_HIGH] = np.where(scored, np.fmax(high, rank), len(frame)).astype(int)
        frame = frame.sort_values(RANK, kind="stable").reset_index(drop=True)
        return self._against_leader(frame, metric)[list(LEADERBOARD_COLUMNS)]

    def _against_leader(self, frame: pd.DataFrame, metric: str) -> pd.DataFrame:
        """Each variant against the leader (row 0), Holm-adjusted across every pair of variants.

        The leader is picked from the same data, so adjusting only its N − 1
        comparisons would flag a variant far more often than ``alpha`` when all
        are equal. Holm over all N·(N − 1)/2 pairs controls the family-wise
        error of every pairwise claim, the leader's included.
        """
        leader = frame[_VARIANT].iloc[0]
        scored = [v for v, n in zip(frame[_VARIANT], frame[col.N]) if n]
        tests = {pair: self._pair_test(metric, *pair) for pair in itertools.combinations(scored, 2)}
        tested = [pair for pair, t in tests.items() if t.name != "none" and not math.isnan(t.p_value)]
        adjusted = dict(zip(tested, adjust_p_values([tests[pair].p_value for pair in tested], "holm")))
        p, adj = np.full(len(frame), math.nan), np.full(len(frame), math.nan)
        for i, name in enumerate(frame[_VARIANT]):
            pair = next((q for q in ((leader, name), (name, leader)) if q in tests), None)
            if name == leader or pair is None:
                continue
            p[i] = tests[pair].p_value
            adj[i] = adjusted.get(pair, math.nan if math.isnan(p[i]) else 1.0)  # untested: p = 1, as compare_runs
        frame[col.P_VALUE] = p
        frame[col.ADJUSTED_P_VALUE] = adj
        frame[col.SIGNIFICANT] = adj < self.alpha  # NaN compares False
        return frame

    def _pair_test(self, metric: str, first: str, second: str) -> PairedTest:
        """The paired test of two variants on ``metric``, as :func:`~cogeval.compare_runs` runs it."""
        values = self._unit_values()
        # both scored the metric, so neither is None
        pairing = pair_units(cast(UnitValues, values[first]), cast(UnitValues, values[second]))
        a, b = pairing.base[metric].to_numpy(), pairing.head[metric].to_numpy()
        keep = ~(np.isnan(a) | np.isnan(b))
        return paired_test(PairedSample(a, b, self._cluster_codes(pairing.units, first, second)).take(keep), self.test)

    def _unit_clusters(self) -> dict[str, dict[tuple[str, int], Any]]:
        """Each variant's cluster label of each of its units (``cluster=``), from its results' cases."""
        if "clusters" not in self._cache:
            self._cache["clusters"] = {name: unit_clusters(self.cluster, run.results)
                                       for name, run in self._runs().items()}
        return self._cache["clusters"]

    def _cluster_codes(self, units: pd.MultiIndex, first: str, second: str) -> np.ndarray | None:
        """The cluster code of each of ``units`` (the first variant's label of it, else the second's); None
        without ``cluster``."""
        if self.cluster is None:
            return None
        clusters = self._unit_clusters()
        labels = [clusters[first].get(unit, clusters[second].get(unit)) for unit in units]
        return pd.factorize(pd.Series(labels, dtype=object))[0].astype(np.int64)

    def best(self, metric: str) -> str | None:
        """The variant ranked first on ``metric``, or None when several share rank 1."""
        frame = self.leaderboard(metric)
        top = frame[frame[RANK] == 1]
        return str(top[_VARIANT].iloc[0]) if len(top) == 1 else None

    def to_frame(self) -> pd.DataFrame:
        """Every metric's leaderboard stacked: ``metric``, ``higher_is_better``, then the leaderboard columns."""
        columns = [col.METRIC, "higher_is_better", *LEADERBOARD_COLUMNS]
        frames = [self.leaderboard(m).assign(**{col.METRIC: m}, higher_is_better=self.directions[m])[columns]
                  for m in self.metrics]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    def summary(self, metric: str) -> str:
        """A few lines of text: the ranking with intervals and what differs significantly from the leader."""
        frame = self.leaderboard(metric)
        up = self.directions[metric]
        level = f"{1 - self.alpha:.0%}"
        kind = (f"pass rate with {level} Wilson intervals" if self._binary(metric)
                else f"mean with {level} bootstrap intervals")
        lines = [f"{metric} ({'higher' if up else 'lower'} is better; {kind}) across {len(frame)} variants "
                 f"(axis: {self.axis}):"]
        leader = frame[_VARIANT].iloc[0]
        r: Any  # a row of the leaderboard; pandas-stubs types each field as any scalar
        for r in frame.itertuples(index=False):
            where = (f"rank {r.rank} (could be {r.rank_low}–{r.rank_high})" if r.rank_low != r.rank_high
                     else f"rank {r.rank}")
            if r.n == 0:
                test = "no scores"
            elif r.variant == leader:
                test = "leader"
            elif math.isnan(r.adjusted_p_value):
                test = "vs leader: p-value undefined (every paired difference is the same; try test='wilcoxon')"
            else:
                test = (f"vs leader: adjusted p = {format_value(r.adjusted_p_value, 3)}, "
                        f"{'significant' if r.significant else 'not significant'}")
            lines.append(f"  {r.rank}. {r.variant}: {format_value(r.score)} "
                         f"[{format_value(r.ci_low)}, {format_value(r.ci_high)}], n = {r.n}, {where}; {test}")
        best = self.best(metric)
        behind = [v for v, s in zip(frame[_VARIANT], frame[col.SIGNIFICANT]) if s]
        close = [v for v, p, s in zip(frame[_VARIANT][1:], frame[col.ADJUSTED_P_VALUE][1:], frame[col.SIGNIFICANT][1:])
                 if not (s or math.isnan(p))]
        lines.append(f"Best: {best}." if best else "No single best: several variants share rank 1.")
        if behind:
            lines.append(f"Significantly different from {leader} (Holm-adjusted over all pairs, p < {self.alpha:g}): "
                         f"{', '.join(behind)}.")
        if close:
            lines.append(f"Not distinguishable from {leader}: {', '.join(close)}.")
        return "\n".join(lines)

    def plot(self, metric: str) -> Any:
        """A plotly figure: each variant's score with its interval, best at the top.

        Variant, axis and metric names are escaped (plotly's labels read a few HTML tags).
        """
        import plotly.graph_objects as go

        frame = self.leaderboard(metric)
        up = self.directions[metric]
        figure = go.Figure(go.Scatter(
            x=frame[col.SCORE], y=[_label(v) for v in frame[_VARIANT]], mode="markers",
            error_x={"type": "data", "symmetric": False, "array": frame[col.CI_HIGH] - frame[col.SCORE],
                     "arrayminus": frame[col.SCORE] - frame[col.CI_LOW]},
            customdata=frame[[col.N, RANK, RANK_LOW, RANK_HIGH]].to_numpy(),
            hovertemplate="%{y}: %{x:.4g} (n = %{customdata[0]}, rank %{customdata[1]}, "
                          "could be %{customdata[2]}–%{customdata[3]})<extra></extra>",
        ))
        figure.update_yaxes(autorange="reversed", title_text=_label(self.axis))
        figure.update_xaxes(title_text=f"{_label(metric)} ({'higher' if up else 'lower'} is better)")
        figure.update_layout(title_text=f"{_label(metric)} by {_label(self.axis)}, {1 - self.alpha:.0%} intervals")
        return figure

    @safe_html
    def _repr_html_(self) -> str:
        marks = []
        for metric in self.metrics:
            frame = self.leaderboard(metric)
            rows = [{**row, "vs_leader": _mark(i, row)} for i, row in enumerate(frame.to_dict("records"))]
            caption = f"{metric} ({'higher' if self.directions[metric] else 'lower'} is better) · axis: {self.axis}"
            marks.append(html_table(
                rows, [_VARIANT, col.SCORE, col.CI_LOW, col.CI_HIGH, col.N, RANK, RANK_LOW, RANK_HIGH,
                       col.ADJUSTED_P_VALUE, "vs_leader"],
                caption=caption, raw_columns=["vs_leader"],
            ))
        return "".join(marks) or html_table([], [_VARIANT], caption=f"Leaderboard · axis: {self.axis} · no metrics")


def _label(value: Any) -> str:
    """User text for a plotly label: ``<``, ``>`` and ``&`` escaped (plotly.js does not decode ``&quot;``)."""
    return html.escape(str(value), quote=False)


def _mark(position: int, row: Mapping[Hashable, Any]) -> str:
    """The ``vs_leader`` badge of a leaderboard row in HTML."""
    if row[col.N] == 0:
        return badge("no scores")
    if position == 0:
        return badge("leader", "good")
    return badge("significant", "bad") if row[col.SIGNIFICANT] else badge("not significant")
