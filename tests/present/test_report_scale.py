"""Reports of a comparison of 1,000 metrics: one forest figure of the metrics that moved, every metric in the table,
and a sentence saying what the figure leaves out and why (issue 24 item 9). No timing here: see
``benchmarks/bench_report_scale.py``."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, InputError, compare_runs
from cogeval.present.comparison_console import print_console
from cogeval.present.comparison_report import FOREST_LIMIT, comparison_html, comparison_markdown, forest_metrics
from cogeval.present.comparison_rows import change_groups
from cogeval.present.plots import plot_comparison

CASES, METRICS, MOVED = 80, 1000, 60
NAMES = [f"m{i:04d}" for i in range(METRICS)]
WHY = (f"Past {FOREST_LIMIT} metrics a forest plot of one row per metric is too tall to read; every metric is in the "
       "table above, and plot_comparison(comparison, metrics=[...]) draws any of them.")


def runs(metrics: int = METRICS, moved: int = MOVED) -> tuple[EvalRun, EvalRun]:
    """Two runs of :data:`CASES` cases. Metric ``i < moved`` is 0/1 and goes 0 → 1 on its first ``21 + i`` cases
    (exact McNemar p = 2 · 0.5^(21 + i): the later the metric, the smaller its p, none tied); every other metric is
    the same continuous noise in both runs but for case 0 (a tiny move, never significant)."""
    rng = np.random.default_rng(0)
    base = {"case_key": [f"case-{k}" for k in range(CASES)], "input": [f"question {k}" for k in range(CASES)]}
    head = dict(base)
    for i, name in enumerate(NAMES[:metrics]):
        if i < moved:
            base[name] = np.zeros(CASES)
            head[name] = (np.arange(CASES) < 21 + i).astype(float)
        else:
            base[name] = rng.normal(0, 1, CASES)
            head[name] = base[name] + np.where(np.arange(CASES) == 0, 0.5, 0.0)
    up = dict.fromkeys(NAMES[:metrics], True)
    return (EvalRun.from_frame(pd.DataFrame(base), name="base", directions=up),
            EvalRun.from_frame(pd.DataFrame(head), name="head", directions=up))


@pytest.fixture(scope="module")
def pair():
    return runs()


@pytest.fixture(scope="module")
def comparison(pair):
    return compare_runs(*pair, seed=0)


@pytest.fixture(scope="module")
def informing(pair):
    """Half the metrics decide: 5 of them moved, 5 did not, and the 490 others did not either."""
    return compare_runs(*pair, seed=0, decide_on=[*NAMES[:5], *NAMES[500:505]])


@pytest.fixture(scope="module")
def page(comparison):
    return comparison_html(comparison)


def figures(html: str) -> list[tuple[list, dict]]:
    """(data, layout) of each ``Plotly.newPlot`` call of a page."""
    found, decoder = [], json.JSONDecoder()
    for call in re.finditer(r'Plotly\.newPlot\(\s*"[^"]+",\s*', html):
        data, end = decoder.raw_decode(html, call.end())
        layout, _ = decoder.raw_decode(html, re.compile(r",\s*").match(html, end).end())
        found.append((data, layout))
    return found


def figure_note(html: str) -> str:
    return re.search(r'<p class="more figure-note">(.*?)</p>', html).group(1)


def test_a_1000_metric_report_holds_one_forest_figure_of_the_40_moved_metrics_with_the_smallest_p(comparison, page):
    assert [m.verdict for m in comparison.metrics.values()].count("better") == MOVED
    assert page.count('class="plotly-graph-div"') == 1 and page.count("window.Plotly = Plotly") == 1
    [(data, layout)] = figures(page)
    kept = NAMES[MOVED - FOREST_LIMIT:MOVED]  # the most discordant cases: the smallest p, in the table's order
    assert [trace["y"][0] for trace in data] == [f"{name} ↑" for name in kept]
    assert {trace["name"] for trace in data} == {"better"}
    assert layout["height"] == 160 + 110 * FOREST_LIMIT and f"xaxis{FOREST_LIMIT + 1}" not in layout
    assert len(layout["shapes"]) == FOREST_LIMIT  # one zero line per row


def test_a_1000_metric_report_names_every_metric_in_its_table_and_says_what_the_figure_left_out(page):
    table = re.search(r'<table class="metrics stack">(.*?)</table>', page, re.S).group(1)
    assert re.findall(r'<td class="t">(m\d{4}) ↑</td>', table) == NAMES  # deciding metrics, the comparison's order
    assert figure_note(page) == ("The forest plot draws 40 of the 1,000 metrics: of the 60 deciding metrics whose "
                                 "verdict is better or worse, those with the smallest adjusted p. " + WHY)
    assert page.index("</table>") < page.index("figure-note") < page.index('class="plotly-graph-div"')


def test_informing_metrics_are_not_drawn_past_the_limit_and_all_moved_deciding_ones_are(informing):
    comparison = informing  # 5 deciding metrics moved, 5 did not; 55 informing metrics moved
    assert forest_metrics(comparison) == (NAMES[:5], "The forest plot draws 5 of the 1,000 metrics: the deciding "
                                                      "metrics whose verdict is better or worse. " + WHY)
    [(data, _)] = figures(comparison_html(comparison))
    assert [trace["y"][0] for trace in data] == [f"{name} ↑" for name in NAMES[:5]]


def test_past_the_limit_with_no_moved_deciding_metric_the_report_has_no_figure_and_says_why():
    comparison = compare_runs(*runs(metrics=FOREST_LIMIT + 1, moved=0), seed=0)
    page = comparison_html(comparison)
    assert figures(page) == [] and "<script" not in page
    assert figure_note(page) == ("No forest plot: none of the 41 metrics is one of the deciding metrics whose verdict "
                                 "is better or worse. " + WHY)
    assert forest_metrics(comparison) == ([], figure_note(page))


def test_up_to_the_limit_every_metric_is_drawn_and_nothing_is_said():
    comparison = compare_runs(*runs(metrics=FOREST_LIMIT, moved=2), seed=0)
    page = comparison_html(comparison)
    assert forest_metrics(comparison) == (NAMES[:FOREST_LIMIT], "")
    [(data, _)] = figures(page)
    assert [trace["y"][0] for trace in data] == [f"{name} ↑" for name in NAMES[:FOREST_LIMIT]]
    assert "figure-note" not in page


def test_no_figure_no_note_when_the_figure_is_left_out_or_replaced(comparison):
    for page in (comparison_html(comparison, figure=False), comparison_html(comparison, figure_html="<i>mine</i>")):
        assert "figure-note" not in page and figures(page) == []


def test_plot_comparison_draws_the_named_metrics_in_the_forest_order_and_names_an_unknown_one(comparison):
    fig = plot_comparison(comparison, metrics=["m0999", "m0003"])
    assert [t.y for t in fig.data] == [("m0003 ↑",), ("m0999 ↑",)]
    assert [fig.layout[axis].title.text for axis in ("xaxis", "xaxis2")] == ["Δ m0003", "Δ m0999"]
    with pytest.raises(InputError) as error:
        plot_comparison(comparison, metrics=["m0001", "nope"])
    assert str(error.value).startswith("metric 'nope' is not in the comparison; metrics must name compared metrics, "
                                       "which are 'm0000', 'm0001', ")
    with pytest.raises(InputError, match=r"^metrics is empty; metrics must name compared metrics, which are 'm0000'"):
        plot_comparison(comparison, metrics=[])


def test_change_groups_at_scale_are_the_rows_of_each_metric_and_direction(informing):
    comparison, moved = informing, {}
    for row in comparison.changes.to_dict("records"):  # in the table's order: largest move first per metric
        moved.setdefault((row["metric"], row["direction"]), []).append(row["case_key"])
    expected = [(name, direction, role, len(keys), keys[:3])
                for role in ("decides", "informs") for direction in ("regressed", "improved")
                for name, m in comparison.metrics.items()
                if m.role == role and (keys := moved.get((name, direction)))]
    got = [(g.metric, g.direction, g.role, g.total, [row["key"] for row in g.rows]) for g in change_groups(comparison, 3)]
    assert got == expected and len(got) == METRICS  # each metric moved some cases one way


def test_markdown_and_console_reports_of_1000_metrics_name_every_metric(comparison):
    markdown = comparison_markdown(comparison)
    assert re.findall(r"^\| (m\d{4}) ↑ \|", markdown, re.M) == NAMES
    with redirect_stdout(io.StringIO()) as out:
        print_console(comparison, wide=True)
    assert re.findall(r"^(m\d{4}) ↑ ", out.getvalue(), re.M) == NAMES  # issue 25: no blank edge before the name
