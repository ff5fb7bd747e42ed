"""Offline HTML: plotly figures in self-contained pages, and notebooks exported to one HTML file.

:func:`export_html` executes a notebook with nbclient and writes **one** HTML
file that opens anywhere, offline, as the notebook looked: plotly charts drawn,
standard ipywidgets rendered from their saved state, no request to any network.

How each trap of a stock ``jupyter nbconvert --to html`` is avoided:

- plotly ≥ 6 displays figures as ``application/vnd.plotly.v1+json`` inside a
  kernel, which nbconvert cannot show (the charts vanish). The kernel keeps
  plotly's default renderer, so the notebook runs as it does in JupyterLab;
  at conversion, every output that holds that mimetype and no ``text/html``
  (in a cell, or in an ``Output`` widget's saved state) gets the figure's HTML
  made with ``include_plotlyjs=False, include_mathjax=False``. The page
  inlines ``plotly.min.js`` from the installed plotly once, in its head, only
  when a chart is on it, so plotly.js and the figures always match.
- nbconvert's ``lab`` template loads require.js and MathJax from a CDN and the
  widget manager from unpkg. The ``cogeval-notebook.html.j2`` template extends
  ``lab/index.html.j2``, drops those, and loads the vendored
  ``@jupyter-widgets/html-manager`` ``embed.js`` once from a ``data:`` URL.

Reports use :func:`figure_html`: a figure as an HTML fragment that carries
plotly.js inline (or not), never a URL.

>>> figure_html({"data": [{"type": "bar", "y": [1, 2]}]}, include_plotlyjs=False).count("Plotly.newPlot")
1
"""

from __future__ import annotations

import base64
import copy
import functools
import importlib.resources
import json
import os
import pathlib
import tempfile
from typing import Any

from cogeval._check import check_path, describe
from cogeval._files import report_paths, write_text_atomic
from cogeval._numbers import seconds
from cogeval.errors import ExecutionError, InputError

_FIGURE_HEIGHT = 450
"""Height in pixels of a figure whose layout sets none (plotly's own notebook renderer uses 525)."""

_TEMPLATE = "cogeval-notebook.html.j2"
_EMBED_JS = "vendor/html-manager/embed.js"
_PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_INSTALL_HINT = "pip install 'cogeval[notebook]'"


# --- plotly -------------------------------------------------------------------------------


def figure_html(figure: Any, *, include_plotlyjs: bool = True, config: dict[str, Any] | None = None) -> str:
    """``figure`` (a ``go.Figure`` or its dict) as an HTML fragment that draws offline.

    With ``include_plotlyjs=True`` the fragment carries the installed plotly.js
    inline (about 4.8 MB: once per page); with ``False`` the page must provide
    ``window.Plotly`` first. Never a MathJax script, never a URL. ``config`` is
    plotly.js's config (``{"displayModeBar": False}``...). Figure data is
    JSON-encoded by plotly with ``<``, ``>`` and ``/`` escaped, so no text in a
    figure can close the script.
    """
    import plotly.io as pio

    return pio.to_html(
        figure, config=dict(config) if config else None,  # a copy: plotly adds "responsive" to it
        full_html=False, include_plotlyjs=bool(include_plotlyjs), include_mathjax=False,
        default_width="100%", default_height=_FIGURE_HEIGHT, validate=False,
    )


def figure_mimebundle(fig: Any) -> dict[str, Any]:
    """The display bundle of a figure, for an ``Output`` widget or a notebook cell.

    It holds plotly's own mimetype (drawn live by JupyterLab, VS Code...) and
    ``text/html`` made with ``include_plotlyjs=False`` (drawn in an exported
    page that loads plotly.js once), so the chart shows both live and offline.
    """
    return {
        _PLOTLY_MIMETYPE: json.loads(fig.to_json()),
        "text/html": figure_html(fig, include_plotlyjs=False),
        "text/plain": f"<Figure: {fig.layout.title.text or 'chart'}>",
    }


@functools.cache
def plotly_js() -> str:
    """The ``plotly.min.js`` shipped with the installed plotly package (its text)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


# --- notebooks ----------------------------------------------------------------------------


def export_html(
    notebook: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    timeout: float = 120.0,
    kernel_name: str = "python3",
) -> pathlib.Path:
    """Execute ``notebook`` and write it as one self-contained, offline HTML file; returns its path.

    ``out`` defaults to the notebook's path with ``.html``; as for every report
    (:func:`~cogeval._files.report_paths`), an ``out`` without ``.html`` gets it and a
    folder (existing, or a path ending in ``/``) receives ``<notebook name>.html``. The notebook
    runs as :func:`execute_notebook` runs it; the ``.ipynb`` file is not
    changed. The write is atomic: a failed export leaves any previous file as it was.

    Raises ``FileNotFoundError`` for a missing notebook, :class:`~cogeval.errors.InputError`
    for a file that is not a notebook, and :class:`~cogeval.errors.ExecutionError`
    when a cell fails, times out or the kernel dies (the message names the cell).
    """
    source = check_path("notebook", notebook)
    if out is not None:
        check_path("out", out)
    [target] = report_paths(source.with_suffix(".html") if out is None else out, [".html"], default_name=source.stem)
    nb = execute_notebook(source, timeout=timeout, kernel_name=kernel_name)
    return write_text_atomic(target, notebook_html(nb, name=source.stem))


def execute_notebook(notebook: str | os.PathLike[str], *, timeout: float = 120.0, kernel_name: str = "python3") -> Any:
    """The notebook at ``notebook`` executed, as an ``nbformat.NotebookNode`` (the file is not changed).

    It runs in its own folder (so relative paths in it work) in a new kernel
    ``kernel_name``; widget state is saved in its metadata. ``timeout`` is the
    limit in seconds for each cell. Errors as :func:`export_html`.
    """
    source = check_path("notebook", notebook)
    if not source.is_file():
        raise FileNotFoundError(f"notebook {str(source)!r} does not exist" if not source.exists()
                                else f"notebook {str(source)!r} is not a file")
    nbformat, nbclient, _ = _notebook_tools()
    try:
        nb = nbformat.read(source, as_version=4)
    except Exception as error:  # nbformat raises JSON, validation and reader errors of several kinds
        raise InputError(f"{source}: not a readable Jupyter notebook ({type(error).__name__}: {error})") from error
    _execute(nb, source, nbclient, timeout=timeout, kernel_name=kernel_name)
    return nb


def notebook_html(nb: Any, *, name: str = "notebook") -> str:
    """An executed notebook (a ``NotebookNode``) as the text of one self-contained, offline HTML page.

    ``name`` is the page title when the notebook's metadata has none. ``nb`` is
    not changed. plotly figures in it, displayed with plotly's mimetype (its
    default in a kernel) or as HTML without plotly.js, are drawn; a notebook
    saved from JupyterLab with its outputs can be converted as it is.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise InputError(f"nb must be a notebook (the NotebookNode execute_notebook returns); got {describe(nb)}")
    _, _, exporters = _notebook_tools()
    return _convert(nb, name, exporters)




