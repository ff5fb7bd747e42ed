"""compare_runs: did head get better than base? Case by case, with paired statistics.

>>> import pandas as pd
>>> from cogeval.data import EvalRun
>>> base = EvalRun.from_frame(pd.DataFrame({"input": list("abcdefgh"), "exact_match": [1, 1, 0, 0, 0, 0, 0, 0]}))
>>> head = EvalRun.from_frame(pd.DataFrame({"input": list("abcdefgh"), "exact_match": [1, 1, 1, 1, 1, 1, 1, 1]}))
>>> comparison = compare_runs(base, head, seed=0)
>>> comparison.metrics["exact_match"].test, round(comparison.metrics["exact_match"].p_value, 4)
('mcnemar-exact', 0.0312)
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import itertools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import describe
from cogeval.compare.clusters import check_cluster, cluster_labels, cluster_name
from cogeval.compare.engine import compare_scores
from cogeval.compare.pairing import (
    CASE_ERROR,
    UnitCodes,
    metrics_of,
    pair_units,
    unit_codes,
    unit_ids,
    unit_values,
)
from cogeval.compare.result import MetricComparison, RunComparison, RunInfo
from cogeval.compare.slices import slice_labels, slice_table, slice_warnings
from cogeval.data import Case, EvalRun
from cogeval.data.from_frame import check_directions
from cogeval.data.gc_pause import paused_gc
from cogeval.data.runfile import as_run
from cogeval.errors import InputError
from cogeval.scoring.judge import self_preference_message
from cogeval.scoring.usage import BUILTIN_STATISTICAL_METRICS


def statistical_values(run: EvalRun, metric: str, results: pd.DataFrame | None = None) -> list[float] | None:
    """The per-case values (one per result, in order; NaN when unknown) of a statistical metric, or None.

    The values the run file holds for it (``results[].statisticalValues``, written for every custom
    statistical metric) come first; otherwise a built-in one (``latency``, ``cost``, ``token_usage``)
    reads each result with its own :meth:`~cogeval.scoring.StatisticalMetric.per_case`, the mapping its
    aggregate used. None: the run has no per-case values of ``metric`` (a custom metric in a file
    written before they were kept). ``results`` is ``run.results_frame``, when already made.

    >>> import pandas as pd
    >>> run = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "duration_s": [0.5, 2.0], "q": [1, 0]}))
    >>> statistical_values(run, "latency"), statistical_values(run, "tool_calls")
    ([0.5, 2.0], None)
    """
    if any(r.statistical_values is not None and metric in r.statistical_values for r in run.results):
        return [math.nan if r.statistical_values is None else r.statistical_values.get(metric, math.nan)
                for r in run.results]
    factory = BUILTIN_STATISTICAL_METRICS.get(metric)
    if factory is None:
        return None
    reader = factory()
    rows = run.results_frame if results is None else results
    return [reader.per_case(row) for row in rows.itertuples(index=False)]


_IDENT_COLUMNS = (col.RUN_ID, col.CASE_KEY, col.OCCURRENCE, col.TRIAL, col.ERROR)
"""The columns of a run's results :func:`score_frame` reads when the run has no statistical metrics."""


