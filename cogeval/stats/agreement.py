"""Agreement between two raters: unweighted Cohen's kappa.

>>> cohen_kappa(["yes", "yes", "no", "no"], ["yes", "no", "no", "no"])
0.5
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from cogeval._check import check_same_length, describe
from cogeval.errors import InputError


def _labels(name: str, labels: Any) -> list[Hashable]:
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Iterable):
        raise InputError(f"{name} must be a sequence of labels (one per item); got {describe(labels)}")
    items = list(labels)
    for position, label in enumerate(items):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            raise InputError(f"{name} must not contain missing labels; found {label!r} at position {position}")
        if not isinstance(label, Hashable):
            raise InputError(f"{name} must hold hashable labels; got {describe(label)} at position {position}")
    return items


def cohen_kappa(labels_a: Any, labels_b: Any) -> float:
    """Unweighted Cohen's kappa, ``(po - pe) / (1 - pe)``, over the union of both raters' labels.

    ``po`` is the share of items given the same label and ``pe`` the agreement
    expected from each rater's label frequencies. Labels are any hashable
    values (strings, ints, bools); the same value means the same category.
    NaN when ``pe`` is 1 (both raters always give one and the same label).
    No items, unequal lengths or missing labels (``None``, NaN) raise ``InputError``:
    drop unrated items first.

    Textbook 2×2 example (both yes 20, A yes B no 5, A no B yes 10, both no 15):
    ``po = 0.7``, ``pe = 0.5``, kappa 0.4.

    >>> cohen_kappa([1, 1, 1], [1, 1, 1])
    nan
    """
    a = _labels("labels_a", labels_a)
    b = _labels("labels_b", labels_b)
    check_same_length("labels_a", a, "labels_b", b)
    if not a:
        raise InputError("labels_a and labels_b must hold at least one rated item; got none")
    codes: dict[Hashable, int] = {}
    code_a = np.array([codes.setdefault(label, len(codes)) for label in a])
    code_b = np.array([codes.setdefault(label, len(codes)) for label in b])
    n = len(a)
    agreed = int(np.count_nonzero(code_a == code_b))
    expected = int(np.dot(np.bincount(code_a, minlength=len(codes)), np.bincount(code_b, minlength=len(codes))))
    if expected == n * n:
        return math.nan
    # (po - pe) / (1 - pe) with po = agreed / n and pe = expected / n², in integers until the last step.
    return (n * agreed - expected) / (n * n - expected)
