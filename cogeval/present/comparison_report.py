"""Reports of a run comparison: ``console`` (rich), ``markdown`` (GitHub) and ``html`` (one self-contained file).

Each shows the verdict, both runs, the metric table, the regressed and improved
cases and the warnings. Numbers are formatted here, only for presenting; case
text goes through :func:`~cogeval.present.markdown.markdown_cell` (Markdown) or
jinja2 autoescape (HTML), so no case can break a table or inject HTML.

>>> import os, tempfile, pandas as pd
>>> from cogeval import EvalRun, compare_runs
>>> def run(scores): return EvalRun.from_frame(pd.DataFrame({"input": list("abcdefghij"), "exact_match": scores}))
>>> comparison = compare_runs(run([0] * 10), run([1] * 10), seed=0)
>>> print(comparison_markdown(comparison).splitlines()[2])
**head wins** on 1 of 1 metric (significant at α = 0.05)
>>> folder = tempfile.mkdtemp()
>>> [os.path.relpath(p, folder) for p in report_comparison(comparison, ["markdown", "html"], f"{folder}/report.html")]
['report.md', 'report.html']
"""

from __future__ import annotations

import dataclasses
import functools
import math
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

from cogeval._check import check_choice
from cogeval._files import write_text_atomic
from cogeval._html import format_value
from cogeval.compare.engine import short_input
from cogeval.errors import InputError
from cogeval.present.markdown import markdown_cell, markdown_table

__all__ = ["comparison_html", "comparison_markdown", "forest_plot_html", "report_comparison"]

KINDS = {"console": None, "markdown": ".md", "html": ".html"}
MARKDOWN_CHANGES = 10
HTML_CHANGES = 50
CONSOLE_CHANGES = 5


