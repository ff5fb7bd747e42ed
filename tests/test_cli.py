"""The `cogeval` command: demo, compare, runs, show, and its errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cogeval import EvalRun
from cogeval.cli import main


def write_runs(folder):
    base = EvalRun.from_frame(pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1] * 20 + [0] * 10}),
                              name="base", started_at="2026-01-01T00:00:00Z")
    head = EvalRun.from_frame(pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1] * 5 + [0] * 25}),
                              name="head", started_at="2026-01-02T00:00:00Z")
    return base.save(f"{folder}/"), head.save(f"{folder}/")


def test_compare_prints_and_fails_on_regression(tmp_path, capsys):
    base, head = write_runs(tmp_path / "runs")
    assert main(["compare", str(base), str(head), "--seed", "1"]) == 0
    assert "head is worse: worse on exact_match" in capsys.readouterr().out
    assert main(["compare", str(base), str(head), "--fail-on-regression"]) == 1
    assert "cogeval: head is worse on exact_match (deciding metrics)" in capsys.readouterr().err
    assert main(["compare", str(head), str(base), "--fail-on-regression"]) == 0


def test_compare_writes_markdown_html_and_json(tmp_path, capsys):
    base, head = write_runs(tmp_path / "runs")
    assert main(["compare", str(base), str(head), "--format", "markdown", "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report.md").read_text().startswith("#")
    assert main(["compare", str(base), str(head), "--format", "html", "--out", str(tmp_path / "report.html")]) == 0
    assert "<html" in (tmp_path / "report.html").read_text()
    capsys.readouterr()
    assert main(["compare", str(base), str(head), "--format", "json", "--seed", "3"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["winner"] == "base" and document["matched"] == 30
    [row] = document["metrics"]
    # 15 cases went 1 -> 0 and none 0 -> 1: exact McNemar p = 2 * 0.5**15 (R: binom.test(0, 15))
    assert row["test"] == "mcnemar-exact" and row["p_value"] == pytest.approx(2 * 0.5**15)


def test_compare_takes_a_store_folder_for_its_newest_run(tmp_path, capsys):
    base, _ = write_runs(tmp_path / "runs")
    assert main(["compare", str(base), str(tmp_path / "runs"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["head"]["name"] == "head"


def test_runs_and_show(tmp_path, capsys):
    write_runs(tmp_path / "runs")
    (tmp_path / "runs" / "broken.json").write_text('{"format": "cogitator.eval-run", "runId": ')
    assert main(["runs", str(tmp_path / "runs")]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["id", "name"] and "head" in lines[1] and "base" in lines[2]
    assert "skipped" in err and "broken.json" in err and "not valid JSON" in err
    assert main(["show", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "name head" in out and "exact_match" in out


def test_bad_input_is_one_line_on_stderr_and_status_2(tmp_path, capsys):
    assert main(["show", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.startswith("cogeval: error: ")
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert main(["show", str(tmp_path / "bad.json")]) == 2
    assert "must hold a JSON object" in capsys.readouterr().err
    assert main(["show", str(tmp_path)]) == 2
    assert "no run files in folder" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_writes_runs_and_reports(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "demo"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert len(list((tmp_path / "demo" / "runs").glob("*.json"))) == 2
    html = (tmp_path / "demo" / "comparison.html").read_text()
    assert "assistant-v2" in html and "exact_match" in html
    assert '<section class="figure" id="forest-plot">' in html and html.count("Plotly.newPlot(") == 1  # the chart, offline
    assert "HTML report:" in out and str(tmp_path / "demo" / "comparison.html") in out
