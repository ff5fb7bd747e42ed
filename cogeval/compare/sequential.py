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

``cluster=`` (a case-metadata field or a function of the case, resolved as
:func:`~cogeval.compare.clusters.cluster_labels` resolves it; a case without one
is an error naming it) makes whole clusters the units: the random order is drawn
over clusters, each cluster's cases run together in the same batch, every batch
and look ends at a cluster boundary, ``method="group"`` tests each look with the
clustered test and re-plans with the clustered variance, the confidence
sequences take one observation per cluster (its mean difference), and the final
``comparison`` is ``compare_runs(..., cluster=cluster)`` (``docs/sequential.md``,
"Clustered cases").

>>> _verdicts(np.array([0.1, -0.4, -0.02, -0.3]), np.array([0.5, -0.1, 0.03, 0.4]), True, 0.05).tolist()
['better', 'worse', 'equivalent', 'inconclusive']
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Generator, Mapping, Sequence
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from cogeval import _backend
from cogeval import _numbers as numbers
from cogeval._check import check_positive_int, check_seed, describe
from cogeval._html import escape, html_table, key_value_table, safe_html
from cogeval.compare.clusters import check_cluster, cluster_labels, cluster_name
from cogeval.compare.paired import PairedSample, is_binary
from cogeval.compare.result import RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.compare.verdicts import equivalent, overall
from cogeval.data import Case, Dataset
from cogeval.data.records import DatasetRecord, ResultRecord
from cogeval.errors import InputError
from cogeval.evaluate.result import EvalSuiteResult
from cogeval.evaluate.suite import EvalSuite, arun_interleaved, as_dataset
from cogeval.execution import run_sync
from cogeval.stats import (
    ConfidenceSequence,
    clustered_mcnemar_test,
    clustered_t_test,
    confidence_sequence,
    plan_sample_size,
    split_alpha,
)
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
_PILOT_CLUSTERS = 20
"""With clustered cases, ``method="group"`` makes its first plan after at least this many clusters (and at least
``batch_size`` cases): the unclustered pilot's 20 independent units. A plan made from fewer clusters is too noisy: a
small clustered variance seen early makes the maximum small, so the look that spends all alpha comes early, just
when the t statistic is large (with a pilot of 4 clusters the type-I error was 7.6% instead of 5%)."""
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
    cluster: str | None = None
    """What the cases were clustered by (``cluster=``: the field, or the function's name); None: not clustered."""
    clusters: int | None = None
    """With ``cluster=``: the clusters run (each whole); None otherwise."""

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: its latest interval and verdict (:data:`DECISION_COLUMNS`)."""
        return self.decisions.copy()

    def plot(self) -> Any:
        """The sequences narrowing to the decision, one panel per metric: :func:`cogeval.present.plot_sequential`,
        through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_sequential")(self)

    def headline(self) -> str:
        """The sequential decision in one sentence, in the words of :meth:`RunComparison.headline
        <cogeval.compare.result.RunComparison.headline>`: the verdict, the metrics behind it, where it stopped.
        ``comparison.headline()`` is the fixed-n reanalysis of the cases run and says so.

        >>> from cogeval import exact_match
        >>> from cogeval.examples import assistant_v1, assistant_v2, questions
        >>> compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1).headline()
        'head is better: better on exact_match (sequential, planned confidence sequences; α = 0.05, stopped at 80 cases each side; fixed-n plan 342)'
        """
        return _headline(self.decisions, self.verdict, self._where())

    def _where(self) -> str:
        """``(sequential, planned confidence sequences; α = 0.05, stopped at 80 cases each side; fixed-n plan 342)``."""
        how = "group-sequential design" if self.method == "group" else f"{self.method} confidence sequences"
        clustered = "" if self.cluster is None else f", {numbers.count(self.clusters)} clusters by {self.cluster}"
        plan = "" if self.planned_cases is None else f"; fixed-n plan {numbers.count(self.planned_cases)}"
        return (f"(sequential, {how}; α = {self.comparison.alpha:g}, stopped at {numbers.count(self.stopped_at)} cases each "
                f"side{clustered}{plan})")

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
        if self.cluster is not None:
            fields["clustered by"] = f"{self.cluster}: {self.clusters} clusters run"
        if self.design is not None:
            fields["group design"] = (f"{self.design.looks} looks, spending {self.design.to_dict()['spending']}, "
                                      f"futility {self.design.to_dict()['futility_spending']}")
            fields["inflation factor"] = self.design.inflation_factor
        summary = key_value_table("Sequential comparison", fields)
        lead = f'<div class="cogeval">{escape(self.headline())}</div>'
        return lead + summary + html_table(self.decisions.to_dict("records"), DECISION_COLUMNS)


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
    cluster: Any = None,
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

    ``cluster`` (a case-metadata field such as ``"passage"``, or a function of the
    :class:`~cogeval.Case`; a case without one is an :class:`InputError` naming it)
    says which cases are not independent: the random order is then drawn over whole
    clusters, a cluster's cases run together (consecutive, in the same batch), and
    every batch and look ends at a cluster boundary (``batch_size`` and
    ``max_cases`` count cases: a batch holds whole clusters until it has at least
    ``batch_size``, and the clusters run hold at most ``max_cases``). ``method="group"``
    tests each look with the clustered statistic (the clustered McNemar's signed z
    for 0/1 scores, the clustered t, CR2 with Bell–McCaffrey df, mapped to z
    otherwise) and re-plans with the clustered variance (the design effect); the
    confidence sequences take each cluster's mean difference as one observation;
    ``comparison`` is ``compare_runs(..., cluster=cluster)``.

    >>> from cogeval import exact_match
    >>> from cogeval.examples import assistant_v1, assistant_v2, questions
    >>> r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1)
    >>> r.verdict, r.stopped_at, r.planned_cases
    ('better', 80, 342)
    """
    cases = list(as_dataset(dataset))
    cluster = check_cluster(cluster)
    rng = np.random.default_rng(check_seed("seed", seed))
    limit = len(cases) if max_cases is None else check_positive_int("max_cases", max_cases)
    batch_size = check_positive_int("batch_size", batch_size)
    if not cases:
        raise InputError("dataset must hold at least one case")
    cases, codes = _ordered(cases, cluster, rng, limit)
    ends = _ends(codes, len(cases))
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

    def sequence(samples: Mapping[str, PairedSample], name: str) -> tuple[ConfidenceSequence, np.ndarray]:
        """The metric's confidence sequence over its observations (a case's difference, or a cluster's mean
        difference), and the paired cases seen at each observation."""
        lo, hi = ranges[name]
        values, seen = _observations(samples[name])
        return confidence_sequence(values, alpha=level, lower=lo - hi, upper=hi - lo, method=method,
                                   effect=margins[name] if method == "planned" else None), seen

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
                                         for name in metric_names], len(cases), batch_size, alpha,
                                ends if cluster is not None else None)
            done, target = 0, next(rule)
            while True:
                step = await run(done, target, runs)
                done = target
                try:
                    target = rule.send(_pairs(runs, metric_names, ranges, codes))
                except StopIteration as stopped:
                    return runs, step, stopped.value
        start = 0
        for stop in _batches(ends, batch_size):
            step = await run(start, stop, runs)
            start = stop
            samples = _pairs(runs, metric_names, ranges, codes)
            if all(_verdicts(*sequence(samples, name)[0].interval, True, margins[name]) != "inconclusive"
                   for name in metric_names):
                break
        return runs, step, None

    (base_runs, head_runs), last, outcome = run_sync(batches())
    stopped_at = sum(len(r.results) for r in base_runs)
    base_run, head_run = (_joined(suite, runs, cases[:stopped_at]) for suite, runs in zip(last, (base_runs, head_runs)))
    comparison = compare_runs(base_run, head_run, alpha=alpha, seed=seed, metrics=metric_names, margins=margins,
                              cluster=cluster)
    pairs = _pairs(([base_run], [head_run]), metric_names, ranges, codes)
    if design is not None:
        decisions, sequences, look_rows = outcome
        rows = []
        for name in metric_names:
            m, latest = comparison.metrics[name], sequences[sequences.metric == name].tail(1)
            state, decided_at = decisions.get(name, ("inconclusive", math.nan))
            rows.append({"metric": name, "higher_is_better": m.higher_is_better, "n": pairs[name].n,
                         "base": m.base, "head": m.head,
                         **{c: latest[c].iloc[0] if len(latest) else math.nan for c in ("estimate", "ci_low", "ci_high")},
                         "alpha": level, "margin": margins[name], "verdict": state, "decided_at": decided_at})
        plans = [_plan(pairs[name], effects[name], alpha, len(metric_names)) for name in metric_names]
        planned = None if None in plans else max(n for n in plans if n is not None)
        looks_table = pd.DataFrame(look_rows, columns=LOOK_COLUMNS)
    else:
        frames, rows = [], []
        for name in metric_names:
            found, seen = sequence(pairs, name)
            frame = found.to_frame().assign(n=seen)  # n: the paired cases seen (one observation per cluster)
            m = comparison.metrics[name]
            states = _verdicts(frame.ci_low, frame.ci_high, m.higher_is_better, margins[name])
            decided = np.flatnonzero(states != "inconclusive")
            last_row = frame.iloc[-1] if len(frame) else pd.Series(math.nan, SEQUENCE_COLUMNS[1:])
            rows.append({"metric": name, "higher_is_better": m.higher_is_better, "n": pairs[name].n, "base": m.base,
                         "head": m.head, "estimate": last_row.estimate, "ci_low": last_row.ci_low,
                         "ci_high": last_row.ci_high, "alpha": level, "margin": margins[name],
                         "verdict": states[-1] if len(states) else "inconclusive",
                         "decided_at": float(seen[decided[0]]) if len(decided) else math.nan})
            frames.append(frame.assign(metric=name)[SEQUENCE_COLUMNS])
        sequences = pd.concat(frames, ignore_index=True)
        needed = [m.n_needed for m in comparison.metrics.values()]
        planned = None if None in needed else max(n for n in needed if n is not None)
        looks_table = pd.DataFrame(columns=LOOK_COLUMNS)
    table = pd.DataFrame(rows, columns=DECISION_COLUMNS)
    verdict = overall([row["verdict"] for row in rows])
    comparison = dataclasses.replace(comparison, reanalysis=_reanalysis(table, verdict, comparison, looks_table,
                                                                         stopped_at))
    return SequentialComparison(
        verdict=verdict, stopped_at=stopped_at, planned_cases=planned,
        calls_saved=None if planned is None else 2 * (min(planned, len(cases)) - stopped_at),
        sequence=sequences, comparison=comparison, base=base_run, head=head_run,
        method=method, decisions=table, looks=looks_table, design=design,
        cluster=cluster_name(cluster), clusters=None if codes is None else int(codes[stopped_at - 1]) + 1,
    )


def _headline(decisions: pd.DataFrame, verdict: str, where: str) -> str:
    """The sequential verdict and the metrics behind it, then the metrics it left undecided."""
    def named(word: str) -> str:
        return ", ".join(map(str, decisions.loc[decisions["verdict"] == word, "metric"]))

    if verdict == "mixed":
        sentence = f"mixed: head is better on {named('better')} and worse on {named('worse')} {where}"
    elif verdict in ("better", "worse"):
        sentence = f"head is {verdict}: {verdict} on {named(verdict)} {where}"
    elif verdict == "equivalent":
        sentence = f"equivalent: every metric is within its margin {where}"
    else:
        return f"inconclusive: no metric was shown better, worse or equivalent {where}"
    undecided = named("inconclusive")
    return sentence + (f"; undecided: {undecided}" if undecided else "")


def _reanalysis(decisions: pd.DataFrame, verdict: str, comparison: RunComparison, looks: pd.DataFrame,
                cases: int) -> str:
    """:attr:`RunComparison.reanalysis` of the fixed-n comparison of the cases a sequential comparison ran: it is
    not the decision, and where a metric's verdicts differ, why (a group design's last look: its z and bound).

    >>> from cogeval import exact_match, contains
    >>> from cogeval.examples import assistant_v1, assistant_v2, questions
    >>> r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match(), contains()], method="group",
    ...                        effect=0.1)
    >>> r.comparison.reanalysis
    'a fixed-n reanalysis of the 300 cases run, not the sequential decision (better), where contains is inconclusive (z = 2.513 within ±2.681 at the last look): the design splits α over the metrics and spends it over its looks, so its bounds are stricter than a fixed-n test'
    """
    text = f"a fixed-n reanalysis of the {numbers.count(cases)} cases run, not the sequential decision ({verdict})"
    differ = []
    for row in decisions.itertuples():
        if row.verdict == comparison.metrics[str(row.metric)].verdict:
            continue
        last = looks[looks["metric"] == row.metric].tail(1)
        where = "" if last.empty or row.verdict != "inconclusive" else (
            f" (z = {numbers.number(last['statistic'].iloc[0])} within ±{numbers.number(last['efficacy'].iloc[0])} "
            "at the last look)")
        differ.append(f"{row.metric} is {row.verdict}{where}")
    if not differ:
        return text
    why = ("the design splits α over the metrics and spends it over its looks, so its bounds are stricter than a "
           "fixed-n test" if not looks.empty else
           "its confidence sequences split α over the metrics and hold at every look, so they are wider than a "
           "fixed-n interval")
    return f"{text}, where {', '.join(differ)}: {why}"


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


def _ordered(cases: list[Case], cluster: Any, rng: np.random.Generator, limit: int
             ) -> tuple[list[Case], np.ndarray | None]:
    """The cases in the order they run, at most ``limit`` of them, and each one's cluster code (0 .. G - 1 in the
    order the clusters run; None without ``cluster``).

    Without clusters: ``rng.permutation`` of the cases. With them: ``rng.permutation`` of the clusters (numbered as
    they first appear in the dataset), each cluster's cases in dataset order, the clusters that fit in ``limit``
    whole (an InputError when the first does not).
    """
    if cluster is None:
        order = rng.permutation(len(cases))
        return [cases[i] for i in order[:limit]], None
    labels = _case_labels(cluster, cases)
    first_seen, _ = pd.factorize(pd.Series(labels, dtype=object))
    groups = int(first_seen.max()) + 1
    position = np.empty(groups, dtype=np.int64)
    position[rng.permutation(groups)] = np.arange(groups)  # the cluster drawn k-th runs k-th
    codes = position[first_seen]
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    ends = _ends(codes, len(cases))
    fits = ends[ends <= limit]
    if not len(fits):
        first = order[0]
        raise InputError(f"max_cases={limit} holds no whole cluster: the first cluster in the seeded order "
                         f"({describe(labels[first])}) has {int(ends[0])} cases, and a cluster runs whole; give "
                         f"max_cases >= {int(ends[0])}")
    kept = int(fits[-1])
    return [cases[i] for i in order[:kept]], codes[:kept]


def _case_labels(cluster: Any, cases: list[Case]) -> np.ndarray:
    """Each case's cluster by :func:`~cogeval.compare.clusters.cluster_labels`'s rule (the rule
    ``compare_runs(..., cluster=)`` applies to the runs), so a case without one is the same InputError."""
    records = [ResultRecord.model_validate({"caseKey": case.key, "case": case, "scores": []}) for case in cases]
    return cluster_labels(cluster, records)


def _ends(codes: np.ndarray | None, n: int) -> np.ndarray:
    """The case counts at which a cluster ends (every count ``1 .. n`` without clusters)."""
    if codes is None:
        return np.arange(1, n + 1)
    return np.flatnonzero(np.diff(codes, append=-1) != 0) + 1


def _batches(ends: np.ndarray, batch_size: int) -> list[int]:
    """Where each batch stops: at the first cluster end at least ``batch_size`` cases after the last stop (every
    ``batch_size`` cases without clusters), and at the last case."""
    stops, last = [], 0
    for end in ends.tolist():
        if end - last >= batch_size or end == ends[-1]:
            stops.append(end)
            last = end
    return stops


def _at_end(ends: np.ndarray | None, n: int) -> int:
    """``n`` moved up to the next cluster end (``n`` itself without clusters; at most the last case)."""
    if ends is None or not len(ends):
        return n
    return int(ends[min(int(np.searchsorted(ends, n)), len(ends) - 1)])


def _pairs(runs: tuple[list[EvalSuiteResult], list[EvalSuiteResult]], names: list[str],
           ranges: Mapping[str, tuple[float, float]], codes: np.ndarray | None = None) -> dict[str, PairedSample]:
    """Each metric's :class:`PairedSample` of the cases run (in case order, with their cluster codes when
    clustered), a case missing a score on either side left out; a score outside the metric's bounds raises
    :class:`InputError` naming the metric, the case and the score."""
    base, head = ([r for result in side for r in result.results] for side in runs)
    clusters = None if codes is None else codes[: len(base)]
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
        kept = ~np.isnan(pairs).any(axis=0)
        out[name] = PairedSample(pairs[0], pairs[1], clusters).take(kept)
    return out


def _observations(sample: PairedSample) -> tuple[np.ndarray, np.ndarray]:
    """What a confidence sequence watches: the paired differences ``head - base`` one by one, or with clusters
    each cluster's mean difference, in the order run; and the paired cases seen at each observation."""
    d = sample.head - sample.base
    if sample.clusters is None:
        return d, np.arange(1, len(d) + 1)
    sizes = np.bincount(sample.clusters)  # codes in run order: the clusters come in the order run
    return np.bincount(sample.clusters, weights=d) / sizes, np.cumsum(sizes)


