"""compare_sequential: run two targets batch by batch and stop as soon as every deciding metric is decided.

The rules (``docs/sequential.md``):

- the cases run in one random order drawn from ``seed``, both targets on each
  case (interleaved, as :class:`~cogeval.EvalComparison`), ``batch_size``
  cases at a time, at most ``max_cases``;
- after each batch, each metric's paired differences ``head - base`` get an
  anytime-valid confidence sequence (:func:`~cogeval.stats.confidence_sequence`,
  its bets tuned to the metric's margin when every metric has one) at level ``alpha / k`` for ``k`` metrics (:func:`~cogeval.stats.split_alpha`),
  so the chance that any sequence ever misses its mean stays at most ``alpha``;
- scores lie in ``bounds[metric]``, ``(0, 1)`` unless given, so differences lie
  in ``[low - high, high - low]``; a score outside stops the comparison with an error;
- a metric is decided when its sequence excludes 0 (``better`` or ``worse`` by
  its direction) or lies within ``±margin`` (``equivalent``); the comparison
  stops once every metric is decided, else after ``max_cases``
  (undecided metrics are ``inconclusive``);
- a case that either target failed on, or a metric could not score, adds no
  difference to that metric's sequence.

``method="group"`` replaces the sequences by a group-sequential design
(:func:`~cogeval.stats.group_sequential_design`, two-sided at ``alpha / k``,
power 0.8 for ``effect``): a few planned looks, at each the metric's z
statistic (McNemar's for 0/1 scores, the paired t mapped to z otherwise)
against the look's efficacy and futility bounds (:func:`_group_looks` states
the rule); it needs no ``bounds``.

>>> _verdicts(np.array([0.1, -0.4, -0.02, -0.3]), np.array([0.5, -0.1, 0.03, 0.4]), True, 0.05).tolist()
['better', 'worse', 'equivalent', 'inconclusive']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Generator, Mapping, Sequence
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from cogeval import _backend
from cogeval._check import check_positive_int, check_seed, describe
from cogeval._html import html_table, key_value_table, safe_html
from cogeval.compare.paired import PairedSample, is_binary, noise_floor
from cogeval.compare.result import RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.compare.verdicts import equivalent, overall
from cogeval.data import Dataset
from cogeval.data.records import DatasetRecord
from cogeval.errors import InputError
from cogeval.evaluate.result import EvalSuiteResult
from cogeval.evaluate.suite import EvalSuite, arun_interleaved, as_dataset
from cogeval.execution import run_sync
from cogeval.stats import ConfidenceSequence, confidence_sequence, plan_sample_size, split_alpha
from cogeval.stats.group_sequential import GroupSequentialDesign, Spending, group_sequential_design

SEQUENCE_COLUMNS = ["metric", "n", "estimate", "ci_low", "ci_high"]
"""The ``sequence`` table: one row per metric × paired difference, the sequence after each one."""
_METHODS = ("auto", "betting", "planned", "eb", "group")
DECISION_COLUMNS = ["metric", "higher_is_better", "n", "base", "head", "estimate", "ci_low", "ci_high", "alpha",
                    "margin", "verdict", "decided_at"]
"""``SequentialComparison.to_frame()``: one row per metric, its latest interval and verdict."""
LOOK_COLUMNS = ["metric", "look", "n", "statistic", "efficacy", "futility"]
"""The ``looks`` table of ``method="group"``: one row per metric × look, its z statistic and the look's z bounds."""
_POWER = 0.8
"""The power of the group design (and of the fixed-n plan it is measured against)."""
_SPENDING: Spending = ("kim-demets", 2.0)
"""``method="group"``'s alpha spending by default."""
_FUTILITY: Spending = "pocock"
"""``method="group"``'s beta spending by default."""


