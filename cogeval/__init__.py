"""cogeval: evaluate LLM applications and decide, with paired statistics, whether B beats A.

>>> import cogeval
>>> cogeval.mcnemars_test(b=1, c=9).p_value  # exact two-sided binomial test, as R's binom.test(1, 10)
0.021484375
"""

from cogeval.compare.comparison import ComparisonResult, EvalComparison
from cogeval.compare.frames import compare_frames
from cogeval.compare.leaderboard import Leaderboard
from cogeval.compare.result import MetricComparison, RunComparison
from cogeval.compare.runs import compare_runs
from cogeval.compare.store import RunStore
from cogeval.compare.variants import Variants, arun_variants, run_variants
from cogeval.data import Case, Dataset, EvalRun, canonical_json, load_run
from cogeval.errors import (
    CogevalError,
    DatasetError,
    ExecutionError,
    InputError,
    RunFileError,
    RunSkippedWarning,
    SelfPreferenceWarning,
)
from cogeval.evaluate.builder import EvalBuilder
from cogeval.evaluate.rescore import arescore, rescore
from cogeval.evaluate.result import CaseResult, EvalSuiteResult, RunStats
from cogeval.evaluate.suite import EvalSuite
from cogeval.evaluate.tools import EvalTool, create_run_eval_tool, eval_tools
from cogeval.execution import ChatTarget, RunInterrupted, TargetResponse
from cogeval.pairwise import (
    Agreement,
    DirectoryTraceSource,
    Flips,
    PairwiseResult,
    WinRate,
    aevaluate_pairwise,
    arun_pairwise,
    evaluate_pairwise,
    export_pairwise_cases,
    human_labels,
    human_pairwise,
    load_pairwise,
    pairwise_judge,
    run_pairwise,
)
from cogeval.scoring import (
    AssertionResult,
    JudgeConfig,
    Metric,
    Score,
    assertion,
    coherence,
    contains,
    correctness,
    cost,
    exact_match,
    faithfulness,
    helpfulness,
    json_valid,
    latency,
    llm_metric,
    metric,
    no_regression,
    numeric_match,
    regex,
    relevance,
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
    bradley_terry,
    cohen_kappa,
    cohens_d,
    mcnemars_test,
    mean,
    median,
    paired_t_test,
    percentile,
    plan_sample_size,
    std_dev,
    wilcoxon_test,
    wilson_interval,
)

__all__ = [
    "Aggregate",
    "Agreement",
    "AssertionResult",
    "Case",
    "CaseResult",
    "ChatTarget",
    "CogevalError",
    "ComparisonResult",
    "Dataset",
    "DatasetError",
    "DirectoryTraceSource",
    "EvalBuilder",
    "EvalComparison",
    "EvalRun",
    "EvalSuite",
    "EvalSuiteResult",
    "EvalTool",
    "ExecutionError",
    "Flips",
    "InputError",
    "Interval",
    "JudgeConfig",
    "Leaderboard",
    "McNemarResult",
    "Metric",
    "MetricComparison",
    "PairwiseResult",
    "RunComparison",
    "RunFileError",
    "RunInterrupted",
    "RunSkippedWarning",
    "RunStats",
    "RunStore",
    "Score",
    "SelfPreferenceWarning",
    "TTestResult",
    "TargetResponse",
    "Variants",
    "WilcoxonResult",
    "WinRate",
    "adjust_p_values",
    "aevaluate_pairwise",
    "aggregate",
    "arescore",
    "arun_pairwise",
    "arun_variants",
    "assertion",
    "bootstrap_ci",
    "bradley_terry",
    "canonical_json",
    "case_explorer",
    "cohen_kappa",
    "cohens_d",
    "coherence",
    "compare_frames",
    "compare_runs",
    "comparison_html",
    "comparison_markdown",
    "contains",
    "correctness",
    "cost",
    "create_run_eval_tool",
    "eval_tools",
    "evaluate_pairwise",
    "exact_match",
    "export_html",
    "export_pairwise_cases",
    "faithfulness",
    "helpfulness",
    "human_labels",
    "human_pairwise",
    "json_valid",
    "latency",
    "llm_metric",
    "load_pairwise",
    "load_run",
    "mcnemars_test",
    "mean",
    "median",
    "metric",
    "no_regression",
    "numeric_match",
    "paired_t_test",
    "pairwise_judge",
    "percentile",
    "plan_sample_size",
    "plot_changes",
    "plot_comparison",
    "plot_history",
    "plot_scores",
    "regex",
    "relevance",
    "report_comparison",
    "rescore",
    "run_explorer",
    "run_pairwise",
    "run_variants",
    "std_dev",
    "threshold",
    "token_f1",
    "token_usage",
    "wilcoxon_test",
    "wilson_interval",
]

_PRESENT = frozenset({
    "case_explorer", "comparison_html", "comparison_markdown", "export_html", "plot_changes", "plot_comparison",
    "plot_history", "plot_scores", "report_comparison", "run_explorer",
})
"""Presentation functions re-exported here, loaded from ``cogeval.present`` on first use."""


def __getattr__(name: str):
    """Load presentation functions on first use (through :mod:`cogeval._backend`), so ``import cogeval`` stays light."""
    if name in _PRESENT:
        from cogeval import _backend

        value = _backend.presenter(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cogeval' has no attribute {name!r}")