def _sample(scores: Any) -> PairedSample:
    """The rule's input for one metric: a :class:`PairedSample`, or a ``[base, head]`` array (shape (2, n))."""
    if isinstance(scores, PairedSample):
        return scores
    b, h = np.asarray(scores, dtype=float)
    return PairedSample(b, h)


def _score(result: Any, name: str) -> float:
    score = result.scores.get(name)
    return math.nan if score is None or score.value is None else float(score.value)


class _Planned(NamedTuple):
    """A deciding metric of ``method="group"``."""

    name: str
    higher_is_better: bool
    effect: float
    margin: float


def _plan(sample: PairedSample, effect: float, alpha: float, k: int) -> int | None:
    """The fixed-n plan for ``effect`` with the spread seen so far (``plan_sample_size``, power 0.8, Bonferroni over
    ``k`` metrics): McNemar's with the discordance seen, at least ``effect`` (a smaller one cannot hold that
    difference), for 0/1 scores; else the t-test's with the differences' sd. Clustered cases multiply it by the
    design effect seen (:attr:`PairedSample.design_effect`, at least 1), as a comparison's ``n_needed``. None before
    2 pairs (2 clusters), or while every graded difference is the same (no spread to plan with)."""
    b, h, d = sample.base, sample.head, sample.d
    if len(d) < 2 or sample.groups < 2:
        return None
    if is_binary(b, h):
        discordance = max(np.count_nonzero(d) / len(d), effect)
        needed = plan_sample_size(effect, discordance=min(discordance, 1.0), alpha=alpha, power=_POWER, family_size=k)
    else:
        sd = float(d.std(ddof=1))
        if sd == 0:
            return None
        needed = plan_sample_size(effect, sd=sd, alpha=alpha, power=_POWER, family_size=k)
    deff = sample.design_effect
    return math.ceil(needed * max(1.0, deff)) if sample.clustered and not math.isnan(deff) else needed


