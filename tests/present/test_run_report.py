"""The suite HTML report (issue 14): ``result.report("html")``, and the run's cost in every summary;
trace ids and prompt versions in the comparison's HTML rows and in ``case_explorer``."""

from __future__ import annotations

import re

import pytest

from cogeval import EvalSuite, InputError, TargetResponse, compare_runs, exact_match, threshold
from cogeval.data.records import StatsRecord
from cogeval.present import case_explorer, comparison_html
from cogeval.present.reporters import render, write_reports
from cogeval.present.run_report import cost_text, run_html

SCRIPT = "<script>alert(1)</script>"
QUESTIONS = [f"q{i} {SCRIPT}" for i in range(4)] + ["boom"]


def _target(version, right):
    def answer(q):
        if q == "boom":
            raise RuntimeError(f"service down {SCRIPT}")
        i = int(q[1])
        return TargetResponse(q if i in right else "no", trace_id=f"{version}-trace-{i}",
                              prompt={"key": "qa", "version": version},
                              usage={"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.0025})
    return answer


def _run(version, right):
    data = [{"input": q, "expected": q} for q in QUESTIONS]
    return EvalSuite(data, _target(version, right), metrics=[exact_match()], name=f"demo {SCRIPT}",
                     assertions=[threshold("exact_match", 0.9)], progress=False).run()


@pytest.fixture(scope="module")
def base():
    return _run(1, {0, 1})


@pytest.fixture(scope="module")
def head():
    return _run(2, {0, 2, 3})


def test_html_report_shows_header_and_every_case(base, tmp_path):
    assert base.report("html", tmp_path / "run.html") == [str(tmp_path / "run.html")]
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert page == run_html(base)
    assert "<script" not in page and not re.search(r"(src|href)=|https?://|url\(", page)  # self-contained, no script
    assert "@media (prefers-color-scheme: dark)" in page
    assert f'<div class="label">run id</div><div class="value">{base.run_id}</div>' in page
    # 4 answers at $0.0025 each (the failed case reports none): 0.01
    assert '<div class="label">cost</div><div class="value">$0.0100</div>' in page
    assert '<div class="label">assertions</div><div class="value">0 of 1 passed</div>' in page
    assert "5 results, 1 errors, 0 metric errors · cost $0.0100" in page
    assert "<h2>Cases (5)</h2>" in page
    rows = page.split("<tbody>")[-1].split("</tr>")[:5]
    assert 'class="t key">1-trace-0</td>' in rows[0] and 'class="t key">qa v1</td>' in rows[0]
    assert "q0 &lt;script&gt;alert(1)&lt;/script&gt;" in rows[0]
    assert rows[4].lstrip().startswith('<tr class="bad">')  # the target failed: a red row with its error
    assert "RuntimeError: service down &lt;script&gt;alert(1)&lt;/script&gt;" in rows[4]


def test_html_report_names_its_file_and_limits_its_rows(base, tmp_path):
    paths = write_reports(base, ["markdown", "html"], tmp_path)
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"{base.run_id}.md", f"{base.run_id}.html"]
    page = run_html(base, max_cases=2)
    assert page.count('<td class="t key" title=') == 2
    assert "… and 3 more results (all in the JSON and CSV reports)" in page
    with pytest.raises(InputError, match=r"^max_cases must be an integer >= 1; got 0$"):
        run_html(base, max_cases=0)


def test_cost_is_in_every_summary_and_unknown_is_never_zero(base):
    assert cost_text(base.stats) == "cost $0.0100"
    header = " ".join(render(base, "console").splitlines()[:2])  # the long name wraps the header at 110 columns
    # issue 25: the duration to 4 significant digits (cogeval._numbers.seconds)
    assert re.search(r"5 results, 1 errors, 0 metric errors · \d\.?\d*(e-\d+)? s · cost \$0\.0100$", header)
    assert render(base, "markdown").splitlines()[2].endswith(" s, cost $0.0100.")
    assert "::notice title=cogeval cost::cost $0.0100" in render(base, "ci").splitlines()
    # with a judge its cost follows; a cost nobody reported reads "unknown"
    assert cost_text(StatsRecord(cost=0.0123, judge_cost=0.004, judge_calls=4)) == "cost $0.0123 (judge $0.0040)"
    assert cost_text(StatsRecord(judge_errors=2)) == "cost unknown (judge cost unknown)"


def test_comparison_html_and_case_explorer_show_trace_ids_and_prompt_versions(base, head):
    comparison = compare_runs(base, head, seed=0)
    changes = comparison.changes
    row = changes[changes["case_key"] == base.results[1].case_key].iloc[0]
    assert (row["base_trace_id"], row["head_trace_id"], row["base_prompt_version"], row["head_prompt_version"]) == (
        "1-trace-1", "2-trace-1", 1, 2)
    page = comparison_html(comparison)
    assert '<th class="t">trace</th><th class="t">prompt</th>' in page
    assert ('<td data-label="trace" class="t key">1-trace-1 → 2-trace-1</td>'
            '<td data-label="prompt" class="t key">1 → 2</td>') in page
    explorer = case_explorer(comparison, base, head)
    position = int(changes.index[changes["case_key"] == base.results[1].case_key][0])
    detail = explorer.case_html(position)
    assert ">trace id</td>" in detail and ">1-trace-1</td>" in detail and ">2-trace-1</td>" in detail
    assert ">prompt version</td>" in detail and ">1</td>" in detail


def test_a_statistical_metric_is_a_metric_row_not_a_column_of_cases():
    from cogeval import latency

    result = EvalSuite([{"input": "a", "expected": "a"}], str, metrics=[exact_match()], statistical_metrics=[latency()],
                       progress=False).run()
    html = run_html(result)
    metrics, cases = html.split("<h2>Cases", 1)
    assert ">latency<" in metrics and ">exact_match<" in cases and ">latency<" not in cases
