"""Reports of a run comparison: ``console`` (rich), ``markdown`` (GitHub) and ``html`` (one self-contained file).

Each opens with the run's verdict, :func:`~cogeval.compare.result.headline`,
coloured by :data:`~cogeval.compare.result.VERDICT_TONES`, then shows both
runs, the metric table (deciding metrics first, each with its role, its
test-inversion interval and level, its verdict, ``mde`` and ``n needed``), a
note for each inconclusive metric or metric with a margin
(:func:`~cogeval.compare.result.verdict_note`), the regressed and improved
cases and the warnings. A comparison made with ``cluster=`` says so under the headline (by what, how many
clusters of how many cases, the largest design effect: :func:`~cogeval.present.comparison_rows.clustering`),
and gives each metric's clusters and design effect (the console's wide table, the Markdown table, the HTML
page's table of clusters) and its ``n needed`` in clusters too. The verdict words are the comparison's own:
``better``, ``worse``, ``equivalent``, ``inconclusive`` (and ``mixed`` for a run).

Numbers are formatted here, only for presenting; case text and metric names
go through :func:`~cogeval.present.markdown.markdown_cell` (Markdown: mentions and
issue references inert too) or jinja2 autoescape (HTML), so no case can break a
table or inject HTML; in the console report through :func:`~cogeval._text.printable`
(escape sequences shown, rich markup never read), and the printed output through
:func:`~cogeval._text.without_workflow_commands`. Files are written by
:func:`~cogeval._files.write_text_atomic` (a lone surrogate as ``\\udXXX``).

>>> import os, tempfile, pandas as pd
>>> from cogeval import EvalRun, compare_runs
>>> def run(scores): return EvalRun.from_frame(pd.DataFrame({"input": list("abcdefghij"), "exact_match": scores}),
...                                           directions={"exact_match": True})
>>> comparison = compare_runs(run([0] * 10), run([1] * 10), seed=0)
>>> print("\\n".join(comparison_markdown(comparison).splitlines()[2:5]))
🟢 **head is better**: better on exact\\_match (α = 0.05, 10 matched cases)
<BLANKLINE>
Verdict: **better** · 1 metric decides, 0 inform · 10 matched cases, 0 added, 0 removed · α = 0.05
>>> folder = tempfile.mkdtemp()
>>> [os.path.relpath(p, folder) for p in report_comparison(comparison, ["markdown", "html"], f"{folder}/report.html")]
['report.md', 'report.html']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from cogeval import _numbers as numbers
from cogeval._check import check_choice, check_path
from cogeval._files import report_paths, write_text_atomic
from cogeval.compare.directions import ASSUMED_LEGEND
from cogeval.compare.result import changed_text, errored_text
from cogeval.errors import InputError
from cogeval.present.comparison_console import print_console
from cogeval.present.comparison_rows import (
    ANSWER_COLUMNS,
    CHANGE_COLUMNS,
    CLUSTER_UNITS,
    ERRORED_COLUMNS,
    INFORMS_LEGEND,
    N_NEEDED_LEGEND,
    TONE_MARKS,
    change_groups,
    clustering,
    counted,
    errored_rows,
    has_answers,
    headline_parts,
    informing_summary,
    metric_columns,
    metric_rows,
    note_rows,
    ordered,
    roles,
    run_comparison,
    run_label,
)
from cogeval.present.markdown import markdown_cell, markdown_table
from cogeval.present.slices import slice_columns, slice_rows
from cogeval.present.templating import cogeval_version, render_template

KINDS = {"console": None, "markdown": ".md", "html": ".html"}
_MARKDOWN_CHANGES = 10
_MARKDOWN_ANSWER = 80
"""Characters of each run's answer a Markdown case row shows (on one line)."""
_HTML_CHANGES = 50
_HEADLINE_LIMIT = 2000
FOREST_LIMIT = 40
"""The most metrics the HTML report's forest plot draws (:func:`forest_metrics`): every one up to this many."""


_HTML_CLUSTER_COLUMNS = ["metric", "clusters", "design effect", "n needed"]
"""The HTML report's table of clusters (``cluster=``), under the metric table: each metric's clusters, design effect
and ``n needed`` in cases and clusters. The metric table keeps the columns it has without ``cluster=`` (and
``n needed`` in cases), so it fits the page as it does then."""


def _html_metric_columns(comparison: Any) -> list[str]:
    """The HTML report's metric table: :func:`metric_columns` with the verdict next to the metric, the two columns
    that stay in sight (sticky at the left edge; below 900 px the first line of each metric's block); a clustered
    comparison's ``clusters`` and ``design effect`` are in the table of clusters (:data:`_HTML_CLUSTER_COLUMNS`)."""
    return ["metric", "verdict", *(c for c in metric_columns(comparison)
                                   if c not in ("metric", "verdict", "clusters", "design effect"))]


