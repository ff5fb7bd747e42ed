"""Reports of a run comparison: ``console`` (rich), ``markdown`` (GitHub) and ``html`` (one self-contained file).

Each opens with the run's verdict, :func:`~cogeval.compare.result.headline`,
coloured by :data:`~cogeval.compare.result.VERDICT_TONES`, then shows both
runs, the metric table (deciding metrics first, each with its role, its
test-inversion interval and level, its verdict, ``mde`` and ``n needed``), a
note for each inconclusive metric or metric with a margin
(:func:`~cogeval.compare.result.verdict_note`), the regressed and improved
cases and the warnings. The verdict words are the comparison's own:
``better``, ``worse``, ``equivalent``, ``inconclusive`` (and ``mixed`` for a run).

Numbers are formatted here, only for presenting; case text and metric names
go through :func:`~cogeval.present.markdown.markdown_cell` (Markdown: mentions and
issue references inert too) or jinja2 autoescape (HTML), so no case can break a
table or inject HTML; in the console report through :func:`~cogeval._text.printable`
(escape sequences shown, rich markup never read), and the printed output through
:func:`~cogeval._text.without_workflow_commands`. Files are written by
:func:`~cogeval._files.write_text_atomic` (a lone surrogate as ``\\udXXX``).

>>> import os, tempfile, pandas as pd
>>> from cogeval import EvalRun, compare_runs
>>> def run(scores): return EvalRun.from_frame(pd.DataFrame({"input": list("abcdefghij"), "exact_match": scores}))
>>> comparison = compare_runs(run([0] * 10), run([1] * 10), seed=0)
>>> print("\\n".join(comparison_markdown(comparison).splitlines()[2:5]))
🟢 **head is better**: better on exact\\_match (α = 0.05, 10 matched cases)
<BLANKLINE>
Verdict: **better** · 1 metric decides, 0 inform · 10 matched cases, 0 added, 0 removed · α = 0.05
>>> folder = tempfile.mkdtemp()
>>> [os.path.relpath(p, folder) for p in report_comparison(comparison, ["markdown", "html"], f"{folder}/report.html")]
['report.md', 'report.html']
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Iterable, Sequence
from typing import Any, cast

from cogeval._check import check_choice
from cogeval._files import write_text_atomic
from cogeval._html import format_value
from cogeval._text import printable, safe_str, shorten, without_workflow_commands
from cogeval.compare.result import VERDICT_TONES, as_run_comparison, headline, interval_text, verdict_note
from cogeval.errors import InputError
from cogeval.present.markdown import markdown_cell, markdown_table
from cogeval.present.slices import SLICE_COLUMNS, slice_rows
from cogeval.present.templating import cogeval_version, render_template

KINDS = {"console": None, "markdown": ".md", "html": ".html"}
_MARKDOWN_CHANGES = 10
_HTML_CHANGES = 50
_CONSOLE_CHANGES = 5
_HEADLINE_LIMIT = 2000


def report_comparison(comparison: Any, kind: str | Sequence[str] = "console", path: Any = "eval-comparison") -> list[str]:
    """Print or write the reports of ``kind`` (``console``, ``markdown``, ``html`` or a list of them).

    ``console`` prints to stdout; ``markdown`` writes ``<path>.md`` and ``html``
    writes ``<path>.html`` with the forest plot of :func:`~cogeval.present.plots.plot_comparison`
    drawn offline (plotly.js inlined once; see :func:`forest_plot_html`). A
    trailing ``.md``/``.html`` on ``path`` is dropped first; folders are created;
    writes are atomic. Returns the paths written.
    """
    comparison = _run_comparison(comparison)
    kinds = list(kind) if isinstance(kind, Iterable) and not isinstance(kind, str) else [kind]
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
            _print_comparison(comparison)
        else:
            if k == "markdown":
                text = comparison_markdown(comparison)
            else:
                text = comparison_html(comparison, figure_html=forest_plot_html(comparison))
            suffix = cast(str, KINDS[k])  # every kind but "console" (handled above) has a file suffix
            written.append(str(write_text_atomic(pathlib.Path(stem + suffix), text)))
    return written


def _run_comparison(comparison: Any) -> Any:
    """The :class:`~cogeval.RunComparison` to report: an ``EvalComparison`` result holds it as ``.comparison``;
    anything else raises :class:`~cogeval.errors.InputError` naming ``comparison``."""
    return as_run_comparison("comparison", comparison)


# --- formatting, shared by the three reports -------------------------------------------------


def _format_number(value: Any) -> str:
    """4 significant digits, NaN and None as ``–``."""
    return format_value(_float(value))


def _format_signed(value: Any) -> str:
    """Like :func:`_format_number` with an explicit ``+`` on positive values."""
    text = _format_number(value)
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


@dataclasses.dataclass(frozen=True)
class _Changes:
    metric: str
    direction: str  # "regressed" | "improved"
    rows: list[dict[str, str]]
    total: int


def _run_label(info: Any) -> str:
    return str(info.name or info.run_id or "unnamed run")


_TONE_MARKS = {"good": "🟢", "bad": "🔴", "neutral": "⚪"}
"""How Markdown, which has no colour, shows a verdict's tone (see ``VERDICT_TONES``)."""


