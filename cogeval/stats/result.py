"""The shapes every statistic returns: :class:`Interval` and :class:`StatResult`.

A result is a frozen dataclass with attribute access, a one-row tidy
``to_frame()`` whose columns are its fields (an interval field becomes
``ci_low``/``ci_high``), and a ``_repr_html_`` that never raises.

>>> Interval(0.1, 0.4).high
0.4
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import pandas as pd

from cogeval._html import key_value_table, safe_html

_STACKED = ("test", "n", "statistic", "p_value")
"""The columns every test's row starts with (a test result has these attributes)."""


class Interval(NamedTuple):
    """A closed interval; ``low, high = interval`` unpacks it."""

    low: float
    high: float


def _columns(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, Interval):
        prefix = "ci" if name in ("ci", "confidence_interval") else name
        return {f"{prefix}_low": value.low, f"{prefix}_high": value.high}
    return {name: value}


@dataclasses.dataclass(frozen=True)
class StatResult:
    """Base of statistical results: tidy one-row frame and a safe HTML view."""

    def to_dict(self) -> dict[str, Any]:
        """Fields as a flat mapping, intervals split into ``*_low``/``*_high``.

        A test's row starts with ``test``, ``n``, ``statistic``, ``p_value``, so rows of
        different tests stack into one tidy table (``pd.concat([r.to_frame() for r in results])``).
        """
        row: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            row.update(_columns(field.name, getattr(self, field.name)))
        return self.stacked(row)

    def stacked(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` led by the :data:`_STACKED` columns when this result is a test (it has ``test``)."""
        if not hasattr(self, "test"):
            return row
        front = {key: getattr(self, key) for key in _STACKED}
        return {**front, **{k: v for k, v in row.items() if k not in front}}

    def to_frame(self) -> pd.DataFrame:
        """One tidy row whose columns are the result's fields."""
        return pd.DataFrame([self.to_dict()])

    @safe_html
    def _repr_html_(self) -> str:
        return key_value_table(type(self).__name__, self.to_dict())
