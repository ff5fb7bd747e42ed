"""Statistical (run-level) metrics: latency, cost and token usage, lower is better.

A :class:`StatisticalMetric` reads one number per case outcome and summarises
them with :func:`cogeval.stats.aggregate`. An unknown value (``None``) is NaN,
left out of the statistics and counted in ``missing`` — never taken as 0.

>>> from types import SimpleNamespace as Outcome
>>> runs = [Outcome(duration_s=1.0), Outcome(duration_s=3.0), Outcome(duration_s=None)]
>>> summary = latency().compute(runs)
>>> summary.mean, summary.count, summary.missing
(2.0, 2, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from numbers import Real
from typing import Any

from cogeval import _columns as col
from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.scoring.metric import Described, _check_direction, check_metric_name, check_params
from cogeval.stats import Aggregate, aggregate

__all__ = ["StatisticalMetric", "cost", "latency", "token_usage"]


def _number(value: Any) -> float:
    """A finite-or-NaN float; ``None`` and anything not a number count as unknown (NaN)."""
    if isinstance(value, Real) and not isinstance(value, bool):
        return float(value)
    return math.nan


class StatisticalMetric(Described):
    """A run-level metric: ``value(outcome)`` per case, summarised by :meth:`compute`.

    ``value`` returns a number, or ``None`` when it is unknown for that case.

    >>> tools = StatisticalMetric("tool_calls", lambda o: len(o.tool_calls))
    >>> tools.describe()
    {'name': 'tool_calls', 'higher_is_better': False, 'params': {}, 'kind': 'run'}
    """

    kind = "run"
    requires_judge = False
    default_direction = False

    def __init__(
        self,
        name: str,
        value: Callable[[Any], Any],
        *,
        higher_is_better: bool = False,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = check_metric_name(name)
        if not callable(value):
            raise InputError(f"statistical metric {name!r}: value must be a callable value(outcome); got {_short(value)}")
        self.value = value
        self.higher_is_better = _check_direction(higher_is_better)
        self.params = check_params(f"statistical metric {name!r}", params or {})

    def values(self, outcomes: Iterable[Any]) -> list[float]:
        """One float per outcome, NaN where the value is unknown; a failing ``value`` raises InputError."""
        result = []
        for position, outcome in enumerate(outcomes):
            try:
                result.append(_number(self.value(outcome)))
            except Exception as error:
                raise InputError(
                    f"statistical metric {self.name!r} failed on outcome {position}: {type(error).__name__}: {error}"
                ) from error
        return result

    def compute(self, outcomes: Iterable[Any]) -> Aggregate:
        """Summarise the per-case values of ``outcomes`` (NaN skipped, counted in ``missing``)."""
        return aggregate(self.values(outcomes))


def latency() -> StatisticalMetric:
    """Seconds per case (``outcome.duration_s``); lower is better.

    >>> latency()
    StatisticalMetric('latency')
    """
    return StatisticalMetric("latency", lambda outcome: getattr(outcome, col.DURATION_S, None))


def cost() -> StatisticalMetric:
    """US dollars per case (``outcome.cost_usd``); lower is better."""
    return StatisticalMetric("cost", lambda outcome: getattr(outcome, col.COST_USD, None))


def _tokens(outcome: Any) -> float | None:
    counts = [_number(getattr(outcome, name, None)) for name in (col.INPUT_TOKENS, col.OUTPUT_TOKENS)]
    known = [c for c in counts if not math.isnan(c)]
    return sum(known) if known else None


def token_usage() -> StatisticalMetric:
    """Tokens per case: ``input_tokens + output_tokens``; lower is better.

    One unknown count is taken as 0 when the other is known; both unknown is
    an unknown value (NaN, counted in ``missing``).

    >>> from types import SimpleNamespace as Outcome
    >>> token_usage().values([Outcome(input_tokens=10, output_tokens=5), Outcome(input_tokens=None, output_tokens=None)])
    [15.0, nan]
    """
    return StatisticalMetric("token_usage", _tokens)
