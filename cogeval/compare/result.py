"""The result of comparing two runs: one :class:`MetricComparison` per metric, the changed cases, warnings.

``to_frame()`` is the DESIGN §2 ``comparison`` table (one row per metric);
``changes`` is the ``changes`` table (one row per changed case × metric).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from cogeval import _backend
from cogeval import _columns as col
from cogeval import _numbers as numbers
from cogeval._check import describe
from cogeval._html import badge, escape, format_value, html_table, key_value_table, safe_html
from cogeval._text import short_input
from cogeval.compare.directions import arrow
from cogeval.errors import InputError
from cogeval.stats import Interval

Side = Literal["base", "head", "tie"]
TestName = Literal["mcnemar", "mcnemar-exact", "t", "wilcoxon", "clustered-mcnemar", "clustered-mcnemar-exact",
                   "clustered-t", "clustered-wilcoxon", "clustered-wilcoxon-exact", "sign", "clustered-sign", "none"]
_Role = Literal["decides", "informs"]
Verdict = Literal["better", "worse", "equivalent", "inconclusive"]
RunVerdict = Literal["better", "worse", "equivalent", "inconclusive", "mixed"]

COLUMNS = [*col.COMPARISON_COLUMNS, "verdict", "role", "higher_is_better", "n_improved", "n_regressed",
           "margin", "ci_level", "mde", "n_needed", "statistic", "fragility", "beyond_noise", "clusters",
           "design_effect", "clusters_needed", "direction_assumed"]
"""The comparison table: the DESIGN §2 columns, then the verdict and what backs it. Its ``test``,
``n``, ``statistic`` and ``p_value`` are those every statistics result's row starts with, so the
rows stack with ``paired_t_test(...).to_frame()`` and the like. ``fragility``, ``clusters`` and
``clusters_needed`` (nullable integers), ``beyond_noise`` (nullable boolean) and ``design_effect`` (NaN) are
empty where they do not apply (``clusters``: a comparison without ``cluster=``)."""

ERRORED_COLUMNS = [col.CASE_KEY, col.OCCURRENCE, col.INPUT, col.ERRORED]
"""The ``errored`` table of a comparison: one row per matched case the target failed on in one run or both."""


class _Fields:
    """Read a result's fields by name too (``info["run_id"]`` as ``info.run_id``), as issue 4 lists them."""

    def __getitem__(self, name: str) -> Any:
        if isinstance(name, str) and name in self.keys():
            return getattr(self, name)
        raise KeyError(name)

    def keys(self) -> list[str]:
        """The field names, so ``dict(result)`` works."""
        return [f.name for f in dataclasses.fields(self) if not f.name.startswith("_")]  # type: ignore[arg-type]

    def __contains__(self, name: object) -> bool:
        return name in self.keys()


@dataclasses.dataclass(frozen=True)
class RunInfo(_Fields):
    """Which run a side of a comparison is: ``run_id``, ``name``, ``started_at`` (also readable as ``info["run_id"]``)."""

    run_id: str | None
    name: str | None
    started_at: str | None


