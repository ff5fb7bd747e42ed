"""The rows, numbers and words the comparison reports share: Markdown, HTML and console draw the same table.

A case row (a moved case of :func:`change_groups`, an errored case of :func:`errored_rows`) holds both runs'
answers, read from the ``base_output``/``head_output`` and ``base_error``/``head_error`` columns of the
comparison's ``changes`` and ``errored`` tables (each run's lowest trial, as ``base_trace_id``) when they
have them:

- ``base answer`` and ``head answer``: one line of at most :data:`~cogeval.present.templating.TEXT_SHOWN`
  characters, an error as ``error: …`` after the answer; ``–`` when the run has neither (what Markdown and
  the console show);
- ``answers``: one :class:`Answer` per run, whose output and error are
  :class:`~cogeval.present.templating.Shown` texts: the line the HTML report shows, and the whole text
  (cut at :data:`~cogeval.present.templating.TEXT_WHOLE` characters) that it opens on demand.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _numbers as numbers
from cogeval._text import cut, one_line, safe_str, shorten, with_unit
from cogeval.compare.directions import arrow
from cogeval.compare.result import VERDICT_TONES, as_run_comparison, headline, interval_text, is_fragile, verdict_note
from cogeval.present.templating import TEXT_SHOWN, Shown, shown

# --- formatting, shared by the three reports -------------------------------------------------


def _format_number(value: Any) -> str:
    """4 significant digits, NaN and None as ``–`` (:mod:`cogeval._numbers`)."""
    return numbers.number(_float(value))


def format_signed(value: Any) -> str:
    """Like :func:`_format_number` with an explicit ``+`` on positive values."""
    return numbers.signed(_float(value))


def format_p(value: Any) -> str:
    """A p-value to 2 significant digits, NaN as ``–``.

    >>> format_p(0.001234), format_p(3.2e-06), format_p(float("nan"))
    ('0.0012', '3.2e-06', '–')
    """
    return numbers.p_value(value)


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


ANSWER_COLUMNS = ["base answer", "head answer"]
"""Each run's answer on one line (an error as ``error: …``), in every case row: what Markdown and the console show."""


@dataclasses.dataclass(frozen=True)
class Answer:
    """What one run (``side``: ``base`` or ``head``) answered on a case: its ``output`` and ``error``, each a
    :class:`~cogeval.present.templating.Shown` or None when the run has none."""

    side: str
    output: Shown | None
    error: Shown | None


def _given(value: Any) -> Any:
    """``value``, or None when it is missing (None, NaN, ``pd.NA``)."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else value


def answers(row: Any) -> list[Answer]:
    """The base and the head :class:`Answer` of a row of ``changes`` or ``errored`` (a named tuple)."""
    found = []
    for side in ("base", "head"):
        output, error = (_given(getattr(row, f"{side}_{field}", None)) for field in ("output", "error"))
        found.append(Answer(side, None if output is None else shown(output),
                            None if error is None or error == "" else shown(error)))
    return found


def _answer_line(answer: Answer) -> str:
    """One run's answer on one line of at most :data:`~cogeval.present.templating.TEXT_SHOWN` characters: the
    output, then ``error: …``."""
    parts = [] if answer.output is None else [answer.output.short]
    if answer.error is not None:
        parts.append(f"error: {answer.error.short}")
    return cut(one_line(" · ".join(parts)), TEXT_SHOWN) if parts else "–"


def _answer_cells(row: Any) -> dict[str, Any]:
    """The answer cells of a case row: ``base answer``, ``head answer`` (:func:`_answer_line`) and ``answers``."""
    found = answers(row)
    return {"base answer": _answer_line(found[0]), "head answer": _answer_line(found[1]), "answers": found}


def has_answers(rows: Any) -> bool:
    """Whether any of ``rows`` (case rows) holds an answer or an error of either run."""
    return any(a.output is not None or a.error is not None for row in rows for a in row["answers"])


@dataclasses.dataclass(frozen=True)
class _Changes:
    metric: str
    direction: str  # "regressed" | "improved"
    rows: list[dict[str, Any]]
    total: int
    role: str = "decides"  # the metric's: "decides" | "informs"


def run_label(info: Any) -> str:
    return str(info.name or info.run_id or "unnamed run")


TONE_MARKS = {"good": "🟢", "bad": "🔴", "neutral": "⚪"}
"""How Markdown, which has no colour, shows a verdict's tone (see ``VERDICT_TONES``)."""


