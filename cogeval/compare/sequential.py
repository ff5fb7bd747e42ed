"""compare_sequential: run two targets batch by batch and stop as soon as every deciding metric is decided.

The rules (``docs/sequential.md``):

- the cases run in one random order drawn from ``seed``, both targets on each
  case (interleaved, as :class:`~cogeval.EvalComparison`), ``batch_size``
  cases at a time, at most ``max_cases``;
- after each batch, each metric's paired differences ``head - base`` get an
  anytime-valid confidence sequence (:func:`~cogeval.stats.confidence_sequence`,
  its bets tuned to the metric's margin when every metric has one) at level ``alpha / k`` for ``k`` metrics (:func:`~cogeval.stats.split_alpha`),
  so the chance that any sequence ever misses its mean stays at most ``alpha``;
- scores lie in ``bounds[metric]``, ``(0, 1)`` unless given, so differences lie
  in ``[low - high, high - low]``; a score outside stops the comparison with an error;
- a metric is decided when its sequence excludes 0 (``better`` or ``worse`` by
  its direction) or lies within ``±margin`` (``equivalent``); the comparison
  stops once every metric is decided, else after ``max_cases``
  (undecided metrics are ``inconclusive``);
- a case that either target failed on, or a metric could not score, adds no
  difference to that metric's sequence.

>>> _verdicts(np.array([0.1, -0.4, -0.02, -0.3]), np.array([0.5, -0.1, 0.03, 0.4]), True, 0.05).tolist()
['better', 'worse', 'equivalent', 'inconclusive']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _backend
from cogeval._check import check_choice, check_positive_int, check_seed, describe
from cogeval._html import html_table, key_value_table, safe_html
from cogeval.compare.result import RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.compare.verdicts import overall
from cogeval.data import Dataset
from cogeval.data.records import DatasetRecord
from cogeval.errors import InputError
from cogeval.evaluate.result import EvalSuiteResult
from cogeval.evaluate.suite import EvalSuite, arun_interleaved, as_dataset
from cogeval.execution import run_sync
from cogeval.stats import ConfidenceSequence, confidence_sequence, split_alpha

SEQUENCE_COLUMNS = ["metric", "n", "estimate", "ci_low", "ci_high"]
"""The ``sequence`` table: one row per metric × paired difference, the sequence after each one."""
_METHODS = ("auto", "betting", "planned", "eb")
DECISION_COLUMNS = ["metric", "higher_is_better", "n", "base", "head", "estimate", "ci_low", "ci_high", "alpha",
                    "margin", "verdict", "decided_at"]
"""``SequentialComparison.to_frame()``: one row per metric, its latest interval and verdict."""


def _verdicts(low: Any, high: Any, higher_is_better: bool, margin: float) -> np.ndarray:
    """The decision rule, elementwise: ``better``/``worse`` when [low, high] excludes 0, ``equivalent`` when it lies
    within ``(-margin, margin)``, else ``inconclusive``."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    up, down = ("better", "worse") if higher_is_better else ("worse", "better")
    within = (margin > 0) & (low > -margin) & (high < margin)
    return np.select([low > 0, high < 0, within], [up, down, "equivalent"], "inconclusive")


