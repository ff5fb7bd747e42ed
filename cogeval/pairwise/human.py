"""People as comparators: a person picks the better response, blinded, through an ``ask`` callable.

The person sees the case and "Response 1" and "Response 2", never the
variants; which variant is shown first is drawn per task from ``seed`` and kept
in each verdict (``details["first"]``). ``ask`` is any callable
``ask(case, response_1, response_2) -> "1" | "2" | "tie"`` (sync or async). The
two UIs cogeval brings, a terminal prompt and a Jupyter widget, live in the
presentation layer and are found through :func:`labelling_ui`, the one way from
this package to it: this package never imports ``cogeval.present``.

>>> human = human_pairwise("preferred", ask=lambda case, response_1, response_2: "tie", seed=7)
>>> human
HumanPairwise(key='preferred', seed=7)
>>> human.describe()
{'kind': 'human', 'seed': 7}
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from cogeval import _backend
from cogeval._check import check_seed, describe
from cogeval.errors import InputError
from cogeval.pairwise.comparator import Comparator, Labelling
from cogeval.pairwise.result import PairwiseResult
from cogeval.pairwise.verdict import (
    NOT_LABELLED_YET,
    PairTask,
    Verdict,
    check_key,
    one_order_verdict,
    read_choice,
    seeded_orders,
)

LABELLING_UI = "cogeval.present.labelling"
"""The module holding the labelling UIs that :func:`labelling_ui` returns."""


def labelling_ui() -> Any:
    """The labelling UIs of ``human_pairwise(ask=None | "terminal" | "widget")``: the module :data:`LABELLING_UI`.

    It is found by name through :func:`cogeval._backend.presenter` when a
    person is first asked (as pandas' ``DataFrame.plot`` finds its plotting
    backend), so importing :mod:`cogeval.pairwise` never loads the presentation
    layer or ipywidgets (DESIGN §1: nothing imports present). The module provides:

    - ``in_notebook() -> bool``: whether a widget can be shown (the default for ``ask=None``);
    - ``TerminalAsk(total, title=...)``: an ``ask`` callable that prints each pair and reads the answer;
    - ``show_labelling_widget(items, on_label, title=...)``: shows a widget for
      ``(case, response_1, response_2)`` items, calls ``on_label(index, choice)``
      on each click, and returns the widget.

    >>> labelling_ui().__name__
    'cogeval.present.labelling'
    """
    return _backend.presenter("labelling")


class HumanPairwise(Comparator):
    """A person picks the better response, blinded; see :func:`human_pairwise`."""

    def __init__(self, key: str, ask: Any = None, seed: Any = None) -> None:
        if not (ask is None or ask in ("terminal", "widget") or callable(ask)):
            raise InputError(f"ask must be None, 'terminal', 'widget' or a function (case, response_1, response_2) "
                             f"returning '1', '2' or 'tie'; got {describe(ask)}")
        self.key, self.ask, self.seed = check_key(key), ask, check_seed("seed", seed)
        self.widget: Any = None
        """The labelling widget last shown (in Jupyter), else ``None``."""
        self._labelling: Labelling | None = None

    def __repr__(self) -> str:
        return f"HumanPairwise(key={self.key!r}, seed={self.seed!r})"

    @property
    def result(self) -> PairwiseResult | None:
        """The result with the labels given so far in the widget last shown: a new result after each click (the
        one ``run_pairwise`` returned stays as it was); ``None`` before a widget was shown."""
        return None if self._labelling is None else self._labelling.result

    def describe(self) -> dict[str, Any]:
        return {"kind": "human", "seed": self.seed}

    def _mode(self) -> str:
        if self.ask is None:
            return "widget" if labelling_ui().in_notebook() else "terminal"
        return self.ask if isinstance(self.ask, str) else "function"

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        firsts = seeded_orders(self.seed, len(tasks))
        mode = self._mode()
        if mode == "widget":  # labelled after the result is returned; see after()
            return [Verdict(None, error=NOT_LABELLED_YET, details={"first": first}) for first in firsts]
        ask = labelling_ui().TerminalAsk(len(tasks), title=self.key) if mode == "terminal" else self.ask
        verdicts = []
        for task, first in zip(tasks, firsts):
            answer = ask(task.case, *task.shown(first))
            if inspect.isawaitable(answer):
                answer = await answer
            choice = read_choice(answer)
            if choice is None:
                raise InputError(f"human_pairwise {self.key!r}: ask returned {describe(answer)} for task "
                                 f"{task.task_id!r}; expected '1', '2' or 'tie'")
            verdicts.append(one_order_verdict(choice, first))
        return verdicts

    def after(self, labelling: Labelling) -> None:
        """Show the labelling widget for the verdicts still to give; each click makes a new result
        (:attr:`result`), saved to the store once the last pair is labelled."""
        result = labelling.result
        verdicts = result.verdicts.get(self.key, ())
        pending = [i for i, v in enumerate(verdicts) if v.winner is None and v.error == NOT_LABELLED_YET]
        if not pending:
            return
        left = set(pending)

        def on_label(index: int, choice: str) -> None:
            position = pending[index]
            labelling.label(self.key, result.tasks[position].task_id, choice, save=left <= {position})
            left.discard(position)

        items = [(result.tasks[i].case, *result.tasks[i].shown(verdicts[i].details["first"])) for i in pending]
        self._labelling = labelling
        title = f"{self.key}: which response is better?"
        self.widget = labelling_ui().show_labelling_widget(items, on_label, title=title)


def human_pairwise(key: str, ask: Any = None, seed: Any = None) -> HumanPairwise:
    """A person compares each pair, blinded: they see the case and "Response 1" and "Response 2", never the variants.

    Which variant is shown first is drawn per case from ``seed`` (None, an
    integer >= 0 or a numpy Generator; ``numpy.random.default_rng(seed).integers(0, 2)``
    per case, in order: 0 shows A first); the order shown is kept in each verdict.

    - ``ask(case, response_1, response_2)``, sync or async, returns ``"1"``,
      ``"2"`` or ``"tie"`` (``1`` and ``2`` as ints too); anything else raises
      an error naming the task.
    - ``ask=None``: in Jupyter, a labelling widget (the two responses side by
      side, buttons 1 / 2 / tie, progress) is shown below the cell and the
      result is returned at once, its cases without a verdict (error
      ``"not labelled yet"``). A result never changes: each click makes a new
      one, ``human.result``. Elsewhere the terminal asks, case by case, and
      asks again after an answer it cannot read. ``ask="widget"`` or
      ``ask="terminal"`` picks one. Both UIs are found through :func:`labelling_ui`.

    >>> human_pairwise("preferred", seed=7)
    HumanPairwise(key='preferred', seed=7)
    """
    return HumanPairwise(key, ask, seed)
