"""Every Python example of docs/*.md runs, so none can rot (README.md's run as one script: tests/test_readme.py).

Blocks fenced as ``python`` run in order, one namespace per page (as in a
notebook), in a temporary folder that holds what the text assumes: a
``questions.jsonl``, two saved runs in ``runs/``, the files of the tools the
importer pages read (made by those tools: the fixtures of tests/importers and
Inspect's mock model), and an OpenAI-compatible server on 127.0.0.1 standing in
for ``gpt-4o-mini`` (``OPENAI_BASE_URL``) and one for a local Ollama. Where the text elides a function's
body with ``...``, the function answers with the bundled demo assistant. Names a
page takes from its prose (``dataset``, ``my_app``, ``base``, ``head``...) are
given in :func:`_context`. Blocks with ``>>>`` are doctests (pytest runs them
with their output checked); signatures are fenced as ``text``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import pathlib
import re
import shutil
import sys
import tempfile
import types

import pandas as pd
import pytest

from tests.chat_server import ChatServer, completion

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "importers" / "fixtures"
PAGES = sorted((ROOT / "docs").glob("*.md"))
OLLAMA_PORT = 11434
"""Where the pages' local Ollama listens; a judge server stands in for it."""
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


NOT_RUN = "<!-- compiled, not run:"
"""A block right after a line starting so (``<!-- compiled, not run: needs a Ray cluster -->``) is only compiled:
what it needs is too heavy for this test, and the comment names the test that runs the same calls."""


def _blocks(page: pathlib.Path) -> list[tuple[int, str, bool]]:
    """The (line, code, whether it runs) of each Python block of a page (doctests excluded)."""
    text = page.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 2, m.group(1), not text[: m.start()].rstrip().rsplit("\n", 1)[-1]
             .startswith(NOT_RUN)) for m in _BLOCK.finditer(text) if ">>>" not in m.group(1)]


