"""The chart of a sequential comparison: each metric's confidence sequence narrowing to the decision.

One panel per metric, x the paired cases so far: the sequence ``[ci_low,
ci_high]`` as a band, the running estimate as a line, a dashed line at 0, a
shaded ±margin band when the metric has a margin, and a dotted line where the
comparison stopped. The band is green when the metric was decided ``better``,
red ``worse``, grey otherwise. Metric names are HTML-escaped.

A group-sequential comparison (``method="group"``) shows instead each metric's
z statistic at the looks against the looks' bounds: ±efficacy as dashed lines
(decided for an effect beyond them) and the futility region ``|z| < futility``
shaded (stopped for no difference of the effect inside it).

>>> from cogeval import exact_match
>>> from cogeval.compare.sequential import compare_sequential
>>> from cogeval.examples import assistant_v1, assistant_v2, questions
>>> fig = plot_sequential(compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()]))
>>> [trace.name for trace in fig.data]
['exact_match: sequence', 'exact_match: estimate']
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from cogeval._check import describe
from cogeval._text import escaped_line as text
from cogeval.errors import InputError

_COLOURS = {"better": ("#1a7f37", "rgba(26, 127, 55, 0.2)"), "worse": ("#cf222e", "rgba(207, 34, 46, 0.2)")}
_GREY = ("#8c959f", "rgba(140, 149, 159, 0.25)")


def plot_sequential(result: Any) -> go.Figure:
    """A plotly figure of a :class:`~cogeval.compare.sequential.SequentialComparison`: the module docstring says what it shows."""
    from cogeval.compare.sequential import SequentialComparison

    if not isinstance(result, SequentialComparison):
        raise InputError(f"result must be what compare_sequential returns; got {describe(result)}")
    if result.method == "group":
        return _plot_looks(result)
    decisions = result.to_frame()
    rows = max(1, len(decisions))
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=min(0.12, 0.4 / rows),
                        subplot_titles=[f"{text(m, 40)}: {v}" for m, v in zip(decisions.metric, decisions.verdict)])
    for row, (metric, verdict, margin) in enumerate(zip(decisions.metric, decisions.verdict, decisions.margin), start=1):
        seq = result.sequence[result.sequence.metric == metric]
        line, fill = _COLOURS.get(verdict, _GREY)
        name = text(metric, 40)
        fig.add_trace(go.Scatter(x=[*seq.n, *seq.n[::-1]], y=[*seq.ci_high, *seq.ci_low[::-1]], fill="toself",
                                 fillcolor=fill, line_width=0, name=f"{name}: sequence", hoverinfo="skip",
                                 showlegend=False), row=row, col=1)
        fig.add_trace(go.Scatter(x=seq.n, y=seq.estimate, mode="lines", line_color=line, name=f"{name}: estimate",
                                 customdata=seq[["ci_low", "ci_high"]],
                                 hovertemplate="n=%{x}<br>estimate %{y:.3g}<br>[%{customdata[0]:.3g}, "
                                               "%{customdata[1]:.3g}]<extra></extra>",
                                 showlegend=False), row=row, col=1)
        if margin > 0:
            fig.add_hrect(y0=-margin, y1=margin, fillcolor=_GREY[1], line_width=0, layer="below",
                          row=row, col=1)
        fig.add_hline(y=0, line_dash="dash", line_color=_GREY[0], row=row, col=1)
        fig.update_yaxes(title_text=f"Δ {name}", row=row, col=1)
    fig.add_vline(x=result.stopped_at, line_dash="dot", line_color="#0969da")
    return _titled(fig, result, rows, "Sequential comparison",
                   "anytime-valid confidence sequences of head − base · dashed: 0 · shaded: ±margin")


def _plot_looks(result: Any) -> go.Figure:
    """The group-sequential chart: z at each look against ±efficacy and the futility region, one panel per metric."""
    decisions = result.to_frame()
    rows = max(1, len(decisions))
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=min(0.12, 0.4 / rows),
                        subplot_titles=[f"{text(m, 40)}: {v}" for m, v in zip(decisions.metric, decisions.verdict)])
    for row, (metric, verdict) in enumerate(zip(decisions.metric, decisions.verdict), start=1):
        looks = result.looks[result.looks.metric == metric]
        line = _COLOURS.get(verdict, _GREY)[0]
        name = text(metric, 40)
        futility = looks.futility.fillna(0.0)
        fig.add_trace(go.Scatter(x=[*looks.n, *looks.n[::-1]], y=[*futility, *(-futility[::-1])], fill="toself",
                                 fillcolor=_GREY[1], line_width=0, name=f"{name}: futility", hoverinfo="skip",
                                 showlegend=False), row=row, col=1)
        for sign in (1, -1):
            fig.add_trace(go.Scatter(x=looks.n, y=sign * looks.efficacy, mode="lines", line_dash="dash",
                                     line_color=_GREY[0], name=f"{name}: {'+' if sign > 0 else '-'}efficacy",
                                     hoverinfo="skip", showlegend=False), row=row, col=1)
        fig.add_trace(go.Scatter(x=looks.n, y=looks.statistic, mode="lines+markers", line_color=line,
                                 name=f"{name}: z", customdata=looks[["look", "efficacy"]],
                                 hovertemplate="look %{customdata[0]}, n=%{x}<br>z %{y:.3g}, efficacy bound "
                                               "±%{customdata[1]:.3g}<extra></extra>",
                                 showlegend=False), row=row, col=1)
        fig.add_hline(y=0, line_dash="dot", line_color=_GREY[0], row=row, col=1)
        fig.update_yaxes(title_text=f"z {name}", row=row, col=1)
    return _titled(fig, result, rows, "Group-sequential comparison",
                   "z of head − base at each look · dashed: ±efficacy bound · shaded: futility region")


def _titled(fig: go.Figure, result: Any, rows: int, kind: str, legend: str) -> go.Figure:
    """``fig`` with the x axis named, the title (the verdict, where it stopped, the fixed-n plan) and the size."""
    fig.update_xaxes(title_text="paired cases", row=rows, col=1)
    saved = "" if result.calls_saved is None else f" · fixed-n plan {result.planned_cases} cases"
    fig.update_layout(
        title=f"{kind}: {result.verdict}, stopped at {result.stopped_at} cases{saved}<br><sup>{legend}</sup>",
        height=140 + 180 * rows, template="plotly_white", margin=dict(l=10, r=10, t=100, b=40),
    )
    return fig
