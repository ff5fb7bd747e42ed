"""Errors shown where people look (issue 23, items 4 and 6): the run's error tables and every suite report."""

from __future__ import annotations

import re

import pytest

from cogeval import EvalRun, EvalSuite, exact_match, load_run, metric
from cogeval.present.reporters import render
from cogeval.present.run_errors import error_lines

HOSTILE = "bad <script>x</script> | `a` *b* @alice ::error::x\x1b[31m"


@metric("quality")
def quality(output, case):
    if case.input.endswith(("7", "9")):
        raise ValueError("no <quality> | here")
    return 1.0


def target(question):
    number = int(question.split()[-1])
    if number % 5 == 0:  # 0, 5, ..., 45: 10 cases
        raise TimeoutError("upstream too slow")
    if number % 5 in (1, 2):  # 20 cases
        raise RuntimeError("service down")
    if number == 3:
        raise ValueError(HOSTILE)
    return "4"


@pytest.fixture(scope="module")
def result():
    cases = [{"input": f"question {i}", "expected": "4"} for i in range(50)]
    return EvalSuite(cases, target, metrics=[exact_match(), quality], progress=False, name="flaky").run()


def test_the_errors_frame_counts_each_message_most_frequent_first(result):
    frame = result.errors_frame
    assert list(frame.columns) == ["error", "cases", "examples"]
    assert frame["error"].tolist() == ["RuntimeError: service down", "TimeoutError: upstream too slow", f"ValueError: {HOSTILE}"]
    assert frame["cases"].tolist() == [20, 10, 1] and frame["cases"].sum() == result.stats.errors == 31
    assert frame["examples"].tolist() == [["question 1", "question 2", "question 6"],
                                          ["question 0", "question 5", "question 10"], ["question 3"]]
    assert result.run.errors_frame.equals(frame)  # the run's table; the suite result reads it


def test_the_metric_errors_frame_names_the_metric(result):
    frame = result.metric_errors_frame
    assert list(frame.columns) == ["metric", "error", "cases", "examples"]
    # inputs ending in 7 or 9: 7, 9, 17, 19, ..., 47, 49
    assert frame.to_dict("records") == [{"metric": "quality", "error": "metric 'quality' raised ValueError: no <quality> | here",
                                         "cases": 10, "examples": ["question 7", "question 9", "question 17"]}]
    assert result.stats.metric_errors == 10


def test_equally_frequent_messages_keep_their_first_appearance_and_examples_are_distinct_cases():
    run = EvalRun.model_validate({
        "runId": "20261022T101530123Z-1a2b3c4d", "startedAt": "2026-10-22T10:15:30Z", "finishedAt": "2026-10-22T10:15:31Z",
        "results": [
            {"caseKey": "b" * 64, "case": {"input": "x" * 60}, "error": "second", "trial": 0},
            {"caseKey": "b" * 64, "case": {"input": "x" * 60}, "error": "second", "trial": 1},
            {"caseKey": "a" * 64, "case": {"turns": ["hi"]}, "error": "first"},
            {"caseKey": "c" * 64, "case": {"input": {"q": 1}}, "error": "first"},
        ]})
    assert run.errors_frame.to_dict("records") == [
        {"error": "second", "cases": 2, "examples": ["x" * 39 + "…"]},  # two trials of one case: one example
        {"error": "first", "cases": 2, "examples": ["key aaaaaaaa", '{"q": 1}']},
    ]
    assert run.metric_errors_frame.empty and list(run.metric_errors_frame.columns) == ["metric", "error", "cases", "examples"]


def test_console_lists_the_errors_within_80_columns(result, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result.report("console")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    start = lines.index("errors: 31 of 50 results")
    assert lines[start:start + 7] == [
        "errors: 31 of 50 results",
        "  20  RuntimeError: service down",
        "      e.g. question 1 · question 2 · question 6",
        "  10  TimeoutError: upstream too slow",
        "      e.g. question 0 · question 5 · question 10",
        "   1  ValueError: bad <script>x</script> | `a` *b* @alice ::error::x\\x1b[31m",
        "      e.g. question 3",
    ]
    assert lines[start + 7:start + 10] == [
        "metric errors: 10 of 100 scores",
        "  10  metric 'quality' raised ValueError: no <quality> | here",
        "      e.g. question 7 · question 9 · question 17",
    ]
    assert "\x1b" not in out


def test_markdown_lists_the_errors_escaped(result):
    text = render(result, "markdown")
    assert "**Errors**: 31 of 50 results" in text and "**Metric errors**: 10 of 100 scores" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "question" in line]
    assert rows == [
        "| 20 | RuntimeError: service down | question 1 · question 2 · question 6 |",
        "| 10 | TimeoutError: upstream too slow | question 0 · question 5 · question 10 |",
        "| 1 | ValueError: bad &lt;script&gt;x&lt;/script&gt; \\| \\`a\\` \\*b\\* @\u2060alice ::error::x\\\\x1b\\[31m | question 3 |",  # the escape's backslash escaped
        "| quality | 10 | metric 'quality' raised ValueError: no &lt;quality&gt; \\| here | question 7 · question 9 · question 17 |",
    ]
    assert all(len(re.findall(r"(?<!\\)\|", row)) == (5 if row.startswith("| quality") else 4) for row in rows)


