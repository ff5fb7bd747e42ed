"""What a suite run produces: its run, an :class:`~cogeval.data.EvalRun`, and the live outcomes it came from.

:class:`EvalSuiteResult` is a thin holder. The run file's model, ``run``, has
the one set of tables (DESIGN §2: ``results_frame``, ``scores``,
``cases_frame``, ``aggregated_frame``, ``assertions_frame``, ``errors_frame``, ``metric_errors_frame``, the wide
``to_frame()``), the one display and the one ``plot``; the result reads them
from it. It adds only what the finished run in memory knows: the live
outcomes (``results``: one :class:`CaseResult` per case × trial, with the
:class:`~cogeval.scoring.Score` objects and the targets' values as given),
``failures``, ``passed`` and ``exit_code``. ``to_run()`` returns ``run`` itself,
so ``compare_runs``, ``RunStore.save`` and ``save_run`` take the run as it is.

>>> from cogeval import EvalSuite, exact_match
>>> result = EvalSuite([{"input": "a", "expected": "a"}], lambda q: q, metrics=[exact_match()], progress=False).run()
>>> result.to_run() is result.run, result.passed, result.results[0].scores["exact_match"].value
(True, True, 1.0)
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from cogeval import _backend
from cogeval._html import safe_html
from cogeval._text import cut, one_line
from cogeval.data import EvalRun
from cogeval.data.records import AggregateRecord, AssertionRecord, ConfigRecord, DatasetRecord, StatsRecord
from cogeval.data.run_display import run_html
from cogeval.data.run_id import check_run_id
from cogeval.execution import CaseOutcome
from cogeval.scoring import Score

EXIT_ASSERTION_FAILED = 1
""":attr:`EvalSuiteResult.exit_code` when the run produced scores but an assertion failed."""
EXIT_RUN_FAILED = 2
""":attr:`EvalSuiteResult.exit_code` when the run failed as a whole (see :attr:`EvalSuiteResult.failures`)."""

RunStats = StatsRecord
"""The counts and totals of a run: :class:`~cogeval.data.records.StatsRecord`, the run file's ``stats`` (another name of it)."""


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


