"""The tidy vocabulary: every column name cogeval writes, declared once.

Column names are API (DESIGN §2): snake_case, units in the name, never changed
by an argument. Import the constants instead of spelling the strings.
"""

from __future__ import annotations

# identifiers
RUN_ID = "run_id"
CASE_KEY = "case_key"
OCCURRENCE = "occurrence"
TRIAL = "trial"
METRIC = "metric"
TRACE_ID = "trace_id"

# runs
NAME = "name"
STARTED_AT = "started_at"

# case fields
INPUT = "input"
EXPECTED = "expected"
CONTEXT = "context"
METADATA = "metadata"
TURNS = "turns"

# results
OUTPUT = "output"
ERROR = "error"
DURATION_S = "duration_s"
INPUT_TOKENS = "input_tokens"
OUTPUT_TOKENS = "output_tokens"
COST_USD = "cost_usd"

# scores
SCORE = "score"

# statistics
CI_LOW = "ci_low"
CI_HIGH = "ci_high"
P_VALUE = "p_value"
ADJUSTED_P_VALUE = "adjusted_p_value"
SIGNIFICANT = "significant"
INTERVAL = "interval"
CLUSTERS = "clusters"
"""G, the clusters of the units a statistic counts (``cluster=``); <NA> without clustering."""
HIGHER_IS_BETTER = "higher_is_better"

# comparison and changes
BASE = "base"
HEAD = "head"
N = "n"
DIFFERENCE = "difference"
_EFFECT_SIZE = "effect_size"
TEST = "test"
WINNER = "winner"
DELTA = "delta"
DIRECTION = "direction"
ERRORED = "errored"
"""Which run's target failed on a case (``"base"``, ``"head"``, ``"both"``) in a comparison's ``changes`` and ``errored``."""

CASES_COLUMNS = (CASE_KEY, OCCURRENCE, INPUT, EXPECTED, CONTEXT, METADATA)
RESULTS_COLUMNS = (
    RUN_ID, CASE_KEY, OCCURRENCE, TRIAL, OUTPUT, ERROR, DURATION_S,
    INPUT_TOKENS, OUTPUT_TOKENS, COST_USD, TRACE_ID,
)
SCORES_COLUMNS = (RUN_ID, CASE_KEY, OCCURRENCE, TRIAL, METRIC, SCORE, ERROR)
COMPARISON_COLUMNS = (
    METRIC, BASE, HEAD, N, DIFFERENCE, CI_LOW, CI_HIGH, _EFFECT_SIZE, TEST,
    P_VALUE, ADJUSTED_P_VALUE, SIGNIFICANT, WINNER,
)
CHANGES_COLUMNS = (CASE_KEY, INPUT, METRIC, BASE, HEAD, DELTA, DIRECTION)
NOISE_COLUMNS = ("metric", "runs", "cases", "mean", "run_sd", "case_sd", "flip_rate", "icc", "aa_pairs", "aa_decided",
                 "suggested_margin", "suggested_margin_low", "suggested_margin_high")
"""The noise report of reruns (``noise_report(...).to_frame()``): one row per metric."""
NOISE_CASES_COLUMNS = (CASE_KEY, OCCURRENCE, INPUT, METRIC, "mean", "sd", "flip_rate")
"""The noise report's ``cases`` table: one row per case × metric, over the reruns."""