def headline_parts(comparison: Any) -> tuple[str, str, str]:
    """(lead, rest, tone) of :func:`headline`: ``lead`` is the verdict before the first ``": "``, never a metric name.

    Clustered (``cluster=``), the cases that would settle an inconclusive run are counted in clusters too
    (``about 122 cases (31 clusters) would settle the closest one``)."""
    text = headline(comparison)
    if comparison.cluster is not None:
        deciding = [m for m in comparison.metrics.values()
                    if m.role == "decides" and m.verdict == "inconclusive" and m.n_needed is not None]
        if deciding:
            closest = min(deciding, key=lambda m: m.n_needed)
            text = _in_clusters(text, closest.n_needed, closest.clusters_needed, "about ")
    lead, colon, rest = text.partition(": ")
    return lead, colon + rest, VERDICT_TONES.get(comparison.verdict, "neutral")


# --- clustered cases (cluster=) ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Clustering:
    """What a clustered comparison's reports say under the headline, formatted: the field (or function) the cases
    were clustered ``by``, the ``clusters`` (G) of the ``cases`` matched, and the largest ``design_effect`` of the
    deciding metrics (of all, when none decides); ``""`` for what is not known."""

    by: str
    clusters: str
    cases: str
    design_effect: str

    @property
    def counts(self) -> str:
        """``"12 clusters of 48 cases"`` (``"48 cases"`` when G is not known)."""
        cases = f"{self.cases} {'case' if self.cases == '1' else 'cases'}"
        if not self.clusters:
            return cases
        return f"{self.clusters} {'cluster' if self.clusters == '1' else 'clusters'} of {cases}"

    @property
    def text(self) -> str:
        """The whole line: ``Clustered by passage: 12 clusters of 48 cases; design effect up to 4.047 (…)``."""
        effect = f"; design effect up to {self.design_effect}" if self.design_effect else ""
        return f"Clustered by {self.by}: {self.counts}{effect} ({CLUSTER_UNITS})"


CLUSTER_UNITS = "whole clusters are the independent units of the tests and intervals"
"""Why the clusters are counted, in every report's line under the headline."""


def clustering(comparison: Any) -> _Clustering | None:
    """The :class:`_Clustering` of a comparison made with ``cluster=``; None for one whose cases are independent.

    The design effect is the one of :func:`~cogeval.compare.result.clustered_text`: the largest of the deciding
    metrics' (of every metric's, when none decides), NaN ones left out."""
    if comparison.cluster is None:
        return None
    metrics = list(comparison.metrics.values())
    deciding = [m for m in metrics if m.role == "decides"] or metrics
    effects = [m.design_effect for m in deciding if not math.isnan(m.design_effect)]
    return _Clustering(by=safe_str(comparison.cluster),
                      clusters="" if comparison.clusters is None else numbers.count(comparison.clusters),
                      cases=numbers.count(comparison.matched),
                      design_effect=numbers.number(max(effects)) if effects else "")


def _in_clusters(text: str, cases: Any, clusters: Any, before: str = "") -> str:
    """``text`` with its first ``{before}N cases`` (N: ``cases``) followed by ``(G clusters)`` (G: ``clusters``),
    unless it says so already or either count is missing."""
    if cases is None or clusters is None:
        return text
    found = re.escape(f"{before}{numbers.count(cases)} {'case' if cases == 1 else 'cases'}")
    groups = f"{numbers.count(clusters)} {'cluster' if clusters == 1 else 'clusters'}"
    return re.sub(rf"\b{found}(?! \()", lambda hit: f"{hit.group(0)} ({groups})", text, count=1)


