"""The comparison engine shared by ``compare_runs`` and ``EvalComparison``: two score tables in, a RunComparison out.

See ``docs/comparing.md`` for every rule with a worked example. In short:
pair units ``(case_key, occurrence)``, average trials (order-independent),
apply the error rules (:mod:`cogeval.compare.pairing`) and the noise floor
(differences within :data:`TOLERANCE` are 0); then per metric a paired test
(McNemar for 0/1 metrics, else the t-test or Wilcoxon); Holm within the
deciding and within the informing metrics; the interval that inverts the
test at the metric's Holm level (so it excludes 0 exactly when significant);
Cohen's d_z; the verdict against the margin, with TOST for ``equivalent``;
``mde`` and ``n_needed`` from the paired differences' sd.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_choice, check_positive_int, check_probability, check_seed, describe
from cogeval.compare.pairing import check_scores, metrics_of, pair_scores
from cogeval.compare.result import MetricComparison, RunComparison, RunInfo
from cogeval.errors import InputError
from cogeval.stats import (
    Interval,
    adjust_p_values,
    cohens_d,
    mcnemars_test,
    paired_t_test,
    wilcoxon_test,
)
from cogeval.stats.equivalence import equivalence_test
from cogeval.stats.inversion import holm_levels, mcnemar_interval, paired_proportion_interval, wilcoxon_interval
from cogeval.stats.power import minimum_detectable_effect, plan_sample_size

__all__ = [
    "CHANGES_COLUMNS", "ROLES", "TESTS", "TOLERANCE", "VERDICTS", "PairedTest", "agreeing_interval",
    "compare_scores", "inverted_interval", "noise_floor", "paired_test", "short_input",
]

TESTS = ("t", "wilcoxon")
"""The tests ``test=`` accepts for non-binary metrics."""

TOLERANCE = 1e-9
"""A paired difference at most this large (in absolute value) is no change: it is set to exactly 0
before every test, interval, effect size and count (the noise floor)."""

ROLES = ("decides", "informs")
"""A compared metric either decides the verdict (and its Holm family) or informs (its own Holm family)."""

VERDICTS = ("better", "worse", "equivalent", "inconclusive")
"""A metric's verdict; a run's verdict may also be ``mixed`` (some deciding metrics better, some worse)."""

POWER = 0.8
"""The power behind ``mde`` and ``n_needed``."""

MIN_PAIRS = 30
"""Fewer paired cases than this give a warning."""

MIN_DISCORDANT = 10
"""Fewer discordant pairs than this on a 0/1 metric give a warning."""

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


@dataclasses.dataclass(frozen=True)
class PairedTest:
    """The test of one metric's paired differences ``d = head - base`` (noise floor applied)."""

    name: str
    """``mcnemar``, ``mcnemar-exact``, ``t``, ``wilcoxon`` or ``none`` (fewer than 2 pairs)."""
    p_value: float
    exact: bool
    """The exact null distribution was used (McNemar's binomial, Wilcoxon's signed-rank)."""
    side: float
    """+1 when the differences lean positive (by the test's own statistic), -1 negative, 0 neither."""
    statistic: float = math.nan
    """The test statistic: t, McNemar's chi-square or Wilcoxon's V (NaN without a test)."""
    discordant: tuple[int, int] = (0, 0)
    """McNemar's (b, c): base 1 & head 0, base 0 & head 1."""


def noise_floor(d: np.ndarray) -> np.ndarray:
    """``d`` with every difference of at most :data:`TOLERANCE` in absolute value set to exactly 0.

    >>> noise_floor(np.array([0.1 + 0.2 - 0.3, 0.5, -1e-12])).tolist()
    [0.0, 0.5, 0.0]
    """
    return np.where(np.abs(d) <= TOLERANCE, 0.0, d)


def is_binary(b: np.ndarray, h: np.ndarray) -> bool:
    """Every paired value on both sides is 0 or 1."""
    return bool(np.isin(b, (0.0, 1.0)).all() and np.isin(h, (0.0, 1.0)).all())


def paired_test(b: np.ndarray, h: np.ndarray, test: str) -> PairedTest:
    """The paired test of ``h`` against ``b`` as a comparison runs it (McNemar for 0/1 values, else ``test``).

    Differences within :data:`TOLERANCE` of 0 count as no change, so float
    noise cannot move a test; other differences are ranked as R ranks them.

    >>> paired_test(np.array([0.3] * 8), np.array([0.1 + 0.2] * 7 + [0.3]), "t").p_value
    1.0
    """
    n = len(b)
    if n < 2:
        return PairedTest("none", 1.0, False, 0.0)
    d = noise_floor(h - b)
    if is_binary(b, h):
        worse, better = int(np.sum(d < 0)), int(np.sum(d > 0))
        r = mcnemars_test(worse, better)
        return PairedTest(r.test, r.p_value, r.exact, float(np.sign(better - worse)), r.statistic, (worse, better))
    zeros = np.zeros(n)
    if test == "t":
        t = paired_t_test(d, zeros)
        return PairedTest("t", t.p_value, False, float(np.sign(d.mean())), t.statistic)
    w = wilcoxon_test(d, zeros)
    return PairedTest("wilcoxon", w.p_value, w.exact, float(np.sign(w.statistic - w.n * (w.n + 1) / 4)), w.statistic)