def _verdicts(low: Any, high: Any, higher_is_better: bool, margin: float) -> np.ndarray:
    """The decision rule, elementwise: ``better``/``worse`` when [low, high] excludes 0, ``equivalent`` when it lies
    within ``(-margin, margin)``, else ``inconclusive``."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    up, down = ("better", "worse") if higher_is_better else ("worse", "better")
    within = (margin > 0) & (low > -margin) & (high < margin)
    return np.select([low > 0, high < 0, within], [up, down, "equivalent"], "inconclusive")


@dataclasses.dataclass(frozen=True, repr=False)
class SequentialComparison:
    """What :func:`compare_sequential` found: the verdict, where it stopped, the sequences and the runs.

    ``to_frame()`` has one row per metric (:data:`DECISION_COLUMNS`): its
    differences ``n``, the means ``base`` and ``head``, the sequence's latest
    ``estimate``, ``ci_low`` and ``ci_high`` at level ``1 - alpha``, the
    ``verdict`` and ``decided_at``, the difference count at which the sequence
    was first decided (NaN if never). ``sequence`` is the tidy table of every
    sequence (:data:`SEQUENCE_COLUMNS`). ``comparison`` is the usual
    :func:`~cogeval.compare_runs` of the two runs (its fixed-n p-values describe
    the cases run; the decision is the sequences').
    """

    verdict: str
    """The run's verdict from the metrics' verdicts: better, worse, equivalent, inconclusive or mixed."""
    stopped_at: int
    """Cases run on each side."""
    planned_cases: int | None
    """The fixed-n plan: cases a fixed-size comparison needs for power 0.8 at the same alpha and margin (the largest
    ``n_needed`` of ``comparison``; with no margin, for the observed difference); None when it cannot be planned."""
    calls_saved: int | None
    """Target calls saved against the fixed-n plan: ``2 · (min(planned_cases, available) - stopped_at)``, where
    ``available`` is the cases there were to run (the dataset, or ``max_cases``): a fixed design cannot run more
    than there are, so a sequence that ran them all saved nothing (negative when more were run than planned)."""
    sequence: pd.DataFrame
    """One row per metric × paired difference: ``metric``, ``n``, ``estimate``, ``ci_low``, ``ci_high``."""
    comparison: RunComparison
    """The usual comparison of the two runs."""
    base: EvalSuiteResult
    """The base target's run of the cases run (an ordinary run: save it, compare it, rescore it)."""
    head: EvalSuiteResult
    """The head target's run of the same cases."""
    method: str
    """The confidence sequence used: ``"planned"``, ``"betting"`` or ``"eb"`` (``"auto"`` resolved), or ``"group"``
    (the group-sequential design)."""
    decisions: pd.DataFrame = dataclasses.field(compare=False)
    """``to_frame()``."""
    looks: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=LOOK_COLUMNS), compare=False)
    """``method="group"``: one row per metric × look (:data:`LOOK_COLUMNS`): the cases ``n`` at the look, the
    metric's z ``statistic`` and the look's z bounds (``efficacy``: decided when ``|statistic| >= efficacy``;
    ``futility``: stopped for no difference of the effect when ``|statistic| < futility``, NaN for none). Empty for
    the confidence sequences."""
    design: GroupSequentialDesign | None = dataclasses.field(default=None, compare=False)
    """``method="group"``: the design (:func:`~cogeval.stats.group_sequential_design`, two-sided at ``alpha / k``);
    None for the confidence sequences."""

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: its latest interval and verdict (:data:`DECISION_COLUMNS`)."""
        return self.decisions.copy()

    def plot(self) -> Any:
        """The sequences narrowing to the decision, one panel per metric: :func:`cogeval.present.plot_sequential`,
        through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_sequential")(self)

    def __repr__(self) -> str:
        return (f"SequentialComparison(verdict={self.verdict!r}, stopped_at={self.stopped_at}, "
                f"planned_cases={self.planned_cases}, calls_saved={self.calls_saved})")

    @safe_html
    def _repr_html_(self) -> str:
        fields = {
            "head vs base": f"{self.comparison.head.name} vs {self.comparison.base.name}",
            "verdict": self.verdict, "cases run (each side)": self.stopped_at,
            "fixed-n plan (power 0.8)": self.planned_cases, "target calls saved": self.calls_saved,
        }
        if self.design is not None:
            fields["group design"] = (f"{self.design.looks} looks, spending {self.design.to_dict()['spending']}, "
                                      f"futility {self.design.to_dict()['futility_spending']}")
            fields["inflation factor"] = self.design.inflation_factor
        summary = key_value_table("Sequential comparison", fields)
        return summary + html_table(self.decisions.to_dict("records"), DECISION_COLUMNS)