@dataclasses.dataclass(frozen=True, repr=False)
class SequentialComparison:
    """What :func:`compare_sequential` found: the verdict, where it stopped, the sequences and the runs.

    ``to_frame()`` has one row per metric (:data:`DECISION_COLUMNS`): its
    differences ``n``, the means ``base`` and ``head``, the sequence's latest
    ``estimate``, ``ci_low`` and ``ci_high`` at level ``1 - alpha``, the
    ``verdict`` and ``decided_at``, the difference count at which the sequence
    was first decided (NaN if never). ``sequence`` is the tidy table of every
    sequence (:data:`SEQUENCE_COLUMNS`). ``comparison`` is the usual
    :func:`~cogeval.compare_runs` of the two runs (its fixed-n p-values describe
    the cases run; the decision is the sequences').
    """

    verdict: str
    """The run's verdict from the metrics' verdicts: better, worse, equivalent, inconclusive or mixed."""
    stopped_at: int
    """Cases run on each side."""
    planned_cases: int | None
    """The fixed-n plan: cases a fixed-size comparison needs for power 0.8 at the same alpha and margin (the largest
    ``n_needed`` of ``comparison``; with no margin, for the observed difference); None when it cannot be planned."""
    calls_saved: int | None
    """Target calls saved against the fixed-n plan: ``2 · (min(planned_cases, available) - stopped_at)``, where
    ``available`` is the cases there were to run (the dataset, or ``max_cases``): a fixed design cannot run more
    than there are, so a sequence that ran them all saved nothing (negative when more were run than planned)."""
    sequence: pd.DataFrame
    """One row per metric × paired difference: ``metric``, ``n``, ``estimate``, ``ci_low``, ``ci_high``."""
    comparison: RunComparison
    """The usual comparison of the two runs."""
    base: EvalSuiteResult
    """The base target's run of the cases run (an ordinary run: save it, compare it, rescore it)."""
    head: EvalSuiteResult
    """The head target's run of the same cases."""
    method: str
    """The confidence sequence used: ``"planned"``, ``"betting"`` or ``"eb"`` (``"auto"`` resolved)."""
    decisions: pd.DataFrame = dataclasses.field(compare=False)
    """``to_frame()``."""

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: its latest interval and verdict (:data:`DECISION_COLUMNS`)."""
        return self.decisions.copy()

    def plot(self) -> Any:
        """The sequences narrowing to the decision, one panel per metric: :func:`cogeval.present.plot_sequential`,
        through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_sequential")(self)

    def __repr__(self) -> str:
        return (f"SequentialComparison(verdict={self.verdict!r}, stopped_at={self.stopped_at}, "
                f"planned_cases={self.planned_cases}, calls_saved={self.calls_saved})")

    @safe_html
    def _repr_html_(self) -> str:
        summary = key_value_table("Sequential comparison", {
            "head vs base": f"{self.comparison.head.name} vs {self.comparison.base.name}",
            "verdict": self.verdict, "cases run (each side)": self.stopped_at,
            "fixed-n plan (power 0.8)": self.planned_cases, "target calls saved": self.calls_saved,
        })
        return summary + html_table(self.decisions.to_dict("records"), DECISION_COLUMNS)


