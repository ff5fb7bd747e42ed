"""The HTML comparison and suite reports at 360, 800 and 1280 px, in headless Chromium (issue 25).

Each metric's name and verdict (a suite's metric names and assertion results) must be inside the
viewport, and the page must not scroll sideways: below 900 px each table row is a block, wider
the metric and its verdict stick to the left edge of a table that scrolls. A case row's two
answers are inside the viewport too, and a long answer opens whole. Screenshots:
``artifacts/browser/report-*.png``.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from cogeval import EvalSuite, compare_runs, exact_match, metric, report_comparison, threshold

WIDTHS = [360, 800, 1280]
_HERE = pathlib.Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location("case_answers", _HERE.parent / "present" / "test_case_answers.py")
case_answers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(case_answers)


@pytest.fixture(scope="module")
def comparison_page(tmp_path_factory):
    base, head = case_answers.answered_runs()
    comparison = case_answers.with_answers(compare_runs(base, head, seed=0), base, head)
    [page] = report_comparison(comparison, "html", tmp_path_factory.mktemp("widths") / "comparison")
    return pathlib.Path(page)


@pytest.fixture(scope="module")
def suite_page(tmp_path_factory):
    data = [{"input": f"question {i} " + "and more words " * (30 if i == 1 else 0), "expected": "ok"} for i in range(6)]
    answers = {1: "ok " * 200, 3: "no"}
    long_name = metric("a_metric_with_a_rather_long_name")(lambda output, case: float(len(output) < 10))
    result = EvalSuite(data, lambda q: answers.get(int(q.split()[1]), "ok"), metrics=[exact_match(), long_name],
                       assertions=[threshold("exact_match", 0.9), threshold("a_metric_with_a_rather_long_name", 0.5)],
                       name="suite", progress=False).run()
    [page] = result.report("html", tmp_path_factory.mktemp("widths") / "suite.html")
    return pathlib.Path(page)


def at_width(open_page, path: pathlib.Path, name: str, width: int):
    visit = open_page(path, name)
    visit.page.set_viewport_size({"width": width, "height": 900})
    return visit


def boxes(page, selector: str) -> list[dict]:
    """The boxes of what ``selector`` finds and a reader sees (not what a closed ``<details>`` holds)."""
    found = page.locator(f"{selector}:visible")
    assert found.count() > 0, f"nothing matches {selector}"
    return [found.nth(i).bounding_box() for i in range(found.count())]


def assert_in_view(page, selector: str, width: int) -> None:
    for box in boxes(page, selector):
        assert box is not None and box["width"] > 0, f"{selector} is not shown"
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"{selector} is cut at {width} px: {box}"


def sideways(page) -> dict:
    """How far the page, and each table's scrolling box, scroll sideways (0: not at all)."""
    return page.evaluate("""() => ({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        tables: Math.max(0, ...[...document.querySelectorAll('.table-wrap')].map(w => w.scrollWidth - w.clientWidth)),
    })""")


@pytest.mark.parametrize("width", WIDTHS)
def test_comparison_report_keeps_metric_and_verdict_in_view(open_page, comparison_page, width):
    visit = at_width(open_page, comparison_page, f"report-comparison-{width}", width)
    page = visit.page
    assert_in_view(page, "table.metrics tbody td:first-child", width)  # the metric's name
    assert_in_view(page, "table.metrics tbody td.verdict .badge", width)
    assert [text.split()[0] for text in page.locator("table.metrics tbody td:first-child").all_inner_texts()] == [
        "exact_match"]
    assert page.locator("table.metrics tbody td.verdict").all_inner_texts() == ["inconclusive"]
    assert_in_view(page, "table.cases tbody td.answer", width)  # both answers of each shown case
    assert_in_view(page, "table.cases tbody td.key", width)
    assert sideways(page) == {"page": 0, "tables": 0}
    if width == 800:
        visit.page.screenshot(path="/tmp/report-comparison-800.png", full_page=True)
    visit.shoot()
    visit.assert_clean()


def test_comparison_report_opens_a_long_answer_whole(open_page, comparison_page):
    visit = at_width(open_page, comparison_page, "report-comparison-answer", 800)
    page = visit.page
    long = page.locator("details.clip.output", has_text="647 characters").first
    short = long.locator("summary .short")
    assert short.is_visible() and not long.locator(".whole").is_visible()
    assert short.inner_text().startswith("<b>step</b> one, then the next; <b>step</b>")  # escaped: shown as text
    long.locator("summary").click()
    assert long.locator(".whole").is_visible() and not short.is_visible()
    assert long.locator(".whole").inner_text().rstrip().endswith("THE END")
    assert_in_view(page, "details.clip[open] .whole", 800)
    assert page.locator("td.answer .error", has_text="TimeoutError").first.is_visible()
    assert page.evaluate("window.__pwned") is None  # planted markup is text: no script ran, no element was made
    assert page.locator("table script, table i").count() == 0 and page.locator("table b", has_text="step").count() == 0
    visit.shoot()
    visit.assert_clean()


@pytest.mark.parametrize("width", WIDTHS)
def test_suite_report_keeps_metric_names_and_results_in_view(open_page, suite_page, width):
    visit = at_width(open_page, suite_page, f"report-suite-{width}", width)
    page = visit.page
    assert_in_view(page, "table.metrics tbody td:first-child", width)
    assert page.locator("table.metrics tbody td:first-child").all_inner_texts() == [
        "exact_match", "a_metric_with_a_rather_long_name"]
    assert_in_view(page, "table.assertions tbody td.result .badge", width)
    assert_in_view(page, "table.cases tbody td.key", width)
    assert_in_view(page, "table.cases tbody td[data-label='exact_match']", width)  # each case's score
    assert sideways(page) == {"page": 0, "tables": 0}
    visit.shoot()
    visit.assert_clean()


def test_notebook_display_of_a_comparison_keeps_metric_and_verdict_in_view(open_page, tmp_path):
    base, head = case_answers.answered_runs()
    display = tmp_path / "display.html"
    display.write_text("<!DOCTYPE html><html><body style='margin: 0; width: 700px'>"
                       + compare_runs(base, head, seed=0)._repr_html_() + "</body></html>", encoding="utf-8")
    visit = at_width(open_page, display, "report-notebook-display", 800)
    page = visit.page
    table = page.locator(".cogeval table").first
    wrap = table.locator("xpath=..")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth")  # 16 columns in a 700 px cell: it scrolls ...
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    for selector in ("tbody tr > td:first-child", "tbody td:has(> .b)"):  # ... the metric and the verdict do not
        for box in [table.locator(selector).nth(i).bounding_box() for i in range(table.locator(selector).count())]:
            assert box["x"] >= 0 and box["x"] + box["width"] <= 700 + 0.5, (selector, box)
    assert table.locator("tbody td:has(> .b)").all_inner_texts() == ["inconclusive"]
    visit.shoot()
    visit.assert_clean()
