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
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval.errors import InputError

CASE_ERROR = "case_error"
"""Boolean column of a score table: the target failed on this case and trial."""

_UNIT = [col.CASE_KEY, col.OCCURRENCE]
REQUIRED = (col.CASE_KEY, col.OCCURRENCE, col.TRIAL, col.METRIC, col.SCORE, CASE_ERROR)
"""The columns of a score table."""
SCORED = (col.METRIC, col.SCORE, CASE_ERROR)
"""The columns of a score table whose rows' units are given as :class:`UnitCodes`."""


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


def check_scores(name: str, frame: object, required: Sequence[str] = REQUIRED) -> pd.DataFrame:
    """Refuse anything but a DataFrame with the ``required`` columns (the score-table columns plus ``case_error``)."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{name} must be a pandas DataFrame of scores; got {type(frame).__name__}")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name} is missing the column(s) {', '.join(missing)}; a score table needs "
            f"{', '.join(required)} (it has: {', '.join(map(str, frame.columns))})"
        )
    try:
        frame[col.SCORE].astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{name}[{col.SCORE!r}] must hold numbers (NaN for a failed cell)") from None
    return frame


def metrics_of(frame: pd.DataFrame) -> list[str]:
    """The metrics of a score table, in order of first appearance."""
    return [str(m) for m in pd.unique(frame[col.METRIC]) if not pd.isna(m)]


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
    if isinstance(groups, pd.MultiIndex):
        groups = groups.set_names(values.index.names)
    return pd.Series(_group_means(codes, values.to_numpy(dtype=float), len(groups)), index=groups)


def _group_means(codes: np.ndarray, x: np.ndarray, groups: int) -> np.ndarray:
    """The order-independent mean of :func:`trial_means` of ``x`` in each group ``0 .. groups - 1`` of ``codes``.

    NaN is skipped; a group with no value (or only NaN) gets NaN.
    """
    if not len(codes) or np.bincount(codes).max() == 1:
        # One value per group: the two-pass mean below is v + (v - v), i.e. v but -0.0 -> 0.0 and ±inf -> NaN.
        alone = np.full(groups, np.nan)
        with np.errstate(invalid="ignore"):
            alone[codes] = x + (x - x)
        return alone
    present = ~np.isnan(x)
    order = np.lexsort((x, codes))
    order = order[present[order]]
    code, value = codes[order], x[order]
    count = np.bincount(code, minlength=groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        first = _ordered_sums(code, value, groups) / count
        residual = value - first[code]
        means: np.ndarray = first + _ordered_sums(code, residual, groups) / count
    return means


def _ordered_sums(code: np.ndarray, value: np.ndarray, groups: int) -> np.ndarray:
    """Per-group sums of ``value`` (grouped by ascending ``code``), each summed left to right."""
    sums = np.zeros(groups)
    if len(code):
        starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
        sums[code[starts]] = np.add.reduceat(value, starts)
    return sums


def _joint_codes(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> list[np.ndarray]:
    """One int64 code per row of each frame for its values in ``columns``: rows with equal values get equal codes,
    across all the frames, numbered in order of first appearance (hashing, no Python per row; NaN is a value).

    >>> a = pd.DataFrame({"case_key": ["x", "y", "x"], "occurrence": [0, 0, 1]})
    >>> b = pd.DataFrame({"case_key": ["x", "z"], "occurrence": [1, 0]})
    >>> [codes.tolist() for codes in _joint_codes([a, b], ["case_key", "occurrence"])]
    [[0, 1, 2], [2, 3]]
    """
    sizes = [len(frame) for frame in frames]
    def factorized(column: str) -> tuple[np.ndarray, pd.Index]:
        return pd.factorize(pd.concat([frame[column] for frame in frames], ignore_index=True), use_na_sentinel=False)

    code = factorized(columns[0])[0]
    for column in columns[1:]:
        level, uniques = factorized(column)
        code = pd.factorize(code * len(uniques) + level)[0]  # below the number of rows squared: never overflows
    return np.split(code.astype(np.int64), np.cumsum(sizes)[:-1])


class UnitCodes(NamedTuple):
    """Each row's unit as one number: ``(key + 1) × (len(occurrences) + 1) + occurrence + 1`` for its codes in
    ``keys`` and ``occurrences`` (code -1: a missing value).

    Tables coded over the same ``keys`` and ``occurrences`` (:func:`unit_codes` of them all at once) pair on
    these numbers alone, with no hashing of case keys.
    """

    ids: np.ndarray
    keys: pd.Index
    occurrences: pd.Index

    def key(self) -> np.ndarray:
        """Each row's code in ``keys``."""
        return _parts(self.ids, self.occurrences)[0]

    def take(self, rows: np.ndarray) -> UnitCodes:
        """The codes of ``rows`` (positions)."""
        return self._replace(ids=self.ids[rows])


