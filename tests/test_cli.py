"""The `cogeval` command: demo, compare, runs, show, and its errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cogeval import EvalRun
from cogeval.cli import main


def write_runs(folder):
    base = EvalRun.from_frame(pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1] * 20 + [0] * 10}),
                              directions={"exact_match": True}, name="base", started_at="2026-01-01T00:00:00Z")
    head = EvalRun.from_frame(pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1] * 5 + [0] * 25}),
                              directions={"exact_match": True}, name="head", started_at="2026-01-02T00:00:00Z")
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
    # issue 14: the counts keep clear names in the JSON, as in to_frame() (n_added, n_improved, ...)
    assert (document["n_added"], document["n_removed"], row["n_improved"], row["n_regressed"]) == (0, 0, 0, 15)


def test_compare_takes_a_store_folder_for_its_newest_run(tmp_path, capsys):
    base, _ = write_runs(tmp_path / "runs")
    assert main(["compare", str(base), str(tmp_path / "runs"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["head"]["name"] == "head"


def test_runs_and_show(tmp_path, capsys):
    write_runs(tmp_path / "runs")
    (tmp_path / "runs" / "broken.json").write_text('{"format": "cogitator.eval-run", "runId": ')
    assert main(["runs", str(tmp_path / "runs")]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()  # issue 25: the header, its rule, then one line per run
    assert lines[0].split()[:2] == ["id", "name"] and set(lines[1]) == {"─"} and "head" in lines[2] and "base" in lines[3]
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
def test_demo_writes_runs_and_reports(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["demo", "--out", str(tmp_path / "demo"), "--quiet"]) == 0
    out = capsys.readouterr().out
    # 80 columns but for the paths (a user's folder can be as long as it likes)
    assert [line for line in out.splitlines() if len(line.replace(str(tmp_path), "/tmp")) > 80] == []
    assert len(list((tmp_path / "demo" / "runs").glob("*.json"))) == 2
    html = (tmp_path / "demo" / "comparison.html").read_text()
    assert "assistant-v2" in html and "exact_match" in html
    assert '<section class="figure" id="forest-plot">' in html and html.count("Plotly.newPlot(") == 1  # the chart, offline
    assert "HTML report:" in out and str(tmp_path / "demo" / "comparison.html") in out
    # issue 15: the verdict, the compact metric table and the report paths, no changed cases
    assert len(out.splitlines()) <= 45 and "head is better" in out and "regressed" not in out


HOSTILE = "x\x1b[31m::error::pwned @alice #1 [/]"
SHOWN = "x\\x1b[31m::error::pwned @alice #1 [/]"


def assert_inert(text):
    """No escape character reaches the terminal, and no line could start a GitHub Actions workflow command."""
    assert "\x1b" not in text and "\x9b" not in text
    assert not [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def write_hostile_runs(folder):
    inputs = [f"q{i}" for i in range(30)]
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, "::warning::m": [1] * 30}), name=HOSTILE,
                              metadata={"note": "\x1b]8;;https://evil\x07link \ud83d"}, started_at="2026-01-01T00:00:00Z")
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, "::warning::m": [1] * 10 + [0] * 20}), name="::add-mask::h",
                              started_at="2026-01-02T00:00:00Z")
    return base.save(f"{folder}/"), head.save(f"{folder}/")


def test_show_runs_and_compare_print_names_inert(tmp_path, capsys):
    base, head = write_hostile_runs(tmp_path / "runs")
    assert main(["show", str(base)]) == 0
    out = capsys.readouterr().out
    # issue 25: at 80 columns the header breaks between its parts
    assert out.splitlines()[:2] == [f"run {base.stem}  name {SHOWN}", "  started 2026-01-01T00:00:00.000Z  finished "
                                    "2026-01-01T00:00:00.000Z"]
    assert out.splitlines()[3] == 'metadata {"note": "\\u001b]8;;https://evil\\u0007link \\ud83d"}'
    assert "\\::warning::m" in out  # the metric's row starts its line: defused
    assert_inert(out)
    assert main(["runs", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert f"{base.stem}  {SHOWN}  " in out and f"{head.stem}  ::add-mask::h  " in out
    assert_inert(out)
    assert main(["compare", str(base), str(head)]) == 0
    out = capsys.readouterr().out
    assert f"base: {SHOWN} · {base.stem}" in out and "head: ::add-mask::h" in out
    assert_inert(out)
    assert main(["compare", str(base), str(head), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["base"]["name"] == HOSTILE  # JSON keeps the data, escaped as JSON
    assert_inert(out)
    assert main(["compare", str(base), str(head), "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert err == "cogeval: head is worse on ::warning::m (deciding metrics)\n"


def test_skipped_files_and_errors_are_printed_inert(tmp_path, capsys):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "\x1b[2J\n::error::x.json").write_text('{"format": "cogitator.eval-run", "runId": ')
    assert main(["runs", str(folder)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("skipped ") and "\\x1b[2J\\n::error::x.json: is not valid JSON" in err
    assert len(err.splitlines()) == 1
    assert_inert(err)
    assert main(["show", str(folder / "\x1b[2J.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cogeval: error: ") and "\\x1b[2J.json" in err and len(err.splitlines()) == 1
    assert_inert(err)


FIXTURES = __import__("pathlib").Path(__file__).parent / "importers" / "fixtures"


def test_import_saves_every_run_of_another_tools_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(FIXTURES / "promptfoo" / "two-prompts.json"), "--out", "runs"]) == 0
    # issue 25: at 80 columns each path is on a line of its own, under its run
    lines = capsys.readouterr().out.replace("\n  → ", "  → ").splitlines()
    assert [line.split("  ")[1:3] for line in lines] == [["terse / echo", "10 results"], ["verbose / echo", "10 results"]]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        [".cogeval-index", *(line.rsplit("/", 1)[1] for line in lines)])  # the runs and the store's index


def test_compare_reads_other_tools_files_directly(capsys):
    assert main(["compare", str(FIXTURES / "ag2" / "mini.json"), str(FIXTURES / "ag2" / "large.json")]) == 0
    assert capsys.readouterr().out.startswith("head is better: better on brevity")


def test_a_file_of_several_runs_or_of_no_known_kind_is_one_line_and_status_2(tmp_path, capsys):
    several = str(FIXTURES / "promptfoo" / "two-prompts.json")
    assert main(["compare", several, several]) == 2
    assert capsys.readouterr().err == (f"cogeval: error: {several!r} holds 2 runs ('terse / echo', 'verbose / echo'); "
                                       f"`cogeval import {several} --out runs/` saves each as a run file to compare\n")
    other = tmp_path / "x.json"
    other.write_text('{"a": 1}')
    assert main(["import", str(other)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"cogeval: error: run file '{other}' has no 'format' field")
    assert error.endswith("(nor is it an Inspect AI log, lm-eval --log_samples JSONL, a promptfoo results.json or an "
                          "AG2 run file)\n")


@pytest.mark.parametrize("columns", [80, 120])
def test_compare_console_fits_the_terminal(tmp_path, capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    base, head = write_runs(tmp_path / "runs")
    assert main(["compare", str(base), str(head)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert lines[0] == lines[-1] == "head is worse: worse on exact_match (α = 0.05, 30 matched cases)"
    [row] = [line.split() for line in lines if line.lstrip().startswith("exact_match ↑")]
    # 15 cases went 1 -> 0: difference 5/30 - 20/30 = -0.5, exact McNemar p = 2 * 0.5**15 = 6.1e-05
    assert "-0.5" in row and "6.1e-05" in row and row[-1] == "worse"
    assert main(["compare", str(base), str(head), "--wide"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "n needed" in line)
    assert header.split()[:3] == ["metric", "role", "base"] and "effect size" in header


def test_version_and_help_for_every_argument(capsys):
    from importlib.metadata import version

    from cogeval.cli import _parser

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"cogeval {version('cogeval')}\n"
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    missing = [f"{name} {action.dest}" for name, command in commands.items() for action in command._actions
               if not action.help]
    assert missing == []


@pytest.mark.parametrize("command", [["runs"], ["show"], ["compare", "{target}"], ["report"]])
def test_a_missing_path_or_a_wrong_kind_is_status_2(tmp_path, capsys, command):
    missing = str(tmp_path / "missing")
    argv = [part.format(target=missing) for part in command]
    assert main([*argv, missing]) == 2
    error = capsys.readouterr().err
    assert (error.startswith("cogeval: error: ") and repr(missing) in error and "does not exist" in error) or (
        error == f"cogeval: error: no such file or folder: {missing!r}\n")
    (tmp_path / "notes.txt").write_text("not a run")
    wrong = str(tmp_path if command == ["report"] else tmp_path / "notes.txt")
    assert main([*argv, wrong]) == 2
    error = capsys.readouterr().err
    assert error.startswith("cogeval: error: ") and "[Errno" not in error and error.count("\n") == 1


def test_help_imports_no_pandas_plotly_or_scipy():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "cogeval.cli", "--help"],
                          capture_output=True, text=True, check=True)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert "cogeval" in imported and not imported & {"pandas", "plotly", "scipy"}


def test_an_os_error_names_the_file_without_its_errno(monkeypatch, capsys):
    def handler(args):
        raise FileNotFoundError(2, "No such file or directory", "x.json")

    monkeypatch.setattr("cogeval.cli._show", handler)
    assert main(["show", "x.json"]) == 2
    assert capsys.readouterr().err == "cogeval: error: no such file: 'x.json'\n"
