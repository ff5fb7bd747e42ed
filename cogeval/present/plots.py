"""plotly charts of runs and comparisons: each function returns a ``plotly.graph_objects.Figure``.

- :func:`plot_comparison`: a forest plot, one row per metric, of the paired
  difference (head − base) with its interval.
- :func:`plot_changes`: per-case base against head for one metric.
- :func:`plot_scores`: a metric's scores in one or several runs, side by side.
- :func:`plot_history`: a metric's mean, with its interval, across the runs of a store over time.

In the forest plot colour and legend say each metric's verdict, by the
metric's direction: ``better`` green, ``worse`` red, ``equivalent`` and
``inconclusive`` grey. Its interval inverts the metric's test at its Holm
level (so it excludes 0 exactly when the metric is significant), with a
±margin band when a margin was set. :func:`plot_changes` colours improved
cases green and regressed ones red. The intervals of :func:`plot_scores`
(Wilson, for a 0/1 metric) and :func:`plot_history` (the leaderboard's rule,
:meth:`RunStore.history`: n = cases, Wilson, else a seeded bootstrap) are of
one run's mean, not of a difference.
Every piece of user text (case inputs, run and metric names) is HTML-escaped
before it reaches plotly, whose labels interpret a few HTML tags.

>>> import pandas as pd
>>> from cogeval import EvalRun, compare_runs
>>> def run(scores): return EvalRun.from_frame(pd.DataFrame({"input": list("abcdefghij"), "exact_match": scores}))
>>> fig = plot_comparison(compare_runs(run([0] * 10), run([1] * 10), seed=0))
>>> fig.data[0].x[0], fig.data[0].marker.color
(1.0, '#1a7f37')
"""

from __future__ import annotations

import datetime
import html
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from cogeval import _columns as col
from cogeval._check import check_probability, describe
from cogeval._html import format_value
from cogeval._text import escaped_line as text
from cogeval._text import with_unit
from cogeval.compare.clusters import cluster_name
from cogeval.compare.result import MetricComparison, RunComparison, interval_text, verdict_note
from cogeval.compare.runs import as_run, score_frame
from cogeval.data import EvalRun
from cogeval.errors import InputError
from cogeval.present.slices import slice_points, slice_span
from cogeval.stats import wilson_interval
from cogeval.store import RunStore

GOOD, BAD, NEUTRAL, ACCENT = "#1a7f37", "#cf222e", "#8c959f", "#0969da"
_VERDICT_COLOURS = {"better": GOOD, "worse": BAD, "equivalent": NEUTRAL, "inconclusive": NEUTRAL}
"""The forest plot's colour of each metric verdict (its legend entry is the verdict word itself)."""
_VERDICT_SYMBOLS = {"better": "circle", "worse": "circle", "equivalent": "diamond", "inconclusive": "circle"}
"""Marker shape per verdict (``equivalent`` apart from ``inconclusive``, both grey); open when not significant."""
_MARGIN_FILL = "rgba(140, 149, 159, 0.18)"
"""The ±margin band of a metric that has a margin."""


def _arrow(higher_is_better: bool | None) -> str:
    arrows: dict[bool | None, str] = {True: " ↑", False: " ↓"}
    return arrows.get(higher_is_better, "")


def _as_comparison(comparison: Any) -> RunComparison:
    found = getattr(comparison, "comparison", comparison)  # a ComparisonResult holds its RunComparison
    if not isinstance(found, RunComparison):
        raise InputError(f"comparison must be a RunComparison (compare_runs) or a ComparisonResult; got {describe(comparison)}")
    return found


def _side(info: Any) -> str:
    return text(info.name or info.run_id or "?", 40)


# -- the forest plot ------------------------------------------------------------------------------