def unit_codes(*frames: pd.DataFrame) -> list[UnitCodes]:
    """The :class:`UnitCodes` of each frame's rows over the case keys and occurrences of all the frames, each
    numbered in order of first appearance.

    >>> a = pd.DataFrame({"case_key": ["x", "y", "x"], "occurrence": [0, 0, 1]})
    >>> codes = unit_codes(a, pd.DataFrame({"case_key": ["z", "x"], "occurrence": [0, 1]}))
    >>> [c.ids.tolist() for c in codes], [c.key().tolist() for c in codes], codes[0].keys.tolist()
    ([[4, 7, 5], [10, 5]], [[0, 1, 0], [2, 0]], ['x', 'y', 'z'])
    """
    def factorized(column: str) -> tuple[np.ndarray, pd.Index]:
        values = frames[0][column] if len(frames) == 1 else pd.concat([f[column] for f in frames], ignore_index=True)
        return pd.factorize(values)

    bounds = np.cumsum([len(frame) for frame in frames])[:-1]
    (key, keys), (occurrence, occurrences) = (factorized(column) for column in _UNIT)
    return [UnitCodes(ids, keys, occurrences) for ids in np.split(_ids(key, occurrence, occurrences), bounds)]


def unit_ids(units: pd.MultiIndex) -> np.ndarray:
    """One number per unit of ``units`` (a MultiIndex over :class:`UnitCodes`' levels): its rows' ``ids``."""
    return _ids(units.codes[0], units.codes[1], units.levels[1])


def _ids(key: np.ndarray, occurrence: np.ndarray, occurrences: pd.Index) -> np.ndarray:
    """``(key, occurrence)`` codes (-1: missing) as one number: below (keys + 1) × (occurrences + 1), no overflow."""
    width = len(occurrences) + 1
    return (key.astype(np.int64) + 1) * width + occurrence.astype(np.int64) + 1


def _parts(ids: np.ndarray, occurrences: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The ``(key, occurrence)`` codes of :func:`_ids`' numbers."""
    width = len(occurrences) + 1
    return ids // width - 1, ids % width - 1


UnitValues = tuple[pd.MultiIndex, pd.DataFrame, pd.Series]
"""A run's units, its ``units × metrics`` values and its errored flags (:func:`unit_values`)."""


def unit_values(frame: pd.DataFrame, directions: Mapping[str, bool], codes: UnitCodes | None = None) -> UnitValues:
    """One run's units (first-appearance order), its ``units × metrics`` values and errored flags.

    ``codes``: the rows' units (:func:`unit_codes`), when known; they alone are read, not ``case_key`` and
    ``occurrence``.
    """
    failed = frame[CASE_ERROR].fillna(False).to_numpy(dtype=bool)
    codes = unit_codes(frame)[0] if codes is None else codes
    # The units numbered in order of first appearance, each made of its (key, occurrence) codes again.
    unit, ids = pd.factorize(codes.ids)
    levels: list[Any] = [codes.keys, codes.occurrences]
    pairs: list[Any] = list(_parts(ids, codes.occurrences))
    units = pd.MultiIndex(levels=levels, codes=pairs, names=_UNIT, verify_integrity=False)
    errored = np.bincount(unit, weights=~failed, minlength=len(units)) == 0

    names = list(directions)
    metric_code, metric_names = pd.factorize(frame[col.METRIC])
    metric = np.append(pd.Index(names).get_indexer(metric_names), -1)[metric_code]  # no metric (code -1): -1
    rows = metric >= 0
    higher = np.array([directions[m] for m in names], dtype=bool)
    metric = metric[rows]
    value = np.where(failed[rows], np.where(higher[metric], 0.0, np.nan), frame[col.SCORE].to_numpy(dtype=float)[rows])
    means = _group_means(unit[rows] * len(names) + metric, value, len(units) * len(names))
    wide = pd.DataFrame(means.reshape(len(units), len(names)), index=units,
                        columns=pd.Index(names, dtype=object, name=col.METRIC))
    # A unit failed in every trial may have no row for a metric at all.
    if higher.any() and errored.any():
        wide.loc[errored, higher] = 0.0
    return units, wide, pd.Series(errored, index=units)


def pair_scores(base: pd.DataFrame, head: pd.DataFrame, *, directions: Mapping[str, bool]) -> Pairing:
    """Pair ``base`` and ``head`` score tables on ``(case_key, occurrence)`` for the metrics of ``directions``.

    ``directions`` maps each metric to pair to ``higher_is_better`` (it decides
    what a failed trial is worth, see the module docstring). Matched units are
    in base order.
    """
    base = check_scores("base", base)
    head = check_scores("head", head)
    base_codes, head_codes = unit_codes(base, head)
    return pair_units(unit_values(base, directions, base_codes), unit_values(head, directions, head_codes))


def pair_units(base: UnitValues, head: UnitValues) -> Pairing:
    """Pair two runs' :func:`unit_values` (as :func:`pair_scores` does), e.g. when one run meets many others."""
    base_units, base_wide, base_errored = base
    head_units, head_wide, head_errored = head
    base_ids, head_ids = _paired_ids(base_units, head_units)
    where = pd.Index(head_ids).get_indexer(base_ids)  # each base unit's position in head, -1 when head lacks it
    in_head = where >= 0
    units = base_units[in_head]
    base_values = base_wide.iloc[np.flatnonzero(in_head)]
    head_values = head_wide.iloc[where[in_head]].set_axis(units)
    b_err = base_errored.to_numpy(dtype=bool)[in_head]
    h_err = head_errored.to_numpy(dtype=bool)[where[in_head]]
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
        added=head_units[~pd.Index(head_ids).isin(base_ids)],
        removed=base_units[~in_head],
    )


