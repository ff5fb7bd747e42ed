"""Gates that fail safe (issue 23, item 5): no matched case, and a run compared with itself (docs/reports.md)."""

from __future__ import annotations

import pandas as pd

from cogeval import EvalComparison, compare_runs, exact_match
from cogeval.data import EvalRun

BASE_ID, HEAD_ID = "20260101T000000000Z-0000000a", "20260101T000000001Z-0000000b"
NO_MATCH = ("No case of base matched a case of head: the base run has 3 case(s) and the head run 2, none with the "
            "same case key (input, turns and expected), so nothing was compared and the verdict is inconclusive")


def run(inputs, scores, run_id):
    return EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": scores}), run_id=run_id)


def test_no_matched_case_is_inconclusive_with_a_warning_first():
    base, head = run(["a", "b", "c"], [1, 0, 1], BASE_ID), run(["x", "y"], [1, 1], HEAD_ID)
    c = compare_runs(base, head)
    assert (c.matched, c.verdict, c.winner, c.regressions, list(c.metrics)) == (0, "inconclusive", "tie", [], [])
    assert c.warnings[0] == NO_MATCH
    assert not any(w.startswith("No compared metric decides") for w in c.warnings)  # it follows from the first
    named = compare_runs(base, head, metrics=["exact_match"])  # asked for by name: kept with n = 0
    assert (named.verdict, named.metrics["exact_match"].n, named.metrics["exact_match"].verdict) == (
        "inconclusive", 0, "inconclusive")
    assert named.warnings[0] == NO_MATCH


def test_a_run_compared_with_itself_warns():
    base = run(["a", "b", "c"], [1, 0, 1], BASE_ID)
    c = compare_runs(base, base)
    assert c.warnings[0] == (f"The base and the head run are the same run ({BASE_ID!r}): a run compared with itself "
                             "shows no difference; compare it with another run")
    assert c.verdict == "inconclusive" and c.metrics["exact_match"].p_value == 1.0


def test_a_run_compared_with_a_copy_of_itself_warns():
    base, copy = run(["a", "b", "c"], [1, 0, 1], BASE_ID), run(["a", "b", "c"], [1, 0, 1], HEAD_ID)
    assert compare_runs(base, copy).warnings[0] == (
        f"The base run {BASE_ID!r} and the head run {HEAD_ID!r} have identical results (every output, score and "
        "timing) and configuration: a run compared with a copy of itself shows no difference")


def test_different_runs_of_the_same_cases_do_not_warn_so():
    c = compare_runs(run(["a", "b", "c"], [1, 0, 1], BASE_ID), run(["a", "b", "c"], [1, 1, 1], HEAD_ID))
    assert not any("compared with" in w for w in c.warnings)


def test_an_eval_comparison_of_two_reruns_does_not_warn_so():
    data = [{"input": f"q{i}", "expected": f"q{i}"} for i in range(4)]
    result = EvalComparison(data, targets={"baseline": str, "challenger": str}, metrics=[exact_match()],
                            progress=False).run()
    assert not any("compared with" in w for w in result.comparison.warnings)  # two runs, each with its timings