def plot_comparison(comparison: Any, *, metrics: Sequence[str] | None = None) -> go.Figure:
    """A forest plot of a comparison: each metric's paired mean difference (head − base) and its interval.

    One row per metric (deciding metrics first; informing ones labelled
    "(informs)"), each with its own x range and unit, because metrics live on
    different scales (a pass rate moves by 0.1, a latency by 2 s) and the
    difference in the metric's own unit is what a reader acts on. The interval
    inverts the metric's test at its Holm level (``ci_level``), so it excludes
    0 exactly when the metric is significant. A dashed line marks zero and a
    shaded band ±margin when the metric has one. Colour and legend say the
    verdict word: ``better`` green, ``worse`` red (by the metric's direction,
    ↑ or ↓), ``equivalent`` (diamond) and ``inconclusive`` grey; the marker is
    filled when the metric is significant. An infinite interval end runs to
    the axis edge, uncapped. Hover shows the verdict, role, interval and level, means,
    test, n, mde, p, Holm-adjusted p and the verdict's reason. ``metrics`` names
    the compared metrics to draw (in the plot's order whatever the order given); default every one.

    >>> # fig = plot_comparison(compare_runs("runs/a.json", "runs/b.json", seed=0)); fig.show()
    """
    from cogeval.compare.result import as_run_comparison

    c = as_run_comparison("comparison", comparison)
    drawn = sorted(c.metrics.values(), key=lambda m: m.role != "decides")
    if metrics is not None:
        wanted = _known_metrics(c, metrics)
        drawn = [m for m in drawn if m.metric in wanted]
    rows = max(1, len(drawn))
    fig = make_subplots(rows=rows, cols=1, vertical_spacing=min(0.25, 0.5 / rows))
    # Traces, shapes and axes are gathered and set once: plotly's add_vline, add_vrect and update_xaxes(row=...)
    # each walk every trace and shape already there, so adding a row at a time took quadratic time.
    traces: list[go.Scatter] = []
    trace_rows: list[int] = []
    shapes: list[dict[str, Any]] = []
    axes: dict[str, Any] = {}
    shown: set[str] = set()
    for row, m in enumerate(drawn, start=1):
        x, y, suffix = ("x", "y", "") if row == 1 else (f"x{row}", f"y{row}", str(row))
        margin = m.margin if math.isfinite(m.margin) and m.margin > 0 else 0.0
        span = _padded_range([m.ci.low, m.ci.high, m.difference, 0.0, -margin, margin, *slice_span(c, m.metric)])
        slices = slice_points(c, m.metric, _VERDICT_COLOURS, NEUTRAL)  # by=...: one per slice, under the metric
        points = [_forest_point(m, span, m.verdict not in shown), *slices]
        shown.add(m.verdict)
        traces += points
        trace_rows += [row] * len(points)
        if margin:
            shapes.append(dict(type="rect", x0=-margin, x1=margin, xref=x, y0=0, y1=1, yref=f"{y} domain",
                               fillcolor=_MARGIN_FILL, line=dict(width=0), layer="below"))
        shapes.append(dict(type="line", x0=0, x1=0, xref=x, y0=0, y1=1, yref=f"{y} domain",
                           line=dict(color=NEUTRAL, dash="dash")))
        axes[f"xaxis{suffix}"] = dict(range=span, title=dict(text=with_unit(f"Δ {text(m.metric, 40)}", m.metric),
                                                             standoff=4))
        axes[f"yaxis{suffix}"] = dict(automargin=True)
    if traces:
        fig.add_traces(traces, rows=trace_rows, cols=[1] * len(traces))
    explain = ("test-inversion interval at each metric's Holm level · filled: significant"
               + (" · shaded: ±margin" if any(m.margin > 0 for m in drawn) else ""))
    title = (f"{_side(c.head)} (head) vs {_side(c.base)} (base): paired difference head − base<br><sup>{explain}</sup>"
             if drawn else "No metric was compared")
    sliced = 0 if c.slices is None else int(c.slices["metric"].isin([m.metric for m in drawn]).sum())
    fig.update_layout(
        title=title, height=160 + 110 * rows + 26 * sliced, template="plotly_white", hovermode="closest",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0, title_text="verdict "),
        margin=dict(l=10, r=10, t=110, b=40), shapes=shapes, **(axes or {"yaxis": dict(automargin=True)}),
    )
    return fig


def _known_metrics(comparison: RunComparison, metrics: Sequence[str]) -> set[str]:
    """``metrics`` as a set, each a compared metric (else :class:`InputError` listing them), at least one."""
    if isinstance(metrics, str):
        metrics = [metrics]
    unknown = [name for name in metrics if name not in comparison.metrics]
    if unknown or not metrics:
        got = f"metric {unknown[0]!r} is not in the comparison" if unknown else "metrics is empty"
        raise InputError(f"{got}; metrics must name compared metrics, which are "
                         f"{', '.join(map(repr, comparison.metrics)) or 'none'}")
    return set(metrics)


