"""What a suite run produces: per case-trial results, aggregates, assertions and stats.

Every table follows DESIGN §2: ``results_frame`` (one row per case × trial),
``scores`` (case × trial × metric), ``aggregated_frame`` (one row per metric);
``to_frame()`` is the analyst's wide view (results plus one column per metric).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from cogeval import _columns as col
from cogeval._html import badge, html_table, safe_html
from cogeval.data import EvalRun
from cogeval.data.run_id import check_run_id
from cogeval.execution import CaseOutcome
from cogeval.scoring import AssertionResult, Score
from cogeval.scoring.judge import judge_usage_totals
from cogeval.stats import Aggregate

__all__ = ["EXIT_ASSERTION_FAILED", "EXIT_RUN_FAILED", "CaseResult", "EvalSuiteResult", "RunStats"]

EXIT_ASSERTION_FAILED = 1
""":attr:`EvalSuiteResult.exit_code` when the run produced scores but an assertion failed."""
EXIT_RUN_FAILED = 2
""":attr:`EvalSuiteResult.exit_code` when the run failed as a whole (see :attr:`EvalSuiteResult.failures`)."""


@dataclasses.dataclass(frozen=True)
class CaseResult(CaseOutcome):
    """One case × trial: the target's outcome and a :class:`Score` per metric name.

    ``statistical_values`` holds this case's value of every statistical metric
    that writes its per-case values (custom ones; see
    :attr:`~cogeval.scoring.StatisticalMetric.writes_per_case`), by name.
    """

    scores: Mapping[str, Score] = dataclasses.field(default_factory=dict)
    statistical_values: Mapping[str, float] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_outcome(cls, outcome: CaseOutcome, scores: Mapping[str, Score]) -> CaseResult:
        values = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(CaseOutcome)}
        return cls(**values, scores=dict(scores))


@dataclasses.dataclass(frozen=True)
class RunStats:
    """Counts and totals of one run.

    ``errors`` counts case-trials whose target failed; ``metric_errors`` and
    ``judge_errors`` count score cells left NaN with an error; ``cost_usd`` sums
    the target's known costs (NaN when no result reported one). The judge's
    usage is counted apart: ``judge_calls`` (HTTP calls, failed attempts
    included), ``judge_cache_hits``, the tokens its server reported and
    ``judge_cost_usd`` (NaN when unknown: no judge, or no ``prices``).
    """

    total: int
    errors: int
    metric_errors: int
    judge_errors: int
    duration_s: float
    cost_usd: float
    judge_calls: int = 0
    judge_cache_hits: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    judge_cost_usd: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def counts_text(self) -> str:
        """The counts a report opens with: ``"12 results, 0 errors, 0 metric errors, 12 judge errors"``.

        Judge errors are shown when a judge was asked (or failed) in the run,
        so a run whose every judge call failed never reads as a clean one.
        """
        text = f"{self.total} results, {self.errors} errors, {self.metric_errors} metric errors"
        if self.judge_calls or self.judge_cache_hits or self.judge_errors:
            text += f", {self.judge_errors} judge errors"
        return text


def _cost(results: Sequence[CaseOutcome]) -> float:
    known = [r.cost_usd for r in results if r.cost_usd is not None]
    return float(sum(known)) if known else math.nan


def run_stats(results: Sequence[CaseResult], judge_metrics: set[str], duration_s: float) -> RunStats:
    """Count errors by kind over ``results``."""
    cells = [(name, s) for r in results for name, s in r.scores.items() if s.error is not None]
    judge = sum(1 for name, _ in cells if name in judge_metrics)
    usage = judge_usage_totals(s.details for r in results for name, s in r.scores.items() if name in judge_metrics)
    return RunStats(
        total=len(results),
        errors=sum(1 for r in results if r.error is not None),
        metric_errors=len(cells) - judge,
        judge_errors=judge,
        duration_s=duration_s,
        cost_usd=_cost(results),
        judge_calls=usage["calls"],
        judge_cache_hits=usage["cache_hits"],
        judge_input_tokens=usage["input_tokens"],
        judge_output_tokens=usage["output_tokens"],
        judge_cost_usd=usage["cost_usd"],
    )


def judge_stats_record(stats: RunStats) -> dict[str, Any]:
    """The judge's counts as run-file ``stats`` keys (``judgeCost`` and the kept extras)."""
    return {"judge_cost": stats.judge_cost_usd, "judgeCalls": stats.judge_calls,
            "judgeCacheHits": stats.judge_cache_hits, "judgeInputTokens": stats.judge_input_tokens,
            "judgeOutputTokens": stats.judge_output_tokens}


