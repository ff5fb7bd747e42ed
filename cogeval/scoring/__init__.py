"""Scoring: per-case metrics, LLM judges, statistical (run-level) metrics and assertions.

>>> from cogeval.scoring import exact_match, threshold
>>> exact_match().describe()
{'name': 'exact_match', 'higher_is_better': True, 'params': {'case_sensitive': False}, 'kind': 'case'}
"""

from cogeval.scoring.assertions import (
    Assertion,
    AssertionResult,
    assertion,
    no_regression,
    read_baseline,
    threshold,
    write_baseline,
)
from cogeval.scoring.judge import (
    JudgeConfig,
    JudgeError,
    JudgeMetric,
    coherence,
    correctness,
    faithfulness,
    helpfulness,
    llm_metric,
    parse_judgement,
    relevance,
    self_preference_message,
)
from cogeval.scoring.metric import Metric, Score, metric
from cogeval.scoring.metrics import contains, exact_match, json_valid, numeric_match, regex, token_f1
from cogeval.scoring.registry import BUILTIN_METRICS, from_description
from cogeval.scoring.usage import StatisticalMetric, cost, latency, token_usage

__all__ = [
    "BUILTIN_METRICS",
    "Assertion",
    "AssertionResult",
    "JudgeConfig",
    "JudgeError",
    "JudgeMetric",
    "Metric",
    "Score",
    "StatisticalMetric",
    "assertion",
    "coherence",
    "contains",
    "correctness",
    "cost",
    "exact_match",
    "faithfulness",
    "from_description",
    "helpfulness",
    "json_valid",
    "latency",
    "llm_metric",
    "metric",
    "no_regression",
    "numeric_match",
    "parse_judgement",
    "read_baseline",
    "regex",
    "relevance",
    "self_preference_message",
    "threshold",
    "token_f1",
    "token_usage",
    "write_baseline",
]
