"""plotly charts: what each trace holds (values, intervals, colours), escaped hover text, errors that list the choices."""

from __future__ import annotations

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest
from present_runs import SCRIPT, make_run, make_store

import cogeval
from cogeval import EvalSuite, compare_runs, exact_match
from cogeval.errors import InputError
from cogeval.present.notebook import figure_mimebundle
from cogeval.present.plots import (
    BAD,
    GOOD,
    NEUTRAL,
    plot_changes,
    plot_comparison,
    plot_history,
    plot_scores,
)
from cogeval.stats import bootstrap_ci, wilson_interval

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def no_raw_script(fig: go.Figure) -> bool:
    return "<script" not in fig.to_json()


# -- plot_comparison --------------------------------------------------------------------------------


def test_forest_plot_has_one_point_per_metric_at_its_difference_with_the_ci_as_error_bars(comparison):
    fig = plot_comparison(comparison)
    assert isinstance(fig, go.Figure) and not isinstance(fig, go.FigureWidget)
    assert [t.type for t in fig.data] == ["scatter"] * 3
    for trace, m in zip(fig.data, comparison.metrics.values()):
        assert trace.x == (m.difference,)
        assert math.isclose(m.difference + trace.error_x.array[0], m.ci.high)
        assert math.isclose(m.difference - trace.error_x.arrayminus[0], m.ci.low)
        assert trace.error_x.symmetric is False


def test_forest_plot_colours_and_legend_say_the_verdict_word(comparison):
    fig = plot_comparison(comparison)
    verdicts = [m.verdict for m in comparison.metrics.values()]
    assert verdicts == ["better", "worse", "inconclusive"]  # exact_match better, latency (lower is better) worse, quality unknown
    assert [t.marker.color for t in fig.data] == [GOOD, BAD, NEUTRAL]
    assert [t.marker.symbol for t in fig.data] == ["circle", "circle", "circle-open"]  # filled when significant
    assert [t.name for t in fig.data] == ["better", "worse", "inconclusive"]
    assert [t.showlegend for t in fig.data] == [True, True, True] and fig.layout.legend.title.text == "verdict "
    assert [t.y for t in fig.data] == [("exact_match ↑",), ("latency ↓",), ("quality ↑",)]


def test_forest_plot_rows_have_their_own_axis_a_zero_line_and_units(comparison):
    fig = plot_comparison(comparison)
    zero_lines = [s for s in fig.layout.shapes if s.x0 == 0 and s.x1 == 0]
    assert len(zero_lines) == 3
    titles = [fig.layout[f"xaxis{i if i > 1 else ''}"].title.text for i in (1, 2, 3)]
    assert titles == ["Δ exact_match", "Δ latency (s)", "Δ quality"]
    for i, m in zip((1, 2, 3), comparison.metrics.values()):
        low, high = fig.layout[f"xaxis{i if i > 1 else ''}"].range
        assert low < min(0, m.ci.low) and high > max(0, m.ci.high)
    assert fig.layout.title.text == ("head (head) vs base (base): paired difference head − base<br><sup>test-inversion "
                                     "interval at each metric's Holm level · filled: significant</sup>")
    assert "bootstrap" not in fig.layout.title.text


def test_forest_plot_hover_shows_verdict_role_interval_and_level_p_adjusted_p_n_and_mde(comparison):
    trace = plot_comparison(comparison).data[0]
    m = comparison.metrics["exact_match"]
    assert m.ci_level == 0.975 and m.mde == pytest.approx(0.3792, abs=1e-4)  # 2nd smallest p of a Holm family of 3: level 1 - alpha / 2
    assert list(trace.customdata[0]) == [
        "exact_match", m.p_value, m.adjusted_p_value, "mcnemar-exact", 20, "better", "decides",
        "[0.3041, 0.8487] at 97.5%", "0.3792", 0.2, 0.95, "better",
    ]
    for part in ("<b>%{customdata[0]}</b> · %{customdata[5]} (%{customdata[6]})", "interval %{customdata[7]}",
                 "p = %{customdata[1]", "adjusted p = %{customdata[2]", "test %{customdata[3]}",
                 "n = %{customdata[4]}", "mde %{customdata[8]}", "<br>%{customdata[11]}"):
        assert part in trace.hovertemplate
    quality = plot_comparison(comparison).data[2]
    assert quality.customdata[0][11] == ("inconclusive: not significant with 20 cases; about 742 cases would detect "
                                         "a difference this large")