def report_comparison(comparison: Any, kind: str | Sequence[str] = "console", path: Any = "eval-comparison", *,
                      wide: bool = False) -> list[str]:
    """Print or write the reports of ``kind`` (``console``, ``markdown``, ``html`` or a list of them).

    ``console`` prints to stdout; ``markdown`` writes ``<path>.md`` and ``html``
    writes ``<path>.html`` with the forest plot of :func:`~cogeval.present.plots.plot_comparison`
    drawn offline (plotly.js inlined once; see :func:`forest_plot_html`). Files are
    named by :func:`~cogeval._files.report_paths`: a trailing ``.md``/``.html`` on ``path`` is
    replaced by each kind's suffix, and a folder (``out/``, or an existing one) receives
    ``eval-comparison.md``/``.html``; folders are created; writes are atomic. Returns the paths written.

    The console report fits the terminal's width (at least 80 columns, ``COLUMNS``
    respected) by leaving columns out; ``wide=True`` prints every column.
    """
    comparison = run_comparison(comparison)
    kinds = list(kind) if isinstance(kind, Iterable) and not isinstance(kind, str) else [kind]
    if not kinds:
        raise InputError(f"kind must name at least one report of {', '.join(map(repr, KINDS))}; got an empty list")
    kinds = list(dict.fromkeys(check_choice("kind", k, KINDS) for k in kinds))
    files = [k for k in kinds if k != "console"]  # every kind but "console" has a file suffix
    if files:
        check_path("path", path)
    targets = dict(zip(files, report_paths(path, [cast(str, KINDS[k]) for k in files],
                                           default_name="eval-comparison", known=[".md", ".html"])))
    written = []
    for k in kinds:
        if k == "console":
            print_console(comparison, wide=wide)
        else:
            text = comparison_markdown(comparison) if k == "markdown" else comparison_html(comparison)
            written.append(str(write_text_atomic(targets[k], text)))
    return written


# --- Markdown -----------------------------------------------------------------------------


