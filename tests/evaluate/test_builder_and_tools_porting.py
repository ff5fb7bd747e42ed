"""Familiar call shapes of Cogitator's evals: list arguments, ``{ fn }`` targets, ``createRunEvalTool``."""

from __future__ import annotations

import pytest

from cogeval import (
    EvalBuilder,
    EvalSuite,
    EvalTool,
    InputError,
    contains,
    create_run_eval_tool,
    exact_match,
    latency,
    threshold,
)

DATA = [{"input": "a", "expected": "a"}]


def test_builder_takes_lists_as_cogitator_does():
    # Cogitator: .withTarget({ fn }).withMetrics([exactMatch(), contains()]).withAssertions([threshold(...)])
    suite = (EvalBuilder().with_dataset(DATA).with_target({"fn": lambda q: q})
             .with_metrics([exact_match(), contains()]).with_statistical_metrics([latency()])
             .with_assertions([threshold("exact_match", 0.5)]).with_progress(False).build())
    assert [m.name for m in suite.metrics] == ["exact_match", "contains"]
    assert [m.name for m in suite.statistical_metrics] == ["latency"]
    assert len(suite.assertions) == 1
    result = suite.run()
    assert result.passed and result.results[0].output == "a"


def test_builder_still_takes_varargs_and_adds_call_after_call():
    suite = (EvalBuilder().with_dataset(DATA).with_target(str.upper)
             .with_metrics(exact_match()).with_metrics([contains()]).with_progress(False).build())
    assert [m.name for m in suite.metrics] == ["exact_match", "contains"]


def test_builder_refuses_a_timeout_under_one_millisecond():
    with pytest.raises(InputError) as error:
        EvalBuilder().with_timeout(0.0001)
    assert str(error.value) == "timeout must be at least 0.001 seconds (a shorter deadline fails every call); got 0.0001"


def test_create_run_eval_tool_is_the_run_eval_tool():
    # Cogitator's createRunEvalTool(suite) returns the run_eval tool an agent calls.
    tool = create_run_eval_tool(EvalSuite(DATA, lambda q: q, metrics=[exact_match()], progress=False))
    assert isinstance(tool, EvalTool)
    assert tool.schema["function"]["name"] == "run_eval"
    summary = tool(max_cases=1)
    assert (summary["success"], summary["total"], summary["metrics"]["exact_match"]) == (True, 1, 1.0)


def test_create_run_eval_tool_names_a_wrong_suite():
    with pytest.raises(InputError) as error:
        create_run_eval_tool("suite")
    assert str(error.value) == "suite must be an EvalSuite; got 'suite'"
