"""Metrics whose direction nobody gave: what a comparison does with them, and what it says.

A table's column (``compare_frames``, ``EvalRun.from_frame``) or an imported score can arrive without
``higher_is_better``. It is then *assumed* higher-is-better, and never in silence: the comparison's warnings
name it, and the headline does when its verdict counts. A name never picks a direction; it can only withhold
a decision: an assumed metric whose name reads as a cost (:func:`reads_as_cost`) informs instead of deciding,
unless ``decide_on`` names it.

>>> reads_as_cost("latency_s"), reads_as_cost("totalCostUsd"), reads_as_cost("exact_match")
(True, True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_COST_WORDS = frozenset({"latency", "duration", "time", "cost", "price", "token", "tokens", "error", "errors", "loss"})
"""The words of a metric's name that say lower may be better: such a metric informs while its direction is assumed."""

_UNIT_SUFFIXES = ("_s", "_ms")
"""Name endings of a time in seconds or milliseconds."""

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
"""The words of a snake_case, kebab-case, dotted or camelCase name."""


def reads_as_cost(name: str) -> bool:
    """Whether ``name`` reads as a cost: one of its words is latency, duration, time, cost,
    price, token(s), error(s) or loss, or it ends in ``_s``/``_ms``."""
    words = {word.lower() for word in _WORDS.findall(name)}
    return bool(words & _COST_WORDS) or name.lower().endswith(_UNIT_SUFFIXES)


ASSUMED_LEGEND = "↑?: no direction given, taken as higher-is-better"
"""What the arrow of a metric whose direction was assumed means, under every table that shows one."""


def arrow(higher_is_better: bool, assumed: bool = False) -> str:
    """The mark of a metric's direction beside its name: ``↑``, ``↓``, or ``↑?`` when it was assumed.

    >>> arrow(True), arrow(False), arrow(True, assumed=True)
    ('↑', '↓', '↑?')
    """
    return ("↑" if higher_is_better else "↓") + ("?" if assumed else "")


def assumed_warnings(assumed: Iterable[str], costs: Iterable[str]) -> list[str]:
    """The comparison's warnings about the metrics whose direction was ``assumed``; ``costs`` are those of them
    that inform because their names read as costs.

    >>> for w in assumed_warnings(["quality", "latency_s"], ["latency_s"]):
    ...     print(w)
    Metric 'latency_s' has no direction given and its name reads as a cost, so it informs and does not decide the verdict (its row reads higher as better); to make it decide, give its direction: directions={'latency_s': False} if lower is better, True if higher is (or name it in decide_on= to let it decide as higher-is-better)
    No direction was given for metric 'quality': it was taken as higher-is-better (give directions={'quality': False} if lower is better)
    """
    costs = list(costs)
    warnings = [f"Metric {name!r} has no direction given and its name reads as a cost, so it informs and does not "
                f"decide the verdict (its row reads higher as better); to make it decide, give its direction: "
                f"directions={{{name!r}: False}} if lower is better, True if higher is (or name it in decide_on= to "
                "let it decide as higher-is-better)" for name in costs]
    rest = [name for name in assumed if name not in costs]
    if rest:
        listed = ", ".join(map(repr, rest))
        warnings.append(f"No direction was given for metric{'s' if len(rest) > 1 else ''} {listed}: "
                        f"{'they were' if len(rest) > 1 else 'it was'} taken as higher-is-better (give "
                        f"directions={{{rest[0]!r}: False}} if lower is better)")
    return warnings
