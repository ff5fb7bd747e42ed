"""The run explorer in a real JupyterLab: started here on 127.0.0.1, driven by headless Chromium.

The notebook opens a store of three runs of one app (all named "assistant",
told apart by their ``version``), runs, and shows the explorer. The test reads
the dropdown labels, checks that no number in the comparison table wraps and
that the explorer fits a 900 px notebook column, then picks another head run
as a person would and waits for the table to change. A comparison displayed
in the next cell fits the column without scrolling sideways, its verdict next
to the metric's name. Nothing leaves the
machine: every request to anything but the lab server is aborted and listed.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser.conftest import ARTIFACTS

NOTEBOOK = {
    "cells": [{"cell_type": "code", "id": "explorer", "execution_count": None, "metadata": {}, "outputs": [],
               "source": "import cogeval\nexplorer = cogeval.run_explorer('runs')\nexplorer"},
              {"cell_type": "code", "id": "comparison", "execution_count": None, "metadata": {}, "outputs": [],
               "source": "base, head = cogeval.RunStore('runs').runs()[:2]\ncogeval.compare_runs(base, head)"}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _save_runs(folder: pathlib.Path) -> None:
    from cogeval import EvalSuite, RunStore, contains, exact_match, latency
    from cogeval.examples import assistant_v1, assistant_v2, questions

    def v3(question):
        return assistant_v2(question) if "capital" in question else assistant_v1(question)

    store = RunStore(folder / "runs")
    for version, target in (("v1", assistant_v1), ("v2", assistant_v2), ("v3", v3)):
        store.save(EvalSuite(questions(), target, metrics=[exact_match(), contains()], statistical_metrics=[latency()],
                             name="assistant", metadata={"version": version}, progress=False).run())
        time.sleep(0.002)  # distinct start times, so the newest is v3


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a folder with the store and the notebook; yields (url, token)."""
    folder = tmp_path_factory.mktemp("lab")
    _save_runs(folder)
    (folder / "explorer.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(folder / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(folder / ".runtime")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
         "--ServerApp.allow_root=True"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=(folder / "lab.log").open("w"))
    url = f"http://localhost:{port}"  # Chromium resolves no other name here (tests/browser/conftest.py FLAGS)
    try:
        for _ in range(600):  # up to a minute on a loaded machine
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"jupyter lab exited: {(folder / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.1)
        yield url, token
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_run_explorer_in_jupyterlab(chromium, lab):
    url, token = lab
    context = chromium.new_context(viewport={"width": 1060, "height": 1000}, color_scheme="light")
    page = context.new_page()
    elsewhere: list[str] = []

    def route(request_route):
        if request_route.request.url.startswith(url):
            request_route.continue_()
        else:
            elsewhere.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    try:
        page.goto(f"{url}/lab/tree/explorer.ipynb?token={token}", timeout=120_000)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)
        page.keyboard.press("Control+b")  # hide the file browser: the notebook gets the window's width
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        head = page.locator(".widget-dropdown select").nth(1)
        head.wait_for(timeout=120_000)
        table = page.locator(".cogeval table").first
        table.wait_for(timeout=120_000)

        labels = [label.replace("\xa0", " ") for label in head.locator("option").all_inner_texts()]
        assert [label.rsplit(" · ", 1)[0] for label in labels] == ["assistant · version=v3", "assistant · version=v2",
                                                     "assistant · version=v1"]
        before = table.inner_text()
        assert "exact_match" in before

        wrapped = page.evaluate("""() => [...document.querySelectorAll('.cogeval td:not(.t)')].filter(td => {
            const range = document.createRange(); range.selectNodeContents(td);
            return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1;
        }).map(td => td.innerText)""")
        assert wrapped == []
        column = page.locator(".jp-Cell-outputArea").first.bounding_box()
        explorer = page.locator(".widget-vbox").first.bounding_box()
        assert column and explorer and column["width"] <= 960 and explorer["width"] <= column["width"] + 1

        comparison = page.locator(".jp-Cell").nth(1).locator(".cogeval table").first
        comparison.wait_for(timeout=120_000)
        assert comparison.locator("th").all_inner_texts()[:2] == ["metric", "verdict"]
        sideways = page.evaluate("""() => [...document.querySelectorAll('.jp-Cell')[1].querySelectorAll('.cogeval')]
            .filter(div => div.scrollWidth > div.clientWidth + 1).map(div => [div.scrollWidth, div.clientWidth,
            [...div.querySelectorAll('th')].map(th => th.innerText + ':' + th.offsetWidth)])""")
        assert sideways == [], "the comparison's notebook table scrolls sideways"

        head.select_option(index=2)  # v1 instead of v3
        page.wait_for_function("before => { const t = document.querySelector('.cogeval table');"
                               " return t && t.innerText !== before; }", arg=before, timeout=60_000)
        after = table.inner_text()
        assert after != before and "exact_match" in after
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-run-explorer.png"))
        context.close()
    assert elsewhere == [], f"requests outside the lab server: {elsewhere}"
