"""The HTML report of one suite run: ``result.report("html", path)``, ``write_reports(result, "html", path)``.

One self-contained page, like the comparison's (:mod:`cogeval.present.comparison_report`):
inline CSS that follows the reader's light or dark scheme, no script, no URL,
every value escaped by jinja2 autoescape after :func:`~cogeval._text.printable`
(:mod:`cogeval.present.templating`). From top to bottom: the failures of a
failed run in a red box, the header (name, run id, start, counts, cost,
duration, assertions), the assertions, the metric table, the errors (the target's, then the
metrics': each distinct message with its count and example cases, most frequent first;
:mod:`cogeval.present.run_errors`), then one row per
case × trial: input, expected, output, error, each metric's score (and its
error), trace id, prompt version, duration. Rows whose target failed are red.
At most ``max_cases`` rows are shown (500 by default; the JSON and CSV reports
hold them all). A case's input, expected answer, output and error show their first 200 characters on one line
and open whole (at most 4,000) on demand (:func:`~cogeval.present.templating.shown`). Below 900 px each case is
a block (its key, trial, scores and duration, then its texts) and each metric too, so nothing scrolls sideways.

>>> from cogeval import EvalSuite, exact_match
>>> result = EvalSuite([{"input": "<b>2+2</b>", "expected": "4"}], lambda q: "4", metrics=[exact_match()],
...                    name="math", progress=False).run()
>>> page = run_html(result)
>>> "&lt;b&gt;2+2&lt;/b&gt;" in page, "<script" in page, "http" in page.replace("http-equiv", "")
(True, False, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cogeval import _columns as col
from cogeval._check import check_positive_int
from cogeval._numbers import count, dollars, number, seconds
from cogeval._text import as_text, cut, safe_str
from cogeval.present.run_errors import error_sections
from cogeval.present.templating import TEXT_WHOLE, Shown, cogeval_version, render_template, shown

_HTML_ERRORS = 20
"""Messages the page lists per kind of error (the target's, the metrics')."""
_METRIC_COLUMNS = ["metric", "better", "mean", "p50", "p95", "min", "max", "n", "missing"]


def run_html(result: Any, *, max_cases: int = 500) -> str:
    """The HTML page of a suite result (see the module): header, assertions, metrics, and each case × trial."""
    max_cases = check_positive_int("max_cases", max_cases)
    stats = result.stats
    passed = sum(a.passed for a in result.assertions)
    header = {
        "run id": result.run_id, "name": result.name or "–", "started": result.started_at or "–",
        "duration": seconds(stats.duration_s), "cost": cost_text(stats).removeprefix("cost "),
        "assertions": f"{passed} of {len(result.assertions)} passed" if result.assertions else "none",
    }
    names = list(result.metric_names)  # per-case metrics; statistical ones have no score per case (see duration)
    return render_template(
        "run.html.j2",
        title=f"cogeval run: {result.name or result.run_id}", version=cogeval_version(), header=header,
        counts=stats.counts_text(), cost=cost_text(stats), failures=[str(f) for f in result.failures],
        assertions=[{"name": a.name, "passed": a.passed, "message": a.message} for a in result.assertions],
        metrics=[_metric_row(name, agg, result.directions.get(name)) for name, agg in result.aggregated.items()],
        metric_columns=_METRIC_COLUMNS, score_names=names,
        cases=[_case_row(r, names) for r in result.results[:max_cases]],
        total=len(result.results), shown=min(max_cases, len(result.results)),
        error_sections=[_error_section(heading, frame) for heading, frame in error_sections(result)],
    )


def _error_section(heading: str, frame: Any) -> dict[str, Any]:
    """One kind of error (the target's, the metrics') for the page: its heading and its most frequent messages."""
    shown = frame.head(_HTML_ERRORS)
    kind, _, counts = heading.partition(": ")
    return {
        "title": f"{kind.capitalize()} ({counts})", "metric": col.METRIC in frame.columns, "more": len(frame) - len(shown),
        "rows": [{"metric": getattr(row, col.METRIC, None), "cases": row.cases, "error": cut(row.error, TEXT_WHOLE),
                  "examples": " · ".join(row.examples)} for row in shown.itertuples(index=False)],
    }


def cost_text(stats: Any) -> str:
    """``cost $0.0123 (judge $0.0040)``: the target's cost, and the judge's when a judge was asked; NaN is ``unknown``.

    >>> from cogeval.data.records import StatsRecord
    >>> cost_text(StatsRecord(cost=0.0123, judge_cost=0.004, judge_calls=3)), cost_text(StatsRecord())
    ('cost $0.0123 (judge $0.0040)', 'cost unknown')
    >>> cost_text(StatsRecord(cost=12.5, judge_calls=2)), cost_text(StatsRecord(cost=0.0, judge_calls=0))
    ('cost $12.50 (judge cost unknown)', 'cost $0.0000')
    """
    text = f"cost {_dollars(stats.cost_usd)}"
    if stats.judge_calls or stats.judge_cache_hits or stats.judge_errors or not math.isnan(stats.judge_cost_usd):
        judge = _dollars(stats.judge_cost_usd)
        text += f" (judge {'cost unknown' if judge == 'unknown' else judge})"
    return text


def _dollars(value: float) -> str:
    return "unknown" if value is None or math.isnan(value) else dollars(value)


def _metric_row(name: str, agg: Any, higher: bool | None) -> dict[str, str]:
    values = {k: number(getattr(agg, k)) for k in ("mean", "p50", "p95", "min", "max")}
    return {"metric": name, "better": "lower" if higher is False else "higher", **values,
            "n": count(agg.count), "missing": count(agg.missing)}


def _case_row(r: Any, names: list[str]) -> dict[str, Any]:
    """One case × trial as the page's cells (its texts as :class:`~cogeval.present.templating.Shown`; a missing
    value as ``None``)."""
    case = r.case
    scores: Mapping[str, Any] = r.scores
    return {
        "key": safe_str(r.case_key), "occurrence": r.occurrence, "trial": r.trial,
        col.INPUT: _shown(case.turns if case.input is None else case.input), col.EXPECTED: _shown(case.expected),
        col.OUTPUT: _shown(r.output), col.ERROR: _shown(r.error),
        "scores": [_score(scores.get(name)) for name in names],
        col.TRACE_ID: _text(r.trace_id), "prompt_version": _prompt_version(r.prompt),
        "duration": seconds(r.duration_s),
    }


def _score(score: Any) -> dict[str, Any]:
    if score is None:
        return {"value": "–", "error": None, "tone": ""}
    return {"value": number(score.value), "error": _text(score.error), "tone": "bad" if score.error else ""}


def _prompt_version(prompt: Any) -> str | None:
    """``key v3``-like text of a result's prompt record (its key and version, or version id); None without one."""
    if not isinstance(prompt, Mapping):
        return None
    version = next((prompt[k] for k in ("version", "version_id", "versionId") if prompt.get(k) is not None), None)
    parts = [safe_str(prompt["key"])] if prompt.get("key") is not None else []
    if version is not None:
        parts.append(f"v{version}" if isinstance(version, int) else safe_str(version))
    return " ".join(parts) or None


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else cut(as_text(value), TEXT_WHOLE)


def _shown(value: Any) -> Shown | None:
    return None if value is None or value == "" else shown(value)