def inverted_interval(b: np.ndarray, h: np.ndarray, tested: PairedTest, level: float) -> Interval:
    """The interval of the difference that inverts ``tested`` at level ``1 - level`` (NaN when there is no test).

    t: the t-interval of the mean difference; McNemar: the interval of the
    difference in proportions from the discordant pairs; Wilcoxon: the
    Hodges–Lehmann shift interval. See ``docs/statistics-intervals.md``.
    """
    n = len(b)
    if n == 0 or math.isnan(tested.p_value) or (tested.name != "none" and math.isnan(level)):
        return Interval(math.nan, math.nan)
    d = noise_floor(h - b)
    if tested.name == "none":
        return Interval(float(d[0]), float(d[0]))
    confidence = 1 - level
    if tested.name.startswith("mcnemar"):
        worse, better = tested.discordant
        return mcnemar_interval(worse, better, n, confidence=confidence, exact=tested.exact)
    if tested.name == "t":
        return paired_t_test(d, np.zeros(n), confidence=confidence).confidence_interval
    return wilcoxon_interval(d, np.zeros(n), confidence=confidence, exact=tested.exact)


def agreeing_interval(interval: Interval, significant: bool, side: float) -> Interval:
    """``interval`` made to exclude 0 exactly when ``significant``.

    Test inversion gives this already, up to the last bit of rounding at the
    boundary and the discreteness of a rank test at exactly 0 (where it drops
    the zero differences). Not significant: the interval is widened to reach 0.
    Significant but touching 0: it keeps the side the test leans to, open at 0
    (its end there is the smallest positive float).
    """
    low, high = interval
    if math.isnan(low) or (low > 0 or high < 0) == significant:
        return interval
    if not significant:
        return Interval(min(low, 0.0), max(high, 0.0))
    tiny = math.ulp(0.0)
    if side >= 0:
        return Interval(tiny, max(high, tiny))
    return Interval(min(low, -tiny), -tiny)


def _verdict(interval: Interval, higher_is_better: bool, margin: float, equivalent: bool) -> str:
    """``better``/``worse`` when the interval lies beyond the margin on one side, else ``equivalent`` or ``inconclusive``."""
    low, high = interval if higher_is_better else (-interval.high, -interval.low)
    if low > margin:
        return "better"
    if high < -margin:
        return "worse"
    return "equivalent" if equivalent else "inconclusive"


def _equivalent(b: np.ndarray, h: np.ndarray, margin: float, alpha: float) -> bool:
    """The paired mean difference is shown within ``(-margin, margin)`` at level ``alpha`` (TOST)."""
    if margin <= 0 or len(b) < 2:
        return False
    if is_binary(b, h):
        low, high = paired_proportion_interval(h, b, confidence=1 - 2 * alpha)
        return bool(-margin < low and high < margin)
    d = noise_floor(h - b)
    return bool(equivalence_test(d, np.zeros(len(d)), margin, alpha=alpha).equivalent)


def _power(b: np.ndarray, h: np.ndarray, difference: float, level: float, margin: float,
           alpha: float, family_size: int) -> tuple[float, int | None]:
    """(mde, n_needed) of one metric; NaN / None when undefined."""
    n = len(b)
    if n < 2 or math.isnan(level):
        return math.nan, None
    d = noise_floor(h - b)
    sd = float(d.std(ddof=1))
    mde = minimum_detectable_effect(sd, n, alpha=level, power=POWER) if sd > 0 else math.nan
    effect = margin if margin > 0 else abs(difference)
    binary = is_binary(b, h)
    if effect == 0 or (sd == 0 and not binary):
        return mde, None
    try:
        if binary:
            needed = plan_sample_size(effect, discordance=float(np.count_nonzero(d)) / n, alpha=alpha,
                                      power=POWER, family_size=family_size)
        else:
            needed = plan_sample_size(effect, sd=sd, alpha=alpha, power=POWER, family_size=family_size)
    except InputError:  # an effect larger than the discordance can allow
        return mde, None
    return mde, needed