def _forest_point(m: MetricComparison, span: Sequence[float], legend: bool) -> go.Scatter:
    """One metric's marker at its difference with its interval as an asymmetric error bar.

    An infinite end is drawn to the edge of ``span`` (the row's x range), without end caps; a NaN
    end draws no bar. The bar's lengths are signed (plotly draws from ``x - arrayminus`` to
    ``x + array``), so a rank test's interval, which need not hold the mean difference, is still
    drawn where it lies.
    """
    low, high = m.ci

    def reach(end: float, edge: float) -> float:
        """The signed distance from the difference to ``end`` (clipped to ``edge`` when infinite)."""
        if math.isnan(end) or math.isnan(m.difference):
            return 0.0
        return (end if math.isfinite(end) else edge) - m.difference

    colour = _VERDICT_COLOURS.get(m.verdict, NEUTRAL)
    symbol = _VERDICT_SYMBOLS.get(m.verdict, "circle") + ("" if m.significant else "-open")
    label = text(m.metric, 40) + _arrow(m.higher_is_better) + (" (informs)" if m.role == "informs" else "")
    return go.Scatter(
        x=[m.difference], y=[label],
        mode="markers", name=m.verdict, legendgroup=m.verdict, showlegend=legend,
        marker=dict(color=colour, size=13, symbol=symbol, line=dict(width=2, color=colour)),
        error_x=dict(type="data", symmetric=False, array=[reach(high, span[1])], arrayminus=[-reach(low, span[0])],
                     color=colour, thickness=2, width=6 if math.isfinite(low) and math.isfinite(high) else 0),
        customdata=[[text(m.metric, 40), m.p_value, m.adjusted_p_value, m.test, m.n, m.verdict, m.role,
                     html.escape(interval_text(m), quote=False), format_value(m.mde), m.base, m.head,
                     html.escape(verdict_note(m), quote=False)]],
        hovertemplate=(
            "<b>%{customdata[0]}</b> · %{customdata[5]} (%{customdata[6]})"
            "<br>difference %{x:+.4g}, interval %{customdata[7]}"
            "<br>base %{customdata[9]:.4g} → head %{customdata[10]:.4g}"
            "<br>test %{customdata[3]}, n = %{customdata[4]}, mde %{customdata[8]}"
            "<br>p = %{customdata[1]:.3g}, adjusted p = %{customdata[2]:.3g}"
            "<br>%{customdata[11]}<extra></extra>"
        ),
    )


