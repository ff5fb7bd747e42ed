"""`cogeval show` and `cogeval runs` print what the results and scores say (issue 23, items 4 and 6), run as a user
runs them: in a fresh subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cogeval import EvalSuite, RunStore, exact_match


def cogeval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})


def flaky(question):
    number = int(question.split()[-1])
    if number < 12:
        raise RuntimeError("service down")
    if number < 20:
        raise TimeoutError("upstream too slow")
    return "4" if number % 2 else "5"


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    cases = [{"input": f"question {i}", "expected": "4"} for i in range(50)]
    result = EvalSuite(cases, flaky, metrics=[exact_match()], progress=False, name="flaky").run()
    return result.save_run(tmp_path_factory.mktemp("runs") / "run.json"), result


def test_show_prints_the_errors_most_frequent_first(run_file):
    path, result = run_file
    done = cogeval("show", str(path))
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[1].startswith("  finished ")  # issue 25: at 80 columns the header goes on on a second line
    assert lines[2] == f"50 results, 20 errors, 0 metric errors, 50 cases, fingerprint {result.run.fingerprint[:12]}"
    start = lines.index("errors: 20 of 50 results")
    assert lines[start:start + 5] == [
        "errors: 20 of 50 results",
        "  12  RuntimeError: service down",
        "      e.g. question 0 · question 1 · question 2",
        "   8  TimeoutError: upstream too slow",
        "      e.g. question 12 · question 13 · question 14",
    ]
    assert max(len(line) for line in lines[start:]) <= 80
    # 30 answers: questions 20..49, the odd ones right: 15 of 50
    [row] = [line.split() for line in lines if line.startswith("exact_match")]
    assert float(row[1]) == pytest.approx(0.3)


def edited(path, tmp_path, **changes):
    document = json.loads(path.read_text(encoding="utf-8"))
    document["aggregated"]["exact_match"]["mean"] = changes.get("mean", 0.9)
    document["stats"]["errors"] = changes.get("errors", 20)
    target = tmp_path / "store" / path.name
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_show_computes_the_mean_from_the_scores_and_warns_about_a_hand_edit(run_file, tmp_path):
    path, result = run_file
    target = edited(path, tmp_path, mean=0.9, errors=0)
    done = cogeval("show", str(target))
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        f"cogeval: warning: run {result.run_id}: stored aggregated mean of 'exact_match' (0.9) disagrees with its "
        "scores (0.3); showing the scores' value",
        f"cogeval: warning: run {result.run_id}: stored stats.errors (0) disagrees with its results (20); "
        "showing the results' count",
    ]
    [row] = [line.split() for line in done.stdout.splitlines() if line.startswith("exact_match")]
    assert float(row[1]) == pytest.approx(0.3)
    assert done.stdout.splitlines()[2].startswith("50 results, 20 errors, ")


def test_show_of_an_unedited_file_warns_about_nothing(run_file):
    assert cogeval("show", str(run_file[0])).stderr == ""


def test_runs_lists_the_scores_mean_not_the_stored_one(run_file, tmp_path):
    path, _ = run_file
    target = edited(path, tmp_path, mean=0.9)
    done = cogeval("runs", str(target.parent))
    assert done.returncode == 0
    header, rule, row, *note = done.stdout.splitlines()  # issue 25: a rule under the header, then what is not shown
    assert set(rule) == {"─"} and note[0].startswith("not shown at 80 columns: started_at, finished_at")
    assert float(row.split()[header.split().index("exact_match")]) == pytest.approx(0.3)
    assert RunStore(target.parent).list()[0]["metrics"]["exact_match"] == pytest.approx(0.3)


def test_an_index_of_the_previous_version_is_not_trusted(run_file, tmp_path):
    path, _ = run_file
    target = edited(path, tmp_path, mean=0.9)
    store = RunStore(target.parent)
    store.list()
    index = target.parent / ".cogeval-index"
    document = json.loads(index.read_text())
    [entry] = document["runs"].values()
    entry["summary"]["metrics"]["exact_match"] = 0.9  # what version 1 cached: the stored aggregate
    index.write_text(json.dumps({**document, "version": 1}))
    assert RunStore(target.parent).list()[0]["metrics"]["exact_match"] == pytest.approx(0.3)
    assert json.loads(index.read_text())["version"] == 3
