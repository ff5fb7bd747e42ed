"""The console reports: one width-aware layout for every command, and the comparison drawn with it.

The layout (docs/reports.md, "The console fits the terminal"), used by the suite's console report,
``cogeval compare``, ``runs``, ``show`` and ``import``:

- the width (:func:`console_width`): the terminal's when stdout is one, else ``COLUMNS`` when set, else 80
  (what CI logs get), at least :data:`_MIN_WIDTH`; ``wide`` means no limit;
- a table (:func:`fit_columns`) keeps every column when its cells fit on one line each; else it leaves out
  its low-priority columns, the lowest first (the caller's candidates, widest first), and says which
  (:func:`left_out`); when its last candidate is still too wide, its text columns wrap, the most willing
  first (an interval over two lines or more, a name at its spaces). A column of numbers or verdicts never
  wraps, so a number or a verdict is never cut; a name is cut nowhere;
- a line of parts (``base: name · run id · started …``, :func:`wrap_parts`) breaks between parts and goes
  on two spaces in; a part too long for a line breaks between its words, a word too long between its characters.

>>> wrap_parts(["base: terse / echo", "20261201T011707982Z-a3ac9736", "started 2026-12-01T01:17:07.982Z"], 60)
['base: terse / echo · 20261201T011707982Z-a3ac9736', '  started 2026-12-01T01:17:07.982Z']
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

from cogeval._text import printable, safe_str, without_workflow_commands
from cogeval.compare.directions import ASSUMED_LEGEND
from cogeval.compare.result import changed_text, errored_text
from cogeval.present.comparison_rows import (
    CHANGE_COLUMNS,
    ERRORED_COLUMNS,
    INFORMS_LEGEND,
    INFORMS_MARK,
    N_NEEDED_LEGEND,
    change_groups,
    clustering,
    counted,
    design_effects,
    errored_rows,
    headline_parts,
    informing_summary,
    metric_columns,
    metric_rows,
    note_rows,
    roles,
    run_comparison,
    run_label,
)
from cogeval.present.slices import worse_slices

# --- one layout for every console output ---------------------------------------------------

_MIN_WIDTH = 40
"""The narrowest width console output is fitted to."""
_DEFAULT_WIDTH = 80
"""The width when stdout is no terminal and ``COLUMNS`` is not set: what CI logs get."""
UNLIMITED = 1_000_000
"""The console width of ``wide`` output: each line as long as its content."""
_GAP = 2
"""Cells between two columns of a table: a column's right padding and the (blank) divider."""
_FOLD = 6
"""The narrowest a wrapping column gets when its words alone do not fit: rich folds them there."""


def console_width(wide: bool = False) -> int | None:
    """The width console output fits: the terminal's when stdout is one, else ``COLUMNS`` when it is set, else
    :data:`_DEFAULT_WIDTH`; at least :data:`_MIN_WIDTH`. ``None`` (no limit) when ``wide``."""
    if wide:
        return None
    columns = 0
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no stdout, or one without a file number
        if sys.stdout.isatty():
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
    if columns <= 0:  # no terminal, or one that says 0 (some CI terminals)
        with contextlib.suppress(ValueError):
            columns = int(os.environ.get("COLUMNS", ""))
    return max(_MIN_WIDTH, columns) if columns > 0 else _DEFAULT_WIDTH


@dataclasses.dataclass(frozen=True)
class Column:
    """A column of a console table: the ``key`` of its cells in each row, its ``header`` (the key when empty),
    its ``justify``; ``wraps`` 0 keeps it as wide as its widest cell (numbers, verdicts, ids: never cut), above 0
    lets its text wrap when the table is too wide, the highest first."""

    key: str
    header: str = ""
    justify: Literal["left", "right"] = "right"
    wraps: int = 0

    @property
    def title(self) -> str:
        return self.header or self.key


def dropping(columns: Sequence[Column], order: Sequence[str]) -> list[list[Column]]:
    """``columns``, then without each key of ``order`` in turn: the candidates of :func:`fit_columns`, widest first."""
    candidates = [list(columns)]
    for key in order:
        if any(c.key == key for c in candidates[-1]):
            candidates.append([c for c in candidates[-1] if c.key != key])
    return candidates


def _layouts(cell: Any) -> tuple[str, ...]:
    return cell if isinstance(cell, tuple) else (printable(safe_str(cell)),)