def compare_sequential(
    dataset: Any,
    base: Any,
    head: Any,
    metrics: Sequence[Any],
    *,
    alpha: float = 0.05,
    margin: float | Mapping[str, float] | None = None,
    batch_size: int = 20,
    max_cases: int | None = None,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    names: tuple[str, str] = ("base", "head"),
    judge: Any = None,
    method: str = "auto",
    effect: float | Mapping[str, float] | None = None,
    looks: int = 10,
    spending: Spending = _SPENDING,
    futility: Spending | None = _FUTILITY,
) -> SequentialComparison:
    """Run ``base`` and ``head`` on ``dataset`` batch by batch; stop once every metric is decided.

    ``metrics`` are per-case metrics, every one deciding; ``margin`` is one
    smallest difference that matters for all of them or ``{name: margin}``;
    ``bounds`` maps a metric to the ``(low, high)`` range of its scores
    (default ``(0, 1)``); ``names`` name the two runs; ``judge`` is
    :class:`~cogeval.EvalSuite`'s; ``method`` is
    :func:`~cogeval.stats.confidence_sequence`'s: ``"planned"`` (bets tuned to
    each metric's margin, which must be > 0), ``"betting"`` or ``"eb"``; the
    default ``"auto"`` is ``"planned"`` when every metric has a margin > 0,
    else ``"betting"`` (the one used is ``method`` of the result). On the
    benchmark ``"planned"`` needed fewer cases than ``"betting"`` at the
    margin, at twice it and at no difference (``docs/sequential.md``). The
    module docstring states the rules. Works in a script and inside Jupyter.

    ``method="group"`` runs a group-sequential design instead
    (:func:`~cogeval.stats.group_sequential_design`, two-sided at
    ``alpha / k``, power 0.8 at ``effect``, ``looks`` looks, the ``spending``
    and ``futility`` spending families): ``effect`` (one for all metrics or
    ``{name: effect}``, > 0) is the difference the design is powered for, the
    first look's plan is made after ``batch_size`` cases, and ``bounds`` are
    not needed. It stops for an effect (``better``/``worse``) or for no
    difference of ``effect`` (``equivalent`` when the metric's margin is shown,
    else ``inconclusive``); the rules are in ``docs/sequential.md``. ``effect``,
    ``looks``, ``spending`` and ``futility`` belong to that method.

    >>> from cogeval import exact_match
    >>> from cogeval.examples import assistant_v1, assistant_v2, questions
    >>> r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1)
    >>> r.verdict, r.stopped_at, r.planned_cases
    ('better', 80, 342)
    """
    cases = list(as_dataset(dataset))
    order = np.random.default_rng(check_seed("seed", seed)).permutation(len(cases))
    cases = [cases[i] for i in order[: len(cases) if max_cases is None else check_positive_int("max_cases", max_cases)]]
    batch_size = check_positive_int("batch_size", batch_size)
    if not cases:
        raise InputError("dataset must hold at least one case")
    if isinstance(metrics, (str, bytes)) or not isinstance(metrics, Sequence) or not metrics:
        raise InputError(f"metrics must be a non-empty list of per-case metrics; got {describe(metrics)}")
    metric_names = [name for name in (getattr(m, "name", None) for m in metrics) if isinstance(name, str)]
    if len(metric_names) != len(metrics):
        raise InputError(f"metrics must hold per-case metrics (made with metric(...) or the built-ins); got {describe(metrics)}")
    margins = _per_metric("margin", margin, metric_names, 0.0)
    if not isinstance(method, str) or method.lower() not in _METHODS:  # the confidence sequences first, as before
        raise InputError(f"method must be one of {', '.join(map(repr, _METHODS[:-1]))}; got {describe(method)} "
                         "(or 'group': a group-sequential design, planned with effect=...)")
    method = method.lower()
    group = method == "group"
    ranges = _per_metric("bounds", bounds, metric_names, (-math.inf, math.inf) if group else (0.0, 1.0))
    if effect is not None and not group:
        raise InputError(f"effect is the planned difference of method='group'; method={method!r} takes none, "
                         f"got effect={effect!r}")
    effects = _per_metric("effect", effect, metric_names, 0.0)
    level = split_alpha(alpha, len(metrics))
    if method == "auto":
        method = "planned" if all(margins.values()) else "betting"
    unplanned = [name for name in metric_names if method == "planned" and not margins[name]]
    if unplanned:
        raise InputError(f"method='planned' bets on the margin, and metric {unplanned[0]!r} has none: give "
                         f"margin=... (> 0) for every metric, or use method='betting'")
    design = None
    if group:
        missing = [name for name in metric_names if not effects[name]]
        if missing:
            raise InputError(f"method='group' plans for a difference, and metric {missing[0]!r} has none: give "
                             f"effect=... (> 0) for every metric")
        design = group_sequential_design(check_positive_int("looks", looks), alpha=level, power=_POWER,
                                         spending=spending, futility=futility, sided=2)
    _check_names(names)
    targets = {names[0]: base, names[1]: head}
    directions = {m.name: bool(m.higher_is_better) for m in metrics}

    def sequence(differences: Mapping[str, np.ndarray], name: str) -> ConfidenceSequence:
        lo, hi = ranges[name]
        return confidence_sequence(differences[name], alpha=level, lower=lo - hi, upper=hi - lo, method=method,
                                   effect=margins[name] if method == "planned" else None)

    async def run(start: int, stop: int, runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]]) -> list[EvalSuite]:
        step = [EvalSuite(cases[start:stop], target, metrics=metrics, judge=judge, progress=False, name=name)
                for name, target in targets.items()]
        for side, result in zip(runs, await arun_interleaved(step)):
            side.append(result)
        return step

    async def batches() -> tuple[tuple[list[EvalSuiteResult], list[EvalSuiteResult]], list[EvalSuite], Any]:
        runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]] = ([], [])
        if design is not None:
            rule = _group_looks(design, [_Planned(name, directions[name], effects[name], margins[name])
                                         for name in metric_names], len(cases), batch_size, alpha)
            done, target = 0, next(rule)
            while True:
                step = await run(done, target, runs)
                done = target
                try:
                    target = rule.send(_pairs(runs, metric_names, ranges))
                except StopIteration as stopped:
                    return runs, step, stopped.value
        for start in range(0, len(cases), batch_size):
            step = await run(start, start + batch_size, runs)
            differences = _differences(runs, metric_names, ranges)
            if all(_verdicts(*sequence(differences, name).interval, True, margins[name]) != "inconclusive"
                   for name in metric_names):
                break
        return runs, step, None

    (base_runs, head_runs), last, outcome = run_sync(batches())
    stopped_at = sum(len(r.results) for r in base_runs)
    base_run, head_run = (_joined(suite, runs, cases[:stopped_at]) for suite, runs in zip(last, (base_runs, head_runs)))
    comparison = compare_runs(base_run, head_run, alpha=alpha, seed=seed, metrics=metric_names, margins=margins)
    if design is not None:
        decisions, sequences, look_rows = outcome
        rows = []
        pairs = _pairs(([base_run], [head_run]), metric_names, ranges)
        for name in metric_names:
            m, latest = comparison.metrics[name], sequences[sequences.metric == name].tail(1)
            state, decided_at = decisions.get(name, ("inconclusive", math.nan))
            rows.append({"metric": name, "higher_is_better": m.higher_is_better, "n": pairs[name].shape[1],
                         "base": m.base, "head": m.head,
                         **{c: latest[c].iloc[0] if len(latest) else math.nan for c in ("estimate", "ci_low", "ci_high")},
                         "alpha": level, "margin": margins[name], "verdict": state, "decided_at": decided_at})
        plans = [_plan(pairs[name], effects[name], alpha, len(metric_names)) for name in metric_names]
        planned = None if None in plans else max(n for n in plans if n is not None)
        looks_table = pd.DataFrame(look_rows, columns=LOOK_COLUMNS)
    else:
        differences = _differences(([base_run], [head_run]), metric_names, ranges)
        frames, rows = [], []
        for name in metric_names:
            frame = sequence(differences, name).to_frame()
            m = comparison.metrics[name]
            states = _verdicts(frame.ci_low, frame.ci_high, m.higher_is_better, margins[name])
            decided = np.flatnonzero(states != "inconclusive")
            last_row = frame.iloc[-1] if len(frame) else pd.Series(math.nan, SEQUENCE_COLUMNS[1:])
            rows.append({"metric": name, "higher_is_better": m.higher_is_better, "n": len(frame), "base": m.base,
                         "head": m.head, "estimate": last_row.estimate, "ci_low": last_row.ci_low,
                         "ci_high": last_row.ci_high, "alpha": level, "margin": margins[name],
                         "verdict": states[-1] if len(states) else "inconclusive",
                         "decided_at": float(decided[0] + 1) if len(decided) else math.nan})
            frames.append(frame.assign(metric=name)[SEQUENCE_COLUMNS])
        sequences = pd.concat(frames, ignore_index=True)
        needed = [m.n_needed for m in comparison.metrics.values()]
        planned = None if None in needed else max(n for n in needed if n is not None)
        looks_table = pd.DataFrame(columns=LOOK_COLUMNS)
    return SequentialComparison(
        verdict=overall([row["verdict"] for row in rows]), stopped_at=stopped_at, planned_cases=planned,
        calls_saved=None if planned is None else 2 * (min(planned, len(cases)) - stopped_at),
        sequence=sequences, comparison=comparison, base=base_run, head=head_run,
        method=method, decisions=pd.DataFrame(rows, columns=DECISION_COLUMNS), looks=looks_table, design=design,
    )


