"""Pair two tidy score tables case by case: the unit, trial and error rules of a comparison.

A *unit* is one ``(case_key, occurrence)``: a repeated case is paired with
the same occurrence of it in the other run. Each side's scores are first
averaged over the unit's trials (trials are a cluster, not independent cases;
the mean does not depend on the trials' order, see :func:`trial_means`),
after replacing the score of a trial on which the target failed (``case_error``):

- by 0 on a higher-is-better metric: a failure earns nothing;
- by nothing (the trial is left out) on a lower-is-better metric, where 0
  would be the best possible score (0 s latency, $0 cost).

A unit the target failed on in every trial, in both runs, is left out of every
metric (NaN on both sides). A unit with no value on a side is NaN there.

>>> import pandas as pd
>>> def table(rows):
...     return pd.DataFrame(rows, columns=["case_key", "occurrence", "trial", "metric", "score", "case_error"])
>>> base = table([("a", 0, 0, "exact_match", 1.0, False), ("b", 0, 0, "exact_match", 0.0, False)])
>>> head = table([("a", 0, 0, "exact_match", 0.0, False), ("a", 0, 1, "exact_match", 1.0, False),
...               ("c", 0, 0, "exact_match", 1.0, False)])
>>> p = pair_scores(base, head, directions={"exact_match": True})
>>> list(p.units), list(p.added), list(p.removed)
([('a', 0)], [('c', 0)], [('b', 0)])
>>> p.base["exact_match"].tolist(), p.head["exact_match"].tolist()
([1.0], [0.5])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval.errors import InputError

CASE_ERROR = "case_error"
"""Boolean column of a score table: the target failed on this case and trial."""

_UNIT = [col.CASE_KEY, col.OCCURRENCE]
_REQUIRED = (col.CASE_KEY, col.OCCURRENCE, col.TRIAL, col.METRIC, col.SCORE, CASE_ERROR)


@dataclasses.dataclass(frozen=True)
class Pairing:
    """Two runs' per-unit values, aligned on the units both have.

    ``base`` and ``head`` are ``units × metrics`` frames of trial-averaged
    values with the error rules applied (NaN: no value, the unit is left out of
    that metric); ``base_errored``/``head_errored`` flag the units the target
    failed on in every trial. ``added``/``removed`` are the units only head /
    only base has, in the order they first appear in that run.
    """

    units: pd.MultiIndex
    base: pd.DataFrame
    head: pd.DataFrame
    base_errored: np.ndarray
    head_errored: np.ndarray
    added: pd.MultiIndex
    removed: pd.MultiIndex


def check_scores(name: str, frame: object) -> pd.DataFrame:
    """Refuse anything but a DataFrame with the score-table columns plus ``case_error``."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{name} must be a pandas DataFrame of scores; got {type(frame).__name__}")
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name} is missing the column(s) {', '.join(missing)}; a score table needs "
            f"{', '.join(_REQUIRED)} (it has: {', '.join(map(str, frame.columns))})"
        )
    try:
        frame[col.SCORE].astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{name}[{col.SCORE!r}] must hold numbers (NaN for a failed cell)") from None
    return frame


def metrics_of(frame: pd.DataFrame) -> list[str]:
    """The metrics of a score table, in order of first appearance."""
    return [str(m) for m in pd.unique(frame[col.METRIC].dropna())]


