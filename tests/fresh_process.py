"""Reading files in a fresh interpreter, as a user's first command does (issue 23 item 2).

pydantic builds a model's schema the first time it is needed; a reader that works only after some other
model was built passes every test that runs after that model was built in the same process, and fails for
the user whose script reads that file first. :func:`read_fresh` runs a list of reads in a new ``python``
whose first import and call of cogeval is the first read, each read caught alone, so a failing read never
hides the ones after it, and returns what each gave (a summary of its runs, never the objects).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = r'''
import contextlib, io, json, sys, traceback


def summary(run):
    if run is None:
        return None
    return {"run_id": run.run_id, "name": run.name, "results": len(run.results),
            "first_case_key": run.results[0].case_key if run.results else None,
            "metrics": [m.name for m in run.config.metrics],
            "scored": sorted({s.metric for r in run.results for s in r.scores})}


def call(reader, args):
    if reader == "load_run":
        import cogeval
        return summary(cogeval.load_run(*args))
    if reader == "read_runs":
        from cogeval.importers import read_runs
        return [summary(run) for run in read_runs(*args)]
    if reader == "detect":
        from cogeval.importers import detect
        return detect(*args)
    if reader in ("read_ag2_run", "read_inspect_log", "read_lm_eval_samples"):
        import cogeval.importers
        return summary(getattr(cogeval.importers, reader)(*args))
    if reader == "read_promptfoo":
        from cogeval.importers import read_promptfoo
        return [summary(run) for run in read_promptfoo(*args)]
    if reader.startswith("RunStore."):
        from cogeval import RunStore
        store, method = RunStore(args[0]), reader.partition(".")[2]
        if method == "list":
            return [[s["id"], s["cases"], sorted(s["metrics"])] for s in store.list()]
        if method == "runs":
            return [summary(run) for run in store.runs()]
        if method == "latest":
            return summary(store.latest())
        if method == "load":
            return summary(store.load(args[1]))
    if reader == "cli":
        from cogeval.cli import main
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(args))
        return {"status": status, "out": out.getvalue(), "err": err.getvalue()}
    raise ValueError(f"unknown reader {reader!r}")


answers = []
for reader, *args in json.loads(sys.argv[1]):
    try:
        answers.append({"ok": call(reader, args)})
    except Exception as error:
        answers.append({"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-3000:]})
print(json.dumps(answers))
'''
"""The reads: ``[[reader, *arguments], ...]`` as JSON in ``argv[1]``; prints one answer per read."""

READERS = ("load_run", "read_runs", "detect", "RunStore.list", "RunStore.runs", "RunStore.latest", "RunStore.load",
           "cli show", "cli compare", "cli runs", "cli import")
"""Every reader of run files a user reaches (``cli show`` is ``cogeval show``)."""


def read_fresh(reads: list[list[Any]], *, timeout: float = 110.0) -> list[dict[str, Any]]:
    """What each of ``reads`` gave in a new interpreter: ``{"ok": value}`` or ``{"error": "Type: message", ...}``."""
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([[str(a) for a in read] for read in reads])],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    answers: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    assert len(answers) == len(reads)
    return answers


def ok(answer: dict[str, Any]) -> Any:
    """The value of a read that worked; a failed read fails the test with its error and traceback."""
    assert "error" not in answer, f"{answer['error']}\n{answer['traceback']}"
    return answer["ok"]
