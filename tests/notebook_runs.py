"""Notebooks executed once per test session and shared by the tests that look at them.

Starting a kernel and importing cogeval in it costs seconds, so each notebook
runs once: tests/test_notebooks.py, tests/present/test_export.py and
tests/browser share the results.

- :func:`executed` runs an example notebook of notebooks/ as ``cogeval report``
  runs it (:func:`execute_notebook`: the project's ``python3`` kernel, in the
  notebook's folder), with ``TMPDIR`` pointing at a
  folder of its own, removed afterwards, so the run stores it makes with
  ``tempfile`` leave nothing behind.
- :func:`planted_export` writes and exports (:func:`export_html`) a notebook
  whose runs come from a CSV in its folder, with a ``<script>`` and an
  ``<img onerror>`` planted in a case input, an output and a run name, and
  that shows a comparison, two charts, the case explorer and the run explorer
  (an ``Output`` widget holding a chart).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import pathlib
import shutil
import tempfile
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from cogeval.present.notebook import execute_notebook, export_html

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
EXAMPLES = ["quickstart", "compare-runs", "reanalyse-a-csv", "reanalyse-other-tools", "spend-less", "noise"]
PLANTED = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


@dataclasses.dataclass(frozen=True)
class Executed:
    nb: Any
    """The executed notebook (an ``nbformat.NotebookNode``); do not change it, it is shared."""
    temporary_files: list[str]
    """Files the notebook left in its temporary folder, relative to it."""


@functools.cache
def executed(name: str) -> Executed:
    with tempfile.TemporaryDirectory(prefix="cogeval-notebook-") as folder:
        before = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = folder  # the kernel inherits it
        try:
            nb = execute_notebook(NOTEBOOKS / f"{name}.ipynb", timeout=120)
        finally:
            if before is None:
                del os.environ["TMPDIR"]
            else:
                os.environ["TMPDIR"] = before
        files = sorted(str(p.relative_to(folder)) for p in pathlib.Path(folder).rglob("*") if p.is_file())
    return Executed(nb, files)


@dataclasses.dataclass(frozen=True)
class Export:
    folder: pathlib.Path
    notebook: pathlib.Path
    source: str
    """The notebook file's text before the export."""
    page: pathlib.Path
    """The exported HTML file, next to the notebook."""


# The planted text reaches the page only through cogeval's displays, charts and widgets:
# the notebook reads it from a CSV, as a user's data would come.
_CELLS = [
    ("md", "# A comparison whose case inputs come from a CSV, one of them a script"),
    ("code", """\
import pandas as pd
import cogeval
from cogeval import EvalRun, RunStore, compare_runs

scores = pd.read_csv("scores.csv")  # relative to the notebook's folder
base = EvalRun.from_frame(scores[["input", "output_base", "exact_match_base"]]
                          .rename(columns={"output_base": "output", "exact_match_base": "exact_match"}), name="base")
head = EvalRun.from_frame(scores[["input", "output_head", "exact_match_head"]]
                          .rename(columns={"output_head": "output", "exact_match_head": "exact_match"}),
                          name=scores["input"][0])
comparison = compare_runs(base, head, seed=0)
comparison"""),
    ("code", "cogeval.plot_comparison(comparison)"),
    ("code", 'cogeval.plot_changes(comparison, "exact_match")'),
    ("code", "cogeval.case_explorer(comparison, base, head)"),
    ("code", """\
store = RunStore("runs")
store.save(base), store.save(head)
cogeval.run_explorer(store)"""),
]


@functools.cache
def planted_export() -> Export:
    import pandas as pd

    folder = pathlib.Path(tempfile.mkdtemp(prefix="cogeval-planted-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    inputs = [PLANTED] + [f"question {i}" for i in range(1, 30)]
    pd.DataFrame({
        "input": inputs, "output_base": ["ok"] * 30, "exact_match_base": [1] * 30,
        "output_head": [PLANTED] + ["ok"] * 29, "exact_match_head": [0] * 12 + [1] * 18,
    }).to_csv(folder / "scores.csv", index=False)
    cells = [new_markdown_cell(text) if kind == "md" else new_code_cell(text) for kind, text in _CELLS]
    notebook = folder / "planted.ipynb"
    nbformat.write(new_notebook(cells=cells), notebook)
    source = notebook.read_text()
    return Export(folder, notebook, source, export_html(notebook))
