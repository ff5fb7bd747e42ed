"""Judge calibration on runs: a random sample of cases for people to label, and the prediction-powered difference.

The rules (``docs/judge-calibration.md``):

- :func:`label_sample` draws ``n`` of a run's cases uniformly at random from
  ``seed``, before anyone looks at a score; the draw depends only on the cases'
  identities, so two runs of one dataset give the same sample with the same seed;
- people write the human score of each sampled answer, on the judged metric's
  scale, in the sheet's ``label`` column (a DataFrame, or a CSV read back with pandas);
- :func:`ppi_difference` takes the two runs, ``labels`` with ``case_key``,
  ``base`` and ``head`` (the human scores of each side; ``occurrence`` when a case
  repeats) and the judged ``metric``, and returns
  :func:`~cogeval.stats.ppi_paired_difference` of the cases scored on both sides;
- runs of one trial only: a person labels one answer per case.

>>> import pandas as pd
>>> from cogeval import EvalRun
>>> run = EvalRun.from_frame(pd.DataFrame({"input": list("abcdef"), "output": list("ABCDEF"), "quality": [0.5] * 6}))
>>> label_sample(run, 3, seed=1)[["input", "output", "label"]]
  input output  label
0     c      C    NaN
1     e      E    NaN
2     f      F    NaN
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_positive_int, check_seed, describe
from cogeval.data import EvalRun
from cogeval.data.runfile import as_run
from cogeval.errors import InputError
from cogeval.stats import PPIResult, ppi_paired_difference

LABEL_COLUMNS = ["case_key", "occurrence", "input", "expected", "output", "error", "label"]
"""The sheet of :func:`label_sample`: one row per sampled case, ``label`` empty (NaN) for people to fill."""
_UNIT = [col.CASE_KEY, col.OCCURRENCE]


def _one_trial(run: EvalRun, name: str) -> EvalRun:
    trials = max((r.trial for r in run.results), default=0) + 1
    if trials > 1:
        raise InputError(f"{name}: run {run.run_id!r} has {trials} trials per case; judge calibration takes runs of "
                         "one trial (a person labels one answer per case)")
    return run


def label_sample(run: Any, n: int, *, seed: int = 0) -> pd.DataFrame:
    """``n`` cases of ``run`` drawn uniformly at random (without replacement) from ``seed``, for people to label.

    ``run`` is a run, a suite result or a run-file path. The sheet has the
    :data:`LABEL_COLUMNS`: what a person needs (``input``, ``expected``, the
    ``output`` to judge, the target's ``error`` if it failed) and an empty
    ``label``. Show people ``input``, ``expected`` and ``output`` only (never
    a judge's score), have them write each answer's score in ``label``, and
    pass the labels to :func:`ppi_difference` or :func:`~cogeval.stats.ppi_mean`.
    Cases are drawn in the order of their keys, so ``label_sample(other_run, n,
    seed=seed)`` of a run of the same dataset picks the same cases.
    """
    run = _one_trial(as_run(run, "run"), "run")
    n = check_positive_int("n", n)
    results = run.results_frame.merge(run.cases_frame, on=_UNIT).sort_values(_UNIT, ignore_index=True)
    if n > len(results):
        raise InputError(f"n must be at most the run's {len(results)} cases; got {n}")
    picked = np.random.default_rng(check_seed("seed", seed)).choice(len(results), size=n, replace=False)
    return results.iloc[picked].reset_index(drop=True).assign(label=math.nan)[LABEL_COLUMNS]


def _judge_scores(run: EvalRun, metric: str, name: str) -> pd.Series:
    scores = run.scores
    if metric not in set(scores[col.METRIC]):
        raise InputError(f"{name} run {run.run_id!r} has no metric {metric!r}; it has: "
                         f"{', '.join(sorted(set(scores[col.METRIC]))) or 'none'}")
    return scores[scores[col.METRIC] == metric].set_index(_UNIT)[col.SCORE]


def _labels(labels: Any) -> pd.DataFrame:
    """``labels`` checked: a DataFrame with ``case_key``, ``base``, ``head`` (and ``occurrence``, default 0), one row per case."""
    if not isinstance(labels, pd.DataFrame):
        raise InputError(f"labels must be a DataFrame with columns case_key, base and head (the human score of each "
                         f"side); got {describe(labels)}")
    missing = [c for c in (col.CASE_KEY, "base", "head") if c not in labels.columns]
    if missing:
        raise InputError(f"labels must have the columns case_key, base and head; it lacks {', '.join(missing)}")
    frame = labels.assign(occurrence=labels.get(col.OCCURRENCE, 0)).reset_index(drop=True)
    repeated = frame.duplicated(_UNIT)
    if repeated.any():
        i = int(np.flatnonzero(repeated)[0])
        raise InputError(f"labels row {i} labels case {frame.case_key[i]!r} again; give each case one row")
    for side in ("base", "head"):
        values = pd.to_numeric(frame[side], errors="coerce")
        bad = np.flatnonzero(values.isna())
        if len(bad):
            i = int(bad[0])
            raise InputError(f"labels row {i} (case {frame.case_key[i]!r}) has no {side} score ({describe(frame[side][i])}); "
                             "label both sides of every case, or drop the row")
        frame[side] = values.astype(float)
    return frame.set_index(_UNIT)


def ppi_difference(base_run: Any, head_run: Any, labels: Any, *, metric: str, alpha: float = 0.05) -> PPIResult:
    """The prediction-powered mean paired difference ``head - base`` of the human score of ``metric``.

    The judge's ``metric`` scores of every case both runs scored are corrected
    by people's ``labels`` of a random sample of them (:func:`label_sample`):
    a DataFrame with ``case_key``, ``base`` and ``head``, the human scores of
    each side on the metric's scale (``occurrence`` too when a case repeats).
    The values are :func:`~cogeval.stats.ppi_paired_difference` of the paired
    judge scores and the labels (NaN where unlabelled), in case-key order;
    ``to_frame()`` sets them beside the humans-only and the judge-only
    intervals. A label whose case neither run has raises :class:`InputError`
    naming it; a labelled case that the judge did not score on both sides is
    left out, with a warning.

    >>> from cogeval import EvalRun
    >>> def run(scores): return EvalRun.from_frame(pd.DataFrame({"input": list("abcdefgh"), "quality": scores}))
    >>> base, head = run([0.2, 0.4, 0.5, 0.3, 0.6, 0.2, 0.4, 0.5]), run([0.6, 0.5, 0.9, 0.4, 0.7, 0.6, 0.4, 0.8])
    >>> sheet = label_sample(base, 4)
    >>> labels = sheet[["case_key"]].assign(base=[0, 1, 0, 1], head=[1, 1, 1, 1])
    >>> round(ppi_difference(base, head, labels, metric="quality").classical_estimate, 3)
    0.5
    """
    base, head = _one_trial(as_run(base_run, "base_run"), "base_run"), _one_trial(as_run(head_run, "head_run"), "head_run")
    if not isinstance(metric, str):
        raise InputError(f"metric must be the name of the judged metric; got {describe(metric)}")
    judged = pd.concat({"base": _judge_scores(base, metric, "base"), "head": _judge_scores(head, metric, "head")},
                       axis=1, join="inner").sort_index()
    human = _labels(labels)
    known = judged.index.union(base.results_frame.set_index(_UNIT).index).union(head.results_frame.set_index(_UNIT).index)
    unknown = human.index.difference(known)
    if len(unknown):
        key, occurrence = unknown[0]
        raise InputError(f"labels name case {key!r} (occurrence {occurrence}), which neither run has; "
                         f"the labels must come from label_sample of these runs")
    judged = judged.dropna()
    unscored = human.index.difference(judged.index)
    if len(unscored):
        warnings.warn(f"{len(unscored)} labelled case(s) have no {metric!r} score on both sides and are left out, "
                      f"the first {unscored[0][0]!r}", RuntimeWarning, stacklevel=2)
    aligned = human.reindex(judged.index)
    return ppi_paired_difference(judged["base"], judged["head"], aligned["base"], aligned["head"], alpha=alpha)
