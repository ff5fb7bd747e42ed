"""Slices: the comparison within each group of cases ("better overall, but worse on billing questions?").

Each slice × metric gets the comparison a whole run gets — paired test, interval inverting it, verdict —
on the cases of that slice. The p-values are Holm-adjusted over every slice × metric of a role (the
deciding metrics are one family, the informing ones another), because looking at many slices is many
tests: with 8 slices × 2 metrics and no real difference anywhere, at least one unadjusted p < 0.05
turns up far more often than 5 % of the time. A slice with fewer than :data:`MIN_SLICE_CASES` paired
cases is reported with its means and ``note``, not tested (``test == "none"``), and takes no share of
the family. A tested slice whose test can say little gets a ``note`` too, in the words the whole
comparison's warnings use (:func:`_slice_note`): an undefined t-test, few paired cases, few discordant pairs.

>>> import pandas as pd
>>> rows = lambda scores: pd.DataFrame({"run_id": "r", "case_key": [f"c{i}" for i in range(40)], "occurrence": 0,
...     "trial": 0, "metric": "exact_match", "score": scores, "error": None, "case_error": False})
>>> labels = {f"c{i}": "billing" if i < 20 else "shipping" for i in range(40)}
>>> table = compare_slices(rows([1.0] * 40), rows([0.0] * 20 + [1.0] * 20), labels, directions={"exact_match": True})
>>> table[["slice", "n", "difference", "verdict"]].values.tolist()
[['billing', 20, -1.0, 'worse'], ['shipping', 20, 0.0, 'inconclusive']]
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval import _numbers as numbers
from cogeval._check import describe
from cogeval.compare.engine import MIN_DISCORDANT, MIN_PAIRS
from cogeval.compare.paired import PairedSample, PairedTest, agreeing_interval, inverted_interval, paired_test
from cogeval.compare.pairing import Pairing, pair_scores
from cogeval.compare.verdicts import equivalent, verdict
from cogeval.data import canonical_json
from cogeval.data.records import ResultRecord
from cogeval.errors import InputError
from cogeval.stats import adjust_p_values, holm_levels

_SLICE = "slice"
MIN_SLICE_CASES = 10
"""A slice with fewer paired cases than this is described, not tested."""

SLICE_COLUMNS = (_SLICE, col.METRIC, "role", col.N, col.BASE, col.HEAD, col.DIFFERENCE, col.CI_LOW, col.CI_HIGH,
                 col.TEST, "statistic", col.P_VALUE, col.ADJUSTED_P_VALUE, col.SIGNIFICANT, "verdict", "note", "clusters")
"""The slices table: one row per slice × metric (``clusters``: the slice's clusters with ``cluster=``, else None)."""


def compare_slices(
    base: pd.DataFrame,
    head: pd.DataFrame,
    labels: Mapping[str, Any] | Callable[[str, int], Any],
    *,
    directions: Mapping[str, bool],
    deciding: set[str] | None = None,
    margins: Mapping[str, float] | None = None,
    alpha: float = 0.05,
    test: str = "t",
) -> pd.DataFrame:
    """The slices table of two score tables (as :func:`~cogeval.compare.compare_scores` takes them).

    ``labels`` maps a case key to its slice (or is a function of ``(case_key, occurrence)``); a case
    without a label (None or NaN) is in no slice. ``deciding`` names the deciding metrics (default:
    all); ``margins`` and ``test`` are as for the whole comparison.
    """
    pairing = pair_scores(base, head, directions=directions)
    keys = pairing.units.get_level_values(0)
    occurrences = pairing.units.get_level_values(1)
    label_of = labels if callable(labels) else (lambda key, _occurrence: labels.get(key))
    unit_labels = np.fromiter(map(label_of, keys, occurrences), dtype=object, count=len(keys))
    return slice_table(pairing, unit_labels, directions=directions, deciding=deciding, margins=margins, alpha=alpha,
                       test=test)


def slice_table(
    pairing: Pairing,
    labels: np.ndarray,
    *,
    directions: Mapping[str, bool],
    deciding: set[str] | None = None,
    margins: Mapping[str, float] | None = None,
    alpha: float = 0.05,
    test: str = "t",
    clusters: np.ndarray | None = None,
) -> pd.DataFrame:
    """:func:`compare_slices` of a pairing whose units' slices are ``labels`` (one per unit of ``pairing.units``).

    ``clusters``: each unit's cluster code (``cluster=``), so each slice is tested on its own clusters."""
    code, found = _factorized(labels)
    slices = sorted(range(len(found)), key=lambda i: str(found[i]))
    deciding = set(directions) if deciding is None else set(deciding)
    margins = dict(margins or {})
    rows, arrays = [], []
    for name in [m for m in directions if m in pairing.base.columns]:
        for i in slices:
            label = found[i]
            b_all, h_all = pairing.base[name].to_numpy(), pairing.head[name].to_numpy()
            sample = PairedSample(b_all, h_all, clusters).take((code == i) & ~(np.isnan(b_all) | np.isnan(h_all)))
            b, h = sample.base, sample.head
            tested = paired_test(sample, test) if len(b) >= MIN_SLICE_CASES else None
            arrays.append((sample, tested))
            rows.append({_SLICE: label, col.METRIC: name, "role": "decides" if name in deciding else "informs",
                         col.N: len(b), col.BASE: float(b.mean()) if len(b) else math.nan,
                         col.HEAD: float(h.mean()) if len(b) else math.nan,
                         col.DIFFERENCE: float(np.mean(sample.d)) if len(b) else math.nan,
                         col.TEST: tested.name if tested else "none",
                         "statistic": tested.statistic if tested else math.nan,
                         col.P_VALUE: float(tested.p_value) if tested else math.nan,
                         "note": None,  # once the verdict is known (_adjust)
                         "clusters": None if clusters is None else sample.groups})
    _adjust(rows, arrays, directions, margins, alpha)
    return pd.DataFrame(rows, columns=list(SLICE_COLUMNS))


@dataclasses.dataclass(frozen=True)
class _Boolean:
    """A bool label kept apart from the number it equals (``True == 1``), as JSON keeps them."""

    value: bool


def _factorized(labels: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Each label's slice number and the slices' labels: ``pd.factorize``, but ``True`` and ``1`` (or
    ``False`` and ``0``) are two slices; None and NaN are in no slice (code -1).

    >>> code, found = _factorized(np.array([True, 1, False, 0, None, True], dtype=object))
    >>> code.tolist(), found
    ([0, 1, 2, 3, -1, 0], [True, 1, False, 0])
    """
    booleans = np.fromiter(map(isinstance, labels, itertools.repeat((bool, np.bool_))), dtype=bool, count=len(labels))
    if booleans.any():
        labels = labels.copy()
        labels[booleans] = [_Boolean(bool(value)) for value in labels[booleans]]
    code, found = pd.factorize(labels)
    return code, [label.value if isinstance(label, _Boolean) else label for label in found]


def _slice_note(sample: PairedSample, tested: PairedTest | None, decision: str = "inconclusive") -> str | None:
    """Why a slice's test says little, in the words the whole comparison's warnings use; None when nothing does.

    Too few cases to test (fewer than :data:`MIN_SLICE_CASES`), the sign test (every paired difference the
    same non-zero number), fewer than :data:`~cogeval.compare.engine.MIN_PAIRS` paired
    cases (when the slice's ``decision``, its verdict, is inconclusive), fewer than
    :data:`~cogeval.compare.engine.MIN_DISCORDANT` discordant pairs on a 0/1 metric; several are joined by ``"; "``.

    >>> _slice_note(PairedSample(np.zeros(4), np.ones(4)), None)
    'too few cases to test: n = 4 < 10'
    >>> half = PairedSample(np.zeros(12), np.full(12, 0.5))
    >>> _slice_note(half, paired_test(half, "t"), "better")
    'every paired difference is +0.5: tested by the exact sign test, p = 2^(1 − 12)'
    """
    n = sample.n
    if tested is None:
        return f"too few cases to test: n = {n} < {MIN_SLICE_CASES}"
    notes = []
    if tested.name.endswith("sign"):
        each = "every cluster's mean difference" if sample.clustered else "every paired difference"
        notes.append(f"{each} is {numbers.signed(float(np.mean(sample.d)))}: tested by the exact sign test, "
                     f"p = 2^(1 − {sample.groups})")
    if tested.name.startswith("clustered") and math.isnan(tested.p_value):
        notes.append(f"the slice's {n} cases are in {sample.groups} cluster(s), so the clustered test is undefined "
                     "(p-value NaN, not significant)")
    if n < MIN_PAIRS and decision == "inconclusive":
        notes.append(f"fewer than {MIN_PAIRS} paired cases: the test has little power, so 'inconclusive' may only "
                     "mean too few cases")
    if tested.name.startswith("mcnemar") and sum(tested.discordant) < MIN_DISCORDANT:
        notes.append(f"fewer than {MIN_DISCORDANT} discordant pairs (cases exactly one run got right): McNemar's "
                     "test can say little")
    return "; ".join(notes) or None


def slice_labels(by: Any, results: Sequence[ResultRecord]) -> np.ndarray:
    """The slice of each result's case: its metadata field ``by`` (a string), or ``by(case)`` (a function); a
    label that cannot be a dict key (a list...) is its JSON. ``results``: one per case to label.
    """
    if not isinstance(by, str) and not callable(by):
        raise InputError(f"by must be a case-metadata field name or a function of the case; got {describe(by)}")
    cases = list(map(operator.attrgetter("case"), results))
    if callable(by):
        labels = np.fromiter((by(case.to_case()) for case in cases), dtype=object, count=len(cases))
    else:
        found = list(map(operator.attrgetter("metadata"), cases))
        metadata = [m if isinstance(m, dict) else {} for m in found]
        if not any(map(operator.contains, metadata, itertools.repeat(by))):
            seen = set().union(*metadata)
            raise InputError(f"by={by!r}: no case of either run has a metadata field {by!r} "
                             f"(fields seen: {', '.join(sorted(seen)) or 'none'})")
        labels = np.fromiter(map(dict.get, metadata, itertools.repeat(by)), dtype=object, count=len(cases))
    return keyable(labels)


def keyable(labels: np.ndarray) -> np.ndarray:
    """``labels`` (an object array) with each label that cannot be a dict key (a list, a dict...) replaced by its
    canonical JSON, in place: the rule of slice and cluster labels.

    >>> keyable(np.array(["a", ["x", 1], None], dtype=object)).tolist()
    ['a', '["x",1]', None]
    """
    plain = np.fromiter(map(isinstance, labels, itertools.repeat((str, int, float, type(None)))), dtype=bool,
                        count=len(labels))
    for i in np.flatnonzero(~plain):
        if not _hashable(labels[i]):
            labels[i] = canonical_json(labels[i])
    return labels


def slice_warnings(table: pd.DataFrame) -> list[str]:
    """One warning naming the slices too small to test."""
    small = table[table[col.TEST] == "none"].drop_duplicates(_SLICE)
    if small.empty:
        return []
    named = ", ".join(f"{label!r} ({n})" for label, n in zip(small[_SLICE], small[col.N]))
    return [f"Slices with fewer than {MIN_SLICE_CASES} paired cases were described, not tested: {named}"]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _adjust(rows: list[dict[str, Any]], arrays: list[Any], directions: Mapping[str, bool],
            margins: Mapping[str, float], alpha: float) -> None:
    """Holm over every tested slice × metric of a role; then each row's interval, significance and verdict."""
    adjusted = [math.nan] * len(rows)
    levels = [math.nan] * len(rows)
    for role in ("decides", "informs"):
        family = [i for i, row in enumerate(rows) if row["role"] == role and not math.isnan(row[col.P_VALUE])]
        p = [rows[i][col.P_VALUE] for i in family]
        if family:
            for i, a, level in zip(family, adjust_p_values(p, "holm").tolist(), holm_levels(p, alpha).tolist()):
                adjusted[i], levels[i] = a, level
    for i, (row, (sample, tested)) in enumerate(zip(rows, arrays)):
        significant = bool(adjusted[i] < alpha)
        if tested is None:
            low = high = math.nan
            row.update({col.ADJUSTED_P_VALUE: math.nan, col.SIGNIFICANT: False, "verdict": "inconclusive"})
        else:
            interval = agreeing_interval(inverted_interval(sample, tested, levels[i]), significant, tested.side)
            low, high = interval
            margin = margins.get(row[col.METRIC], 0.0)
            row.update({col.ADJUSTED_P_VALUE: adjusted[i], col.SIGNIFICANT: significant,
                        "verdict": verdict(interval, directions[row[col.METRIC]], margin,
                                           equivalent(sample, margin, alpha))})
        row.update({col.CI_LOW: low, col.CI_HIGH: high, "note": _slice_note(sample, tested, row["verdict"])})