def _headline(comparison: Any) -> tuple[str, str, str]:
    """(lead, rest, tone) of :func:`headline`: ``lead`` is the verdict before the first ``": "``, never a metric name."""
    lead, colon, rest = headline(comparison).partition(": ")
    return lead, colon + rest, VERDICT_TONES.get(comparison.verdict, "neutral")


def _ordered(comparison: Any) -> list[Any]:
    """The compared metrics, deciding ones first (each group in the comparison's order)."""
    return sorted(comparison.metrics.values(), key=lambda m: m.role != "decides")


def _roles(comparison: Any) -> str:
    """``3 metrics decide, 1 informs``."""
    deciding = sum(m.role == "decides" for m in comparison.metrics.values())
    informing = len(comparison.metrics) - deciding
    return (f"{deciding} {'metric decides' if deciding == 1 else 'metrics decide'}, "
            f"{informing} {'informs' if informing == 1 else 'inform'}")


def _metric_rows(comparison: Any) -> list[dict[str, Any]]:
    """One row of formatted cells per metric (deciding first) over :data:`_METRIC_COLUMNS`, plus its ``tone``."""
    return [
        {
            "metric": f"{m.metric} {'↑' if m.higher_is_better else '↓'}", "role": str(m.role),
            "base": _format_number(m.base), "head": _format_number(m.head), "n": str(m.n),
            "difference": _format_signed(m.difference), "interval": interval_text(m),
            "effect size": _format_signed(m.effect_size), "test": str(m.test),
            "p": format_p(m.p_value), "adjusted p": format_p(m.adjusted_p_value), "verdict": str(m.verdict),
            "mde": _format_number(m.mde), "n needed": "–" if m.n_needed is None else str(m.n_needed),
            "tone": VERDICT_TONES.get(m.verdict, "neutral"),
        }
        for m in _ordered(comparison)
    ]


def _notes(comparison: Any) -> list[tuple[str, str]]:
    """(metric, :func:`verdict_note`) for each metric whose verdict is inconclusive or that has a margin."""
    return [(str(m.metric), verdict_note(m)) for m in _ordered(comparison) if m.verdict == "inconclusive" or m.margin]


_METRIC_COLUMNS = ["metric", "role", "base", "head", "n", "difference", "interval", "effect size",
                  "test", "p", "adjusted p", "verdict", "mde", "n needed"]
_CHANGE_COLUMNS = ["case", "input", "base → head", "delta"]


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
                 "base → head": f"{_format_number(r.base)} → {_format_number(r.head)}", "delta": _format_signed(r.delta),
                 "trace": _sides(r, "trace_id"), "prompt": _sides(r, "prompt_version")}
                for r in part.head(limit).itertuples(index=False)
            ]
            groups.append(_Changes(str(metric), direction, rows, len(part)))
    return groups


def _sides(row: Any, field: str) -> str:
    """``base → head`` of the changes' ``base_<field>`` / ``head_<field>`` (one value when equal); "" when neither run has it."""
    base, head = ("" if v is None or v != v else safe_str(v) for v in
                  (getattr(row, f"base_{field}", None), getattr(row, f"head_{field}", None)))
    return base if base == head else f"{base or '–'} → {head or '–'}"


# --- Markdown -----------------------------------------------------------------------------


