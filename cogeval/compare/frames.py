"""compare_frames: a paired comparison straight from one table of scores (a CSV, a warehouse query, a pivot).

The table holds both versions: a column ``by`` names the version of each row, ``case`` identifies the
case, and the scores are either one column per metric (wide) or ``metric`` and ``score`` columns (long).
Repeated rows of a case within a version are its trials (a ``trial`` column numbers them; without one,
their order does). Everything downstream is :func:`~cogeval.compare.compare_scores`'s: the same tests,
intervals, verdicts and ``changes``.

>>> import pandas as pd
>>> df = pd.DataFrame({"id": [1, 2, 3, 4] * 2, "version": ["v1"] * 4 + ["v2"] * 4,
...                    "correct": [0, 0, 1, 0, 1, 1, 1, 1]})
>>> c = compare_frames(df, by="version", base="v1", head="v2", case="id", metrics=["correct"])
>>> c.metrics["correct"].n, c.metrics["correct"].difference, c.metrics["correct"].test
(4, 0.75, 'mcnemar-exact')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import describe
from cogeval.compare.engine import compare_scores
from cogeval.compare.pairing import CASE_ERROR
from cogeval.compare.result import RunComparison, RunInfo
from cogeval.errors import InputError


def compare_frames(
    frame: pd.DataFrame,
    *,
    by: str,
    base: Any,
    head: Any,
    case: str,
    metrics: Sequence[str] | None = None,
    directions: Mapping[str, bool] | None = None,
    cluster: str | None = None,
    **options: Any,
) -> RunComparison:
    """Compare the rows where ``frame[by] == head`` against those where it is ``base``, paired on ``frame[case]``.

    ``metrics`` are the score columns (wide form; default: every numeric column but ``by``, ``case``
    and ``trial``), or the metrics to keep of a long table (``metric`` and ``score`` columns).
    ``directions`` maps a metric to ``higher_is_better``. A metric it does not name is taken as higher-is-better
    with its direction *assumed*: a warning names it, and one whose name reads as a cost (``latency_s``,
    ``cost_usd``, ``tokens``...) informs instead of deciding unless ``decide_on`` names it (never guessed from
    the name: ``docs/comparing.md``, Directions nobody gave).
    An ``input`` column, when present, fills ``changes``. ``cluster`` names a column that groups the cases
    (a passage, a conversation), one value per case: whole clusters are then the independent units
    (``docs/statistics-clusters.md``); without it, a text or integer column that groups the cases and
    clusters a deciding metric gets a warning naming it. Other keyword arguments are
    :func:`~cogeval.compare.compare_scores`'s: ``alpha``, ``test``, ``decide_on``, ``margins``...

    >>> df = pd.DataFrame({"id": list(range(8)) * 2, "version": ["v1"] * 8 + ["v2"] * 8,
    ...                    "passage": [0, 0, 1, 1, 2, 2, 3, 3] * 2, "score": [.2, .3, .5, .4, .9, .8, .1, .3] + [.4] * 8})
    >>> m = compare_frames(df, by="version", base="v1", head="v2", case="id", cluster="passage").metrics["score"]
    >>> m.test, m.clusters
    ('clustered-t', 4)
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"frame must be a pandas DataFrame; got {describe(frame)}")
    for name, column in (("by", by), ("case", case), ("cluster", cluster)):
        if column is not None and column not in frame.columns:
            raise InputError(f"{name}={column!r} is not a column of the frame (it has: {', '.join(map(str, frame.columns))})")
    long = _long(frame, by, case, metrics, cluster)
    names = list(dict.fromkeys(long[col.METRIC]))
    sides = {}
    for side, version in (("base", base), ("head", head)):
        rows = long[long[by] == version]
        if rows.empty:
            found = ", ".join(map(repr, pd.unique(frame[by])[:10]))
            raise InputError(f"{side}={version!r}: no row has {by} == {version!r} (it has: {found})")
        sides[side] = _scores(rows, case, str(version), cluster)
    inputs = {}
    if col.INPUT in frame.columns:
        inputs = {str(k): v for k, v in zip(frame[case], frame[col.INPUT])}
    return compare_scores(
        sides["base"], sides["head"], directions={m: True for m in names} | dict(directions or {}),
        assumed=[m for m in names if m not in (directions or {})],
        inputs=inputs, base_info=RunInfo(str(base), str(base), None), head_info=RunInfo(str(head), str(head), None),
        cluster=cluster, groupings=None if cluster is not None else _groupings(frame, by, case, names),
        **options,
    )