@dataclasses.dataclass(frozen=True)
class MetricComparison(_Fields):
    """One metric compared on the paired cases (``docs/comparing.md``).

    ``base`` and ``head`` are the means over the ``n`` pairs, ``difference``
    their paired mean difference (head − base) and ``ci`` the interval that
    inverts the metric's ``test`` at level ``ci_level`` (its Holm step), so it
    excludes 0 exactly when the metric is ``significant`` (Holm-``adjusted_p_value``
    < alpha); ``effect_size`` is Cohen's d_z. ``winner`` is the side the
    metric's direction favours when significant, else ``"tie"``. ``verdict``
    says more: ``better``/``worse`` when the interval lies beyond ``margin``
    (the smallest difference that matters, metric units; 0 when none was set),
    ``equivalent`` when an equivalence test shows |difference| < ``margin``,
    else ``inconclusive``. ``role`` is ``decides`` (counts towards the run's
    verdict) or ``informs``. ``mde`` is the smallest difference this
    comparison could detect with power 0.8 at its level, ``n_needed`` the
    cases needed to detect ``margin`` (or the observed difference when no
    margin is set); ``n_improved`` and ``n_regressed`` count the cases that moved
    for or against head, and :attr:`improved` / :attr:`regressed` are those
    cases (this metric's rows of the comparison's ``changes``; a case the target
    failed on in one run is in neither: its row's ``direction`` is ``error``); ``statistic``
    is the test's (t, McNemar's chi-square, Wilcoxon's V, or the sign test's count of positive differences).
    ``test`` is ``sign`` (``clustered-sign``) when every paired difference (every cluster's mean difference) is
    the same non-zero value: the t-test has no spread then, and the exact sign test decides, p = 2^(1 − n).
    ``direction_assumed``: no direction was given for the metric (a table's column, an imported score), so
    ``higher_is_better`` is the assumed True; the comparison's warnings name it, and the headline too when its
    verdict counts.

    ``fragility`` (significant metrics only, else None): the fewest cases whose removal, those that most
    support the difference first, leaves the metric not significant at its Holm level, by its own test
    (:mod:`cogeval.compare.fragility`). ``derived_from`` names the metric a ``"{metric}.pass^{k}"`` or
    ``"{metric}.pass@{k}"`` row was derived from (None for a metric of its own). With
    ``compare_runs(..., noise=report)``: ``noise_margin`` is the report's ``suggested_margin`` (NaN without
    one) and ``beyond_noise`` whether ``|difference|`` exceeds it (None without one).

    With ``cluster=`` (cases that share a passage, a conversation, a template): ``clusters`` is G, the clusters
    of the ``n`` cases, which are the independent units of the test (a ``clustered-`` test when a cluster holds
    more than one case; the unclustered test, exactly, when each holds one); ``design_effect`` the clustered
    variance of the mean difference over the variance independent cases would give ((CR2 SE / SE)²; 1: no
    clustering to speak of); ``mde`` and ``n_needed`` come from the clustered variance, ``clusters_needed`` is
    ``n_needed`` in clusters of the mean size seen, and ``fragility`` counts whole clusters. Without
    ``cluster=``: None, NaN, None (``docs/statistics-clusters.md``).
    """

    metric: str
    higher_is_better: bool
    base: float
    head: float
    n: int
    difference: float
    ci: Interval
    effect_size: float
    test: TestName
    p_value: float
    adjusted_p_value: float
    significant: bool
    winner: Side
    n_improved: int
    n_regressed: int
    role: _Role = "decides"
    verdict: Verdict = "inconclusive"
    margin: float = 0.0
    ci_level: float = math.nan
    mde: float = math.nan
    n_needed: int | None = None
    statistic: float = math.nan
    fragility: int | None = None
    derived_from: str | None = None
    noise_margin: float = math.nan
    beyond_noise: bool | None = None
    clusters: int | None = None
    design_effect: float = math.nan
    clusters_needed: int | None = None
    direction_assumed: bool = False
    _changes: pd.DataFrame | None = dataclasses.field(default=None, compare=False, repr=False)
    """The comparison's ``changes`` (set by :class:`RunComparison`); not part of equality, hash or repr."""

    def to_dict(self) -> dict[str, Any]:
        """The row of the comparison table (``ci`` split into ``ci_low``/``ci_high``)."""
        row = {name: getattr(self, name) for name in self.keys() if name != "ci"}
        row[col.CI_LOW], row[col.CI_HIGH] = self.ci
        return row

    @property
    def improved(self) -> pd.DataFrame:
        """The cases that moved for head on this metric: its ``improved`` rows of ``changes``, largest move first
        (the index is that of ``changes``; empty when the metric stands alone, outside a comparison)."""
        return self._moved("improved")

    @property
    def regressed(self) -> pd.DataFrame:
        """The cases that moved against head on this metric: its ``regressed`` rows of ``changes``, largest first."""
        return self._moved("regressed")

    def _moved(self, direction: str) -> pd.DataFrame:
        changes = self._changes
        if changes is None:
            return pd.DataFrame(columns=[*col.CHANGES_COLUMNS, col.OCCURRENCE])
        return changes[(changes[col.METRIC] == self.metric) & (changes[col.DIRECTION] == direction)]

    @safe_html
    def _repr_html_(self) -> str:
        row = {**self.to_dict(), col.WINNER: _WINNER_BADGES[self.winner], "verdict": _VERDICT_BADGES[self.verdict]}
        return key_value_table(f"MetricComparison {self.metric}", row, raw_keys=[col.WINNER, "verdict"])


