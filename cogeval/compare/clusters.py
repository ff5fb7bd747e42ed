"""Clusters: which cases are not independent of each other, so a comparison tests whole groups of them.

- ``cluster="passage"`` (a case-metadata field) or ``cluster=lambda case: ...`` (a function of the
  :class:`~cogeval.Case`) gives each case its cluster, resolved as ``by=`` resolves slices.
- Every case must have one: a case without the field (or for which the function returns None or NaN) is an
  :class:`~cogeval.errors.InputError` naming the case and the field, never a silent cluster of its own.
- A label that cannot be a dict key (a list...) is its canonical JSON; ``True`` and ``1`` are two clusters.

>>> from cogeval.data.records import ResultRecord
>>> results = [ResultRecord.model_validate({"caseKey": "k1", "case": {"input": "q1", "metadata": {"doc": "a"}},
...                                          "scores": []})]
>>> cluster_labels("doc", results).tolist()
['a']
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from cogeval._check import describe
from cogeval._text import short_input
from cogeval.compare.slices import keyable
from cogeval.data.records import ResultRecord
from cogeval.errors import InputError


def check_cluster(cluster: Any) -> Any:
    """``cluster`` itself when it is None, a metadata field name or a function of the case; else an InputError."""
    if cluster is None or (isinstance(cluster, str) and cluster) or callable(cluster):
        return cluster
    raise InputError("cluster must be a case-metadata field name (e.g. cluster='passage'), a function of the case "
                     f"or None; got {describe(cluster)}")


def cluster_name(cluster: Any) -> str | None:
    """What a comparison says its cases were clustered by: the field, or the function's name."""
    if cluster is None or isinstance(cluster, str):
        return cluster
    return str(getattr(cluster, "__qualname__", None) or getattr(cluster, "__name__", None) or repr(cluster))


def cluster_labels(cluster: Any, results: Sequence[ResultRecord]) -> np.ndarray:
    """The cluster of each result's case (an object array, one label per result).

    ``cluster`` is a case-metadata field or a function of the :class:`~cogeval.Case`. A case without
    a label is an :class:`InputError` naming the case (its input and key) and the field.
    """
    cluster = check_cluster(cluster)
    cases = list(map(operator.attrgetter("case"), results))
    if callable(cluster):
        labels = np.empty(len(cases), dtype=object)
        for i, case in enumerate(cases):
            labels[i] = cluster(case.to_case())
    else:
        metadata = [m if isinstance(m := case.metadata, dict) else {} for case in cases]
        labels = np.empty(len(cases), dtype=object)
        labels[:] = [m.get(cluster) for m in metadata]
    for i, label in enumerate(labels):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            raise InputError(_missing(cluster, results[i], label))
        if isinstance(label, bool):
            labels[i] = f"bool:{label}"  # True and 1 are two clusters, as two JSON values
    return keyable(labels)


def unit_clusters(cluster: Any, results: Sequence[ResultRecord]) -> dict[tuple[str, int], Any]:
    """Each unit's cluster, by ``(case_key, occurrence)``: :func:`cluster_labels` of its results (a unit's trials
    are of one case, so they share it)."""
    return dict(zip(((r.case_key, r.occurrence) for r in results), cluster_labels(cluster, results)))


def _missing(cluster: Any, result: ResultRecord, label: Any) -> str:
    case = f"case {short_input(result.case.input)!r} (case key {result.case_key[:12]})"
    if callable(cluster):
        return (f"cluster={cluster_name(cluster)}: the function gave {label!r} for {case}; every case needs a "
                "cluster (give a case with no group a cluster of its own)")
    metadata = result.case.metadata if isinstance(result.case.metadata, dict) else {}
    fields = ", ".join(sorted(map(str, metadata))) or "none"
    return (f"cluster={cluster!r}: {case} has no metadata field {cluster!r} (its fields: {fields}); every case "
            "needs a cluster (give a case with no group a cluster of its own)")