def _notebook_tools() -> tuple[Any, Any, Any]:
    try:
        import nbclient
        import nbconvert.exporters
        import nbformat
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(f"export_html needs nbclient, nbconvert and ipykernel ({error}); "
                                  f"install them with: {_INSTALL_HINT}", name=error.name) from error
    return nbformat, nbclient, nbconvert.exporters


def _execute(nb: Any, source: pathlib.Path, nbclient: Any, *, timeout: float, kernel_name: str) -> None:
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name=kernel_name, store_widget_state=True,
        resources={"metadata": {"path": str(source.resolve().parent)}},
    )
    # The kernel's own stderr (log lines such as "Kernel is running over TCP...") goes to a
    # temporary file, quoted only when the kernel dies or cannot start.
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        try:
            client.execute(stderr=log)
        except CellExecutionError as error:
            raise ExecutionError(f"{source}: {_cell_name(nb, error)} failed: {error.ename}: {error.evalue}") from error
        except CellTimeoutError as error:
            raise ExecutionError(f"{source}: a cell ran longer than timeout={seconds(timeout)}") from error
        except DeadKernelError as error:
            raise ExecutionError(f"{source}: the kernel died ({error}){_tail(log)}") from error
        except Exception as error:  # no such kernel, cannot start, ...
            raise ExecutionError(f"{source}: could not execute with kernel {kernel_name!r}: "
                                 f"{type(error).__name__}: {error}{_tail(log)}") from error


def _tail(log: Any, lines: int = 10) -> str:
    log.seek(0)
    text = "\n".join(log.read().strip().splitlines()[-lines:])
    return f"; kernel log:\n{text}" if text else ""


def _cell_name(nb: Any, error: Any) -> str:
    """'cell 3' (1-based, counting every cell) for the last cell whose output holds the error."""
    for number, cell in reversed(list(enumerate(nb.cells, start=1))):
        if any(o.get("output_type") == "error" and o.get("ename") == error.ename for o in cell.get("outputs", [])):
            return f"cell {number}"
    return "a cell"


def _convert(nb: Any, name: str, exporters: Any) -> str:
    nb = copy.deepcopy(nb)
    for outputs in _output_lists(nb):
        for output in outputs:
            _add_figure_html(output)
    templates = importlib.resources.files("cogeval.present").joinpath("templates")
    with importlib.resources.as_file(templates) as folder:
        exporter = exporters.HTMLExporter(
            template_name="lab", template_file=_TEMPLATE, extra_template_paths=[str(folder)],
            exclude_anchor_links=True,
        )
        resources = {
            "metadata": {"name": name},
            "cogeval": {
                "plotly_js": plotly_js() if _has_charts(nb) else "",
                "widgets_js_url": _embed_js_url() if _has_widgets(nb) else "",
            },
        }
        html, _ = exporter.from_notebook_node(nb, resources=resources)
    return html


def _output_lists(nb: Any) -> Any:
    """Every list of outputs: each code cell's, and each widget's in the saved widget state (``Output`` widgets)."""
    for cell in nb.cells:
        if cell.get("outputs"):
            yield cell.outputs
    state = nb.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
    for model in state.values():
        outputs = model.get("state", {}).get("outputs") if isinstance(model, dict) else None
        if isinstance(outputs, list):
            yield outputs


def _add_figure_html(output: Any) -> None:
    """Give an output holding only plotly's mimetype the figure's HTML (without plotly.js), which nbconvert shows."""
    data = output.get("data")
    if not isinstance(data, dict) or _PLOTLY_MIMETYPE not in data or "text/html" in data:
        return
    bundle = data[_PLOTLY_MIMETYPE]
    if isinstance(bundle, dict):
        figure = {key: bundle[key] for key in ("data", "layout", "frames") if key in bundle}
        data["text/html"] = figure_html(figure, include_plotlyjs=False, config=bundle.get("config"))


def _has_charts(nb: Any) -> bool:
    return any("Plotly.newPlot(" in str(o.get("data", {}).get("text/html", "")) for ol in _output_lists(nb) for o in ol)


def _has_widgets(nb: Any) -> bool:
    return bool(nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state"))


@functools.cache
def _embed_js_url() -> str:
    script = importlib.resources.files("cogeval.present").joinpath(_EMBED_JS).read_bytes()
    return "data:text/javascript;base64," + base64.b64encode(script).decode("ascii")