def _padded_range(values: Sequence[float]) -> list[float]:
    """The x range around the finite ``values``, padded by 15% (NaN and ±inf are left out; none finite: [-1, 1])."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return [-1.0, 1.0]
    low, high = min(finite), max(finite)
    pad = (high - low) * 0.15 or max(abs(high), 1.0) * 0.15
    return [low - pad, high + pad]


# -- per-case changes -----------------------------------------------------------------------------


def plot_changes(comparison: Any, metric: str, *, jitter: float | None = None, seed: int = 0) -> go.Figure:
    """Per-case base score (x) against head score (y) for one metric, with the line y = x.

    Improved cases are green, regressed ones red; unchanged cases lie on the
    line and are not drawn (the title counts them). Hover shows the case key,
    its input (escaped, cut to 80 characters) and both scores. Points of a 0/1
    metric would sit on top of each other, so they are spread by a ``seed``-ed
    ``jitter`` (default 0.08 for 0/1 metrics, else 0); hover keeps the true values.

    >>> # plot_changes(comparison, "exact_match").show()
    """
    c = _as_comparison(comparison)
    if metric not in c.metrics:
        raise InputError(f"metric {metric!r} is not in the comparison; its metrics are {', '.join(map(repr, c.metrics)) or 'none'}")
    m = c.metrics[metric]
    changes = c.changes[c.changes[col.METRIC] == metric]
    values = np.concatenate([changes[col.BASE].to_numpy(float), changes[col.HEAD].to_numpy(float)])
    if jitter is None:
        jitter = 0.08 if len(values) and np.isin(values, (0.0, 1.0)).all() else 0.0
    rng = np.random.default_rng(seed)
    fig = go.Figure()
    errored = int((changes[col.DIRECTION] == "error").sum())  # the target failed on the case in one run
    for direction, colour in (("improved", GOOD), ("regressed", BAD), ("error", NEUTRAL))[:3 if errored else 2]:
        part = changes[changes[col.DIRECTION] == direction]
        base, head = part[col.BASE].to_numpy(float), part[col.HEAD].to_numpy(float)
        if jitter:
            base, head = base + rng.uniform(-jitter, jitter, len(base)), head + rng.uniform(-jitter, jitter, len(head))
        fig.add_trace(go.Scatter(
            x=base, y=head, mode="markers", name=f"{direction} ({len(part)})",
            marker=dict(color=colour, size=8, opacity=0.75),
            customdata=[[text(k, 12), text(i), b, h, d] for k, i, b, h, d in zip(
                part[col.CASE_KEY], part[col.INPUT], part[col.BASE], part[col.HEAD], part[col.DELTA])],
            hovertemplate=("<b>%{customdata[1]}</b><br>case %{customdata[0]}"
                           "<br>base %{customdata[2]:.4g} → head %{customdata[3]:.4g} (Δ %{customdata[4]:+.4g})<extra></extra>"),
        ))
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
    pad = (high - low) * 0.05 + jitter or 0.5
    fig.add_trace(go.Scatter(x=[low - pad, high + pad], y=[low - pad, high + pad], mode="lines", name="no change (head = base)",
                             line=dict(color=NEUTRAL, dash="dash"), hoverinfo="skip"))
    unchanged = m.n - m.n_improved - m.n_regressed - errored
    name = text(metric, 40)
    fig.update_layout(
        title=f"{name}{_arrow(m.higher_is_better)}: per-case scores · {m.n_improved} improved, {m.n_regressed} regressed, "
              + (f"{errored} errored, " if errored else "") + f"{unchanged} unchanged (not drawn) of {m.n} paired cases",
        xaxis_title=with_unit(f"base · {_side(c.base)} · {name}", metric),
        yaxis_title=with_unit(f"head · {_side(c.head)} · {name}", metric),
        template="plotly_white", height=520, hovermode="closest",
    )
    return fig


# -- score distributions --------------------------------------------------------------------------


def _named_runs(run_or_runs: Any) -> dict[str, EvalRun]:
    """Label → run for a run, a suite result, a path, a list of them, or a mapping name → run."""
    items: list[tuple[str | None, EvalRun]]
    if isinstance(run_or_runs, Mapping):
        items = [(str(k), as_run(v, f"runs[{k!r}]")) for k, v in run_or_runs.items()]
    elif isinstance(run_or_runs, (list, tuple)):
        items = [(None, as_run(r, f"runs[{i}]")) for i, r in enumerate(run_or_runs)]
    else:
        items = [(None, as_run(run_or_runs, "run"))]
    if not items:
        raise InputError("plot_scores needs at least one run; got an empty collection")
    labels: dict[str, EvalRun] = {}
    for label, run in items:
        label = label or run.name or run.run_id
        if label in labels:
            label = f"{label} · {run.run_id}"
        labels[label] = run
    return labels


def _scores(run: EvalRun, metric: str, where: str) -> np.ndarray:
    """Every score of ``metric`` in ``run`` (case × trial; latency, cost and token usage per case), NaN left out."""
    scores = score_frame(run)
    if metric not in set(scores[col.METRIC]):
        have = ", ".join(map(repr, dict.fromkeys(scores[col.METRIC].dropna()))) or "none"
        raise InputError(f"metric {metric!r} is not in {where}; its metrics are {have}")
    values = scores.loc[scores[col.METRIC] == metric, col.SCORE].to_numpy(float)
    return values[~np.isnan(values)]


def _binary(arrays: Sequence[np.ndarray]) -> bool:
    values = np.concatenate(arrays) if arrays else np.array([])
    return bool(len(values)) and bool(np.isin(values, (0.0, 1.0)).all())


def plot_scores(run_or_runs: Any, metric: str, *, confidence: float = 0.95) -> go.Figure:
    """A metric's scores in one or several runs, side by side.

    ``run_or_runs`` is a run, a suite result or a run-file path, a list of
    them, or a mapping name → run (the names label the runs). A 0/1 metric is
    drawn as pass-rate bars with Wilson intervals at ``confidence``; any other
    metric as box plots (mean dashed) with every score as a point. Scores are
    case × trial; missing (NaN) scores are left out.

    >>> # plot_scores({"v1": "runs/a.json", "v2": "runs/b.json"}, "latency").show()
    """
    confidence = check_probability("confidence", confidence, open_interval=True)
    runs = _named_runs(run_or_runs)
    values = {label: _scores(run, metric, f"run {label!r}") for label, run in runs.items()}
    higher = next((run.directions[metric] for run in runs.values() if metric in run.directions), None)
    name = text(metric, 40) + _arrow(higher)
    labels = [text(label, 40) for label in values]
    fig = go.Figure()
    if _binary(list(values.values())):
        n = [len(v) for v in values.values()]
        passed = [int(v.sum()) for v in values.values()]
        rate = [p / k if k else math.nan for p, k in zip(passed, n)]
        low, high = zip(*(wilson_interval(p, k, confidence=confidence) for p, k in zip(passed, n)))
        fig.add_trace(go.Bar(
            x=labels, y=rate, marker_color=ACCENT, name=name,
            error_y=dict(type="data", symmetric=False, array=np.subtract(high, rate), arrayminus=np.subtract(rate, low)),
            text=[f"{p}/{k}" for p, k in zip(passed, n)], textposition="inside", insidetextanchor="start",
            customdata=np.column_stack([passed, n, low, high]),
            hovertemplate=("%{x}<br>pass rate %{y:.3f} [%{customdata[2]:.3f}, %{customdata[3]:.3f}]"
                           "<br>%{customdata[0]} of %{customdata[1]}<extra></extra>"),
        ))
        fig.update_layout(title=f"{name}: pass rate per run ({100 * confidence:g}% Wilson interval)",
                          yaxis_title=f"pass rate of {name}", yaxis_range=[0, 1.05])
    else:
        for label, v in zip(labels, values.values()):
            fig.add_trace(go.Box(y=v, name=label, boxmean=True, boxpoints="all" if len(v) <= 500 else "outliers",
                                 jitter=0.4, pointpos=0, marker=dict(size=4, opacity=0.5), line_color=ACCENT,
                                 hovertemplate="%{y:.4g}<extra>%{fullData.name}</extra>"))
        fig.update_layout(title=f"{name}: scores per run", yaxis_title=with_unit(name, metric), showlegend=False)
    fig.update_layout(xaxis_title="run", template="plotly_white", height=460)
    return fig


# -- history --------------------------------------------------------------------------------------


def _clustered_by(by: str | None, clusters: Any) -> str:
    """What a history point's hover adds with ``cluster=``: ``, clustered by <field>, G clusters``; else nothing."""
    if by is None:
        return ""
    return f", clustered by {by}, {clusters} cluster{'' if clusters == 1 else 's'}"