def _check_decide_on(decide_on: Any, names: Sequence[str], default: list[str]) -> list[str]:
    if decide_on is None:
        return default
    if isinstance(decide_on, str) or not isinstance(decide_on, Iterable):
        raise InputError(f"decide_on must be None or a list of metric names; got {describe(decide_on)}")
    chosen = list(dict.fromkeys(decide_on))
    for m in chosen:
        if m not in names:
            raise InputError(f"decide_on names {describe(m)}, which is not compared; "
                             f"the compared metrics are: {', '.join(names) or 'none'}")
    return chosen


def _check_margins(margins: Any, names: Sequence[str]) -> dict[str, float]:
    if margins is None:
        return {}
    if not isinstance(margins, Mapping):
        raise InputError(f"margins must map metric names to the smallest difference that matters; got {describe(margins)}")
    out = {}
    for m, value in margins.items():
        if m not in names:
            raise InputError(f"margins names {describe(m)}, which is not compared; "
                             f"the compared metrics are: {', '.join(names) or 'none'}")
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
            raise InputError(f"margins[{m!r}] must be a finite number >= 0 in the metric's units; got {describe(value)}")
        out[m] = float(value)
    return out


def _overall(verdicts: Sequence[str]) -> str:
    """The run's verdict from its deciding metrics' verdicts."""
    better, worse = "better" in verdicts, "worse" in verdicts
    if better and worse:
        return "mixed"
    if worse:
        return "worse"
    if better:
        return "better"
    if verdicts and all(v == "equivalent" for v in verdicts):
        return "equivalent"
    return "inconclusive"


def _winner(significant: bool, interval: Interval, higher_is_better: bool) -> str:
    if not significant:
        return "tie"
    return "head" if (interval.low > 0) == higher_is_better else "base"