def _check_names(names: Any) -> None:
    if not isinstance(names, (tuple, list)) or len(names) != 2 or not all(isinstance(n, str) for n in names) \
            or names[0] == names[1]:
        raise InputError(f"names must be two different strings (base, head); got {describe(names)}")


def _per_metric(argument: str, value: Any, names: list[Any], default: Any) -> dict[str, Any]:
    """``margin``, ``effect`` or ``bounds`` for every metric: one value for all (a margin or an effect), a mapping by
    name, or the default (not checked: the bounds of ``method="group"`` default to the whole line)."""
    if argument != "bounds" and not isinstance(value, Mapping):
        value = {} if value is None else dict.fromkeys(names, value)
    given = dict(value or {})
    for name, chosen in given.items():
        if name not in names:
            raise InputError(f"{argument} names {describe(name)}, which is not one of the metrics: {', '.join(map(str, names))}")
        if argument == "bounds":
            ok = isinstance(chosen, (tuple, list)) and len(chosen) == 2 and all(map(_finite, chosen)) \
                and chosen[0] < chosen[1]
        else:
            ok = _finite(chosen) and (chosen > 0 if argument == "effect" else chosen >= 0)
        if not ok:
            expected = {"margin": "a finite number >= 0 in the metric's units",
                        "effect": "a finite number > 0 in the metric's units (the difference to detect)",
                        "bounds": "a (low, high) pair, low < high"}[argument]
            raise InputError(f"{argument}[{name!r}] must be {expected}; got {describe(chosen)}")
    return {name: (float(v) if argument != "bounds" else (float(v[0]), float(v[1])))
            for name, v in ((name, given.get(name, default)) for name in names)}


