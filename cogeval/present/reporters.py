"""Reports of a suite result: ``console`` (rich), ``json``, ``csv``, ``markdown``, ``ci`` and ``html``
(:mod:`cogeval.present.run_report`).

>>> from cogeval import EvalSuite, exact_match
>>> result = EvalSuite([{"input": "a", "expected": "a"}], lambda q: q, metrics=[exact_match()], progress=False).run()
>>> print("\\n".join(render(result, "ci").splitlines()[:2]))
::notice title=cogeval::1 results, 0 errors, 0 metric errors; exact_match 1
::notice title=cogeval cost::cost unknown

The run's cost (target, and judge when one was asked) is in the console header,
the Markdown counts line and a CI notice (before the last line): ``cost $0.0123 (judge $0.0040)``; a
cost nobody reported is ``unknown``, never ``$0`` (:func:`~cogeval.present.run_report.cost_text`).

A run that failed as a whole (``result.failures``: every case errored, or a
metric has no score on any case) says so in the first line of the console,
Markdown and CI reports: ``FAILED: every case errored (12 of 12), first: ...``
(in the CI report, an ``::error`` annotation).

Text from the run is inert in every kind (:mod:`cogeval._text`): the console report shows
control characters as escapes and never reads rich markup, and no line of it can start a
GitHub Actions workflow command; Markdown pings nobody; the CI report escapes its annotations
by GitHub's rules. A report printed (no ``path``) passes through
:func:`~cogeval._text.terminal_text` (the ``ci`` kind, whose commands are meant for the runner,
is escaped as it is built). The JSON report writes lone surrogates as JSON escapes
(:func:`~cogeval.data.jsonable.json_text`); the run id is checked before it names a file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from cogeval._check import check_choice, check_path
from cogeval._files import is_folder_path, report_paths, write_text_atomic
from cogeval._text import (
    cut,
    printable,
    terminal_text,
    with_unit,
    without_workflow_commands,
    workflow_data,
    workflow_property,
)
from cogeval.data.jsonable import json_text
from cogeval.data.run_id import check_run_id
from cogeval.errors import InputError
from cogeval.present.markdown import markdown_cell, markdown_table
from cogeval.present.run_errors import SHOWN_ERRORS, error_lines, error_message, error_sections
from cogeval.present.run_report import cost_text, run_html

KINDS = {"console": ".console.txt", "json": ".json", "csv": ".csv", "markdown": ".md", "ci": ".ci.txt", "html": ".html"}


def write_reports(result: Any, kind: str | Sequence[str], path: Any = None, *, keep_formulas: bool = False) -> list[str]:
    """Print (no ``path``) or write each report of ``kind``; returns the paths written. ``keep_formulas``: see
    :func:`spreadsheet_safe`.

    Files are named by :func:`~cogeval._files.report_paths`: ``path`` without the kind's suffix gets it
    (``out/suite`` → ``out/suite.html``; with several kinds, one stem: ``out/suite.json``, ``out/suite.html``),
    and a folder (``out/``, or an existing folder) receives ``<run_id><suffix>``."""
    kinds = list(kind) if isinstance(kind, Iterable) and not isinstance(kind, str) else [kind]
    if not kinds:
        raise InputError(f"kind must name at least one report of {', '.join(map(repr, KINDS))}")
    kinds = [check_choice("kind", k, KINDS) for k in kinds]
    if path is None:
        for k in kinds:
            text = render(result, k, keep_formulas=keep_formulas)
            print(text if k == "ci" else terminal_text(text))
        return []
    check_path("path", path)
    # the run id names the files in a folder: checked before any is written
    name = check_run_id(result.run_id) if is_folder_path(path) else ""
    targets = report_paths(path, [KINDS[k] for k in kinds], default_name=name, known=KINDS.values())
    return [str(write_text_atomic(target, render(result, k, keep_formulas=keep_formulas)))
            for k, target in zip(kinds, targets)]


def render(result: Any, kind: str, *, keep_formulas: bool = False) -> str:
    """The text of one report."""
    kind = check_choice("kind", kind, KINDS)
    if kind == "csv":
        return _csv(result, keep_formulas)
    return {"console": _console, "json": _json, "markdown": _markdown, "ci": _ci, "html": _html}[kind](result)


def _metric_rows(result: Any) -> list[dict[str, Any]]:
    return [
        {"metric": name, "direction": "higher" if result.directions.get(name) else "lower", **agg.model_dump()}
        for name, agg in result.aggregated.items()
    ]


_MARKDOWN_ERRORS = 10
"""Messages the Markdown report lists per kind of error (the HTML report: ``run_report._HTML_ERRORS``)."""


_SUITE_COLUMNS = ["metric", "better", "mean", "p50", "p95", "min", "max", "n", "missing"]
_SUITE_DROPS = ["min", "max", "p95", "p50", "better"]
"""The console metric table's columns left out, in turn, when the table is wider than the terminal."""