def design_effects(comparison: Any) -> list[str]:
    """``"quality 4.047"`` for each metric with a design effect (deciding first): the console's line at a width
    that leaves the table's ``design effect`` column out."""
    return [f"{m.metric} {numbers.number(m.design_effect)}" for m in ordered(comparison)
            if not math.isnan(m.design_effect)]


def ordered(comparison: Any) -> list[Any]:
    """The compared metrics, deciding ones first (each group in the comparison's order), each metric's derived
    rows (``pass^k``, ``pass@k``) right after it: a metric and its rows decide as a family when any of them does."""
    metrics = comparison.metrics
    family = {name: m.derived_from if m.derived_from in metrics else name for name, m in metrics.items()}
    deciding = {family[name] for name, m in metrics.items() if m.role == "decides"}
    heads = {head: i for i, head in enumerate(dict.fromkeys(family.values()))}
    return sorted(metrics.values(), key=lambda m: (family[m.metric] not in deciding, heads[family[m.metric]]))


def roles(comparison: Any) -> str:
    """``3 metrics decide, 1 informs``."""
    deciding = sum(m.role == "decides" for m in comparison.metrics.values())
    informing = len(comparison.metrics) - deciding
    return (f"{deciding} {'metric decides' if deciding == 1 else 'metrics decide'}, "
            f"{informing} {'informs' if informing == 1 else 'inform'}")


_DECIDED = ("better", "worse", "equivalent")
"""The verdicts that settle a metric: its ``n needed`` cell is blank (no more cases are needed to decide it)."""
INFORMS_MARK = "ⁱ"
"""What marks an informing metric's name where a table shows no ``role`` column (the console below its full width)."""
INFORMS_LEGEND = "informs: does not decide the verdict"
"""What an informing metric is, under every metric table that has one: after :data:`INFORMS_MARK` in the console."""
N_NEEDED_LEGEND = ("n needed: the paired cases that would detect the observed difference (the margin, when one is set) "
                   "with 80% power; blank where the verdict is already decided")
"""What the metric tables' ``n needed`` column counts, under every table that shows it."""


def metric_rows(comparison: Any) -> list[dict[str, Any]]:
    """One row of formatted cells per metric (deciding first) over :data:`METRIC_COLUMNS`, plus its ``tone``.

    ``n needed`` (and ``cases needed``, in cases only) is blank where the verdict is one of :data:`_DECIDED`:
    the metric's ``n_needed`` stays in ``to_frame()``, but what would settle a settled metric puzzles a reader."""
    return [
        {
            "metric": f"{with_unit(str(m.metric), str(m.metric))} {arrow(m.higher_is_better, m.direction_assumed)}", "role": str(m.role),
            "base": _format_number(m.base), "head": _format_number(m.head), "n": numbers.count(m.n),
            "difference": format_signed(m.difference), "interval": interval_text(m),
            "effect size": format_signed(m.effect_size), "test": str(m.test),
            "p": format_p(m.p_value), "adjusted p": format_p(m.adjusted_p_value), "verdict": str(m.verdict),
            "mde": _format_number(m.mde), "n needed": "" if m.verdict in _DECIDED else _n_needed(m),
            "cases needed": "" if m.verdict in _DECIDED else numbers.count(m.n_needed),
            "fragility": _fragility(m),
            "beyond noise": {True: "yes", False: "no"}.get(m.beyond_noise, numbers.MISSING),
            "clusters": numbers.count(m.clusters), "design effect": _format_number(m.design_effect),
            "tone": VERDICT_TONES.get(m.verdict, "neutral"),
        }
        for m in ordered(comparison)
    ]


def _n_needed(m: Any) -> str:
    """``1,200``, or ``1,200 (150 clusters)`` for a clustered metric."""
    needed = numbers.count(m.n_needed)
    if m.n_needed is None or m.clusters_needed is None:
        return needed
    return f"{needed} ({numbers.count(m.clusters_needed)} {'cluster' if m.clusters_needed == 1 else 'clusters'})"