def _cells(text: str) -> int:
    """The widest line of ``text``, in terminal cells."""
    from rich.cells import cell_len

    return max(cell_len(line) for line in text.split("\n"))


def _longest_word(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(word) for word in text.split()), default=0)


def _chosen(cell: Any, width: int) -> str:
    """The widest layout of ``cell`` that fits ``width``, else its narrowest (which rich then folds)."""
    layouts = _layouts(cell)
    return next((text for text in layouts if _cells(text) <= width), layouts[-1])


def fit_columns(candidates: Sequence[Sequence[Column]], rows: Sequence[dict[str, Any]],
                width: int | None) -> tuple[list[Column], list[int]]:
    """The columns and their widths for a table of ``rows`` within ``width`` cells (``None``: no limit, the first
    candidate). A row's cell is its text, or a tuple of its layouts, widest first (lines joined by ``\\n``, each
    already :func:`printable`).

    The first of ``candidates`` (widest first) whose cells each fit on one line; else the last, its wrapping
    columns (``wraps`` above 0) narrowed, the highest ``wraps`` first: down to their narrowest layout (a word
    kept whole), then, when that is still too wide, down to :data:`_FOLD` cells. The other columns keep their width.
    """
    keys = {c.key: c for columns in candidates for c in columns}
    natural = {key: max([_cells(c.title)] + [_cells(_layouts(row[key])[0]) for row in rows]) for key, c in keys.items()}
    if width is None:
        return list(candidates[0]), [natural[c.key] for c in candidates[0]]
    for columns in candidates:
        widths = [natural[c.key] for c in columns]
        if sum(widths) + _GAP * (len(columns) - 1) <= width:
            return list(columns), widths
    columns = list(candidates[-1])
    widths = [natural[c.key] for c in columns]
    excess = sum(widths) + _GAP * (len(columns) - 1) - width

    def narrowest(i: int) -> int:
        key = columns[i].key
        words = [_longest_word(columns[i].title)]
        words += [min(_cells(t) for t in _layouts(row[key])) if isinstance(row[key], tuple)
                  else _longest_word(_layouts(row[key])[0]) for row in rows]
        return max(words)

    for floor in (narrowest, lambda i: _FOLD):
        for rank in sorted({c.wraps for c in columns if c.wraps}, reverse=True):
            group = [i for i, c in enumerate(columns) if c.wraps == rank]
            floors = {i: min(widths[i], floor(i)) for i in group}
            while excess > 0:
                roomy = [i for i in group if widths[i] > floors[i]]
                if not roomy:
                    break
                widest = max(roomy, key=widths.__getitem__)
                widths[widest] -= 1
                excess -= 1
    for i, c in enumerate(columns):  # a column of layouts needs only its widest chosen layout
        if c.wraps and any(isinstance(row[c.key], tuple) for row in rows):
            used = [_cells(_chosen(row[c.key], widths[i])) for row in rows]
            widths[i] = min(widths[i], max([_longest_word(c.title), *used]))
    return columns, widths


