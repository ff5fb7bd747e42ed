"""Read and write run files (DESIGN §5): validated on read, atomic on write.

>>> import tempfile
>>> from cogeval.data.run import COUNTED, EvalRun
>>> run = EvalRun.model_validate({"run_id": "20261022T101530123Z-1a2b3c4d",
...     "started_at": "2026-10-22T10:15:30.123Z", "finished_at": "2026-10-22T10:15:31.000Z"})
>>> path = save_run(run, tempfile.mkdtemp() + "/runs/")
>>> path.name
'20261022T101530123Z-1a2b3c4d.json'
>>> load_run(path) == run
True
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import pathlib
from operator import attrgetter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from cogeval._check import check_path, describe
from cogeval.data.file_form import before_the_format, from_file
from cogeval.data.gc_pause import paused_gc
from cogeval.data.json_limits import MAX_CASE_DEPTH, check_json, loads, text_depth
from cogeval.data.records import FORMAT, VERSION, Json, ResultRecord, check_cases_read_from_text
from cogeval.data.run import COUNTED, EvalRun
from cogeval.errors import InputError, RunFileError

_ERRORS_SHOWN = 3
_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


def load_run(path: str | os.PathLike[str]) -> EvalRun:
    """Read and validate the run file at ``path``.

    A missing file raises ``FileNotFoundError``; anything else wrong raises
    :class:`~cogeval.errors.RunFileError` naming the file and, for a schema
    error, the field path with the file's camelCase keys, e.g.
    ``run file 'runs/x.json' is invalid: results[3].scores[0].score: Input should be a valid number``.
    The limits of :mod:`cogeval.data.json_limits` (nesting, numbers) apply, and
    two results of one case key, occurrence and trial are refused.
    """
    path = check_path("path", path)
    where = f"run file '{path}'"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "run file not found", str(path)) from None
    with paused_gc():
        return run_from_text(raw, where) or _read_carefully(raw, where)


def _read_carefully(raw: bytes, where: str) -> EvalRun:
    """The run in a file's bytes, parsed by :func:`~cogeval.data.json_limits.loads` and validated in Python:
    every problem named."""
    try:
        data = loads(raw.decode("utf-8-sig"), f"{where} is invalid", error=RunFileError)
    except UnicodeDecodeError as error:
        raise RunFileError(f"{where} is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise RunFileError(f"{where} is not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    del raw
    return _validated(data, where)


class _RunText(BaseModel):
    """A run file read from its text by pydantic-core: the results as records, the rest as parsed."""

    model_config = ConfigDict(extra="allow", cache_strings="keys")  # values are mostly distinct: caching them costs
    __pydantic_extra__: dict[str, Json] = Field(init=False)
    results: list[ResultRecord] = Field(default_factory=list)


_SHALLOW = MAX_CASE_DEPTH + 4
"""The deepest text the fast path reads: a case's fields start at level 5 (the file, ``results``, a result,
``case``), so within it no case field breaks its limit, no value is cut and the file keeps its own limit."""


def run_from_text(raw: bytes, where: str) -> EvalRun | None:
    """The run in a run file's bytes, read by pydantic-core from the text with no Python call per value;
    ``None`` when the careful path must read it: to name a problem (a limit broken, a field wrong, a case that
    breaks a rule, JSON that is no run), or to convert what only it converts (cogeval's files from before the
    format). Where both read a file, they give equal runs (``benchmarks/README.md``, "Run files", has the speed)."""
    raw = raw.removeprefix(codecs.BOM_UTF8)
    if text_depth(raw) > _SHALLOW:
        return None
    try:
        document = _RunText.model_validate_json(raw)
        results = document.results
        check_cases_read_from_text(list(map(attrgetter("case"), results)))
        header = document.__pydantic_extra__
        _check_format(where, header)
        if before_the_format(header):  # durations in seconds, to be made milliseconds
            return None
        return EvalRun.model_validate({**from_file(header), "results": results}, context={COUNTED: True})
    except ValueError:  # a ValidationError or InputError: the careful path names it
        return None


def as_run(run: Any, name: str = "run") -> EvalRun:
    """An :class:`EvalRun` from a run, a suite result (``to_run()``) or a run-file path."""
    if isinstance(run, EvalRun):
        return run
    if hasattr(run, "to_run"):
        converted: EvalRun = run.to_run()
        return converted
    if isinstance(run, (str, os.PathLike)):
        return load_run(run)
    raise InputError(f"{name} must be an EvalRun, a suite result or a run-file path; got {describe(run)}")


def validated_run(data: dict[str, Any], where: str) -> EvalRun:
    """The run of data in the model's shape (what a suite or an importer builds: seconds in the tables,
    milliseconds in ``duration``); a problem raises :class:`RunFileError` ``"<where> cannot be read as a run: …"``."""
    try:
        return EvalRun.model_validate(data)
    except ValidationError as error:
        raise RunFileError(f"{where} cannot be read as a run: {describe_errors(error)}") from None
    except InputError as error:
        raise RunFileError(f"{where} cannot be read as a run: {error}") from None


def run_from_json(data: Any, where: str) -> EvalRun:
    """Validate parsed run-file JSON; errors raise :class:`RunFileError` starting with ``where``.

    ``data`` may come from plain :func:`json.loads`, so the limits of
    :mod:`cogeval.data.json_limits` (nesting, finite numbers) are checked first.
    """
    with paused_gc():
        check_json(data, f"{where} is invalid", error=RunFileError)
        return _validated(data, where)


def _validated(data: Any, where: str) -> EvalRun:
    if not isinstance(data, dict):
        raise RunFileError(f"{where} must hold a JSON object; got {_JSON_TYPES.get(type(data), 'a value')}")
    _check_format(where, data)
    try:
        return EvalRun.model_validate(from_file(data))
    except ValidationError as error:
        raise RunFileError(f"{where} is invalid: {describe_errors(error)}") from None


def save_run(run: EvalRun, target: str | os.PathLike[str]) -> pathlib.Path:
    """Write ``run`` as JSON (UTF-8, indented) and return the path written: :meth:`EvalRun.save`.

    ``target`` is a folder (an existing one, or a path ending in ``/``) that gets
    ``<run_id>.json``, or else the file itself. Missing folders are created; the
    write is atomic (a temporary file, then ``os.replace``), so a crash leaves
    the old file or none, never half a file. The run id is checked before
    anything is written, so it can never name a file outside the folder.
    """
    if not isinstance(run, EvalRun):
        raise InputError(f"save_run needs an EvalRun; got {describe(run)}")
    return run.save(target)


def _check_format(where: str, data: dict[str, Any]) -> None:
    if "format" not in data:
        raise RunFileError(f"{where} has no 'format' field; expected {FORMAT!r}")
    if data["format"] != FORMAT:
        raise RunFileError(f"{where} has format {describe(data['format'])}; expected {FORMAT!r}")
    version = data.get("version")
    if "version" not in data:
        raise RunFileError(f"{where} has no 'version' field; expected {VERSION}")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise RunFileError(
            f"{where} is format version {version}; this cogeval reads version {VERSION} (upgrade cogeval to read it)"
        )
    if version != VERSION or isinstance(version, bool):
        raise RunFileError(f"{where} has version {describe(version)}; expected {VERSION}")


def describe_errors(error: ValidationError) -> str:
    """A pydantic error in a line: up to three problems, each ``field.path[0]: message``."""
    problems = error.errors(include_url=False)
    shown = [f"{_location(p['loc'])}: {_message(p)}" if p["loc"] else _message(p) for p in problems[:_ERRORS_SHOWN]]
    more = len(problems) - _ERRORS_SHOWN
    if more > 0:
        shown.append(f"and {more} more error{'s' if more > 1 else ''}")
    return "; ".join(shown)


def _location(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _message(problem: ErrorDetails) -> str:
    cause = problem.get("ctx", {}).get("error")
    if problem["type"] == "value_error" and cause is not None:
        return str(cause)  # our own message, without pydantic's "Value error, " prefix
    return str(problem["msg"])
