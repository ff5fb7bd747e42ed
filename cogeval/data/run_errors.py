"""What went wrong in a run, one row per distinct message: ``EvalRun.errors_frame`` and ``EvalRun.metric_errors_frame``.

- ``errors_frame`` holds the target's errors (``results[].error``), columns ``error``, ``cases``,
  ``examples``; ``metric_errors_frame`` the metrics' (``results[].scores[].error``: scores left NaN),
  columns ``metric``, ``error``, ``cases``, ``examples``;
- a message is the error text as recorded, compared exactly; the most frequent comes first, and
  messages as frequent keep the order they first appear in;
- ``cases`` counts the results (case × trial) with that message: the target's sum to
  ``len(results with an error)``, the count ``stats.errors`` holds; a metric's count its scores
  left NaN with it;
- ``examples`` lists (a Python list) up to 3 of those cases, distinct ones (case key,
  occurrence), first ones first: each is its input on one line cut to 40
  characters (JSON text when the input is not text), or ``key`` and its case key's first 8
  characters for a case without an input (a multi-turn case). Text is kept as it is: reports escape it.

>>> import pandas as pd
>>> from cogeval.data import EvalRun
>>> run = EvalRun.model_validate({"runId": "20261022T101530123Z-1a2b3c4d", "startedAt": "2026-10-22T10:15:30Z",
...     "finishedAt": "2026-10-22T10:15:31Z", "results": [
...     {"caseKey": "k1", "case": {"input": "2+2?"}, "error": "RuntimeError: down"},
...     {"caseKey": "k2", "case": {"input": "3+3?"}, "error": "Timed out after 30 s"},
...     {"caseKey": "k3", "case": {"input": "4+4?"}, "error": "RuntimeError: down"},
...     {"caseKey": "k4", "case": {"input": "5+5?"}, "output": "10"}]})
>>> run.errors_frame.to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
[{'error': 'RuntimeError: down', 'cases': 2, 'examples': ['2+2?', '4+4?']},
 {'error': 'Timed out after 30 s', 'cases': 1, 'examples': ['3+3?']}]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from cogeval import _columns as col
from cogeval._text import short_input

_EXAMPLES = 3
"""Cases each message lists in ``examples``."""
_EXAMPLE_WIDTH = 40
"""Characters of a case's input an example keeps."""

_ERRORS_COLUMNS = (col.ERROR, "cases", "examples")
"""The columns of ``EvalRun.errors_frame``, in order."""
_METRIC_ERRORS_COLUMNS = (col.METRIC, col.ERROR, "cases", "examples")
"""The columns of ``EvalRun.metric_errors_frame``, in order."""


def errors_frame(results: Iterable[Any]) -> pd.DataFrame:
    """The target's errors of ``results`` (a run's result records): one row per distinct message (see the module)."""
    return _summary(((None, r.error, r) for r in results if r.error is not None), _ERRORS_COLUMNS)


def metric_errors_frame(results: Iterable[Any]) -> pd.DataFrame:
    """The metrics' errors of ``results``: one row per metric and distinct message (see the module)."""
    cells = ((s.metric, s.error, r) for r in results for s in r.scores if s.error is not None)
    return _summary(cells, _METRIC_ERRORS_COLUMNS)


def _summary(cells: Iterable[tuple[str | None, str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    """One row per (metric, message) of ``cells`` (metric, error, result), most frequent first."""
    groups: dict[tuple[str | None, str], tuple[list[int], list[str], set[tuple[str, int]]]] = {}
    for metric, error, result in cells:
        count, examples, seen = groups.setdefault((metric, str(error)), ([0], [], set()))
        count[0] += 1
        case = (result.case_key, result.occurrence)
        if len(examples) < _EXAMPLES and case not in seen:
            seen.add(case)
            examples.append(_example(result))
    ordered = sorted(groups.items(), key=lambda item: -item[1][0][0])  # stable: ties keep their first appearance
    values: dict[str, list[Any]] = {
        col.METRIC: [metric for (metric, _), _ in ordered],
        col.ERROR: [error for (_, error), _ in ordered],
        "cases": [count[0] for _, (count, _, _) in ordered],
        "examples": [examples for _, (_, examples, _) in ordered],
    }
    return pd.DataFrame({
        name: pd.Series(values[name], dtype="int64" if name == "cases" else object) for name in columns
    }, columns=list(columns))


def _example(result: Any) -> str:
    """A case as an example: its input on one line, cut; ``key 1a2b3c4d`` when it has none."""
    given = result.case.input
    if given is None or given == "":
        return f"key {result.case_key[:8]}"
    return short_input(given, _EXAMPLE_WIDTH) or ""
