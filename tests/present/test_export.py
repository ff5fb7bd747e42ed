"""Offline HTML: figure fragments, the export renderer, export_html, `cogeval report`, the report's forest plot.

What a browser draws is checked in tests/browser; here, what the files hold.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import pathlib
import re

import nbformat
import pandas as pd
import plotly.graph_objects as go
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from notebook_runs import planted_export

import cogeval
from cogeval import EvalRun, compare_runs, report_comparison
from cogeval.cli import main
from cogeval.errors import ExecutionError, InputError
from cogeval.present.notebook import export_html, figure_html, notebook_html, plotly_js

NETWORK = re.compile(r"""(src|href)\s*=\s*["']?(https?:)?//""", re.I)
VENDOR = importlib.resources.files("cogeval.present").joinpath("vendor/html-manager")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def plotly_js_copies(page: str) -> int:
    return page.count(plotly_js()[:300])


def assert_offline(page: str) -> None:
    """No markup that loads from a URL (script bodies aside: plotly.js holds link texts), and no CDN in a tag."""
    markup = re.sub(r"(<script\b[^>]*>).*?</script>", r"\1</script>", page, flags=re.S | re.I)
    assert not NETWORK.search(markup), NETWORK.search(markup)
    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", page, re.I)
    for word in ("require", "mathjax", "cdnjs", "unpkg", "jsdelivr", "cdn.plot.ly"):
        assert not [t for t in tags if word in t.lower()], word


# --- figure fragments and the renderer ------------------------------------------------------


def test_figure_html_with_and_without_plotly_js():
    figure = go.Figure(go.Bar(y=[1, 2], hovertext=["</script><script>alert(1)</script>", "b"]))
    bare = figure_html(figure, include_plotlyjs=False)
    assert bare.count("Plotly.newPlot") == 1 and plotly_js_copies(bare) == 0
    assert "</script><script>alert(1)" not in bare  # plotly escapes < > / inside its JSON
    assert 'style="height:450px; width:100%;"' in bare
    full = figure_html(figure)
    assert plotly_js_copies(full) == 1
    assert_offline(full)


def test_notebook_html_draws_plotly_mimetype_outputs_in_cells_and_output_widgets():
    """plotly's default in a kernel is its own mimetype only; the page gets each figure's HTML, without plotly.js."""
    figure = go.Figure(go.Bar(y=[1, 2])).to_plotly_json()
    bundle = {"application/vnd.plotly.v1+json": {**figure, "config": {"displayModeBar": False}}}
    cell = new_code_cell("fig.show()", outputs=[nbformat.v4.new_output("display_data", data=bundle)])
    nb = new_notebook(cells=[cell], metadata={"widgets": {WIDGET_STATE: {"version_major": 2, "version_minor": 0, "state": {
        "m1": {"model_name": "OutputModel", "model_module": "@jupyter-widgets/output", "model_module_version": "1.0.0",
               "state": {"outputs": [{"output_type": "display_data", "data": bundle, "metadata": {}}]}},
    }}}})
    before = json.dumps(nb, sort_keys=True)
    page = notebook_html(nb, name="mimetype")
    assert json.dumps(nb, sort_keys=True) == before  # the notebook given is not changed
    assert page.count('class="plotly-graph-div"') == 1  # the cell's; the Output widget's is in the widget state
    assert page.count('{"displayModeBar": false, "responsive": true}') == 1  # the figures keep their config
    assert page.count('{\\"displayModeBar\\": false, \\"responsive\\": true}') == 1
    assert plotly_js_copies(page) == 1 and page.count("data:text/javascript;base64,") == 1
    assert "<title>mimetype</title>" in page
    assert_offline(page)


def test_vendored_embed_js_matches_its_provenance():
    readme = VENDOR.joinpath("README.md").read_text("utf-8")
    digest = hashlib.sha256(VENDOR.joinpath("embed.js").read_bytes()).hexdigest()
    assert f"`embed.js` sha256 `{digest}`" in readme
    assert "BSD" in readme and "Redistribution and use" in VENDOR.joinpath("LICENSE").read_text("utf-8")


# --- export_html ----------------------------------------------------------------------------


def write_notebook(path, *cells):
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


@pytest.fixture(scope="module")
def exported():
    """A notebook reading a CSV in its folder, showing a comparison, two charts and two explorers, exported."""
    export = planted_export()
    return export, export.page.read_text("utf-8")


@pytest.mark.slow
def test_export_writes_one_offline_page_next_to_the_notebook(exported):
    export, page = exported
    assert export.page == export.notebook.with_suffix(".html")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert_offline(page)
    assert plotly_js_copies(page) == 1
    assert page.count("data:text/javascript;base64,") == 1  # the vendored widget manager, once
    assert "<title>planted</title>" in page and "one of them a script</h1>" in page