def _finite(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _pairs(runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]], names: list[str],
           ranges: Mapping[str, tuple[float, float]]) -> dict[str, np.ndarray]:
    """Each metric's scores ``[base, head]`` (shape (2, n)) in case order, a case missing a score on either side left
    out; a score outside the metric's bounds raises :class:`InputError` naming the metric, the case and the score."""
    base, head = ([r for result in side for r in result.results] for side in runs)
    out = {}
    for name in names:
        lo, hi = ranges[name]
        pairs = np.array([[_score(r, name) for r in base], [_score(r, name) for r in head]], dtype=float).reshape(2, -1)
        outside = np.flatnonzero((pairs < lo) | (pairs > hi))
        if len(outside):
            side, i = divmod(int(outside[0]), pairs.shape[1])
            raise InputError(f"metric {name!r} scored {pairs[side, i]:g} on case {base[i].case_key[:12]}… "
                             f"({describe(base[i].case.input)}), outside its bounds [{lo:g}, {hi:g}]; "
                             f"give compare_sequential bounds={{{name!r}: (low, high)}}")
        out[name] = pairs[:, ~np.isnan(pairs).any(axis=0)]
    return out


def _differences(runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]], names: list[str],
                 ranges: Mapping[str, tuple[float, float]]) -> dict[str, np.ndarray]:
    """Each metric's paired differences ``head - base`` (of :func:`_pairs`)."""
    return {name: pair[1] - pair[0] for name, pair in _pairs(runs, names, ranges).items()}


def _score(result: Any, name: str) -> float:
    score = result.scores.get(name)
    return math.nan if score is None or score.value is None else float(score.value)