def test_forest_plot_marks_informing_metrics_and_shades_the_margin(runs):
    comparison = compare_runs(*runs, seed=0, decide_on=["exact_match", "quality"], margins={"quality": 0.05})
    fig = plot_comparison(comparison)
    assert [t.y for t in fig.data] == [("exact_match ↑",), ("quality ↑",), ("latency ↓ (informs)",)]  # deciding first
    assert [t.name for t in fig.data] == ["better", "inconclusive", "worse"]
    bands = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(b.x0, b.x1, b.xref, b.layer) for b in bands] == [(-0.05, 0.05, "x2", "below")]
    low, high = fig.layout.xaxis2.range
    assert low < -0.05 - 0.01 and high > 0.05  # the band fits in its row
    assert fig.layout.title.text.endswith(" · filled: significant · shaded: ±margin</sup>")


def test_forest_plot_copes_with_infinite_and_nan_intervals():
    import dataclasses

    import pandas as pd

    from cogeval import EvalRun, Interval
    from cogeval.present.plots import _padded_range

    def run(scores):
        return EvalRun.from_frame(pd.DataFrame({"input": list("abc"), "q": scores}))

    comparison = compare_runs(run([0.1, 0.2, 0.3]), run([0.3, 0.5, 0.4]), test="wilcoxon", seed=0)
    m = comparison.metrics["q"]
    assert m.test == "wilcoxon" and math.isinf(m.ci.high)  # 3 pairs: no Wilcoxon interval is narrow enough
    for ci, shown in (((-math.inf, math.inf), "[-inf, inf] at 95%"), ((0.0, math.inf), "[0, inf] at 95%")):
        wide = dataclasses.replace(m, ci=Interval(*ci))
        fig = plot_comparison(dataclasses.replace(comparison, metrics={"q": wide}))
        low, high = fig.layout.xaxis.range
        assert math.isfinite(low) and math.isfinite(high) and low < 0 < m.difference < high
        bar = fig.data[0].error_x
        assert math.isclose(m.difference + bar.array[0], high)  # runs to the edge of the axis
        assert math.isclose(m.difference - bar.arrayminus[0], low if math.isinf(ci[0]) else ci[0])
        assert bar.width == 0  # no end caps: the interval runs off the axis
        assert fig.data[0].customdata[0][7] == shown
        json.loads(fig.to_json())

    nan = dataclasses.replace(m, difference=math.nan, ci=Interval(math.nan, math.nan), mde=math.nan)
    fig = plot_comparison(dataclasses.replace(comparison, metrics={"q": nan}))
    assert fig.layout.xaxis.range == (-0.15, 0.15)  # only the zero line to show
    assert (fig.data[0].error_x.array, fig.data[0].error_x.arrayminus) == ((0.0,), (0.0,))
    assert fig.data[0].customdata[0][7:9] == ["–", "–"]
    assert _padded_range([math.nan, math.inf, -math.inf]) == [-1.0, 1.0]
    assert _padded_range([-math.inf, 0.0, 2.0, math.nan]) == [-0.3, 2.3]


def test_forest_plot_escapes_metric_and_run_names():
    import pandas as pd

    from cogeval import EvalRun

    def run(scores, name):
        return EvalRun.from_frame(pd.DataFrame({"input": list("abcdef"), "<b>m</b>": scores}), name=name)

    fig = plot_comparison(compare_runs(run([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], SCRIPT), run([0.2] * 6, "h"), seed=0))
    assert fig.data[0].y == ("&lt;b&gt;m&lt;/b&gt; ↑",) and fig.data[0].customdata[0][0] == "&lt;b&gt;m&lt;/b&gt;"
    assert ESCAPED in fig.layout.title.text and no_raw_script(fig)


def test_forest_plot_takes_a_comparison_result_and_refuses_anything_else(comparison):
    with pytest.raises(InputError, match="comparison must be a RunComparison"):
        plot_comparison({"metrics": {}})
    data = [{"input": str(i), "expected": str(i)} for i in range(1, 13)]
    result = cogeval.EvalComparison(data, targets={"baseline": lambda q: "0", "challenger": lambda q: q},
                                    metrics=[exact_match()], progress=False, seed=0).run()
    assert plot_comparison(result).data[0].x == (1.0,)
    assert result.plot().data[0].marker.color == GOOD and result.plot().data[0].name == "better"


# -- plot_changes ---------------------------------------------------------------------------------


def test_changes_plot_puts_each_changed_case_at_base_head(comparison):
    fig = plot_changes(comparison, "quality")
    improved, regressed, diagonal = fig.data
    changes = comparison.changes[comparison.changes["metric"] == "quality"]
    for trace, direction, colour in ((improved, "improved", GOOD), (regressed, "regressed", BAD)):
        part = changes[changes["direction"] == direction]
        assert trace.type == "scatter" and trace.marker.color == colour
        assert list(trace.x) == part["base"].tolist() and list(trace.y) == part["head"].tolist()
        assert trace.name == f"{direction} ({len(part)})"
    assert list(diagonal.x) == list(diagonal.y) and diagonal.mode == "lines"
    assert "9 improved, 11 regressed, 0 unchanged (not drawn) of 20 paired cases" in fig.layout.title.text
    assert fig.layout.xaxis.title.text == "base · base · quality" and fig.layout.yaxis.title.text == "head · head · quality"