def _fragility(m: Any) -> str:
    """``2``, ``2 (fragile)``; a clustered metric's counts whole clusters: ``2 clusters (fragile)``."""
    text = numbers.count(m.fragility)
    if m.fragility is not None and m.clusters is not None:
        text += " cluster" if m.fragility == 1 else " clusters"
    return text + (" (fragile)" if is_fragile(m) else "")


def note_rows(comparison: Any) -> list[tuple[str, str]]:
    """(metric, :func:`verdict_note`) for each metric whose verdict is inconclusive, that has a margin, that is
    fragile or whose difference is within rerun noise."""
    return [(str(m.metric), _clustered_note(m, verdict_note(m))) for m in ordered(comparison)
            if m.verdict == "inconclusive" or m.margin or is_fragile(m) or m.beyond_noise is False]


def _clustered_note(m: Any, note: str) -> str:
    """A clustered metric's note counts its cases in clusters too: ``not significant with 48 cases (12 clusters);
    about 122 cases (31 clusters) would detect a difference this large``."""
    if m.clusters is None:
        return note
    note = _in_clusters(note, m.n, m.clusters, "with ")
    return _in_clusters(note, m.n_needed, m.clusters_needed, "about ")


METRIC_COLUMNS = ["metric", "role", "base", "head", "n", "difference", "interval", "effect size",
                  "test", "p", "adjusted p", "verdict", "mde", "n needed", "fragility"]
"""The metric table's columns; ``beyond noise`` follows when the comparison had a noise report (:func:`metric_columns`)."""


def metric_columns(comparison: Any) -> list[str]:
    """:data:`METRIC_COLUMNS`, and ``beyond noise`` when some metric was measured against rerun noise; clustered
    (``cluster=``), ``clusters`` after ``n`` and ``design effect`` after ``effect size``."""
    noise = any(m.beyond_noise is not None for m in comparison.metrics.values())
    columns = [*METRIC_COLUMNS, "beyond noise"] if noise else list(METRIC_COLUMNS)
    if comparison.cluster is not None:
        columns.insert(columns.index("n") + 1, "clusters")
        columns.insert(columns.index("effect size") + 1, "design effect")
    return columns
CHANGE_COLUMNS = ["case", "input", "base → head", "delta"]


def change_groups(comparison: Any, limit: int) -> list[_Changes]:
    """The moved cases per metric, at most ``limit`` rows each (largest |delta| first): the deciding metrics'
    regressed then improved cases, then the informing metrics' (``role``). Rows whose ``direction`` is
    ``error`` (the target failed on the case in one run) are in no group: :func:`errored_rows` lists those cases."""
    frame = comparison.changes
    if frame is None or len(frame) == 0:
        return []
    positions = frame.groupby(["metric", "direction"], sort=False).indices  # one pass, not one filter per group
    order = list(comparison.metrics) + [m for m in dict.fromkeys(frame["metric"]) if m not in comparison.metrics]
    found = [(metric, direction, role, positions[metric, direction])
             for role in ("decides", "informs") for direction in ("regressed", "improved")
             for metric in order if _metric_role(comparison, metric) == role and (metric, direction) in positions]
    if not found:
        return []
    picked = frame.iloc[np.concatenate([p[:limit] for *_, p in found])].itertuples(index=False)
    groups = []
    for metric, direction, role, part in found:
        rows = [
            {"case": str(r.case_key)[:8], "input": shorten(r.input), "key": str(r.case_key),
             "base → head": f"{_format_number(r.base)} → {_format_number(r.head)}",
             "delta": format_signed(r.delta), "trace": sides(r, "trace_id"),
             "prompt": sides(r, "prompt_version"), **_answer_cells(r)}
            for r in itertools.islice(picked, min(limit, len(part)))
        ]
        groups.append(_Changes(str(metric), direction, rows, len(part), role))
    return groups


def _metric_role(comparison: Any, metric: Any) -> str:
    """The role of a metric of ``changes``: its comparison's, ``decides`` for one the comparison lacks."""
    found = comparison.metrics.get(metric)
    return "decides" if found is None else str(found.role)


