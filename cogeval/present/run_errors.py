"""The errors of a run as the reports show them: one section per kind, the most frequent messages first.

Every suite report (console, Markdown, HTML, CI) and ``cogeval show`` read the run's two tables,
``errors_frame`` (the target's errors) and ``metric_errors_frame`` (the metrics'), built once in
:mod:`cogeval.data.run_errors`; this module gives their headings and their plain-text form.

>>> from cogeval import EvalSuite, exact_match
>>> def flaky(q):
...     if q != "ok":
...         raise RuntimeError("service down")
...     return "ok"
>>> result = EvalSuite([{"input": q} for q in ("a", "b", "ok")], flaky, metrics=[exact_match()], progress=False).run()
>>> print("\\n".join(error_lines(result, 80)))
errors: 2 of 3 results
  2  RuntimeError: service down
     e.g. a · b
metric errors: 3 of 3 scores
  3  exact_match needs case.expected
     e.g. a · b · ok
"""

from __future__ import annotations

from typing import Any

from cogeval._text import cut, one_line, printable

SHOWN_ERRORS = 5
"""Messages the console, CLI and CI reports list per kind of error."""


def error_sections(run: Any) -> list[tuple[str, Any]]:
    """``(heading, frame)`` per kind of error the run has: the target's (``errors: 20 of 50 results``,
    ``run.errors_frame``) and the metrics' (``metric errors: 3 of 100 scores``, ``run.metric_errors_frame``);
    a kind without errors is left out. ``run`` is an :class:`~cogeval.EvalRun` or a suite result."""
    sections = []
    errors, metric_errors = run.errors_frame, run.metric_errors_frame
    if len(errors):
        sections.append((f"errors: {int(errors['cases'].sum())} of {len(run.results)} results", errors))
    if len(metric_errors):
        scores = sum(len(r.scores) for r in run.results)
        sections.append((f"metric errors: {int(metric_errors['cases'].sum())} of {scores} scores", metric_errors))
    return sections


def error_message(row: Any) -> str:
    """A row of an errors frame as one line: ``RuntimeError: down``; a metric's message as it is when it names
    its metric (``metric 'quality' raised ValueError: bad``), else after the name (``quality: judge timed out``)."""
    metric = getattr(row, "metric", None)
    return one_line(row.error if metric is None or metric in row.error else f"{metric}: {row.error}")


def error_lines(run: Any, width: int) -> list[str]:
    """The errors of ``run`` as lines of at most ``width`` characters, inert (:func:`~cogeval._text.printable`);
    none when nothing failed. Per kind (:func:`error_sections`): its heading, then each of the
    :data:`SHOWN_ERRORS` most frequent messages with its count, its example cases under it, and
    ``… and N more messages`` for the rest."""
    lines = []
    for heading, frame in error_sections(run):
        lines.append(heading)
        shown = frame.head(SHOWN_ERRORS)
        digits = len(str(int(shown["cases"].max())))
        for row in shown.itertuples(index=False):
            lines.append(cut(f"  {row.cases:>{digits}}  {printable(error_message(row))}", width))
            lines.append(cut(f"  {'':>{digits}}  e.g. {printable(' · '.join(row.examples))}", width))
        if len(frame) > len(shown):
            lines.append(f"  … and {len(frame) - len(shown)} more messages")
    return lines