def _groupings(frame: pd.DataFrame, by: str, case: str, metrics: Sequence[str]) -> Any:
    """The columns that might group the cases (text, categories, integers; one value per case), as a function
    of units giving each column's value per unit (:data:`~cogeval.compare.engine._Groupings`)."""
    skip = {by, case, col.TRIAL, col.METRIC, col.SCORE, col.INPUT, *metrics}
    candidates = [c for c in frame.columns if c not in skip and not pd.api.types.is_float_dtype(frame[c])
                  and not pd.api.types.is_bool_dtype(frame[c])]

    def groupings(units: pd.MultiIndex) -> dict[str, Any]:
        keys = pd.Index(units.get_level_values(0))
        cases = frame[case].astype(str)
        found = {}
        for c in candidates:
            per_case = frame[c].groupby(cases, sort=False)
            if (per_case.nunique(dropna=False) > 1).any():
                continue  # not a property of the case
            found[str(c)] = per_case.first().reindex(keys).to_numpy(dtype=object)
        return found

    return groupings


_MELTED = "__cogeval_melted_score__"
"""The name the scores of a wide frame melt under, before they are named ``score``."""


def _long(frame: pd.DataFrame, by: str, case: str, metrics: Sequence[str] | None,
          cluster: str | None = None) -> pd.DataFrame:
    """One row per case × trial × metric: ``by``, ``case``, ``trial``, ``metric``, ``score`` (and ``cluster``)."""
    frame = frame.copy()
    keys = [by, case, col.TRIAL, *([cluster] if cluster is not None else [])]
    if col.TRIAL not in frame.columns:
        frame[col.TRIAL] = frame.groupby([by, case], sort=False).cumcount()
    if {col.METRIC, col.SCORE} <= set(frame.columns):
        long = frame if metrics is None else frame[frame[col.METRIC].isin(list(metrics))]
        return long[[*keys, col.METRIC, col.SCORE]]
    if metrics is None:
        metrics = [c for c in frame.select_dtypes("number").columns if c not in (by, case, col.TRIAL, cluster)]
    missing = [m for m in metrics if m not in frame.columns]
    if missing or not metrics:
        raise InputError(f"metrics {missing or metrics!r} are not score columns of the frame "
                         f"(it has: {', '.join(map(str, frame.columns))})")
    # melt under a name no column has, so a metric column named "score" (or "metric") melts too
    long = frame[[*keys, *metrics]].set_axis([*keys, *range(len(metrics))], axis=1).melt(
        id_vars=keys, var_name=col.METRIC, value_name=_MELTED)
    long = long.assign(**{col.METRIC: np.asarray(metrics, dtype=object)[long[col.METRIC].to_numpy(dtype=int)]})
    long = long.rename(columns={_MELTED: col.SCORE})
    try:
        long[col.SCORE] = pd.to_numeric(long[col.SCORE]).astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"scores must be numbers: {error}") from None
    return long


def _scores(rows: pd.DataFrame, case: str, run_id: str, cluster: str | None = None) -> pd.DataFrame:
    """The score table :func:`compare_scores` takes, for one version's rows (with the ``cluster`` column)."""
    duplicated = rows.duplicated([case, col.TRIAL, col.METRIC])
    if duplicated.any():
        first = rows[duplicated].iloc[0]
        raise InputError(f"case {first[case]} has two rows for trial {first[col.TRIAL]} of metric {first[col.METRIC]!r} "
                         f"in version {run_id!r}")
    table = pd.DataFrame({
        col.RUN_ID: run_id, col.CASE_KEY: rows[case].astype(str).to_numpy(), col.OCCURRENCE: 0,
        col.TRIAL: rows[col.TRIAL].to_numpy(), col.METRIC: rows[col.METRIC].to_numpy(),
        col.SCORE: pd.to_numeric(rows[col.SCORE]).astype(float).to_numpy(), col.ERROR: None, CASE_ERROR: False,
    })
    if cluster is not None:
        table[cluster] = rows[cluster].to_numpy(dtype=object)
    return table