def _utc(started_at: str) -> datetime.datetime | None:
    """``started_at`` as a naive UTC datetime (what a plotly date axis reads), or None."""
    try:
        moment = datetime.datetime.fromisoformat(started_at)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
    return moment


def plot_history(store: Any, metric: str, name: str | None = None, *, confidence: float = 0.95,
                 seed: int | np.random.Generator | None = 0, cluster: Any = None) -> go.Figure:
    """A metric's score with its interval across the runs of a store, in time order (x = ``started_at``, UTC).

    It draws :meth:`RunStore.history <cogeval.RunStore.history>`, the
    leaderboard's rule: each run's score is the mean over cases of each case's
    mean over its trials, ``n`` counts cases (not case × trial), and the
    interval is Wilson's when every case value of every run drawn is 0 or 1,
    else a percentile bootstrap of the mean over cases with this ``seed`` (so
    the chart is the same each time). ``store`` is a :class:`RunStore` or its
    folder; ``name`` keeps only the runs of that name. Each run name is one
    line; runs without the metric's scores are left out.

    ``cluster`` (a case-metadata field or a function of the case, as in
    :meth:`RunStore.history <cogeval.RunStore.history>`) draws each run's
    clustered interval (``"clustered-t"``: CR2 standard error, Bell–McCaffrey
    degrees of freedom) instead, and each point's hover says
    ``clustered by <field>, G clusters``.

    >>> # plot_history(RunStore("runs"), "exact_match", name="nightly").show()
    """
    confidence = check_probability("confidence", confidence, open_interval=True)
    if isinstance(store, (str, os.PathLike)):
        store = RunStore(store)
    if not isinstance(store, RunStore):
        raise InputError(f"store must be a RunStore or a folder path; got {describe(store)}")
    table = store.history(metric, name, confidence=confidence, seed=seed, cluster=cluster)
    if table.empty:
        raise InputError(f"no run in {store.path}; the run names there are none")
    higher = next((bool(h) for h in table["higher_is_better"] if h is not None), None)
    table = table[table[col.N] > 0]
    binary = bool((table[col.INTERVAL] == "wilson").all())
    by = None if cluster is None else text(cluster_name(cluster), 40)
    fig = go.Figure()
    for run_name in dict.fromkeys(table[col.NAME][::-1]):  # newest run's name first
        group = table[[n == run_name for n in table[col.NAME]]]
        label = text(run_name if run_name is not None else "(no name)", 40)
        fig.add_trace(go.Scatter(
            x=[_utc(t) for t in group[col.STARTED_AT]], y=group[col.SCORE], mode="lines+markers", name=label,
            error_y=dict(type="data", symmetric=False, array=group[col.CI_HIGH] - group[col.SCORE],
                         arrayminus=group[col.SCORE] - group[col.CI_LOW]),
            customdata=[[text(r), n, low, high, label, _clustered_by(by, g)] for r, n, low, high, g in zip(
                group[col.RUN_ID], group[col.N], group[col.CI_LOW], group[col.CI_HIGH], group[col.CLUSTERS])],
            hovertemplate=("<b>%{customdata[4]}</b> · %{customdata[0]}<br>%{x|%Y-%m-%d %H:%M:%S} UTC"
                           "<br>mean %{y:.4g} [%{customdata[2]:.4g}, %{customdata[3]:.4g}], "
                           "n = %{customdata[1]} cases%{customdata[5]}<extra></extra>"),
        ))
    what = f"clustered t interval by {by}" if by is not None else "Wilson interval" if binary else "bootstrap CI"
    label = text(metric, 40) + _arrow(higher)
    fig.update_layout(
        title=f"{label}: mean per run over time ({100 * confidence:g}% {what}, n = cases)",
        xaxis_title="run started at (UTC)", yaxis_title=with_unit(("pass rate of " if binary else "mean ") + label, metric),
        template="plotly_white", height=460, hovermode="closest",
    )
    return fig