def score_frame(run: EvalRun, results: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run's ``scores`` table plus per-case rows of its statistical metrics, and ``case_error``.

    Each statistical metric of ``config.statisticalMetrics`` with per-case values
    (:func:`statistical_values`) adds one row per result. A result with no score at all gets one
    row with ``metric`` None (NaN score), so its case still counts as run. ``results``: the run's
    ``result_columns("run_id", "case_key", "occurrence", "trial", "error", ...)``, when already made (a run
    with statistical metrics reads its whole ``results_frame`` instead).
    """
    # The whole results table only for statistical metrics, whose built-ins read durations and usage.
    if run.config.statistical_metrics:
        results = run.results_frame
    elif results is None:
        results = run.result_columns(*_IDENT_COLUMNS)
    scores, result = _score_rows(run, results, [col.METRIC, col.SCORE, col.ERROR])
    ids = {name: pd.Series(results[name].to_numpy()[result], dtype=results[name].dtype, copy=False)
           for name in (col.RUN_ID, col.CASE_KEY, col.OCCURRENCE, col.TRIAL)}
    return pd.concat([pd.DataFrame(ids, copy=False), scores], axis=1)


def _score_rows(run: EvalRun, results: pd.DataFrame, fields: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of :func:`score_frame` with only the named score ``fields`` (``metric``, ``score``, ``error``) and
    ``case_error``, and each row's result: its position in ``results`` (the run's results table, with ``error``
    and, for a statistical metric, what its values are read from)."""
    def rows(count: int, metric: str | None, scores: Any) -> pd.DataFrame:
        values = {col.METRIC: _filled(count, metric), col.SCORE: pd.Series(scores, dtype=float),
                  col.ERROR: _filled(count, None)}
        return pd.DataFrame({name: values[name] for name in fields}, index=pd.RangeIndex(count))

    scores, result = run._score_columns(*fields)
    frames, results_of = [scores], [result]
    for metric in run.config.statistical_metrics:
        values = statistical_values(run, metric.name, results)
        if values is not None:
            frames.append(rows(len(results), metric.name, values))
            results_of.append(np.arange(len(results)))
    # A result without any score (a failed case written with "scores": []) still ran: keep its unit,
    # with no metric, so it is paired (and its failure counted) rather than taken for a missing case.
    bare = np.flatnonzero(np.bincount(np.concatenate(results_of), minlength=len(results)) == 0)
    if len(bare):
        frames.append(rows(len(bare), None, np.full(len(bare), math.nan)))
        results_of.append(bare)
    result = np.concatenate(results_of)
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else scores
    frame[CASE_ERROR] = results[col.ERROR].notna().to_numpy()[result]
    return frame, result


def _filled(count: int, value: Any) -> np.ndarray:
    """An object array holding ``value`` itself ``count`` times (``np.full`` would make a new string for each)."""
    array = np.empty(count, dtype=object)
    array[:] = value
    return array


@paused_gc()  # tables of millions of rows from runs of millions of objects: see cogeval.data.gc_pause
def compare_runs(
    base: Any,
    head: Any,
    *,
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = 0,
    metrics: Sequence[str] | None = None,
    decide_on: Sequence[str] | None = None,
    margins: Mapping[str, float] | None = None,
    by: str | Callable[[Case], Any] | None = None,
    noise: Any = None,
    cluster: str | Callable[[Case], Any] | None = None,
    directions: Mapping[str, bool] | None = None,
) -> RunComparison:
    """Compare ``head`` against ``base`` metric by metric on the cases both ran.

    ``base`` and ``head`` are runs, suite results or run-file paths. Cases pair
    by case key (repeats occurrence by occurrence); binary metrics use
    McNemar, others the paired t-test (``test="t"``) or Wilcoxon.

    - ``decide_on``: the metrics that decide the verdict, form one Holm family
      and can fail CI. None: every per-case quality metric, i.e. all but the
      statistical ones (latency, cost, token usage, custom run-level metrics),
      which inform in a Holm family of their own.
    - ``margins``: ``{"exact_match": 0.02, "latency": 0.05}``, the smallest
      difference that matters, in the metric's units. A metric is ``better``
      or ``worse`` only when its interval lies beyond its margin, and
      ``equivalent`` when an equivalence test shows it within.
    - ``by``: a case-metadata field (``"topic"``) or a function of the
      :class:`~cogeval.Case`; the comparison also compares each slice of cases
      (``slices``, and a ``slice`` column in ``to_frame()``), Holm-adjusted over
      every slice × metric; a slice of fewer than 10 paired cases is not tested.
    - ``seed`` is recorded with the result; the comparison is deterministic.
    - ``cluster``: a case-metadata field (``"passage"``) or a function of the :class:`~cogeval.Case`, when
      cases come in groups that succeed and fail together (questions on one passage, turns of one
      conversation, variants of one template). Whole clusters are then the independent units: each metric
      gets the clustered form of its test (McNemar: Yang's modified Obuchowski; t: CR2 with Bell–McCaffrey
      df; Wilcoxon: Rosner–Glynn–Lee), its ``clusters`` and ``design_effect``, and ``mde``, ``n_needed`` and
      ``fragility`` in clusters; slices are tested on their own clusters. A case without the field is an
      error naming it. Without ``cluster``, a metadata field that groups the cases and clusters a deciding
      metric (design effect above 1.5) gets a warning naming it (``docs/statistics-clusters.md``).
    - ``directions``: ``{"latency_s": False}``, a metric's ``higher_is_better`` where the runs do not give it
      (a table read by ``EvalRun.from_frame`` without ``directions``, an imported score) or give it wrongly; it
      overrides the runs'. A metric whose direction neither run gives is assumed higher-is-better, and the
      warnings say so; one whose name reads as a cost (``latency_s``, ``cost_usd``, ``tokens``...) informs
      instead of deciding until its direction is given (``docs/comparing.md``, Directions nobody gave).
    - ``noise``: a :class:`~cogeval.NoiseReport` of reruns (:func:`~cogeval.noise_report`). Each metric it
      measured gets ``noise_margin`` (its ``suggested_margin``) and ``beyond_noise`` (``|difference|`` above
      it), and the headline says so when a decided difference is within that margin.

    When both runs have k ≥ 2 trials per case, each 0/1 metric also gets the rows ``"{metric}.pass^{k}"``
    (a case passes when all k trials score 1) and ``"{metric}.pass@{k}"`` (when any does), compared by McNemar
    on the per-case indicators, right after the metric; they inform unless ``decide_on`` names them. Runs with
    different k use the first min(k) trials of each case, and a warning says so.

    Each metric's interval inverts its test at its Holm level, so it excludes
    0 exactly when the metric is significant. ``warnings`` say when the runs
    are not comparable or the comparison can say little (see ``docs/comparing.md``).
    """
    base_run, head_run = as_run(base, "base"), as_run(head, "head")
    margins_of_noise = _noise_margins(noise)
    results = _Results(base_run, head_run)
    # Each score row knows its result, so its unit is its result's: no case key is hashed per score.
    (base_scores, base_codes), (head_scores, head_codes) = (
        _compared_scores(*sides) for sides in zip(results.runs, results.tables, results.codes))
    codes = [base_codes, head_codes]
    # A metric no run gives a direction (no config entry, or one that does not say) is assumed higher-is-better.
    named = list(dict.fromkeys([*metrics_of(base_scores), *metrics_of(head_scores), *head_run.directions,
                                *base_run.directions]))
    given = {**_given_directions(head_run), **_given_directions(base_run),
             **check_directions(directions, named, "runs")}
    directions = {**dict.fromkeys(named, True), **given}
    statistical = [m.name for run in (base_run, head_run) for m in run.config.statistical_metrics]
    cluster = check_cluster(cluster)
    unit_clusters = None if cluster is None else functools.partial(results.clusters, cluster)
    comparison = compare_scores(
        base_scores, head_scores,
        directions=directions, alpha=alpha, test=test, seed=seed, metrics=metrics, decide_on=decide_on,
        informing=statistical, assumed=[m for m in named if m not in given], margins=margins, inputs=results.describe,
        cluster=unit_clusters, cluster_name=cluster_name(cluster),
        groupings=functools.partial(results.groupings, skip=by if isinstance(by, str) else None),
        base_info=RunInfo(base_run.run_id, base_run.name, base_run.started_at),
        head_info=RunInfo(head_run.run_id, head_run.name, head_run.started_at),
        warnings=run_warnings(base_run, head_run), units=codes, changed=changes_between(base_run, head_run),
    )
    if margins_of_noise is not None:
        comparison = dataclasses.replace(comparison, metrics={
            name: _with_noise(m, margins_of_noise.get(name)) for name, m in comparison.metrics.items()})
    if by is None:
        return comparison
    # Slices compare each metric of the runs; the pass^k and pass@k rows derived from trials are not sliced.
    compared = {name: m.higher_is_better for name, m in comparison.metrics.items() if m.derived_from is None}
    pairing = pair_units(*(unit_values(frame, compared, coded)
                           for frame, coded in zip((base_scores, head_scores), codes)))
    clusters = None if unit_clusters is None else pd.factorize(pd.Series(unit_clusters(pairing.units), dtype=object))[0]
    table = slice_table(pairing, results.labels(by, pairing.units), directions=compared,
                        deciding=set(comparison.decide_on), margins=comparison.margins, alpha=comparison.alpha,
                        test=test, clusters=clusters)
    same = [f"by and cluster are the same field ({by!r}): each slice is then one cluster, which its clustered test "
            "cannot test (fewer than 2 clusters); slice by another field, or cluster by a finer one"] \
        if isinstance(by, str) and by == cluster else []
    return dataclasses.replace(comparison, slices=table, by=by if isinstance(by, str) else _name(by),
                               warnings=[*comparison.warnings, *same, *slice_warnings(table)])


def _given_directions(run: EvalRun) -> dict[str, bool]:
    """``higher_is_better`` of every metric whose direction the run gives: not assumed, or lower-is-better (which
    is never assumed, so a record set to False after it was read gives its direction)."""
    return {m.name: m.higher_is_better for m in [*run.config.metrics, *run.config.statistical_metrics]
            if not (m.direction_assumed and m.higher_is_better)}


def _compared_scores(run: EvalRun, results: pd.DataFrame, codes: UnitCodes) -> tuple[pd.DataFrame, UnitCodes]:
    """The rows of :func:`score_frame` with what a comparison reads of them (``metric``, as categories: a metric's
    rows are found by codes of a byte; ``score``; ``case_error``; ``trial``, for the ``pass^k`` rows), and each
    row's unit: its result's ``codes``."""
    frame, result = _score_rows(run, results, [col.METRIC, col.SCORE])
    code, names = pd.factorize(frame[col.METRIC])  # (astype("category") would first make Arrow strings)
    frame[col.METRIC] = pd.Categorical.from_codes(code, names)
    frame[col.TRIAL] = results[col.TRIAL].to_numpy()[result]
    return frame, codes.take(result)


def _noise_margins(noise: Any) -> dict[str, float] | None:
    """The ``suggested_margin`` of each metric of a :class:`~cogeval.NoiseReport` (None without one)."""
    if noise is None:
        return None
    margins = getattr(noise, "suggested_margins", None)
    if not isinstance(margins, Mapping):
        raise InputError(f"noise must be a NoiseReport (cogeval.noise_report(reruns)) or None; got {describe(noise)}")
    return dict(margins)


def _with_noise(m: MetricComparison, margin: float | None) -> MetricComparison:
    """``m`` with its rerun-noise margin, and whether its difference lies beyond it (None: no margin to say)."""
    if margin is None or math.isnan(margin) or math.isnan(m.difference):
        return dataclasses.replace(m, noise_margin=math.nan if margin is None else margin)
    return dataclasses.replace(m, noise_margin=margin, beyond_noise=bool(abs(m.difference) > margin))


_RESULT_COLUMNS = (col.INPUT, col.TURNS, col.METADATA, col.TRACE_ID, "prompt_version", col.OUTPUT)
"""What a comparison reads of each run's results beyond :data:`_IDENT_COLUMNS` and the scores."""


class _Results:
    """Both runs' results, coded by unit over the keys and occurrences of both (:func:`unit_codes`): a unit's
    results, and so what ``changes`` shows of it and its slice, are found by integers."""

    def __init__(self, base: EvalRun, head: EvalRun) -> None:
        self.runs = (base, head)
        self.tables = tuple(map(_results_table, self.runs))
        self.codes = unit_codes(*self.tables)

    def describe(self, units: pd.MultiIndex) -> dict[str, np.ndarray]:
        """What ``changes`` shows of each of ``units`` (coded as :attr:`codes`): the input (or the turns of a
        multi-turn case) of the first result of its case key, ``base_trace_id``, ``base_prompt_version``,
        ``head_trace_id``, ``head_prompt_version`` (each run's lowest trial; None where it has none) and a last
        ``metadata`` column: its case's metadata (the base run's, else the head's), so a breakdown by topic or
        difficulty needs no merge."""
        ids = unit_ids(units)
        by_key = [_first(codes.key(), np.arange(len(codes.ids)), units.codes[0]) for codes in self.codes]
        inputs, turns = (_either(self.tables, by_key, name) for name in (col.INPUT, col.TURNS))
        shown = {col.INPUT: np.where(np.equal(inputs, np.array(None, dtype=object)), turns, inputs)}
        for side, table, codes in zip(("base", "head"), self.tables, self.codes):
            lowest = _first(codes.ids, np.argsort(table[col.TRIAL].to_numpy(), kind="stable"), ids)
            shown[f"{side}_trace_id"] = _take(table[col.TRACE_ID], lowest)
            shown[f"{side}_prompt_version"] = _take(table["prompt_version"], lowest)
            shown[f"{side}_output"] = _take(table[col.OUTPUT], lowest)
            shown[f"{side}_error"] = _take(table[col.ERROR], lowest)
        first = [_first(codes.ids, np.arange(len(codes.ids)), ids) for codes in self.codes]
        shown[col.METADATA] = _either(self.tables, first, col.METADATA)
        return shown

    def labels(self, by: Any, units: pd.MultiIndex) -> np.ndarray:
        """The slice of each of ``units`` (coded as :attr:`codes`): :func:`~cogeval.compare.slices.slice_labels`
        of the cases of every unit of both runs (a field only unpaired cases have is no error), the base run's
        first result of a unit, else the head's."""
        base_ids, head_ids = (codes.ids for codes in self.codes)
        firsts = [np.flatnonzero(~pd.Index(base_ids).duplicated()),
                  np.flatnonzero(~pd.Index(head_ids).duplicated() & ~np.isin(head_ids, base_ids))]
        labels = slice_labels(by, list(itertools.chain.from_iterable(
            map(run.results.__getitem__, first) for run, first in zip(self.runs, firsts))))
        found = pd.Index(np.concatenate([base_ids[firsts[0]], head_ids[firsts[1]]])).get_indexer(unit_ids(units))
        return labels[found]

    def clusters(self, cluster: Any, units: pd.MultiIndex) -> np.ndarray:
        """The cluster of each of ``units``: :func:`~cogeval.compare.clusters.cluster_labels` of its case."""
        return cluster_labels(cluster, self.unit_results(units))

    def groupings(self, units: pd.MultiIndex, skip: Any = None) -> dict[str, np.ndarray]:
        """The case-metadata fields that might group ``units``: each field with a plain value (text, a number, a
        bool) on every unit's case, and its value per unit; but ``skip`` (the field the cases are sliced by)."""
        metadata = [m if isinstance(m := r.case.metadata, dict) else {} for r in self.unit_results(units)]
        if not metadata:
            return {}
        fields = set(metadata[0]).intersection(*metadata[1:]) - {skip}
        found = {}
        for field in sorted(map(str, fields)):
            values = np.empty(len(metadata), dtype=object)
            values[:] = [m[field] for m in metadata]
            if all(isinstance(v, (str, int, float)) for v in values):
                found[field] = values
        return found

    def unit_results(self, units: pd.MultiIndex) -> list[Any]:
        """Each unit's first result: the base run's, else the head's."""
        ids = unit_ids(units)
        positions = [_first(codes.ids, np.arange(len(codes.ids)), ids) for codes in self.codes]
        base, head = (run.results for run in self.runs)
        return [base[i] if i >= 0 else head[j] for i, j in zip(positions[0].tolist(), positions[1].tolist())]


def _results_table(run: EvalRun) -> pd.DataFrame:
    """What a comparison reads of each result: :data:`_IDENT_COLUMNS`, :data:`_RESULT_COLUMNS` and, for
    statistical metrics, whose built-ins read durations and usage, the rest of ``results_frame``."""
    names = [*_IDENT_COLUMNS, *_RESULT_COLUMNS]
    if run.config.statistical_metrics:
        names += [name for name in col.RESULTS_COLUMNS if name not in names]
    return run.result_columns(*names)


def _first(ids: np.ndarray, order: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each of ``wanted``: the first position of ``order`` whose id it is, -1 when there is none."""
    ordered = ids[order]
    keep = ~pd.Index(ordered).duplicated()
    found = pd.Series(order[keep], index=ordered[keep]).reindex(wanted, fill_value=-1)
    return found.to_numpy(dtype=np.int64)


def _take(column: pd.Series, positions: np.ndarray) -> np.ndarray:
    """The values of ``column`` at ``positions``, None at -1 (an object array)."""
    out = np.full(len(positions), None, dtype=object)
    found = positions >= 0
    out[found] = column.to_numpy(dtype=object)[positions[found]]
    return out


def _either(tables: Sequence[pd.DataFrame], positions: Sequence[np.ndarray], name: str) -> np.ndarray:
    """The ``name`` value at the base run's position where it has one (``positions[0] >= 0``), else at the head's."""
    base, head = (_take(table[name], at) for table, at in zip(tables, positions))
    return np.where(positions[0] >= 0, base, head)


def _name(function: Any) -> str:
    return str(getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or repr(function))


def run_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """Why two runs may not be comparable: datasets, prompts, judges, several changes at once, directions, self-judging."""
    return [*same_run_warnings(base, head),
            *_interrupted_warnings(base, head), *_shard_warnings(base, head), *_dataset_warnings(base, head),
            *_prompt_warnings(base, head),
            *_judge_warnings(base, head),
            *_changed_warnings(base, head), *_self_judging_warnings(base, head),
            *_direction_warnings(base, head), *_run_level_warnings(base, head)]


def same_run_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """A run compared with itself (the same run id) or with a copy (identical results and config, another id): it
    can show no difference.

    >>> import pandas as pd
    >>> run = EvalRun.from_frame(pd.DataFrame({"input": ["a"], "q": [1.0]}), run_id="20260101T000000000Z-0000000a")
    >>> same_run_warnings(run, run)  # doctest: +NORMALIZE_WHITESPACE
    ["The base and the head run are the same run ('20260101T000000000Z-0000000a'): a run compared with itself
    shows no difference; compare it with another run"]
    """
    if base.run_id == head.run_id:
        return [f"The base and the head run are the same run ({base.run_id!r}): a run compared with itself shows "
                "no difference; compare it with another run"]
    if base.results and len(base.results) == len(head.results) and base.config == head.config \
            and base.results == head.results:
        return [f"The base run {base.run_id!r} and the head run {head.run_id!r} have identical results (every "
                "output, score and timing) and configuration: a run compared with a copy of itself shows no difference"]
    return []


def _interrupted_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """A run stopped early (``status="interrupted"``) is compared on the case-trials it answered and scored only."""
    return [f"{side} run {run.run_id!r} was interrupted before it finished ({len(run.results)} of "
            f"{run.dataset.cases * run.config.trials} case-trials answered): finish it with suite.run(resume=...)"
            for side, run in (("base", base), ("head", head)) if run.status == "interrupted"]


def _shard_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """A shard run (``suite.run(shard=(i, n))``) compared with a run that is not the same shard: only the cases
    both hold are compared, a part of the dataset.

    >>> import pandas as pd
    >>> from cogeval.data.records import ShardRecord
    >>> run = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1, 0]}))
    >>> part = run.model_copy(update={"shard": ShardRecord(index=0, count=4)})
    >>> _shard_warnings(part, run)  # doctest: +NORMALIZE_WHITESPACE
    ["The base run is shard 0 of 4 (it holds 2 of the dataset's 2 cases): only the cases both runs hold are
    compared; merge the shards first (cogeval.merge_runs, or cogeval merge) to compare the whole run"]
    """
    if base.shard is not None and head.shard is not None and base.shard == head.shard:
        return []
    return [f"The {side} run is shard {run.shard.index} of {run.shard.count} (it holds {len(_units(run))} of "
            f"the dataset's {run.dataset.cases} cases): only the cases both runs hold are compared; merge the shards "
            "first (cogeval.merge_runs, or cogeval merge) to compare the whole run"
            for side, run in (("base", base), ("head", head)) if run.shard is not None]


def _system_digest(target: dict[str, Any]) -> str:
    """The SHA-256 of a target's system prompt, taken out of ``target``: ``systemSha256`` as cogeval writes it
    now, or the digest of the ``system`` text older files hold; ``"none"`` without one."""
    digest, text = target.pop("systemSha256", None), target.pop("system", None)
    if digest is None and text is not None:
        digest = hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()
    return "none" if digest is None else str(digest)


def changes_between(base: EvalRun, head: EvalRun) -> list[str]:
    """What differs in how the two runs were made (``RunComparison.changed``), one short entry per thing, in
    this order: model, system prompt, temperature, other target fields, trials, judge, metric parameters,
    prompts, dataset. ``[]``: nothing recorded differs.

    The system prompt is named by a short SHA-256 of its text, never by the text; the dataset by its
    fingerprint; a field whose value is long or not a plain value by its name alone.

    >>> import pandas as pd
    >>> run = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1, 0]}))
    >>> made = lambda **target: run.model_copy(update={"config": run.config.model_copy(update={"target": target})})
    >>> changes_between(made(model="m", temperature=0.0), made(model="m", temperature=0.7))
    ['temperature 0.0 → 0.7']
    >>> changes_between(made(model="a", system="Be brief."), made(model="b", system="Be kind."))
    ["model 'a' → 'b'", 'system prompt sha256:213c22ed → sha256:5499befb']
    >>> changes_between(run, run)
    []
    """
    old, new = base.config, head.config
    changed = []
    old_target, new_target = dict(old.target), dict(new.target)
    for key, label in (("model", "model"), ("system", "system prompt"), ("temperature", "temperature")):
        if key == "system":
            a, b = _system_digest(old_target), _system_digest(new_target)
            if a != b:
                changed.append(f"system prompt {_digest_label(a)} → {_digest_label(b)}")
            continue
        a, b = old_target.pop(key, None), new_target.pop(key, None)
        if a != b:
            changed.append(f"{label} {a!r} → {b!r}")
    if old_target != new_target:
        changed.append(f"target ({_differences(old_target, new_target)})")
    if old.trials != new.trials:
        changed.append(f"trials {old.trials} → {new.trials}")
    old_judge, new_judge = old.judge or {}, new.judge or {}
    if old_judge != new_judge:
        only = "head" if not old_judge else "base" if not new_judge else None
        changed.append(f"judge only in the {only} run" if only else f"judge ({_differences(old_judge, new_judge)})")
    params = {m.name: m.params for m in [*old.metrics, *old.statistical_metrics]}
    for m in [*new.metrics, *new.statistical_metrics]:
        if m.name in params and params[m.name] != m.params:
            changed.append(f"parameters of {m.name} ({_differences(params[m.name] or {}, m.params or {})})")
    changed += _prompt_changes(base, head)
    if base.fingerprint != head.fingerprint:
        changed.append(f"dataset fingerprint {str(base.fingerprint)[:8]} → {str(head.fingerprint)[:8]}")
    return changed


_SHOWN = 40
"""The longest value (its repr) an entry of :func:`changes_between` shows; a longer one is named, not shown."""


def _digest_label(digest: str) -> str:
    return "none" if digest == "none" else f"sha256:{digest[:8]}"


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The keys whose values differ, ``"name 'v1' → 'v2'"`` each when both values are short plain values."""
    parts = []
    for key in dict.fromkeys([*old, *new]):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        plain = all(v is None or isinstance(v, (str, int, float, bool)) for v in (a, b))
        shown = plain and max(len(repr(a)), len(repr(b))) <= _SHOWN
        parts.append(f"{key} {a!r} → {b!r}" if shown else str(key))
    return ", ".join(parts)


