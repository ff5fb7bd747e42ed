"""What every comparator is: something that decides, task by task, whether B's output beats A's.

A comparator has a ``key`` (its name in the result), ``describe()`` (how it
decides, written to the pairwise file) and ``decide(tasks, concurrency)`` (one
:class:`~cogeval.pairwise.Verdict` per task, in order). ``after(labelling)`` is
called once the result exists; the human comparator shows its labelling widget
there, and each label makes a new result in :class:`Labelling` (a result never
changes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from cogeval._check import describe
from cogeval.errors import InputError
from cogeval.pairwise.result import PairwiseResult
from cogeval.pairwise.verdict import PairTask, Verdict


class Labelling:
    """The latest result of a run while people label it: each label replaces ``result`` with a new result.

    With a ``store`` (a :class:`~cogeval.RunStore` or folder), ``label(..., save=True)``
    also writes the new result there, and the new result's ``path`` says where.
    """

    def __init__(self, result: PairwiseResult, store: Any = None) -> None:
        self.result, self.store = result, store

    def __repr__(self) -> str:
        return f"Labelling(result={self.result.id!r}, store={self.store!r})"

    def label(self, key: str, task_id: str, choice: str, *, save: bool = False) -> PairwiseResult:
        """Record a person's ``choice`` (``"1"``, ``"2"`` or ``"tie"``, about the pair as shown) for ``task_id``."""
        labelled = self.result.with_labels(key, {task_id: choice})
        if save and self.store is not None:
            labelled = dataclasses.replace(labelled, path=labelled.save(self.store))
        self.result = labelled
        return labelled


class Comparator:
    """Decides, for each task, whether B's output beats A's.

    Subclasses set ``key`` and implement :meth:`describe` and :meth:`decide`.
    """

    key: str

    def describe(self) -> dict[str, Any]:
        """How the comparator decides, as JSON data for the pairwise file."""
        raise NotImplementedError

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        """One verdict per task, in order."""
        raise NotImplementedError

    def after(self, labelling: Labelling) -> None:
        """Called once the result exists (``labelling.result``); the human comparator shows its widget here."""


def check_comparators(comparators: Any) -> list[Comparator]:
    """A list of comparators with distinct keys (a single comparator is accepted)."""
    if isinstance(comparators, Comparator):
        comparators = [comparators]
    if isinstance(comparators, (str, bytes)) or not isinstance(comparators, Sequence) or not comparators:
        raise InputError("comparators must be a non-empty list of comparators (pairwise_judge(...), "
                         f"human_pairwise(...), human_labels(...)); got {describe(comparators)}")
    seen: set[str] = set()
    for comparator in comparators:
        if not isinstance(comparator, Comparator):
            raise InputError("comparators must hold pairwise_judge(...), human_pairwise(...) or human_labels(...); "
                             f"got {describe(comparator)}")
        if comparator.key in seen:
            raise InputError(f"two comparators have the key {comparator.key!r}; give each its own key")
        seen.add(comparator.key)
    return list(comparators)
