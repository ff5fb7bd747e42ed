"""EvalComparison: run a baseline and a challenger target on one dataset and compare them.

>>> from cogeval import EvalComparison, exact_match
>>> data = [{"input": str(i), "expected": str(i)} for i in range(30)]
>>> result = EvalComparison(data, targets={"baseline": lambda q: "0", "challenger": lambda q: q},
...                         metrics=[exact_match()], progress=False).run()
>>> result.summary["winner"], result.summary["metrics"]["exact_match"]["challenger"]
('challenger', 1.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cogeval._check import describe
from cogeval._html import safe_html
from cogeval.compare.clusters import check_cluster
from cogeval.compare.result import RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.errors import InputError
from cogeval.evaluate.result import EvalSuiteResult
from cogeval.evaluate.suite import EvalSuite, arun_interleaved
from cogeval.execution import run_sync

_SIDES = {"base": "baseline", "head": "challenger", "tie": "tie"}
_ROLES = ("baseline", "challenger")
"""The keys of ``targets``, in the order the runs are compared: base, then head."""


@dataclasses.dataclass(frozen=True)
class ComparisonResult:
    """Both runs and their comparison.

    ``summary`` is ``{"winner": "baseline" | "challenger" | "tie", "verdict":
    the challenger's verdict, "metrics": {name: {baseline, challenger,
    difference, ci_low, ci_high, p_value, adjusted_p_value, significant,
    winner, verdict, role}}}``; ``comparison`` is the full
    :class:`RunComparison` (tables, changes, warnings).
    """

    summary: Mapping[str, Any]
    baseline: EvalSuiteResult
    challenger: EvalSuiteResult
    comparison: RunComparison

    def to_frame(self) -> Any:
        """The comparison table (one row per metric)."""
        return self.comparison.to_frame()

    @property
    def changes(self) -> Any:
        """The changed cases (one row per case × metric)."""
        return self.comparison.changes

    def report(self, kind: str | Sequence[str] = "console", path: Any = "eval-comparison") -> list[str]:
        """Write comparison reports (see :func:`cogeval.report_comparison`)."""
        return self.comparison.report(kind, path)

    def plot(self) -> Any:
        """The forest plot of the metric differences (see :func:`cogeval.plot_comparison`)."""
        return self.comparison.plot()

    def plot_changes(self, metric: str) -> Any:
        """Per-case baseline against challenger for ``metric`` (see :func:`cogeval.plot_changes`)."""
        return self.comparison.plot_changes(metric)

    @safe_html
    def _repr_html_(self) -> str:
        return self.comparison._repr_html_()


def summarise(comparison: RunComparison) -> dict[str, Any]:
    """The ``summary`` of a comparison in baseline/challenger words."""
    metrics = {
        name: {
            "baseline": m.base, "challenger": m.head, "difference": m.difference,
            "ci_low": m.ci.low, "ci_high": m.ci.high, "p_value": m.p_value,
            "adjusted_p_value": m.adjusted_p_value, "significant": m.significant, "winner": _SIDES[m.winner],
            "verdict": m.verdict, "role": m.role,
        }
        for name, m in comparison.metrics.items()
    }
    return {"winner": _SIDES[comparison.winner], "verdict": comparison.verdict, "metrics": metrics}


class EvalComparison:
    """Two targets, one dataset, the same metrics: which target is better?

    ``targets`` is ``{"baseline": ..., "challenger": ...}``: the targets are
    read by those two keys, in either order (any other key, a missing one, or
    not a mapping is an :class:`~cogeval.errors.InputError` naming the keys it
    got); the runs are named ``baseline`` and ``challenger``.
    ``on_progress`` receives ``{target, completed, total, current_case}``.
    ``alpha``, ``test``, ``seed``, ``decide_on``, ``margins`` and ``cluster`` (a case-metadata field or a
    function of the case, for cases that are not independent) are :func:`~cogeval.compare_runs`'s.
    """

    def __init__(
        self,
        dataset: Any,
        targets: Mapping[str, Any],
        metrics: Sequence[Any] = (),
        statistical_metrics: Sequence[Any] = (),
        judge: Any = None,
        concurrency: int = 5,
        timeout: float = 30.0,
        retries: int = 0,
        trials: int = 1,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        progress: bool = True,
        alpha: float = 0.05,
        test: str = "t",
        seed: int | None = 0,
        decide_on: Sequence[str] | None = None,
        margins: Mapping[str, float] | None = None,
        cluster: str | Callable[[Any], Any] | None = None,
    ) -> None:
        targets = {name: target for name, target in zip(_ROLES, _check_targets(targets))}
        self.names = list(_ROLES)
        self.suites = [
            EvalSuite(
                dataset, target, metrics=metrics, statistical_metrics=statistical_metrics, judge=judge,
                concurrency=concurrency, timeout=timeout, retries=retries, trials=trials,
                on_progress=None if on_progress is None else _tagged(on_progress, name),
                progress=progress, name=name,
            )
            for name, target in targets.items()
        ]
        self.alpha, self.test, self.seed = alpha, test, seed
        self.decide_on, self.margins = decide_on, margins
        self.cluster = check_cluster(cluster)

    def run(self) -> ComparisonResult:
        """Run both targets and compare them (also inside a running event loop)."""
        return run_sync(self.arun())

    async def arun(self) -> ComparisonResult:
        """Async form of :meth:`run`.

        The two targets run interleaved (:func:`~cogeval.evaluate.suite.arun_interleaved`):
        each case-trial is answered by both back to back, the baseline first
        on the first case-trial, the challenger first on the next, and so on
        alternately (with one trial: case 0, 2, 4... baseline first; 1, 3,
        5... challenger first), with up to ``concurrency`` case-trials in
        flight; so load that changes over time hits both sides alike and their
        latencies compare fairly.
        """
        baseline, challenger = await arun_interleaved(self.suites)
        comparison = compare_runs(baseline, challenger, alpha=self.alpha, test=self.test, seed=self.seed,
                                  decide_on=self.decide_on, margins=self.margins, cluster=self.cluster)
        return ComparisonResult(summarise(comparison), baseline, challenger, comparison)


def _check_targets(targets: Any) -> tuple[Any, Any]:
    """``(baseline, challenger)``: the targets of ``targets`` read by their keys, whatever their order.

    >>> _check_targets({"challenger": "new", "baseline": "old"})
    ('old', 'new')
    >>> _check_targets({"old": 1, "new": 2})
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: targets must have exactly the keys 'baseline' and 'challenger'; got the keys 'old', 'new'
    """
    expected = "the keys 'baseline' and 'challenger'"
    if not isinstance(targets, Mapping):
        raise InputError(f"targets must be a mapping with {expected} ({{'baseline': ..., 'challenger': ...}}); "
                         f"got {describe(targets)}")
    if set(targets) != set(_ROLES):
        got = f"the keys {', '.join(describe(k) for k in targets)}" if targets else "no keys"
        raise InputError(f"targets must have exactly {expected}; got {got}")
    return targets["baseline"], targets["challenger"]


def _tagged(callback: Callable[[dict[str, Any]], None], name: str) -> Callable[[dict[str, Any]], None]:
    return lambda progress: callback({"target": name, **progress})
