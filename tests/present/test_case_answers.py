"""Case rows of the comparison reports show both runs' answers and the error (issue 25).

A row of a moved or errored case holds each run's answer and error, read from the
``base_output``/``head_output``/``base_error``/``head_error`` columns of ``changes`` and
``errored``: shortened to one line of 200 characters, the whole text (at most 4,000)
in the HTML report once, behind a ``<details>``; every text escaped.
"""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from markupsafe import escape

from cogeval import EvalRun, compare_runs
from cogeval.present.comparison_report import comparison_html, comparison_markdown
from cogeval.present.comparison_rows import ANSWER_COLUMNS, change_groups, errored_rows
from cogeval.present.templating import TEXT_SHOWN, TEXT_WHOLE

N = 12
LONG = "<b>step</b> one, then the next;\n" * 20 + "THE END"  # 647 characters, markup and newlines in it
HUGE = "y" * (TEXT_WHOLE + 500)
SCRIPT = "<script>alert(1)</script> head says 1"
TIMEOUT = "TimeoutError: <i>no answer in 30 s</i>"


def answered_runs() -> tuple[EvalRun, EvalRun]:
    """Head regresses on cases 0 (a long answer), 1 (a script) and 3 (a huge answer), fails on case 2 (an
    error, no output) and improves on case 10."""
    inputs = [f"question {i}" for i in range(N)]
    head_outputs: list[str | None] = [f"head says {i}" for i in range(N)]
    head_outputs[0], head_outputs[1], head_outputs[2], head_outputs[3] = LONG, SCRIPT, None, HUGE
    head_errors = [TIMEOUT if i == 2 else None for i in range(N)]
    base_scores = [0 if i == 10 else 1 for i in range(N)]
    head_scores = [0, 0, 0, 0] + [1] * (N - 4)
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, "output": [f"base says {i}" for i in range(N)],
                                            "exact_match": base_scores}), name="base")
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, "output": head_outputs, "error": head_errors,
                                            "exact_match": head_scores}), name="head")
    return base, head


def with_answers(comparison, base: EvalRun, head: EvalRun):
    """``comparison`` with each run's answer and error (its lowest trial) in ``changes`` and ``errored``, the
    columns the reports read; as it is when ``compare_runs`` already wrote them."""
    if "base_output" in comparison.changes.columns:
        return comparison

    def answers(run: EvalRun, side: str) -> pd.DataFrame:
        first = run.results_frame.sort_values("trial", kind="stable").drop_duplicates(["case_key", "occurrence"])
        return first[["case_key", "occurrence", "output", "error"]].rename(
            columns={"output": f"{side}_output", "error": f"{side}_error"})

    def joined(table: pd.DataFrame) -> pd.DataFrame:
        for run, side in ((base, "base"), (head, "head")):
            table = table.merge(answers(run, side), on=["case_key", "occurrence"], how="left")
        return table

    return dataclasses.replace(comparison, changes=joined(comparison.changes), errored=joined(comparison.errored))


@pytest.fixture(scope="module")
def comparison():
    base, head = answered_runs()
    return with_answers(compare_runs(base, head, seed=0), base, head)


def rows_by_input(rows):
    return {row["input"]: row for row in rows}


def test_moved_case_rows_hold_both_answers(comparison):
    [regressed, improved] = change_groups(comparison, 50)
    rows = rows_by_input(regressed.rows)
    assert list(rows) == ["question 0", "question 1", "question 3"]
    base, head = rows["question 1"]["answers"]
    assert (base.side, base.output.short, base.output.whole, base.error) == ("base", "base says 1", None, None)
    assert (head.side, head.output.short, head.error) == ("head", SCRIPT, None)
    assert rows["question 1"]["base answer"] == "base says 1" and rows["question 1"]["head answer"] == SCRIPT
    [row] = improved.rows
    assert (row["base answer"], row["head answer"]) == ("base says 10", "head says 10")


def test_errored_case_rows_hold_the_error(comparison):
    [row] = errored_rows(comparison)
    assert (row["input"], row["errored in"]) == ("question 2", "head")
    base, head = row["answers"]
    assert base.output.short == "base says 2" and base.error is None
    assert head.output is None and head.error.short == TIMEOUT and head.error.whole is None
    assert (row["base answer"], row["head answer"]) == ("base says 2", f"error: {TIMEOUT}")


