"""Multiple-testing adjustment of p-values, as R's ``p.adjust``.

Written with numpy (no statsmodels): statsmodels' ``multipletests`` defaults to
Holm-Šidák, which R does not; here ``holm`` is Holm's step-down Bonferroni.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cogeval._check import as_float_array, check_choice
from cogeval.errors import InputError

__all__ = ["METHODS", "adjust_p_values"]

METHODS = ("holm", "bonferroni", "bh", "by")
"""The methods :func:`adjust_p_values` accepts (case-insensitive)."""


def adjust_p_values(p: Any, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons, as R's ``p.adjust(p, method)``.

    ``method`` is ``"holm"`` (Holm 1979, step-down), ``"bonferroni"``,
    ``"bh"`` (Benjamini-Hochberg false discovery rate) or ``"by"``
    (Benjamini-Yekutieli), case-insensitive. Returns a float array in the
    input order. NaN stays NaN and is not counted among the tests.

    >>> adjust_p_values([0.01, 0.02, 0.03, 0.04, 0.05], "holm")  # R: 0.05 0.08 0.09 0.09 0.09
    array([0.05, 0.08, 0.09, 0.09, 0.09])
    """
    method = check_choice("method", method, METHODS)
    values = as_float_array("p", p, allow_nan=True)
    outside = (values < 0) | (values > 1)
    if outside.any():
        position = int(np.flatnonzero(outside)[0])
        raise InputError(f"p must hold p-values in [0, 1]; got {float(values[position])!r} at position {position}")
    adjusted = np.full(values.shape, np.nan)
    present = ~np.isnan(values)
    adjusted[present] = _adjust(values[present], method)
    return adjusted


def _adjust(p: np.ndarray, method: str) -> np.ndarray:
    n = len(p)
    if n == 0:
        return p
    if method == "bonferroni":
        return np.minimum(1.0, n * p)
    rank = np.arange(1, n + 1)
    if method == "holm":  # ascending: cummax((n - i + 1) * p_(i))
        order = np.argsort(p, kind="stable")
        steps = np.maximum.accumulate((n - rank + 1) * p[order])
    else:  # bh / by, descending: cummin(q * n / i * p_(i)) from the largest p down
        q = float(np.sum(1.0 / rank)) if method == "by" else 1.0
        order = np.argsort(p, kind="stable")[::-1]
        steps = np.minimum.accumulate(q * n / rank[::-1] * p[order])
    result = np.empty(n)
    result[order] = np.minimum(1.0, steps)
    return result
