"""Multiple-testing adjustment of p-values, as R's ``p.adjust``.

``bonferroni``, ``bh`` and ``by`` are statsmodels' ``multipletests``, always
called with an explicit method (its default is Holm-Šidák, ``"hs"``, which R
does not have): ``"bonferroni"``, ``"fdr_bh"``, ``"fdr_by"``. ``holm`` is
Holm's step-down Bonferroni in three lines of numpy, equal to
``multipletests(method="holm")`` (a test checks it) but without the full
garbage collection statsmodels runs on each Holm call. cogeval adds R's
handling of missing values (statsmodels would count a NaN among the tests)
and the input checks. statsmodels is imported only when it is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cogeval._check import as_float_array, check_choice
from cogeval.errors import InputError

METHODS = ("holm", "bonferroni", "bh", "by")
"""The methods :func:`adjust_p_values` accepts (case-insensitive)."""

_STATSMODELS_METHOD = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}
"""cogeval (R) name -> ``multipletests`` method. Never leave it to statsmodels' default (Holm-Šidák)."""


def adjust_p_values(p: Any, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons, as R's ``p.adjust(p, method)``.

    ``method`` is ``"holm"`` (Holm 1979, step-down), ``"bonferroni"``,
    ``"bh"`` (Benjamini-Hochberg false discovery rate) or ``"by"``
    (Benjamini-Yekutieli), case-insensitive. Returns a float array in the
    input order. NaN stays NaN and is not counted among the tests.
    Computed by statsmodels' ``multipletests`` with the matching method
    (``holm``, ``bonferroni``, ``fdr_bh``, ``fdr_by``) on the non-NaN values.

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
    if present.any() and method == "holm":
        adjusted[present] = _holm(values[present])
    elif present.any():
        from statsmodels.stats.multitest import multipletests

        _, corrected, _, _ = multipletests(values[present], method=_STATSMODELS_METHOD[method])
        adjusted[present] = np.minimum(1.0, corrected)
    return adjusted


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: ``cummax((m - i + 1) · p_(i))`` in ascending order, capped at 1.

    The same numbers as ``multipletests(p, method="holm")`` (a test checks it), without the full
    ``gc.collect()`` statsmodels runs on every Holm call (about 60 ms each, measured here), which
    a comparison pays per Holm family and a leaderboard per metric.
    """
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order])
    result = np.empty(len(p))
    result[order] = np.minimum(1.0, steps)
    return result
