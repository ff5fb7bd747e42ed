"""Issue 34, item 4: a folder of shard runs is named as such by `cogeval runs`, `show` and `compare` (in a fresh
process, as a user's shell runs them), not "no run files"; --shards takes them as runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cogeval import EvalSuite, RunStore, exact_match, merge_runs
from cogeval.examples import assistant_v2, questions

SAID = "3 shard runs (shards 0, 1, 3 of 4); merge them with `cogeval merge`, or pass --shards"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    store = RunStore(folder)
    suite = EvalSuite(questions(), assistant_v2, metrics=[exact_match()], progress=False, name="v2")
    runs = [suite.run(shard=(i, 4)) for i in range(4)]
    for run in (runs[0], runs[1], runs[3]):
        store.save(run)
    return folder, runs


def test_runs_says_the_folder_holds_shard_runs_and_lists_them_with_shards(shards):
    folder, _ = shards
    done = cli("runs", str(folder))
    assert (done.returncode, done.stdout, done.stderr) == (0, f"no runs in {folder}; it holds {SAID}\n", "")
    listed = cli("runs", str(folder), "--shards")
    assert listed.returncode == 0
    names = [line.split()[1:5] for line in listed.stdout.splitlines() if line.startswith("2")]
    assert names == [["v2", "(shard", "3", "of"], ["v2", "(shard", "1", "of"], ["v2", "(shard", "0", "of"]]


def test_show_and_compare_say_so_and_exit_2_and_take_the_shards_with_shards(shards):
    folder, runs = shards
    for command in (["show", str(folder)], ["compare", str(folder), str(folder)]):
        done = cli(*command)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"cogeval: error: {str(folder)!r} holds {SAID}\n")
    shown = cli("show", str(folder), "--shards")
    newest = max((runs[0], runs[1], runs[3]), key=lambda r: r.started_at)
    assert shown.returncode == 0 and shown.stdout.startswith(f"run {newest.run_id}")
    assert f"{len(newest.results)} results" in shown.stdout


def test_a_folder_with_the_merged_run_lists_it_and_counts_the_shards_beside(shards, tmp_path):
    _, runs = shards
    store = RunStore(tmp_path)
    for run in runs:
        store.save(run)
    merged = merge_runs([r.run for r in runs])
    store.save(merged)
    lines = cli("runs", str(tmp_path)).stdout.splitlines()
    assert lines[2].startswith(merged.run_id) and len([line for line in lines if line.startswith("2")]) == 1
    assert lines[-1] == "and 4 shard runs (shards 0, 1, 2, 3 of 4); --shards lists them"
    assert cli("show", str(tmp_path)).stdout.startswith(f"run {merged.run_id}")