def _prompt_changes(base: EvalRun, head: EvalRun) -> list[str]:
    """``prompt 'qa' v1 → v2`` per prompt key whose versions differ (:func:`_prompt_versions`), or that one run
    alone used."""
    old_runs, new_runs = _prompt_versions(base), _prompt_versions(head)
    changed = []
    for key in dict.fromkeys([*old_runs, *new_runs]):
        if key not in old_runs or key not in new_runs:
            changed.append(f"prompt {key!r} only in the {'head' if key in new_runs else 'base'} run")
            continue
        old, new = (" and ".join(map(_prompt_label, runs[key])) for runs in (old_runs, new_runs))
        if old != new:
            changed.append(f"prompt {key!r} {old} → {new}")
    return changed


def _changed_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    changed = changes_between(base, head)
    if len(changed) < 2:
        return []
    return [f"More than one thing changed between the runs: {'; '.join(changed)}. "
            "A difference cannot be put down to any one of them"]


def _self_judging_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """A judge that is the model it judges tends to prefer its own answers."""
    messages = [(side, self_preference_message(run.config.judge, run.config.target, f"the {side} run's target"))
                for side, run in (("base", base), ("head", head))]
    return [f"In the {side} run, {message}" for side, message in messages if message]


def _dataset_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    if base.fingerprint == head.fingerprint:
        return []
    base_units = collections.Counter(key for key, _ in _units(base))
    head_units = collections.Counter(key for key, _ in _units(head))
    only_head = sum((head_units - base_units).values())
    only_base = sum((base_units - head_units).values())
    if not only_head and not only_base:
        return ["The runs used different datasets (fingerprints differ) with the same cases: only their order, "
                "context or metadata changed"]
    return [f"The runs used different datasets (fingerprints differ): the head run has {only_head} case(s) "
            f"the base run lacks, and the base run has {only_base} case(s) the head run lacks"]


