"""Which tool made a file, and every run in it: :func:`detect` and :func:`read_runs`."""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

from cogeval._check import check_choice, check_path
from cogeval.data import EvalRun, load_run
from cogeval.errors import RunFileError
from cogeval.importers import ag2, inspect_log, lm_eval, promptfoo
from cogeval.importers.ag2 import read_ag2_run
from cogeval.importers.inspect_log import read_inspect_log
from cogeval.importers.lm_eval import read_lm_eval_samples
from cogeval.importers.promptfoo import read_promptfoo

KINDS = ("cogeval", "inspect", "lm-eval", "promptfoo", "ag2")
"""What :func:`read_runs` reads: a cogeval run file, and the four tools' files."""

_DETECTORS = (inspect_log._looks_like, lm_eval._looks_like, promptfoo._looks_like, ag2._looks_like)


def detect(path: str | os.PathLike[str]) -> str | None:
    """The kind of file at ``path`` (one of :data:`KINDS`), or ``None`` when it is none of them.

    A zip holding ``header.json`` or ``_journal/start.json`` is an Inspect ``.eval`` log; JSON Lines are
    read by their first line, other JSON whole.
    """
    path = check_path("path", path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
        return "inspect" if {"header.json", "_journal/start.json"} & names else None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    first = next((line for line in text.splitlines() if line.strip()), "")
    for candidate in (text, first):
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and data.get("format") == "cogitator.eval-run":
            return "cogeval"
        found = next((kind for kind in (looks_like(data) for looks_like in _DETECTORS) if kind), None)
        if found:
            return found
    return None


def read_runs(path: str | os.PathLike[str], kind: str | None = None) -> list[EvalRun]:
    """Every run in the file at ``path``: one, or one per prompt × provider of a promptfoo output.

    ``kind`` (one of :data:`KINDS`) skips the detection; a file of no known kind raises
    :class:`~cogeval.errors.RunFileError` naming it.
    """
    path = check_path("path", path)
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    kind = detect(path) if kind is None else check_choice("kind", kind, KINDS)
    readers: dict[str, Any] = {
        "cogeval": lambda: [load_run(path)], "inspect": lambda: [read_inspect_log(path)],
        "lm-eval": lambda: [read_lm_eval_samples(path)], "promptfoo": lambda: read_promptfoo(path),
        "ag2": lambda: [read_ag2_run(path)],
    }
    if kind is None:
        try:
            return [load_run(path)]  # says what is wrong with it as a run file, the likeliest intent
        except RunFileError as error:
            raise RunFileError(f"{error} (nor is it an Inspect AI log, lm-eval --log_samples JSONL, a promptfoo "
                               "results.json or an AG2 run file)") from None
    runs: list[EvalRun] = readers[kind]()
    return runs
