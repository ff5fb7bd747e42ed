"""Reports of a suite result: console, json, csv, markdown, ci."""

from __future__ import annotations

import json
import pathlib

import pandas as pd
import pytest

from cogeval import EvalSuite, InputError, exact_match, threshold


@pytest.fixture(scope="module")
def result():
    data = [{"input": "a|b\n<script>x</script>", "expected": "ok"}, {"input": "plain", "expected": "ok"}]
    return EvalSuite(
        data, lambda q: "ok" if q == "plain" else "no",
        metrics=[exact_match()], assertions=[threshold("exact_match", 0.9)], progress=False, name="demo",
    ).run()


def test_console_prints_metrics_and_assertions(result, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert result.report("console") == []
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"demo · run {result.run_id}" and lines[1].startswith("2 results, 0 errors, 0 metric errors · ")
    # scores 0 and 1: mean 0.5, p95 = 0 + 0.95 · (1 - 0) = 0.95 (R: quantile(c(0, 1), .95))
    # issue 25: after the two header lines, a blank line, the table's head and its rule
    assert lines[3].split() == ["metric", "better", "mean", "p50", "p95", "min", "max", "n", "missing"]
    assert lines[5].split() == ["exact_match", "higher", "0.5", "0.5", "0.95", "0", "1", "2", "0"]
    assert lines[-1] == "FAIL  threshold(exact_match, 0.9): exact_match mean 0.5 < 0.9 (must be >= 0.9; higher is better)"


@pytest.mark.parametrize("columns", [80, 120])
def test_console_fits_the_terminal(result, capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    result.report("console")
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= columns
    assert "exact_match" in out and "0.95" in out


def test_json_report_is_complete_and_valid(result, tmp_path):
    [path] = result.report("json", path=tmp_path / "r.json")
    document = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    assert document["run_id"] == result.run_id
    assert document["aggregated"]["exact_match"]["mean"] == 0.5
    assert [r["scores"]["exact_match"]["value"] for r in document["results"]] == [0.0, 1.0]
    assert document["assertions"][0]["passed"] is False


def test_csv_report_round_trips_through_pandas(result, tmp_path):
    [path] = result.report("csv", path=tmp_path / "r.csv")
    frame = pd.read_csv(path)
    assert frame["exact_match"].tolist() == [0.0, 1.0]
    assert frame["input"].tolist()[0] == "a|b\n<script>x</script>"


def test_markdown_cannot_be_broken_by_case_text(result):
    import re

    from cogeval.present.reporters import render

    assert render(result, "markdown").splitlines()[-1] == (
        "| threshold(exact\\_match, 0.9) | ✗ fail | exact\\_match mean 0.5 &lt; 0.9 (must be &gt;= 0.9; higher is better) |")
    # The report shows the suite name and the assertion names and messages (not case inputs): plant markup there.
    hostile = EvalSuite(
        [{"input": "plain", "expected": "ok"}], lambda q: "no", metrics=[exact_match()],
        assertions=[threshold("exact_match", 0.9, name="a|b\n<script>x</script>")], progress=False,
        name="demo | <script>x</script>\n# heading",
    ).run()
    text = render(hostile, "markdown")
    assert "<script>" not in text
    assert text.splitlines()[0] == f"### demo \\| &lt;script&gt;x&lt;/script&gt; # heading — run `{hostile.run_id}`"
    assert text.splitlines()[-1].startswith("| a\\|b &lt;script&gt;x&lt;/script&gt; | ✗ fail | ")
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) == 6  # header, rule and one row in each of the two tables
    # every row of a table has as many unescaped pipes as its header
    for line in table_lines:
        assert len(re.findall(r"(?<!\\)\|", line)) in (8, 4)


def test_ci_report_annotates_failures(result):
    from cogeval.present.reporters import render

    lines = render(result, "ci").splitlines()
    assert lines[0] == "::notice title=cogeval::2 results, 0 errors, 0 metric errors; exact_match 0.5"
    assert lines[1] == "::error title=Assertion failed%3A threshold(exact_match%2C 0.9)::" + result.assertions[0].message.replace("%", "%25")
    assert lines[-1] == "cogeval: 0 of 1 assertions passed — FAILED"
    # issue 14: the cost is in the CI report too; a function target reports none, so it is unknown, never $0
    assert lines[-2] == "::notice title=cogeval cost::cost unknown"


def test_several_kinds_go_into_a_folder(result, tmp_path):
    paths = result.report(["json", "csv", "markdown"], path=f"{tmp_path / 'out'}/")  # a folder: ends in "/"
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"{result.run_id}.json", f"{result.run_id}.csv", f"{result.run_id}.md"]


def test_unknown_kind_lists_the_choices(result):
    with pytest.raises(InputError, match=r"^kind must be one of 'console', 'json', 'csv', 'markdown', 'ci', 'html'; got 'pdf'$"):
        result.report("pdf")


def test_a_kind_of_a_wrong_type_lists_the_choices(result):
    from cogeval.present.reporters import render

    for call in (lambda: result.report(42), lambda: render(result, 42)):
        with pytest.raises(InputError, match=r"^kind must be one of 'console', 'json', 'csv', 'markdown', 'ci', 'html'; got 42$"):
            call()
