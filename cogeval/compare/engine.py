"""The comparison engine shared by ``compare_runs`` and ``EvalComparison``: two score tables in, a RunComparison out.

See ``docs/comparing.md`` for every rule with a worked example. In short:
pair units ``(case_key, occurrence)``, average trials, apply the error rules
(:mod:`cogeval.compare.pairing`), then per metric a paired test (McNemar for
0/1 metrics, else the t-test or Wilcoxon), Holm across metrics, a seeded
bootstrap interval of the mean paired difference, Cohen's d_z, and winners.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_choice, check_positive_int, check_probability, describe
from cogeval.compare.pairing import check_scores, metrics_of, pair_scores
from cogeval.compare.result import MetricComparison, RunComparison, RunInfo
from cogeval.errors import InputError
from cogeval.stats import (
    Interval,
    adjust_p_values,
    bootstrap_ci,
    cohens_d,
    mcnemars_test,
    paired_t_test,
    wilcoxon_test,
)

__all__ = ["CHANGES_COLUMNS", "TESTS", "TOLERANCE", "compare_scores", "short_input"]

TESTS = ("t", "wilcoxon")
"""The tests ``test=`` accepts for non-binary metrics."""

TOLERANCE = 1e-9
"""A paired difference at most this large (in absolute value) is no change."""

CHANGES_COLUMNS = [*col.CHANGES_COLUMNS, col.OCCURRENCE]
"""The ``changes`` table: the DESIGN §2 columns, then ``occurrence`` (which copy of a repeated case)."""

INPUT_WIDTH = 80


def short_input(value: Any, width: int = INPUT_WIDTH) -> str | None:
    """One line of at most ``width`` characters for a case input (non-text as JSON); None stays None.

    >>> short_input("What  is\\n 2+2?")
    'What is 2+2?'
    >>> short_input({"q": "x" * 100}, width=12)
    '{"q": "xxxx…'
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _check_seed(seed: Any) -> int | None:
    if seed is None or (isinstance(seed, Integral) and not isinstance(seed, bool) and seed >= 0):
        return None if seed is None else int(seed)
    raise InputError(f"seed must be None or an integer >= 0; got {describe(seed)}")


def _select_metrics(
    base_metrics: list[str], head_metrics: list[str], requested: Iterable[str] | None
) -> tuple[list[str], list[str]]:
    """The metrics to compare, and the warnings about metrics only one run has."""
    if requested is None:
        warnings = [f"Metric {m!r} is only in the base run; it was not compared" for m in base_metrics
                    if m not in head_metrics]
        warnings += [f"Metric {m!r} is only in the head run; it was not compared" for m in head_metrics
                     if m not in base_metrics]
        return [m for m in base_metrics if m in head_metrics], warnings
    if isinstance(requested, str) or not isinstance(requested, Iterable):
        raise InputError(f"metrics must be None or a list of metric names; got {describe(requested)}")
    requested = list(requested)
    if not all(isinstance(m, str) for m in requested):
        raise InputError(f"metrics must be None or a list of metric names; got {describe(requested)}")
    for m in requested:
        absent = [
            f"the {side} run (its metrics: {', '.join(have) or 'none'})"
            for side, have in (("base", base_metrics), ("head", head_metrics)) if m not in have
        ]
        if absent:
            raise InputError(f"metric {m!r} is not in " + " nor in ".join(absent))
    return list(dict.fromkeys(requested)), []


def _check_directions(directions: Any, metrics: Sequence[str]) -> dict[str, bool]:
    if not isinstance(directions, Mapping):
        raise InputError(f"directions must map each metric name to higher_is_better (a bool); got {describe(directions)}")
    out = {}
    for m in metrics:
        if m not in directions:
            raise InputError(
                f"directions has no entry for metric {m!r}; give higher_is_better for each compared metric "
                f"(directions has: {', '.join(map(str, directions)) or 'none'})"
            )
        if not isinstance(directions[m], (bool, np.bool_)):
            raise InputError(f"directions[{m!r}] must be True or False (higher_is_better); got {describe(directions[m])}")
        out[m] = bool(directions[m])
    return out