def test_changes_plot_hover_shows_the_escaped_input(comparison):
    fig = plot_changes(comparison, "quality")
    inputs = [row[1] for row in fig.data[1].customdata]  # regressed
    assert f"{ESCAPED} question 0" in inputs
    assert "%{customdata[1]}" in fig.data[1].hovertemplate and no_raw_script(fig)


def test_changes_plot_spreads_0_1_points_but_keeps_true_values_in_hover(comparison):
    fig = plot_changes(comparison, "exact_match")
    improved = fig.data[0]
    assert len(improved.x) == 16
    assert np.all(np.abs(np.array(improved.x) - 0) <= 0.08) and np.all(np.abs(np.array(improved.y) - 1) <= 0.08)
    assert {(row[2], row[3]) for row in improved.customdata} == {(0.0, 1.0)}
    again = plot_changes(comparison, "exact_match")
    assert list(again.data[0].x) == list(improved.x)  # seeded
    assert list(plot_changes(comparison, "exact_match", jitter=0).data[0].x) == [0.0] * 16


def test_changes_plot_units_and_unknown_metric(comparison):
    assert plot_changes(comparison, "latency").layout.xaxis.title.text == "base · base · latency (s)"
    with pytest.raises(InputError) as error:
        plot_changes(comparison, "accuracy")
    assert str(error.value) == "metric 'accuracy' is not in the comparison; its metrics are 'exact_match', 'latency', 'quality'"


# -- plot_scores ----------------------------------------------------------------------------------


def test_scores_of_a_binary_metric_are_pass_rate_bars_with_wilson_intervals(runs):
    fig = plot_scores({"v1": runs[0], "v2": runs[1]}, "exact_match")
    (bar,) = fig.data
    assert bar.type == "bar" and bar.x == ("v1", "v2") and bar.y == (0.2, 0.95)
    for i, (successes, rate) in enumerate(((4, 0.2), (19, 0.95))):
        low, high = wilson_interval(successes, 20)
        assert math.isclose(rate + bar.error_y.array[i], high) and math.isclose(rate - bar.error_y.arrayminus[i], low)
    assert bar.text == ("4/20", "19/20")
    assert "Wilson" in fig.layout.title.text and fig.layout.yaxis.title.text == "pass rate of exact_match ↑"


def test_scores_of_other_metrics_are_boxes_side_by_side(runs, tmp_path):
    path = runs[1].save(tmp_path / "head.json")
    fig = plot_scores([runs[0], str(path)], "latency")
    assert [t.type for t in fig.data] == ["box", "box"] and [t.name for t in fig.data] == ["base", "head"]
    assert list(fig.data[0].y) == runs[0].to_frame()["latency"].tolist()
    assert fig.layout.yaxis.title.text == "latency ↓ (s)" and fig.layout.title.text == "latency ↓: scores per run"


def test_scores_of_one_run_a_suite_result_and_repeated_names(runs):
    assert len(plot_scores(runs[0], "quality").data) == 1
    assert runs[0].plot("quality").data[0].name == "base"
    same = plot_scores([runs[0], runs[0]], "quality")
    assert [t.name for t in same.data] == ["base", f"base · {runs[0].run_id}"]
    result = EvalSuite([{"input": "1", "expected": "1"}, {"input": "2", "expected": "3"}], lambda q: q,
                       metrics=[exact_match()], progress=False, name=SCRIPT).run()
    fig = result.plot("exact_match")
    assert fig.data[0].y == (0.5,) and fig.data[0].x == (ESCAPED,) and no_raw_script(fig)


def test_scores_name_the_run_without_the_metric(runs):
    with pytest.raises(InputError) as error:
        plot_scores({"v1": runs[0]}, "accuracy")
    assert str(error.value) == "metric 'accuracy' is not in run 'v1'; its metrics are 'exact_match', 'latency', 'quality'"
    with pytest.raises(InputError, match="at least one run"):
        plot_scores([], "quality")
    with pytest.raises(InputError, match=r"runs\[0\] must be an EvalRun"):
        plot_scores([42], "quality")


# -- plot_history ---------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path / "runs")