@dataclasses.dataclass(frozen=True)
class EvalSuiteResult:
    """The result of :meth:`EvalSuite.run`.

    ``aggregated`` maps every metric name (per-case and statistical) to its
    :class:`~cogeval.stats.Aggregate`; ``directions`` maps it to
    ``higher_is_better``; ``config`` records how the run was made (JSON-able,
    never a key or a function).
    """

    run_id: str
    name: str | None
    metadata: Mapping[str, Any]
    started_at: str
    finished_at: str
    results: Sequence[CaseResult]
    aggregated: Mapping[str, Aggregate]
    directions: Mapping[str, bool]
    assertions: Sequence[AssertionResult]
    stats: RunStats
    config: Mapping[str, Any]

    @property
    def failures(self) -> list[str]:
        """Why the run failed as a whole, one sentence each; empty when it did not.

        A run fails when every case errored (``stats.errors == stats.total > 0``:
        ``"every case errored (12 of 12), first: ..."``) or when a per-case
        metric has no score on any case, every cell NaN (``"metric 'faithfulness'
        has no score on any case: 12 judge errors, first: ..."``, e.g. every judge
        call failed). A metric that failed on some cases only does not fail the
        run; its errors are counted in :attr:`stats`. Failed assertions are not
        listed here (see :attr:`assertions`).
        """
        reasons = []
        stats = self.stats
        if stats.total > 0 and stats.errors == stats.total:
            first = next((r.error for r in self.results if r.error is not None), None)
            reasons.append(f"every case errored ({stats.errors} of {stats.total})" + _first(first))
        if not self.results:
            return reasons
        for name in self.metric_names:
            cells = [r.scores.get(name) for r in self.results]
            if any(s is not None and not _missing(s.value) for s in cells):
                continue
            errors = [s for s in cells if s is not None and s.error is not None]
            judged = any(isinstance(s.details, Mapping) and "judge_usage" in s.details for s in errors)
            parts = [f"{len(errors)} {'judge errors' if judged else 'errors'}"] if errors else []
            if len(cells) > len(errors):
                parts.append(f"{len(cells) - len(errors)} NaN scores without an error")
            first = _first(_unprefixed(errors[0].error, f"metric {name!r} ")) if errors else ""
            reasons.append(f"metric {name!r} has no score on any case: {' and '.join(parts)}{first}")
        return reasons

    @property
    def passed(self) -> bool:
        """True when the run did not fail (:attr:`failures` is empty) and every assertion passed (or there are none)."""
        return not self.failures and all(a.passed for a in self.assertions)

    @property
    def exit_code(self) -> int:
        """The CI status, for ``raise SystemExit(result.exit_code)``.

        ``2`` when the run failed (:attr:`failures`: every case errored, or a
        metric has no score on any case), whatever its assertions say; else
        ``1`` when an assertion failed; else ``0``.
        """
        if self.failures:
            return EXIT_RUN_FAILED
        return 0 if all(a.passed for a in self.assertions) else EXIT_ASSERTION_FAILED

    @property
    def metric_names(self) -> list[str]:
        """Per-case metric names, in the order the suite listed them."""
        return [m["name"] for m in self.config.get("metrics", [])]

    def to_run(self) -> EvalRun:
        """This result as an :class:`~cogeval.data.EvalRun` (the run file's model)."""
        check_run_id(self.run_id)  # an InputError naming the id, not pydantic's wrapped one
        return EvalRun.model_validate({
            "run_id": self.run_id, "started_at": self.started_at, "finished_at": self.finished_at,
            "name": self.name, "metadata": dict(self.metadata), "config": dict(self.config),
            "results": [_result_record(r) for r in self.results],
            "aggregated": {name: dataclasses.asdict(agg) for name, agg in self.aggregated.items()},
            "assertions": [dataclasses.asdict(a) for a in self.assertions],
            "stats": {
                "total": self.stats.total, "errors": self.stats.errors, "duration": self.stats.duration_s,
                "cost": self.stats.cost_usd, "metric_errors": self.stats.metric_errors,
                "judge_errors": self.stats.judge_errors,
                **(judge_stats_record(self.stats) if self.config.get("judge") is not None else {}),
            },
        })

    def save_run(self, target: Any) -> pathlib.Path:
        """Write the run file: a folder (or a path ending in ``/``) gets ``<run_id>.json``; returns the path."""
        return self.to_run().save(target)

    @property
    def results_frame(self) -> pd.DataFrame:
        """One row per case × trial with the DESIGN §2 ``results`` columns."""
        rows = [
            {
                col.RUN_ID: self.run_id, col.CASE_KEY: r.case_key, col.OCCURRENCE: r.occurrence,
                col.TRIAL: r.trial, col.OUTPUT: r.output, col.ERROR: r.error,
                col.DURATION_S: r.duration_s, col.INPUT_TOKENS: r.input_tokens,
                col.OUTPUT_TOKENS: r.output_tokens, col.COST_USD: r.cost_usd, col.TRACE_ID: r.trace_id,
            }
            for r in self.results
        ]
        return _typed(pd.DataFrame(rows, columns=list(col.RESULTS_COLUMNS)))

    @property
    def scores(self) -> pd.DataFrame:
        """One row per case × trial × metric with the DESIGN §2 ``scores`` columns."""
        rows = [
            {
                col.RUN_ID: self.run_id, col.CASE_KEY: r.case_key, col.OCCURRENCE: r.occurrence,
                col.TRIAL: r.trial, col.METRIC: name, col.SCORE: score.value, col.ERROR: score.error,
            }
            for r in self.results
            for name, score in r.scores.items()
        ]
        return pd.DataFrame(rows, columns=list(col.SCORES_COLUMNS)).astype({col.SCORE: float})

    @property
    def aggregated_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric``, ``higher_is_better`` and every :class:`Aggregate` field."""
        rows = [
            {col.METRIC: name, "higher_is_better": self.directions.get(name), **dataclasses.asdict(agg)}
            for name, agg in self.aggregated.items()
        ]
        return pd.DataFrame(rows)

    @property
    def assertions_frame(self) -> pd.DataFrame:
        """One row per assertion: ``name``, ``passed``, ``message``, ``actual``, ``expected``."""
        columns = ["name", "passed", "message", "actual", "expected"]
        return pd.DataFrame([{c: getattr(a, c) for c in columns} for a in self.assertions], columns=columns)

    def to_frame(self) -> pd.DataFrame:
        """The wide view: ``results_frame`` plus ``input`` and ``expected`` and one column per metric."""
        frame = self.results_frame
        frame.insert(4, col.INPUT, [r.case.input for r in self.results])
        frame.insert(5, col.EXPECTED, [r.case.expected for r in self.results])
        for name in self.metric_names:
            frame[name] = [r.scores[name].value if name in r.scores else math.nan for r in self.results]
        return frame

    def report(self, kind: str | Sequence[str] = "console", path: Any = None) -> list[str]:
        """Write reports: ``console``, ``json``, ``csv``, ``markdown`` or ``ci`` (or a list of them).

        Without ``path`` a report is printed; with one it is written there (a
        folder when several kinds are asked for). Returns the paths written.
        """
        from cogeval.present.reporters import write_reports

        return write_reports(self, kind, path)

    def save_baseline(self, path: Any) -> str:
        """Write the metric means as a baseline file for ``no_regression``; returns the path."""
        from cogeval.scoring import write_baseline

        return str(write_baseline(path, self.aggregated, self.directions))

    def summary(self) -> dict[str, Any]:
        """A small JSON-able summary: totals, metric means, whether assertions passed, and ``failures``
        (why the run failed, see :attr:`failures`)."""
        return {
            "success": True,
            "total": self.stats.total,
            "duration": self.stats.duration_s,
            "cost": None if math.isnan(self.stats.cost_usd) else self.stats.cost_usd,
            "metrics": {name: _json_number(agg.mean) for name, agg in self.aggregated.items()},
            "assertions_passed": all(a.passed for a in self.assertions),
            "failures": self.failures,
        }

    def plot(self, metric: str) -> Any:
        """The distribution of a metric's scores (see :func:`cogeval.plot_scores`)."""
        from cogeval.present.plots import plot_scores

        return plot_scores(self, metric)

    @safe_html
    def _repr_html_(self) -> str:
        title = f"EvalSuiteResult {self.name or ''} · {self.run_id} · {self.stats.counts_text()}"
        failures = self.failures
        if failures:
            title = f"FAILED: {'; '.join(failures)} · {title}"
        metrics = html_table(
            [
                {**dataclasses.asdict(agg), col.METRIC: name, "direction": {True: "↑", False: "↓"}.get(self.directions.get(name), "")}
                for name, agg in self.aggregated.items()
            ],
            [col.METRIC, "direction", "mean", "p50", "p95", "min", "max", "count", "missing"],
            caption=title,
        )
        checks = html_table(
            [{"assertion": a.name, "result": badge("pass", "good") if a.passed else badge("fail", "bad"), "message": a.message}
             for a in self.assertions],
            ["assertion", "result", "message"],
            raw_columns=["result"],
        ) if self.assertions else ""
        return metrics + checks