def _paired_ids(base: pd.MultiIndex, head: pd.MultiIndex) -> list[np.ndarray]:
    """One number per unit of ``base`` and of ``head``, equal for equal units: their :func:`unit_ids` when both
    have the same levels (units of tables coded at once), else their values' :func:`_joint_codes`."""
    if all(mine.equals(theirs) for mine, theirs in zip(base.levels, head.levels)):
        return [unit_ids(base), unit_ids(head)]
    return _joint_codes([base.to_frame(index=False), head.to_frame(index=False)], _UNIT)


_KINDS = ("pass^", "pass@")
"""The derived rows of a 0/1 metric over k trials: ``pass^k`` (a case passes when all k trials score 1) and
``pass@k`` (when any trial does)."""


@dataclasses.dataclass(frozen=True)
class _Reliability:
    """Two score tables with the derived ``pass^k``/``pass@k`` rows of :func:`with_reliability` appended.

    ``derived`` maps each derived metric (``"exact_match.pass^3"``) to the metric it comes from; ``codes`` are the
    units of both tables' rows, appended rows included; ``trials`` the trials per case of each run (the most any
    case has); ``notes`` say what the rows left out or shortened, each with the derived metrics it concerns.
    """

    base: pd.DataFrame
    head: pd.DataFrame
    codes: list[UnitCodes]
    derived: dict[str, str]
    trials: tuple[int, int]
    notes: list[tuple[tuple[str, ...], str]]


def _trials_per_case(frame: pd.DataFrame, codes: UnitCodes) -> int:
    """The most trials (distinct ``trial`` values) any unit of ``frame`` has; 1 for a table without trials."""
    if col.TRIAL not in frame.columns or not len(frame):
        return 1
    trial = frame[col.TRIAL].to_numpy(dtype=np.int64)
    width = int(trial.max()) + 1
    if width < 2:
        return 1
    unit = pd.unique(codes.ids * width + trial) // width  # one entry per distinct (unit, trial)
    return int(np.bincount(pd.factorize(unit)[0]).max())


def _binary_metrics(frame: pd.DataFrame) -> set[str]:
    """The metrics of ``frame`` whose every score (NaN aside) is 0 or 1."""
    scores = frame[col.SCORE].to_numpy(dtype=float)
    other = ~np.isnan(scores) & ~np.isin(scores, (0.0, 1.0))
    return set(metrics_of(frame)) - {str(m) for m in pd.unique(frame[col.METRIC].to_numpy()[other]) if not pd.isna(m)}


def _pass_rows(frame: pd.DataFrame, codes: UnitCodes, metric: str, k: int) -> tuple[pd.DataFrame, np.ndarray, int]:
    """The ``pass^k`` and ``pass@k`` rows of ``metric`` (metric, score, case_error, trial 0), their unit ids, and
    how many units were left out for having fewer than ``k`` valued trials.

    A unit's trials are its rows of ``metric`` and its bare failed rows (a result the target failed on, with no
    score at all), in trial order; the first ``k`` count. A failed trial scores 0; a unit whose first ``k`` trials
    do not all have a value gets no row. A derived row is a ``case_error`` when every trial counted failed, so a
    unit failed in every trial stays errored.
    """
    failed = frame[CASE_ERROR].fillna(False).to_numpy(dtype=bool)
    names = frame[col.METRIC]
    rows = np.flatnonzero((names == metric).to_numpy(dtype=bool) | (names.isna().to_numpy() & failed))
    ids, trial = codes.ids[rows], frame[col.TRIAL].to_numpy(dtype=np.int64)[rows]
    value = np.where(failed[rows], 0.0, frame[col.SCORE].to_numpy(dtype=float)[rows])
    order = np.lexsort((trial, ids))
    ids, trial, value, failed = ids[order], trial[order], value[order], failed[rows][order]
    first = np.r_[True, (ids[1:] != ids[:-1]) | (trial[1:] != trial[:-1])]  # one row per (unit, trial)
    ids, value, failed = ids[first], value[first], failed[first]
    new = np.r_[True, ids[1:] != ids[:-1]] if len(ids) else np.zeros(0, dtype=bool)
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    counted = (np.arange(len(ids)) - starts[group]) < k
    groups = len(starts)
    valued = np.bincount(group[counted & ~np.isnan(value)], minlength=groups)
    ones = np.bincount(group[counted & (value == 1.0)], minlength=groups)
    errors = np.bincount(group[counted & failed], minlength=groups)
    complete = valued == k
    unit = ids[starts][complete]
    scores = {"pass^": (ones == k)[complete], "pass@": (ones > 0)[complete]}
    error = (errors == k)[complete]
    table = pd.DataFrame({
        col.METRIC: np.repeat([f"{metric}.{kind}{k}" for kind in _KINDS], len(unit)).astype(object),
        col.SCORE: np.concatenate([scores[kind] for kind in _KINDS]).astype(float),
        CASE_ERROR: np.tile(error, 2), col.TRIAL: 0,
    })
    return table, np.tile(unit, 2), int((~complete).sum())


