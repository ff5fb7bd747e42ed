"""ipywidgets explorers: :func:`run_explorer` over a run store and :func:`case_explorer` over a comparison.

Both are plain ``VBox`` containers of standard widgets, so they also render
(as a snapshot) in a notebook exported to static HTML. Tables live in ``HTML``
widgets built with the escaping helpers of every ``_repr_html_``; the chart is
an ``Output`` widget holding the figure's display bundle (plotly's mimetype
for a live notebook, ``text/html`` for an exported page; see
:func:`~cogeval.present.figure_mimebundle`). Their parts are attributes,
so code (and tests) can drive them through their traits::

    explorer = run_explorer(RunStore("runs"))
    explorer.alpha.value = 0.01       # the table, chart and cases update
    explorer.comparison               # the RunComparison on show
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any, cast

import ipywidgets as widgets
import numpy as np

from cogeval import _columns as col
from cogeval._check import check_choice, check_probability, check_seed, describe
from cogeval._html import badge, escape, html_table, key_value_table
from cogeval._text import as_text, cut, short_input
from cogeval.compare.engine import TESTS
from cogeval.compare.result import RunComparison, as_run_comparison
from cogeval.compare.runs import as_run, compare_runs, score_frame
from cogeval.data import EvalRun
from cogeval.errors import InputError
from cogeval.present.notebook import figure_mimebundle
from cogeval.present.plots import plot_comparison
from cogeval.present.run_labels import run_labels
from cogeval.store import RunStore

_MAX_CASES = 10
"""Regressed cases listed by the run explorer (largest first)."""
_MAX_TEXT = 4000
"""Characters of an input, expected answer or output shown by the case explorer."""


def _message(error: BaseException) -> str:
    """A short escaped message in place of a table, so an observer never raises into the notebook."""
    return f'<div class="cogeval"><pre>{escape(type(error).__name__)}: {escape(error)}</pre></div>'


def _display(fig: Any) -> tuple[dict[str, Any], ...]:
    return ({"output_type": "display_data", "data": figure_mimebundle(fig), "metadata": {}},)


def _long_text(value: Any) -> str | None:
    return None if value is None else cut(as_text(value), _MAX_TEXT)


def _metrics(run: EvalRun) -> list[str]:
    return list(dict.fromkeys(score_frame(run)[col.METRIC].dropna()))


def _regressed_cases_html(comparison: RunComparison, limit: int = _MAX_CASES) -> str:
    """The regressed cases of a comparison, largest change first, as an escaped HTML table."""
    changes = comparison.changes
    regressed = changes[changes[col.DIRECTION] == "regressed"]
    rows = [
        {col.METRIC: r[col.METRIC], col.INPUT: short_input(r[col.INPUT]), col.BASE: r[col.BASE], col.HEAD: r[col.HEAD],
         col.DELTA: r[col.DELTA], col.CASE_KEY: str(r[col.CASE_KEY])[:12]}
        for r in regressed.to_dict("records")
    ]
    caption = f"Regressed cases: {len(rows)}" + (f" (largest {limit} shown)" if len(rows) > limit else "")
    return html_table(rows, [col.METRIC, col.INPUT, col.BASE, col.HEAD, col.DELTA, col.CASE_KEY],
                      caption=caption, max_rows=limit)


class RunExplorer(widgets.VBox):
    """Pick two runs of a store and see their comparison; see :func:`run_explorer`.

    Parts: ``base``, ``head`` (Dropdowns of runs, valued by run id), ``metrics`` (SelectMultiple),
    ``alpha`` (FloatSlider), ``seed`` (IntText); ``table`` and ``cases`` (HTML),
    ``chart`` (Output). ``comparison`` is the :class:`RunComparison` on show
    (``None`` when the last update failed; ``table`` then says why). A ``seed``
    of None is recorded as None until a seed is typed (the box shows 0).
    """

    def __init__(self, store: RunStore, *, alpha: float = 0.05, seed: int | None = 0, test: str = "t") -> None:
        runs = store.runs()
        if not runs:
            raise InputError(f"run_explorer needs a store with at least one run; {store.path} has none")
        self.store, self.test = store, test
        self.runs = {run.run_id: run for run in runs}
        self._metric_cache: dict[str, list[str]] = {}
        self._busy = False
        self.comparison: RunComparison | None = None
        options = [(label, run_id) for run_id, label in run_labels(runs).items()]
        self.base = widgets.Dropdown(options=options, value=runs[min(1, len(runs) - 1)].run_id, description="base",
                                     layout=widgets.Layout(width="48%"))
        self.head = widgets.Dropdown(options=options, value=runs[0].run_id, description="head",
                                     layout=widgets.Layout(width="48%"))
        self.metrics = widgets.SelectMultiple(description="metrics", rows=5)
        self.alpha = widgets.FloatSlider(value=alpha, min=min(0.001, alpha), max=max(0.2, alpha), step=0.001, readout_format=".3f",
                                         description="alpha", continuous_update=False)
        self._seed = seed
        self.seed = widgets.IntText(value=0 if seed is None else seed, description="seed")
        self.table, self.cases, self.chart = widgets.HTML(), widgets.HTML(), widgets.Output()
        super().__init__([
            widgets.HBox([self.base, self.head]),
            widgets.HBox([self.metrics, widgets.VBox([self.alpha, self.seed])]),
            self.table, self.chart, self.cases,
        ])
        self.base.observe(self._runs_changed, names="value")
        self.head.observe(self._runs_changed, names="value")
        self.seed.observe(self._seed_typed, names="value")  # before _changed, which compares with it
        for control in (self.metrics, self.alpha, self.seed):
            control.observe(self._changed, names="value")
        self._runs_changed()

    def _metrics_of(self, run_id: str) -> list[str]:
        if run_id not in self._metric_cache:
            self._metric_cache[run_id] = _metrics(self.runs[run_id])
        return self._metric_cache[run_id]

    def _runs_changed(self, change: Any = None) -> None:
        self.base.tooltip, self.head.tooltip = f"run id {self.base.value}", f"run id {self.head.value}"
        head = set(self._metrics_of(self.head.value))
        common = [m for m in self._metrics_of(self.base.value) if m in head]
        kept = [m for m in self.metrics.value if m in common] or common
        self._busy = True
        try:
            self.metrics.options = common
            self.metrics.value = kept
        finally:
            self._busy = False
        self.update()

    def _seed_typed(self, change: Any) -> None:
        self._seed = change["new"]

    def _changed(self, change: Any = None) -> None:
        if not self._busy:
            self.update()

    def update(self) -> None:
        """Compare the chosen runs again and refresh the table, chart and cases (never raises)."""
        try:
            if not self.metrics.value:
                raise InputError("select at least one metric" if self.metrics.options
                                 else "the two runs have no metric in common")
            comparison = compare_runs(
                self.runs[self.base.value], self.runs[self.head.value],
                alpha=self.alpha.value, seed=self._seed, test=self.test, metrics=list(self.metrics.value),
            )
            table, chart, cases = comparison._repr_html_(), _display(plot_comparison(comparison)), _regressed_cases_html(comparison)
        except Exception as error:  # noqa: BLE001 - a widget callback must not raise into the notebook
            self.comparison = None
            self.table.value, self.chart.outputs, self.cases.value = _message(error), (), ""
            return
        self.comparison = comparison
        self.table.value, self.chart.outputs, self.cases.value = table, chart, cases


def run_explorer(store: Any, *, alpha: float = 0.05, seed: Any = 0, test: str = "t") -> RunExplorer:
    """An explorer over the runs of ``store`` (a :class:`RunStore` or its folder).

    Pick the base and head runs (labelled by name, the metadata that tells them
    apart and the start time, :func:`~cogeval.present.run_labels.run_labels`; the
    run id on hover; newest first; head starts at the newest run, base at the one before), the metrics,
    ``alpha`` and the ``seed`` recorded with the comparison: the comparison table, the forest plot
    and the regressed cases update on each change. ``test`` is passed to
    :func:`~cogeval.compare_runs` for non-binary metrics. ``seed`` follows the
    one seed rule (None, an integer >= 0 or a numpy Generator); as in
    :func:`~cogeval.compare_runs`, which draws nothing at random, a Generator
    is recorded as None.

    >>> # explorer = run_explorer("runs"); explorer   # last line of a cell shows it
    """
    if isinstance(store, (str, os.PathLike)):
        store = RunStore(store)
    if not isinstance(store, RunStore):
        raise InputError(f"store must be a RunStore or a folder path; got {describe(store)}")
    alpha = check_probability("alpha", alpha, open_interval=True)
    seed = check_seed("seed", seed)
    seed = None if isinstance(seed, np.random.Generator) else seed
    return RunExplorer(store, alpha=alpha, seed=seed, test=check_choice("test", test, TESTS))


# -- cases ----------------------------------------------------------------------------------------


_DIRECTIONS = ("regressed", "improved", "error", "all")


class CaseExplorer(widgets.VBox):
    """Browse the changed cases of a comparison with both outputs side by side; see :func:`case_explorer`.

    Parts: ``metric`` (Dropdown), ``direction`` (ToggleButtons: regressed,
    improved, error, all), ``case`` (Select of the matching changed cases, largest
    change first; its value is the row position in ``comparison.changes``),
    ``count`` and ``detail`` (HTML).
    """

    def __init__(self, comparison: RunComparison, base: EvalRun, head: EvalRun) -> None:
        self.comparison = comparison
        self._sides = {"base": (base, _units(base)), "head": (head, _units(head))}
        metrics = list(comparison.metrics)
        first = next((m for m in metrics if comparison.metrics[m].n_regressed), metrics[0] if metrics else None)
        self.metric = widgets.Dropdown(options=metrics, value=first, description="metric")
        self.direction = widgets.ToggleButtons(options=_DIRECTIONS, value="regressed", description="cases")
        self.case = widgets.Select(options=[], rows=8, description="case", layout=widgets.Layout(width="95%"))
        self.count, self.detail = widgets.HTML(), widgets.HTML()
        super().__init__([widgets.HBox([self.metric, self.direction]), self.count, self.case, self.detail])
        self.metric.observe(self._filter, names="value")
        self.direction.observe(self._filter, names="value")
        self.case.observe(self._show, names="value")
        self._filter()

    def _filter(self, change: Any = None) -> None:
        changes = self.comparison.changes
        picked = changes[col.METRIC] == self.metric.value
        if self.direction.value != "all":
            picked &= changes[col.DIRECTION] == self.direction.value
        positions = np.flatnonzero(picked.to_numpy())
        m = self.comparison.metrics.get(self.metric.value)
        total = f" of {m.n} paired cases" if m is not None else ""
        kind = "changed" if self.direction.value == "all" else self.direction.value
        self.count.value = f'<div class="cogeval">{escape(len(positions))} {escape(kind)} case(s){escape(total)}</div>'
        self.case.options = [(self._label(int(p)), int(p)) for p in positions]
        if len(positions) and self.case.value is None:
            self.case.index = 0
        self._show()

    def _label(self, position: int) -> str:
        row = self.comparison.changes.iloc[position]
        mark = {"improved": "▲", "regressed": "▼"}.get(row[col.DIRECTION], "✗")  # ✗: the target failed on it
        return f"{mark} {row[col.DELTA]:+.3g} · {short_input(row[col.INPUT], 90) or row[col.CASE_KEY]}"

    def _show(self, change: Any = None) -> None:
        try:
            self.detail.value = "" if self.case.value is None else self.case_html(self.case.value)
        except Exception as error:  # noqa: BLE001 - a widget callback must not raise into the notebook
            self.detail.value = _message(error)

    def case_html(self, position: int) -> str:
        """One changed case (a row position in ``comparison.changes``): input, expected, both outputs and scores."""
        row = self.comparison.changes.iloc[position]
        unit = (row[col.CASE_KEY], int(row[col.OCCURRENCE]))
        (base_run, base_units), (head_run, head_units) = self._sides["base"], self._sides["head"]
        base, head = base_units.get(unit), head_units.get(unit)
        case = (head or base or {}).get("case")
        m = self.comparison.metrics[row[col.METRIC]]
        kind = "good" if row[col.DIRECTION] == "improved" else "bad"
        header = (f'<div class="cogeval">{badge(row[col.DIRECTION], kind)} '
                  f'{escape(row[col.METRIC])} {"↑" if m.higher_is_better else "↓"}: base {escape(f"{row[col.BASE]:.4g}")} → '
                  f'head {escape(f"{row[col.HEAD]:.4g}")} (Δ {escape(f"{row[col.DELTA]:+.4g}")})</div>')
        fields = {"case key": row[col.CASE_KEY], "occurrence": unit[1]}
        if case is not None:
            fields.update({f: _long_text(getattr(case, f)) for f in (col.INPUT, col.EXPECTED, col.CONTEXT)
                           if getattr(case, f) is not None})
        base_name = f"base · {self.comparison.base.name or base_run.run_id}"
        head_name = f"head · {self.comparison.head.name or head_run.run_id}"
        rows = [
            {"": "output", base_name: _outputs(base, "output"), head_name: _outputs(head, "output")},
            *({"": label, base_name: _outputs(base, field), head_name: _outputs(head, field)}
              for field, label in (("error", "error"), ("trace_id", "trace id"), ("prompt_version", "prompt version"))
              if _outputs(base, field) or _outputs(head, field)),
            *({"": f"score · {name}", base_name: (base or {}).get("scores", {}).get(name, math.nan),
               head_name: (head or {}).get("scores", {}).get(name, math.nan)} for name in self.comparison.metrics),
        ]
        return header + key_value_table("case", fields) + html_table(rows, ["", base_name, head_name])


def _units(run: EvalRun) -> dict[tuple[str, int], dict[str, Any]]:
    """(case key, occurrence) → the case, its trials' outputs and errors, and each metric's mean score over trials."""
    units: dict[tuple[str, int], dict[str, Any]] = {}
    for r in run.results:
        unit = units.setdefault((r.case_key, r.occurrence), {"case": r.case, "output": [], "error": [], "trace_id": [],
                                                             "prompt_version": [], "scores": {}})
        unit["output"].append((r.trial, r.output))
        unit["error"].append((r.trial, r.error))
        unit["trace_id"].append((r.trial, r.trace_id))
        version = None if r.prompt is None else r.prompt.version if r.prompt.version is not None else r.prompt.version_id
        unit["prompt_version"].append((r.trial, None if version is None else str(version)))
    scores = score_frame(run).groupby([col.CASE_KEY, col.OCCURRENCE, col.METRIC])[col.SCORE].mean()
    for index, value in scores.items():
        key, occurrence, metric = cast(tuple[str, int, str], index)  # the three levels grouped by above
        if (key, occurrence) in units:
            units[(key, occurrence)]["scores"][metric] = float(value)
    return units


def _outputs(unit: dict[str, Any] | None, field: str) -> str | None:
    """The ``output`` (or ``error``, ``trace_id``, ``prompt_version``) of every trial of a unit; labelled by trial
    when there are several."""
    if unit is None:
        return "(case not in this run)" if field == "output" else None
    values: Iterable[tuple[int, Any]] = unit[field]
    values = [(t, v) for t, v in values if v is not None]
    if not values:
        return None
    if len(unit[field]) == 1:
        return _long_text(values[0][1])
    return "\n".join(f"[trial {t}] {_long_text(v)}" for t, v in values)


def case_explorer(comparison: Any, base: Any = None, head: Any = None) -> CaseExplorer:
    """An explorer of the changed cases of ``comparison``: pick a metric and regressed / improved / all.

    The comparison keeps scores, not outputs, so pass the two runs it compared
    (runs, suite results or run-file paths): ``case_explorer(compare_runs(a, b), a, b)``.
    A :class:`~cogeval.ComparisonResult` (from ``EvalComparison``) holds its runs,
    so ``case_explorer(result)`` is enough. The selected case shows its input,
    expected answer, both outputs side by side, the trace ids and prompt versions
    where the runs have them, and every compared metric's score in both runs, all escaped.

    >>> # case_explorer(comparison, "runs/a.json", "runs/b.json")
    """
    c = as_run_comparison("comparison", comparison)
    if base is None and head is None and hasattr(comparison, "baseline") and hasattr(comparison, "challenger"):
        base, head = comparison.baseline, comparison.challenger
    if base is None or head is None:
        raise InputError("case_explorer needs the two runs the comparison compared, for their outputs: "
                         "case_explorer(comparison, base_run, head_run)")
    base_run, head_run = as_run(base, "base"), as_run(head, "head")
    for side, run, info in (("base", base_run, c.base), ("head", head_run, c.head)):
        if info.run_id is not None and run.run_id != info.run_id:
            raise InputError(f"{side} is run {run.run_id!r}, but the comparison's {side} run is {info.run_id!r}; "
                             "pass the runs in the order compare_runs(base, head) got them")
    return CaseExplorer(c, base_run, head_run)
