"""CSV reports never hand a spreadsheet a formula (issue 24 item 10, OWASP "CSV Injection"): a text cell
starting with ``= + - @``, a tab or a carriage return gets a leading ``'``; numbers stay numbers;
``keep_formulas=True`` writes the cells as they are."""

from __future__ import annotations

import csv

import pytest

from cogeval import EvalSuite, exact_match
from cogeval.present.reporters import spreadsheet_safe

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tTAB", "\rCR", "plain"]


def _rows(tmp_path, **options):
    suite = EvalSuite([{"input": text, "expected": text} for text in HOSTILE], lambda q: q, metrics=[exact_match()],
                      progress=False)
    [path] = suite.run().report("csv", tmp_path / "report.csv", **options)
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(("text", "safe"), [("=1", "'=1"), ("+1", "'+1"), ("-1", "'-1"), ("@x", "'@x"),
                                            ("\tx", "'\tx"), ("\rx", "'\rx"), ("x=1", "x=1"), ("", "")])
def test_a_cell_that_would_run_as_a_formula_starts_with_a_quote(text, safe):
    assert spreadsheet_safe(text) == safe


def test_the_csv_report_neutralises_every_text_cell_and_keeps_numbers(tmp_path):
    rows = _rows(tmp_path)
    assert [row["input"] for row in rows] == ["'" + t if t != "plain" else t for t in HOSTILE]
    assert [row["output"] for row in rows] == [row["input"] for row in rows]
    assert {row["exact_match"] for row in rows} == {"1.0"}  # a number cell is left as written


def test_keep_formulas_writes_cells_as_they_are(tmp_path):
    assert [row["input"] for row in _rows(tmp_path, keep_formulas=True)] == HOSTILE