def compare_sequential(
    dataset: Any,
    base: Any,
    head: Any,
    metrics: Sequence[Any],
    *,
    alpha: float = 0.05,
    margin: float | Mapping[str, float] | None = None,
    batch_size: int = 20,
    max_cases: int | None = None,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    names: tuple[str, str] = ("base", "head"),
    judge: Any = None,
    method: str = "auto",
) -> SequentialComparison:
    """Run ``base`` and ``head`` on ``dataset`` batch by batch; stop once every metric is decided.

    ``metrics`` are per-case metrics, every one deciding; ``margin`` is one
    smallest difference that matters for all of them or ``{name: margin}``;
    ``bounds`` maps a metric to the ``(low, high)`` range of its scores
    (default ``(0, 1)``); ``names`` name the two runs; ``judge`` is
    :class:`~cogeval.EvalSuite`'s; ``method`` is
    :func:`~cogeval.stats.confidence_sequence`'s: ``"planned"`` (bets tuned to
    each metric's margin, which must be > 0), ``"betting"`` or ``"eb"``; the
    default ``"auto"`` is ``"planned"`` when every metric has a margin > 0,
    else ``"betting"`` (the one used is ``method`` of the result). On the
    benchmark ``"planned"`` needed fewer cases than ``"betting"`` at the
    margin, at twice it and at no difference (``docs/sequential.md``). The
    module docstring states the rules. Works in a script and inside Jupyter.

    >>> from cogeval import exact_match
    >>> from cogeval.examples import assistant_v1, assistant_v2, questions
    >>> r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1)
    >>> r.verdict, r.stopped_at, r.planned_cases
    ('better', 80, 342)
    """
    cases = list(as_dataset(dataset))
    order = np.random.default_rng(check_seed("seed", seed)).permutation(len(cases))
    cases = [cases[i] for i in order[: len(cases) if max_cases is None else check_positive_int("max_cases", max_cases)]]
    batch_size = check_positive_int("batch_size", batch_size)
    if not cases:
        raise InputError("dataset must hold at least one case")
    if isinstance(metrics, (str, bytes)) or not isinstance(metrics, Sequence) or not metrics:
        raise InputError(f"metrics must be a non-empty list of per-case metrics; got {describe(metrics)}")
    metric_names = [name for name in (getattr(m, "name", None) for m in metrics) if isinstance(name, str)]
    if len(metric_names) != len(metrics):
        raise InputError(f"metrics must hold per-case metrics (made with metric(...) or the built-ins); got {describe(metrics)}")
    margins = _per_metric("margin", margin, metric_names, 0.0)
    ranges = _per_metric("bounds", bounds, metric_names, (0.0, 1.0))
    level = split_alpha(alpha, len(metrics))
    method = check_choice("method", method, _METHODS)
    if method == "auto":
        method = "planned" if all(margins.values()) else "betting"
    unplanned = [name for name in metric_names if method == "planned" and not margins[name]]
    if unplanned:
        raise InputError(f"method='planned' bets on the margin, and metric {unplanned[0]!r} has none: give "
                         f"margin=... (> 0) for every metric, or use method='betting'")
    _check_names(names)
    targets = {names[0]: base, names[1]: head}

    def sequence(differences: Mapping[str, np.ndarray], name: str) -> ConfidenceSequence:
        lo, hi = ranges[name]
        return confidence_sequence(differences[name], alpha=level, lower=lo - hi, upper=hi - lo, method=method,
                                   effect=margins[name] if method == "planned" else None)

    async def batches() -> tuple[list[EvalSuiteResult], list[EvalSuiteResult], list[EvalSuite]]:
        runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]] = ([], [])
        for start in range(0, len(cases), batch_size):
            step = [EvalSuite(cases[start:start + batch_size], target, metrics=metrics, judge=judge, progress=False,
                              name=name) for name, target in targets.items()]
            for side, result in zip(runs, await arun_interleaved(step)):
                side.append(result)
            differences = _differences(runs, metric_names, ranges)
            if all(_verdicts(*sequence(differences, name).interval, True, margins[name]) != "inconclusive"
                   for name in metric_names):
                break
        return runs[0], runs[1], step

    base_runs, head_runs, last = run_sync(batches())
    stopped_at = sum(len(r.results) for r in base_runs)
    base_run, head_run = (_joined(suite, runs, cases[:stopped_at]) for suite, runs in zip(last, (base_runs, head_runs)))
    comparison = compare_runs(base_run, head_run, alpha=alpha, seed=seed, metrics=metric_names, margins=margins)
    differences = _differences(([base_run], [head_run]), metric_names, ranges)
    sequences, rows = [], []
    for name in metric_names:
        frame = sequence(differences, name).to_frame()
        m = comparison.metrics[name]
        states = _verdicts(frame.ci_low, frame.ci_high, m.higher_is_better, margins[name])
        decided = np.flatnonzero(states != "inconclusive")
        last_row = frame.iloc[-1] if len(frame) else pd.Series(math.nan, SEQUENCE_COLUMNS[1:])
        rows.append({"metric": name, "higher_is_better": m.higher_is_better, "n": len(frame), "base": m.base,
                     "head": m.head, "estimate": last_row.estimate, "ci_low": last_row.ci_low,
                     "ci_high": last_row.ci_high, "alpha": level, "margin": margins[name],
                     "verdict": states[-1] if len(states) else "inconclusive",
                     "decided_at": float(decided[0] + 1) if len(decided) else math.nan})
        sequences.append(frame.assign(metric=name)[SEQUENCE_COLUMNS])
    needed = [m.n_needed for m in comparison.metrics.values()]
    planned = None if None in needed else max(n for n in needed if n is not None)
    return SequentialComparison(
        verdict=overall([row["verdict"] for row in rows]), stopped_at=stopped_at, planned_cases=planned,
        calls_saved=None if planned is None else 2 * (min(planned, len(cases)) - stopped_at),
        sequence=pd.concat(sequences, ignore_index=True), comparison=comparison, base=base_run, head=head_run,
        method=method, decisions=pd.DataFrame(rows, columns=DECISION_COLUMNS),
    )


