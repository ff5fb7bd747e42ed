"""The run file's own shape (``cogitator.eval-run`` version 1) and the Python model's, converted at the boundary.

The format (``shared/formats/README.md``) and the model agree on durations (milliseconds in both; the
tables show seconds) and differ in three places. :func:`to_file` makes the file's shape from the model's
JSON (``EvalRun.model_dump(by_alias=True)``), :func:`from_file` the model's from a file:

- **metrics**: ``config.metrics`` and ``config.statisticalMetrics`` are lists of names in the file;
  cogeval's detail of each (``higherIsBetter``, ``params``, ``kind``) goes in the additional fields
  ``config.metricDetails`` and ``config.statisticalMetricDetails``, which other readers ignore;
- **prompts** is a list of every distinct prompt version the results used (``{key, versionId, version}``);
- **cost**: the file's ``stats.cost`` is the target's and the judge's together and ``stats.targetCost``
  the target's alone; in Python ``stats.cost`` is the target's (``judge_cost`` the judge's).

Files cogeval wrote before it followed the format (their ``config.metrics`` are objects) hold seconds
and the target's cost: :func:`from_file` makes their durations milliseconds and keeps the rest.

>>> data = {"config": {"metrics": [{"name": "exact_match", "higherIsBetter": True, "params": {}, "kind": "case"}],
...                    "statisticalMetrics": []},
...         "prompts": {"support": {"key": "support", "versionId": "v1", "version": 1}},
...         "results": [{"prompt": {"key": "support", "versionId": "v2", "version": 2}}],
...         "stats": {"duration": 1500.0, "cost": 0.5, "judgeCost": 0.25}}
>>> written = to_file(data)
>>> written["config"]["metrics"], [p["versionId"] for p in written["prompts"]], written["stats"]
(['exact_match'], ['v2', 'v1'], {'duration': 1500.0, 'cost': 0.75, 'judgeCost': 0.25, 'targetCost': 0.5})
>>> from_file(written)["config"] == data["config"], from_file(written)["stats"] == data["stats"]
(True, True)
"""

from __future__ import annotations

import copy
import math
from typing import Any

_DETAILS = {"metrics": "metricDetails", "statisticalMetrics": "statisticalMetricDetails"}
_PROMPT_FIELDS = ("key", "versionId", "version")


def to_file(data: dict[str, Any]) -> dict[str, Any]:
    """The file's shape of a run's JSON data (camelCase keys, NaN as ``None``); ``data`` is left unchanged
    (the parts changed are copied, the rest shared)."""
    data = dict(data)
    config = _copied(data, "config") or {}
    for key, details in _DETAILS.items():
        metrics = config.get(key) or []
        config[key] = [m["name"] for m in metrics]
        config[details] = metrics
    stats = _copied(data, "stats")
    if isinstance(stats, dict) and "cost" in stats:
        target = stats["cost"]
        stats["cost"] = _sum(target, stats.get("judgeCost"))
        stats["targetCost"] = target
    if "prompts" in data:
        data["prompts"] = distinct_prompts(data)
    return data


def from_file(data: Any) -> Any:
    """The model's shape of a run file's JSON data; anything that is not a run's data comes back as it is.
    ``data`` is left unchanged (the parts changed are copied, the rest shared)."""
    if not isinstance(data, dict):
        return data
    if before_the_format(data):
        data = copy.deepcopy(data)
        _milliseconds(data)  # cogeval's own files from before it followed the format: seconds
        return data
    data = dict(data)
    config = _copied(data, "config")
    if isinstance(config, dict):
        for key, details in _DETAILS.items():
            names, detailed = config.get(key), config.pop(details, None)
            if isinstance(names, list) and isinstance(detailed, list):
                by_name = {d.get("name"): d for d in detailed if isinstance(d, dict)}
                config[key] = [by_name.get(n, n) if isinstance(n, str) else n for n in names]
    stats = _copied(data, "stats")
    if isinstance(stats, dict) and "targetCost" in stats:
        stats["cost"] = stats.pop("targetCost")
    return data


def before_the_format(data: dict[str, Any]) -> bool:
    """Whether run-file data is cogeval's from before it followed the format (``config.metrics`` are objects)."""
    config = data.get("config")
    metrics = config.get("metrics") if isinstance(config, dict) else None
    return isinstance(metrics, list) and any(isinstance(m, dict) for m in metrics)


def _copied(data: dict[str, Any], key: str) -> Any:
    """``data[key]`` replaced by a shallow copy when it is a dict (else as it is, ``None`` when absent)."""
    value = data.get(key)
    if isinstance(value, dict):
        value = data[key] = dict(value)
    return value


def distinct_prompts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every distinct prompt version of the results (their turns too), then those only ``prompts`` names."""
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    candidates = []
    for result in data.get("results") or []:
        candidates.append(result.get("prompt"))
        candidates += [turn.get("prompt") for turn in result.get("turns") or [] if isinstance(turn, dict)]
    prompts = data.get("prompts")
    candidates += list(prompts.values()) if isinstance(prompts, dict) else list(prompts or [])
    for prompt in candidates:
        if isinstance(prompt, dict) and prompt.get("key") is not None:
            found.setdefault(tuple(repr(prompt.get(f)) for f in _PROMPT_FIELDS), prompt)
    return list(found.values())


def _milliseconds(data: dict[str, Any]) -> None:
    """An old cogeval file's seconds as milliseconds."""
    records = [data.get("stats")]
    for result in data.get("results") or []:
        if isinstance(result, dict):
            records += [result, *(result.get("turns") or [])]
    for record in records:
        if not isinstance(record, dict):
            continue
        value = record.get("duration")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            record["duration"] = value * 1000


def _sum(target: Any, judge: Any) -> Any:
    """The run's whole cost: the target's and the judge's, an unknown part (``None``) counting as nothing
    unless both are unknown."""
    known = [c for c in (target, judge) if isinstance(c, (int, float)) and not math.isnan(c)]
    return sum(known) if known else target
