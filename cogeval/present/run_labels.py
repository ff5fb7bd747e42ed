"""Short labels that tell a store's runs apart: the name, the metadata that differs, the start time.

Runs of one app often share a name ("assistant"), so the name alone cannot tell
v1 from v2. A label adds the metadata fields whose (short, scalar) values differ
between the runs listed — ``version``, ``model``... at most three — then the start
time to the minute (to the second, and then the run id's suffix, only where labels
would still be equal). The full run id belongs in a tooltip.

>>> from cogeval.data import EvalRun
>>> def run(version, start):
...     started = f"2026-12-01T{start[:2]}:{start[2:]}:00Z"
...     return EvalRun.model_validate({"run_id": f"20261201T{start}00000Z-0000000{version}", "name": "assistant",
...                                    "started_at": started, "finished_at": started,
...                                    "metadata": {"version": f"v{version}", "demo": True}, "results": []})
>>> list(run_labels([run(2, "1015"), run(1, "0900")]).values())
['assistant · version=v2 · 2026-12-01 10:15', 'assistant · version=v1 · 2026-12-01 09:00']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cogeval._text import cut
from cogeval.data import EvalRun

_MAX_FIELDS = 3
_MAX_VALUE = 24


def run_labels(runs: Sequence[EvalRun]) -> dict[str, str]:
    """Run id → label, in the order of ``runs``; labels are distinct."""
    fields = _telling_fields(runs)
    labels = {}
    for run in runs:
        told = [f"{key}={cut(str(run.metadata[key]), _MAX_VALUE)}" for key in fields if key in run.metadata]
        labels[run.run_id] = " · ".join([run.name or "(no name)", *told, _time(run.started_at, 16)])
    by_id = {run.run_id: run for run in runs}
    labels = _where_equal(labels, lambda run_id, label: label[:-16] + _time(by_id[run_id].started_at, 19))
    return _where_equal(labels, lambda run_id, label: f"{label} · {run_id.rsplit('-', 1)[-1]}")


def _where_equal(labels: dict[str, str], longer: Callable[[str, str], str]) -> dict[str, str]:
    """``labels`` with every label that several runs share made ``longer``."""
    shared = {label for label in labels.values() if list(labels.values()).count(label) > 1}
    return {run_id: longer(run_id, label) if label in shared else label for run_id, label in labels.items()}


def _telling_fields(runs: Sequence[EvalRun]) -> list[str]:
    """Metadata keys with short scalar values that differ between the runs (first seen first)."""
    keys: dict[str, set[Any]] = {}
    for run in runs:
        for key, value in (run.metadata or {}).items():
            if isinstance(value, str | int | float | bool) and len(str(value)) <= 2 * _MAX_VALUE:
                keys.setdefault(key, set()).add(value)
    return [key for key, values in keys.items() if len(values) > 1 or
            any(key not in (run.metadata or {}) for run in runs)][:_MAX_FIELDS]


def _time(started_at: str, length: int) -> str:
    """``2026-12-01T10:15:30.123Z`` → ``2026-12-01 10:15`` (length 16) or ``… 10:15:30`` (19)."""
    return started_at.replace("T", " ")[:length]
