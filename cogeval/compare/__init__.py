"""Comparing runs: pairing cases, paired statistics per metric, verdicts, leaderboards.

The top level (:mod:`cogeval`) offers the everyday names; this package adds the engine beneath them. The run
store (:mod:`cogeval.store`) and variant runs (:mod:`cogeval.variants`) sit above it, so it imports neither::

    >>> from cogeval.compare import TOLERANCE, agreeing_interval, compare_scores, trial_means
    >>> TOLERANCE
    1e-09
"""

from cogeval.compare.calibration import LABEL_COLUMNS, label_sample, ppi_difference
from cogeval.compare.comparison import ComparisonResult, EvalComparison
from cogeval.compare.engine import CHANGES_COLUMNS, TESTS, compare_scores
from cogeval.compare.frames import compare_frames
from cogeval.compare.leaderboard import LEADERBOARD_COLUMNS, Leaderboard
from cogeval.compare.noise import NoiseReport, noise_report
from cogeval.compare.paired import TOLERANCE, agreeing_interval, inverted_interval, paired_test
from cogeval.compare.pairing import trial_means
from cogeval.compare.result import COLUMNS, MetricComparison, RunComparison, RunInfo
from cogeval.compare.runs import compare_runs, statistical_values
from cogeval.compare.sequential import DECISION_COLUMNS, SEQUENCE_COLUMNS, SequentialComparison, compare_sequential
from cogeval.compare.slices import SLICE_COLUMNS, compare_slices
from cogeval.compare.summary import HISTORY_COLUMNS, MetricSummary, history_frame, metric_summary
from cogeval.compare.verdicts import ROLES, VERDICTS

__all__ = [
    "CHANGES_COLUMNS",
    "COLUMNS",
    "ComparisonResult",
    "DECISION_COLUMNS",
    "EvalComparison",
    "HISTORY_COLUMNS",
    "LABEL_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "Leaderboard",
    "MetricComparison",
    "MetricSummary",
    "NoiseReport",
    "ROLES",
    "RunComparison",
    "RunInfo",
    "SEQUENCE_COLUMNS",
    "SLICE_COLUMNS",
    "SequentialComparison",
    "TESTS",
    "TOLERANCE",
    "VERDICTS",
    "agreeing_interval",
    "compare_frames",
    "compare_runs",
    "compare_scores",
    "compare_sequential",
    "compare_slices",
    "history_frame",
    "inverted_interval",
    "label_sample",
    "metric_summary",
    "noise_report",
    "paired_test",
    "ppi_difference",
    "statistical_values",
    "trial_means",
]