def with_reliability(base: pd.DataFrame, head: pd.DataFrame, codes: Sequence[UnitCodes],
                     directions: Mapping[str, bool]) -> _Reliability:
    """``base`` and ``head`` with the rows ``"{metric}.pass^{k}"`` and ``"{metric}.pass@{k}"`` of each 0/1 metric
    when both runs have k ≥ 2 trials per case.

    A metric gets them when both tables score it, it is higher-is-better in ``directions`` and every score of it
    in both is 0 or 1. ``k`` is the smaller of the runs' trials per case (:func:`_trials_per_case`): each case's
    first ``k`` trials by trial index count, and a note says so when the runs differ. Each derived row is one
    0/1 value per case, compared like any 0/1 metric (McNemar on the paired indicators).

    >>> rows = lambda scores: pd.DataFrame({"case_key": ["a", "a", "b", "b"], "occurrence": 0, "trial": [0, 1] * 2,
    ...     "metric": "exact_match", "score": scores, "case_error": False})
    >>> base, head = rows([1.0, 0, 1, 1]), rows([1.0, 1, 0, 0])
    >>> r = with_reliability(base, head, unit_codes(base, head), {"exact_match": True})
    >>> r.derived, r.trials
    ({'exact_match.pass^2': 'exact_match', 'exact_match.pass@2': 'exact_match'}, (2, 2))
    >>> r.base.iloc[4:][["metric", "score"]].values.tolist()
    [['exact_match.pass^2', 0.0], ['exact_match.pass^2', 1.0], ['exact_match.pass@2', 1.0], ['exact_match.pass@2', 1.0]]
    """
    codes = list(codes)
    trials = (_trials_per_case(base, codes[0]), _trials_per_case(head, codes[1]))
    k = min(trials)
    if k < 2:
        return _Reliability(base, head, codes, {}, trials, [])
    binary = _binary_metrics(base) & _binary_metrics(head)
    metrics = [m for m in metrics_of(base) if m in binary and directions.get(m) is True]
    derived: dict[str, str] = {}
    notes: list[tuple[tuple[str, ...], str]] = []
    frames: list[list[pd.DataFrame]] = [[base], [head]]
    ids: list[list[np.ndarray]] = [[codes[0].ids], [codes[1].ids]]
    for metric in metrics:
        left_out = []
        for side, (frame, coded) in enumerate(zip((base, head), codes)):
            rows, unit, short = _pass_rows(frame, coded, metric, k)
            frames[side].append(rows)
            ids[side].append(unit)
            left_out.append(short)
        names = [f"{metric}.{kind}{k}" for kind in _KINDS]
        derived.update(dict.fromkeys(names, metric))
        if any(left_out):
            notes.append((tuple(names), f"Metrics {names[0]!r} and {names[1]!r}: {left_out[0]} case(s) in the base "
                          f"run and {left_out[1]} in the head run have fewer than {k} scored trials and were left out"))
    if metrics and trials[0] != trials[1]:
        notes.insert(0, (tuple(derived), f"The base run has {trials[0]} trials per case and the head run {trials[1]}: "
                                         f"the pass^{k} and pass@{k} rows use the first {k} trials of each case "
                                         "(by trial index)"))
    if not metrics:
        return _Reliability(base, head, codes, {}, trials, [])
    tables = [pd.concat(parts, ignore_index=True) for parts in frames]
    joined = [c._replace(ids=np.concatenate(parts)) for c, parts in zip(codes, ids)]
    return _Reliability(tables[0], tables[1], joined, derived, trials, notes)