def console_table(columns: Sequence[Column], widths: Sequence[int], rows: Sequence[dict[str, Any]],
                  styles: Sequence[str | None] | None = None) -> Any:
    """A rich table of ``rows`` in ``columns`` of ``widths`` (:func:`fit_columns`): a rule under the header, two
    blank cells between columns, none at the edges; text from the run as plain :func:`printable` text."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for c, w in zip(columns, widths, strict=True):
        table.add_column(Text(printable(c.title)), justify=c.justify, width=w, no_wrap=not c.wraps,
                         overflow="fold")
    for n, row in enumerate(rows):
        table.add_row(*(Text(_chosen(row[c.key], w)) for c, w in zip(columns, widths, strict=True)),
                      style=(styles[n] if styles else None) or "")
    return table


def left_out(columns: Sequence[Column], shown: Sequence[Column], width: int | None, hint: str = "") -> list[str]:
    """``not shown at 80 columns: min, max (hint)``: the lines that name the columns :func:`fit_columns` left out."""
    from rich.cells import cell_len

    missing = [printable(c.title) for c in columns if c not in shown]
    if not missing:
        return []
    lines = wrap_parts(missing, width, sep=", ", lead=f"not shown at {width} columns: ")
    if hint and width is not None and cell_len(f"{lines[-1]} ({hint})") > width:
        return [*lines, f"  ({hint})"]
    return [*lines[:-1], f"{lines[-1]} ({hint})" if hint else lines[-1]]


def _fitting(word: str, room: int) -> int:
    """How many characters at the start of ``word`` fit ``room`` cells (at least one)."""
    from rich.cells import cell_len

    n = 1
    while n < len(word) and cell_len(word[: n + 1]) <= room:
        n += 1
    return n


def wrap_parts(parts: Sequence[str], width: int | None, *, sep: str = " · ", lead: str = "",
               indent: int = 2) -> list[str]:
    """``lead`` then ``parts`` joined by ``sep``, as lines of at most ``width`` cells (one line when ``width`` is
    None): a line breaks between parts and goes on ``indent`` spaces in; a part too long for a line starts one and
    breaks between its words, a word too long for a line between its characters. A line broken at ``", "`` or ``"; "`` ends with
    its comma or semicolon; at ``" · "`` or blanks, with the part.

    >>> wrap_parts(["pass", "score", "brevity"], 16, sep=", ", lead="not shown: ")
    ['not shown: pass,', '  score, brevity']
    """
    from rich.cells import cell_len

    if width is None:
        return [lead + sep.join(parts)]
    pad = " " * min(indent, width // 4)
    tail = "" if sep.startswith(" ") else sep.rstrip()  # what stays at the end of a line broken at a part
    lines = [lead]
    empty = True  # no part on the last line yet (it holds the lead, or the pad of a continuation)

    def fits(glue: str, piece: str, end: str = "") -> bool:
        return cell_len(lines[-1] + ("" if empty else glue) + piece + end) <= width

    def add(glue: str, piece: str) -> None:
        nonlocal empty
        lines[-1] += ("" if empty else glue) + piece
        empty = False

    def new_line(end: str = "") -> None:
        nonlocal empty
        lines[-1] += "" if empty else end
        lines.append(pad)
        empty = True

    for n, part in enumerate(parts):
        end = tail if n < len(parts) - 1 else ""  # room for the tail, should the next part break the line
        if fits(sep, part, end):
            add(sep, part)
            continue
        if not empty:  # a part that does not fit starts a line
            new_line(tail)
            if fits(sep, part, end):
                add(sep, part)
                continue
        for k, word in enumerate(part.split(" ")):
            glue = sep if k == 0 else " "
            if fits(glue, word, end if k == part.count(" ") else ""):
                add(glue, word)
                continue
            if not empty and (cell_len(pad + word) <= width or cell_len(lines[-1] + glue) >= width - 1):
                new_line(tail if k == 0 else "")
            elif not empty:  # a word longer than a line: its characters from here on
                add(glue, "")
            while cell_len(lines[-1] + word) > width:
                cut = _fitting(word, width - cell_len(lines[-1]))
                add("", word[:cut])
                new_line()
                word = word[cut:]
            add("", word)
    return lines


def print_lines(console: Any, lines: Sequence[str], style: str = "", lead_style: tuple[int, str] = (0, "")) -> None:
    """Print ``lines`` (already fitted, :func:`wrap_parts`) on ``console`` as they are, in ``style``; the first
    ``lead_style[0]`` characters of the first line in ``lead_style[1]``."""
    from rich.text import Text

    for n, line in enumerate(lines):
        text = Text(line, style=style)
        if n == 0 and lead_style[0]:
            text.stylize(lead_style[1], 0, lead_style[0])
        console.print(text, soft_wrap=True)


def rendered(draw: Callable[[Any], None], width: int | None) -> str:
    """What ``draw(console)`` prints on a plain-text rich console ``width`` cells wide (``None``: no limit),
    each line without its trailing blanks."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNLIMITED, force_terminal=False, force_jupyter=False,
                      color_system=None, highlight=False)
    draw(console)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").split("\n"))


# --- the comparison ------------------------------------------------------------------------


_CONSOLE_CHANGES = 5
"""Changed cases shown per metric and direction."""
_CONSOLE_TONES = {"good": "green", "bad": "red", "neutral": None}
"""The rich colour of each tone of ``VERDICT_TONES`` in the console report."""
_COMPACT_COLUMNS = [["metric", "role", "base", "head", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "base", "head", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "difference [CI]", "p", "adjusted p", "verdict"],
                    ["metric", "difference [CI]", "p", "verdict"]]
"""The console metric table's columns when the full table is wider than the terminal, widest first; in the last,
the metric's name and its difference with its interval wrap when they must."""
_LEFT = ("metric", "role", "verdict", "test")
_WRAPS = {"difference [CI]": 2, "metric": 1}
_CHANGE_NUMBERS = ("case", "base → head", "delta", "errored in")
"""Columns of the tables of cases that never wrap; their other (text) columns do."""


