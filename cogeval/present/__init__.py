"""Presentation, the top layer: reports, charts, widgets and the labelling UIs (DESIGN §1, §6).

Nothing below this package imports it. Results reach it by name through
:func:`cogeval._backend.presenter`, which returns one of the names below; each
is loaded from its module on first use, so importing this package loads
neither plotly, rich, jinja2 nor ipywidgets.

>>> import cogeval.present
>>> cogeval.present.write_reports.__module__
'cogeval.present.reporters'
"""

from __future__ import annotations

import importlib
import typing

__all__ = [
    "case_explorer",
    "comparison_html",
    "comparison_markdown",
    "execute_notebook",
    "export_html",
    "figure_mimebundle",
    "labelling",
    "notebook_html",
    "plot_changes",
    "plot_comparison",
    "plot_history",
    "plot_noise",
    "plot_scores",
    "plot_sequential",
    "report_comparison",
    "run_explorer",
    "write_reports",
]

_MODULES = {
    "case_explorer": "widgets",
    "comparison_html": "comparison_report",
    "comparison_markdown": "comparison_report",
    "execute_notebook": "notebook",
    "export_html": "notebook",
    "figure_mimebundle": "notebook",
    "labelling": None,  # the module itself: the labelling UIs of human_pairwise
    "notebook_html": "notebook",
    "plot_changes": "plots",
    "plot_comparison": "plots",
    "plot_history": "plots",
    "plot_noise": "plots",
    "plot_scores": "plots",
    "plot_sequential": "sequential_plot",
    "report_comparison": "comparison_report",
    "run_explorer": "widgets",
    "write_reports": "reporters",
}


def __getattr__(name: str) -> typing.Any:
    """Load a presentation function (or the labelling module) on first use."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_MODULES[name] or name}")
    value = module if _MODULES[name] is None else getattr(module, name)
    globals()[name] = value
    return value
