"""README.md's Python blocks run as a new user would run them: pasted, in order, as one script, in an empty folder.

- every block fenced as ``python`` is taken as it stands, in page order, and written into one file in an
  empty temporary folder, which a fresh process of this interpreter (the venv's python) runs as its
  working directory: no names are given to it, no files are laid out for it;
- a block right after the line ``<!-- needs a model server -->`` calls an OpenAI-compatible server: the
  offline run leaves it out (with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` removed from the environment, so
  nothing can reach one); the full run keeps every block and points ``OPENAI_BASE_URL`` at a local stand-in
  server (:mod:`tests.chat_server`, on 127.0.0.1);
- the first block also runs alone, as the README promises;
- a run passes when it exits 0 and leaves the files the README says it writes.

The other pages' examples run in :mod:`tests.test_examples`.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.chat_server import ChatServer, completion

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
NEEDS_SERVER = "<!-- needs a model server -->"
"""The line right before a block's fence that marks it as calling a model server."""
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, bool]]:
    """Each Python block of README.md, in order, with whether it needs a model server."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in _BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        blocks.append((match.group(1), before.strip() == NEEDS_SERVER))
    return blocks


def _run(code: str, folder: pathlib.Path, **environment: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    (folder / "readme.py").write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | environment
    done = subprocess.run([sys.executable, "readme.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"README.md's blocks, run as {folder / 'readme.py'}, exited {done.returncode}:\n{done.stderr[-4000:]}"
    return done


def _files(folder: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _assert_the_readme_s_files(folder: pathlib.Path) -> None:
    files = _files(folder)
    # result.report(["json", "html"], path="out/"): out/<run_id>.json and out/<run_id>.html
    reports = [f for f in files if f.startswith("out/")]
    assert [pathlib.PurePath(f).suffix for f in reports] == [".html", ".json"], files
    assert pathlib.PurePath(reports[0]).stem == pathlib.PurePath(reports[1]).stem
    # store.save(before), store.save(result): runs/<run_id>.json, one of them the run the reports are of
    runs = [f for f in files if re.fullmatch(r"runs/[^/.][^/]*\.json", f)]
    assert len(runs) == 2 and f"runs/{pathlib.PurePath(reports[0]).stem}.json" in runs, files
    # comparison.report(["markdown", "html"], "eval-comparison")
    assert {"eval-comparison.md", "eval-comparison.html"} <= set(files), files
    assert "head is better" in (folder / "eval-comparison.md").read_text(encoding="utf-8")


def test_the_readme_has_blocks_and_marks_only_the_one_that_calls_a_model():
    blocks = _blocks()
    assert len(blocks) >= 4
    assert [needs for _, needs in blocks].count(True) == 1
    assert not blocks[0][1], "the first block runs offline"
    assert all(needs == ("JudgeConfig(" in code) for code, needs in blocks)


def test_the_first_block_runs_alone_in_an_empty_folder(tmp_path):
    _run(_blocks()[0][0], tmp_path / "empty")
    assert len([f for f in _files(tmp_path / "empty") if f.startswith("out/")]) == 2


def test_the_offline_blocks_run_in_order_as_one_script(tmp_path):
    _run("\n".join(code for code, needs in _blocks() if not needs), tmp_path / "empty")
    _assert_the_readme_s_files(tmp_path / "empty")


def _judge_reply(body: dict) -> object:
    """Every judge request gets a valid answer: a score for scored metrics, a winner for pairwise ones."""
    return completion('{"score": 4, "winner": "2", "reasoning": "fine"}')


@pytest.mark.slow
def test_every_block_runs_in_order_as_one_script_with_a_model_server(tmp_path):
    with ChatServer(_judge_reply) as server:
        _run("\n".join(code for code, _ in _blocks()), tmp_path / "empty",
             OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test-key")
        assert server.requests, "the judge block called the server"
    _assert_the_readme_s_files(tmp_path / "empty")