def _usage(item: Any) -> dict[str, Any]:
    return {"input_tokens": item.input_tokens, "output_tokens": item.output_tokens, "cost": item.cost_usd}


def _result_record(r: CaseResult) -> dict[str, Any]:
    """One ``results[]`` entry of the run file."""
    turns = None if r.turns is None else [
        {"input": t.input, "output": t.output, "duration": t.duration_s, "usage": _usage(t),
         "trace_id": t.trace_id, "prompt": t.prompt, "toolCalls": t.tool_calls}  # TurnRecord keeps it as an extra key
        for t in r.turns
    ]
    return {
        "case_key": r.case_key, "occurrence": r.occurrence, "trial": r.trial, "case": r.case.to_dict(),
        "output": r.output, "error": r.error, "duration": r.duration_s, "usage": _usage(r),
        "trace_id": r.trace_id, "prompt": r.prompt, "tool_calls": r.tool_calls, "turns": turns,
        "scores": [{"metric": name, "score": s.value, "error": s.error, "details": s.details} for name, s in r.scores.items()],
        "statistical_values": dict(r.statistical_values) or None,  # left out of the file when there are none
    }


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _unprefixed(text: str, prefix: str) -> str:
    return text[len(prefix):] if text.startswith(prefix) else text


def _first(error: Any, limit: int = 200) -> str:
    """``", first: <error>"`` on one line, cut at ``limit`` characters; ``""`` for no error."""
    if error is None:
        return ""
    text = " ".join(str(error).split())
    return ", first: " + (text if len(text) <= limit else text[: limit - 1] + "…")


def _json_number(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({col.DURATION_S: float, col.COST_USD: float, col.INPUT_TOKENS: "Int64", col.OUTPUT_TOKENS: "Int64"})