class _Planned(NamedTuple):
    """A deciding metric of ``method="group"``."""

    name: str
    higher_is_better: bool
    effect: float
    margin: float


def _plan(pair: np.ndarray, effect: float, alpha: float, k: int) -> int | None:
    """The fixed-n plan for ``effect`` with the spread seen so far (``plan_sample_size``, power 0.8, Bonferroni over
    ``k`` metrics): McNemar's with the discordance seen, at least ``effect`` (a smaller one cannot hold that
    difference), for 0/1 scores; else the t-test's with the differences' sd. None before 2 pairs, or while every
    graded difference is the same (no spread to plan with)."""
    b, h = pair
    d = noise_floor(h - b)
    if len(d) < 2:
        return None
    if is_binary(b, h):
        discordance = max(np.count_nonzero(d) / len(d), effect)
        return plan_sample_size(effect, discordance=min(discordance, 1.0), alpha=alpha, power=_POWER, family_size=k)
    sd = float(d.std(ddof=1))
    return plan_sample_size(effect, sd=sd, alpha=alpha, power=_POWER, family_size=k) if sd > 0 else None


def _statistic(pair: np.ndarray) -> tuple[float, float, float]:
    """``(z, estimate, se)`` of the paired differences ``head - base``: McNemar's z ``(c - b) / √(b + c)`` for 0/1
    scores (0 with no discordant pair), else the paired t mapped to the normal scale through its p-value
    (``Φ⁻¹(F_t(t; n - 1))``; 0 when every difference is 0, NaN when they are another constant or fewer than 2)."""
    from scipy.special import ndtri, stdtr

    b, h = pair
    d = noise_floor(h - b)
    n = len(d)
    if n < 2:
        return math.nan, float(d.mean()) if n else math.nan, math.nan
    estimate = float(d.mean())
    if is_binary(b, h):
        discordant = int(np.count_nonzero(d))
        return (float(d.sum() / math.sqrt(discordant)) if discordant else 0.0), estimate, math.sqrt(discordant) / n
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0 or se < 10 * np.finfo(float).eps * abs(estimate):
        return (0.0 if estimate == 0 else math.nan), estimate, se
    t = estimate / se
    return float(-ndtri(stdtr(n - 1, -t)) if t > 0 else ndtri(stdtr(n - 1, t))), estimate, se


def _bound_interval(estimate: float, se: float, bound: float, n: int, binary: bool) -> tuple[float, float]:
    """The repeated confidence interval ``estimate ± q·se`` at a look: it excludes 0 exactly when ``|z| >= bound``
    (``q`` is ``bound`` for McNemar's z, the t quantile at the same tail probability for the t-test)."""
    from scipy.special import ndtr, stdtrit

    q = bound if binary or n < 2 else float(stdtrit(n - 1, ndtr(bound)))
    return estimate - q * se, estimate + q * se


