"""`cogeval compare` gates that fail safe (issue 23, item 5), run as a user runs them: in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd

from cogeval import EvalRun
from cogeval.cli import EXIT_NOT_COMPARED, EXIT_REGRESSION


def cogeval(*args, cwd):
    env = {**os.environ, "COLUMNS": "1000"}  # one line per warning
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120)


def saved(folder, inputs, scores, name, started_at):
    run = EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": scores}), name=name, started_at=started_at)
    return run, run.save(f"{folder}/")


def test_no_matched_case_fails_the_regression_gate_with_status_2(tmp_path):
    saved(tmp_path / "runs", [f"q{i}" for i in range(30)], [1] * 30, "base", "2026-01-01T00:00:00Z")
    saved(tmp_path / "other", [f"other {i}" for i in range(30)], [0] * 30, "head", "2026-01-02T00:00:00Z")
    warning = ("warning: No case of base matched a case of head: the base run has 30 case(s) and the head run 30, "
               "none with the same case key (input, turns and expected), so nothing was compared and the verdict is "
               "inconclusive")
    plain = cogeval("compare", "runs", "other", cwd=tmp_path)
    assert plain.returncode == 0 and warning in plain.stdout.splitlines()
    gated = cogeval("compare", "runs", "other", "--fail-on-regression", cwd=tmp_path)
    assert gated.returncode == EXIT_NOT_COMPARED == 2
    assert gated.stderr == ("cogeval: no case of base matched a case of head, so nothing was compared and "
                            "--fail-on-regression cannot pass it\n")
    document = json.loads(cogeval("compare", "runs", "other", "--format", "json", cwd=tmp_path).stdout)
    assert (document["matched"], document["verdict"]) == (0, "inconclusive")
    assert document["warnings"][0] == warning.removeprefix("warning: ")


def test_a_regression_still_exits_1(tmp_path):
    _, base = saved(tmp_path / "a", [f"q{i}" for i in range(30)], [1] * 30, "base", "2026-01-01T00:00:00Z")
    _, head = saved(tmp_path / "b", [f"q{i}" for i in range(30)], [1] * 5 + [0] * 25, "head", "2026-01-02T00:00:00Z")
    gated = cogeval("compare", str(base), str(head), "--fail-on-regression", cwd=tmp_path)
    assert gated.returncode == EXIT_REGRESSION == 1
    assert gated.stderr == "cogeval: head is worse on exact_match (deciding metrics)\n"


def test_comparing_a_store_folder_with_itself_warns(tmp_path):
    saved(tmp_path / "runs", [f"q{i}" for i in range(30)], [1] * 20 + [0] * 10, "old", "2026-01-01T00:00:00Z")
    newest, _ = saved(tmp_path / "runs", [f"q{i}" for i in range(30)], [1] * 25 + [0] * 5, "new",
                      "2026-01-02T00:00:00Z")
    warning = (f"The base and the head run are the same run ({newest.run_id!r}): a run compared with itself shows "
               "no difference; compare it with another run")
    console = cogeval("compare", "runs/", "runs/", "--fail-on-regression", cwd=tmp_path)
    assert console.returncode == 0 and console.stderr == ""
    assert f"warning: {warning}" in console.stdout.splitlines()
    as_json = cogeval("compare", "runs/", "runs/", "--format", "json", cwd=tmp_path)
    assert as_json.returncode == 0 and as_json.stderr == f"cogeval: warning: {warning}\n"
    document = json.loads(as_json.stdout)
    assert document["base"]["run_id"] == document["head"]["run_id"] == newest.run_id
    assert document["warnings"][0] == warning
