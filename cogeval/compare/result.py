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
from cogeval._html import badge, escape, format_value, html_table, key_value_table, safe_html
from cogeval.stats import Interval

__all__ = ["MetricComparison", "RunComparison", "RunInfo"]

Side = Literal["base", "head", "tie"]
TestName = Literal["mcnemar", "mcnemar-exact", "t", "wilcoxon", "none"]


class _Fields:
    """Read a result's fields by name too (``info["run_id"]`` as ``info.run_id``), as issue 4 lists them."""

    def __getitem__(self, name: str) -> Any:
        if isinstance(name, str) and name in self.keys():
            return getattr(self, name)
        raise KeyError(name)

    def keys(self) -> list[str]:
        """The field names, so ``dict(result)`` works."""
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def __contains__(self, name: object) -> bool:
        return name in self.keys()


@dataclasses.dataclass(frozen=True)
class RunInfo(_Fields):
    """Which run a side of a comparison is: ``run_id``, ``name``, ``started_at`` (also readable as ``info["run_id"]``)."""

    run_id: str | None
    name: str | None
    started_at: str | None


@dataclasses.dataclass(frozen=True)
class MetricComparison(_Fields):
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

    @safe_html
    def _repr_html_(self) -> str:
        row = {**self.to_dict(), col.WINNER: _WINNER_BADGES[self.winner]}
        return key_value_table(f"MetricComparison {self.metric}", row, raw_keys=[col.WINNER])


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

    def plot(self) -> Any:
        """The forest plot of the metric differences (see :func:`cogeval.plot_comparison`)."""
        from cogeval.present.plots import plot_comparison

        return plot_comparison(self)

    def plot_changes(self, metric: str) -> Any:
        """Per-case base against head for ``metric`` (see :func:`cogeval.plot_changes`)."""
        from cogeval.present.plots import plot_changes

        return plot_changes(self, metric)

    @safe_html
    def _repr_html_(self) -> str:
        level = f"{100 * (1 - self.alpha):g}% CI"
        rows = [
            {col.METRIC: f"{name} {'↑' if m.higher_is_better else '↓'}", col.BASE: m.base, col.HEAD: m.head,
             col.DIFFERENCE: m.difference, level: f"[{format_value(m.ci.low)}, {format_value(m.ci.high)}]",
             "effect size": m.effect_size, col.TEST: m.test, col.N: m.n, "p": m.p_value, "adjusted p": m.adjusted_p_value,
             col.WINNER: _WINNER_BADGES[m.winner], "improved": m.improved, "regressed": m.regressed}
            for name, m in self.metrics.items()
        ]
        better, worse = sum(m.winner == "head" for m in self.metrics.values()), len(self.regressions)
        verdict = (
            f'<div class="cogeval">{_VERDICT_BADGES[self.winner]} {escape(self.head.name or self.head.run_id)} (head) vs '
            f"{escape(self.base.name or self.base.run_id)} (base) · {better} significantly better, {worse} worse "
            f"of {len(self.metrics)} metrics at α = {escape(self.alpha)} · {self.matched} matched, "
            f"{self.added} added, {self.removed} removed cases</div>"
        )
        table = html_table(
            rows, [col.METRIC, col.BASE, col.HEAD, col.DIFFERENCE, level, "effect size", col.TEST, col.N, "p",
                   "adjusted p", col.WINNER, "improved", "regressed"],
            raw_columns=[col.WINNER],
        )
        notes = "".join(f"<li>{w}</li>" for w in map(escape, self.warnings))
        regressed = self.changes[self.changes[col.DIRECTION] == "regressed"]
        cases = html_table(
            regressed.to_dict("records"), [col.METRIC, col.INPUT, col.BASE, col.HEAD, col.DELTA],
            caption=f"Regressed cases × metrics: {len(regressed)}, largest first (all in .changes)", max_rows=5,
        ) if len(regressed) else ""
        return verdict + table + (f'<div class="cogeval"><ul>{notes}</ul></div>' if notes else "") + cases


_WINNER_BADGES = {"head": badge("head", "good"), "base": badge("base", "bad"), "tie": badge("tie")}
_VERDICT_BADGES = {"head": badge("head wins", "good"), "base": badge("base wins", "bad"), "tie": badge("tie")}