def _check_names(names: Any) -> None:
    if not isinstance(names, (tuple, list)) or len(names) != 2 or not all(isinstance(n, str) for n in names) \
            or names[0] == names[1]:
        raise InputError(f"names must be two different strings (base, head); got {describe(names)}")


def _per_metric(argument: str, value: Any, names: list[Any], default: Any) -> dict[str, Any]:
    """``margin`` or ``bounds`` for every metric: one value for all (a margin), a mapping by name, or the default."""
    if argument == "margin" and (value is None or not isinstance(value, Mapping)):
        value = dict.fromkeys(names, 0.0 if value is None else value)
    chosen = {**dict.fromkeys(names, default), **(value or {})}
    for name, given in chosen.items():
        if name not in names:
            raise InputError(f"{argument} names {describe(name)}, which is not one of the metrics: {', '.join(map(str, names))}")
        ok = (_finite(given) and given >= 0) if argument == "margin" else (
            isinstance(given, (tuple, list)) and len(given) == 2 and all(map(_finite, given)) and given[0] < given[1])
        if not ok:
            expected = "a finite number >= 0 in the metric's units" if argument == "margin" else "a (low, high) pair, low < high"
            raise InputError(f"{argument}[{name!r}] must be {expected}; got {describe(given)}")
    return {name: (float(v) if argument == "margin" else (float(v[0]), float(v[1]))) for name, v in chosen.items()}


def _finite(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _differences(runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]], names: list[str],
                 ranges: Mapping[str, tuple[float, float]]) -> dict[str, np.ndarray]:
    """Each metric's paired differences ``head - base`` in case order, a case missing a score on either side left out;
    a score outside the metric's bounds raises :class:`InputError` naming the metric, the case and the score."""
    base, head = ([r for result in side for r in result.results] for side in runs)
    out = {}
    for name in names:
        lo, hi = ranges[name]
        pairs = np.array([[_score(r, name) for r in base], [_score(r, name) for r in head]], dtype=float).reshape(2, -1)
        outside = np.flatnonzero((pairs < lo) | (pairs > hi))
        if len(outside):
            side, i = divmod(int(outside[0]), pairs.shape[1])
            raise InputError(f"metric {name!r} scored {pairs[side, i]:g} on case {base[i].case_key[:12]}… "
                             f"({describe(base[i].case.input)}), outside its bounds [{lo:g}, {hi:g}]; "
                             f"give compare_sequential bounds={{{name!r}: (low, high)}}")
        both = ~np.isnan(pairs).any(axis=0)
        out[name] = pairs[1, both] - pairs[0, both]
    return out


def _score(result: Any, name: str) -> float:
    score = result.scores.get(name)
    return math.nan if score is None or score.value is None else float(score.value)


def _joined(suite: Any, batches: list[EvalSuiteResult], cases: list[Any]) -> EvalSuiteResult:
    """One ordinary run of ``cases`` from the runs of its batches: the suite resumes a run holding every batch's
    results (each case's occurrence counted over all of ``cases``), so it asks the target nothing and rebuilds
    the aggregates, statistics and assertions of the whole; the run keeps the first batch's id and start."""
    first = batches[0].run
    seen: dict[str, int] = {}
    results = []
    for record in (r for batch in batches for r in batch.run.results):
        results.append(record.model_copy(update={"occurrence": seen.get(record.case_key, 0)}))
        seen[record.case_key] = seen.get(record.case_key, 0) + 1
    duration = sum(batch.run.stats.duration for batch in batches)
    earlier = first.model_copy(update={
        "results": results, "dataset": DatasetRecord(fingerprint=Dataset(cases).fingerprint, cases=len(cases)),
        "stats": first.stats.model_copy(update={"duration": duration}),
    })
    whole = type(suite)(cases, suite.target, metrics=suite.metrics, judge=suite.judge, progress=False, name=suite.name)
    result: EvalSuiteResult = whole.run(resume=earlier, retry_errors=False)
    return result