def _test(b: np.ndarray, h: np.ndarray, test: str, alpha: float) -> tuple[str, float]:
    """(test name, p-value) for the paired values of one metric, n >= 2."""
    if np.isin(b, (0.0, 1.0)).all() and np.isin(h, (0.0, 1.0)).all():
        r = mcnemars_test(int(np.sum((b == 1) & (h == 0))), int(np.sum((b == 0) & (h == 1))), alpha=alpha)
        return ("mcnemar-exact" if r.exact else "mcnemar"), r.p_value
    if test == "t":
        return "t", paired_t_test(h, b, alpha=alpha).p_value
    return "wilcoxon", wilcoxon_test(h, b, alpha=alpha).p_value


def _winner(significant: bool, difference: float, higher_is_better: bool) -> str:
    if not significant or difference == 0:
        return "tie"
    return "head" if (difference > 0) == higher_is_better else "base"


def compare_scores(
    base: pd.DataFrame,
    head: pd.DataFrame,
    *,
    directions: Mapping[str, bool],
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = None,
    metrics: Iterable[str] | None = None,
    inputs: Mapping[str, Any] | None = None,
    base_info: RunInfo | None = None,
    head_info: RunInfo | None = None,
    warnings: Sequence[str] = (),
    n_resamples: int = 10_000,
) -> RunComparison:
    """Compare ``head`` against ``base``, metric by metric, on the cases both ran.

    ``base`` and ``head`` are score tables (``run_id``, ``case_key``,
    ``occurrence``, ``trial``, ``metric``, ``score``, ``error``) plus a bool
    ``case_error`` column (the target failed on that case and trial).
    ``directions`` maps each compared metric to ``higher_is_better``;
    ``inputs`` maps case keys to inputs for the ``changes`` table; ``warnings``
    are the caller's run-level warnings, to which the metric-level ones are
    appended. ``test`` (``"t"`` or ``"wilcoxon"``) is used for non-binary
    metrics; every metric's interval is ``bootstrap_ci`` of its paired
    differences with this ``seed``. See ``docs/comparing.md``.

    >>> rows = lambda scores: pd.DataFrame({"run_id": "r", "case_key": list("abcdef"), "occurrence": 0,
    ...     "trial": 0, "metric": "exact_match", "score": scores, "error": None, "case_error": False})
    >>> c = compare_scores(rows([0., 0, 0, 0, 1, 1]), rows([1., 1, 1, 1, 1, 0]),
    ...                    directions={"exact_match": True}, seed=0)
    >>> m = c.metrics["exact_match"]
    >>> m.test, m.n, round(m.difference, 3), round(m.p_value, 4), m.winner  # b = 1, c = 4: binom.test(1, 5)
    ('mcnemar-exact', 6, 0.5, 0.375, 'tie')
    >>> c.changes[["case_key", "delta", "direction"]].head(2).values.tolist()
    [['a', 1.0, 'improved'], ['b', 1.0, 'improved']]
    """
    base = check_scores("base", base)
    head = check_scores("head", head)
    alpha = check_probability("alpha", alpha, open_interval=True)
    test = check_choice("test", test, TESTS)
    seed = _check_seed(seed)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    inputs = {} if inputs is None else inputs

    names, notes = _select_metrics(metrics_of(base), metrics_of(head), metrics)
    explicit = metrics is not None
    directions = _check_directions(directions, names)
    pairing = pair_scores(base, head, directions=directions)
    one_sided = pairing.base_errored != pairing.head_errored

    rows: dict[str, dict[str, Any]] = {}
    changed: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    for name in names:
        up = directions[name]
        b_all, h_all = pairing.base[name].to_numpy(), pairing.head[name].to_numpy()
        keep = ~(np.isnan(b_all) | np.isnan(h_all))
        n = int(keep.sum())
        if not up and n and (dropped := int(np.sum(one_sided & ~keep))):
            notes.append(f"Metric {name!r}: {dropped} case(s) the target failed on in only one run were left out "
                         "(lower is better, so a failure cannot count as 0)")
        if n == 0 and not explicit:
            notes.append(f"Metric {name!r} has no matched case scored in both runs; it was not compared")
            continue
        b, h = b_all[keep], h_all[keep]
        d = h - b
        test_name, p = _test(b, h, test, alpha) if n >= 2 else ("none", 1.0)
        if n == 0:
            notes.append(f"Metric {name!r} has no matched case scored in both runs")
        if math.isnan(p):
            notes.append(f"Metric {name!r}: every paired difference is {d[0]:+.6g}, so the t-test is undefined "
                         "(p-value NaN, not significant); test='wilcoxon' can rank them")
        moved = np.abs(d) > TOLERANCE
        better = moved & ((d > 0) == up)
        if moved.any():
            changed.append((name, np.flatnonzero(keep)[moved], d[moved], better[moved]))
        rows[name] = dict(
            metric=name, higher_is_better=up, n=n,
            base=float(b.mean()) if n else math.nan,
            head=float(h.mean()) if n else math.nan,
            difference=float(d.mean()) if n else math.nan,
            ci=bootstrap_ci(d, confidence=1 - alpha, n_resamples=n_resamples, seed=seed) if n else Interval(math.nan, math.nan),
            effect_size=cohens_d(h, b), test=test_name, p_value=float(p),
            improved=int(better.sum()), regressed=int((moved & ~better).sum()),
        )

    family = [m for m, r in rows.items() if r["test"] != "none"]
    adjusted = dict(zip(family, adjust_p_values([rows[m]["p_value"] for m in family], "holm")))
    results = {}
    for name, r in rows.items():
        adj = float(adjusted.get(name, 1.0))
        significant = bool(adj < alpha)
        results[name] = MetricComparison(
            **r, adjusted_p_value=adj, significant=significant,
            winner=_winner(significant, r["difference"], r["higher_is_better"]),
        )
    votes = [m.winner for m in results.values()]
    heads, bases = votes.count("head"), votes.count("base")

    return RunComparison(
        base=base_info or _info(base),
        head=head_info or _info(head),
        winner="head" if heads > bases else "base" if bases > heads else "tie",
        metrics=results,
        matched=len(pairing.units),
        added=len(pairing.added),
        removed=len(pairing.removed),
        added_cases=[str(k) for k in pairing.added.get_level_values(0)],
        removed_cases=[str(k) for k in pairing.removed.get_level_values(0)],
        warnings=[*warnings, *notes],
        changes=_changes(pairing.units, pairing.base, pairing.head, changed, inputs),
        alpha=alpha,
        seed=seed,
    )


