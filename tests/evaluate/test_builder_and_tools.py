import asyncio

import pytest

from cogeval import EvalBuilder, InputError, eval_tools, exact_match, threshold


def builder():
    return (
        EvalBuilder()
        .with_dataset([{"input": "a", "expected": "a"}, {"input": "b", "expected": "c"}])
        .with_target(lambda q: q)
        .with_metrics(exact_match())
        .with_assertions(threshold("exact_match", 0.4))
        .with_concurrency(2).with_timeout(5).with_retries(1).with_trials(1)
        .with_name("echo").with_metadata({"v": 1}).with_progress(False)
    )


def test_builder_builds_a_working_suite():
    suite = builder().build()
    assert (suite.concurrency, suite.timeout, suite.retries, suite.name, suite.metadata) == (2, 5.0, 1, "echo", {"v": 1})
    assert suite.run().aggregated["exact_match"].mean == 0.5


@pytest.mark.parametrize("part", ["dataset", "target"])
def test_build_names_what_is_missing(part):
    b = EvalBuilder().with_dataset([{"input": "a"}]) if part == "target" else EvalBuilder().with_target(str)
    with pytest.raises(InputError, match=rf"^EvalBuilder needs a {part}: call \.with_{part}\(\.\.\.\) before \.build\(\)$"):
        b.build()


def test_run_eval_tool_schema_and_summary():
    [tool] = eval_tools(builder().build())
    assert tool.schema == {
        "type": "function",
        "function": {
            "name": "run_eval",
            "description": "Run an evaluation suite against the configured dataset and target",
            "parameters": {
                "type": "object",
                "properties": {"max_cases": {"type": "integer", "minimum": 1, "description": "Run only the first N cases of the dataset"}},
                "additionalProperties": False,
            },
        },
    }
    summary = tool(max_cases=1)
    assert summary["success"] is True and summary["total"] == 1 and summary["metrics"] == {"exact_match": 1.0}
    assert summary["assertions_passed"] is True
    assert asyncio.run(tool.acall())["total"] == 2


def test_run_eval_tool_reports_errors_instead_of_raising():
    [tool] = eval_tools(builder().build())
    assert tool(max_cases=0) == {"success": False, "error": "InputError: max_cases must be an integer >= 1; got 0"}
