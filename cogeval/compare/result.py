"""The result of comparing two runs: one :class:`MetricComparison` per metric, the changed cases, warnings.

``to_frame()`` is the DESIGN §2 ``comparison`` table (one row per metric);
``changes`` is the ``changes`` table (one row per changed case × metric).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from cogeval import _columns as col
from cogeval._html import badge, escape, html_table, safe_html
from cogeval.stats import Interval

__all__ = ["MetricComparison", "RunComparison", "RunInfo"]

Side = Literal["base", "head", "tie"]
TestName = Literal["mcnemar", "mcnemar-exact", "t", "wilcoxon", "none"]


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """Which run a side of a comparison is."""

    run_id: str | None
    name: str | None
    started_at: str | None


@dataclasses.dataclass(frozen=True)
class MetricComparison:
    """One metric compared on the paired cases.

    ``base`` and ``head`` are the means over the ``n`` pairs, ``difference``
    their paired mean difference (head − base) with its bootstrap ``ci``,
    ``effect_size`` Cohen's d_z, ``test`` the test used, ``p_value`` and the
    Holm-``adjusted_p_value``; ``winner`` is the side the metric's direction
    favours when ``significant``, else ``"tie"``; ``improved`` and
    ``regressed`` count the cases that moved for or against head.
    """

    metric: str
    higher_is_better: bool
    base: float
    head: float
    n: int
    difference: float
    ci: Interval
    effect_size: float
    test: TestName
    p_value: float
    adjusted_p_value: float
    significant: bool
    winner: Side
    improved: int
    regressed: int

    def to_dict(self) -> dict[str, Any]:
        """The row of the comparison table (``ci`` split into ``ci_low``/``ci_high``)."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "ci"}
        row[col.CI_LOW], row[col.CI_HIGH] = self.ci
        return row


@dataclasses.dataclass(frozen=True)
class RunComparison:
    """Head against base, metric by metric (see :func:`compare_runs`).

    ``matched`` counts the paired cases, ``added``/``removed`` the cases only
    head/base has (their keys in ``added_cases``/``removed_cases``).
    """

    base: RunInfo
    head: RunInfo
    winner: Side
    metrics: Mapping[str, MetricComparison]
    matched: int
    added: int
    removed: int
    added_cases: Sequence[str]
    removed_cases: Sequence[str]
    warnings: Sequence[str]
    changes: pd.DataFrame
    alpha: float
    seed: int | None

    def to_frame(self) -> pd.DataFrame:
        """The DESIGN §2 ``comparison`` table, plus ``higher_is_better``, ``improved``, ``regressed``."""
        columns = [*col.COMPARISON_COLUMNS, "higher_is_better", "improved", "regressed"]
        return pd.DataFrame([m.to_dict() for m in self.metrics.values()], columns=columns)

    @property
    def regressions(self) -> list[str]:
        """Metrics on which head is significantly worse."""
        return [name for name, m in self.metrics.items() if m.winner == "base"]

    def report(self, kind: str | Sequence[str] = "console", path: Any = "eval-comparison") -> list[str]:
        """Write comparison reports (see :func:`cogeval.report_comparison`)."""
        from cogeval.present.comparison_report import report_comparison

        return report_comparison(self, kind, path)

    @safe_html
    def _repr_html_(self) -> str:
        marks = {"head": badge("head", "good"), "base": badge("base", "bad"), "tie": badge("tie")}
        rows = [
            {**m.to_dict(), "winner": marks[m.winner], "significant": "yes" if m.significant else "no"}
            for m in self.metrics.values()
        ]
        title = (
            f"{self.head.name or self.head.run_id} vs {self.base.name or self.base.run_id}: "
            f"winner {self.winner} · {self.matched} matched, {self.added} added, {self.removed} removed"
        )
        table = html_table(
            rows,
            [col.METRIC, col.BASE, col.HEAD, col.N, col.DIFFERENCE, col.CI_LOW, col.CI_HIGH, col.EFFECT_SIZE,
             col.TEST, col.P_VALUE, col.ADJUSTED_P_VALUE, col.SIGNIFICANT, col.WINNER, "improved", "regressed"],
            caption=title,
            raw_columns=[col.WINNER],
        )
        notes = "".join(f"<li>{w}</li>" for w in map(escape, self.warnings))
        return table + (f'<div class="cogeval"><ul>{notes}</ul></div>' if notes else "")