# -- rerun noise ----------------------------------------------------------------------------------


def plot_noise(report: Any) -> go.Figure:
    """How often each case flips between reruns: per-case flip rates of the 0/1 metrics of a noise report.

    A case's flip rate is the share of the k(k−1)/2 pairs of reruns whose scores differ on it (0: every rerun
    agreed; with k = 3, 2/3 for a case right in one rerun and wrong in the others). One bar per flip rate and
    metric (the rates, to 3 digits, as categories in ascending order): how many cases flip that often; hover
    gives the share of cases and the metric's mean flip rate.
    A report without a 0/1 metric gives a figure whose title says so.

    >>> # plot_noise(noise_report([run_1, run_2, run_3])).show()
    """
    from cogeval.compare.noise import NoiseReport

    if not isinstance(report, NoiseReport):
        raise InputError(f"report must be a NoiseReport (cogeval.noise_report(reruns)); got {describe(report)}")
    cases = report.cases[report.cases["flip_rate"].notna()]
    mean_flips = dict(zip(report.to_frame()[col.METRIC], report.to_frame()["flip_rate"]))
    fig = go.Figure()
    for metric, part in cases.groupby(col.METRIC, sort=False):
        rates, counts = np.unique(part["flip_rate"].to_numpy(float).round(12), return_counts=True)
        fig.add_trace(go.Bar(
            x=[format_value(float(r), 3) for r in rates], y=counts, name=text(str(metric), 40),
            customdata=[[c / len(part), mean_flips[metric], len(part)] for c in counts],
            hovertemplate=(f"<b>{text(str(metric), 40)}</b><br>flip rate %{{x}}: %{{y}} cases "
                           "(%{customdata[0]:.1%} of %{customdata[2]})<br>mean flip rate %{customdata[1]:.3g}"
                           "<extra></extra>"),
        ))
    k = report.reruns
    title = (f"Per-case flip rates over {k} reruns<br><sup>share of the {k * (k - 1) // 2} pairs of reruns whose "
             "scores differ on a case · 0: every rerun agreed</sup>" if len(fig.data)
             else "No 0/1 metric in the noise report: flip rates are for 0/1 metrics")
    fig.update_layout(title=title, barmode="group", template="plotly_white", height=460,
                      xaxis_title="flip rate (share of pairs of reruns that disagree)", yaxis_title="cases",
                      xaxis=dict(type="category", categoryorder="category ascending"), legend_title_text="metric")
    return fig