def _info(frame: pd.DataFrame) -> RunInfo:
    ids = frame[col.RUN_ID].dropna() if col.RUN_ID in frame.columns else ()
    return RunInfo(run_id=str(ids.iloc[0]) if len(ids) else None, name=None, started_at=None)


def _changes(
    units: pd.MultiIndex,
    base: pd.DataFrame,
    head: pd.DataFrame,
    changed: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    inputs: Mapping[str, Any],
) -> pd.DataFrame:
    """The changes table: one row per unit × metric that moved, largest |delta| first.

    Ties in |delta| (rounded to 9 decimals) keep metric order (as compared), then unit order (base order).
    """
    if not changed:
        return pd.DataFrame({c: pd.Series(dtype=float if c in (col.BASE, col.HEAD, col.DELTA) else object)
                             for c in CHANGES_COLUMNS})
    position = np.concatenate([p for _, p, _, _ in changed])
    delta = np.concatenate([d for _, _, d, _ in changed])
    better = np.concatenate([g for _, _, _, g in changed])
    metric = np.concatenate([np.full(len(p), name, dtype=object) for name, p, _, _ in changed])
    base_value = np.concatenate([base[name].to_numpy()[p] for name, p, _, _ in changed])
    head_value = np.concatenate([head[name].to_numpy()[p] for name, p, _, _ in changed])
    metric_rank = np.repeat(np.arange(len(changed)), [len(p) for _, p, _, _ in changed])
    size = np.round(np.abs(delta), 9)  # float noise (0.9 - 1.3 vs 0.8 - 1.2) must not decide the order
    order = np.lexsort((position, metric_rank, -size))
    keys = units.get_level_values(0).to_numpy(dtype=object)
    shortened = {k: short_input(inputs.get(k)) for k in pd.unique(keys[position])}
    case_key = keys[position[order]]
    return pd.DataFrame({
        col.CASE_KEY: case_key,
        col.INPUT: [shortened[k] for k in case_key],
        col.METRIC: metric[order],
        col.BASE: base_value[order],
        col.HEAD: head_value[order],
        col.DELTA: delta[order],
        col.DIRECTION: np.where(better[order], "improved", "regressed").astype(object),
        col.OCCURRENCE: units.get_level_values(1).to_numpy()[position[order]],
    })