def _units(run: EvalRun) -> list[tuple[str, int]]:
    return list(dict.fromkeys((r.case_key, r.occurrence) for r in run.results))


def _prompt_label(prompt: Any) -> str:
    version, version_id = prompt.version, prompt.version_id
    if version is None:
        return "no version" if version_id is None else str(version_id)
    label = f"v{version}" if isinstance(version, (int, float)) and not isinstance(version, bool) else str(version)
    return f"{label} ({version_id})" if version_id is not None else label


def _prompt_versions(run: EvalRun) -> dict[str, list[Any]]:
    """Every version of every prompt the run used, by key, in order of first use.

    Read from the results (and their turns), so a run that A/B-tested two
    versions of one prompt shows both; ``prompts`` alone keeps one per key.
    """
    prompt_of = operator.attrgetter("prompt")
    turns = itertools.chain.from_iterable(filter(None, map(operator.attrgetter("turns"), run.results)))
    used = itertools.chain(map(prompt_of, run.results), map(prompt_of, turns), run.prompts.values())
    versions: dict[str, dict[tuple[Any, Any], Any]] = {}
    for prompt in filter(None, used):  # the results' prompts gathered in C: most runs have few or none
        if prompt.key is not None:
            versions.setdefault(prompt.key, {}).setdefault((str(prompt.version), str(prompt.version_id)), prompt)
    return {key: list(found.values()) for key, found in versions.items()}