def report_comparison(comparison: Any, kind: str | Sequence[str] = "console", path: Any = "eval-comparison") -> list[str]:
    """Print or write the reports of ``kind`` (``console``, ``markdown``, ``html`` or a list of them).

    ``console`` prints to stdout; ``markdown`` writes ``<path>.md`` and ``html``
    writes ``<path>.html`` with the forest plot of :func:`~cogeval.present.plots.plot_comparison`
    drawn offline (plotly.js inlined once; see :func:`forest_plot_html`). A
    trailing ``.md``/``.html`` on ``path`` is dropped first; folders are created;
    writes are atomic. Returns the paths written.
    """
    comparison = _run_comparison(comparison)
    kinds = [kind] if isinstance(kind, str) else list(kind)
    if not kinds:
        raise InputError(f"kind must name at least one report of {', '.join(map(repr, KINDS))}; got an empty list")
    kinds = list(dict.fromkeys(check_choice("kind", k, KINDS) for k in kinds))
    stem = str(path)
    for suffix in (".md", ".html"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    written = []
    for k in kinds:
        if k == "console":
            print_comparison(comparison)
        else:
            if k == "markdown":
                text = comparison_markdown(comparison)
            else:
                text = comparison_html(comparison, figure_html=forest_plot_html(comparison))
            written.append(str(write_text_atomic(pathlib.Path(stem + KINDS[k]), text)))
    return written


def _run_comparison(comparison: Any) -> Any:
    """The :class:`~cogeval.RunComparison` to report: an ``EvalComparison`` result holds it as ``.comparison``."""
    from cogeval.compare.result import RunComparison

    inner = getattr(comparison, "comparison", None)
    return inner if isinstance(inner, RunComparison) else comparison


# --- formatting, shared by the three reports -------------------------------------------------


def format_number(value: Any) -> str:
    """4 significant digits, NaN and None as ``–``."""
    return format_value(_float(value))


def format_signed(value: Any) -> str:
    """Like :func:`format_number` with an explicit ``+`` on positive values."""
    text = format_number(value)
    return "+" + text if _float(value) > 0 else text


def format_p(value: Any) -> str:
    """A p-value to 2 significant digits, NaN as ``–``.

    >>> format_p(0.001234), format_p(3.2e-06), format_p(float("nan"))
    ('0.0012', '3.2e-06', '–')
    """
    number = _float(value)
    return "–" if math.isnan(number) else f"{number:.2g}"


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def shorten(value: Any, limit: int = 80) -> str:
    """One line of at most ``limit`` characters (see :func:`short_input`); missing as ``–``.

    >>> shorten("What  is\\n 2+2?"), shorten(float("nan"))
    ('What is 2+2?', '–')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return short_input(value, limit)


@dataclasses.dataclass(frozen=True)
class _Changes:
    metric: str
    direction: str  # "regressed" | "improved"
    rows: list[dict[str, str]]
    total: int


def _run_label(info: Any) -> str:
    return str(info.name or info.run_id or "unnamed run")


def _verdict(comparison: Any, name: Callable[[str], str] = str) -> tuple[str, str]:
    """(bold lead, rest) of the heading line; ``name`` escapes metric names for the target format."""
    metrics = list(comparison.metrics.values())
    wins = [name(m.metric) for m in metrics if m.winner == "head"]
    losses = [name(m.metric) for m in metrics if m.winner == "base"]
    correction = " after Holm correction" if len(metrics) > 1 else ""
    where = f" (significant at α = {comparison.alpha:g}{correction})"
    if not metrics:
        return "nothing to compare", ": no metric was scored on both runs"
    if wins and losses:
        return "mixed result", f": head better on {', '.join(wins)}, worse on {', '.join(losses)}{where}"
    if wins:
        return "head wins", f" on {len(wins)} of {len(metrics)} metric{'s' if len(metrics) > 1 else ''}{where}"
    if losses:
        return "head regressed", f" on {', '.join(losses)}{where}"
    return "no significant difference", f" on {len(metrics)} metric{'s' if len(metrics) > 1 else ''} (α = {comparison.alpha:g}{correction})"


def _metric_rows(comparison: Any) -> list[dict[str, Any]]:
    rows = []
    for m in comparison.metrics.values():
        low, high = m.ci
        rows.append({
            "metric": m.metric, "better": "↑" if m.higher_is_better else "↓",
            "base": format_number(m.base), "head": format_number(m.head), "n": str(m.n),
            "difference": format_signed(m.difference), "CI": f"[{format_number(low)}, {format_number(high)}]",
            "effect size": format_signed(m.effect_size), "test": str(m.test),
            "p": format_p(m.p_value), "adjusted p": format_p(m.adjusted_p_value),
            "significant": "yes" if m.significant else "no", "winner": str(m.winner),
        })
    return rows


METRIC_COLUMNS = ["metric", "better", "base", "head", "n", "difference", "CI", "effect size",
                  "test", "p", "adjusted p", "significant", "winner"]
CHANGE_COLUMNS = ["case", "input", "base → head", "delta"]


def _changes(comparison: Any, limit: int) -> list[_Changes]:
    """Regressed then improved cases per metric, at most ``limit`` rows each (largest |delta| first)."""
    frame = comparison.changes
    if frame is None or len(frame) == 0:
        return []
    order = list(comparison.metrics) + [m for m in dict.fromkeys(frame["metric"]) if m not in comparison.metrics]
    groups = []
    for direction in ("regressed", "improved"):
        for metric in order:
            part = frame[(frame["metric"] == metric) & (frame["direction"] == direction)]
            if len(part) == 0:
                continue
            rows = [
                {"case": str(r.case_key)[:8], "input": shorten(r.input), "key": str(r.case_key),
                 "base → head": f"{format_number(r.base)} → {format_number(r.head)}", "delta": format_signed(r.delta)}
                for r in part.head(limit).itertuples(index=False)
            ]
            groups.append(_Changes(str(metric), direction, rows, len(part)))
    return groups


# --- Markdown -----------------------------------------------------------------------------


def comparison_markdown(comparison: Any) -> str:
    """The GitHub-flavoured Markdown report, e.g. for a pull-request comment.

    At most 10 cases per metric and direction are listed; every cell goes
    through :func:`markdown_cell`, so case text cannot break a table or inject HTML.
    """
    c = _run_comparison(comparison)
    lead, rest = _verdict(c, markdown_cell)
    sides = [
        {"": side, "run": _run_label(info), "run_id": info.run_id or "–", "started_at": info.started_at or "–"}
        for side, info in (("base", c.base), ("head", c.head))
    ]
    lines = [
        f"### cogeval comparison: {markdown_cell(_run_label(c.head))} vs {markdown_cell(_run_label(c.base))}",
        "",
        f"**{lead}**{rest}",
        "",
        f"Overall winner: **{markdown_cell(c.winner)}** · {c.matched} matched cases, {c.added} added, "
        f"{c.removed} removed · α = {c.alpha:g}",
        "",
        markdown_table(sides, ["", "run", "run_id", "started_at"]),
        "",
    ]
    if c.metrics:
        rows = [{**r, "winner": {"head": "✅ head", "base": "❌ base"}.get(r["winner"], r["winner"])} for r in _metric_rows(c)]
        lines += [markdown_table(rows, METRIC_COLUMNS), ""]
    if c.warnings:
        lines += ["> [!WARNING]"] + [f"> - {markdown_cell(w, limit=500)}" for w in c.warnings] + [""]
    groups = _changes(c, MARKDOWN_CHANGES)
    for direction, title in (("regressed", "Regressed cases"), ("improved", "Improved cases")):
        chosen = [g for g in groups if g.direction == direction]
        if not chosen:
            continue
        total = sum(g.total for g in chosen)
        if direction == "improved":
            lines += ["<details>", f"<summary>{title} ({total})</summary>", ""]
        else:
            lines += [f"#### {title} ({total})", ""]
        for g in chosen:
            lines += [f"**{markdown_cell(g.metric)}** — {g.total} {direction}", "", markdown_table(g.rows, CHANGE_COLUMNS), ""]
            if g.total > len(g.rows):
                lines += [f"… and {g.total - len(g.rows)} more {direction} cases", ""]
        if direction == "improved":
            lines += ["</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- HTML ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    import importlib.resources

    import jinja2

    source = importlib.resources.files("cogeval.present").joinpath("templates/comparison.html.j2").read_text("utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(source)


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("cogeval")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


def comparison_html(comparison: Any, *, figure_html: str | None = None) -> str:
    """The HTML report: one self-contained page (inline CSS, light and dark, no script, no URL).

    Every value is escaped by jinja2 autoescape. ``figure_html`` is a *trusted*
    HTML fragment (the forest plot) placed after the metric table; ``None`` adds nothing.
    """
    c = _run_comparison(comparison)
    lead, rest = _verdict(c)
    wins = sum(m.winner == "head" for m in c.metrics.values())
    losses = sum(m.winner == "base" for m in c.metrics.values())
    return _template().render(
        title=f"cogeval comparison: {_run_label(c.head)} vs {_run_label(c.base)}",
        lead=lead, rest=rest, tone="bad" if losses else "good" if wins else "neutral",
        winner=c.winner, alpha=f"{c.alpha:g}", matched=c.matched, added=c.added, removed=c.removed,
        sides=[("base", c.base), ("head", c.head)],
        columns=METRIC_COLUMNS, metrics=_metric_rows(c), changes=_changes(c, HTML_CHANGES),
        change_columns=CHANGE_COLUMNS, warnings=[str(w) for w in c.warnings],
        figure=figure_html or None, version=_version(),
    )


def forest_plot_html(comparison: Any) -> str | None:
    """The forest plot of ``comparison`` as a trusted HTML fragment for :func:`comparison_html`.

    It carries the installed plotly's ``plotly.min.js`` inline (no URL, no
    MathJax), so the page draws the chart offline; ``None`` when no metric was compared.
    """
    comparison = _run_comparison(comparison)
    if not comparison.metrics:
        return None
    from cogeval.present.notebook import figure_html
    from cogeval.present.plots import plot_comparison

    return figure_html(plot_comparison(comparison), include_plotlyjs=True)


# --- console ------------------------------------------------------------------------------


def print_comparison(comparison: Any) -> None:
    """Print the console report to stdout with rich (plain text when stdout is not a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160)
    c = _run_comparison(comparison)
    lead, rest = _verdict(c)
    style = {"head regressed": "bold red", "mixed result": "bold yellow", "head wins": "bold green"}.get(lead, "bold")
    console.print(Text.assemble((lead, style), rest))
    for side, info in (("base", c.base), ("head", c.head)):
        console.print(Text(f"{side}: {_run_label(info)} · {info.run_id or '–'} · started {info.started_at or '–'}"))
    console.print(Text(f"overall winner: {c.winner} · {c.matched} matched, {c.added} added, {c.removed} removed · α = {c.alpha:g}"))
    if c.metrics:
        table = Table(box=box.SIMPLE_HEAD)
        for column in METRIC_COLUMNS:
            table.add_column(column, no_wrap=True, justify="left" if column == "metric" else "right")
        colour = {"head": "green", "base": "red"}
        for row in _metric_rows(c):
            table.add_row(*(Text(row[k]) for k in METRIC_COLUMNS), style=colour.get(row["winner"]))
        console.print(table)
    for g in _changes(c, CONSOLE_CHANGES):
        table = Table(box=box.SIMPLE_HEAD, title=Text(f"{g.metric}: {g.total} {g.direction}"), title_justify="left")
        for column in CHANGE_COLUMNS:
            table.add_column(column, no_wrap=column != "input", justify="left" if column in ("case", "input") else "right")
        for row in g.rows:
            table.add_row(*(Text(row[k]) for k in CHANGE_COLUMNS))
        console.print(table)
        if g.total > len(g.rows):
            console.print(Text(f"… and {g.total - len(g.rows)} more {g.direction} cases"))
    for warning in c.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), str(warning)))
