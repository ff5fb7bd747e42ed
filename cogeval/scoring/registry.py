"""The built-in metrics by name, so a metric described in a run file can be made again.

>>> from_description({"name": "regex", "params": {"pattern": "^yes", "flags": 0}})
Metric('regex', pattern='^yes', flags=0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.scoring.metric import Metric
from cogeval.scoring.metrics import contains, exact_match, json_valid, numeric_match, regex, token_f1
from cogeval.scoring.usage import BUILTIN_STATISTICAL_METRICS, StatisticalMetric

BUILTIN_METRICS: Mapping[str, Callable[..., Metric | StatisticalMetric]] = dict(sorted({
    **{factory.__name__: factory for factory in (contains, exact_match, json_valid, numeric_match, regex, token_f1)},
    **BUILTIN_STATISTICAL_METRICS,
}.items()))


def from_description(description: Mapping[str, Any]) -> Metric | StatisticalMetric:
    """Rebuild a built-in metric from its :meth:`~Metric.describe` dict (``name`` and ``params``).

    Custom metrics cannot be rebuilt (their function is not in the run file).
    """
    name = description.get("name") if isinstance(description, Mapping) else None
    if name not in BUILTIN_METRICS:
        known = ", ".join(sorted(BUILTIN_METRICS))
        raise InputError(f"{_short(name)} is not a built-in metric; built-ins are {known}")
    params = description.get("params") or {}
    try:
        return BUILTIN_METRICS[cast(str, name)](**params)  # a key of BUILTIN_METRICS, so a str
    except TypeError as error:
        raise InputError(f"cannot rebuild metric {name!r} from params {_short(params)}: {error}") from None
