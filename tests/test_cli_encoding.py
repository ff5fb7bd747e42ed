"""Issue 35: every CLI command survives a stdout that is not UTF-8 (cp1252 on a redirected Windows console, ASCII
under a bare locale): what the encoding lacks is printed as '?', and the command's work and exit status stand."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cogeval import EvalSuite, RunStore, exact_match, latency
from cogeval.examples import assistant_v1, assistant_v2, questions


def cli(encoding, *args):
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, timeout=120,
                          env={"COLUMNS": "80", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": encoding})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    store, parts = RunStore(folder / "runs"), RunStore(folder / "shards")
    for name, target in (("v1 – «old»", assistant_v1), ("v2 – «new»", assistant_v2)):
        suite = EvalSuite(questions()[:40], target, metrics=[exact_match()], statistical_metrics=[latency()],
                          progress=False, name=name)
        store.save(suite.run())
        for i in range(2 if name.startswith("v2") else 0):
            parts.save(suite.run(shard=(i, 2)))
    return folder


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_every_command_prints_what_it_can_and_keeps_its_status(folder, encoding):
    runs = sorted((folder / "runs").glob("*.json"))
    merged = folder / f"merged-{encoding}"
    shards = sorted(str(p) for p in (folder / "shards").glob("*.json"))
    for args, status in ((["runs", str(folder / "runs")], 0), (["show", str(runs[0])], 0),
                         (["compare", str(runs[0]), str(runs[1])], 0),
                         (["compare", str(runs[0]), str(runs[1]), "--format", "markdown", "--out", str(folder)], 0),
                         (["merge", *shards, "--out", str(merged)], 0), (["show", str(folder / "nothing")], 2)):
        done = cli(encoding, *args)
        assert (done.returncode, b"Traceback" in done.stderr) == (status, False), (args, done.stderr)
        assert done.stdout or done.stderr
        assert "α".encode(encoding, errors="replace") in done.stdout or args[0] != "compare" or "--out" in args
    assert len(list(merged.glob("*.json"))) == 1
    listed = cli(encoding, "runs", str(folder / "runs")).stdout.decode(encoding)
    assert "v1 ? ?old?" in listed or "v1 – «old»" in listed  # cp1252 has – and «: only ascii replaces them
    assert ("v1 – «old»" in listed) == (encoding == "cp1252")
