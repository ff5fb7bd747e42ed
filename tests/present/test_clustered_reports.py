"""Every report of a comparison made with ``cluster=`` says so: by what, how many clusters, the design effect.

Under the headline each report has one line (``Clustered by passage: 12 clusters of 48 cases; design effect up to
4.099 (whole clusters are the independent units of the tests and intervals)``); per metric, the console's wide
table, the Markdown table and the HTML page's table of clusters give its ``clusters`` and ``design effect``, and
``n needed`` also in clusters (``1,757 (440 clusters)``), as the notes and the headline do (``about 1,757 cases
(440 clusters)``). Numbers as :mod:`cogeval._numbers` writes them. A comparison without ``cluster=`` keeps its
reports as they were (the other tests of ``tests/present`` and ``tests/test_console_width.py``).
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len

from cogeval import EvalRun, compare_frames, compare_runs
from cogeval._numbers import count, number
from cogeval.errors import InputError
from cogeval.present.comparison_report import comparison_html, comparison_markdown, report_comparison
from cogeval.present.comparison_rows import METRIC_COLUMNS, metric_columns, ordered
from cogeval.present.slices import SLICE_COLUMNS, slice_columns

UNITS = "(whole clusters are the independent units of the tests and intervals)"


UP = {"exact_match": True, "quality": True}
"""Both metrics are higher-is-better."""


def passages_frame(shift: float, seed: int, passages: int = 12, questions: int = 4) -> pd.DataFrame:
    """``passages`` × ``questions`` cases of two versions (``v1``, ``v2``) in one tidy frame: a graded ``quality``
    and a 0/1 ``exact_match``; the questions of a passage move together (each passage its own shift), so the
    design effect is well above 1."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(passages):
        effect = shift + rng.normal(0, 0.3)
        for q in range(questions):
            base = float(np.clip(rng.normal(0.5, 0.15), 0, 1))
            head = float(np.clip(base + effect + rng.normal(0, 0.05), 0, 1))
            right = int(rng.random() < 0.5)
            key = {"id": f"p{p:02d}-q{q}", "passage": f"p{p:02d}"}
            rows += [{"version": "v1", **key, "quality": base, "exact_match": right},
                     {"version": "v2", **key, "quality": head,
                      "exact_match": int(rng.random() < float(np.clip(0.5 + effect, 0, 1)))}]
    return pd.DataFrame(rows)


def clustered(shift: float = 0.0, seed: int = 1, **options):
    return compare_frames(passages_frame(shift, seed), by="version", base="v1", head="v2", case="id",
                          cluster="passage", directions=UP, **options)


@pytest.fixture(scope="module")
def inconclusive():
    """Both metrics inconclusive: the headline and the notes say how many cases, and clusters, would settle it."""
    return clustered(0.0, 1)


@pytest.fixture(scope="module")
def better():
    """Both metrics better, exact_match fragile (2 clusters)."""
    return clustered(0.3, 1)


def largest_effect(comparison) -> str:
    return number(max(m.design_effect for m in comparison.metrics.values() if m.role == "decides"))


def cluster_line(comparison) -> str:
    return (f"Clustered by passage: {count(comparison.clusters)} clusters of {count(comparison.matched)} cases; "
            f"design effect up to {largest_effect(comparison)} {UNITS}")


def words(text: str) -> str:
    """``text`` with its lines joined and its blanks made one: a line wrapped at 80 columns reads whole."""
    return " ".join(text.split())


def console(comparison, capsys, monkeypatch, columns: int = 80, wide: bool = False) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    report_comparison(comparison, "console", wide=wide)
    return capsys.readouterr().out


