"""The one way from a result to the presentation layer: how ``.plot()`` and ``.report()`` find ``cogeval.present``.

DESIGN §1 keeps the presentation layer a leaf: no module below it imports
``cogeval.present``, at load time or inside a function. The notebook
conveniences of results (``EvalRun.plot``, ``EvalSuiteResult.report``,
``RunComparison.report`` / ``.plot`` / ``.plot_changes``, ``RunStore.plot``,
the labelling UIs of ``human_pairwise``) reach it here instead, the way
pandas' ``DataFrame.plot`` reaches its plotting backend: :func:`presenter`
imports the package named :data:`BACKEND` by name on first use and returns
one of the names it exports (``cogeval.present.__all__``). Nothing is loaded
before a convenience is called, so ``import cogeval`` stays light and the
import graph has no edge into present (a guard test checks both).

>>> presenter("plot_scores").__module__
'cogeval.present.plots'
>>> presenter("no_such_thing")
Traceback (most recent call last):
...
cogeval.errors.InputError: the presentation layer 'cogeval.present' has no 'no_such_thing'; it has case_explorer, comparison_html, comparison_markdown, execute_notebook, export_html, figure_mimebundle, labelling, notebook_html, plot_changes, plot_comparison, plot_history, plot_noise, plot_scores, plot_sequential, report_comparison, run_explorer, write_reports
"""

from __future__ import annotations

import importlib
from typing import Any

from cogeval.errors import InputError

BACKEND = "cogeval.present"
"""The package holding every presentation function; its ``__all__`` lists what :func:`presenter` can return."""


def presenter(name: str) -> Any:
    """The presentation function (or UI module) ``name`` of :data:`BACKEND`, imported by name on first use."""
    backend = importlib.import_module(BACKEND)
    if name not in backend.__all__:
        raise InputError(f"the presentation layer {BACKEND!r} has no {name!r}; it has {', '.join(backend.__all__)}")
    return getattr(backend, name)
