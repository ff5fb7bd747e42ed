"""Slices in the reports and the forest plot: each slice × metric of ``compare_runs(..., by=...)`` shown.

The HTML and Markdown reports get a table, one row per slice × metric; the forest plot gets, under each
metric, one point per slice with its interval (a slice too small to test: its difference, no bar).
Colours and words are the metrics' own: the verdict, against the metric's direction.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from cogeval import _numbers as numbers
from cogeval._text import escaped_line, printable
from cogeval.compare.result import VERDICT_TONES
from cogeval.present.comparison_rows import format_signed

SLICE_COLUMNS = ["slice", "metric", "n", "base", "head", "difference", "interval", "p", "adjusted p", "verdict", "note"]
"""The reports' slices table; ``note`` says why a slice's test says little (the slices table's ``note``)."""


def slice_columns(comparison: Any) -> list[str]:
    """:data:`SLICE_COLUMNS`; clustered (``cluster=``), ``clusters`` after ``n``: the clusters each slice was tested on."""
    if comparison.cluster is None:
        return list(SLICE_COLUMNS)
    return [*SLICE_COLUMNS[:3], "clusters", *SLICE_COLUMNS[3:]]


def slice_rows(comparison: Any) -> list[dict[str, Any]]:
    """One row of formatted cells per slice × metric over :data:`SLICE_COLUMNS`, plus its ``tone``; none unsliced."""
    if comparison.slices is None:
        return []
    rows = []
    for r in comparison.slices.to_dict("records"):
        bounded = not math.isnan(r["ci_low"])
        up = comparison.metrics[r["metric"]].higher_is_better
        note = r.get("note")
        rows.append({
            "slice": str(r["slice"]), "metric": f"{r['metric']} {'↑' if up else '↓'}", "n": numbers.count(r["n"]),
            "base": numbers.number(r["base"]), "head": numbers.number(r["head"]),
            "difference": format_signed(r["difference"]),
            "interval": f"[{format_signed(r['ci_low'])}, {format_signed(r['ci_high'])}]" if bounded else "–",
            "p": numbers.p_value(r["p_value"]), "adjusted p": numbers.p_value(r["adjusted_p_value"]),
            "verdict": str(r["verdict"]), "tone": VERDICT_TONES.get(r["verdict"], "neutral"),
            "note": "" if note is None or note != note else str(note), "clusters": numbers.count(r.get("clusters")),
        })
    return rows


def worse_slices(comparison: Any) -> list[str]:
    """One line per slice where a deciding metric got worse, e.g. ``worse in conversion (60 cases): …``.

    A drop hidden inside a run that is better overall is what slicing is for, so the
    console says it even when it shows nothing else of the slices.
    """
    if comparison.slices is None:
        return []
    worse = comparison.slices[(comparison.slices["verdict"] == "worse") & (comparison.slices["role"] == "decides")]
    return [f"worse in {printable(str(name))} ({_slice_size(comparison, rows)}): "
            + ", ".join(f"{m} {format_signed(d)}" for m, d in zip(rows["metric"], rows["difference"], strict=True))
            for name, rows in worse.groupby("slice", sort=False)]


def _slice_size(comparison: Any, rows: Any) -> str:
    """``60 cases``; clustered, ``60 cases in 12 clusters``."""
    cases = f"{numbers.count(rows['n'].max())} cases"
    clusters = pd.to_numeric(rows["clusters"], errors="coerce").max() if "clusters" in rows else math.nan
    if comparison.cluster is None or math.isnan(clusters):
        return cases
    return f"{cases} in {numbers.count(clusters)} clusters"


def slice_points(comparison: Any, metric: str, colours: dict[str, str], neutral: str) -> list[Any]:
    """The forest plot's points of ``metric``'s slices (plotly scatters), labelled ``metric · slice``."""
    import plotly.graph_objects as go

    if comparison.slices is None:
        return []
    points = []
    for r in comparison.slices[comparison.slices["metric"] == metric].to_dict("records"):
        colour = colours.get(r["verdict"], neutral)
        low, high, x = r["ci_low"], r["ci_high"], r["difference"]
        bar = math.isfinite(low) and math.isfinite(high) and math.isfinite(x)
        points.append(go.Scatter(
            x=[x], y=[f"{escaped_line(metric, 30)} · {escaped_line(r['slice'], 30)}"], mode="markers",
            name=r["verdict"], legendgroup=r["verdict"], showlegend=False,
            marker=dict(color=colour, size=9, symbol="square" + ("" if r["significant"] else "-open"),
                        line=dict(width=1.5, color=colour)),
            error_x=dict(type="data", symmetric=False, array=[high - x if bar else 0.0],
                         arrayminus=[x - low if bar else 0.0], color=colour, thickness=1.5, width=4),
            customdata=[[escaped_line(r["slice"], 60), numbers.count(r["n"]), r["verdict"], numbers.p_value(r["adjusted_p_value"]),
                         escaped_line(r["note"] or "", 80)]],
            hovertemplate=("<b>slice %{customdata[0]}</b> · %{customdata[2]}<br>difference %{x:+.4g}, n = "
                           "%{customdata[1]}, adjusted p %{customdata[3]}<br>%{customdata[4]}<extra></extra>"),
        ))
    return points


def slice_span(comparison: Any, metric: str) -> list[float]:
    """The values the x range of ``metric``'s row must hold for its slices: differences and interval ends."""
    if comparison.slices is None:
        return []
    rows = comparison.slices[comparison.slices["metric"] == metric]
    return [*rows["difference"], *rows["ci_low"], *rows["ci_high"]]
