"""Exported notebooks and comparison reports, opened in headless Chromium, offline.

Each page must draw its plotly charts and widget snapshots with no console
error and no request outside file:/data:/blob:, and a ``<script>`` (and an
``<img onerror>``) planted in a case input must not run. Screenshots:
``artifacts/browser/*.png``.
"""

from __future__ import annotations

import pathlib

import pandas as pd
from notebook_runs import PLANTED, executed, planted_export

from cogeval import EvalRun, compare_runs, report_comparison
from cogeval.present.notebook import notebook_html

CHART = ".plotly-graph-div .main-svg"  # drawn: plotly made its SVG layers (several per chart)
CHARTS = ".plotly-graph-div:has(.main-svg)"
WIDGET = ".widget-subarea .jupyter-widgets"


def planted_runs() -> tuple[EvalRun, EvalRun]:
    inputs = [PLANTED] + [f"question {i}" for i in range(1, 30)]
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": [1] * 30}), name="base")
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": [0] * 12 + [1] * 18}), name=PLANTED)
    return base, head


def assert_not_pwned(visit) -> None:
    assert visit.page.evaluate("window.__pwned") is None, "a script planted in a case input ran"
    # ... and the planted text is on the page as text, escaped, where a person can read it
    assert visit.page.get_by_text("window.__pwned = 1", exact=False).count() > 0


def test_exported_notebook_draws_charts_and_widgets_offline(open_page):
    visit = open_page(planted_export().page, "exported-notebook", wait_for=WIDGET)
    visit.page.wait_for_function(f"document.querySelectorAll({CHARTS!r}).length >= 3")
    visit.shoot()
    visit.assert_clean()
    assert visit.page.locator(CHARTS).count() == 3  # two in cells, one in the run explorer's Output widget
    assert visit.page.locator(".widget-subarea .widget-select select option").count() >= 12  # the case explorer's cases
    assert visit.page.locator(".widget-subarea .widget-dropdown select").count() >= 3  # metric; base and head runs
    assert_not_pwned(visit)


def test_comparison_report_draws_the_forest_plot_offline(tmp_path, open_page):
    base, head = planted_runs()
    [page] = report_comparison(compare_runs(base, head, seed=0), "html", tmp_path / "report")

    visit = open_page(pathlib.Path(page), "comparison-report", wait_for=CHART)
    visit.shoot()
    visit.assert_clean()
    assert visit.page.locator(CHARTS).count() == 1 and visit.page.locator("#forest-plot " + CHARTS).count() == 1
    assert visit.page.locator("td.text", has_text="window.__pwned = 1").count() >= 1
    assert_not_pwned(visit)


def test_suite_html_report_renders_offline_and_inert(tmp_path, open_page):
    # issue 14: result.report("html") is one page with no script; a planted case input stays text
    from cogeval import EvalSuite, exact_match

    data = [{"input": PLANTED, "expected": "x"}] + [{"input": f"question {i}", "expected": "ok"} for i in range(1, 6)]
    result = EvalSuite(data, lambda q: "ok", metrics=[exact_match()], name=PLANTED, progress=False).run()
    [page] = result.report("html", tmp_path / "run.html")

    visit = open_page(pathlib.Path(page), "suite-report", wait_for="table.cases")
    visit.shoot()
    visit.assert_clean()
    assert visit.page.locator("table.cases tbody tr").count() == 6
    assert visit.page.locator("script").count() == 0
    assert visit.page.locator("td.text", has_text="window.__pwned = 1").count() >= 1
    assert_not_pwned(visit)


def test_example_notebook_compare_runs_renders_offline(tmp_path, open_page):
    page = tmp_path / "compare-runs.html"
    page.write_text(notebook_html(executed("compare-runs").nb, name="compare-runs"), encoding="utf-8")

    visit = open_page(page, "compare-runs", wait_for=WIDGET)
    visit.page.wait_for_function(f"document.querySelectorAll({CHARTS!r}).length >= 4")
    visit.shoot()
    visit.assert_clean()
    assert visit.page.locator(CHARTS).count() == 4  # three in cells, and the run explorer's forest plot
    assert visit.page.locator(".widget-subarea .widget-dropdown select").count() >= 3  # base, head; metric
