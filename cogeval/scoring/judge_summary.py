"""What a run's records say about its judge: usage totals over judge scores, and the self-preference check."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


def judge_usage_totals(details: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Sum the ``judge_usage`` of judge scores' details: calls, cache hits, tokens, ``cost_usd`` (NaN when unknown).

    >>> judge_usage_totals([{"judge_usage": {"calls": 1, "cache_hits": 0, "input_tokens": 9, "cost_usd": 0.5}}, None])
    {'calls': 1, 'cache_hits': 0, 'input_tokens': 9, 'output_tokens': 0, 'cost_usd': 0.5}
    """
    totals: dict[str, Any] = {"calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0}
    costs = []
    for item in details:
        usage = item.get("judge_usage") if isinstance(item, Mapping) else None
        if isinstance(usage, Mapping):
            for name in totals:
                totals[name] += int(usage.get(name) or 0)
            if usage.get("cost_usd") is not None:
                costs.append(float(usage["cost_usd"]))
    totals["cost_usd"] = math.fsum(costs) if costs else math.nan
    return totals


def self_preference_message(judge: Any, target: Any, target_name: str = "the target") -> str | None:
    """Why ``judge`` should not judge ``target`` when both are the same model, else ``None``.

    A model judging answers it wrote tends to prefer them (self-preference
    bias). ``judge`` and ``target`` are objects with a ``describe()`` (a
    :class:`JudgeConfig`, a :class:`~cogeval.ChatTarget`, a pairwise judge) or
    the dicts a run file keeps (``config.judge``, ``config.target``: a
    ``"model"`` key; a pairwise comparator's description: under ``"judge"``).
    Model names are compared stripped and case-insensitively; a side with no
    model (a function target) gives ``None``. ``target_name`` names the target
    in the message. :class:`~cogeval.EvalSuite` and
    :func:`~cogeval.run_pairwise` warn with it (:class:`~cogeval.SelfPreferenceWarning`).

    >>> print(self_preference_message({"model": "GPT-4o "}, {"type": "chat", "model": "gpt-4o"}))
    the judge is model 'GPT-4o', the same model as the target: a model judging answers it wrote tends to prefer them (self-preference bias), so it favours the target; use a judge from another model family
    >>> self_preference_message({"model": "gpt-4o"}, {"type": "function", "name": "answer"}) is None
    True
    """
    judge_model, target_model = _model_name(judge), _model_name(target)
    if judge_model is None or target_model is None or judge_model.casefold() != target_model.casefold():
        return None
    return (f"the judge is model {judge_model!r}, the same model as {target_name}: a model judging answers it "
            f"wrote tends to prefer them (self-preference bias), so it favours {target_name}; use a judge from "
            "another model family")


def _model_name(value: Any) -> str | None:
    """The stripped ``model`` of a description dict (or of ``value.describe()``), else ``None``."""
    if not isinstance(value, Mapping):
        describe = getattr(value, "describe", None)
        try:
            value = describe() if callable(describe) else None
        except Exception:  # noqa: BLE001 - a check for a warning never breaks the caller
            return None
    if not isinstance(value, Mapping):
        return None
    model = value.get("model")
    if model is None and isinstance(value.get("judge"), Mapping):
        model = value["judge"].get("model")
    return model.strip() if isinstance(model, str) and model.strip() else None
