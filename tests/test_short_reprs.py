"""Reprs are one summary line, never the results (issue 25 item 4): print(store.runs()) stays readable."""

from __future__ import annotations

import pandas as pd
from rich.pretty import pretty_repr

from cogeval import EvalSuite, RunStore, compare_runs, exact_match
from cogeval.data import EvalRun


def _run(columns: int, cases: int = 300) -> EvalRun:
    frame = pd.DataFrame({"input": [f"question {i} " * 20 for i in range(cases)],
                          **{f"metric_{m}": [float(i % 2) for i in range(cases)] for m in range(columns)}})
    return EvalRun.from_frame(frame, run_id="20260101T000000000Z-00000000", started_at="2026-01-01T00:00:00Z")


def test_a_run_of_300_cases_is_one_short_line_in_repr_str_and_rich():
    run = _run(2)
    expected = ("EvalRun(run_id='20260101T000000000Z-00000000', name=None, cases=300, results=300, "
                "metrics=['metric_0', 'metric_1'])")
    assert repr(run) == str(run) == expected
    assert len(pretty_repr(run)) < 200


def test_many_metrics_are_counted_not_listed():
    assert repr(_run(20, cases=4)).endswith(
        "metrics=['metric_0', 'metric_1', 'metric_2', 'metric_3', 'metric_4', '… 20 in all'])")
    comparison = compare_runs(_run(20, cases=4), _run(20, cases=4).model_copy(update={"run_id": "20260102T000000000Z-00000000"}))
    assert "'… 20 in all']" in repr(comparison) and len(repr(comparison)) < 400


def test_a_store_and_its_runs_print_in_a_few_lines(tmp_path):
    store = RunStore(tmp_path)
    for day in (1, 2):
        EvalSuite([{"input": f"q{i}", "expected": f"q{i}"} for i in range(300)], str, metrics=[exact_match()],
                  progress=False, name=f"day {day}").run().save_run(tmp_path)
    assert repr(store) == f"RunStore({str(tmp_path)!r})"
    printed = repr(store.runs())
    assert printed.count("EvalRun(") == 2 and len(printed) < 400 and "results=300" in printed
