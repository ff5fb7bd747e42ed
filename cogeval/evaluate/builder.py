"""EvalBuilder: a fluent way to assemble an :class:`EvalSuite`.

>>> from cogeval import EvalBuilder, exact_match
>>> suite = (EvalBuilder().with_dataset([{"input": "a", "expected": "a"}])
...          .with_target(lambda q: q).with_metrics(exact_match()).with_progress(False).build())
>>> suite.run().aggregated["exact_match"].mean
1.0

``with_metrics``, ``with_statistical_metrics`` and ``with_assertions`` take
their items as arguments or as one list (``.with_metrics([exact_match()])``);
each call adds to the earlier ones.
"""

from __future__ import annotations

from typing import Any

from cogeval._check import check_timeout
from cogeval.errors import InputError
from cogeval.evaluate.suite import EvalSuite


class EvalBuilder:
    """Collects the parts of a suite; :meth:`build` checks them and makes the :class:`EvalSuite`."""

    def __init__(self) -> None:
        self._options: dict[str, Any] = {}

    def _set(self, key: str, value: Any) -> EvalBuilder:
        self._options[key] = value
        return self

    def with_dataset(self, dataset: Any) -> EvalBuilder:
        return self._set("dataset", dataset)

    def with_target(self, target: Any) -> EvalBuilder:
        return self._set("target", target)

    def _add(self, key: str, items: tuple[Any, ...]) -> EvalBuilder:
        return self._set(key, [*self._options.get(key, []), *_flattened(items)])

    def with_metrics(self, *metrics: Any) -> EvalBuilder:
        return self._add("metrics", metrics)

    def with_statistical_metrics(self, *metrics: Any) -> EvalBuilder:
        return self._add("statistical_metrics", metrics)

    def with_judge(self, judge: Any) -> EvalBuilder:
        return self._set("judge", judge)

    def with_assertions(self, *assertions: Any) -> EvalBuilder:
        return self._add("assertions", assertions)

    def with_concurrency(self, concurrency: int) -> EvalBuilder:
        return self._set("concurrency", concurrency)

    def with_timeout(self, timeout: float) -> EvalBuilder:
        return self._set("timeout", check_timeout("timeout", timeout))

    def with_metric_timeout(self, seconds: float) -> EvalBuilder:
        return self._set("metric_timeout", check_timeout("metric_timeout", seconds))

    def with_retries(self, retries: int) -> EvalBuilder:
        return self._set("retries", retries)

    def with_trials(self, trials: int) -> EvalBuilder:
        return self._set("trials", trials)

    def with_progress(self, progress: bool) -> EvalBuilder:
        return self._set("progress", progress)

    def on_progress(self, callback: Any) -> EvalBuilder:
        return self._set("on_progress", callback)

    def with_name(self, name: str) -> EvalBuilder:
        return self._set("name", name)

    def with_metadata(self, metadata: dict[str, Any]) -> EvalBuilder:
        return self._set("metadata", metadata)

    def build(self) -> EvalSuite:
        """Make the suite; raises naming the first missing part."""
        for part in ("dataset", "target"):
            if part not in self._options:
                raise InputError(f"EvalBuilder needs a {part}: call .with_{part}(...) before .build()")
        return EvalSuite(**self._options)


def _flattened(items: tuple[Any, ...]) -> list[Any]:
    """The items given as arguments, or as one list or tuple of them (``f(a, b)`` or ``f([a, b])``)."""
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        return list(items[0])
    return list(items)