def print_console(comparison: Any, *, wide: bool = False, brief: bool = False) -> None:
    """Print the console report to stdout with rich (plain text when stdout is not a terminal), fitted to
    :func:`console_width` (:data:`_COMPACT_COLUMNS`); ``wide=True`` prints every column, lines unwrapped;
    ``brief=True`` only the verdict and the metric table (``cogeval demo``)."""
    from rich.console import Console

    width = console_width(wide)
    console = Console(highlight=False, width=width or UNLIMITED)
    if not console.is_terminal:
        console = Console(highlight=False, width=width or UNLIMITED, color_system=None)
    with console.capture() as capture:
        _draw_comparison(console, run_comparison(comparison), width, brief=brief)
    text = "\n".join(line.rstrip() for line in capture.get().split("\n"))
    console.file.write(without_workflow_commands(text))
    console.file.flush()


def _difference_cell(difference: str, interval: str) -> tuple[str, ...]:
    """The layouts of a ``difference [CI]`` cell, widest first: ``+0.12 [0.07, 0.17] @95%`` on one line, the
    interval on the next, its level on a third, its two ends on two."""
    difference, interval = printable(difference), printable(interval)
    bounds, at, level = interval.partition(" at ")
    if not at:
        return (f"{difference} {interval}",)
    low, comma, high = bounds.partition(", ")
    layouts = [f"{difference} {bounds} @{level}", f"{difference}\n{bounds} @{level}", f"{difference}\n{bounds}\n@{level}"]
    if comma:
        layouts.append(f"{difference}\n{low},\n{high}\n@{level}")
    return tuple(layouts)


_MARKED = "metric ⁱ"
"""The key of the metric column of a table without ``role``: each informing metric's name ends with :data:`INFORMS_MARK`."""


def _metric_column(key: str, full: bool, marked: bool = False) -> Column:
    header = "adj. p" if key == "adjusted p" and not full else key
    if key == "metric" and marked:
        return Column(_MARKED, "metric", "left", _WRAPS["metric"])
    return Column(key, header, "left" if key in _LEFT else "right", _WRAPS.get(key, 0))


def _metric_table(c: Any, width: int | None) -> tuple[Any, list[str]]:
    """The metric table: every column when it fits (always when ``width`` is None), else the widest
    :data:`_COMPACT_COLUMNS` that fits, else the last with its name and interval wrapped; and the keys of the
    columns it shows. A table without the ``role`` column marks each informing metric's name with
    :data:`INFORMS_MARK` (``latency (s) ↓ ⁱ``), which :func:`_metric_legend` explains under it."""
    rows = metric_rows(c)
    cells = [{**r, "difference [CI]": _difference_cell(r["difference"], r["interval"]),
              _MARKED: f"{r['metric']}{INFORMS_MARK}" if r["role"] == "informs" else r["metric"]} for r in rows]
    candidates = [[_metric_column(k, True) for k in metric_columns(c)]]
    if width is not None:
        candidates += [[_metric_column(k, False, "role" not in columns) for k in columns] for columns in _COMPACT_COLUMNS]
    columns, widths = fit_columns(candidates, cells, width)
    return console_table(columns, widths, cells, [_CONSOLE_TONES[r["tone"]] for r in rows]), [k.key for k in columns]


def _metric_legend(c: Any, shown: Sequence[str]) -> list[str]:
    """The lines under the metric table that explain it: ``ⁱ informs: does not decide the verdict`` when it marks
    informing metrics (:data:`INFORMS_MARK`), what ``↑?`` means when a direction was assumed (:data:`ASSUMED_LEGEND`),
    what ``n needed`` counts (:data:`N_NEEDED_LEGEND`) when it shows it."""
    legend = []
    if _MARKED in shown and any(m.role == "informs" for m in c.metrics.values()):
        legend.append(f"{INFORMS_MARK} {INFORMS_LEGEND}")
    if any(m.direction_assumed for m in c.metrics.values()):
        legend.append(ASSUMED_LEGEND)
    if "n needed" in shown:
        legend.append(N_NEEDED_LEGEND)
    return legend


def _cases_table(keys: Sequence[str], rows: Sequence[dict[str, Any]], width: int | None) -> Any:
    """A table of cases (moved or errored): its text columns (the input...) wrap to fit ``width``."""
    columns = [Column(k, justify="right" if k in ("base → head", "delta") else "left",
                      wraps=0 if k in _CHANGE_NUMBERS else 1) for k in keys]
    shown, widths = fit_columns([columns], rows, width)
    return console_table(shown, widths, rows)


