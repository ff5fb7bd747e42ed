"""Statistics on plain arrays: paired tests, intervals, effect sizes, agreement, summaries.

This layer imports nothing from cogeval but the L0 core, so every function can
be checked alone against published reference values.
"""

from cogeval.stats.result import Interval, StatResult

# --- tests: paired.py, multitest.py ---

# --- intervals.py, effect.py, agreement.py, describe.py ---
