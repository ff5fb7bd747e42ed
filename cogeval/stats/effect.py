"""Effect size of a paired comparison: Cohen's d_z.

>>> round(cohens_d([0.9, 0.8, 0.7, 0.95], [0.6, 0.7, 0.65, 0.5]), 4)
1.2173
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cogeval._check import as_float_array, check_same_length


def cohens_d(a: Any, b: Any) -> float:
    """Paired Cohen's d_z: ``mean(a - b) / sd(a - b)``, the sd with ddof=1.

    Positive when ``a`` is larger. It equals the paired t statistic divided by
    ``sqrt(n)``, so it is NaN exactly when that t is undefined: fewer than 2
    pairs, every difference equal (sd 0), or differences constant up to
    rounding (as R's ``t.test``: standard error < 10·ε·|mean difference|).
    NaN in either sample or unequal lengths raise ``InputError``.

    R's ``sleep`` data: ``d <- extra[1:10] - extra[11:20]; mean(d) / sd(d)``
    is -1.284558.

    >>> cohens_d([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    nan
    """
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    if len(x) < 2:
        return math.nan
    difference = x - y
    mean = float(difference.mean())
    sd = float(difference.std(ddof=1))
    if sd / math.sqrt(len(difference)) < 10 * np.finfo(float).eps * abs(mean) or sd == 0:
        return math.nan
    return mean / sd