def test_history_points_are_ordered_by_time_and_filtered_by_name(store):
    fig = plot_history(store, "quality", name="nightly")
    (trace,) = fig.data
    assert trace.type == "scatter" and trace.name == "nightly"
    assert [x.day for x in trace.x] == [1, 2, 3]  # saved as days 3, 1, 2
    base = make_run("base").to_frame()["quality"].to_numpy()
    assert np.allclose(trace.y, [base.mean(), base.mean() + 0.1, base.mean() + 0.2])
    for i, bump in enumerate((0.0, 0.1, 0.2)):
        low, high = bootstrap_ci(base + bump, seed=0)
        assert math.isclose(trace.y[i] + trace.error_y.array[i], high) and math.isclose(trace.y[i] - trace.error_y.arrayminus[i], low)
    assert [row[0] for row in trace.customdata] == [f"2026010{d}T080000000Z-0000000{d}" for d in (1, 2, 3)]
    assert fig.layout.xaxis.title.text == "run started at (UTC)" and "bootstrap CI" in fig.layout.title.text


def test_history_without_a_name_draws_one_line_per_run_name_and_binary_uses_wilson(store):
    fig = plot_history(store, "exact_match")
    assert sorted(t.name for t in fig.data) == ["adhoc", "head", "nightly"]
    head = next(t for t in fig.data if t.name == "head")
    _low, high = wilson_interval(19, 20)
    assert head.y == (0.95,) and math.isclose(0.95 + head.error_y.array[0], high)
    assert "Wilson" in fig.layout.title.text and fig.layout.yaxis.title.text == "pass rate of exact_match ↑"
    assert plot_history(store.path, "latency").layout.yaxis.title.text == "mean latency ↓ (s)"  # a folder works too


def test_history_errors_list_the_names_and_metrics(store):
    with pytest.raises(InputError) as error:
        plot_history(store, "quality", name="weekly")
    assert str(error.value) == f"no run named 'weekly' in {store.path}; the run names there are 'head', 'adhoc', 'nightly'"
    with pytest.raises(InputError) as error:
        plot_history(store, "accuracy")
    assert str(error.value) == "metric 'accuracy' has no score in the runs; their metrics are 'exact_match', 'latency', 'quality'"
    with pytest.raises(InputError, match="store must be a RunStore"):
        plot_history(42, "quality")


def test_history_escapes_run_names(tmp_path):
    store = cogeval.RunStore(tmp_path)
    store.save(make_run("base", name=SCRIPT))
    fig = store.plot("quality")
    assert fig.data[0].name == ESCAPED and fig.data[0].customdata[0][4] == ESCAPED and no_raw_script(fig)


def test_quotes_in_case_text_show_as_quotes_not_entities():
    # plotly.js decodes &lt; &gt; &amp; and numeric entities in labels and hover text, but not &quot;:
    # an input such as: what does "foo" mean? must not show as &quot;foo&quot;
    import pandas as pd

    from cogeval import EvalRun

    def run(scores, name):
        inputs = [f'say "{i}" & <b>{i}</b>' for i in range(4)]
        return EvalRun.from_frame(pd.DataFrame({"input": inputs, 'q "x"': scores}), name=name)

    comparison = compare_runs(run([0.1, 0.2, 0.3, 0.4], 'run "a"'), run([0.3, 0.1, 0.5, 0.4], "b"), seed=0)
    changes = plot_changes(comparison, 'q "x"')
    assert changes.data[0].customdata[0][1] == 'say "0" &amp; &lt;b&gt;0&lt;/b&gt;'
    forest = plot_comparison(comparison)
    assert forest.data[0].y == ('q "x" ↑',) and 'run "a" (base)' in forest.layout.title.text
    scores = plot_scores({'run "a"': run([1.0, 0.5, 0.25, 0.0], "x")}, 'q "x"')
    assert scores.data[0].name == 'run "a"'
    for fig in (changes, forest, scores):
        assert "&quot;" not in fig.to_json() and no_raw_script(fig)


# -- display bundle and lazy names -----------------------------------------------------------------


def test_figure_bundle_has_plotly_json_and_html_without_plotly_js(comparison):
    fig = plot_comparison(comparison)
    bundle = figure_mimebundle(fig)
    assert set(bundle) == {"application/vnd.plotly.v1+json", "text/html", "text/plain"}
    assert bundle["application/vnd.plotly.v1+json"]["data"][0]["x"] == [comparison.metrics["exact_match"].difference]
    json.dumps(bundle)  # widget state must be JSON
    html = bundle["text/html"]
    assert "Plotly.newPlot" in html and "<script src" not in html and "mathjax" not in html.lower()
    assert len(html) < 50_000  # plotly.js itself is not inside


def test_plot_functions_are_lazy_top_level_names():
    assert cogeval.plot_comparison is plot_comparison and cogeval.plot_history is plot_history
    assert {"plot_changes", "plot_comparison", "plot_history", "plot_scores"} <= set(cogeval.__all__)
