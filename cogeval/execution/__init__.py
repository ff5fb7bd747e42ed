"""Execution (layer L2): targets and the async runner.

Run cases against a function or a chat model, concurrently, with timeouts,
retries and trials; see :func:`run_cases` (one target), :func:`run_interleaved`
(several targets, fairly), :func:`as_target` and :class:`ChatTarget`.
"""

from cogeval.execution.chat import ChatTarget
from cogeval.execution.runner import CaseOutcome, RunInterrupted, run_cases, run_interleaved, run_sync
from cogeval.execution.target import Target, TargetResponse, TurnOutcome, as_target, converse

__all__ = [
    "CaseOutcome",
    "ChatTarget",
    "RunInterrupted",
    "Target",
    "TargetResponse",
    "TurnOutcome",
    "as_target",
    "converse",
    "run_cases",
    "run_interleaved",
    "run_sync",
]
