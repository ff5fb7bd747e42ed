"""Prediction-powered inference: a judge's scores on every case, corrected by people's labels on a few.

An LLM judge is cheap but biased; people are right but expensive. PPI
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, Science 382:669-674)
uses the judge on all cases and a random sample of human labels to measure and
remove the judge's bias, giving a valid interval for the mean human score that
is narrower than the humans-only one when the judge agrees with people.

The rules:

- one row per case: ``judge`` holds the judge's score of every case, ``labels``
  the human label of the same case, NaN where no person labelled it;
- the labelled cases must be a random sample of the cases, chosen without
  looking at any score (otherwise no method can remove the bias);
- the power-tuned estimate of PPI++ (Angelopoulos, Duchi & Zrnic 2023,
  arXiv:2311.01453), ``λ·mean(judge, unlabelled) + mean(label - λ·judge, labelled)``,
  with λ in [0, 1] chosen from the data to make the interval narrowest, as
  ``ppi_py.ppi_mean_ci`` does by default; λ = 0 is the humans-only estimate;
- intervals are two-sided normal (z) intervals at level ``1 - alpha``.

>>> judge = [0.9, 0.8, 0.4, 0.7, 1.0, 0.3, 0.6, 0.9, 0.5, 0.8, 0.2, 0.7]
>>> labels = [1, 1, 0, 1, 1, 0] + [float("nan")] * 6  # people labelled the first six cases
>>> r = ppi_mean(judge, labels)
>>> round(r.estimate, 3), round(r.judge_estimate, 3)
(0.609, 0.65)
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from cogeval._check import as_float_array, check_probability, check_same_length
from cogeval.errors import InputError
from cogeval.stats.result import Interval, StatResult

_Array = npt.NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class PPIResult(StatResult):
    """Mean human score by PPI, by people alone and by the judge alone. ``to_frame()`` has one row per
    method (``ppi``, ``classical``, ``judge``) with columns ``method``, ``estimate``, ``ci_low``, ``ci_high``, ``n``."""

    estimate: float
    """The prediction-powered (PPI++) estimate of the mean human score."""
    ci: Interval
    """Its ``1 - alpha`` interval."""
    classical_estimate: float
    """The mean of the human labels alone."""
    classical_ci: Interval
    """Its normal interval, ``mean ± z·sd/√n`` (sd with ddof=0, as ppi_py)."""
    judge_estimate: float
    """The mean of the judge's scores on every case: biased whenever the judge is."""
    judge_ci: Interval
    """Its normal interval; it covers the mean judge score, not the mean human score."""
    effective_sample_size: float
    """How many human labels the PPI interval is worth: ``n_labelled · var(classical) / var(ppi)``."""
    lam: float
    """The power-tuning parameter λ in [0, 1]: 0 ignores the judge, 1 is plain PPI."""
    n_labelled: int
    """Cases with a human label."""
    n_cases: int
    """All cases (labelled or not), each with a judge score."""
    alpha: float
    """The intervals have level ``1 - alpha``."""

    def to_frame(self) -> pd.DataFrame:
        """One row per method: ``method``, ``estimate``, ``ci_low``, ``ci_high``, ``n`` (the cases it rests on)."""
        rows = [("ppi", self.estimate, self.ci, self.n_cases),
                ("classical", self.classical_estimate, self.classical_ci, self.n_labelled),
                ("judge", self.judge_estimate, self.judge_ci, self.n_cases)]
        return pd.DataFrame([{"method": method, "estimate": estimate, "ci_low": ci.low, "ci_high": ci.high, "n": n}
                             for method, estimate, ci, n in rows])


def _interval(estimate: float, se: float, z: float) -> Interval:
    return Interval(estimate - z * se, estimate + z * se)