@dataclasses.dataclass(frozen=True, repr=False)
class EvalSuiteResult:
    """The result of :meth:`EvalSuite.run`: the :class:`~cogeval.data.EvalRun` ``run`` and its live outcomes ``results``.

    Every table, the display and ``plot`` are the run's; ``aggregated`` maps every
    metric name (per-case and statistical) to its aggregate, ``directions`` to
    ``higher_is_better``, ``config`` records how the run was made (never a key or
    a function) and ``stats`` counts it (judge usage included), all read from ``run``.
    """

    run: EvalRun
    """The run, as its file holds it; ``to_run()`` returns it."""
    results: Sequence[CaseResult]
    """The live outcomes: one :class:`CaseResult` per case × trial, in order, with its :class:`Score` per metric."""

    @property
    def failures(self) -> list[str]:
        """Why the run failed as a whole, one sentence each; empty when it did not.

        A run fails when it has no cases (an empty dataset: ``"the run has no
        cases: its dataset is empty, so nothing was evaluated"``; a gate must not
        pass on no evidence), when it was interrupted (``run.status == "interrupted"``:
        ``"the run was interrupted: 7 of 20 case-trials answered, 5 scored"``), when every case errored (``stats.errors == stats.total > 0``:
        ``"every case errored (12 of 12), first: ..."``) or when a per-case
        metric has no score on any case, every cell NaN (``"metric 'faithfulness'
        has no score on any case: 12 judge errors, first: ..."``, e.g. every judge
        call failed). A metric that failed on some cases only does not fail the
        run; its errors are counted in :attr:`stats`. Failed assertions are not
        listed here (see :attr:`assertions`).
        """
        reasons = []
        stats = self.stats
        shard = self.run.shard
        if not self.results and self.run.status != "interrupted":
            reasons.append("the run has no cases: its dataset is empty, so nothing was evaluated" if shard is None else
                           f"the run has no cases: shard {shard.index} of {shard.count} holds none of the dataset's "
                           f"{self.dataset.cases}, so nothing was evaluated (merge_runs still takes it)")
        if self.run.status == "interrupted":
            scored = sum(1 for r in self.results if r.scores or not self.metric_names)
            of = (f"of {self.dataset.cases * self.config.trials} " if shard is None
                  else f"(shard {shard.index} of {shard.count}) ")
            reasons.append(f"the run was interrupted: {len(self.results)} {of}case-trials answered, {scored} scored")
        if stats.total > 0 and stats.errors == stats.total:
            first = next((r.error for r in self.results if r.error is not None), None)
            reasons.append(f"every case errored ({stats.errors} of {stats.total})" + _first(first))
        return reasons + list(self._failed_metrics().values())

    def _failed_metrics(self) -> dict[str, str]:
        """The per-case metrics with no score on any case, each with its sentence of :attr:`failures`."""
        reasons: dict[str, str] = {}
        if not any(r.scores for r in self.results):
            return reasons
        for name in self.metric_names:
            if any(not _missing(r.scores[name].value) for r in self.results if name in r.scores):
                continue  # the first score found ends the search
            cells = [r.scores.get(name) for r in self.results if r.scores]  # an interrupted run: only scored answers
            errors = [s for s in cells if s is not None and s.error is not None]
            judged = any(isinstance(s.details, Mapping) and "judge_usage" in s.details for s in errors)
            kind = f"{'judge ' if judged else ''}error{'' if len(errors) == 1 else 's'}"
            parts = [f"{len(errors)} {kind}"] if errors else []
            if len(cells) > len(errors):
                parts.append(f"{len(cells) - len(errors)} NaN scores without an error")
            first = _first(_unprefixed(str(errors[0].error), f"metric {name!r} ")) if errors else ""
            reasons[name] = f"metric {name!r} has no score on any case: {' and '.join(parts)}{first}"
        return reasons

    def _warn_failed_metrics(self, stacklevel: int = 2) -> None:
        """One ``UserWarning`` per per-case metric with no score on any case (see :attr:`failures`), naming the
        run (so a rerun's warning is never swallowed as a repeat); the suite's runs call it as they end."""
        for reason in self._failed_metrics().values():
            warnings.warn(f"run {self.run_id}: {reason}; the run failed (exit_code {EXIT_RUN_FAILED}; see "
                          "result.failures and result.metric_errors_frame)", UserWarning, stacklevel=stacklevel + 1)

    @property
    def passed(self) -> bool:
        """True when the run did not fail (:attr:`failures` is empty) and every assertion passed (or there are none)."""
        return not self.failures and all(a.passed for a in self.assertions)

    @property
    def exit_code(self) -> int:
        """The CI status, for ``raise SystemExit(result.exit_code)``.

        ``2`` when the run failed (:attr:`failures`: it has no cases, every case
        errored, or a metric has no score on any case), whatever its assertions say; else
        ``1`` when an assertion failed; else ``0``.
        """
        if self.failures:
            return EXIT_RUN_FAILED
        return 0 if all(a.passed for a in self.assertions) else EXIT_ASSERTION_FAILED

    def __repr__(self) -> str:
        """A short line: the run's id and name and the number of results, never every record (asyncio reprs a
        finished task's result when ``asyncio.run`` ends, so a long repr would slow every run down); a failed
        run (:attr:`failures`) ends with ``FAILED:`` and why, without the first errors."""
        failed = self._failed_metrics()
        others = [_unfirsted(reason) for reason in self.failures if reason not in failed.values()]
        names = ", ".join(map(repr, failed))
        if failed:
            others.append(f"metric {names} has no score on any case" if len(failed) == 1 else
                          f"metrics {names} have no score on any case")
        why = f", FAILED: {cut('; '.join(others), 300)}" if others else ""
        return f"EvalSuiteResult(run_id={self.run_id!r}, name={self.name!r}, results={len(self.results)}{why})"

    # -- read from the run ------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The run's id (``run.run_id``)."""
        return self.run.run_id

    @property
    def name(self) -> str | None:
        """The suite's name, or ``None``."""
        return self.run.name

    @property
    def metadata(self) -> dict[str, Any]:
        """The run's labels (``run.metadata``)."""
        return self.run.metadata

    @property
    def started_at(self) -> str:
        """When the run started (ISO 8601 UTC)."""
        return self.run.started_at

    @property
    def finished_at(self) -> str:
        """When the run finished (ISO 8601 UTC)."""
        return self.run.finished_at

    @property
    def dataset(self) -> DatasetRecord:
        """Fingerprint and number of the cases run."""
        return self.run.dataset

    @property
    def config(self) -> ConfigRecord:
        """How the run was made: metrics, judge, trials, concurrency, target (``run.config``)."""
        return self.run.config

    @property
    def aggregated(self) -> dict[str, AggregateRecord]:
        """Every metric's aggregate by name (``run.aggregated``)."""
        return self.run.aggregated

    @property
    def directions(self) -> dict[str, bool]:
        """``higher_is_better`` of every metric (``run.directions``)."""
        return self.run.directions

    @property
    def assertions(self) -> list[AssertionRecord]:
        """The assertions checked after the run (``run.assertions``)."""
        return self.run.assertions

    @property
    def stats(self) -> StatsRecord:
        """Counts and totals, the judge's usage included (``run.stats``)."""
        return self.run.stats

    @property
    def metric_names(self) -> list[str]:
        """Per-case metric names, in the order the suite listed them."""
        return self.run.metric_names

    @property
    def results_frame(self) -> pd.DataFrame:
        """One row per case × trial with the DESIGN §2 ``results`` columns (``run.results_frame``)."""
        return self.run.results_frame

    @property
    def scores(self) -> pd.DataFrame:
        """One row per case × trial × metric with the DESIGN §2 ``scores`` columns (``run.scores``)."""
        return self.run.scores

    @property
    def cases_frame(self) -> pd.DataFrame:
        """One row per distinct case (``run.cases_frame``)."""
        return self.run.cases_frame

    @property
    def aggregated_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric``, ``higher_is_better`` and every aggregate field (``run.aggregated_frame``)."""
        return self.run.aggregated_frame

    @property
    def assertions_frame(self) -> pd.DataFrame:
        """One row per assertion (``run.assertions_frame``)."""
        return self.run.assertions_frame

    @property
    def errors_frame(self) -> pd.DataFrame:
        """The target's errors, one row per distinct message, most frequent first (``run.errors_frame``)."""
        return self.run.errors_frame

    @property
    def metric_errors_frame(self) -> pd.DataFrame:
        """The metrics' errors, one row per metric and distinct message (``run.metric_errors_frame``)."""
        return self.run.metric_errors_frame

    def to_frame(self) -> pd.DataFrame:
        """The wide view: ``results_frame`` plus ``input``, ``expected`` and one column per metric (``run.to_frame()``)."""
        return self.run.to_frame()

    def to_run(self) -> EvalRun:
        """The run itself (``run``): the run file's model, built once when the suite finished.

        Its id is checked first (an :class:`~cogeval.errors.InputError` naming it), as
        everything that takes the run on uses it as a file name."""
        check_run_id(self.run.run_id)
        return self.run

    def save_run(self, target: str | os.PathLike[str]) -> pathlib.Path:
        """Write the run file: a folder (or a path ending in ``/``) gets ``<run_id>.json``; returns the path."""
        return self.run.save(target)

    def plot(self, metric: str) -> Any:
        """The distribution of a metric's scores (``run.plot``, see :func:`cogeval.plot_scores`)."""
        return self.run.plot(metric)

    def report(self, kind: str | Sequence[str] = "console", path: Any = None, *, keep_formulas: bool = False) -> list[str]:
        """Write reports: ``console``, ``json``, ``csv``, ``markdown``, ``ci`` or ``html`` (or a list of them).

        Without ``path`` a report is printed; with one it is written there by the
        rule of every report writer (:func:`cogeval._files.report_paths`): a path
        without the kind's suffix gets it (``out/suite`` → ``out/suite.html``; several
        kinds share the stem), and a path ending in ``/`` (or an existing folder) is a
        folder that receives ``<run_id>.<suffix>``. Returns the paths written.
        In the CSV report a text cell a spreadsheet would run as a formula (``=``,
        ``+``, ``-``, ``@``, tab, CR first) starts with ``'``; ``keep_formulas=True``
        writes cells as they are. The reports live in the presentation layer,
        reached through :mod:`cogeval._backend`.
        """
        return _backend.presenter("write_reports")(self, kind, path, keep_formulas=keep_formulas)

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
            "cost": _json_number(self.stats.cost_usd),
            "metrics": {name: _json_number(agg.mean) for name, agg in self.aggregated.items()},
            "assertions_passed": all(a.passed for a in self.assertions),
            "failures": self.failures,
        }

    @safe_html
    def _repr_html_(self) -> str:
        title = f"EvalSuiteResult {self.name or ''} · {self.run_id} · {self.stats.counts_text()}"
        failures = self.failures
        if failures:
            title = f"FAILED: {'; '.join(failures)} · {title}"
        return run_html(self, title)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _unprefixed(text: str, prefix: str) -> str:
    return text[len(prefix):] if text.startswith(prefix) else text


def _unfirsted(reason: str) -> str:
    """A reason of :attr:`EvalSuiteResult.failures` without its ``", first: <error>"``."""
    return reason.split(", first: ", 1)[0]


def _first(error: Any, limit: int = 200) -> str:
    """``", first: <error>"`` on one line, cut at ``limit`` characters; ``""`` for no error."""
    return "" if error is None else ", first: " + cut(one_line(str(error)), limit)


def _json_number(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