def _print_group(console: Any, g: Any, width: int | None) -> None:
    """One metric's moved cases in one direction: its title, a table of at most :data:`_CONSOLE_CHANGES` rows, then
    the count of the rest."""
    console.print()
    print_lines(console, wrap_parts([printable(f"{g.metric}: {g.total} {g.direction}")], width))
    console.print(_cases_table(CHANGE_COLUMNS, g.rows, width))
    if g.total > len(g.rows):
        print_lines(console, wrap_parts([f"… and {g.total - len(g.rows)} more {g.direction} cases"], width))


def _draw_comparison(console: Any, c: Any, width: int | None, *, brief: bool = False) -> None:
    """Draw the console report on ``console``, ``width`` cells wide (``None``: no limit); every text from the run
    as plain :func:`printable` text.

    The verdict line (:func:`headline`) comes first and last.
    """

    def say(text: str, style: str = "", lead: str = "", lead_style: str = "", sep: str = " · ",
            parts: Sequence[str] | None = None) -> None:
        lines = wrap_parts([printable(p) for p in (parts or [text])], width, lead=lead, sep=sep)
        print_lines(console, lines, style, (len(lead), lead_style) if lead_style else (0, ""))

    lead, rest, tone = headline_parts(c)
    colour = _CONSOLE_TONES[tone] or ""
    headline = printable(lead + rest)

    def verdict_line() -> None:
        print_lines(console, wrap_parts([headline], width), lead_style=(len(printable(lead)), f"bold {colour}".strip()))

    clustered = clustering(c)

    def cluster_line() -> None:  # under the first verdict line: whole clusters were tested
        if clustered is not None:
            say(clustered.text)

    def changed_line() -> None:
        say("", parts=list(c.changed) if c.changed else [changed_text(c)], sep="; ", lead="changed: ")

    def metric_table() -> None:
        if c.metrics:
            console.print()
            table, shown = _metric_table(c, width)
            console.print(table)
            for line in _metric_legend(c, shown):
                say(line)
            console.print()
            effects = design_effects(c) if clustered is not None and "design effect" not in shown else []
            if effects:  # the table left its design effect column out: each metric's on a line of its own
                say("", parts=effects, sep=", ", lead="design effect: ")
        for line in worse_slices(c):
            say(line, _CONSOLE_TONES["bad"] or "")

    verdict_line()
    cluster_line()
    if brief:
        changed_line()
        metric_table()
        return
    for side, info in (("base", c.base), ("head", c.head)):
        say("", parts=[f"{side}: {run_label(info)}", info.run_id or "–", f"started {info.started_at or '–'}"])
    errored = f", {errored_text(c)}" if errored_text(c) else ""
    say("", lead="verdict: ", parts=[f"{c.verdict}", roles(c),
                                      f"{c.matched} matched, {c.n_added} added, {c.n_removed} removed{errored}",
                                      f"α = {c.alpha:g}"])
    changed_line()
    metric_table()
    for metric, note in note_rows(c):
        say(f"{metric} — {note}")
    groups = change_groups(c, _CONSOLE_CHANGES)
    for direction in ("regressed", "improved"):
        if any(g.role == "decides" and g.direction == direction for g in groups):
            console.print()
            say(f"{direction} cases on deciding metrics: {counted(c, direction, 'decides')}", "bold")
        for g in (g for g in groups if g.role == "decides" and g.direction == direction):
            _print_group(console, g, width)
    errored_cases = errored_rows(c)
    if errored_cases:
        console.print()
        say(f"errored cases: {errored_text(c)} (failures, not changes)", "bold")
        console.print(_cases_table(ERRORED_COLUMNS, errored_cases[:_CONSOLE_CHANGES], width))
        if len(errored_cases) > _CONSOLE_CHANGES:
            say(f"… and {len(errored_cases) - _CONSOLE_CHANGES} more errored cases")
    if any(g.role == "informs" for g in groups):
        console.print()
        say(f"moved on informing metrics, which do not decide: {informing_summary(c)}", "bold")
    for g in (g for g in groups if g.role == "informs"):
        _print_group(console, g, width)
    console.print()
    for warning in c.warnings:
        say(warning, lead="warning: ", lead_style="bold yellow")
    verdict_line()