def _roles(comparison: Any, metrics: pd.Series) -> pd.Series:
    """:func:`_metric_role` of each of ``metrics`` (a ``changes`` column), by one lookup per row."""
    known = {name: str(m.role) for name, m in comparison.metrics.items()}
    return metrics.map(known).fillna("decides")


def _moved_cases(comparison: Any, direction: str, role: str) -> tuple[int, int]:
    """(cases, case × metric rows) of ``changes`` that moved in ``direction`` on metrics of ``role``: a case that
    moved on several metrics counts once."""
    frame = comparison.changes
    if frame is None or len(frame) == 0:
        return 0, 0
    moved = frame[(frame["direction"] == direction) & (_roles(comparison, frame["metric"]) == role)]
    cases = len(moved.drop_duplicates([k for k in ("case_key", "occurrence") if k in moved.columns]))
    return cases, len(moved)


def counted(comparison: Any, direction: str, role: str) -> str:
    """``"8 cases"``, or ``"7 cases, 8 case × metric"`` when some case moved on several metrics of ``role``."""
    cases, pairs = _moved_cases(comparison, direction, role)
    return f"{cases} {'case' if cases == 1 else 'cases'}" + ("" if cases == pairs else f", {pairs} case × metric")


def informing_summary(comparison: Any) -> str:
    """``"latency: 240 regressed, 53 improved"``: the cases each informing metric moved, "" when none moved."""
    merged: dict[str, list[str]] = {}
    for g in (g for g in change_groups(comparison, 0) if g.role == "informs"):
        merged.setdefault(g.metric, []).append(f"{g.total} {g.direction}")
    if not merged:
        return ""
    only = _informing_only(comparison)
    return ("; ".join(f"{metric}: {', '.join(counts)}" for metric, counts in merged.items())
            + f"; {only} {'case' if only == 1 else 'cases'} moved on these only")


def _informing_only(comparison: Any) -> int:
    """How many cases moved (improved or regressed) on informing metrics and on no deciding metric."""
    frame = comparison.changes
    if frame is None or len(frame) == 0:
        return 0
    unit = [k for k in ("case_key", "occurrence") if k in frame.columns]
    moved = frame[frame["direction"].isin(("improved", "regressed"))]
    informs = (_roles(comparison, moved["metric"]) == "informs").to_numpy()
    deciding = pd.MultiIndex.from_frame(moved.loc[~informs, unit])
    informing = pd.MultiIndex.from_frame(moved.loc[informs, unit]).unique()
    return int((~informing.isin(deciding)).sum())


def errored_rows(comparison: Any, limit: int | None = None) -> list[dict[str, Any]]:
    """One row per matched case the target failed on (``comparison.errored``), the first ``limit`` (None: all):
    ``case``, ``input``, ``errored in`` (``head``, ``base`` or ``both``), ``key``, and the answer cells."""
    frame = getattr(comparison, "errored", None)
    if frame is None or len(frame) == 0:
        return []
    return [{"case": str(r.case_key)[:8], "input": shorten(r.input), "key": str(r.case_key),
             "errored in": str(r.errored), **_answer_cells(r)}
            for r in itertools.islice(frame.itertuples(index=False), limit)]


ERRORED_COLUMNS = ["case", "input", "errored in"]
"""The reports' table of errored cases."""


def sides(row: Any, field: str) -> str:
    """``base → head`` of the changes' ``base_<field>`` / ``head_<field>`` (one value when equal); "" when neither run has it."""
    base, head = ("" if v is None or v != v else safe_str(v) for v in
                  (getattr(row, f"base_{field}", None), getattr(row, f"head_{field}", None)))
    return base if base == head else f"{base or '–'} → {head or '–'}"


def run_comparison(comparison: Any) -> Any:
    """The :class:`~cogeval.RunComparison` to report: an ``EvalComparison`` result holds it as ``.comparison``;
    anything else raises :class:`~cogeval.errors.InputError` naming ``comparison``."""
    return as_run_comparison("comparison", comparison)
