"""Issue 34, items 1 and 2a: a direction nobody gave is never assumed in silence, and a run that failed on many
cases says so in its warnings and headline.

The table: 300 cases, ``correct`` the same in both versions, ``latency_s`` 10 % higher in v2. Read as the columns
of a CSV, without ``directions``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, compare_frames, compare_runs, load_run

N = 300
COST = ("Metric 'latency_s' has no direction given and its name reads as a cost, so it informs and does not decide "
        "the verdict (its row reads higher as better); to make it decide, give its direction: "
        "directions={'latency_s': False} if lower is better, True if higher is (or name it in decide_on= to let it "
        "decide as higher-is-better)")
CORRECT = ("No direction was given for metric 'correct': it was taken as higher-is-better (give "
           "directions={'correct': False} if lower is better)")


def table(head_correct=None) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    correct = (rng.random(N) < 0.7).astype(float)
    latency = rng.uniform(0.8, 1.2, N)
    return pd.concat([
        pd.DataFrame({"id": range(N), "version": "v1", "correct": correct, "latency_s": latency}),
        pd.DataFrame({"id": range(N), "version": "v2", "correct": correct if head_correct is None else head_correct,
                      "latency_s": latency * 1.1})])


def compare(frame, **options):
    return compare_frames(frame, by="version", base="v1", head="v2", case="id", **options)


def roles(comparison):
    return {m.metric: (m.role, m.verdict, m.direction_assumed) for m in comparison.metrics.values()}


def test_a_slower_head_is_not_better_on_latency_when_no_direction_is_given():
    c = compare(table())
    assert roles(c) == {"correct": ("decides", "inconclusive", True), "latency_s": ("informs", "better", True)}
    assert c.verdict == "inconclusive" and "better on latency_s" not in c.headline()
    assert c.headline() == ("inconclusive: no deciding metric is shown better, worse or equivalent (α = 0.05, 300 "
                            "matched cases); not deciding, no direction given: latency_s")
    assert c.warnings[:2] == [COST, CORRECT]
    assert c.to_frame()["direction_assumed"].tolist() == [True, True]


def test_a_given_direction_decides_and_nothing_is_said_of_it():
    c = compare(table(), directions={"correct": True, "latency_s": False})
    assert roles(c) == {"correct": ("decides", "inconclusive", False), "latency_s": ("decides", "worse", False)}
    assert c.headline() == "head is worse: worse on latency_s (α = 0.05, 300 matched cases)"
    assert not any("direction" in w for w in c.warnings)


def test_decide_on_lets_a_cost_named_metric_decide_as_assumed_and_the_headline_says_so():
    c = compare(table(), decide_on=["correct", "latency_s"])
    assert roles(c)["latency_s"] == ("decides", "better", True)
    assert c.headline() == ("head is better: better on latency_s (α = 0.05, 300 matched cases); assumed "
                            "higher-is-better (no direction given): latency_s")
    assert ("No direction was given for metrics 'correct', 'latency_s': they were taken as higher-is-better (give "
            "directions={'correct': False} if lower is better)") in c.warnings and COST not in c.warnings


def test_a_verdict_that_rests_on_an_assumed_direction_names_it():
    head = table()["correct"].to_numpy()[:N].copy()
    head[np.flatnonzero(head == 0)[:40]] = 1.0  # 40 cases go 0 -> 1
    c = compare(table(head), directions={"latency_s": False}, decide_on=["correct"])
    # R: mcnemar.test(matrix(c(212, 0, 40, 48), 2))$p.value = 6.984393e-10 (chi-square 38.025, continuity corrected)
    assert c.metrics["correct"].p_value == pytest.approx(6.984393e-10, rel=1e-6)
    assert c.headline() == ("head is better: better on correct (α = 0.05, 300 matched cases); assumed "
                            "higher-is-better (no direction given): correct")
    assert CORRECT in c.warnings


def runs_from_table(frame, **options):
    return [EvalRun.from_frame(frame[frame["version"] == v].rename(columns={"id": "input"})
                               .assign(input=lambda f: f["input"].astype(str)).drop(columns="version"), **options)
            for v in ("v1", "v2")]


def test_from_frame_records_the_assumption_in_the_file_and_compare_runs_takes_directions(tmp_path):
    base, head = runs_from_table(table())
    assert [(m.name, m.higher_is_better, m.direction_assumed) for m in base.config.metrics] == [
        ("correct", True, True), ("latency_s", True, True)]
    paths = [run.save(f"{tmp_path}/") for run in (base, head)]
    details = json.loads(paths[0].read_text())["config"]["metricDetails"]
    assert [d.get("directionAssumed") for d in details] == [True, True]
    # read back in a fresh process, as a user's script reads it
    script = ("import sys, cogeval; b, h = map(cogeval.load_run, sys.argv[1:]); c = cogeval.compare_runs(b, h); "
              "print([m.direction_assumed for m in b.config.metrics]); print(c.headline())")
    out = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[True, True]", "inconclusive: no deciding metric is shown better, worse or equivalent (α = 0.05, 300 matched "
        "cases); not deciding, no direction given: latency_s"]
    c = compare_runs(*map(load_run, paths), directions={"correct": True, "latency_s": False})
    assert roles(c)["latency_s"] == ("decides", "worse", False)
    assert c.headline() == "head is worse: worse on latency_s (α = 0.05, 300 matched cases)"
    given = runs_from_table(table(), directions={"correct": True, "latency_s": False})
    assert not any(m.direction_assumed for m in given[0].config.metrics)


def test_the_formats_own_example_names_its_metrics_without_direction():
    from pathlib import Path

    run = load_run(Path(__file__).parents[2] / ".." / "shared" / "formats" / "eval-run-example.json")
    assert [(m.name, m.higher_is_better, m.direction_assumed) for m in run.config.metrics] == [
        ("exactMatch", True, True), ("faithfulness", True, True)]


def test_a_head_that_failed_on_a_fifth_of_the_cases_says_so_first():
    frame = table()
    base, head = runs_from_table(frame, directions={"correct": True, "latency_s": False})
    failed = head.to_frame().assign(error=[("503 Service Unavailable" if i % 5 == 0 else None) for i in range(N)])
    head = EvalRun.from_frame(failed.drop(columns=["case_key"], errors="ignore")[["input", "correct", "latency_s",
                                                                                   "error"]],
                              directions={"correct": True, "latency_s": False})
    c = compare_runs(base, head, decide_on=["correct"])
    assert c.n_errored_head == 60 and c.n_errored_base == 0
    assert c.warnings[0] == (
        "The head run's target failed on 60 of the 300 matched cases (20%): they score 0 on higher-is-better metrics "
        "and are left out of lower-is-better ones, so the verdict counts those failures; see .errored for the cases")
    assert c.headline().endswith("; 60 of 300 cases errored in head, scored 0")
    # the 60 failed cases score 0: the 45 of them right in base count against head
    right = frame["correct"][:N]
    assert int(right[::5].sum()) == 45
    assert c.verdict == "worse" and c.metrics["correct"].head == pytest.approx((right.sum() - 45) / N)


def test_every_report_marks_an_assumed_direction_and_says_what_the_mark_means(capsys, monkeypatch):
    from cogeval import comparison_html, comparison_markdown, report_comparison

    c = compare(table())
    monkeypatch.setenv("COLUMNS", "80")
    report_comparison(c, "console")
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines if line.startswith(("correct ↑", "latency_s "))] == [
        ["correct", "↑?", "0"], ["latency_s", "(s)", "↑?ⁱ"]]
    assert "↑?: no direction given, taken as higher-is-better" in lines
    text = comparison_markdown(c)
    assert "| correct ↑? | decides |" in text and "| latency\\_s (s) ↑? | informs |" in text
    assert "**↑?**: no direction given, taken as higher-is-better" in text
    assert "<b>↑?</b>: no direction given, taken as higher-is-better" in comparison_html(c, figure=False)
    given = comparison_markdown(compare(table(), directions={"correct": True, "latency_s": False}))
    assert "↑?" not in given and "| latency\\_s (s) ↓ |" in given