def _group_looks(design: GroupSequentialDesign, metrics: list[_Planned], available: int, pilot: int, alpha: float
                 ) -> Generator[int, Mapping[str, np.ndarray], tuple[dict[str, tuple[str, float]], pd.DataFrame,
                                                                       list[dict[str, Any]]]]:
    """The group rule as a generator: it yields how many cases to have run, is sent every metric's scores
    ``[base, head]`` so far (:func:`_pairs`), and returns ``({metric: (verdict, decided_at)}, sequence rows, look
    rows)``; the rules are in ``docs/sequential.md``.

    The maximum is ``ceil(fixed-n plan × inflation factor)``, the plan made from the spread seen so far
    (:func:`_plan`, the largest over the metrics not yet decided), and look ``j`` is set for ``t_j`` of it
    (:meth:`~GroupSequentialDesign.sample_sizes`). The first plan is made after ``pilot`` cases: the looks
    already due then are taken as one, or else the first look is set. After each look the maximum is re-planned
    and the next look set for its share of the new maximum; it is taken when the cases reach it. Its bounds are
    the design's at the information fractions reached (:meth:`~GroupSequentialDesign.bounds_at`): the cases at
    each look over the current maximum, or, at the last look (the last one planned, or once the cases reach the
    maximum), over the cases run, which spends all of alpha. At a look each metric not yet decided is decided
    for an effect when its ``|z| >= efficacy`` (``better`` / ``worse`` by its direction and the sign of z), for no
    difference of its effect when ``|z| < futility`` (``equivalent`` when the house's equivalence test shows its
    margin at level ``alpha / (2k)``, else ``inconclusive``: at a stop chosen by the data the test at level
    ``alpha / k`` called equivalent 9% of the simulated comparisons whose true difference was the margin, at half
    that level 2%); at the last look the two bounds meet and every metric is decided. It
    stops once every metric is decided, or when the cases run out (a metric still undecided is left out of the
    returned verdicts: ``inconclusive``). While no metric can be planned (no spread yet) it runs ``pilot`` more
    cases at a time.
    """
    level, k = design.alpha, len(metrics)
    decided: dict[str, tuple[str, float]] = {}
    sequence: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    taken: list[int] = []  # the cases at each look taken
    done, target, next_look, pending = 0, min(pilot, available), 0, False
    while True:
        scores = yield target
        done = target
        plans = {m.name: _plan(scores[m.name], m.effect, alpha, k) for m in metrics if m.name not in decided}
        sizes = _due(design, plans)
        due = [j for j in range(next_look, len(sizes)) if sizes[j] <= done]
        if sizes and (pending or due):
            next_look = max(due, default=next_look) + 1
            last = next_look == design.looks or done >= sizes[-1]
            fractions = [n / done for n in taken] + [1.0] if last else [n / sizes[-1] for n in [*taken, done]]
            efficacy, futility = design.bounds_at(fractions)
            taken.append(done)
            for m in metrics:
                b, h = scores[m.name]
                z, estimate, se = _statistic(scores[m.name])
                low, high = _bound_interval(estimate, se, efficacy, len(b), is_binary(b, h))
                sequence.append({"metric": m.name, "n": len(b), "estimate": estimate, "ci_low": low, "ci_high": high})
                rows.append({"metric": m.name, "look": len(taken), "n": done, "statistic": z, "efficacy": efficacy,
                             "futility": futility})
                if m.name in decided or math.isnan(z):
                    continue
                if abs(z) >= efficacy:
                    decided[m.name] = ("better" if (z > 0) == m.higher_is_better else "worse", float(len(b)))
                elif abs(z) < futility:
                    shown = m.margin > 0 and equivalent(PairedSample(b, h), m.margin, level / 2)
                    decided[m.name] = ("equivalent" if shown else "inconclusive", float(len(b)))
            if last:
                next_look = design.looks
        plans = {name: plan for name, plan in plans.items() if name not in decided}
        if not plans or done >= available or next_look >= design.looks:
            return decided, pd.DataFrame(sequence, columns=SEQUENCE_COLUMNS), rows
        sizes = _due(design, plans)
        pending = bool(sizes)
        target = min(max(sizes[next_look] if sizes else done + pilot, done + 1), available)


def _due(design: GroupSequentialDesign, plans: Mapping[str, int | None]) -> list[int]:
    """The cases at which each look is set: :meth:`~GroupSequentialDesign.sample_sizes` of the largest plan (none
    while no metric can be planned)."""
    known = [plan for plan in plans.values() if plan is not None]
    return design.sample_sizes(max(known)) if known else []


def _joined(suite: Any, batches: list[EvalSuiteResult], cases: list[Any]) -> EvalSuiteResult:
    """One ordinary run of ``cases`` from the runs of its batches: the suite resumes a run holding every batch's
    results (each case's occurrence counted over all of ``cases``), so it asks the target nothing and rebuilds
    the aggregates, statistics and assertions of the whole; the run keeps the first batch's id and start."""
    first = batches[0].run
    seen: dict[str, int] = {}
    results = []
    for record in (r for batch in batches for r in batch.run.results):
        results.append(record.model_copy(update={"occurrence": seen.get(record.case_key, 0)}))
        seen[record.case_key] = seen.get(record.case_key, 0) + 1
    duration = sum(batch.run.stats.duration for batch in batches)
    earlier = first.model_copy(update={
        "results": results, "dataset": DatasetRecord(fingerprint=Dataset(cases).fingerprint, cases=len(cases)),
        "stats": first.stats.model_copy(update={"duration": duration}),
    })
    whole = type(suite)(cases, suite.target, metrics=suite.metrics, judge=suite.judge, progress=False, name=suite.name)
    result: EvalSuiteResult = whole.run(resume=earlier, retry_errors=False)
    return result