class _Look(NamedTuple):
    """A metric's statistic at a look."""

    z: float
    """The z statistic (NaN when undefined)."""
    estimate: float
    """The mean paired difference ``head - base``."""
    se: float
    """Its standard error."""
    df: float
    """The degrees of freedom of the t behind ``z`` (inf for McNemar's normal z, NaN when undefined)."""


def _statistic(sample: PairedSample) -> _Look:
    """The statistic of the paired differences ``head - base``. Unclustered: McNemar's z ``(c - b) / √(b + c)`` for
    0/1 scores (0 with no discordant pair), else the paired t mapped to the normal scale through its p-value
    (``Φ⁻¹(F_t(t; n - 1))``; 0 when every difference is 0, NaN when they are another constant or fewer than 2).
    Clustered (:attr:`PairedSample.clustered`): the clustered McNemar's signed z, ``sign(mean d)·√χ²`` of
    :func:`~cogeval.stats.clustered_mcnemar_test` (Yang's, ``exact=False``), for 0/1 scores; else the clustered t
    (:func:`~cogeval.stats.clustered_t_test`, CR2, Bell–McCaffrey df) mapped to z in the same way."""
    b, h = sample.base, sample.head
    d = sample.d
    n = len(d)
    if n < 2:
        return _Look(math.nan, float(d.mean()) if n else math.nan, math.nan, math.nan)
    estimate = float(d.mean())
    if sample.clustered:
        return _clustered_statistic(sample, estimate)
    if is_binary(b, h):
        discordant = int(np.count_nonzero(d))
        z = float(d.sum() / math.sqrt(discordant)) if discordant else 0.0
        return _Look(z, estimate, math.sqrt(discordant) / n, math.inf)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0 or se < 10 * np.finfo(float).eps * abs(estimate):
        return _Look(0.0 if estimate == 0 else math.nan, estimate, se, n - 1)
    return _Look(_t_to_z(estimate / se, n - 1), estimate, se, n - 1)