def comparison_markdown(comparison: Any) -> str:
    """The GitHub-flavoured Markdown report, e.g. for a pull-request comment.

    At most 10 cases per metric and direction are listed; every cell goes
    through :func:`markdown_cell`, so case text cannot break a table or inject HTML.
    """
    c = _run_comparison(comparison)
    lead, rest, tone = _headline(c)
    sides = [
        {"": side, "run": _run_label(info), "run_id": info.run_id or "–", "started_at": info.started_at or "–"}
        for side, info in (("base", c.base), ("head", c.head))
    ]
    lines = [
        f"### cogeval comparison: {markdown_cell(_run_label(c.head))} vs {markdown_cell(_run_label(c.base))}",
        "",
        f"{_TONE_MARKS[tone]} **{markdown_cell(lead)}**{markdown_cell(rest, limit=_HEADLINE_LIMIT)}",
        "",
        f"Verdict: **{markdown_cell(c.verdict)}** · {_roles(c)} · {c.matched} matched cases, {c.n_added} added, "
        f"{c.n_removed} removed · α = {c.alpha:g}",
        "",
        markdown_table(sides, ["", "run", "run_id", "started_at"]),
        "",
    ]
    if c.metrics:
        rows = [{**r, "verdict": f"{_TONE_MARKS[r['tone']]} {r['verdict']}"} for r in _metric_rows(c)]
        lines += [markdown_table(rows, _METRIC_COLUMNS), ""]
    notes = _notes(c)
    if notes:
        lines += [f"- **{markdown_cell(metric)}** — {markdown_cell(note, limit=_HEADLINE_LIMIT)}"
                  for metric, note in notes] + [""]
    if c.slices is not None:
        rows = [{**r, "verdict": f"{_TONE_MARKS[r['tone']]} {r['verdict']}"} for r in slice_rows(c)]
        lines += [f"#### Slices by {markdown_cell(c.by)} (Holm over slices × metrics)", "",
                  markdown_table(rows, SLICE_COLUMNS), ""]
    if c.warnings:
        lines += ["> [!WARNING]"] + [f"> - {markdown_cell(w, limit=500)}" for w in c.warnings] + [""]
    groups = _changes(c, _MARKDOWN_CHANGES)
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
            lines += [f"**{markdown_cell(g.metric)}** — {g.total} {direction}", "", markdown_table(g.rows, _CHANGE_COLUMNS), ""]
            if g.total > len(g.rows):
                lines += [f"… and {g.total - len(g.rows)} more {direction} cases", ""]
        if direction == "improved":
            lines += ["</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- HTML ---------------------------------------------------------------------------------


def comparison_html(comparison: Any, *, figure_html: str | None = None) -> str:
    """The HTML report: one self-contained page (inline CSS, light and dark, no script, no URL).

    Every value is escaped by jinja2 autoescape. ``figure_html`` is a *trusted*
    HTML fragment (the forest plot) placed after the metric table; ``None`` adds nothing.
    """
    c = _run_comparison(comparison)
    lead, rest, tone = _headline(c)
    changes = _changes(c, _HTML_CHANGES)
    return render_template(
        "comparison.html.j2",
        title=f"cogeval comparison: {_run_label(c.head)} vs {_run_label(c.base)}",
        lead=lead, rest=rest, tone=tone, verdict=c.verdict, roles=_roles(c),
        alpha=f"{c.alpha:g}", matched=c.matched, added=c.n_added, removed=c.n_removed,
        sides=[("base", c.base), ("head", c.head)],
        columns=_METRIC_COLUMNS, notes=_notes(c), changes=changes,
        trace_columns=[k for k in ("trace", "prompt") if any(row[k] for g in changes for row in g.rows)],
        metrics=[{**r, "interval": r["interval"].replace(", ", ",\u00a0")} for r in _metric_rows(c)],  # wraps before "at"
        change_columns=_CHANGE_COLUMNS, warnings=[str(w) for w in c.warnings],
        by=c.by, slices=slice_rows(c), slice_columns=SLICE_COLUMNS,
        figure=figure_html or None, version=cogeval_version(),
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


_CONSOLE_TONES = {"good": "green", "bad": "red", "neutral": None}
"""The rich colour of each tone of ``VERDICT_TONES`` in the console report."""


def _print_comparison(comparison: Any) -> None:
    """Print the console report to stdout with rich (plain text when stdout is not a terminal)."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=200)
    with console.capture() as capture:
        _draw_comparison(console, _run_comparison(comparison))
    console.file.write(without_workflow_commands(capture.get()))
    console.file.flush()


def _draw_comparison(console: Any, c: Any) -> None:
    """Draw the console report on ``console``; every text from the run as plain :func:`printable` text."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    def text(value: Any, style: str = "") -> Any:
        return Text(printable(safe_str(value)), style=style)

    lead, rest, tone = _headline(c)
    console.print(Text.assemble(text(lead, f"bold {_CONSOLE_TONES[tone] or ''}".strip()), text(rest)))
    for side, info in (("base", c.base), ("head", c.head)):
        console.print(text(f"{side}: {_run_label(info)} · {info.run_id or '–'} · started {info.started_at or '–'}"))
    console.print(Text.assemble("verdict: ", text(c.verdict, _CONSOLE_TONES[tone] or ""),
                                f" · {_roles(c)} · {c.matched} matched, {c.n_added} added, {c.n_removed} removed · α = {c.alpha:g}"))
    if c.metrics:
        table = Table(box=box.SIMPLE_HEAD)
        for column in _METRIC_COLUMNS:
            table.add_column(column, no_wrap=True, justify="left" if column in ("metric", "role", "verdict") else "right")
        for row in _metric_rows(c):
            table.add_row(*(text(row[k]) for k in _METRIC_COLUMNS), style=_CONSOLE_TONES[row["tone"]])
        console.print(table)
    for metric, note in _notes(c):
        console.print(text(f"{metric} — {note}"))
    for g in _changes(c, _CONSOLE_CHANGES):
        table = Table(box=box.SIMPLE_HEAD, title=text(f"{g.metric}: {g.total} {g.direction}"), title_justify="left")
        for column in _CHANGE_COLUMNS:
            table.add_column(column, no_wrap=column != "input", justify="left" if column in ("case", "input") else "right")
        for row in g.rows:
            table.add_row(*(text(row[k]) for k in _CHANGE_COLUMNS))
        console.print(table)
        if g.total > len(g.rows):
            console.print(text(f"… and {g.total - len(g.rows)} more {g.direction} cases"))
    for warning in c.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), text(warning)))