@dataclasses.dataclass(frozen=True)
class RunComparison:
    """Head against base, metric by metric (see :func:`compare_runs`).

    ``verdict`` is the run's: ``better``/``worse`` when some deciding metric
    is better/worse and none the other way, ``mixed`` when both, ``equivalent``
    when every deciding metric is, else ``inconclusive``; ``winner`` is the
    side more deciding metrics name. ``matched`` counts the paired cases;
    ``added``/``removed`` are the cases only head/base has (a table of
    ``case_key``, ``occurrence``, ``input``, one row per unit, in head/base
    order), ``n_added``/``n_removed`` their counts; ``margins`` are the margins used.
    Each metric's ``improved``/``regressed`` are its rows of ``changes``, which lists the rows of
    deciding metrics first. ``errored`` is the table of matched cases the target failed on
    (every trial) in one run or both (:data:`ERRORED_COLUMNS`; ``errored`` is ``"base"``, ``"head"`` or
    ``"both"``), ``n_errored_base``/``n_errored_head`` their counts per run. ``changed`` says what
    differs in how the runs were made (``compare_runs``: one short string per thing, ``[]`` when
    nothing recorded differs; None when unknown, e.g. a comparison of bare score tables).
    """

    base: RunInfo
    head: RunInfo
    winner: Side
    metrics: Mapping[str, MetricComparison]
    matched: int
    added: pd.DataFrame
    removed: pd.DataFrame
    warnings: Sequence[str]
    changes: pd.DataFrame
    alpha: float
    seed: int | None
    verdict: RunVerdict = "inconclusive"
    margins: Mapping[str, float] = dataclasses.field(default_factory=dict)
    slices: pd.DataFrame | None = None
    """With ``compare_runs(..., by=...)``: one row per slice × metric (:data:`~cogeval.compare.slices.SLICE_COLUMNS`)."""
    by: str | None = None
    """What the cases were sliced by: the metadata field, or the function's name."""
    changed: Sequence[str] | None = None
    """What differs in how the two runs were made, one short string per thing, e.g. ``"model 'gpt-a' → 'gpt-b'"``,
    ``"system prompt sha256:213c22ed → sha256:5499befb"``, ``"temperature 0 → 0.7"``, ``"trials 1 → 3"``,
    ``"target (name 'v1' → 'v2')"``, ``"judge (model 'a' → 'b')"``, ``"parameters of contains (case_sensitive
    False → True)"``, ``"prompt 'qa' v1 → v2"``, ``"dataset fingerprint bd64d0fb → 0c41d2aa"``; ``[]`` when nothing
    recorded differs; None when not known (no run configurations were compared)."""
    errored: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=ERRORED_COLUMNS))
    """The matched cases the target failed on (every trial) in one run or both: :data:`ERRORED_COLUMNS`."""
    cluster: str | None = None
    """What the cases were clustered by (``cluster=``: the metadata field or column, or the function's name);
    None when every case was taken as independent."""
    clusters: int | None = None
    """The clusters of the matched cases (G); None without ``cluster=``."""
    reanalysis: str | None = None
    """Set on :attr:`SequentialComparison.comparison <cogeval.compare.sequential.SequentialComparison.comparison>`:
    the sentence saying this is a fixed-n reanalysis of the cases run, not the sequential decision (and why the two
    differ where they do). The headline, and so every report, leads its caveats with it; None otherwise."""

    def __post_init__(self) -> None:
        # Each metric reads its improved/regressed cases from these changes (a replaced comparison relinks its own copies).
        linked = {name: dataclasses.replace(m, _changes=self.changes) for name, m in self.metrics.items()}
        object.__setattr__(self, "metrics", linked)

    def __repr__(self) -> str:
        return (f"RunComparison(head={self.head.name or self.head.run_id!r}, base={self.base.name or self.base.run_id!r}, "
                f"verdict={self.verdict!r}, metrics={_names(list(self.metrics))!r}, matched={self.matched}, "
                f"n_added={self.n_added}, n_removed={self.n_removed}, changes={len(self.changes)} rows)")

    @property
    def n_added(self) -> int:
        """How many units (case × occurrence) only head has."""
        return len(self.added)

    @property
    def n_removed(self) -> int:
        """How many units only base has."""
        return len(self.removed)

    @property
    def n_errored_base(self) -> int:
        """How many matched units the target failed on (every trial) in the base run."""
        return int(self.errored[col.ERRORED].isin(("base", "both")).sum())

    @property
    def n_errored_head(self) -> int:
        """How many matched units the target failed on (every trial) in the head run."""
        return int(self.errored[col.ERRORED].isin(("head", "both")).sum())

    def to_frame(self) -> pd.DataFrame:
        """The comparison table: one row per metric, the DESIGN §2 columns then ``verdict``, ``role``,
        ``higher_is_better``, ``n_improved``, ``n_regressed``, ``margin``, ``ci_level``, ``mde``, ``n_needed``,
        ``statistic``, ``fragility``, ``beyond_noise``, ``clusters``, ``design_effect``, ``clusters_needed`` and
        ``direction_assumed`` (:data:`COLUMNS`).

        Sliced (``by``), it starts with a ``slice`` column: the whole comparison's rows have ``None``,
        then come the :attr:`slices` rows (their columns; the others empty)."""
        frame = pd.DataFrame([m.to_dict() for m in self.metrics.values()], columns=COLUMNS)
        frame = frame.astype({"n_needed": "Int64", "fragility": "Int64", "beyond_noise": "boolean", "clusters": "Int64",
                              "clusters_needed": "Int64", "design_effect": float})
        if self.slices is None:
            return frame
        frame.insert(0, "slice", None)
        return pd.concat([frame, self.slices.drop(columns="note")], ignore_index=True)[["slice", *COLUMNS]]

    @property
    def decide_on(self) -> list[str]:
        """The metrics that decide the verdict."""
        return [name for name, m in self.metrics.items() if m.role == "decides"]

    @property
    def regressions(self) -> list[str]:
        """Deciding metrics whose verdict is ``worse`` (what ``--fail-on-regression`` fails on)."""
        return [name for name, m in self.metrics.items() if m.role == "decides" and m.verdict == "worse"]

    def report(self, kind: str | Sequence[str] = "console", path: Any = "eval-comparison") -> list[str]:
        """Write comparison reports: :func:`cogeval.report_comparison`, reached through :mod:`cogeval._backend`."""
        return _backend.presenter("report_comparison")(self, kind, path)

    def plot(self) -> Any:
        """The forest plot of the metric differences: :func:`cogeval.plot_comparison`, through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_comparison")(self)

    def plot_changes(self, metric: str) -> Any:
        """Per-case base against head for ``metric``: :func:`cogeval.plot_changes`, through :mod:`cogeval._backend`."""
        return _backend.presenter("plot_changes")(self, metric)

    def headline(self) -> str:
        """One sentence: the run's verdict and the deciding metrics behind it, in the words every report uses.

        >>> import pandas as pd
        >>> from cogeval import EvalRun, compare_runs
        >>> run = lambda s: EvalRun.from_frame(pd.DataFrame({"input": [str(i) for i in range(40)], "exact_match": s}))
        >>> compare_runs(run([0] * 40), run([1] * 40)).headline()  # the table gave no direction: it says so
        'head is better: better on exact_match (α = 0.05, 40 matched cases); assumed higher-is-better (no direction given): exact_match'
        >>> compare_runs(run([0] * 40), run([1] * 40), directions={"exact_match": True}).headline()
        'head is better: better on exact_match (α = 0.05, 40 matched cases)'
        """
        return headline(self)

    @safe_html
    def _repr_html_(self) -> str:
        rows = {role: [
            {col.METRIC: f"{name} {arrow(m.higher_is_better, m.direction_assumed)}", "verdict": _VERDICT_BADGES[m.verdict],
             col.DIFFERENCE: m.difference, "interval": interval_text(m), "adjusted p": m.adjusted_p_value,
             col.BASE: m.base, col.HEAD: m.head, col.N: m.n, "improved / regressed": f"{m.n_improved} / {m.n_regressed}"}
            for name, m in self.metrics.items() if m.role == role] for role in _REPR_CAPTIONS}
        lead = (
            f'<div class="cogeval">{_VERDICT_BADGES[self.verdict]} {escape(headline(self))} · '
            f"{escape(self.head.name or self.head.run_id)} (head) vs {escape(self.base.name or self.base.run_id)} (base) · "
            f"{self.n_added} added, {self.n_removed} removed cases"
            + (f" · {escape(errored_text(self))}" if errored_text(self) else "")
            + f"<br>changed: {escape(changed_text(self))}</div>"
        )
        table = "".join(html_table(rows[role], _REPR_COLUMNS, raw_columns=["verdict"], caption=caption)
                        for role, caption in _REPR_CAPTIONS.items() if rows[role])
        notes = "".join(f"<li>{w}</li>" for w in map(escape, self.warnings))
        regressed = self.changes[(self.changes[col.DIRECTION] == "regressed")
                                 & self.changes[col.METRIC].isin(self.decide_on)]
        cases = html_table(
            [{**row, col.INPUT: short_input(row[col.INPUT])} for row in regressed.to_dict("records")],
            [col.METRIC, col.INPUT, col.BASE, col.HEAD, col.DELTA],
            caption=f"Regressed cases × deciding metrics: {len(regressed)}, largest first (all in .changes)",
            max_rows=5,
        ) if len(regressed) else ""
        return lead + table + (f'<div class="cogeval"><ul>{notes}</ul></div>' if notes else "") + cases


def as_run_comparison(name: str, value: Any) -> RunComparison:
    """The :class:`RunComparison` in ``value``: itself, or the one an ``EvalComparison`` result holds.

    The one check of a ``comparison`` argument (reports, plots, widgets)::

        >>> as_run_comparison("comparison", 42)
        Traceback (most recent call last):
        ...
        cogeval.errors.InputError: comparison must be a RunComparison or an EvalComparison result; got 42
    """
    found = getattr(value, "comparison", value)  # a ComparisonResult holds its RunComparison
    if not isinstance(found, RunComparison):
        raise InputError(f"{name} must be a RunComparison or an EvalComparison result; got {describe(value)}")
    return found


def interval_text(m: MetricComparison) -> str:
    """``[low, high] at 98.3%`` (4 significant digits), or ``–`` without an interval."""
    if math.isnan(m.ci.low):
        return "–"
    return f"[{format_value(m.ci.low)}, {format_value(m.ci.high)}] at {100 * m.ci_level:.3g}%"


def changed_text(comparison: RunComparison) -> str:
    """What changed between the runs, as every report's line says it: the entries of ``changed`` joined by
    ``"; "``, ``"nothing recorded differs"``, or ``"not recorded"`` without run configurations."""
    if comparison.changed is None:
        return "not recorded (no run configurations were compared)"
    if not comparison.changed:
        return ("nothing recorded differs (target, system prompt, temperature, trials, judge, metric parameters, "
                "prompts, dataset)")
    return "; ".join(map(str, comparison.changed))


def errored_text(comparison: RunComparison) -> str:
    """``"3 cases errored in head, 1 in base"`` (matched cases the target failed on), ``""`` when none did."""
    head, base = comparison.n_errored_head, comparison.n_errored_base
    if not head and not base:
        return ""
    return f"{head} {'case' if head == 1 else 'cases'} errored in head, {base} in base"


def is_fragile(m: MetricComparison) -> bool:
    """A significant metric is *fragile* when removing at most 3 of its units (cases, or clusters with
    ``cluster=``), or at most 2 % of them, those that most support its difference first, leaves it not
    significant (its ``fragility``)."""
    units = m.clusters if m.clusters is not None else m.n
    return m.fragility is not None and (m.fragility <= 3 or m.fragility <= 0.02 * units)


def _fragility_text(m: MetricComparison) -> str:
    """``"not significant without its 2 most supporting cases of 40"`` (clusters, with ``cluster=``); ``""`` for a
    metric without a fragility."""
    if m.fragility is None:
        return ""
    unit, of = ("cluster", m.clusters) if m.clusters is not None else ("case", m.n)
    units = unit if m.fragility == 1 else f"{unit}s"
    return f"not significant without its {numbers.count(m.fragility)} most supporting {units} of {numbers.count(of)}"


def _noise_text(m: MetricComparison) -> str:
    """``"difference +0.03 is within rerun noise (suggested margin 0.05)"``, ``""`` when beyond it or without a
    noise report."""
    if m.beyond_noise is not False:
        return ""
    return (f"difference {numbers.signed(m.difference)} is within rerun noise "
            f"(suggested margin {numbers.number(m.noise_margin)})")


def verdict_note(m: MetricComparison) -> str:
    """Why a metric got its verdict, in a few words; for ``inconclusive`` how many cases would settle it; for a
    fragile metric (:func:`is_fragile`) or one within rerun noise (:func:`_noise_text`), that too.

    Margins are written in the metric's units.
    """
    beyond = f" by more than {format_value(m.margin)}" if m.margin else ""
    if m.verdict in ("better", "worse"):
        caveats = [f"fragile: {_fragility_text(m)}" if is_fragile(m) else "", _noise_text(m)]
        return "; ".join([f"{m.verdict}{beyond}", *filter(None, caveats)])
    if m.verdict == "equivalent":
        return f"equivalent within ±{format_value(m.margin)}"
    if m.n < 2:
        return "inconclusive: fewer than 2 paired cases"
    if m.significant:
        return f"inconclusive: significant, but not beyond the margin {format_value(m.margin)}"
    need = (f"about {numbers.count(m.n_needed)} cases would detect {'the margin' if m.margin else 'a difference this large'}"
            if m.n_needed is not None else "no sample size would settle it from these data")
    return f"inconclusive: not significant with {numbers.count(m.n)} cases; {need}"


def headline(comparison: RunComparison) -> str:
    """The run's verdict in one sentence (see :meth:`RunComparison.headline`), then what weakens it: that it is
    a reanalysis of a sequential comparison's cases, not its decision (:attr:`RunComparison.reanalysis`), deciding
    metrics shown better or worse whose direction was assumed (nobody gave it), metrics that moved but inform
    because their direction was not given and their names read as costs, deciding ones that are fragile
    (:func:`is_fragile`) or within rerun noise (:func:`_noise_text`), and the cases that errored.

    >>> import pandas as pd
    >>> from cogeval import EvalRun, compare_runs
    >>> run = lambda s: EvalRun.from_frame(pd.DataFrame({"input": [str(i) for i in range(10)], "exact_match": s}),
    ...                                    directions={"exact_match": True})
    >>> headline(compare_runs(run([0] * 10), run([1] * 6 + [0] * 4)))  # binom.test(6, 6): p = 0.031; (5, 5): 0.062
    'head is better: better on exact_match (α = 0.05, 10 matched cases); fragile: exact_match is not significant without its 1 most supporting case of 10'
    """
    decided = [m for m in comparison.metrics.values() if m.role == "decides" and m.verdict in ("better", "worse")]
    assumed = [m.metric for m in decided if m.direction_assumed]
    withheld = [m.metric for m in comparison.metrics.values() if m.role == "informs" and m.direction_assumed
                and m.derived_from is None and m.verdict in ("better", "worse")]
    caveats = [comparison.reanalysis] if comparison.reanalysis else []
    caveats += [f"assumed higher-is-better (no direction given): {', '.join(assumed)}"] if assumed else []
    caveats += [f"not deciding, no direction given: {', '.join(withheld)}"] if withheld else []
    caveats += [f"fragile: {m.metric} is {_fragility_text(m)}" for m in decided if is_fragile(m)]
    caveats += [f"{m.metric}'s {_noise_text(m)}" for m in decided if _noise_text(m)]
    caveats += [clustered_text(comparison)] if comparison.cluster is not None else []
    caveats += [_failed_text(comparison)] if _failed_text(comparison) else []
    return _verdict_sentence(comparison) + "".join(f"; {c}" for c in caveats)


FAILED_SHARE = 0.01
"""A run whose target failed on at least this share of the matched cases says so in the headline and warnings."""


def _failed_text(comparison: RunComparison) -> str:
    """``"60 of 300 cases errored in head, scored 0"`` when the target failed on at least :data:`FAILED_SHARE`
    of the matched cases in a run (each run that did); ``""`` otherwise. A case that errored scores 0 on a
    higher-is-better metric (:mod:`cogeval.compare.pairing`)."""
    matched = comparison.matched
    sides = [(side, count) for side, count in (("head", comparison.n_errored_head), ("base", comparison.n_errored_base))
             if count and count >= FAILED_SHARE * matched]
    if not sides:
        return ""
    parts = [f"{numbers.count(count)} {'in' if i else f'of {numbers.count(matched)} cases errored in'} {side}"
             for i, (side, count) in enumerate(sides)]
    return ", ".join(parts) + ", scored 0"


def clustered_text(comparison: RunComparison) -> str:
    """``"cases clustered by passage: 30 clusters, design effect up to 2.4"``, as every report says it; ``""``
    without ``cluster=``. The design effect is the largest of the deciding metrics' (of all, when none decides)."""
    if comparison.cluster is None:
        return ""
    deciding = [m for m in comparison.metrics.values() if m.role == "decides"] or list(comparison.metrics.values())
    effects = [m.design_effect for m in deciding if not math.isnan(m.design_effect)]
    effect = f", design effect up to {numbers.number(max(effects))}" if effects else ""
    groups = "" if comparison.clusters is None else f": {numbers.count(comparison.clusters)} clusters"
    return f"cases clustered by {comparison.cluster}{groups}{effect}"


