"""Labelling pairs by hand, for :func:`~cogeval.human_pairwise`: a terminal prompt and a Jupyter widget.

Both show the case and two anonymous responses, "Response 1" and "Response 2",
and take ``1``, ``2`` or ``tie``. The widget is a plain ``VBox`` of standard
widgets whose parts are attributes, so code and tests drive it through its
traits (``widget.one.click()`` labels the pair on show)::

    widget = LabellingWidget([(case, "Paris", "Lyon")], on_label=print)
    widget.one.click()          # prints: 0 1

The pairwise package reaches this module by name only, through
:func:`cogeval.pairwise.labelling_ui` (nothing imports present); it uses
:func:`in_notebook`, :class:`TerminalAsk` and :func:`show_labelling_widget`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

from cogeval._html import escape
from cogeval._text import as_text
from cogeval.errors import ExecutionError
from cogeval.pairwise.verdict import CHOICES


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where a widget can be shown), else False."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _text(value: Any) -> str:
    return "" if value is None else as_text(value)


def _case_input(case: Any) -> Any:
    given = getattr(case, "input", None)
    return given if given is not None else getattr(case, "turns", None)


class TerminalAsk:
    """Ask a person in the terminal, pair after pair; an answer other than 1, 2 or tie is asked again.

    ``read`` and ``write`` default to :func:`input` and :func:`print`. The end
    of input (Ctrl-D) stops the labelling with an error saying where.
    """

    def __init__(self, total: int, title: str = "", read: Callable[[str], str] | None = None,
                 write: Callable[[str], Any] | None = None) -> None:
        self.total, self.title = total, title
        self.read = read or (lambda prompt: input(prompt))  # looked up when called
        self.write = write or (lambda text: print(text))
        self.done = 0

    def __call__(self, case: Any, response_1: Any, response_2: Any) -> str:
        self.done += 1
        where = f"Pair {self.done} of {self.total}" + (f" · {self.title}" if self.title else "")
        expected = getattr(case, "expected", None)
        self.write("\n".join([
            f"=== {where} ===", "Input:", _text(_case_input(case)),
            *(["Reference answer:", _text(expected)] if expected is not None else []),
            "--- Response 1 ---", _text(response_1), "--- Response 2 ---", _text(response_2),
        ]))
        while True:
            try:
                answer = self.read("Which response is better? [1/2/tie]: ").strip().lower()
            except EOFError:
                raise ExecutionError(f"labelling stopped at pair {self.done} of {self.total}: end of input") from None
            if answer in CHOICES:
                return answer
            self.write(f"Please answer 1, 2 or tie (got {answer!r}).")


def _pane(title: str, value: Any) -> str:
    return (f'<div class="cogeval"><b>{escape(title)}</b>'
            f'<pre style="white-space:pre-wrap;overflow-wrap:anywhere">{escape(_text(value))}</pre></div>')


class LabellingWidget(widgets.VBox):
    """Label pairs one after another: the input above, the two responses side by side, buttons 1 / 2 / tie.

    ``items`` are ``(case, response_1, response_2)``; each click calls
    ``on_label(index, choice)`` (``choice`` is ``"1"``, ``"2"`` or ``"tie"``) and
    shows the next pair. Parts: ``status`` (HTML: progress text), ``progress``
    (IntProgress), ``prompt``, ``left``, ``right`` (HTML, escaped), ``one``,
    ``two``, ``tie`` (Buttons). ``answers`` holds the choices so far (``None``:
    not labelled); ``index`` is the pair on show (``None`` when all are done).
    An error raised by ``on_label`` is shown in ``status``, never raised into
    the notebook, and the pair stays on show.
    """

    def __init__(self, items: Sequence[tuple[Any, Any, Any]], on_label: Callable[[int, str], Any],
                 title: str = "Which response is better?") -> None:
        self.items, self.on_label, self.title = list(items), on_label, title
        self.answers: list[str | None] = [None] * len(self.items)
        self.index: int | None = 0 if self.items else None
        self.status = widgets.HTML()
        self.progress = widgets.IntProgress(value=0, min=0, max=max(1, len(self.items)))
        self.prompt, self.left, self.right = widgets.HTML(), widgets.HTML(), widgets.HTML()
        for pane in (self.left, self.right):
            pane.layout = widgets.Layout(width="50%")
        self.one = widgets.Button(description="1 is better")
        self.two = widgets.Button(description="2 is better")
        self.tie = widgets.Button(description="tie")
        for button, choice in ((self.one, "1"), (self.two, "2"), (self.tie, "tie")):
            button.on_click(lambda _, choice=choice: self.label(choice))
        super().__init__([self.status, self.progress, self.prompt, widgets.HBox([self.left, self.right]),
                          widgets.HBox([self.one, self.two, self.tie])])
        self._show()

    def label(self, choice: str) -> None:
        """Give the pair on show the answer ``choice`` and move to the next unlabelled pair."""
        if self.index is None or choice not in CHOICES:
            return
        try:
            self.on_label(self.index, choice)
        except Exception as error:  # noqa: BLE001 - a widget callback must never raise into the notebook
            self._show(f"could not record the answer: {type(error).__name__}: {error}")
            return
        self.answers[self.index] = choice
        rest = [i for i, answer in enumerate(self.answers) if answer is None]
        self.index = next((i for i in rest if i > self.index), rest[0] if rest else None)
        self._show()

    def _show(self, problem: str | None = None) -> None:
        done = sum(answer is not None for answer in self.answers)
        self.progress.value = done
        total = len(self.items)
        if self.index is None:
            self.status.value = f"<b>{escape(self.title)}</b> · all {total} pairs labelled"
            self.prompt.value = self.left.value = self.right.value = ""
        else:
            case, response_1, response_2 = self.items[self.index]
            self.status.value = (f"<b>{escape(self.title)}</b> · pair {self.index + 1} of {total} · {done} labelled"
                                 + (f' · <span style="color:#cf222e">{escape(problem)}</span>' if problem else ""))
            self.prompt.value = _pane("Input", _case_input(case))
            self.left.value, self.right.value = _pane("Response 1", response_1), _pane("Response 2", response_2)
        for button in (self.one, self.two, self.tie):
            button.disabled = self.index is None


def show_labelling_widget(items: Sequence[tuple[Any, Any, Any]], on_label: Callable[[int, str], Any],
                          title: str = "Which response is better?") -> LabellingWidget:
    """Show a :class:`LabellingWidget` for ``items`` below the running cell and return it."""
    from IPython.display import display

    widget = LabellingWidget(items, on_label, title=title)
    display(widget)
    return widget
