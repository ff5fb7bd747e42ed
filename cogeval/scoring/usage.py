"""Statistical (run-level) metrics: latency, cost and token usage, lower is better.

A :class:`StatisticalMetric` says how to read its value from one result (a
case × trial): :meth:`~StatisticalMetric.per_case`. That one mapping gives
both its aggregate (:meth:`~StatisticalMetric.compute`, with
:func:`cogeval.stats.aggregate`) and the per-case values a comparison pairs.
An unknown value (``None``) is NaN, left out of the statistics and counted in
``missing`` — never taken as 0.

>>> from types import SimpleNamespace as Outcome
>>> runs = [Outcome(duration_s=1.0), Outcome(duration_s=3.0), Outcome(duration_s=None)]
>>> summary = latency().compute(runs)
>>> summary.mean, summary.count, summary.missing
(2.0, 2, 1)
>>> latency().per_case(runs[0]), latency().writes_per_case
(1.0, False)
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


def _number(value: Any) -> float:
    """A finite-or-NaN float; ``None`` and anything not a number count as unknown (NaN)."""
    if isinstance(value, Real) and not isinstance(value, bool):
        return float(value)
    return math.nan


class StatisticalMetric(Described):
    """A run-level metric: ``value(result)`` per case × trial, summarised by :meth:`compute`.

    ``value`` returns a number, or ``None`` when it is unknown for that case.
    A result is anything with the fields of the results table
    (``duration_s``, ``cost_usd``, ``input_tokens``, ``output_tokens``...): a
    case result while a suite runs (also ``output``, ``case``, ``tool_calls``),
    or a row of ``run.results_frame``.

    >>> tools = StatisticalMetric("tool_calls", lambda o: len(o.tool_calls))
    >>> tools.describe()
    {'name': 'tool_calls', 'higher_is_better': False, 'params': {}, 'kind': 'run'}
    >>> tools.writes_per_case
    True
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

    def per_case(self, result: Any) -> float:
        """This metric's value for one result (case × trial): a float, NaN when unknown.

        The one mapping from a result to the metric's per-case value: its
        aggregate and every comparison read it. Whatever ``value`` raises is raised.

        >>> from types import SimpleNamespace as Result
        >>> token_usage().per_case(Result(input_tokens=10, output_tokens=None))
        10.0
        """
        return _number(self.value(result))

    @property
    def writes_per_case(self) -> bool:
        """Whether a run file keeps this metric's per-case values (``results[].statisticalValues``).

        False for the built-in ``latency``, ``cost`` and ``token_usage``, whose
        values each result's own ``duration`` and ``usage`` give back; True for
        every other statistical metric, so a later comparison of the run files
        can pair them.
        """
        return _BUILTIN_VALUES.get(self.name) is not self.value

    def values(self, outcomes: Iterable[Any]) -> list[float]:
        """:meth:`per_case` of every outcome, in order; a failing ``value`` raises InputError naming the outcome."""
        result = []
        for position, outcome in enumerate(outcomes):
            try:
                result.append(self.per_case(outcome))
            except Exception as error:
                raise InputError(
                    f"statistical metric {self.name!r} failed on outcome {position}: {type(error).__name__}: {error}"
                ) from error
        return result

    def compute(self, outcomes: Iterable[Any]) -> Aggregate:
        """Summarise the per-case values of ``outcomes`` (NaN skipped, counted in ``missing``)."""
        return aggregate(self.values(outcomes))


def _duration(result: Any) -> Any:
    return getattr(result, col.DURATION_S, None)


def _cost(result: Any) -> Any:
    return getattr(result, col.COST_USD, None)


def _tokens(result: Any) -> float | None:
    counts = [_number(getattr(result, name, None)) for name in (col.INPUT_TOKENS, col.OUTPUT_TOKENS)]
    known = [c for c in counts if not math.isnan(c)]
    return sum(known) if known else None


_BUILTIN_VALUES: Mapping[str, Callable[[Any], Any]] = {"latency": _duration, "cost": _cost, "token_usage": _tokens}
"""How each built-in statistical metric reads a result; its values are never written apart (see ``writes_per_case``)."""


def latency() -> StatisticalMetric:
    """Seconds per case (``result.duration_s``); lower is better.

    >>> latency()
    StatisticalMetric('latency')
    """
    return StatisticalMetric("latency", _duration)


def cost() -> StatisticalMetric:
    """US dollars per case (``result.cost_usd``); lower is better."""
    return StatisticalMetric("cost", _cost)


def token_usage() -> StatisticalMetric:
    """Tokens per case: ``input_tokens + output_tokens``; lower is better.

    One unknown count is taken as 0 when the other is known; both unknown is
    an unknown value (NaN, counted in ``missing``).

    >>> from types import SimpleNamespace as Outcome
    >>> token_usage().values([Outcome(input_tokens=10, output_tokens=5), Outcome(input_tokens=None, output_tokens=None)])
    [15.0, nan]
    """
    return StatisticalMetric("token_usage", _tokens)


BUILTIN_STATISTICAL_METRICS: Mapping[str, Callable[[], StatisticalMetric]] = {
    "latency": latency, "cost": cost, "token_usage": token_usage,
}
"""The built-in statistical metrics by name: a run file names them, and a comparison rebuilds them to read their per-case values."""
