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
from cogeval.compare.directions import arrow
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
        m = comparison.metrics[r["metric"]]
        note = _reported_note(r)
        rows.append({
            "slice": str(r["slice"]), "metric": f"{r['metric']} {arrow(m.higher_is_better, m.direction_assumed)}", "n": numbers.count(r["n"]),
            "base": numbers.number(r["base"]), "head": numbers.number(r["head"]),
            "difference": format_signed(r["difference"]),
            "interval": f"[{format_signed(r['ci_low'])}, {format_signed(r['ci_high'])}]" if bounded else "–",
            "p": numbers.p_value(r["p_value"]), "adjusted p": numbers.p_value(r["adjusted_p_value"]),
            "verdict": str(r["verdict"]), "tone": VERDICT_TONES.get(r["verdict"], "neutral"),
            "note": note, "clusters": numbers.count(r.get("clusters")),
        })
    return rows


def _reported_note(row: dict[str, Any]) -> str:
    """A slice's note in the reports: the slices table's ``note`` (why its test says little), then, when its
    difference sits at an end of its interval, :func:`_end_note`; ``""`` when there is neither."""
    note = row.get("note")
    notes = [] if note is None or note != note or note == "" else [str(note)]
    end = _end_note(row)
    return "; ".join(notes + ([end] if end else []))


def _end_note(row: dict[str, Any]) -> str | None:
    """Why a slice's interval ends at its difference (a puzzling number: an interval is mostly read as around its
    estimate); None when it does not: no interval, a point (the sign test's, said by its note) or a zero difference.

    McNemar's interval rests on the cases that changed (the discordant pairs): when they all moved one way, the
    difference they make is as far as it reaches, often because every case of one run scored the same (1 or 0)::

        >>> _end_note({"n": 60, "base": 1.0, "head": 0.4, "difference": -0.6, "ci_low": -0.6, "ci_high": -0.37,
        ...            "test": "mcnemar"})
        "the interval ends at the estimate: every base case scored 1, so all 36 cases that changed went 1 → 0, and McNemar's interval, built on the cases that changed, reaches no further"
    """
    low, high, d = (float(row[k]) for k in ("ci_low", "ci_high", "difference"))
    if not all(map(math.isfinite, (low, high, d))) or low >= high or d == 0:
        return None
    at = [end for end in (low, high) if math.isclose(d, end, rel_tol=1e-9, abs_tol=1e-12)]
    if not at:
        return None
    lead = "the interval ends at the estimate"
    if not str(row.get("test", "")).startswith("mcnemar"):
        return f"{lead}: its {row.get('test')} interval reaches no further on this slice's cases"
    up = d > 0
    constants = (("head", 1), ("base", 0)) if up else (("base", 1), ("head", 0))  # a run whose cases all scored so
    constant = next((f"every {name} case scored {value}, so " for name, value in constants
                     if math.isclose(float(row[name]), value, abs_tol=1e-12)), "")
    moved = round(abs(d) * float(row["n"]))
    return (f"{lead}: {constant}{'the one case' if moved == 1 else f'all {moved} cases'} that changed went "
            f"{'0 → 1' if up else '1 → 0'}, and McNemar's interval, built on the cases that changed, reaches no further")


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
                         escaped_line(_reported_note(r), 80)]],
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