def _stubbed(code: str, filename: str) -> types.CodeType:
    """The block compiled, with every function whose body is just ``...`` answering like the demo assistant."""
    tree = ast.parse(code, filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _elided(node.body):
            first = node.args.args[0].arg
            node.body = ast.parse(f"return __answer__({first})").body
    return compile(ast.fix_missing_locations(tree), filename, "exec")


def _elided(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Expr) and getattr(body[0].value, "value", None) is Ellipsis


def _answer(question: object) -> str:
    from cogeval.examples import assistant_v2

    return str(assistant_v2(str(question)).output)


def _judge_reply(body: dict) -> object:
    """Every judge gets a valid answer: a score for scored metrics, a winner for pairwise ones."""
    return completion('{"score": 1, "winner": "1", "reasoning": "fine"}')


def _save_runs(folder: pathlib.Path) -> tuple:
    """Two demo runs in ``runs/`` (also as base.json, head.json and the id the docs quote)."""
    from cogeval import Dataset, EvalSuite, RunStore, contains, exact_match, latency
    from cogeval.examples import assistant_v1, assistant_v2

    dataset = Dataset.from_jsonl(folder / "questions.jsonl")
    runs = []
    for version, target in (("v1", assistant_v1), ("v2", assistant_v2)):
        result = EvalSuite(dataset, target, metrics=[exact_match(), contains()], statistical_metrics=[latency()],
                           name="nightly", metadata={"version": version}, progress=False).run()
        runs.append(result.to_run())
    store = RunStore(folder / "runs")
    for run in runs:
        store.save(run)
    runs[0].save(folder / "runs" / "base.json")
    runs[1].save(folder / "runs" / "head.json")
    runs[0].model_copy(update={"run_id": "20261022T101530123Z-1a2b3c4d"}).save(folder / "runs")
    return dataset, runs


def _tool_files(folder: pathlib.Path) -> None:
    """The other tools' files the importer pages name, copied from what those tools wrote."""
    results = (FIXTURES / "promptfoo" / "two-prompts.json").read_text(encoding="utf-8")
    (folder / "results.json").write_text(results.replace('"echo"', '"openai:gpt-4o-mini"'), encoding="utf-8")
    (folder / "evals").mkdir()
    shutil.copy(FIXTURES / "ag2" / "mini.json", folder / "evals" / "0f1e2d3c4b5a69788796a5b4c3d2e1f0.json")
    shutil.copy(FIXTURES / "ag2" / "large.json", folder / "evals" / "a1b2c3d4e5f60718293a4b5c6d7e8f90.json")
    for model, stamp in (("acme__small-v1", "10"), ("acme__large-v2", "11")):
        (folder / "out" / model).mkdir(parents=True)
        shutil.copy(FIXTURES / "lm_eval" / model / f"samples_cogeval_arith_2026-12-01T{stamp}-00-00.000001.jsonl",
                    folder / "out" / model / f"samples_gsm8k_2026-12-01T{stamp}-00-00.000001.jsonl")
    pd.DataFrame({"input": ["2+2", "3+3"], "expected": ["4", "6"], "quality": [1.0, 0.5],
                  "latency": [0.2, 0.3]}).to_csv(folder / "other_tool_scores.csv", index=False)
    (folder / "notebooks").mkdir()
    notebook = {"cells": [{"cell_type": "code", "id": "only", "execution_count": None, "metadata": {}, "outputs": [],
                           "source": "import cogeval\ncogeval.__name__"}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (folder / "notebooks" / "compare-runs.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _inspect_logs(folder: pathlib.Path) -> None:
    """Two Inspect AI logs under the names docs/import-inspect.md reads, made by Inspect's mock model."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match

    def model(reply: str):
        def answer(messages, tools, tool_choice, config):
            output = ModelOutput.from_content("mockllm/model", reply)
            output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
            return output
        return get_model("mockllm/model", custom_outputs=answer)

    samples = [Sample(id=f"q{i}", input=f"What is {i}+{i}?", target="4") for i in range(1, 4)]
    names = {"eval": "2026-10-22T10-15-30+00-00_arith_aFfvFgw2.eval", "json": "2026-10-23T09-00-00+00-00_arith_Kd4fBVjV.json"}
    for log_format, reply in (("eval", "3"), ("json", "4")):
        [log] = inspect_eval(Task(dataset=samples, scorer=match(), model=model(reply)), log_dir=str(folder / "made"),
                             log_format=log_format, display="none")
        shutil.move(log.location, folder / "logs" / names[log_format])


def _context(folder: pathlib.Path) -> dict:
    """The names the pages take from their prose, as a reader who ran the page so far would have them."""
    import cogeval
    from cogeval import EvalSuite, compare_runs, exact_match
    from cogeval.execution import RunInterrupted

    dataset, (base, head) = _save_runs(folder)
    scores = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.5]
    frame = pd.DataFrame({"version": ["v1"] * 3 + ["v2"] * 3, "id": ["a", "b", "c"] * 2,
                          "correct": [1, 0, 1, 1, 1, 1], "quality": [0.5, 0.4, 0.9, 0.7, 0.6, 0.9]})
    reply = types.SimpleNamespace(text="4", prompt_tokens=12, completion_tokens=1, cost=0.0001, tool_calls=[],
                                  trace_id="trace-1", server_seconds=0.2)
    return {
        "__answer__": _answer, "__name__": "__example__", "cogeval": cogeval, "Case": cogeval.Case,
        "dataset": dataset, "my_app": _answer, "app_a": _answer, "app_b": _answer, "app_c": _answer,
        "app_v1": _answer, "app_v2": _answer, "base": base, "head": head,
        "comparison": compare_runs(base, head), "compare_runs": compare_runs, "compare_frames": cogeval.compare_frames,
        "df": frame, "scores": scores, "head_scores": scores, "base_scores": scores[::-1],
        "threshold": cogeval.threshold, "assertion": cogeval.assertion, "relevance": cogeval.relevance,
        "ChatTarget": cogeval.ChatTarget, "EvalRun": cogeval.EvalRun, "RunInterrupted": RunInterrupted,
        "result": cogeval.EvalComparison(dataset, {"baseline": _answer, "challenger": _answer}, metrics=[exact_match()],
                                         progress=False).run(),
        "suite": EvalSuite(dataset, _answer, metrics=[exact_match()], progress=False),
        "my_llm_call": lambda question: reply, "my_chat": lambda messages: "Pack light layers.",
    }


@contextlib.contextmanager
def _port_taken_in_turn(port: int):
    """Holds an exclusive lock on a file named after ``port`` while the body runs, so the tests of parallel
    workers (pytest-xdist), or of two test sessions on one machine, take turns on a fixed port instead of
    failing with "Address already in use"."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, run as before
        yield
        return
    with open(pathlib.Path(tempfile.gettempdir()) / f"cogeval-tests-port-{port}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A folder with what the pages assume, as the working directory, and a judge server in the environment."""
    monkeypatch.chdir(tmp_path)
    bundled = (ROOT / "cogeval" / "examples" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "questions.jsonl").write_text("\n".join(bundled[::10]) + "\n", encoding="utf-8")
    (tmp_path / "eval").mkdir()
    shutil.copy(tmp_path / "questions.jsonl", tmp_path / "eval" / "cases.jsonl")
    _tool_files(tmp_path)
    monkeypatch.setitem(sys.modules, "myapp", types.SimpleNamespace(answer=_answer))
    with (_port_taken_in_turn(OLLAMA_PORT), ChatServer(_judge_reply) as server,
          ChatServer(_judge_reply, port=OLLAMA_PORT)):
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield tmp_path


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_example_runs(page, world):
    if page.name == "import-inspect.md":
        pytest.importorskip("inspect_ai")
        (world / "logs").mkdir()
        _inspect_logs(world)
    namespace = _context(world)
    for line, code, runs in _blocks(page):
        where = f"{page.relative_to(ROOT)}:{line}"
        if not runs:
            compile(code, where, "exec")
            continue
        try:
            exec(_stubbed(code, where), namespace)
        except SystemExit as stop:  # a CI gate ending its example
            assert code.strip().splitlines()[-1].startswith("raise SystemExit"), f"{where}: {stop!r}"


def test_the_demo_prints_what_the_readme_shows(tmp_path, monkeypatch, capsys):
    from cogeval.cli import main

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"^```\n(head is better:.*?)^```", text, re.S | re.M).group(1)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["demo", "--out", str(tmp_path / "demo"), "--quiet"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    start = printed.index(shown.splitlines()[0])
    assert printed[start:start + len(shown.splitlines())] == shown.splitlines()