def _prompt_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    old_runs, new_runs = _prompt_versions(base), _prompt_versions(head)
    warnings = []
    for key in dict.fromkeys([*old_runs, *new_runs]):
        if key not in new_runs:
            warnings.append(f"Prompt {key!r} is only in the base run")
        elif key not in old_runs:
            warnings.append(f"Prompt {key!r} is only in the head run")
        else:
            old = " and ".join(map(_prompt_label, old_runs[key]))
            new = " and ".join(map(_prompt_label, new_runs[key]))
            if old != new:
                warnings.append(f"Prompt {key!r} differs: the base run used {old}, the head run {new}")
    return warnings


def _judge_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    old, new = base.config.judge or {}, head.config.judge or {}
    if old == new:
        return []
    if not old or not new:
        side = "base" if old else "head"
        return [f"Only the {side} run used an LLM judge; judge-scored metrics may not be comparable"]
    changed = [f"{k} {old.get(k)!r} → {new.get(k)!r}" for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    return [f"The runs used different judges: {', '.join(changed)}"]


def _run_level_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    """Run-level metrics both runs have, without per-case values in one or both (see :func:`statistical_values`)."""
    head_names = {m.name for m in head.config.statistical_metrics}
    warnings = []
    for m in base.config.statistical_metrics:
        if m.name not in head_names:
            continue
        lacking = [side for side, run in (("base", base), ("head", head)) if not _has_values(run, m.name)]
        if len(lacking) == 2:
            warnings.append(f"Metric {m.name!r} is a run-level metric without per-case values; it was not compared")
        elif lacking:
            warnings.append(f"Metric {m.name!r} is a run-level metric without per-case values in the {lacking[0]} run "
                            "(a file written before cogeval kept them); it was not compared")
    return warnings


def _has_values(run: EvalRun, metric: str) -> bool:
    """Whether :func:`statistical_values` finds per-case values of ``metric`` in ``run`` (without reading them)."""
    return metric in BUILTIN_STATISTICAL_METRICS or any(
        r.statistical_values is not None and metric in r.statistical_values for r in run.results)


def _direction_warnings(base: EvalRun, head: EvalRun) -> list[str]:
    old, new = _given_directions(base), _given_directions(head)
    return [
        f"Metric {name!r} is higher-is-better in the {'base' if old[name] else 'head'} run only; "
        "the base run's direction was used"
        for name in old if name in new and old[name] != new[name]
    ]