@pytest.mark.slow
def test_export_runs_in_the_notebooks_folder_and_draws_every_chart(exported):
    export, page = exported
    assert page.count('class="plotly-graph-div"') == 2  # the cells' charts; the run explorer's is in widget state
    state = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', page, re.S)
    models = json.loads(state.group(1))["state"].values()
    [output] = [m for m in models if m["model_name"] == "OutputModel"]
    assert "Plotly.newPlot(" in output["state"]["outputs"][0]["data"]["text/html"]
    assert len(list((export.folder / "runs").glob("*.json"))) == 2  # relative paths resolve in its folder


@pytest.mark.slow
def test_export_escapes_the_planted_case_text(exported):
    _, page = exported
    markup = re.sub(r"(<script\b[^>]*>).*?</script>", r"\1</script>", page, flags=re.S | re.I)
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img" in markup  # shown, as text
    assert "<img" not in markup and not re.search(r"<[a-z][^>]*\sonerror=", markup, re.I)


@pytest.mark.slow
def test_export_leaves_the_notebook_unchanged_and_no_temporary_files(exported):
    export, _ = exported
    assert export.notebook.read_text() == export.source
    assert sorted(p.name for p in export.folder.iterdir()) == ["planted.html", "planted.ipynb", "runs", "scores.csv"]


@pytest.mark.slow
def test_report_command_exports_a_plain_notebook_into_a_new_folder(tmp_path, capsys):
    notebook = write_notebook(tmp_path / "plain.ipynb", new_code_cell("print(6 * 7)"))
    assert main(["report", str(notebook), "--out", f"{tmp_path}/out/deep/"]) == 0
    out = tmp_path / "out" / "deep" / "plain.html"
    assert capsys.readouterr().out == f"{out}\n"
    page = out.read_text()
    assert "<pre>42\n</pre>" in page
    assert plotly_js_copies(page) == 0 and "data:text/javascript" not in page  # no chart, no widget: neither script
    assert len(page) < 400_000
    assert_offline(page)


@pytest.mark.slow
def test_export_names_the_failing_cell(tmp_path):
    notebook = write_notebook(tmp_path / "broken.ipynb", new_code_cell("x = 1"), new_code_cell("1 / 0"))
    (tmp_path / "broken.html").write_text("previous")
    with pytest.raises(ExecutionError, match=r"broken.ipynb: cell 2 failed: ZeroDivisionError: division by zero$"):
        export_html(notebook)
    assert (tmp_path / "broken.html").read_text() == "previous"


def test_export_rejects_what_is_not_a_notebook(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"notebook '.*missing.ipynb' does not exist"):
        export_html(tmp_path / "missing.ipynb")
    (tmp_path / "bad.ipynb").write_text("{")
    with pytest.raises(InputError, match=r"bad.ipynb: not a readable Jupyter notebook"):
        export_html(tmp_path / "bad.ipynb")



def test_wrong_types_are_named_not_attribute_errors():
    for call, message in (
        (lambda: export_html(42), "notebook must be a file or folder path (str or os.PathLike); got 42"),
        (lambda: export_html("a.ipynb", out=3.5), "out must be a file or folder path (str or os.PathLike); got 3.5"),
        (lambda: notebook_html("a.ipynb"), "nb must be a notebook (the NotebookNode execute_notebook returns); "
                                           "got 'a.ipynb'"),
    ):
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == message


def test_export_html_is_a_lazy_top_level_name():
    assert cogeval.export_html is export_html and "export_html" in cogeval.__all__


# --- the command ----------------------------------------------------------------------------


def test_report_command_errors_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.ipynb")]) == 2
    assert capsys.readouterr().err == f"cogeval: error: notebook '{tmp_path / 'none.ipynb'}' does not exist\n"


# --- the comparison report's forest plot ----------------------------------------------------


def runs(head_scores):
    inputs = [f"q{i}" for i in range(20)]
    base = EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": [1] * 20}), name="base")
    head = EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": head_scores}), name="head")
    return base, head


def test_html_report_embeds_the_forest_plot_offline(tmp_path):
    comparison = compare_runs(*runs([0] * 10 + [1] * 10), seed=0)
    [path] = report_comparison(comparison, "html", tmp_path / "report")
    page = (tmp_path / "report.html").read_text()
    assert path == str(tmp_path / "report.html")
    figure = page[page.index('<section class="figure" id="forest-plot">'):]
    assert plotly_js_copies(page) == 1 and plotly_js_copies(figure) == 1
    assert figure.count("Plotly.newPlot") == 1 and "exact_match" in figure
    assert_offline(page)


def test_html_report_without_metrics_has_no_figure(tmp_path):
    base_only = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "m1": [1, 0]}))
    head_only = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "m2": [1, 0]}))
    comparison = compare_runs(base_only, head_only, seed=0)
    assert not comparison.metrics
    [path] = report_comparison(comparison, "html", tmp_path / "empty")
    page = pathlib.Path(path).read_text(encoding="utf-8")
    assert 'id="forest-plot"' not in page and "<script" not in page
