"""The comparison engine shared by ``compare_runs`` and ``EvalComparison``: two score tables in, a RunComparison out.

See ``docs/comparing.md`` for every rule with a worked example. In short:
pair units ``(case_key, occurrence)``, average trials (order-independent),
apply the error rules (:mod:`cogeval.compare.pairing`) and the noise floor
(differences within :data:`TOLERANCE` are 0); then per metric a paired test
(McNemar for 0/1 metrics, else the t-test or Wilcoxon); Holm within the
deciding and within the informing metrics; the interval that inverts the
test at the metric's Holm level (so it excludes 0 exactly when significant);
Cohen's d_z; the verdict against the margin, with TOST for ``equivalent``;
``mde`` and ``n_needed`` from the paired differences' sd; the ``fragility`` of each significant
metric (:mod:`cogeval.compare.fragility`). When both tables have k ≥ 2 trials per case, each 0/1
metric also gets the rows ``"{metric}.pass^{k}"`` and ``"{metric}.pass@{k}"``
(:func:`~cogeval.compare.pairing.with_reliability`), right after it, informing unless ``decide_on`` names them.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval import _numbers as numbers
from cogeval._check import check_choice, check_probability, check_seed, describe
from cogeval._text import as_text
from cogeval.compare.directions import assumed_warnings, reads_as_cost
from cogeval.compare.fragility import cluster_fragility, fragility
from cogeval.compare.paired import (
    PairedSample,
    PairedTest,
    agreeing_interval,
    constant_shift,
    inverted_interval,
    paired_test,
)
from cogeval.compare.pairing import (
    CASE_ERROR,
    REQUIRED,
    SCORED,
    Pairing,
    UnitCodes,
    check_scores,
    metrics_of,
    pair_units,
    unit_codes,
    unit_ids,
    unit_values,
    with_reliability,
)
from cogeval.compare.result import (
    ERRORED_COLUMNS,
    FAILED_SHARE,
    MetricComparison,
    RunComparison,
    RunInfo,
)
from cogeval.compare.verdicts import check_decide_on, check_margins, equivalent, overall, power, verdict, winner
from cogeval.errors import InputError
from cogeval.stats import adjust_p_values, cohens_d
from cogeval.stats.inversion import holm_levels

TESTS = ("t", "wilcoxon")
"""The tests ``test=`` accepts for non-binary metrics."""

MIN_PAIRS = 30
"""Fewer paired cases than this give a warning."""

MIN_DISCORDANT = 10
"""Fewer discordant pairs than this on a 0/1 metric give a warning."""

CHANGES_COLUMNS = [*col.CHANGES_COLUMNS, col.OCCURRENCE, col.ERRORED]
"""The ``changes`` table: the DESIGN §2 columns, then ``occurrence`` (which copy of a repeated case) and
``errored`` (which run's target failed on the case: ``"base"`` or ``"head"``, and then ``direction`` is
``"error"``; None when neither)."""

_Describe = Callable[[pd.MultiIndex], dict[str, np.ndarray]]
"""What ``changes`` shows of some units (a ``(case_key, occurrence)`` MultiIndex, coded as the tables' units):
``input`` (any value, shown as text), then any further columns, each an object array with one value per unit."""


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


def _with_derived(names: list[str], derived: Mapping[str, str]) -> list[str]:
    """``names`` with the rows derived from each of them (``pass^k``, ``pass@k``) right after it; a derived row
    whose metric is not among ``names`` keeps its place."""
    children: dict[str, list[str]] = {}
    for name, parent in derived.items():
        children.setdefault(parent, []).append(name)
    ordered = []
    for name in names:
        if derived.get(name) in names:
            continue
        ordered += [name, *children.get(name, [])]
    return list(dict.fromkeys(ordered))


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


_Clusters = str | Mapping[str, Any] | Callable[[pd.MultiIndex], np.ndarray]
"""What ``compare_scores(cluster=...)`` takes: a column of both score tables, a mapping of case keys to clusters,
or a function of units (a ``(case_key, occurrence)`` MultiIndex) giving one cluster label per unit."""

_Groupings = Callable[[pd.MultiIndex], Mapping[str, np.ndarray]]
"""Case fields that might group the cases: a function of units giving each field's label per unit (None where a
unit lacks it), which the comparison checks for clustering when no ``cluster`` was given."""


def compare_scores(
    base: pd.DataFrame,
    head: pd.DataFrame,
    *,
    directions: Mapping[str, bool],
    alpha: float = 0.05,
    test: str = "t",
    seed: int | np.random.Generator | None = 0,
    metrics: Iterable[str] | None = None,
    decide_on: Iterable[str] | None = None,
    informing: Iterable[str] = (),
    assumed: Iterable[str] = (),
    margins: Mapping[str, float] | None = None,
    cluster: _Clusters | None = None,
    cluster_name: str | None = None,
    groupings: _Groupings | None = None,
    inputs: Mapping[str, Any] | _Describe | None = None,
    base_info: RunInfo | None = None,
    head_info: RunInfo | None = None,
    warnings: Sequence[str] = (),
    units: Sequence[UnitCodes] | None = None,
    changed: Sequence[str] | None = None,
) -> RunComparison:
    """Compare ``head`` against ``base``, metric by metric, on the cases both ran.

    ``base`` and ``head`` are score tables (``run_id``, ``case_key``,
    ``occurrence``, ``trial``, ``metric``, ``score``, ``error``) plus a bool
    ``case_error`` column (the target failed on that case and trial).
    ``directions`` maps each compared metric to ``higher_is_better``;
    ``decide_on`` names the metrics that decide the verdict (None: every
    compared metric not in ``informing``), the others only inform; ``assumed`` names the metrics whose direction
    nobody gave (:mod:`cogeval.compare.directions`: they are said to be assumed, and inform when their names
    read as costs, unless ``decide_on`` names them); ``margins`` maps a metric to the
    smallest difference that matters (metric units); ``inputs`` maps case keys
    to inputs for the ``changes`` table, or is a function of units (a ``(case_key,
    occurrence)`` MultiIndex) giving the columns ``changes`` shows of them: ``input``,
    then any further ones (``compare_runs``: trace ids, prompt versions, metadata); ``warnings`` are the caller's
    run-level warnings, to which the metric-level ones are appended. ``test``
    (``"t"`` or ``"wilcoxon"``) is used for non-binary metrics. ``seed``
    (None, an integer >= 0 or a numpy Generator, the one seed rule) is
    recorded with the result; the comparison itself draws nothing at random,
    so a Generator is accepted, left untouched and recorded as None (it has
    no number a run file or report could show). ``units``: the tables' rows'
    units, when known (:func:`~cogeval.compare.pairing.unit_codes` of both
    tables at once, or codes over shared levels, as ``compare_runs`` makes them
    from its results): then no case key is hashed, and the tables need only
    ``metric``, ``score`` and ``case_error``. ``changed``: what differs in how the runs were made, recorded as
    the result's ``changed`` (``compare_runs``: :func:`~cogeval.compare.runs.changes_between`; None: not known).
    Tables with a ``trial`` column and k ≥ 2 trials per case on both sides get the ``pass^k``/``pass@k`` rows of
    their 0/1 metrics (:func:`~cogeval.compare.pairing.with_reliability`); ``metrics`` naming a metric brings them
    too. See ``docs/comparing.md``.

    ``cluster``: the cases are clustered (questions on one passage, turns of one conversation), so whole clusters
    are the independent units: a column of both tables (one value per case), a mapping of case keys to clusters,
    or a function of units. Each metric is then tested by the clustered form of its test, and its ``clusters``
    (G) and ``design_effect`` are set (``docs/statistics-clusters.md``); ``cluster_name`` is what the result
    says the cases were clustered by (default: the column's name). Without ``cluster``, ``groupings`` (case
    fields that might group the cases) are checked, and a warning names a field that clusters a deciding
    metric's differences (design effect above :data:`_DESIGN_EFFECT_WARNING`).

    >>> rows = lambda scores: pd.DataFrame({"run_id": "r", "case_key": list("abcdef"), "occurrence": 0,
    ...     "trial": 0, "metric": "exact_match", "score": scores, "error": None, "case_error": False})
    >>> c = compare_scores(rows([0., 0, 0, 0, 1, 1]), rows([1., 1, 1, 1, 1, 0]), directions={"exact_match": True})
    >>> m = c.metrics["exact_match"]
    >>> m.test, m.n, round(m.difference, 3), round(m.p_value, 4), m.winner, m.verdict  # b = 1, c = 4: binom.test(1, 5)
    ('mcnemar-exact', 6, 0.5, 0.375, 'tie', 'inconclusive')
    >>> c.changes[["case_key", "delta", "direction"]].head(2).values.tolist()
    [['a', 1.0, 'improved'], ['b', 1.0, 'improved']]
    >>> m.n_improved, m.n_regressed, m.improved["case_key"].tolist(), m.regressed["case_key"].tolist()
    (4, 1, ['a', 'b', 'c', 'd'], ['f'])
    """
    required = REQUIRED if units is None else SCORED
    base = check_scores("base", base, required)
    head = check_scores("head", head, required)
    codes = unit_codes(base, head) if units is None else list(units)
    derived: dict[str, str] = {}
    reliability_notes: list[tuple[tuple[str, ...], str]] = []
    if col.TRIAL in base.columns and col.TRIAL in head.columns and isinstance(directions, Mapping):
        reliable = with_reliability(base, head, codes, directions)
        base, head, codes, derived, reliability_notes = (reliable.base, reliable.head, reliable.codes,
                                                         reliable.derived, reliable.notes)
        directions = {**directions, **dict.fromkeys(derived, True)}
    describe = inputs if callable(inputs) else _by_key({} if inputs is None else inputs)
    alpha = check_probability("alpha", alpha, open_interval=True)
    test = check_choice("test", test, TESTS)
    seed = check_seed("seed", seed)
    if isinstance(seed, np.random.Generator):
        seed = None

    names, notes = _select_metrics(metrics_of(base), metrics_of(head), metrics)
    names = _with_derived(names, derived)
    notes += [note for concerned, note in reliability_notes if set(concerned) & set(names)]
    explicit = metrics is not None
    directions = _check_directions(directions, names)
    assumed = [m for m in names if m in set(assumed)]
    named, informing = set(check_decide_on(decide_on, names, [])), set(informing)
    costs = [m for m in assumed if reads_as_cost(m) and m not in named and m not in informing]
    informing |= set(derived) | set(costs)
    deciding = set(check_decide_on(decide_on, names, [m for m in names if m not in informing]))
    notes += assumed_warnings(assumed, costs)
    margins = check_margins(margins, names)
    if alpha >= 0.5 and any(margins.values()):
        raise InputError(f"margins need alpha below 0.5: equivalence is shown by a 1 - 2·alpha interval; got alpha={alpha:g}")
    pairing = pair_units(*(unit_values(frame, directions, coded) for frame, coded in zip((base, head), codes)))
    clusters = None if cluster is None else _cluster_codes(cluster, pairing.units, (base, head), codes)
    if isinstance(cluster, str) and cluster_name is None:
        cluster_name = cluster
    unmatched = [] if len(pairing.units) else [  # the first warning of all: every other one follows from it
        f"No case of base matched a case of head: the base run has {len(pairing.removed)} case(s) and the head run "
        f"{len(pairing.added)}, none with the same case key (input, turns and expected), so nothing was compared "
        "and the verdict is inconclusive"]
    errored = _sides(pairing.base_errored, pairing.head_errored)
    notes = _failed_warnings(pairing) + notes  # a run that failed first: the verdict counts those failures

    failed_trials = [_unscored_trials(frame, coded, pairing.units, names) for frame, coded in zip((base, head), codes)]
    samples: dict[str, PairedSample] = {}
    for j, name in enumerate(names):
        sample, said = _sample(pairing, name, directions[name], clusters, explicit, derived,
                               [trials[:, j] for trials in failed_trials])
        notes += said
        if sample is not None:
            samples[name] = sample
    tests = {name: paired_test(sample, test) for name, sample in samples.items()}
    notes += [f"Metric {name!r}: {_undefined_note(samples[name], tested)}" for name, tested in tests.items()
              if math.isnan(tested.p_value)]
    notes += [_sign_note(name, samples[name], tested) for name, tested in tests.items() if tested.name.endswith("sign")]
    holm = _holm(tests, deciding, alpha)
    one_sided = pairing.base_errored != pairing.head_errored
    results = {name: _metric(name, samples[name], tested, holm, directions[name], name in deciding,
                             margins.get(name, 0.0), alpha, derived.get(name), cluster is not None, name in assumed)
               for name, tested in tests.items()}
    for name, m in results.items():
        improved, regressed = _moved_counts(pairing, name, samples[name], one_sided, m.higher_is_better)
        results[name] = dataclasses.replace(m, n_improved=improved, n_regressed=regressed)
    notes += _power_warnings(results.values(), tests)
    if cluster is None and groupings is not None and len(pairing.units):
        notes += _clustering_warnings(groupings(pairing.units), pairing, samples, deciding)
    if cluster is not None:
        notes += _cluster_warnings(results.values(), cluster_name)
    deciders = [m for m in results.values() if m.role == "decides"]
    votes = [m.winner for m in deciders]
    heads, bases = votes.count("head"), votes.count("base")
    if names and not deciders and len(pairing.units):
        notes.append("No compared metric decides the verdict (the compared ones only inform; name the deciding ones "
                     "with decide_on), so it is inconclusive")

    return RunComparison(
        base=base_info or _info(base),
        head=head_info or _info(head),
        winner="head" if heads > bases else "base" if bases > heads else "tie",
        metrics=results,
        matched=len(pairing.units),
        added=_unpaired(pairing.added, describe),
        removed=_unpaired(pairing.removed, describe),
        warnings=[*unmatched, *warnings, *notes],
        changes=_changes(pairing.units, pairing.base, pairing.head, _moves(pairing, samples, directions),
                         describe, errored, deciding),
        alpha=alpha,
        seed=seed,
        verdict=overall([m.verdict for m in deciders]),
        margins=margins,
        errored=_errored(pairing.units, errored, describe),
        changed=None if changed is None else list(changed),
        cluster=None if cluster is None else (cluster_name or _cluster_label(cluster)),
        clusters=None if clusters is None else int(clusters.max()) + 1 if len(clusters) else 0,
    )


_DESIGN_EFFECT_WARNING = 1.5
"""Without ``cluster=``, a case field whose groups make a deciding metric's design effect larger than this gets a
warning naming it."""

_MAX_GROUPINGS = 20
"""At most this many case fields are checked for clustering (the first ones that group the cases)."""


def _cluster_codes(cluster: _Clusters, units: pd.MultiIndex, tables: Sequence[pd.DataFrame],
                   codes: Sequence[UnitCodes]) -> np.ndarray:
    """Each unit's cluster, numbered 0 .. G - 1, from ``cluster`` (see :data:`_Clusters`).

    A unit without a cluster is an :class:`InputError` naming its case and the cluster's source.
    """
    if callable(cluster):
        labels = np.asarray(cluster(units), dtype=object)
        source = f"cluster={_cluster_label(cluster)}"
    elif isinstance(cluster, str):
        labels, source = _column_labels(cluster, units, tables, codes), f"cluster={cluster!r}"
    elif isinstance(cluster, Mapping):
        labels = np.fromiter(map(cluster.get, units.get_level_values(0)), dtype=object, count=len(units))
        source = "cluster (a mapping of case keys to clusters)"
    else:
        raise InputError("cluster must be a column of the score tables, a mapping of case keys to clusters, a "
                         f"function of the units or None; got {describe(cluster)}")
    missing = pd.isna(pd.Series(labels, dtype=object)).to_numpy()
    if missing.any():
        key, occurrence = units[int(np.argmax(missing))]
        raise InputError(f"{source}: case {key!r} (occurrence {occurrence}) has no cluster; every case needs one "
                         "(give a case with no group a cluster of its own)")
    return pd.factorize(pd.Series(labels, dtype=object))[0].astype(np.int64)


def _column_labels(name: str, units: pd.MultiIndex, tables: Sequence[pd.DataFrame],
                   codes: Sequence[UnitCodes]) -> np.ndarray:
    """Each unit's value of the column ``name`` of the score tables (``codes``: their rows' units); a case with
    two values is an InputError, one without any gets None."""
    for side, frame in zip(("base", "head"), tables):
        if name not in frame.columns:
            raise InputError(f"cluster={name!r} is not a column of the {side} score table (it has: "
                             f"{', '.join(map(str, frame.columns))})")
    ids = np.concatenate([coded.ids for coded in codes])
    values = pd.concat([frame[name] for frame in tables], ignore_index=True)
    label, labels = pd.factorize(values)  # -1: no value
    width = len(labels) + 1
    distinct = np.sort(pd.unique(ids.astype(np.int64) * width + label + 1))  # each unit's distinct labels, as one number
    pairs = np.column_stack([distinct // width, distinct % width - 1])
    labelled = pairs[pairs[:, 1] >= 0]
    two = np.flatnonzero(np.diff(labelled[:, 0]) == 0)
    if len(two):
        unit = labelled[two[0], 0]
        key = str(units.levels[0][_unit_key(unit, units)]) if _unit_key(unit, units) >= 0 else str(unit)
        found = ", ".join(repr(labels[c]) for c in labelled[labelled[:, 0] == unit, 1][:3])
        raise InputError(f"cluster={name!r}: case {key!r} is in more than one cluster ({found}); a case belongs "
                         "to one cluster")
    bare = pairs[pairs[:, 1] < 0, 0]
    wanted = unit_ids(units)
    first = pd.Series(labelled[:, 1], index=labelled[:, 0]).reindex(wanted).to_numpy()
    out = np.full(len(wanted), None, dtype=object)
    found_at = ~np.isnan(first) & ~np.isin(wanted, bare)
    out[found_at] = np.asarray(labels, dtype=object)[first[found_at].astype(np.int64)]
    return out


def _unit_key(unit: int, units: pd.MultiIndex) -> int:
    """The case-key code of a unit number (:func:`~cogeval.compare.pairing.unit_ids`' inverse)."""
    return int(unit // (len(units.levels[1]) + 1) - 1)


def _cluster_label(cluster: Any) -> str:
    if isinstance(cluster, str):
        return cluster
    if isinstance(cluster, Mapping):
        return "a mapping of case keys"
    return str(getattr(cluster, "__qualname__", None) or getattr(cluster, "__name__", None) or repr(cluster))


def _sample(pairing: Pairing, name: str, up: bool, clusters: np.ndarray | None, explicit: bool,
            derived: Mapping[str, str], failed_trials: Sequence[np.ndarray]) -> tuple[PairedSample | None, list[str]]:
    """One metric's :class:`PairedSample` (the units scored in both runs), and what its pairing left out; None when
    no unit has a score in both runs and the metric was not asked for."""
    b_all, h_all = pairing.base[name].to_numpy(), pairing.head[name].to_numpy()
    keep = ~(np.isnan(b_all) | np.isnan(h_all))
    n = int(keep.sum())
    one_sided = pairing.base_errored != pairing.head_errored
    both_failed = pairing.base_errored & pairing.head_errored
    notes = []
    if not up and n and (dropped := int(np.sum(one_sided & ~keep))):
        notes.append(f"Metric {name!r}: {dropped} case(s) the target failed on in only one run were left out "
                     "(lower is better, so a failure cannot count as 0)")
    if n == 0 and not explicit:
        return None, [*notes, f"Metric {name!r} has no matched case scored in both runs; it was not compared"]
    if n == 0:
        notes.append(f"Metric {name!r} has no matched case scored in both runs")
    unscored = (np.sum(np.isnan(b_all) & ~pairing.base_errored & ~both_failed),
                np.sum(np.isnan(h_all) & ~pairing.head_errored & ~both_failed))
    if n and any(unscored) and name not in derived:  # a derived row says why itself (with_reliability)
        notes.append(f"Metric {name!r}: n = {n} of {len(pairing.units)} matched cases, because scoring failed "
                     f"on {unscored[0]} case(s) in the base run and {unscored[1]} in the head run")
    partial = (int(failed_trials[0][~np.isnan(b_all)].sum()), int(failed_trials[1][~np.isnan(h_all)].sum()))
    if any(partial):
        notes.append(f"Metric {name!r}: scoring failed on {partial[0]} trial(s) in the base run and {partial[1]} "
                     "in the head run of cases still compared; those cases are means over their other trials")
    whole = PairedSample(b_all, h_all, clusters)
    return whole.take(keep), notes


def _undefined_note(sample: PairedSample, tested: PairedTest) -> str:
    """Why a metric's test has no p-value (a clustered test of fewer than 2 clusters, the one way it is undefined
    once constant differences go to the sign test)."""
    if sample.groups < 2:
        return (f"its {sample.n} paired cases are all in one cluster, so the clustered test is undefined "
                "(p-value NaN, not significant): clusters are the independent units, and it needs at least 2")
    return f"its {tested.name} test is undefined on these differences (p-value NaN, not significant)"


def _sign_note(name: str, sample: PairedSample, tested: PairedTest) -> str:
    """What the sign test of a metric whose paired differences are all the same means (:func:`constant_shift`)."""
    shift = numbers.signed(float(constant_shift(sample) or 0.0))
    units, each = ("clusters", "every cluster's mean difference") if tested.name == "clustered-sign" else \
        ("cases", "every paired difference")
    return (f"Metric {name!r}: {each} is {shift}, so the t-test has no spread to use; the exact sign test decides "
            f"(all {numbers.count(sample.groups)} {units} moved the same way: p = 2^(1 − {sample.groups}) = "
            f"{numbers.p_value(tested.p_value)})")


def _holm(tests: Mapping[str, PairedTest], deciding: set[str], alpha: float) -> dict[str, tuple[float, float, int]]:
    """Per metric: its Holm-adjusted p-value, its Holm step level and the size of its family (deciding metrics
    are one family, informing ones another; a metric without a test is adjusted to 1 at no level)."""
    out: dict[str, tuple[float, float, int]] = {}
    for family in ([m for m in tests if m in deciding], [m for m in tests if m not in deciding]):
        tested_names = [m for m in family if tests[m].name != "none"]
        p = [tests[m].p_value for m in tested_names]
        size = max(1, sum(not math.isnan(x) for x in p))
        adjusted = dict(zip(tested_names, adjust_p_values(p, "holm").tolist()))
        levels = dict(zip(tested_names, holm_levels(p, alpha).tolist())) if tested_names else {}
        out.update({m: (adjusted.get(m, 1.0), levels.get(m, math.nan), size) for m in family})
    return out


def _metric(name: str, sample: PairedSample, tested: PairedTest, holm: Mapping[str, tuple[float, float, int]],
            up: bool, decides: bool, margin: float, alpha: float, derived_from: str | None,
            clustered: bool, assumed: bool) -> MetricComparison:
    """One metric's comparison from its sample and test: interval, verdict, power and fragility."""
    adjusted, level, family_size = holm[name]
    significant = bool(adjusted < alpha)
    interval = agreeing_interval(inverted_interval(sample, tested, level), significant, tested.side)
    n, d = sample.n, sample.d
    difference = float(np.mean(d)) if n else math.nan
    planned = power(sample, difference, level, margin, alpha, family_size)
    fragile = None
    if significant:
        fragile = cluster_fragility(sample, tested.name, tested.side, level) if sample.clustered else \
            fragility(sample.base, sample.head, tested.name, tested.side, level)
    return MetricComparison(
        metric=name, higher_is_better=up, base=float(sample.base.mean()) if n else math.nan,
        head=float(sample.head.mean()) if n else math.nan, n=n, difference=difference, ci=interval,
        effect_size=cohens_d(d, np.zeros(n)) if n else math.nan,
        test=tested.name, statistic=tested.statistic, p_value=float(tested.p_value), adjusted_p_value=float(adjusted),
        significant=significant, winner=winner(significant, interval, up),
        n_improved=0, n_regressed=0, role="decides" if decides else "informs",
        verdict=verdict(interval, up, margin, equivalent(sample, margin, alpha)),
        margin=margin, ci_level=1 - level if not math.isnan(level) else math.nan, mde=planned.mde,
        n_needed=planned.n_needed, fragility=fragile, derived_from=derived_from,
        clusters=sample.groups if clustered else None, design_effect=sample.design_effect if clustered else math.nan,
        clusters_needed=planned.clusters_needed, direction_assumed=assumed,
    )


def _kept(pairing: Pairing, name: str) -> np.ndarray:
    """The positions of the units scored in both runs on ``name``."""
    return np.flatnonzero(~(np.isnan(pairing.base[name].to_numpy()) | np.isnan(pairing.head[name].to_numpy())))


def _moved_counts(pairing: Pairing, name: str, sample: PairedSample, one_sided: np.ndarray,
                  up: bool) -> tuple[int, int]:
    """``n_improved`` and ``n_regressed``: the cases that moved for or against head (a case the target failed on
    in one run moved because it failed: an error, counted as neither way)."""
    d = sample.d
    moved = (d != 0) & ~one_sided[_kept(pairing, name)]
    better = moved & ((d > 0) == up)
    return int(better.sum()), int((moved & ~better).sum())


def _moves(pairing: Pairing, samples: Mapping[str, PairedSample],
           directions: Mapping[str, bool]) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per compared metric: the positions (among the units) of the cases that moved, their differences and
    whether each moved for head, as :func:`_changes` lists them."""
    moves = []
    for name, sample in samples.items():
        d = sample.d
        moved = d != 0
        if moved.any():
            moves.append((name, _kept(pairing, name)[moved], d[moved], ((d > 0) == directions[name])[moved]))
    return moves


def _clustering_warnings(groupings: Mapping[str, np.ndarray], pairing: Pairing,
                         samples: Mapping[str, PairedSample], deciding: set[str]) -> list[str]:
    """Case fields that group the cases (2 ≤ groups ≤ n/2, every case labelled) and cluster a deciding metric's
    differences (design effect above :data:`_DESIGN_EFFECT_WARNING`): one warning each, naming the field."""
    warned = []
    for field, labels in itertools.islice(groupings.items(), _MAX_GROUPINGS):
        found = pd.Series(labels, dtype=object)
        if found.isna().any():
            continue
        codes = pd.factorize(found)[0].astype(np.int64)
        groups = int(codes.max()) + 1 if len(codes) else 0
        if not 2 <= groups <= len(codes) / 2:
            continue
        effects = []
        for name in [m for m in samples if m in deciding]:
            sample, keep = samples[name], _kept(pairing, name)
            clustered = PairedSample(sample.base, sample.head, np.unique(codes[keep], return_inverse=True)[1])
            if clustered.clustered and clustered.design_effect > _DESIGN_EFFECT_WARNING:
                effects.append((clustered.design_effect, name, clustered.groups))
        if effects:
            effect, name, groups = max(effects)
            few = f" (with {groups} groups it has little power)" if groups < _MIN_CLUSTERS else ""
            warned.append(
                f"Cases that share a {field!r} succeed and fail together: on {name} the design effect is "
                f"{numbers.number(effect)} ({groups} groups). If each {field} is one of many that could have been "
                "drawn (a passage, a conversation, a template), this comparison's p-values and intervals, which take "
                f"every case as independent, are too sure of themselves: compare with cluster={field!r} to test "
                f"whole groups{few}; if the values of {field!r} are fixed categories, by={field!r} compares each one "
                "(docs/statistics-clusters.md)")
    return warned


def _cluster_warnings(metrics: Iterable[MetricComparison], name: str | None) -> list[str]:
    """Too few clusters for a clustered test to say much."""
    few = [f"{m.metric} ({m.clusters})" for m in metrics if m.clusters is not None and 0 < m.clusters < _MIN_CLUSTERS]
    if not few:
        return []
    return [f"Fewer than {_MIN_CLUSTERS} clusters (by {name}) for {', '.join(few)}: clusters are the independent "
            "units, so the clustered tests have little power and 'inconclusive' may only mean too few clusters"]


_MIN_CLUSTERS = 10
"""Fewer clusters than this give a warning."""


def _failed_warnings(pairing: Pairing) -> list[str]:
    """A run whose target failed on at least :data:`~cogeval.compare.result.FAILED_SHARE` of the matched cases."""
    matched = len(pairing.units)
    warnings = []
    for side, failed in (("head", pairing.head_errored), ("base", pairing.base_errored)):
        count = int(np.count_nonzero(failed))
        if count and count >= FAILED_SHARE * matched:
            warnings.append(
                f"The {side} run's target failed on {count} of the {matched} matched cases "
                f"({numbers.percent(count / matched)}): they score 0 on higher-is-better metrics and are left out "
                "of lower-is-better ones, so the verdict counts those failures; see .errored for the cases")
    return warnings


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


def _unscored_trials(frame: pd.DataFrame, codes: UnitCodes, units: pd.MultiIndex, names: list[str]) -> np.ndarray:
    """Per unit of ``units`` (coded as ``codes``) × metric of ``names``: the trials whose score is missing although
    the target answered (the scorer failed)."""
    counts = np.zeros((len(units), len(names)), dtype=np.int64)
    failed = frame[CASE_ERROR].fillna(False).to_numpy(dtype=bool)
    unscored = np.flatnonzero(frame[col.SCORE].isna().to_numpy() & ~failed)
    if len(unscored) == 0:
        return counts
    unit = pd.Index(unit_ids(units)).get_indexer(codes.ids[unscored])
    metric = pd.Index(names).get_indexer(pd.Index(frame[col.METRIC].iloc[unscored]))
    keep = (unit >= 0) & (metric >= 0)
    np.add.at(counts, (unit[keep], metric[keep]), 1)
    return counts


def _info(frame: pd.DataFrame) -> RunInfo:
    run_id = None
    if col.RUN_ID in frame.columns:
        ids = frame[col.RUN_ID].dropna()
        run_id = str(ids.iloc[0]) if len(ids) else None
    return RunInfo(run_id=run_id, name=None, started_at=None)


_UNPAIRED_COLUMNS = [col.CASE_KEY, col.OCCURRENCE, col.INPUT]
"""The ``added`` and ``removed`` tables: one row per unit only one run has."""


def _unpaired(units: pd.MultiIndex, describe: _Describe) -> pd.DataFrame:
    """The units only one run has, in that run's order, with their inputs as in ``changes``."""
    return pd.DataFrame({
        col.CASE_KEY: pd.Series([str(k) for k in units.get_level_values(0)], dtype=object),
        col.OCCURRENCE: pd.Series(units.get_level_values(1).to_numpy(), dtype="int64"),
        col.INPUT: pd.Series(_texts(describe(units)[col.INPUT]), dtype=object),
    }, columns=_UNPAIRED_COLUMNS)


def _by_key(inputs: Mapping[str, Any]) -> _Describe:
    """The :data:`_Describe` of ``inputs``, a mapping of case keys to inputs."""
    def describe(units: pd.MultiIndex) -> dict[str, np.ndarray]:
        keys = units.get_level_values(0)
        return {col.INPUT: np.fromiter(map(inputs.get, keys), dtype=object, count=len(keys))}
    return describe


def _texts(values: np.ndarray) -> np.ndarray:
    """Each value as :func:`as_text` shows it, None kept: text as it is, any other value one by one."""
    texts = values.copy()
    text = np.fromiter(map(isinstance, values, itertools.repeat(str)), dtype=bool, count=len(values))
    for i in np.flatnonzero(~text):
        texts[i] = None if values[i] is None else as_text(values[i])
    return texts


def _changes(
    units: pd.MultiIndex,
    base: pd.DataFrame,
    head: pd.DataFrame,
    changed: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    describe: _Describe,
    errored: np.ndarray | None = None,
    deciding: set[str] | None = None,
) -> pd.DataFrame:
    """The changes table: one row per unit × metric that moved, the rows of deciding metrics first, each part
    largest |delta| first, then the further columns of ``describe``.

    Ties in |delta| (rounded to 9 decimals) keep metric order (as compared), then unit order (base order).
    ``errored`` (one value per unit: None, ``"base"``, ``"head"`` or ``"both"``) marks the units the target failed
    on: their rows' ``direction`` is ``error``, not ``improved`` or ``regressed``. ``deciding``: the deciding
    metrics (None: all).
    """
    if not changed:
        frame = pd.DataFrame({c: pd.Series(dtype=float if c in (col.BASE, col.HEAD, col.DELTA) else object)
                              for c in CHANGES_COLUMNS})
        return _described(frame, describe(units[:0]), np.array([], dtype=np.intp))
    delta = np.concatenate([d for _, _, d, _ in changed])
    informs = np.concatenate([np.full(len(d), deciding is not None and name not in deciding) for name, _, d, _ in changed])
    # |delta| rounded: float noise (0.9 - 1.3 vs 0.8 - 1.2) must not decide the order. The rows come in metric
    # order, then unit order, so a stable sort keeps those ties in place. Each column is made in that order.
    order = np.lexsort((-np.round(np.abs(delta), 9), informs))

    def ordered(parts: Iterable[np.ndarray]) -> np.ndarray:
        return np.concatenate(list(parts))[order]

    delta = delta[order]
    position = ordered(p for _, p, _, _ in changed)
    better = ordered(g for _, _, _, g in changed)
    metric = ordered(np.full(len(p), j) for j, (_, p, _, _) in enumerate(changed))
    base_value = ordered(base[name].to_numpy()[p] for name, p, _, _ in changed)
    head_value = ordered(head[name].to_numpy()[p] for name, p, _, _ in changed)
    keys = units.get_level_values(0).to_numpy(dtype=object)
    moved = np.zeros(len(units), dtype=bool)
    moved[position] = True
    described = describe(units[moved])
    row = (np.cumsum(moved) - 1)[position]  # each row's unit among the moved ones
    failed = np.full(len(position), None, dtype=object) if errored is None else errored[position]
    direction = np.array(["regressed", "improved"], dtype=object)[better.astype(int)]
    direction[np.not_equal(failed, np.array(None, dtype=object))] = "error"
    # Text stays Python objects: no conversion to Arrow strings, which refuse a lone surrogate of user text.
    text = {col.CASE_KEY: keys[position], col.INPUT: _texts(described[col.INPUT])[row],
            col.METRIC: np.array([name for name, *_ in changed], dtype=object)[metric],
            col.DIRECTION: direction, col.ERRORED: failed}
    frame = pd.DataFrame({  # of arrays made here: none is copied
        **{name: pd.Series(values, dtype=object, copy=False) for name, values in text.items()},
        col.BASE: base_value,
        col.HEAD: head_value,
        col.DELTA: delta,
        col.OCCURRENCE: units.get_level_values(1).to_numpy()[position],
    }, columns=CHANGES_COLUMNS, copy=False)
    return _described(frame, described, row)


def _sides(base: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Per unit, which run's target failed on it: None, ``"base"``, ``"head"`` or ``"both"`` (an object array)."""
    sides = np.full(len(base), None, dtype=object)
    sides[base & ~head], sides[head & ~base], sides[base & head] = "base", "head", "both"
    return sides


def _errored(units: pd.MultiIndex, errored: np.ndarray, describe: _Describe) -> pd.DataFrame:
    """The ``errored`` table: the units the target failed on in one run or both, in base order, with their inputs
    as in ``changes``."""
    failed = np.flatnonzero(np.not_equal(errored, np.array(None, dtype=object)))
    frame = _unpaired(units[failed], describe)
    frame[col.ERRORED] = pd.Series(errored[failed], dtype=object)
    answers = {name: pd.Series(values, dtype=object) for name, values in describe(units[failed]).items()
               if name.endswith(("_output", "_error"))}  # each run's answer and error, as in ``changes``
    return pd.concat([frame[ERRORED_COLUMNS], pd.DataFrame(answers, index=frame.index)], axis=1)


def _described(frame: pd.DataFrame, described: dict[str, np.ndarray], row: np.ndarray) -> pd.DataFrame:
    """``frame`` with the further columns of ``described`` (all but ``input``) at each row's unit ``row``, each
    typed as pandas types any column of objects it is given (text of strings and None: Arrow strings)."""
    for name, values in described.items():
        if name != col.INPUT:
            typed = pd.Series(values, copy=False)  # typed once per unit, then taken for each row
            frame[name] = pd.Series(typed.array.take(row), dtype=typed.dtype, copy=False)
    return frame