def trial_means(values: pd.Series) -> pd.Series:
    """The mean of each index group of ``values`` (NaN skipped), bit for bit the same whatever the order of its rows.

    Each group's values are put in ascending order and summed, then the mean
    is corrected by the mean of its residuals (the two-pass mean R's ``mean``
    uses); nothing depends on the order of the rows or on the other groups, so
    the same trials give the same mean in every run.

    >>> index = pd.Index(["a", "a", "a", "b"])
    >>> trial_means(pd.Series([0.3, 0.1, 0.2, 5.0], index)).tolist()
    [0.2, 5.0]
    >>> trial_means(pd.Series([0.2, 0.3, 0.1, 7.0], index)).tolist()
    [0.2, 7.0]
    """
    codes, groups = pd.factorize(values.index, sort=True)
    x = values.to_numpy(dtype=float)
    present = ~np.isnan(x)
    order = np.lexsort((x, codes))
    order = order[present[order]]  # NaN is skipped; a group of only NaN gets NaN
    code, value = codes[order], x[order]
    count = np.bincount(code, minlength=len(groups)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        first = _ordered_sums(code, value, len(groups)) / count
        residual = value - first[code]
        means = first + _ordered_sums(code, residual, len(groups)) / count
    if isinstance(groups, pd.MultiIndex):
        groups = groups.set_names(values.index.names)
    return pd.Series(means, index=groups)


def _ordered_sums(code: np.ndarray, value: np.ndarray, groups: int) -> np.ndarray:
    """Per-group sums of ``value`` (grouped by ascending ``code``), each summed left to right."""
    sums = np.zeros(groups)
    if len(code):
        starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
        sums[code[starts]] = np.add.reduceat(value, starts)
    return sums


UnitValues = tuple[pd.MultiIndex, pd.DataFrame, pd.Series]
"""A run's units, its ``units × metrics`` values and its errored flags (:func:`unit_values`)."""


def unit_values(frame: pd.DataFrame, directions: Mapping[str, bool]) -> UnitValues:
    """One run's units (first-appearance order), its ``units × metrics`` values and errored flags."""
    failed = frame[CASE_ERROR].fillna(False).astype(bool)
    units = pd.MultiIndex.from_frame(frame[_UNIT].drop_duplicates())
    errored = failed.groupby([frame[col.CASE_KEY], frame[col.OCCURRENCE]], sort=False).all().reindex(units)

    rows = frame[frame[col.METRIC].isin(list(directions))]
    higher = rows[col.METRIC].map(directions).to_numpy(dtype=bool)
    failure = np.where(higher, 0.0, np.nan)
    value = np.where(failed.loc[rows.index].to_numpy(), failure, rows[col.SCORE].to_numpy(dtype=float))
    wide = (
        trial_means(pd.Series(value, index=pd.MultiIndex.from_frame(rows[[*_UNIT, col.METRIC]])))
        .unstack(col.METRIC)
        .reindex(index=units, columns=list(directions))
    )
    # A unit failed in every trial may have no row for a metric at all.
    higher_metrics = [m for m, up in directions.items() if up]
    if higher_metrics and errored.any():
        wide.loc[errored.to_numpy(), higher_metrics] = 0.0
    return units, wide, errored


def pair_scores(base: pd.DataFrame, head: pd.DataFrame, *, directions: Mapping[str, bool]) -> Pairing:
    """Pair ``base`` and ``head`` score tables on ``(case_key, occurrence)`` for the metrics of ``directions``.

    ``directions`` maps each metric to pair to ``higher_is_better`` (it decides
    what a failed trial is worth, see the module docstring). Matched units are
    in base order.
    """
    base = check_scores("base", base)
    head = check_scores("head", head)
    return pair_units(unit_values(base, directions), unit_values(head, directions))


def pair_units(base: UnitValues, head: UnitValues) -> Pairing:
    """Pair two runs' :func:`unit_values` (as :func:`pair_scores` does), e.g. when one run meets many others."""
    base_units, base_wide, base_errored = base
    head_units, head_wide, head_errored = head
    in_head = base_units.isin(head_units)
    units = base_units[in_head]
    base_values = base_wide.reindex(units)
    head_values = head_wide.reindex(units)
    b_err = base_errored.reindex(units).to_numpy(dtype=bool)
    h_err = head_errored.reindex(units).to_numpy(dtype=bool)
    both = b_err & h_err
    if both.any():
        base_values.loc[both, :] = np.nan
        head_values.loc[both, :] = np.nan
    return Pairing(
        units=units,
        base=base_values,
        head=head_values,
        base_errored=b_err,
        head_errored=h_err,
        added=head_units[~head_units.isin(base_units)],
        removed=base_units[~in_head],
    )
