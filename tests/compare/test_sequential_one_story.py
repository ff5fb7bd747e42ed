"""Issue 34, item 3: a sequential comparison tells one story. Its headline states the sequential decision; the
fixed-n ``comparison`` attached to it says, in its headline and so in every report, that it reanalyses the cases
run and is not the decision, and why the two differ where they do."""

from __future__ import annotations

import pytest

from cogeval import compare_sequential, comparison_markdown, contains, exact_match
from cogeval.examples import assistant_v1, assistant_v2, questions


@pytest.fixture(scope="module")
def group():
    return compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match(), contains()], method="group",
                              effect=0.1)


def test_the_group_design_leaves_contains_undecided_where_the_fixed_n_test_calls_it_better(group):
    assert group.to_frame().set_index("metric")["verdict"].to_dict() == {"exact_match": "better",
                                                                         "contains": "inconclusive"}
    assert group.comparison.metrics["contains"].verdict == "better"
    last = group.looks[group.looks["metric"] == "contains"].iloc[-1]
    assert last["n"] == 300 and abs(last["statistic"]) < last["efficacy"]


def test_its_headline_is_the_sequential_decision(group):
    assert group.headline() == (
        "head is better: better on exact_match (sequential, group-sequential design; α = 0.05, stopped at 300 cases "
        f"each side; fixed-n plan {group.planned_cases}); undecided: contains")
    assert group.headline() in group._repr_html_()


def test_the_fixed_n_comparison_says_it_is_a_reanalysis_and_why_it_differs(group):
    last = group.looks[group.looks["metric"] == "contains"].iloc[-1]
    said = ("a fixed-n reanalysis of the 300 cases run, not the sequential decision (better), where contains is "
            f"inconclusive (z = {last['statistic']:.4g} within ±{last['efficacy']:.4g} at the last look): the design "
            "splits α over the metrics and spends it over its looks, so its bounds are stricter than a fixed-n test")
    assert group.comparison.reanalysis == said
    assert group.comparison.headline().startswith("head is better: better on exact_match, contains (α = 0.05, 300 "
                                                  f"matched cases); {said}")
    assert said.replace("_", "\\_") in comparison_markdown(group.comparison)


def test_a_confidence_sequence_that_agrees_still_says_the_comparison_is_not_the_decision():
    r = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], margin=0.1)
    assert r.headline() == ("head is better: better on exact_match (sequential, planned confidence sequences; "
                            "α = 0.05, stopped at 80 cases each side; fixed-n plan 342)")
    assert r.comparison.headline() == ("head is better: better on exact_match (α = 0.05, 80 matched cases); a fixed-n "
                                       "reanalysis of the 80 cases run, not the sequential decision (better)")