def _clustered_statistic(sample: PairedSample, estimate: float) -> _Look:
    """:func:`_statistic` of a clustered sample (an undefined test, fewer than 2 clusters or no spread, is NaN
    and decides nothing; the comparison's warnings say why)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if is_binary(sample.base, sample.head):
            r = clustered_mcnemar_test(sample.head, sample.base, sample.clusters, exact=False)
            z = float(np.sign(estimate)) * math.sqrt(r.statistic) if r.statistic > 0 else \
                (0.0 if r.statistic == 0 else math.nan)
            return _Look(z, estimate, _yang_se(sample), math.inf)
        t = clustered_t_test(sample.d, np.zeros(sample.n), sample.clusters)
        if math.isnan(t.statistic):
            return _Look(math.nan, estimate, t.se, t.df)
        return _Look(_t_to_z(t.statistic, t.df) if t.statistic else 0.0, estimate, t.se, t.df)


def _yang_se(sample: PairedSample) -> float:
    """The standard error of the mean 0/1 difference behind Yang's χ² (so that ``estimate / se`` is the signed z,
    also where the estimate is 0): ``√(G/(G − 1) · ½ Σ_k [(S_k − n_k·S/n)² + S_k²]) / n``, ``S_k`` the cluster sums
    of the differences, ``S`` their total (as :func:`~cogeval.stats.clustered_mcnemar_test` computes χ²)."""
    d = sample.d
    codes = np.zeros(len(d), dtype=np.int64) if sample.clusters is None else sample.clusters
    sums, sizes = np.bincount(codes, weights=d), np.bincount(codes)
    n, g = len(d), len(sizes)
    if g < 2:
        return math.nan
    centred = sums - sizes * sums.sum() / n
    return math.sqrt(g / (g - 1) * 0.5 * float(np.dot(centred, centred) + np.dot(sums, sums))) / n


def _t_to_z(t: float, df: float) -> float:
    """t with ``df`` degrees of freedom on the normal scale, through its tail probability: ``Φ⁻¹(F_t(t; df))``."""
    from scipy.special import ndtri, stdtr

    return float(-ndtri(stdtr(df, -t)) if t > 0 else ndtri(stdtr(df, t)))


def _bound_interval(look: _Look, bound: float) -> tuple[float, float]:
    """The repeated confidence interval ``estimate ± q·se`` at a look: it excludes 0 exactly when ``|z| >= bound``
    (``q`` is ``bound`` for McNemar's z, the t quantile at the same tail probability for a t-test)."""
    from scipy.special import ndtr, stdtrit

    q = bound if not math.isfinite(look.df) else float(stdtrit(look.df, float(ndtr(bound))))
    return look.estimate - q * look.se, look.estimate + q * look.se


def _group_looks(design: GroupSequentialDesign, metrics: list[_Planned], available: int, pilot: int, alpha: float,
                 ends: np.ndarray | None = None,
                 ) -> Generator[int, Mapping[str, Any], tuple[dict[str, tuple[str, float]], pd.DataFrame,
                                                              list[dict[str, Any]]]]:
    """The group rule as a generator: it yields how many cases to have run, is sent every metric's scores so far
    (a :class:`PairedSample`, as :func:`_pairs` makes them, or a ``[base, head]`` array), and returns
    ``({metric: (verdict, decided_at)}, sequence rows, look rows)``; the rules are in ``docs/sequential.md``.
    ``ends``: the case counts at which a cluster ends (clustered cases; the samples then carry their clusters):
    every count it yields is one of them, the first one at or after the count the rule below asks for, and the
    pilot holds at least :data:`_PILOT_CLUSTERS` clusters when some cluster has more than one case.

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
    cases at a time. Clustered samples are tested and planned by :func:`_statistic` and :func:`_plan`'s
    clustered forms.
    """
    level, k = design.alpha, len(metrics)
    if ends is not None and len(ends) and ends[-1] > len(ends):  # some cluster holds more than one case
        pilot = max(pilot, int(ends[min(_PILOT_CLUSTERS, len(ends)) - 1]))
    decided: dict[str, tuple[str, float]] = {}
    sequence: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    taken: list[int] = []  # the cases at each look taken
    done, target, next_look, pending = 0, _at_end(ends, min(pilot, available)), 0, False
    while True:
        sent = yield target
        scores = {m.name: _sample(sent[m.name]) for m in metrics}
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
                sample = scores[m.name]
                look = _statistic(sample)
                z = look.z
                low, high = _bound_interval(look, efficacy)
                sequence.append({"metric": m.name, "n": sample.n, "estimate": look.estimate, "ci_low": low,
                                 "ci_high": high})
                rows.append({"metric": m.name, "look": len(taken), "n": done, "statistic": z, "efficacy": efficacy,
                             "futility": futility})
                if m.name in decided or math.isnan(z):
                    continue
                if abs(z) >= efficacy:
                    decided[m.name] = ("better" if (z > 0) == m.higher_is_better else "worse", float(sample.n))
                elif abs(z) < futility:
                    with warnings.catch_warnings():  # an undefined clustered interval is simply not shown
                        warnings.simplefilter("ignore")
                        shown = m.margin > 0 and equivalent(sample, m.margin, level / 2)
                    decided[m.name] = ("equivalent" if shown else "inconclusive", float(sample.n))
            if last:
                next_look = design.looks
        plans = {name: plan for name, plan in plans.items() if name not in decided}
        if not plans or done >= available or next_look >= design.looks:
            return decided, pd.DataFrame(sequence, columns=SEQUENCE_COLUMNS), rows
        sizes = _due(design, plans)
        pending = bool(sizes)
        target = _at_end(ends, min(max(sizes[next_look] if sizes else done + pilot, done + 1), available))


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