def comparison_markdown(comparison: Any) -> str:
    """The GitHub-flavoured Markdown report, e.g. for a pull-request comment.

    At most 10 cases per metric and direction are listed, with each run's answer (and error) on one line of at
    most 80 characters when the comparison has them; every cell goes through :func:`markdown_cell`, so case
    text cannot break a table or inject HTML.
    """
    c = run_comparison(comparison)
    lead, rest, tone = headline_parts(c)
    sides = [
        {"": side, "run": run_label(info), "run_id": info.run_id or "–", "started_at": info.started_at or "–"}
        for side, info in (("base", c.base), ("head", c.head))
    ]
    lines = [
        f"### cogeval comparison: {markdown_cell(run_label(c.head))} vs {markdown_cell(run_label(c.base))}",
        "",
        f"{TONE_MARKS[tone]} **{markdown_cell(lead)}**{markdown_cell(rest, limit=_HEADLINE_LIMIT)}",
        "",
        *_markdown_clustering(c),
        f"Verdict: **{markdown_cell(c.verdict)}** · {roles(c)} · {numbers.count(c.matched)} matched cases, "
        f"{numbers.count(c.n_added)} added, {numbers.count(c.n_removed)} removed"
        + (f", {errored_text(c)}" if errored_text(c) else "") + f" · α = {numbers.number(c.alpha)}",
        "",
        f"Changed: {markdown_cell(changed_text(c), limit=_HEADLINE_LIMIT)}",
        "",
        markdown_table(sides, ["", "run", "run_id", "started_at"]),
        "",
    ]
    if c.metrics:
        rows = [{**r, "verdict": f"{TONE_MARKS[r['tone']]} {r['verdict']}"} for r in metric_rows(c)]
        lines += [markdown_table(rows, metric_columns(c)), "",
                  " · ".join(f"**{term}**: {rest}" for term, rest in _legend(c)), ""]
    notes = note_rows(c)
    if notes:
        lines += [f"- **{markdown_cell(metric)}** — {markdown_cell(note, limit=_HEADLINE_LIMIT)}"
                  for metric, note in notes] + [""]
    if c.slices is not None:
        rows = [{**r, "verdict": f"{TONE_MARKS[r['tone']]} {r['verdict']}"} for r in slice_rows(c)]
        lines += [f"#### Slices by {markdown_cell(c.by)} (Holm over slices × metrics)", "",
                  markdown_table(rows, slice_columns(c), limits={"note": _HEADLINE_LIMIT}), ""]
    if c.warnings:
        lines += ["> [!WARNING]"] + [f"> - {markdown_cell(w, limit=500)}" for w in c.warnings] + [""]
    groups = change_groups(c, _MARKDOWN_CHANGES)
    deciding = [g for g in groups if g.role == "decides"]
    for direction, title in (("regressed", "Regressed cases"), ("improved", "Improved cases")):
        chosen = [g for g in deciding if g.direction == direction]
        if not chosen:
            continue
        count = counted(c, direction, "decides")
        if direction == "improved":
            lines += ["<details>", f"<summary>{title} ({count})</summary>", ""]
        else:
            lines += [f"#### {title} ({count})", ""]
        lines += _markdown_groups(chosen)
        if direction == "improved":
            lines += ["</details>", ""]
    errored = errored_rows(c, _MARKDOWN_CHANGES)
    if errored:
        lines += [f"#### Errored cases ({errored_text(c)})", "",
                  "The target failed on these cases: their scores count as failures, not as changes.", "",
                  _case_table(errored, ERRORED_COLUMNS), ""]
        if len(c.errored) > _MARKDOWN_CHANGES:
            lines += [f"… and {len(c.errored) - _MARKDOWN_CHANGES} more errored cases", ""]
    informing = [g for g in groups if g.role == "informs"]
    if informing:
        lines += ["<details>", f"<summary>Cases moved on informing metrics, which do not decide "
                  f"({markdown_cell(informing_summary(c), limit=_HEADLINE_LIMIT)})</summary>", ""]
        lines += [*_markdown_groups(informing), "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _legend(c: Any) -> list[tuple[str, str]]:
    """(term, the rest) of each line explaining the metric table of Markdown and HTML: what ``informs`` means when
    some metric informs (:data:`INFORMS_LEGEND`), what ``↑?`` means when some direction was assumed
    (:data:`~cogeval.compare.directions.ASSUMED_LEGEND`), what ``n needed`` counts (:data:`N_NEEDED_LEGEND`)."""
    found = [INFORMS_LEGEND] if any(m.role == "informs" for m in c.metrics.values()) else []
    found += [ASSUMED_LEGEND] if any(m.direction_assumed for m in c.metrics.values()) else []
    return [(term, rest) for term, _, rest in (text.partition(": ") for text in [*found, N_NEEDED_LEGEND])]


def _markdown_clustering(c: Any) -> list[str]:
    """The paragraph under the headline of a comparison made with ``cluster=`` (none without):
    ``Clustered by **passage**: 12 clusters of 48 cases; design effect up to 4.047 (…)``."""
    clustered = clustering(c)
    if clustered is None:
        return []
    effect = f"; design effect up to {clustered.design_effect}" if clustered.design_effect else ""
    return [f"Clustered by **{markdown_cell(clustered.by)}**: {clustered.counts}{effect} ({CLUSTER_UNITS})", ""]


def _markdown_groups(groups: Sequence[Any]) -> list[str]:
    """Each group's title line and table (at most :data:`_MARKDOWN_CHANGES` rows), and how many more it has."""
    lines = []
    for g in groups:
        lines += [f"**{markdown_cell(g.metric)}** — {g.total} {g.direction}", "", _case_table(g.rows, CHANGE_COLUMNS), ""]
        if g.total > len(g.rows):
            lines += [f"… and {g.total - len(g.rows)} more {g.direction} cases", ""]
    return lines


def _case_table(rows: Sequence[Any], columns: list[str]) -> str:
    """A Markdown table of case rows over ``columns``, and each run's answer when some row has one."""
    if not has_answers(rows):
        return markdown_table(rows, columns)
    return markdown_table(rows, [*columns, *ANSWER_COLUMNS], limits=dict.fromkeys(ANSWER_COLUMNS, _MARKDOWN_ANSWER))


# --- HTML ---------------------------------------------------------------------------------


def comparison_html(comparison: Any, *, figure: bool = True, figure_html: str | None = None) -> str:
    """The HTML report: one self-contained page (inline CSS, light and dark, no URL), the page
    :func:`report_comparison` writes.

    Every value is escaped by jinja2 autoescape. Each case row shows both runs' answers and errors when the
    comparison has them (:mod:`~cogeval.present.comparison_rows`): one line of at most 200 characters, the whole
    (at most 4,000) in a ``<details>`` that opens it. Below 900 px each table row is a block (name and verdict
    first), so nothing scrolls sideways; wider, the metric and its verdict stick to the left edge. The forest plot
    (:func:`forest_plot_html`, plotly.js inline) follows the metric table; past
    :data:`FOREST_LIMIT` metrics it draws only some (:func:`forest_metrics`) and a
    sentence above it says which and why. ``figure=False`` leaves it out (a page
    with no script), and ``figure_html``, a *trusted* HTML fragment, takes its place.
    """
    c = run_comparison(comparison)
    figure_note = ""
    if figure_html is None and figure:
        figure_html, figure_note = forest_plot_html(c), forest_metrics(c)[1]
    lead, rest, tone = headline_parts(c)
    changes = change_groups(c, _HTML_CHANGES)
    errored = errored_rows(c, _HTML_CHANGES)
    return render_template(
        "comparison.html.j2",
        title=f"cogeval comparison: {run_label(c.head)} vs {run_label(c.base)}",
        lead=lead, rest=rest, tone=tone, verdict=c.verdict, roles=roles(c),
        alpha=numbers.number(c.alpha), matched=numbers.count(c.matched), added=numbers.count(c.n_added),
        removed=numbers.count(c.n_removed),
        changed=changed_text(c), errored=errored, errored_total=len(c.errored), errored_answers=has_answers(errored),
        answers=has_answers(row for g in changes for row in g.rows),
        errored_count=errored_text(c), errored_columns=ERRORED_COLUMNS, informing=informing_summary(c),
        counts={d: counted(c, d, "decides") for d in ("regressed", "improved")},
        sides=[("base", c.base), ("head", c.head)],
        columns=_html_metric_columns(c), legend=_legend(c), notes=note_rows(c), changes=changes,
        trace_columns=[k for k in ("trace", "prompt") if any(row[k] for g in changes for row in g.rows)],
        metrics=[{**_html_cells(r), "n needed": r["cases needed"]} for r in metric_rows(c)],  # clusters: in cluster_rows
        cluster_rows=[_html_cells(r) for r in metric_rows(c)] if c.cluster is not None else [],
        cluster_columns=_HTML_CLUSTER_COLUMNS,
        change_columns=CHANGE_COLUMNS, warnings=[str(w) for w in c.warnings],
        by=c.by, slices=slice_rows(c), slice_columns=slice_columns(c), clustering=clustering(c),
        cluster_units=CLUSTER_UNITS,
        figure=figure_html or None, figure_note=figure_note, version=cogeval_version(),
    )


def _html_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A metric row for the HTML tables, its cells made to wrap only where they read well: an interval before its
    ``at``, a clustered ``n needed`` before its clusters (``89`` / ``(23 clusters)``)."""
    needed, space, clusters = row["n needed"].partition(" ")
    return {**row, "interval": row["interval"].replace(", ", ",\u00a0"),
            "n needed": needed + space + clusters.replace(" ", "\u00a0")}


def forest_plot_html(comparison: Any) -> str | None:
    """The forest plot of ``comparison`` as a trusted HTML fragment for :func:`comparison_html`.

    It draws the metrics of :func:`forest_metrics` (every metric up to :data:`FOREST_LIMIT`) and
    carries the installed plotly's ``plotly.min.js`` inline (no URL, no MathJax), so the page draws
    the chart offline; ``None`` when there is no metric to draw.
    """
    comparison = run_comparison(comparison)
    drawn, _ = forest_metrics(comparison)
    if not drawn:
        return None
    from cogeval.present.notebook import figure_html
    from cogeval.present.plots import plot_comparison

    return figure_html(plot_comparison(comparison, metrics=drawn), include_plotlyjs=True)


def forest_metrics(comparison: Any) -> tuple[list[str], str]:
    """The metrics the HTML report's forest plot draws, and a sentence saying what it leaves out and why.

    Up to :data:`FOREST_LIMIT` metrics: every one, and the sentence is ``""``. Past it, one row per metric
    is too tall to read (and slow to draw), so only the deciding metrics whose verdict is ``better`` or
    ``worse`` (what the run's verdict rests on) are drawn, at most :data:`FOREST_LIMIT` of them (the smallest
    adjusted p first), in the table's order; none when no deciding metric is better or worse.
    """
    c = run_comparison(comparison)
    if len(c.metrics) <= FOREST_LIMIT:
        return [m.metric for m in ordered(c)], ""
    moved = [m for m in ordered(c) if m.role == "decides" and m.verdict in ("better", "worse")]
    kept = {m.metric for m in sorted(moved, key=lambda m: m.adjusted_p_value)[:FOREST_LIMIT]}  # stable: ties in order
    drawn = [m.metric for m in moved if m.metric in kept]
    which, total = "deciding metrics whose verdict is better or worse", f"{len(c.metrics):,}"
    if not drawn:
        shown = f"No forest plot: none of the {total} metrics is one of the {which}"
    elif len(drawn) < len(moved):
        shown = (f"The forest plot draws {len(drawn)} of the {total} metrics: of the {len(moved):,} {which}, "
                 "those with the smallest adjusted p")
    else:
        shown = f"The forest plot draws {len(drawn)} of the {total} metrics: the {which}"
    return drawn, (f"{shown}. Past {FOREST_LIMIT} metrics a forest plot of one row per metric is too tall to read; every "
                   "metric is in the table above, and plot_comparison(comparison, metrics=[...]) draws any of them.")
