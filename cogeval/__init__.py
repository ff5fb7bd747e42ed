"""cogeval: evaluate LLM applications and decide, with paired statistics, whether B beats A.

>>> import cogeval
>>> cogeval.mcnemars_test(b=1, c=9).p_value  # exact two-sided binomial test, as R's binom.test(1, 10)
0.021484375
"""

from cogeval.compare.comparison import ComparisonResult, EvalComparison
from cogeval.compare.result import MetricComparison, RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.compare.store import RunStore
from cogeval.data import Case, Dataset, EvalRun, canonical_json, load_run
from cogeval.errors import (
    CogevalError,
    DatasetError,
    ExecutionError,
    InputError,
    RunFileError,
    RunSkippedWarning,
)
from cogeval.evaluate.builder import EvalBuilder
from cogeval.evaluate.result import CaseResult, EvalSuiteResult, RunStats
from cogeval.evaluate.suite import EvalSuite
from cogeval.evaluate.tools import EvalTool, eval_tools
from cogeval.execution import ChatTarget, RunInterrupted, TargetResponse
from cogeval.scoring import (
    AssertionResult,
    Metric,
    Score,
    assertion,
    contains,
    cost,
    exact_match,
    json_valid,
    latency,
    metric,
    no_regression,
    numeric_match,
    regex,
    threshold,
    token_f1,
    token_usage,
)
from cogeval.stats import (
    Aggregate,
    Interval,
    McNemarResult,
    TTestResult,
    WilcoxonResult,
    adjust_p_values,
    aggregate,
    bootstrap_ci,
    cohen_kappa,
    cohens_d,
    mcnemars_test,
    mean,
    median,
    paired_t_test,
    percentile,
    std_dev,
    wilcoxon_test,
    wilson_interval,
)

__all__ = [
    "Aggregate",
    "AssertionResult",
    "Case",
    "CaseResult",
    "ChatTarget",
    "CogevalError",
    "ComparisonResult",
    "Dataset",
    "DatasetError",
    "EvalBuilder",
    "EvalComparison",
    "EvalRun",
    "EvalSuite",
    "EvalSuiteResult",
    "EvalTool",
    "ExecutionError",
    "InputError",
    "Interval",
    "McNemarResult",
    "Metric",
    "MetricComparison",
    "RunComparison",
    "RunFileError",
    "RunInterrupted",
    "RunSkippedWarning",
    "RunStats",
    "RunStore",
    "Score",
    "TTestResult",
    "TargetResponse",
    "WilcoxonResult",
    "adjust_p_values",
    "aggregate",
    "assertion",
    "bootstrap_ci",
    "canonical_json",
    "cohen_kappa",
    "cohens_d",
    "compare_runs",
    "comparison_html",
    "comparison_markdown",
    "contains",
    "cost",
    "eval_tools",
    "exact_match",
    "json_valid",
    "latency",
    "load_run",
    "mcnemars_test",
    "mean",
    "median",
    "metric",
    "no_regression",
    "numeric_match",
    "paired_t_test",
    "percentile",
    "regex",
    "report_comparison",
    "std_dev",
    "threshold",
    "token_f1",
    "token_usage",
    "wilcoxon_test",
    "wilson_interval",
]

_PRESENT = {
    "comparison_html": "cogeval.present.comparison_report",
    "comparison_markdown": "cogeval.present.comparison_report",
    "report_comparison": "cogeval.present.comparison_report",
}


def __getattr__(name: str):
    """Load presentation functions on first use, so ``import cogeval`` stays light."""
    if name in _PRESENT:
        import importlib

        value = getattr(importlib.import_module(_PRESENT[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cogeval' has no attribute {name!r}")