def test_the_made_up_comparisons_are_clustered_as_meant(inconclusive, better):
    for comparison in (inconclusive, better):
        assert (comparison.cluster, comparison.clusters, comparison.matched) == ("passage", 12, 48)
        assert {m.test for m in comparison.metrics.values()} <= {"clustered-t", "clustered-mcnemar",
                                                                   "clustered-mcnemar-exact"}
        assert all(m.clusters == 12 and m.design_effect > 1 for m in comparison.metrics.values())
    assert [m.verdict for m in inconclusive.metrics.values()] == ["inconclusive", "inconclusive"]
    assert all(m.n_needed >= 1000 and m.clusters_needed for m in inconclusive.metrics.values())  # 1,234: thousands
    assert better.verdict == "better" and better.metrics["exact_match"].fragility == 2


# --- console -----------------------------------------------------------------------------------


def test_console_at_80_columns_says_clustered_by_what_how_many_and_the_design_effect(inconclusive, capsys,
                                                                                      monkeypatch):
    out = console(inconclusive, capsys, monkeypatch)
    lines = out.splitlines()
    assert max(map(cell_len, lines)) <= 80
    start = next(n for n, line in enumerate(lines) if line.startswith("Clustered by passage: "))
    assert lines[start - 1].strip().endswith(f"design effect up to {largest_effect(inconclusive)}")  # the headline's end
    assert words(" ".join(lines[start:start + 2])) == cluster_line(inconclusive)  # under the headline, wrapped
    # the table leaves its design effect column out at 80 columns: each metric's is on a line of its own
    effects = ", ".join(f"{m.metric} {number(m.design_effect)}" for m in ordered(inconclusive))
    assert f"design effect: {effects}" in words(out)
    for m in inconclusive.metrics.values():  # the notes count clusters too
        assert (f"{m.metric} — inconclusive: not significant with 48 cases (12 clusters); about {count(m.n_needed)} "
                f"cases ({count(m.clusters_needed)} clusters) would detect a difference this large") in words(out)
    closest = min(inconclusive.metrics.values(), key=lambda m: m.n_needed)
    assert words(out).startswith(f"inconclusive: no deciding metric is shown better, worse or equivalent; about "
                                 f"{count(closest.n_needed)} cases ({count(closest.clusters_needed)} clusters) would "
                                 "settle the closest one")


def test_console_wide_has_a_clusters_and_a_design_effect_column(inconclusive, capsys, monkeypatch):
    lines = console(inconclusive, capsys, monkeypatch, wide=True).splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert re.split(r"\s{2,}", header.strip()) == metric_columns(inconclusive)
    assert metric_columns(inconclusive) == [*METRIC_COLUMNS[:5], "clusters", *METRIC_COLUMNS[5:8], "design effect",
                                            *METRIC_COLUMNS[8:]]
    for m in inconclusive.metrics.values():
        [row] = [line for line in lines if line.startswith(f"{m.metric} ↑ ")]
        cells = re.split(r"\s{2,}", row.strip())
        assert cells[metric_columns(inconclusive).index("clusters")] == "12"
        assert cells[metric_columns(inconclusive).index("design effect")] == number(m.design_effect)
        assert cells[-2] == f"{count(m.n_needed)} ({count(m.clusters_needed)} clusters)"  # n needed, then fragility
    assert not any(line.startswith("design effect: ") for line in lines)  # the columns say it
    assert cluster_line(inconclusive) in lines  # one line: no width limit


def test_console_brief_form_says_it_too(better, capsys, monkeypatch):
    from cogeval.present.comparison_console import print_console

    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    print_console(better, brief=True)  # what cogeval demo prints
    assert cluster_line(better) in words(capsys.readouterr().out)


# --- Markdown and HTML -------------------------------------------------------------------------


