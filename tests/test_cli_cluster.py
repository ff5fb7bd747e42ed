"""``cogeval compare A B --cluster FIELD`` in a fresh process, as a user (or a CI job) runs it: every format says
the cases were clustered, by what, how many clusters and the design effect; without ``--cluster`` none does."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len

from cogeval import EvalRun, compare_runs
from cogeval._numbers import count, number

ROOT = str(pathlib.Path(__file__).parent.parent)
UNITS = "(whole clusters are the independent units of the tests and intervals)"


def cogeval(*args: str, columns: int = 80, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess[str]:
    """``cogeval`` in a fresh process, its output through a pipe (what CI logs get), ``COLUMNS`` set."""
    done = subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": str(columns), "PYTHONPATH": ROOT}, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Two run files of 12 passages × 4 questions (``passage`` is case metadata): a graded and a 0/1 metric whose
    questions on one passage move together."""
    rng = np.random.default_rng(3)
    passages = [f"passage-{p:02d}" for p in range(12) for _ in range(4)]
    shift = {p: rng.normal(0.1, 0.3) for p in sorted(set(passages))}
    inputs = [f"question {i} on {p}" for i, p in enumerate(passages)]
    quality = rng.uniform(0.2, 0.8, 48)
    frames = {
        "v1": {"quality": quality, "exact_match": (rng.random(48) < 0.5).astype(float)},
        "v2": {"quality": np.clip(quality + [shift[p] for p in passages] + rng.normal(0, 0.05, 48), 0, 1),
               "exact_match": np.array([float(rng.random() < np.clip(0.5 + shift[p], 0, 1)) for p in passages])},
    }
    folder = tmp_path_factory.mktemp("runs")
    runs, paths = [], []
    for day, (name, scores) in enumerate(frames.items(), start=1):
        run = EvalRun.from_frame(pd.DataFrame({"input": inputs, "passage": passages, **scores}), name=name,
                                 directions={"quality": True, "exact_match": True},
                                 started_at=f"2026-01-0{day}T00:00:00Z")
        runs.append(run)
        paths.append(str(run.save(f"{folder}/")))
    return runs, paths


def expected_line(comparison) -> str:
    effect = max(m.design_effect for m in comparison.metrics.values() if m.role == "decides")
    return (f"Clustered by passage: {count(comparison.clusters)} clusters of {count(comparison.matched)} cases; "
            f"design effect up to {number(effect)} {UNITS}")


def test_compare_cluster_prints_it_at_80_columns(saved):
    runs, paths = saved
    comparison = compare_runs(*runs, cluster="passage")
    assert comparison.clusters == 12 and comparison.matched == 48
    lines = cogeval("compare", *paths, "--cluster", "passage").stdout.splitlines()
    assert max(map(cell_len, lines)) <= 80
    assert expected_line(comparison) in " ".join(" ".join(lines).split())
    start = next(n for n, line in enumerate(lines) if line.startswith("Clustered by passage: 12 clusters of 48 cases"))
    assert start <= 3  # under the headline (which wraps at 80 columns)
    effects = ", ".join(f"{name} {number(m.design_effect)}" for name, m in comparison.metrics.items())
    assert f"design effect: {effects}" in " ".join(" ".join(lines).split())


def test_compare_cluster_wide_has_the_columns(saved):
    runs, paths = saved
    comparison = compare_runs(*runs, cluster="passage")
    lines = cogeval("compare", *paths, "--cluster", "passage", "--wide").stdout.splitlines()
    assert expected_line(comparison) in lines
    columns = re.split(r"\s{2,}", next(line for line in lines if line.startswith("metric ")).strip())
    assert columns[4:6] == ["n", "clusters"] and columns[columns.index("effect size") + 1] == "design effect"
    for name, m in comparison.metrics.items():
        [row] = [line for line in lines if line.startswith(f"{name} ↑ ")]
        cells = dict(zip(columns, re.split(r"\s{2,}", row.strip()), strict=True))
        assert (cells["n"], cells["clusters"], cells["design effect"]) == ("48", "12", number(m.design_effect))
        assert cells["n needed"] == f"{count(m.n_needed)} ({count(m.clusters_needed)} clusters)"


def test_compare_cluster_json_and_markdown(saved, tmp_path):
    runs, paths = saved
    comparison = compare_runs(*runs, cluster="passage")
    document = json.loads(cogeval("compare", *paths, "--cluster", "passage", "--format", "json").stdout)
    assert (document["cluster"], document["clusters"]) == ("passage", 12)
    for row in document["metrics"]:
        m = comparison.metrics[row["metric"]]
        assert (row["clusters"], row["clusters_needed"], row["test"]) == (12, m.clusters_needed, m.test)
        assert row["design_effect"] == pytest.approx(m.design_effect)
    assert document["headline"].endswith(f"cases clustered by passage: 12 clusters, design effect up to "
                                         f"{number(max(m.design_effect for m in comparison.metrics.values()))}")
    cogeval("compare", *paths, "--cluster", "passage", "--format", "markdown", "--out", str(tmp_path / "report"))
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert expected_line(comparison).replace("by passage", "by **passage**") in text.splitlines()


def test_compare_without_cluster_says_nothing_of_clusters(saved):
    _, paths = saved
    out = cogeval("compare", *paths).stdout
    assert "Clustered by" not in out and "design effect:" not in out
    assert "cluster='passage'" in " ".join(out.split())  # the warning names the field that clusters the cases
    document = json.loads(cogeval("compare", *paths, "--format", "json").stdout)
    assert (document["cluster"], document["clusters"]) == (None, None)