def _console(result: Any) -> str:
    from cogeval._numbers import count, number, seconds
    from cogeval.present.comparison_console import (
        UNLIMITED,
        Column,
        console_table,
        console_width,
        dropping,
        fit_columns,
        left_out,
        print_lines,
        rendered,
        wrap_parts,
    )

    width = console_width()
    stats = result.stats
    rows = [{"metric": with_unit(r["metric"], r["metric"]), "better": r["direction"], "n": count(r["count"]),
             "missing": count(r["missing"]), **{k: number(r[k]) for k in ("mean", "p50", "p95", "min", "max")}}
            for r in _metric_rows(result)]
    columns = [Column(k, justify="left" if k in ("metric", "better") else "right", wraps=int(k == "metric"))
               for k in _SUITE_COLUMNS]

    def draw(console: Any) -> None:
        lines = wrap_parts([printable(f"FAILED: {'; '.join(result.failures)}")], width) if result.failures else []
        lines += wrap_parts([printable(result.name or "eval"), f"run {printable(result.run_id)}"], width)
        lines += wrap_parts([stats.counts_text(), seconds(stats.duration_s), cost_text(stats)], width)
        print_lines(console, lines)
        shown, widths = fit_columns(dropping(columns, _SUITE_DROPS), rows, width)
        console.print()
        console.print(console_table(shown, widths, rows))
        console.print()
        print_lines(console, left_out(columns, shown, width))
        print_lines(console, error_lines(result, width or UNLIMITED))
        for check in result.assertions:
            verdict = "PASS" if check.passed else "FAIL"
            print_lines(console, wrap_parts([f"{verdict}  {printable(check.name)}: {printable(check.message)}"], width))

    return without_workflow_commands(rendered(draw, width))


def _json(result: Any) -> str:
    document = {
        "run_id": result.run_id, "name": result.name, "metadata": result.metadata,
        "started_at": result.started_at, "finished_at": result.finished_at,
        "config": result.config.model_dump(), "stats": _stats(result.stats),
        "aggregated": {name: agg.model_dump() for name, agg in result.aggregated.items()},
        "directions": result.directions,
        "assertions": [a.model_dump() for a in result.assertions],
        "results": [
            {
                "case_key": r.case_key, "occurrence": r.occurrence, "trial": r.trial,
                "case": r.case.to_dict(), "output": r.output, "error": r.error,
                "duration_s": r.duration_s, "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                "cost_usd": r.cost_usd, "trace_id": r.trace_id, "prompt": r.prompt, "tool_calls": r.tool_calls,
                "scores": {name: dataclasses.asdict(s) for name, s in r.scores.items()},
            }
            for r in result.results
        ],
    }
    return json_text(document, indent=2)


