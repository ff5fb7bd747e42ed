"""ipywidgets explorers, driven through their traits without a browser (see NOTEBOOKS.md)."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest
from present_runs import SCRIPT, make_run, make_store

import cogeval
from cogeval import EvalComparison, RunStore, exact_match
from cogeval.errors import InputError
from cogeval.present.widgets import CaseExplorer, RunExplorer, case_explorer, run_explorer

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
PLOTLY = "application/vnd.plotly.v1+json"


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path / "runs")


def chart_x(explorer: RunExplorer) -> list[float]:
    (output,) = explorer.chart.outputs
    return [trace["x"][0] for trace in output["data"][PLOTLY]["data"]]


# -- run explorer ---------------------------------------------------------------------------------


def test_run_explorer_starts_on_the_two_newest_runs(store):
    explorer = run_explorer(store)
    assert isinstance(explorer, widgets.VBox) and isinstance(explorer, RunExplorer)
    assert explorer.head.value == "20260105T080000000Z-00000005" and explorer.base.value == "20260104T080000000Z-00000004"
    assert explorer.head.options[0] == ("head · 2026-01-05 08:00", "20260105T080000000Z-00000005")
    assert explorer.head.tooltip == "run id 20260105T080000000Z-00000005"
    assert explorer.metrics.options == ("exact_match", "latency", "quality") and explorer.metrics.value == explorer.metrics.options
    c = explorer.comparison
    assert (c.base.name, c.head.name, c.alpha, c.seed) == ("adhoc", "head", 0.05, 0)
    assert explorer.table.value == c._repr_html_()
    assert chart_x(explorer) == [m.difference for m in c.metrics.values()]
    assert "Regressed cases: 32" in explorer.cases.value  # 1 exact_match + 20 latency + 11 quality


def test_alpha_seed_and_metrics_update_table_chart_and_cases(store):
    explorer = run_explorer(store)
    before = explorer.table.value
    explorer.alpha.value = 0.01
    assert explorer.comparison.alpha == 0.01 and "α = 0.01" in explorer.table.value and explorer.table.value != before
    explorer.seed.value = 3
    assert explorer.comparison.seed == 3
    explorer.metrics.value = ("quality",)
    assert list(explorer.comparison.metrics) == ["quality"]
    assert chart_x(explorer) == [explorer.comparison.metrics["quality"].difference]
    assert "Regressed cases: 11" in explorer.cases.value and "latency" not in explorer.table.value


def test_choosing_runs_like_a_browser_recompares(store):
    explorer = run_explorer(store)
    explorer.metrics.value = ("quality",)
    explorer.base.set_state({"index": 4})  # the oldest nightly run
    assert explorer.comparison.base.run_id == "20260101T080000000Z-00000001"
    assert explorer.metrics.value == ("quality",)  # the selection survives when both runs have it
    explorer.head.set_state({"index": 2})  # the newest nightly: quality + 0.2 on every case
    c = explorer.comparison
    assert c.head.run_id == "20260103T080000000Z-00000003"
    assert round(c.metrics["quality"].difference, 9) == 0.2 and c.metrics["quality"].n_improved == 20
    assert chart_x(explorer) == [c.metrics["quality"].difference]
    assert "Regressed cases: 0" in explorer.cases.value


def test_failures_show_a_message_instead_of_raising(store):
    explorer = run_explorer(store)
    explorer.seed.value = -1
    assert explorer.comparison is None and explorer.chart.outputs == () and explorer.cases.value == ""
    assert "InputError: seed must be None, an integer &gt;= 0, a string or a numpy Generator; got -1" in explorer.table.value
    explorer.seed.value = 0
    assert explorer.comparison is not None
    explorer.metrics.value = ()
    assert explorer.comparison is None and "select at least one metric" in explorer.table.value


def test_run_explorer_escapes_case_text(store):
    explorer = run_explorer(store)
    explorer.metrics.value = ("exact_match",)
    cases = explorer.cases.value
    assert f"{ESCAPED} question 0" in cases and "<script>alert" not in cases


def test_run_explorer_takes_a_folder_and_refuses_an_empty_store(store, tmp_path):
    assert run_explorer(str(store.path)).comparison is not None
    with pytest.raises(InputError, match="needs a store with at least one run"):
        run_explorer(RunStore(tmp_path / "empty"))
    with pytest.raises(InputError, match="store must be a RunStore or a folder path"):
        run_explorer([make_run("base")])


def test_one_run_compares_with_itself(tmp_path):
    store = RunStore(tmp_path)
    store.save(make_run("base"))
    explorer = run_explorer(store)
    assert explorer.base.value == explorer.head.value and explorer.comparison.winner == "tie"


# -- case explorer --------------------------------------------------------------------------------


def test_case_explorer_starts_on_the_regressions_of_the_first_metric_that_has_some(comparison, runs):
    explorer = case_explorer(comparison, *runs)
    assert isinstance(explorer, CaseExplorer)
    assert explorer.metric.value == "exact_match" and explorer.direction.value == "regressed"
    changes = comparison.changes
    (position,) = changes.index[(changes["metric"] == "exact_match") & (changes["direction"] == "regressed")]
    assert explorer.case.options == ((f"▼ -1 · {SCRIPT} question 0", position),) and explorer.case.value == position
    assert explorer.count.value == '<div class="cogeval">1 regressed case(s) of 20 paired cases</div>'


def test_case_detail_shows_input_expected_and_both_outputs_escaped(comparison, runs):
    detail = case_explorer(comparison, *runs).detail.value
    assert f"{ESCAPED} question 0" in detail and "answer 0" in detail
    assert "base out 0" in detail and f"{ESCAPED} head out 0" in detail
    assert "<script>" not in detail
    assert "<th>base · base</th><th>head · head</th>" in detail
    assert '<span class="b bad">regressed</span>' in detail


def test_filters_by_metric_and_direction(comparison, runs):
    explorer = case_explorer(comparison, *runs)
    changes = comparison.changes
    quality = changes[changes["metric"] == "quality"]
    explorer.metric.value = "quality"
    assert [p for _, p in explorer.case.options] == list(quality.index[quality["direction"] == "regressed"])
    explorer.direction.value = "improved"
    assert [p for _, p in explorer.case.options] == list(quality.index[quality["direction"] == "improved"])
    assert all(label.startswith("▲ +") for label, _ in explorer.case.options)
    explorer.direction.value = "all"
    assert len(explorer.case.options) == 20
    first = explorer.case.options[0][1]
    assert explorer.case.value == first
    explorer.case.value = explorer.case.options[3][1]
    assert explorer.detail.value == explorer.case_html(explorer.case.options[3][1])
    row = changes.loc[explorer.case.value]
    assert f"{row['base']:.4g}" in explorer.detail.value


def test_empty_filter_clears_the_detail(comparison, runs):
    explorer = case_explorer(comparison, *runs)
    explorer.metric.value = "latency"
    explorer.direction.value = "improved"
    assert explorer.case.options == () and explorer.detail.value == ""
    assert "0 improved case(s)" in explorer.count.value


def test_case_explorer_needs_the_runs_in_order(comparison, runs):
    with pytest.raises(InputError) as error:
        case_explorer(comparison)
    assert str(error.value) == ("case_explorer needs the two runs the comparison compared, for their outputs: "
                                "case_explorer(comparison, base_run, head_run)")
    with pytest.raises(InputError, match=r"base is run '.*', but the comparison's base run is"):
        case_explorer(comparison, runs[1], runs[0])


def test_case_explorer_takes_a_comparison_result_alone():
    data = [{"input": f"{SCRIPT}{i}", "expected": str(i)} for i in range(1, 13)]
    result = EvalComparison(data, targets={"baseline": lambda q: q[-1], "challenger": lambda q: "1"},
                            metrics=[exact_match()], progress=False, seed=0).run()
    explorer = cogeval.case_explorer(result)
    assert len(explorer.case.options) == 8  # cases 2 to 9: the baseline echoes the last character, the challenger "1"
    assert "<script>" not in explorer.detail.value and "baseline" in explorer.detail.value


def test_widget_functions_are_lazy_top_level_names():
    assert cogeval.run_explorer is run_explorer and cogeval.case_explorer is case_explorer


def test_run_explorer_checks_its_arguments(store):
    with pytest.raises(InputError, match=r"alpha must be a number in \(0, 1\); got 1.5"):
        run_explorer(store, alpha=1.5)
    with pytest.raises(InputError, match=r"^seed must be None, an integer >= 0, a string or a numpy Generator; got -1$"):
        run_explorer(store, seed=-1)
    with pytest.raises(InputError, match="test must be one of 't', 'wilcoxon'; got 'z'"):
        run_explorer(store, test="z")
    explorer = run_explorer(store, alpha=0.3, test="wilcoxon")
    assert explorer.alpha.value == 0.3 and explorer.comparison.metrics["quality"].test == "wilcoxon"


@pytest.mark.parametrize("seed", [None, np.random.default_rng(0)])
def test_run_explorer_takes_any_seed_of_the_one_rule_and_records_none(store, seed):
    explorer = run_explorer(store, seed=seed)
    assert explorer.comparison.seed is None and explorer.seed.value == 0
    explorer.seed.value = 4
    assert explorer.comparison.seed == 4


def test_case_explorer_names_a_wrong_comparison(runs):
    with pytest.raises(InputError) as error:
        case_explorer(42, *runs)
    assert str(error.value) == "comparison must be a RunComparison or an EvalComparison result; got 42"
