"""The console comparison report: rich, fitted to the terminal, the verdict first and last."""

from __future__ import annotations

from typing import Any

from cogeval._text import printable, safe_str, terminal_width, without_workflow_commands
from cogeval.compare.result import changed_text, errored_text
from cogeval.present.comparison_rows import (
    CHANGE_COLUMNS,
    ERRORED_COLUMNS,
    METRIC_COLUMNS,
    change_groups,
    counted,
    errored_rows,
    headline_parts,
    informing_summary,
    metric_rows,
    note_rows,
    roles,
    run_comparison,
    run_label,
)
from cogeval.present.slices import worse_slices

# --- console ------------------------------------------------------------------------------


_CONSOLE_CHANGES = 5
"""Changed cases shown per metric and direction."""
_CONSOLE_TONES = {"good": "green", "bad": "red", "neutral": None}
"""The rich colour of each tone of ``VERDICT_TONES`` in the console report."""
_COMPACT_COLUMNS = [["metric", "role", "base", "head", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "base", "head", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "difference [CI]", "p", "verdict"]]
"""The console metric table's columns when the full table is wider than the terminal, widest first."""
_LEFT, _UNLIMITED = ("metric", "role", "verdict", "test"), 1000


def print_console(comparison: Any, *, wide: bool = False, brief: bool = False) -> None:
    """Print the console report to stdout with rich (plain text when stdout is not a terminal), fitted to
    :func:`~cogeval._text.terminal_width` (:data:`_COMPACT_COLUMNS`); ``wide=True`` prints every column, lines
    unwrapped; ``brief=True`` only the verdict and the metric table (``cogeval demo``)."""
    from rich.console import Console

    width = _UNLIMITED if wide else terminal_width()  # wide: nothing cut, the terminal wraps long lines
    console = Console(highlight=False, width=width)
    if not console.is_terminal:
        console = Console(highlight=False, width=width, color_system=None)
    with console.capture() as capture:
        _draw_comparison(console, run_comparison(comparison), wide=wide, brief=brief)
    console.file.write(without_workflow_commands(capture.get()))
    console.file.flush()


def _metric_table(console: Any, c: Any, wide: bool) -> Any:
    """The metric table: every column when ``wide``, else the widest :data:`_COMPACT_COLUMNS` that fits ``console``."""
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    rows = [{**r, "difference [CI]": f"{r['difference']} {r['interval']}".replace(" at ", " @")}
            for r in metric_rows(c)]
    table = None
    for columns in [METRIC_COLUMNS] + ([] if wide else _COMPACT_COLUMNS):
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for column in columns:
            header = "adj. p" if column == "adjusted p" and columns is not METRIC_COLUMNS else column
            table.add_column(header, no_wrap=True, justify="left" if column in _LEFT else "right")
        for row in rows:
            table.add_row(*(Text(printable(safe_str(row[k]))) for k in columns), style=_CONSOLE_TONES[row["tone"]])
        if wide or Measurement.get(console, console.options.update_width(_UNLIMITED), table).maximum <= console.width:
            break
    return table


def _print_group(console: Any, g: Any, text: Any) -> None:
    """One metric's moved cases in one direction: a table of at most :data:`_CONSOLE_CHANGES` rows, then the count
    of the rest."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, title=text(f"{g.metric}: {g.total} {g.direction}"), title_justify="left")
    for column in CHANGE_COLUMNS:
        table.add_column(column, no_wrap=column != "input", justify="left" if column in ("case", "input") else "right")
    for row in g.rows:
        table.add_row(*(text(row[k]) for k in CHANGE_COLUMNS))
    console.print(table)
    if g.total > len(g.rows):
        console.print(text(f"… and {g.total - len(g.rows)} more {g.direction} cases"))


def _draw_comparison(console: Any, c: Any, *, wide: bool = False, brief: bool = False) -> None:
    """Draw the console report on ``console``; every text from the run as plain :func:`printable` text.

    The verdict line (:func:`headline`) comes first and last.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    def text(value: Any, style: str = "") -> Any:
        return Text(printable(safe_str(value)), style=style)

    lead, rest, tone = headline_parts(c)
    verdict_line = Text.assemble(text(lead, f"bold {_CONSOLE_TONES[tone] or ''}".strip()), text(rest))
    console.print(verdict_line)
    changed_line = text(f"changed: {changed_text(c)}")
    if brief:
        console.print(changed_line)
        if c.metrics:
            console.print(_metric_table(console, c, wide))
        for line in worse_slices(c):
            console.print(text(line, _CONSOLE_TONES["bad"] or ""))
        return
    for side, info in (("base", c.base), ("head", c.head)):
        console.print(text(f"{side}: {run_label(info)} · {info.run_id or '–'} · started {info.started_at or '–'}"))
    errored = f", {errored_text(c)}" if errored_text(c) else ""
    console.print(Text.assemble("verdict: ", text(c.verdict, _CONSOLE_TONES[tone] or ""),
                                f" · {roles(c)} · {c.matched} matched, {c.n_added} added, {c.n_removed} removed"
                                f"{errored} · α = {c.alpha:g}"))
    console.print(changed_line)
    if c.metrics:
        console.print(_metric_table(console, c, wide))
    for line in worse_slices(c):
        console.print(text(line, _CONSOLE_TONES["bad"] or ""))
    for metric, note in note_rows(c):
        console.print(text(f"{metric} — {note}"))
    groups = change_groups(c, _CONSOLE_CHANGES)
    for direction in ("regressed", "improved"):
        if any(g.role == "decides" and g.direction == direction for g in groups):
            console.print(text(f"{direction} cases on deciding metrics: {counted(c, direction, 'decides')}", "bold"))
        for g in (g for g in groups if g.role == "decides" and g.direction == direction):
            _print_group(console, g, text)
    errored_cases = errored_rows(c)
    if errored_cases:
        console.print(text(f"errored cases: {errored_text(c)} (failures, not changes)", "bold"))
        table = Table(box=box.SIMPLE_HEAD)
        for column in ERRORED_COLUMNS:
            table.add_column(column, no_wrap=column != "input", justify="left")
        for row in errored_cases[:_CONSOLE_CHANGES]:
            table.add_row(*(text(row[k]) for k in ERRORED_COLUMNS))
        console.print(table)
        if len(errored_cases) > _CONSOLE_CHANGES:
            console.print(text(f"… and {len(errored_cases) - _CONSOLE_CHANGES} more errored cases"))
    if any(g.role == "informs" for g in groups):
        console.print(text(f"moved on informing metrics, which do not decide: {informing_summary(c)}", "bold"))
    for g in (g for g in groups if g.role == "informs"):
        _print_group(console, g, text)
    for warning in c.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), text(warning)))
    console.print(verdict_line)