def test_html_lists_the_errors_escaped(result):
    page = render(result, "html")
    assert "<h2>Errors (31 of 50 results)</h2>" in page and "<h2>Metric errors (10 of 100 scores)</h2>" in page
    assert '<tr><td>20</td><td class="text err">RuntimeError: service down</td><td class="text">question 1 · question 2 · question 6</td></tr>' in page
    assert ("<td>1</td><td class=\"text err\">ValueError: bad &lt;script&gt;x&lt;/script&gt; | `a` *b* @alice "
            "::error::x\\x1b[31m</td>") in page
    assert "<script" not in page and "\x1b" not in page
    assert page.index("<h2>Errors") < page.index("<h2>Metric errors") < page.index("<h2>Cases")


def test_ci_warns_once_per_message(result):
    lines = render(result, "ci").splitlines()
    warnings = [line for line in lines if line.startswith("::warning")]
    assert warnings == [
        "::warning title=cogeval errors%3A 31 of 50 results::20 × RuntimeError: service down (e.g. question 1 · question 2 · question 6)",
        "::warning title=cogeval errors%3A 31 of 50 results::10 × TimeoutError: upstream too slow (e.g. question 0 · question 5 · question 10)",
        "::warning title=cogeval errors%3A 31 of 50 results::1 × ValueError: bad <script>x</script> | `a` *b* @alice "
        "::error::x\\x1b[31m (e.g. question 3)",
        "::warning title=cogeval metric errors%3A 10 of 100 scores::10 × metric 'quality' raised ValueError: no <quality> | here "
        "(e.g. question 7 · question 9 · question 17)",
    ]
    assert lines[-1] == "cogeval: 0 of 0 assertions passed" and "\x1b" not in "\n".join(lines)


def test_the_notebook_display_lists_the_errors(result):
    page = result._repr_html_()
    assert "<caption>errors</caption>" in page and "RuntimeError: service down" in page
    assert "&lt;script&gt;" in page and "<script>" not in page


def test_a_run_without_errors_shows_no_error_section():
    clean = EvalSuite([{"input": "a", "expected": "a"}], lambda q: q, metrics=[exact_match()], progress=False).run()
    assert error_lines(clean, 80) == []
    assert "errors:" not in render(clean, "console") and "**Errors**" not in render(clean, "markdown")
    assert "<h2>Errors" not in render(clean, "html") and "::warning" not in render(clean, "ci")


def test_many_messages_are_cut_to_the_most_frequent_five_in_the_console():
    def numbered(question):
        raise RuntimeError(f"failure {question}")

    many = EvalSuite([{"input": str(i)} for i in range(8)], numbered, progress=False).run()
    lines = error_lines(many, 80)
    assert lines[0] == "errors: 8 of 8 results" and lines[1] == "  1  RuntimeError: failure 0"
    assert lines[-1] == "  … and 3 more messages" and len(lines) == 1 + 5 * 2 + 1


def test_a_number_answer_is_kept_and_scored_by_its_str(tmp_path):
    run = EvalSuite([{"input": "2+2", "expected": "4"}, {"input": "list", "expected": "[1, 2]"}],
                    lambda q: 4 if q == "2+2" else [1, 2], metrics=[exact_match()], progress=False).run()
    assert [(r.output, r.error, r.scores["exact_match"].value) for r in run.results] == [(4, None, 1.0), ([1, 2], None, 1.0)]
    loaded = load_run(run.save_run(tmp_path / "run.json"))
    assert [r.output for r in loaded.results] == [4, [1, 2]] and loaded.errors_frame.empty
    assert loaded.aggregated["exact_match"].mean == 1.0
