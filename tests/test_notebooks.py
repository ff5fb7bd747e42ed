"""The example notebooks: committed small and without outputs, and each runs top to bottom in the project's kernel.

They execute with nbclient and ``kernel_name="python3"`` (the kernelspec that
ipykernel installs in the project's venv, which launches the venv's Python),
as ``cogeval report`` runs them; see tests/notebook_runs.py.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from notebook_runs import EXAMPLES, NOTEBOOKS, executed

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_the_example_notebooks_are_all_here():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_notebook_is_committed_small_valid_and_without_outputs(name):
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert path.stat().st_size < 20_000
    assert nb.metadata.kernelspec.name == "python3"
    assert "widgets" not in nb.metadata
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a notebook without code"
    assert [(c.id, c.outputs, c.execution_count) for c in code] == [(c.id, [], None) for c in code]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


def outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def shown(name: str) -> nbformat.NotebookNode:
    """The executed notebook; no cell may have written to stderr (a warning, say)."""
    nb = executed(name).nb
    assert [o.text for o in outputs(nb) if o.output_type == "stream" and o.name == "stderr"] == []
    return nb


def figures(nb: nbformat.NotebookNode) -> int:
    """Charts shown in cells (plotly's mimetype, its default in a kernel)."""
    return sum("application/vnd.plotly.v1+json" in o.get("data", {}) for o in outputs(nb))


@pytest.mark.slow
def test_quickstart_runs_the_demo_end_to_end():
    nb = shown("quickstart")
    assert figures(nb) == 2
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in outputs(nb)])
    assert "assistant-v1" in html and "assistant-v2" in html


@pytest.mark.slow
def test_compare_runs_shows_charts_and_widgets():
    nb = shown("compare-runs")
    assert figures(nb) == 3  # forest plot, scores, history (the run explorer's chart is in widget state)
    state = nb.metadata.widgets[WIDGET_STATE]["state"]
    models = {model["model_name"] for model in state.values()}
    assert {"VBoxModel", "DropdownModel", "SelectModel", "OutputModel", "HTMLModel"} <= models
    views = [o for o in outputs(nb) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 2  # the run explorer and the case explorer
    assert len([f for f in executed("compare-runs").temporary_files if f.endswith(".json")]) == 3  # the store


@pytest.mark.slow
def test_reanalyse_a_csv_compares_the_two_prompt_versions():
    nb = shown("reanalyse-a-csv")
    assert figures(nb) == 2
    markdown = [o["data"]["text/markdown"] for o in outputs(nb) if "text/markdown" in o.get("data", {})]
    assert len(markdown) == 1 and markdown[0].startswith("### cogeval comparison: prompt-v2 vs prompt-v1")


@pytest.mark.slow
def test_reanalyse_other_tools_compares_inspect_and_promptfoo_runs_slice_by_slice():
    nb = shown("reanalyse-other-tools")
    assert figures(nb) == 2  # the forest plots of the Inspect and the promptfoo comparisons
    printed = [o.text for o in outputs(nb) if o.output_type == "stream"]
    assert printed == [
        "head is better: better on match (α = 0.05, 20 matched cases); fragile: match is not significant without its "
        "1 most supporting case of 20\n",  # issue 27: binom.test(8, 9) = 0.039; without one: binom.test(7, 8) = 0.070
        "inconclusive: no deciding metric is shown better, worse or equivalent; "
        "about 12 cases would settle the closest one (α = 0.05, 5 matched cases)\n",
    ]
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in outputs(nb)])
    assert "quiz (mockllm/head)" in html and "verbose / echo" in html
    # the Inspect slices: head better on arithmetic (7 of 10 sums fixed), geography unchanged
    [cell] = [c for c in nb.cells if c.source.startswith('sliced = compare_runs(base, head, by="topic"')]
    table = cell.outputs[0]["data"]["text/html"]
    rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
    match = [(row[1], row[-1]) for row in rows[1:] if row[2] == "match"]  # latency and tokens inform, below
    assert match == [("arithmetic", "better"), ("geography", "inconclusive")]
    reports = [f for f in executed("reanalyse-other-tools").temporary_files if f.endswith(".html")]
    assert len(reports) == 1 and reports[0].endswith("/inspect-quiz.html")


@pytest.mark.slow
def test_spend_less_stops_early_and_calibrates_the_judge():
    nb = shown("spend-less")
    assert figures(nb) == 1  # the sequences narrowing to the decision
    printed = [o.text for o in outputs(nb) if o.output_type == "stream"]
    assert printed == ["better 80 342 440\n", "true difference 0.233; the 40 labels are worth 126\n"]
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in outputs(nb)])
    assert "Sequential comparison" in html and "classical" in html
