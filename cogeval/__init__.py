"""cogeval: evaluate LLM applications and decide, with paired statistics, whether B beats A.

>>> import cogeval
>>> cogeval.mcnemars_test(b=1, c=9).p_value  # exact two-sided binomial test, as R's binom.test(1, 10)
0.021484375
"""

import types
import typing

from cogeval.errors import (
    CogevalError,
    DatasetError,
    ExecutionError,
    InputError,
    RunFileError,
    RunSkippedWarning,
    SelfPreferenceWarning,
)

if typing.TYPE_CHECKING:  # loaded on first use by __getattr__ below; type checkers and IDEs see the names here
    from cogeval.compare.calibration import label_sample, ppi_difference
    from cogeval.compare.comparison import ComparisonResult, EvalComparison
    from cogeval.compare.frames import compare_frames
    from cogeval.compare.leaderboard import Leaderboard
    from cogeval.compare.noise import NoiseReport, noise_report
    from cogeval.compare.result import MetricComparison, RunComparison
    from cogeval.compare.runs import compare_runs
    from cogeval.compare.sequential import SequentialComparison, compare_sequential
    from cogeval.data import Case, Dataset, EvalRun, canonical_json, load_run
    from cogeval.evaluate.builder import EvalBuilder
    from cogeval.evaluate.merge import merge_runs
    from cogeval.evaluate.ray_runner import run_on_ray
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
        no_regression,
        numeric_match,
        regex,
        relevance,
        threshold,
        token_f1,
        token_usage,
    )
    from cogeval.scoring.metric import Metric, Score, metric
    from cogeval.stats import (
        Aggregate,
        Interval,
        McNemarResult,
        PPIResult,
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
        ppi_mean,
        std_dev,
        wilcoxon_test,
        wilson_interval,
    )
    from cogeval.store import RunStore
    from cogeval.variants import Variants, arun_variants, run_variants

__version__ = "0.1.0"
"""cogeval's version, as pyproject.toml states it (tests/test_version.py keeps the two equal)."""

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
    "NoiseReport",
    "PPIResult",
    "PairwiseResult",
    "RunComparison",
    "RunFileError",
    "RunInterrupted",
    "RunSkippedWarning",
    "RunStats",
    "RunStore",
    "Score",
    "SelfPreferenceWarning",
    "SequentialComparison",
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
    "compare_sequential",
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
    "label_sample",
    "latency",
    "llm_metric",
    "load_pairwise",
    "load_run",
    "mcnemars_test",
    "mean",
    "median",
    "merge_runs",
    "metric",
    "no_regression",
    "noise_report",
    "numeric_match",
    "paired_t_test",
    "pairwise_judge",
    "percentile",
    "plan_sample_size",
    "plot_changes",
    "plot_comparison",
    "plot_history",
    "plot_noise",
    "plot_scores",
    "plot_sequential",
    "ppi_difference",
    "ppi_mean",
    "regex",
    "relevance",
    "report_comparison",
    "rescore",
    "run_explorer",
    "run_on_ray",
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
    "plot_history", "plot_noise", "plot_scores", "plot_sequential", "report_comparison", "run_explorer",
})
"""Presentation functions re-exported here, loaded from ``cogeval.present`` on first use."""


_LAZY_NAMES = {
    "compare": (
        "ComparisonResult EvalComparison Leaderboard MetricComparison NoiseReport RunComparison "
        "SequentialComparison compare_frames compare_runs compare_sequential label_sample noise_report "
        "ppi_difference"
    ),
    "data": "Case Dataset EvalRun canonical_json load_run",
    "evaluate": (
        "CaseResult EvalBuilder EvalSuite EvalSuiteResult EvalTool RunStats arescore create_run_eval_tool "
        "eval_tools merge_runs rescore run_on_ray"
    ),
    "execution": "ChatTarget RunInterrupted TargetResponse",
    "pairwise": (
        "Agreement DirectoryTraceSource Flips PairwiseResult WinRate aevaluate_pairwise arun_pairwise "
        "evaluate_pairwise export_pairwise_cases human_labels human_pairwise load_pairwise pairwise_judge "
        "run_pairwise"
    ),
    "scoring": (
        "AssertionResult JudgeConfig Metric Score assertion coherence contains correctness cost exact_match "
        "faithfulness helpfulness json_valid latency llm_metric metric no_regression numeric_match regex "
        "relevance threshold token_f1 token_usage"
    ),
    "stats": (
        "Aggregate Interval McNemarResult PPIResult TTestResult WilcoxonResult adjust_p_values aggregate "
        "bootstrap_ci bradley_terry cohen_kappa cohens_d mcnemars_test mean median paired_t_test percentile "
        "plan_sample_size ppi_mean std_dev wilcoxon_test wilson_interval"
    ),
    "store": "RunStore",
    "variants": "Variants arun_variants run_variants",
}
"""The subpackage (of ``cogeval``) each re-exported name comes from; it is imported on first use of one of its
names, so ``import cogeval`` costs little more than ``import pandas, numpy, pydantic``
(``benchmarks/bench_import.py``)."""
_LAZY = {name: package for package, names in _LAZY_NAMES.items() for name in names.split()}


def _subpackage(package: str) -> types.ModuleType:
    """The subpackage ``cogeval.<package>``, imported (statically, so the layer guards see each edge) on first use."""
    if package == "compare":
        from cogeval import compare

        return compare
    if package == "data":
        from cogeval import data

        return data
    if package == "evaluate":
        from cogeval import evaluate

        return evaluate
    if package == "execution":
        from cogeval import execution

        return execution
    if package == "pairwise":
        from cogeval import pairwise

        return pairwise
    if package == "scoring":
        from cogeval import scoring

        return scoring
    if package == "store":
        from cogeval import store

        return store
    if package == "variants":
        from cogeval import variants

        return variants
    from cogeval import stats

    return stats


def __getattr__(name: str) -> typing.Any:
    """Load a re-exported name from its subpackage on first use, and presentation functions (through
    :mod:`cogeval._backend`), so ``import cogeval`` stays light; the value is then bound here."""
    if name in _LAZY:
        value = getattr(_subpackage(_LAZY[name]), name)
    elif name in _PRESENT:
        from cogeval import _backend

        value = _backend.presenter(name)
    else:
        raise AttributeError(f"module 'cogeval' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every public name (``__all__``, loaded or not) and what is bound already, for ``dir()`` and tab completion."""
    return sorted(set(globals()) | set(__all__))