def test_a_long_answer_is_one_shortened_line_and_the_whole_text(comparison):
    rows = rows_by_input(change_groups(comparison, 50)[0].rows)
    long, huge = rows["question 0"]["answers"][1].output, rows["question 3"]["answers"][1].output
    assert len(long.short) == TEXT_SHOWN and long.short.endswith("…") and "\n" not in long.short
    assert long.short[:-1] == LONG.replace("\n", " ")[:TEXT_SHOWN - 1]
    assert (long.whole, long.length, long.size, long.cut_note) == (LONG, 647, "647 characters", "")
    assert len(huge.whole) == TEXT_WHOLE and huge.whole == "y" * (TEXT_WHOLE - 1) + "…"
    assert huge.cut_note == "the first 4,000 characters; the run file has all 4,500"
    assert len(rows["question 0"]["head answer"]) == TEXT_SHOWN  # the one line Markdown and the console get


def test_html_shows_each_answer_once_whole_behind_details_and_escaped(comparison):
    page = comparison_html(comparison, figure=False)
    assert "<script>alert" not in page and "<b>step" not in page and "<i>no answer" not in page
    assert page.count(str(escape(SCRIPT))) == 1 and page.count(str(escape(TIMEOUT))) == 1
    assert page.count(str(escape(LONG))) == 1  # the whole text, once ...
    short = rows_by_input(change_groups(comparison, 50)[0].rows)["question 0"]["answers"][1].output.short
    assert (f'<details class="clip output"><summary><span class="short">{escape(short)}</span> '
            f'<span class="size">647 characters</span></summary><div class="whole">{escape(LONG)}</div></details>'
            ) in page  # ... behind its first line, which hides when it opens
    assert "y" * TEXT_WHOLE not in page and page.count("y" * (TEXT_WHOLE - 1) + "…") == 1
    assert '<div class="size">the first 4,000 characters; the run file has all 4,500</div>' in page
    assert page.count('<th class="t">base answer</th><th class="t">head answer</th>') == 3  # regressed, improved, errored
    assert re.search(r'<td data-label="head answer" class="text answer"><div class="error"><b>error</b> '
                     + re.escape(str(escape(TIMEOUT))) + "</div></td>", page)
    assert '<td data-label="base answer" class="text answer"><div class="output">base says 2</div></td>' in page


def test_markdown_shows_each_answer_on_one_escaped_line(comparison):
    text = comparison_markdown(comparison)
    assert "| case | input | base → head | delta | base answer | head answer |" in text
    assert "| case | input | errored in | base answer | head answer |" in text
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; head says 1 |" in text
    assert "| base says 2 | error: TimeoutError: &lt;i&gt;no answer in 30 s&lt;/i&gt; |" in text
    [long] = [line for line in text.splitlines() if "question 0" in line]
    assert long.endswith("| base says 0 | &lt;b&gt;step&lt;/b&gt; one, then the next; &lt;b&gt;step&lt;/b&gt; one, then "
                         "the next; &lt;b&gt;step&lt;/b&gt; one… |")  # 80 characters, cut, then escaped
    assert "THE END" not in text and "y" * 80 not in text


def test_reports_without_answers_have_no_answer_columns():
    runs = [EvalRun.from_frame(pd.DataFrame({"input": ["a", "b", "c"], "exact_match": scores}))
            for scores in ([1, 1, 0], [0, 1, 1])]
    comparison = compare_runs(*runs, seed=0)  # no outputs: nothing to show
    assert all(row["base answer"] == row["head answer"] == "–" for g in change_groups(comparison, 50) for row in g.rows)
    page = comparison_html(comparison, figure=False)
    assert "base answer" not in page and 'class="text answer"' not in page
    assert not any(column in comparison_markdown(comparison) for column in ANSWER_COLUMNS)


def test_case_rows_stay_bounded():
    inputs = [f"q{i}" for i in range(80)]
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, "output": ["z" * 10_000] * 80, "exact_match": [1] * 80}))
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, "output": ["w" * 10_000] * 80, "exact_match": [0] * 80}))
    page = comparison_html(with_answers(compare_runs(base, head, seed=0), base, head), figure=False)
    assert page.count('<details class="clip output">') == 2 * 50  # the report's 50 rows, each answer once
    assert len(page) < 2 * 50 * (TEXT_WHOLE + TEXT_SHOWN) + 100_000
    assert "… and 30 more regressed cases" in page


def test_compare_runs_writes_the_answer_columns():
    base, head = answered_runs()
    changes = compare_runs(base, head, seed=0).changes
    if "base_output" not in changes.columns:
        pytest.skip("compare_runs does not write base_output/head_output/base_error/head_error into changes yet")
    row = changes[changes["input"] == "question 2"].iloc[0]
    assert (row["base_output"], row["head_error"]) == ("base says 2", TIMEOUT)
    assert pd.isna(row["head_output"]) and pd.isna(row["base_error"])
    [errored] = compare_runs(base, head, seed=0).errored.to_dict("records")
    assert (errored["base_output"], errored["head_error"]) == ("base says 2", TIMEOUT)
