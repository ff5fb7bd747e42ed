"""The vocabulary of a head-to-head: a task both variants answered, and a verdict on it.

The rules, in variant terms:

- a task is one case both variants answered; its id is the case key, then
  ``#k`` for the k-th repeat of the case (:func:`task_id`);
- a person or judge sees "response 1" and "response 2" and answers ``"1"``,
  ``"2"`` or ``"tie"``; which variant was shown first turns that answer into a
  verdict ``"a"``, ``"b"`` or ``"tie"`` (:func:`one_order_verdict`);
- no verdict is ``None`` with an ``error`` saying why, and is never a tie.

>>> verdict = one_order_verdict("1", first="b")
>>> verdict.winner, verdict.ab, verdict.ba, verdict.details["first"]
('b', None, 'b', 'b')
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from cogeval._check import check_seed, describe
from cogeval.data import Case
from cogeval.errors import InputError

CHOICES = ("1", "2", "tie")
"""The answers a person or judge gives about "response 1" and "response 2"."""
NOT_LABELLED_YET = "not labelled yet"
"""The error of a human verdict still waiting in the labelling widget."""


def task_id(case_key: str, occurrence: int) -> str:
    """The id pairing the same task across two sources: the case key, then ``#k`` for its k-th repeat.

    >>> task_id("9f2c", 0), task_id("9f2c", 2)
    ('9f2c', '9f2c#2')
    """
    return case_key if occurrence == 0 else f"{case_key}#{occurrence}"


@dataclasses.dataclass(frozen=True)
class PairTask:
    """One task both variants answered: its ``case``, the two outputs, and each target's error (``None``: it
    answered)."""

    task_id: str
    case_key: str
    case: Case
    output_a: Any
    output_b: Any
    error_a: str | None = None
    error_b: str | None = None

    def shown(self, first: str) -> tuple[Any, Any]:
        """``(response_1, response_2)`` with variant ``first`` (``"a"`` or ``"b"``) shown first."""
        return (self.output_a, self.output_b) if first == "a" else (self.output_b, self.output_a)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A comparator's decision on one task, in variant terms.

    ``winner`` is ``"a"``, ``"b"``, ``"tie"`` or ``None`` (no verdict; ``error``
    says why). ``ab`` / ``ba`` are the verdicts given with A / B shown first
    (``None`` for an order not shown). ``details`` keep the rest: the order a
    person saw (``first``), a judge's usage, an unusable answer.
    """

    winner: str | None
    ab: str | None = None
    ba: str | None = None
    reasoning: str | None = None
    error: str | None = None
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def flipped(self) -> bool:
        """Both orders were judged and disagreed (a win against a tie counts)."""
        return self.ab is not None and self.ba is not None and self.ab != self.ba


def read_choice(value: Any) -> str | None:
    """``"1"``, ``"2"`` or ``"tie"`` from an answer's winner value (``1``, ``"Response 2"``, ``"TIE"``...), else
    ``None``.

    >>> read_choice(2), read_choice(" Response 1 "), read_choice("TIE"), read_choice("maybe")
    ('2', '1', 'tie', None)
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    found = re.fullmatch(r"\s*(?:response[\s_#-]*)?([12])\s*|\s*(tie)\s*", value, re.I)
    return None if found is None else (found[1] or "tie")


def position_verdict(choice: str, first: str) -> str:
    """A ``"1"``/``"2"``/``"tie"`` answer in variant terms, given which variant was shown first."""
    if choice == "tie":
        return "tie"
    return first if choice == "1" else ("b" if first == "a" else "a")


def one_order_verdict(choice: str, first: str) -> Verdict:
    """The verdict of a person (or label) who saw the pair once, variant ``first`` shown first."""
    winner = position_verdict(choice, first)
    return Verdict(winner, ab=winner if first == "a" else None, ba=winner if first == "b" else None,
                   details={"first": first})


def seeded_orders(seed: Any, n: int) -> list[str]:
    """Which variant is shown first for each of ``n`` tasks: ``default_rng(seed).integers(0, 2, n)``, 0 → ``"a"``.

    ``seed`` follows the one seed rule (None, an integer >= 0 or a numpy Generator).

    >>> seeded_orders(0, 4)
    ['b', 'b', 'b', 'a']
    """
    rng = np.random.default_rng(check_seed("seed", seed))
    return ["a" if draw == 0 else "b" for draw in rng.integers(0, 2, size=n)]


def check_key(key: Any) -> str:
    """A comparator's key: a non-empty string."""
    if not isinstance(key, str) or not key.strip():
        raise InputError(f"key must be a non-empty string naming the comparator; got {describe(key)}")
    return key


def check_names(names: Any) -> tuple[str, str]:
    """The names of A and B: two different non-empty strings."""
    ok = (isinstance(names, (tuple, list)) and len(names) == 2 and all(isinstance(n, str) and n.strip() for n in names)
          and names[0] != names[1])
    if not ok:
        raise InputError(f"names must be two different non-empty strings (A's, then B's); got {describe(names)}")
    return names[0], names[1]
