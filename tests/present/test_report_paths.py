"""One path rule for every report writer (suite and comparison), :func:`cogeval._files.report_paths`:
a path without the kind's suffix gets it, one with it keeps it, a path ending in ``/`` (or an existing
folder) is a folder that receives a default file name; and the outputs of ``cogeval demo``, ``cogeval
report`` and ``cogeval compare`` are git-ignored."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from cogeval import EvalSuite, compare_runs, exact_match

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result():
    cases = [{"input": "a", "expected": "a"}, {"input": "b", "expected": "c"}]
    return EvalSuite(cases, lambda q: q, metrics=[exact_match()], progress=False).run()


@pytest.fixture(scope="module")
def comparison(result):
    return compare_runs(result, result, seed=0)


def _suite(result, comparison):
    return result.report, result.run_id, {"html": ".html", "json": ".json", "markdown": ".md"}


def _comparison(result, comparison):
    return comparison.report, "eval-comparison", {"html": ".html", "markdown": ".md"}


WRITERS = pytest.mark.parametrize("writer", [_suite, _comparison], ids=["suite", "comparison"])


@WRITERS
@pytest.mark.parametrize("kind", ["html", "markdown"])
def test_a_path_without_the_suffix_gets_it(writer, kind, result, comparison, tmp_path):
    report, _, suffixes = writer(result, comparison)
    assert report(kind, tmp_path / "out" / "suite") == [str(tmp_path / "out" / f"suite{suffixes[kind]}")]
    assert [p.name for p in (tmp_path / "out").iterdir()] == [f"suite{suffixes[kind]}"]


@WRITERS
@pytest.mark.parametrize("kind", ["html", "markdown"])
def test_a_path_with_the_suffix_keeps_it(writer, kind, result, comparison, tmp_path):
    report, _, suffixes = writer(result, comparison)
    path = tmp_path / f"report{suffixes[kind]}"
    assert report(kind, path) == [str(path)]
    assert path.read_text(encoding="utf-8")


@WRITERS
def test_a_path_with_another_dot_gets_the_suffix_after_it(writer, result, comparison, tmp_path):
    report, _, _ = writer(result, comparison)
    assert report("html", str(tmp_path / "nightly.v1.2")) == [str(tmp_path / "nightly.v1.2.html")]


@WRITERS
def test_a_path_ending_in_a_slash_is_a_folder_with_the_default_name(writer, result, comparison, tmp_path):
    report, name, _ = writer(result, comparison)
    written = report(["markdown", "html"], f"{tmp_path / 'reports'}/")
    assert written == [str(tmp_path / "reports" / f"{name}.md"), str(tmp_path / "reports" / f"{name}.html")]
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == [f"{name}.html", f"{name}.md"]


@WRITERS
def test_an_existing_folder_is_a_folder(writer, result, comparison, tmp_path):
    report, name, _ = writer(result, comparison)
    assert report("html", tmp_path) == [str(tmp_path / f"{name}.html")]


@WRITERS
def test_several_kinds_share_one_stem(writer, result, comparison, tmp_path):
    report, _, _ = writer(result, comparison)
    assert report(["markdown", "html"], tmp_path / "out" / "report.html") == [
        str(tmp_path / "out" / "report.md"), str(tmp_path / "out" / "report.html")]


def test_the_suite_s_other_kinds_follow_the_rule(result, tmp_path):
    written = result.report(["json", "csv", "console", "ci"], tmp_path / "run")
    assert [pathlib.Path(p).name for p in written] == ["run.json", "run.csv", "run.console.txt", "run.ci.txt"]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and the repository")
def test_the_commands_outputs_are_git_ignored():
    outputs = ["cogeval-demo/comparison.html", "cogeval-demo/runs/20261022T101530123Z-1a2b3c4d.json",
               "exports/quickstart.html", "eval-comparison.md", "eval-comparison.html", "out/suite.html",
               "artifacts/browser/run-explorer.png"]
    # read-only: --no-index asks .gitignore alone, whatever the index holds
    done = subprocess.run(["git", "check-ignore", "--no-index", *outputs], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert done.stdout.splitlines() == outputs, done.stderr


@pytest.mark.parametrize(("out", "written"), [
    ("report", "report.json"), ("report.json", "report.json"), ("report.md", "report.json"),
    ("nightly.v1.2", "nightly.v1.2.json"), ("reports/", "reports/eval-comparison.json"),
])
def test_compare_s_json_follows_the_rule(result, tmp_path, capsys, out, written):
    from cogeval.cli import main

    run = result.run.save(tmp_path / "run.json")
    assert main(["compare", str(run), str(run), "--format", "json", "--out", f"{tmp_path}/{out}"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == str(tmp_path / written)
    assert (tmp_path / written).read_text(encoding="utf-8").startswith("{")


@pytest.mark.slow
@pytest.mark.parametrize(("out", "written"), [("page", "page.html"), ("page.html", "page.html"), ("pages/", "pages/nb.html")])
def test_export_html_follows_the_rule(tmp_path, out, written):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from cogeval.present.notebook import export_html

    nbformat.write(new_notebook(cells=[new_code_cell("print(6 * 7)")]), tmp_path / "nb.ipynb")
    assert export_html(tmp_path / "nb.ipynb", f"{tmp_path}/{out}") == tmp_path / written
    assert "<pre>42\n</pre>" in (tmp_path / written).read_text(encoding="utf-8")
