"""Names are inert in every report, and writing a report never fails (docs/reports.md, "Case text is never trusted")."""

from __future__ import annotations

import json
import pathlib
import re

import pandas as pd
import pytest

from cogeval import EvalRun, EvalSuite, InputError, compare_runs, exact_match, metric, threshold
from cogeval._text import WORD_JOINER as J
from cogeval.present.comparison_report import comparison_html, comparison_markdown, report_comparison
from cogeval.present.reporters import KINDS, render, write_reports

NAME = "x\x1b[31m::error::pwned @alice #1 [/]"
SHOWN = "x\\x1b[31m::error::pwned @alice #1 [/]"  # how a terminal shows it
MARKDOWN = f"x\\\\x1b\\[31m::error::pwned @{J}alice #{J}1 \\[/\\]"  # how Markdown writes it
METRIC = "::warning::m @bob"


def inert_for_a_terminal(text: str, *, ours: tuple[str, ...] = ()) -> None:
    """No escape character and no line a GitHub runner would read as a workflow command (but ``ours``)."""
    assert "\x1b" not in text and "\x9b" not in text
    commands = [line for line in re.split(r"\r\n|\r|\n", text) if line.lstrip().startswith("::") or "##[" in line]
    assert all(line.startswith(ours) for line in commands), commands


@pytest.fixture(scope="module")
def result():
    hostile = metric(METRIC)(lambda output, case: 1.0)
    return EvalSuite(
        [{"input": "a", "expected": "a"}, {"input": "b \x1b]0;title\x07", "expected": "b"}],
        lambda q: "a" if q == "a" else "half \ud83d",
        metrics=[exact_match(), hostile], assertions=[threshold("exact_match", 0.9, name=NAME)],
        progress=False, name=NAME,
    ).run()


def test_console_report_shows_the_name_with_its_escapes_and_reads_no_markup(result, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    text = render(result, "console")
    assert text.splitlines()[0] == f"{SHOWN} · run {result.run_id}" and text.splitlines()[1].startswith("2 results")
    assert f"FAIL  {SHOWN}: exact_match mean 0.5 < 0.9" in text
    # issue 25: the metric's name starts its table row (no border before it), so its "::" is defused
    assert next(line for line in text.splitlines() if "::warning::m @bob" in line).startswith("\\::warning::m @bob  ")
    inert_for_a_terminal(text)


def test_markdown_report_pings_nobody_and_links_no_issue(result):
    lines = render(result, "markdown").splitlines()
    assert lines[0] == f"### {MARKDOWN} — run `{result.run_id}`"
    assert f"| ::warning::m @{J}bob | higher | 1 | 1 | 1 | 2 | 0 |" in lines
    assert lines[-1].startswith(f"| {MARKDOWN} | ✗ fail | ")


def test_ci_report_escapes_its_annotations_by_githubs_rules(result):
    lines = render(result, "ci").splitlines()
    assert lines[0] == "::notice title=cogeval::2 results, 0 errors, 0 metric errors; exact_match 0.5; ::warning::m @bob 1"
    assert lines[1] == ("::error title=Assertion failed%3A x\\x1b[31m%3A%3Aerror%3A%3Apwned @alice #1 [/]::"
                        "exact_match mean 0.5 < 0.9 (must be >= 0.9; higher is better)")
    inert_for_a_terminal("\n".join(lines), ours=("::notice title=cogeval::", "::error title=Assertion failed%3A ",
                                                            "::notice title=cogeval cost::"))


def test_json_report_keeps_the_data_exactly_and_escapes_it(result):
    text = render(result, "json")
    assert "\x1b" not in text and "\\u001b" in text and '"half \\ud83d"' in text
    document = json.loads(text)
    assert document["name"] == NAME
    assert document["results"][1]["output"] == "half \ud83d"
    assert document["results"][1]["case"]["input"] == "b \x1b]0;title\x07"


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_prints_inert_and_writes_without_failing(result, kind, capsys, tmp_path):
    assert write_reports(result, kind) == []
    inert_for_a_terminal(capsys.readouterr().out, ours=("::notice title=cogeval::", "::error title=", "::notice title=cogeval cost::"))
    [path] = write_reports(result, kind, tmp_path / f"report{KINDS[kind]}")
    pathlib.Path(path).read_text(encoding="utf-8")  # valid UTF-8: a lone surrogate is written as \ud83d


def test_printed_csv_shows_escapes_and_the_file_keeps_the_data(result, capsys, tmp_path):
    write_reports(result, "csv")
    out = capsys.readouterr().out
    assert "b \\x1b]0;title\\x07" in out and "half \\ud83d" in out
    [path] = write_reports(result, "csv", tmp_path / "r.csv")
    frame = pd.read_csv(path)
    assert frame["input"].tolist() == ["a", "b \x1b]0;title\x07"]
    assert frame["output"].tolist() == ["a", "half \\ud83d"]  # UTF-8 cannot hold half an emoji: its escape


class Renamed:
    """A suite result with another run id."""

    def __init__(self, result, run_id):
        self._result, self.run_id = result, run_id

    def __getattr__(self, name):
        return getattr(self._result, name)


@pytest.mark.parametrize("run_id", ["20261022T101530123Z-1a2b3c4d\n", "../../etc/x"])
def test_the_run_id_is_checked_before_it_names_a_file(result, run_id, tmp_path):
    with pytest.raises(InputError, match=r"^run_id must look like '20261022T101530123Z-1a2b3c4d'"):
        write_reports(Renamed(result, run_id), ["json", "markdown"], f"{tmp_path / 'out'}/")  # a folder: ends in "/"
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def comparison():
    inputs = [f"q{i}" for i in range(9)] + ["\x1b[2J::error::input @carol \ud83d"]
    inputs = pd.Series(inputs, dtype=object)  # pandas 3 with pyarrow cannot store a lone surrogate as its str dtype
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, METRIC: [1.0] * 10}), name=NAME)
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, METRIC: [1.0] * 9 + [0.0]}), name="::add-mask::head")
    return compare_runs(base, head, seed=0)


def test_comparison_console_is_inert(comparison, capsys):
    report_comparison(comparison, "console")
    out = capsys.readouterr().out
    assert f"base: {SHOWN} · {comparison.base.run_id}" in out
    assert "\\::warning::m @bob: 1 regressed" in out  # a metric name that starts a line gets a backslash
    assert "\\x1b[2J::error::input @carol \\ud83d" in out
    inert_for_a_terminal(out)


def test_comparison_markdown_is_inert(comparison):
    text = comparison_markdown(comparison)
    assert text.splitlines()[0] == f"### cogeval comparison: ::add-mask::head vs {MARKDOWN}"
    assert f"| base | {MARKDOWN} | {comparison.base.run_id} |" in text
    assert f"\\\\x1b\\[2J::error::input @{J}carol \\\\ud83d" in text
    assert "@alice" not in text and "#1 " not in text and "@bob" not in text


def test_comparison_html_escapes_and_shows_controls(comparison, tmp_path):
    page = comparison_html(comparison)
    assert "\x1b" not in page and "x\\x1b[31m::error::pwned @alice #1 [/]" in page
    [path] = report_comparison(comparison, "html", tmp_path / "c.html")
    assert "\\x1b[2J::error::input @carol \\ud83d" in pathlib.Path(path).read_text(encoding="utf-8")