def compare_scores(
    base: pd.DataFrame,
    head: pd.DataFrame,
    *,
    directions: Mapping[str, bool],
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = 0,
    metrics: Iterable[str] | None = None,
    decide_on: Iterable[str] | None = None,
    informing: Iterable[str] = (),
    margins: Mapping[str, float] | None = None,
    inputs: Mapping[str, Any] | None = None,
    base_info: RunInfo | None = None,
    head_info: RunInfo | None = None,
    warnings: Sequence[str] = (),
) -> RunComparison:
    """Compare ``head`` against ``base``, metric by metric, on the cases both ran.

    ``base`` and ``head`` are score tables (``run_id``, ``case_key``,
    ``occurrence``, ``trial``, ``metric``, ``score``, ``error``) plus a bool
    ``case_error`` column (the target failed on that case and trial).
    ``directions`` maps each compared metric to ``higher_is_better``;
    ``decide_on`` names the metrics that decide the verdict (None: every
    compared metric not in ``informing``), the others only inform; ``margins`` maps a metric to the
    smallest difference that matters (metric units); ``inputs`` maps case keys
    to inputs for the ``changes`` table; ``warnings`` are the caller's
    run-level warnings, to which the metric-level ones are appended. ``test``
    (``"t"`` or ``"wilcoxon"``) is used for non-binary metrics. ``seed``
    (None, an integer >= 0 or a numpy Generator, the one seed rule) is
    recorded with the result; the comparison itself draws nothing at random,
    so a Generator is accepted, left untouched and recorded as None (it has
    no number a run file or report could show).
    See ``docs/comparing.md``.

    >>> rows = lambda scores: pd.DataFrame({"run_id": "r", "case_key": list("abcdef"), "occurrence": 0,
    ...     "trial": 0, "metric": "exact_match", "score": scores, "error": None, "case_error": False})
    >>> c = compare_scores(rows([0., 0, 0, 0, 1, 1]), rows([1., 1, 1, 1, 1, 0]), directions={"exact_match": True})
    >>> m = c.metrics["exact_match"]
    >>> m.test, m.n, round(m.difference, 3), round(m.p_value, 4), m.winner, m.verdict  # b = 1, c = 4: binom.test(1, 5)
    ('mcnemar-exact', 6, 0.5, 0.375, 'tie', 'inconclusive')
    >>> c.changes[["case_key", "delta", "direction"]].head(2).values.tolist()
    [['a', 1.0, 'improved'], ['b', 1.0, 'improved']]
    """
    base = check_scores("base", base)
    head = check_scores("head", head)
    alpha = check_probability("alpha", alpha, open_interval=True)
    test = check_choice("test", test, TESTS)
    seed = check_seed("seed", seed)
    if isinstance(seed, np.random.Generator):
        seed = None
    inputs = {} if inputs is None else inputs

    names, notes = _select_metrics(metrics_of(base), metrics_of(head), metrics)
    explicit = metrics is not None
    directions = _check_directions(directions, names)
    informing = set(informing)
    deciding = set(_check_decide_on(decide_on, names, [m for m in names if m not in informing]))
    margins = _check_margins(margins, names)
    pairing = pair_scores(base, head, directions=directions)
    one_sided = pairing.base_errored != pairing.head_errored
    both_failed = pairing.base_errored & pairing.head_errored

    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    tests: dict[str, PairedTest] = {}
    changed: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    counts: dict[str, tuple[int, int]] = {}
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
        if n == 0:
            notes.append(f"Metric {name!r} has no matched case scored in both runs")
        unscored = (np.sum(np.isnan(b_all) & ~pairing.base_errored & ~both_failed),
                    np.sum(np.isnan(h_all) & ~pairing.head_errored & ~both_failed))
        if n and any(unscored):
            notes.append(f"Metric {name!r}: n = {n} of {len(pairing.units)} matched cases, because scoring failed "
                         f"on {unscored[0]} case(s) in the base run and {unscored[1]} in the head run")
        b, h = b_all[keep], h_all[keep]
        pairs[name], tests[name] = (b, h), paired_test(b, h, test)
        d = noise_floor(h - b)
        if math.isnan(tests[name].p_value):
            notes.append(f"Metric {name!r}: every paired difference is {d[0]:+.6g}, so the t-test is undefined "
                         "(p-value NaN, not significant); test='wilcoxon' can rank them")
        moved = d != 0
        better = moved & ((d > 0) == up)
        counts[name] = int(better.sum()), int((moved & ~better).sum())
        if moved.any():
            changed.append((name, np.flatnonzero(keep)[moved], d[moved], better[moved]))

    adjusted: dict[str, float] = {}
    levels: dict[str, float] = {}
    family_sizes: dict[str, int] = {}
    for family in ([m for m in tests if m in deciding], [m for m in tests if m not in deciding]):
        tested = [m for m in family if tests[m].name != "none"]
        p = [tests[m].p_value for m in tested]
        adjusted.update(zip(tested, adjust_p_values(p, "holm").tolist()))
        levels.update(zip(tested, holm_levels(p, alpha).tolist()) if tested else ())
        family_sizes.update(dict.fromkeys(family, max(1, sum(not math.isnan(x) for x in p))))

    results = {}
    for name, tested in tests.items():
        b, h = pairs[name]
        up, n = directions[name], len(b)
        adj = adjusted.get(name, 1.0)
        significant = bool(adj < alpha)
        level = levels.get(name, math.nan)
        interval = agreeing_interval(inverted_interval(b, h, tested, level), significant, tested.side)
        difference = float(np.mean(noise_floor(h - b))) if n else math.nan
        margin = margins.get(name, 0.0)
        mde, needed = _power(b, h, difference, level, margin, alpha, family_sizes[name])
        improved, regressed = counts[name]
        results[name] = MetricComparison(
            metric=name, higher_is_better=up, base=float(b.mean()) if n else math.nan,
            head=float(h.mean()) if n else math.nan, n=n, difference=difference, ci=interval,
            effect_size=cohens_d(noise_floor(h - b), np.zeros(n)) if n else math.nan,
            test=tested.name, statistic=tested.statistic, p_value=float(tested.p_value), adjusted_p_value=float(adj),
            significant=significant, winner=_winner(significant, interval, up),
            improved=improved, regressed=regressed, role="decides" if name in deciding else "informs",
            verdict=_verdict(interval, up, margin, _equivalent(b, h, margin, alpha)),
            margin=margin, ci_level=1 - level if not math.isnan(level) else math.nan, mde=mde, n_needed=needed,
        )
    notes += _power_warnings(results.values(), tests)
    deciders = [m for m in results.values() if m.role == "decides"]
    votes = [m.winner for m in deciders]
    heads, bases = votes.count("head"), votes.count("base")
    if names and not deciders:
        notes.append("No compared metric decides the verdict (the compared ones only inform; name the deciding ones "
                     "with decide_on), so it is inconclusive")

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
        verdict=_overall([m.verdict for m in deciders]),
        margins=margins,
    )


def _power_warnings(metrics: Iterable[MetricComparison], tests: Mapping[str, PairedTest]) -> list[str]:
    """Too few paired cases, or too few discordant pairs on a 0/1 metric, for the tests to say much."""
    metrics = list(metrics)
    few = [f"{m.metric} ({m.n})" for m in metrics if 0 < m.n < MIN_PAIRS]
    sparse = [f"{m.metric} ({sum(tests[m.metric].discordant)})" for m in metrics
              if tests[m.metric].name.startswith("mcnemar") and sum(tests[m.metric].discordant) < MIN_DISCORDANT]
    notes = []
    if few:
        notes.append(f"Fewer than {MIN_PAIRS} paired cases for {', '.join(few)}: the tests have little power, "
                     "so 'inconclusive' may only mean too few cases (see n_needed)")
    if sparse:
        notes.append(f"Fewer than {MIN_DISCORDANT} discordant pairs (cases exactly one run got right) for "
                     f"{', '.join(sparse)}: McNemar's test can say little (see n_needed)")
    return notes


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