def _stats(stats: Any) -> dict[str, Any]:
    """The run's counts with the Python names and units (no judge: its counts are 0)."""
    return {
        "total": stats.total, "errors": stats.errors, "metric_errors": stats.metric_errors,
        "judge_errors": stats.judge_errors, "duration_s": stats.duration_s, "cost_usd": stats.cost_usd,
        "judge_calls": stats.judge_calls or 0, "judge_cache_hits": stats.judge_cache_hits or 0,
        "judge_input_tokens": stats.judge_input_tokens or 0, "judge_output_tokens": stats.judge_output_tokens or 0,
        "judge_cost_usd": stats.judge_cost_usd,
    }


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet run a cell as a formula (OWASP, "CSV Injection")."""


def spreadsheet_safe(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with ``= + - @``, a tab or a carriage return gets a
    leading ``'`` (OWASP's advice), so an answer such as ``=HYPERLINK(...)`` is never run.

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("-0.5"), spreadsheet_safe("fine")
    ("'=1+1", "'-0.5", 'fine')
    """
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _csv(result: Any, keep_formulas: bool = False) -> str:
    """The results table; text cells made :func:`spreadsheet_safe` unless ``keep_formulas`` (numbers stay numbers)."""
    import pandas as pd

    frame = result.to_frame()

    def text(values: Any) -> pd.Series:  # kept as objects: text pyarrow cannot hold (a lone surrogate) stays
        return pd.Series(values, index=frame.index, dtype=object)

    for column in ("input", "expected"):
        frame[column] = text([v if isinstance(v, str) or v is None else json_text(v) for v in frame[column]])
    if not keep_formulas:
        for column in frame.columns:
            if frame[column].dtype.kind not in "biufcmM":  # text and mixed columns; numbers stay numbers
                frame[column] = text([spreadsheet_safe(v) if isinstance(v, str) else v for v in frame[column]])
        frame.columns = [spreadsheet_safe(str(name)) for name in frame.columns]
    return frame.to_csv(index=False, lineterminator="\r\n")  # RFC 4180; a CR inside a cell is quoted too


def _markdown(result: Any) -> str:
    stats = result.stats
    failed = [f"**FAILED**: {markdown_cell('; '.join(result.failures), limit=2000)}", ""] if result.failures else []
    lines = [
        *failed,
        f"### {markdown_cell(result.name or 'Evaluation')} — run `{result.run_id}`",
        "",
        f"{stats.counts_text()}, {stats.duration_s:.2f} s, {cost_text(stats)}.",
        "",
        markdown_table(_metric_rows(result), ["metric", "direction", "mean", "p50", "p95", "count", "missing"]),
    ]
    for heading, frame in error_sections(result):
        shown = frame.head(_MARKDOWN_ERRORS)
        columns = [c for c in ("metric", "cases", "error", "examples") if c in frame.columns]
        rows = [{**row, "examples": " · ".join(row["examples"])} for row in shown.to_dict("records")]
        more = ["", f"… and {len(frame) - len(shown)} more messages"] if len(frame) > len(shown) else []
        kind, _, counts = heading.partition(": ")
        lines += ["", f"**{kind.capitalize()}**: {counts}", "", markdown_table(rows, columns), *more]
    if result.assertions:
        rows = [{"assertion": a.name, "result": "✓ pass" if a.passed else "✗ fail", "message": a.message} for a in result.assertions]
        lines += ["", markdown_table(rows, ["assertion", "result", "message"])]
    return "\n".join(lines)


def _html(result: Any) -> str:
    return run_html(result)


def _ci(result: Any) -> str:
    from cogeval._numbers import number

    means = "; ".join(f"{name} {number(agg.mean)}" for name, agg in result.aggregated.items())
    failures = result.failures
    lines = [f"::error title=cogeval run failed::{workflow_data('FAILED: ' + '; '.join(failures))}"] if failures else []
    lines.append(f"::notice title=cogeval::{workflow_data(f'{result.stats.counts_text()}; {means}')}")
    for heading, frame in error_sections(result):  # one warning per message, the most frequent first
        for row in frame.head(SHOWN_ERRORS).itertuples(index=False):
            text = f"{row.cases} × {cut(error_message(row), 500)} (e.g. {' · '.join(row.examples)})"
            lines.append(f"::warning title={workflow_property('cogeval ' + heading)}::{workflow_data(text)}")
        if len(frame) > SHOWN_ERRORS:
            more = f"… and {len(frame) - SHOWN_ERRORS} more messages"
            lines.append(f"::warning title={workflow_property('cogeval ' + heading)}::{workflow_data(more)}")
    for check in result.assertions:
        if not check.passed:
            lines.append(f"::error title={workflow_property('Assertion failed: ' + check.name)}::{workflow_data(check.message)}")
    lines.append(f"::notice title=cogeval cost::{workflow_data(cost_text(result.stats))}")
    failed = sum(not c.passed for c in result.assertions)
    verdict = " — FAILED" + (" (the run failed)" if failures else "") if failed or failures else ""
    lines.append(f"cogeval: {len(result.assertions) - failed} of {len(result.assertions)} assertions passed{verdict}")
    return "\n".join(lines)