def ppi_mean(judge: Any, labels: Any, *, alpha: float = 0.05) -> PPIResult:
    """Prediction-powered estimate and interval of the mean human label, from a judge that scored every case.

    ``judge[i]`` is the judge's score of case ``i``; ``labels[i]`` its human
    label, NaN when no person labelled it. With the ``n`` labelled cases
    (labels ``Y``, judge scores ``Ŷ``) and the ``N`` unlabelled ones (judge
    scores ``Ŷᵘ``), as ``ppi_py.ppi_mean_ci(Y, Ŷ, Ŷᵘ, alpha=alpha)`` (ppi-python 0.2):

    - ``λ = cov(Y, Ŷ) / ((1 + n/N) · var(judge))``, clipped to [0, 1]
      (covariance with ddof=0, variance over every case with ddof=1); 0 when the
      judge gives every case the same score or every case is labelled (nothing to borrow);
    - ``estimate = λ·mean(Ŷᵘ) + mean(Y - λ·Ŷ)``;
    - ``se² = λ²·var(Ŷᵘ)/N + var(Y - λ·Ŷ)/n`` (ddof=0);
    - ``ci = estimate ± z(1 - alpha/2)·se``.

    The effective sample size is ``var(Y) / se²``: the number of human labels
    a humans-only interval would need to be as narrow (NaN when both
    variances are 0). At least 2 labelled cases are needed.

    >>> r = ppi_mean([0.2, 0.9, 0.4, 0.8, 0.1, 0.7], [0.0, 1.0, 0.0, 1.0, math.nan, math.nan])
    >>> r.to_frame().method.tolist()
    ['ppi', 'classical', 'judge']
    """
    alpha = check_probability("alpha", alpha, open_interval=True)
    scores = as_float_array("judge", judge)
    human = as_float_array("labels", labels, allow_nan=True)
    check_same_length("judge", scores, "labels", human)
    labelled = ~np.isnan(human)
    n, n_unlabelled = int(labelled.sum()), int((~labelled).sum())
    if n < 2:
        raise InputError(f"labels must have at least 2 labelled cases (not NaN) to estimate a variance; got {n}")
    y, y_hat, y_unlabelled = human[labelled], scores[labelled], scores[~labelled]

    lam = 0.0
    if n_unlabelled and np.ptp(scores) > 0:
        covariance = float(np.mean((y - y.mean()) * (y_hat - y_hat.mean())))
        lam = min(max(covariance / ((1 + n / n_unlabelled) * float(scores.var(ddof=1))), 0.0), 1.0)
    rectified = y - lam * y_hat
    imputed = lam * float(y_unlabelled.mean()) if n_unlabelled else 0.0
    estimate = imputed + float(rectified.mean())
    variance = float(rectified.var()) / n + (lam**2 * float(y_unlabelled.var()) / n_unlabelled if n_unlabelled else 0.0)

    z = NormalDist().inv_cdf(1 - alpha / 2)
    classical_variance = float(y.var()) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = float(np.float64(n * classical_variance) / np.float64(variance))
    return PPIResult(
        estimate, _interval(estimate, math.sqrt(variance), z),
        float(y.mean()), _interval(float(y.mean()), math.sqrt(classical_variance), z),
        float(scores.mean()), _interval(float(scores.mean()), float(scores.std()) / math.sqrt(len(scores)), z),
        effective, lam, n, len(scores), alpha,
    )


def ppi_paired_difference(judge_base: Any, judge_head: Any, labels_base: Any, labels_head: Any, *,
                          alpha: float = 0.05) -> PPIResult:
    """PPI for the mean paired difference ``head - base`` of the human-judged score.

    :func:`ppi_mean` of ``judge_head - judge_base`` with labels
    ``labels_head - labels_base``: one row per case, NaN where no person
    labelled it. People must have labelled both sides of the same cases.

    >>> r = ppi_paired_difference([0.2, 0.5, 0.4, 0.6], [0.6, 0.5, 0.9, 0.7], [0, 1, 0, math.nan], [1, 1, 1, math.nan])
    >>> round(r.classical_estimate, 3)
    0.667
    """
    base = as_float_array("judge_base", judge_base)
    head = as_float_array("judge_head", judge_head)
    human_base = as_float_array("labels_base", labels_base, allow_nan=True)
    human_head = as_float_array("labels_head", labels_head, allow_nan=True)
    check_same_length("judge_base", base, "judge_head", head)
    check_same_length("judge_base", base, "labels_base", human_base)
    check_same_length("labels_base", human_base, "labels_head", human_head)
    mismatch = np.flatnonzero(np.isnan(human_base) != np.isnan(human_head))
    if len(mismatch):
        i = int(mismatch[0])
        labelled, missing = ("labels_base", "labels_head") if np.isnan(human_head[i]) else ("labels_head", "labels_base")
        raise InputError(f"labels_base and labels_head must label the same cases (a difference needs both); "
                         f"case {i} has {labelled} but {missing} is NaN")
    return ppi_mean(head - base, human_head - human_base, alpha=alpha)
