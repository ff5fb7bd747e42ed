"""Evaluating a target on a dataset: the suite, its result, the builder, rescoring, agent tools, and shards
(merged with ``merge_runs``, run on Ray with ``run_on_ray``).

    >>> from cogeval.evaluate import EXIT_ASSERTION_FAILED, EXIT_RUN_FAILED
    >>> EXIT_ASSERTION_FAILED, EXIT_RUN_FAILED
    (1, 2)
"""

from cogeval.evaluate.builder import EvalBuilder
from cogeval.evaluate.merge import merge_runs
from cogeval.evaluate.ray_runner import run_on_ray
from cogeval.evaluate.rescore import arescore, rescore
from cogeval.evaluate.result import EXIT_ASSERTION_FAILED, EXIT_RUN_FAILED, CaseResult, EvalSuiteResult, RunStats
from cogeval.evaluate.suite import EvalSuite, arun_interleaved
from cogeval.evaluate.tools import EvalTool, create_run_eval_tool, eval_tools

__all__ = [
    "EXIT_ASSERTION_FAILED",
    "EXIT_RUN_FAILED",
    "CaseResult",
    "EvalBuilder",
    "EvalSuite",
    "EvalSuiteResult",
    "EvalTool",
    "RunStats",
    "arescore",
    "arun_interleaved",
    "create_run_eval_tool",
    "eval_tools",
    "merge_runs",
    "rescore",
    "run_on_ray",
]
