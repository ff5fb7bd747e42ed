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
import io
from collections.abc import Iterable, Sequence
from typing import Any

from cogeval._check import check_choice, check_path
from cogeval._files import write_text_atomic
from cogeval._html import format_value
from cogeval._text import (
    printable,
    terminal_text,
    terminal_width,
    with_unit,
    without_workflow_commands,
    workflow_data,
    workflow_property,
)
from cogeval.data.jsonable import json_text
from cogeval.data.run_id import check_run_id
from cogeval.errors import InputError
from cogeval.present.markdown import markdown_cell, markdown_table
from cogeval.present.run_report import cost_text, run_html

KINDS = {"console": ".console.txt", "json": ".json", "csv": ".csv", "markdown": ".md", "ci": ".ci.txt", "html": ".html"}


def write_reports(result: Any, kind: str | Sequence[str], path: Any = None) -> list[str]:
    """Print or write each report of ``kind``; with several kinds, ``path`` is a folder."""
    kinds = list(kind) if isinstance(kind, Iterable) and not isinstance(kind, str) else [kind]
    if not kinds:
        raise InputError(f"kind must name at least one report of {', '.join(map(repr, KINDS))}")
    kinds = [check_choice("kind", k, KINDS) for k in kinds]
    target = None if path is None else check_path("path", path)
    folder = target is not None and (len(kinds) > 1 or target.is_dir() or str(path).endswith(("/", "\\")))
    run_id = check_run_id(result.run_id) if folder else None  # it names the files: checked before any is written
    written = []
    for k in kinds:
        text = render(result, k)
        if target is None:
            print(text if k == "ci" else terminal_text(text))
            continue
        written.append(str(write_text_atomic(target / f"{run_id}{KINDS[k]}" if folder else target, text)))
    return written


def render(result: Any, kind: str) -> str:
    """The text of one report."""
    kind = check_choice("kind", kind, KINDS)
    return {"console": _console, "json": _json, "csv": _csv, "markdown": _markdown, "ci": _ci, "html": _html}[kind](result)


def _metric_rows(result: Any) -> list[dict[str, Any]]:
    return [
        {"metric": name, "direction": "higher" if result.directions.get(name) else "lower", **agg.model_dump()}
        for name, agg in result.aggregated.items()
    ]


def _console(result: Any) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=terminal_width(), force_terminal=False, color_system=None, highlight=False)
    stats = result.stats
    if result.failures:
        console.print(Text(printable(f"FAILED: {'; '.join(result.failures)}")), soft_wrap=True)
    console.print(Text(f"{printable(result.name or 'eval')} · run {printable(result.run_id)}"))  # two lines: fits 80
    console.print(Text(f"{stats.counts_text()} · {stats.duration_s:.2f} s · {cost_text(stats)}"))
    table = Table("metric", "better", "mean", "p50", "p95", "min", "max", "n", "missing")
    for row in _metric_rows(result):
        cells = [with_unit(row["metric"], row["metric"]), row["direction"], *(format_value(row[k]) for k in ("mean", "p50", "p95", "min", "max", "count", "missing"))]
        table.add_row(*(Text(printable(cell)) for cell in cells))
    console.print(table)
    for check in result.assertions:
        console.print(Text(f"{'PASS' if check.passed else 'FAIL'}  {printable(check.name)}: {printable(check.message)}"))
    return without_workflow_commands(buffer.getvalue().rstrip("\n"))


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


def _csv(result: Any) -> str:
    frame = result.to_frame()
    for column in ("input", "expected"):
        frame[column] = [v if isinstance(v, str) or v is None else json_text(v) for v in frame[column]]
    return frame.to_csv(index=False)


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
    if result.assertions:
        rows = [{"assertion": a.name, "result": "✓ pass" if a.passed else "✗ fail", "message": a.message} for a in result.assertions]
        lines += ["", markdown_table(rows, ["assertion", "result", "message"])]
    return "\n".join(lines)


def _html(result: Any) -> str:
    return run_html(result)


def _ci(result: Any) -> str:
    means = "; ".join(f"{name} {format_value(agg.mean)}" for name, agg in result.aggregated.items())
    failures = result.failures
    lines = [f"::error title=cogeval run failed::{workflow_data('FAILED: ' + '; '.join(failures))}"] if failures else []
    lines.append(f"::notice title=cogeval::{workflow_data(f'{result.stats.counts_text()}; {means}')}")
    for check in result.assertions:
        if not check.passed:
            lines.append(f"::error title={workflow_property('Assertion failed: ' + check.name)}::{workflow_data(check.message)}")
    lines.append(f"::notice title=cogeval cost::{workflow_data(cost_text(result.stats))}")
    failed = sum(not c.passed for c in result.assertions)
    verdict = " — FAILED" + (" (the run failed)" if failures else "") if failed or failures else ""
    lines.append(f"cogeval: {len(result.assertions) - failed} of {len(result.assertions)} assertions passed{verdict}")
    return "\n".join(lines)