def _verdict_sentence(comparison: RunComparison) -> str:
    """The run's verdict and the deciding metrics behind it."""
    deciding = [m for m in comparison.metrics.values() if m.role == "decides"]
    where = f"(α = {comparison.alpha:g}, {comparison.matched} matched cases)"
    if not comparison.metrics:
        return f"nothing to compare: no metric was scored in both runs {where}"
    if not deciding:
        return f"inconclusive: no compared metric decides {where}"
    better = [m.metric for m in deciding if m.verdict == "better"]
    worse = [m.metric for m in deciding if m.verdict == "worse"]
    if comparison.verdict == "mixed":
        return f"mixed: head is better on {', '.join(better)} and worse on {', '.join(worse)} {where}"
    if comparison.verdict in ("better", "worse"):
        return f"head is {comparison.verdict}: {comparison.verdict} on {', '.join(better or worse)} {where}"
    if comparison.verdict == "equivalent":
        return f"equivalent: every deciding metric is within its margin {where}"
    closest = min((m for m in deciding if m.n_needed is not None and m.verdict == "inconclusive"),
                  key=lambda m: m.n_needed or 0, default=None)
    hint = "" if closest is None else f"; about {numbers.count(closest.n_needed)} cases" + (
        f" ({numbers.count(closest.clusters_needed)} clusters)" if closest.clusters_needed is not None else ""
    ) + " would settle the closest one"
    return f"inconclusive: no deciding metric is shown better, worse or equivalent{hint} {where}"


_REPR_COLUMNS = [col.METRIC, "verdict", col.DIFFERENCE, "interval", "adjusted p", col.BASE, col.HEAD, col.N,
                 "improved / regressed"]
"""The notebook tables' columns: what a verdict rests on, next to the metric's name; they fit an 860 px output area."""
_REPR_CAPTIONS = {
    "decides": "Deciding metrics (each one's test, raw p, effect size, mde and n needed: .to_frame())",
    "informs": "Informing metrics (not in the verdict)",
}

VERDICT_TONES = {"better": "good", "worse": "bad", "equivalent": "neutral", "inconclusive": "neutral", "mixed": "bad"}
"""The colour of each verdict word in every report."""
_VERDICT_BADGES = {word: badge(word, tone) for word, tone in VERDICT_TONES.items()}
_WINNER_BADGES = {"head": badge("head", "good"), "base": badge("base", "bad"), "tie": badge("tie")}


def _names(names: list[str]) -> list[str]:
    """Metric names for a repr: all of a few, the first five of many and how many in all."""
    return names if len(names) <= 6 else [*names[:5], f"… {len(names)} in all"]