def test_markdown_says_it_under_the_headline_and_per_metric(inconclusive):
    lines = comparison_markdown(inconclusive).splitlines()
    assert lines[2].startswith("⚪ **inconclusive**")
    assert lines[4] == cluster_line(inconclusive).replace("by passage", "by **passage**")
    header = next(line for line in lines if line.startswith("| metric | role |"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns == metric_columns(inconclusive)
    for m in inconclusive.metrics.values():
        [row] = [line for line in lines if line.startswith(f"| {m.metric.replace('_', chr(92) + '_')} ↑ |")]
        cells = dict(zip(columns, (cell.strip() for cell in row.strip("|").split("|")), strict=True))
        assert (cells["n"], cells["clusters"], cells["design effect"]) == ("48", "12", number(m.design_effect))
        assert cells["n needed"] == f"{count(m.n_needed)} ({count(m.clusters_needed)} clusters)"
        assert cells["test"] == m.test
        note = f"about {count(m.n_needed)} cases ({count(m.clusters_needed)} clusters) would detect"
        assert any(line.startswith(f"- **{m.metric.replace('_', chr(92) + '_')}**") and note in line for line in lines)


def test_markdown_counts_fragility_in_clusters(better):
    text = comparison_markdown(better)
    assert "| 2 clusters (fragile) |" in text
    assert cluster_line(better).replace("by passage", "by **passage**") in text.splitlines()


def test_html_says_it_under_the_headline_and_in_a_table_of_clusters(inconclusive):
    page = comparison_html(inconclusive, figure=False)
    [line] = re.findall(r'<p class="facts clustered">(.*?)</p>', page)
    assert re.sub(r"</?b>", "", line) == cluster_line(inconclusive)
    assert page.index('<p class="verdict') < page.index('<p class="facts clustered">') < page.index('<section class="runs">')
    table = page[page.index('<table class="clusters stack">'):]
    table = table[:table.index("</table>")]
    assert re.findall(r"<th[^>]*>([^<]*)</th>", table) == ["metric", "clusters", "design effect", "n needed"]
    for m in ordered(inconclusive):
        cells = f'<td class="t">{m.metric} ↑</td><td data-label="clusters">12</td>' \
                f'<td data-label="design effect">{number(m.design_effect)}</td>' \
                f'<td data-label="n needed" class="needed">{count(m.n_needed)} ' \
                f'({count(m.clusters_needed)}\u00a0clusters)</td>'
        assert cells in html.unescape(table)
    # the metric table keeps the columns it has without cluster= (its clusters are in the table above) ...
    metrics = page[page.index('<table class="metrics stack">'):]
    header = re.findall(r"<th[^>]*>([^<]*)</th>", metrics[:metrics.index("</thead>")])
    assert "clusters" not in header and "design effect" not in header and "n needed" in header
    # ... and the notes count clusters
    assert "not significant with 48 cases (12 clusters)" in page


def test_html_of_a_comparison_without_cluster_has_none_of_it():
    plain = compare_frames(passages_frame(0.0, 1), by="version", base="v1", head="v2", case="id", directions=UP)
    assert plain.cluster is None and plain.clusters is None
    assert metric_columns(plain) == METRIC_COLUMNS and slice_columns(plain) == SLICE_COLUMNS
    page, text = comparison_html(plain, figure=False), comparison_markdown(plain)
    assert "Clustered by" not in page and "Clustered by" not in text
    assert "| metric | role | base | head | n | difference |" in text and "(fragile)" not in text
    assert "<th>clusters</th>" not in page and "table.clusters" not in page and "td.needed" not in page
    # the warning names the field that clusters the cases (compare with cluster='passage')
    assert any("cluster='passage'" in w for w in plain.warnings)


def test_a_cluster_field_of_markup_is_text_in_every_report():
    frame = passages_frame(0.0, 1).rename(columns={"passage": "<b>pass|age</b>_x"})
    comparison = compare_frames(frame, by="version", base="v1", head="v2", case="id", cluster="<b>pass|age</b>_x",
                                directions=UP)
    assert "Clustered by **&lt;b&gt;pass\\|age&lt;/b&gt;\\_x**: 12 clusters" in comparison_markdown(comparison)
    page = comparison_html(comparison, figure=False)
    assert "Clustered by <b>&lt;b&gt;pass|age&lt;/b&gt;_x</b>: 12 clusters" in page
    assert "<b>pass" not in page


# --- runs (EvalRun.from_frame keeps the passage as case metadata), slices, JSON -----------------------


@pytest.fixture(scope="module")
def runs():
    """Two runs of 16 passages × 4 questions whose ``passage`` and ``topic`` are case metadata: head better on
    history, worse on science (8 passages each: with fewer, no slice's exact cluster test could reach p < 0.05
    after Holm)."""
    rng = np.random.default_rng(0)
    passages = [f"passage-{p:02d}" for p in range(16) for _ in range(4)]
    topics = ["history" if int(p[-2:]) % 2 else "science" for p in passages]
    shift = {p: (0.45 if int(p[-2:]) % 2 else -0.45) + rng.normal(0, 0.1) for p in sorted(set(passages))}
    base = (rng.random(64) < 0.5).astype(float)
    head = np.array([float(rng.random() < float(np.clip(0.5 + shift[p], 0, 1))) for p in passages])
    inputs = [f"question {i} on {p}" for i, p in enumerate(passages)]
    return tuple(EvalRun.from_frame(pd.DataFrame({"input": inputs, "passage": passages, "topic": topics,
                                                  "exact_match": scores}), name=name,
                                    directions={"exact_match": True},
                                    started_at=f"2026-01-0{day}T00:00:00Z")
                 for name, scores, day in (("v1", base, 1), ("v2", head, 2)))


def test_from_frame_keeps_the_passage_as_case_metadata(runs):
    assert runs[0].results[0].case.metadata == {"passage": "passage-00", "topic": "science"}


def test_compare_runs_clustered_and_sliced(runs, capsys, monkeypatch):
    comparison = compare_runs(*runs, cluster="passage", by="topic", seed=0)
    assert (comparison.cluster, comparison.clusters) == ("passage", 16)
    text = comparison_markdown(comparison)
    assert cluster_line(comparison).replace("by passage", "by **passage**") in text.splitlines()
    header = next(line for line in text.splitlines() if line.startswith("| slice |"))
    assert [cell.strip() for cell in header.strip("|").split("|")] == slice_columns(comparison)
    assert slice_columns(comparison) == [*SLICE_COLUMNS[:3], "clusters", *SLICE_COLUMNS[3:]]
    for row in comparison.slices.itertuples():
        assert f"| {row.slice} | exact\\_match ↑ | {count(row.n)} | {count(row.clusters)} |" in text
    out = words(console(comparison, capsys, monkeypatch))
    worse = comparison.slices[comparison.slices["verdict"] == "worse"]
    assert len(worse) == 1  # science, 8 of the 16 passages
    [science] = worse.itertuples()
    assert f"worse in science ({count(science.n)} cases in {count(science.clusters)} clusters): exact_match" in out
    assert cluster_line(comparison) in out
    page = comparison_html(comparison, figure=False)
    slices = page[page.index('<table class="metrics slices stack">'):]
    assert re.findall(r"<th[^>]*>([^<]*)</th>", slices[:slices.index("</thead>")])[:4] == [
        "slice", "metric", "n", "clusters"]


def test_a_comparison_has_no_json_or_ci_report_of_its_own(inconclusive, tmp_path):
    """Its JSON is ``cogeval compare --format json`` (tests/test_cli_cluster.py), which carries ``cluster`` and
    ``clusters``; a CI report (annotations) is a suite result's, which holds no comparison."""
    for kind in ("json", "ci"):
        with pytest.raises(InputError, match=f"kind must be one of 'console', 'markdown', 'html'; got '{kind}'"):
            report_comparison(inconclusive, kind, tmp_path / "report")


def test_the_to_frame_columns_the_reports_format(inconclusive):
    frame = inconclusive.to_frame().set_index("metric")
    for m in inconclusive.metrics.values():
        row = frame.loc[m.metric]
        assert (row["clusters"], row["clusters_needed"]) == (m.clusters, m.clusters_needed)
        assert math.isclose(row["design_effect"], m.design_effect)
