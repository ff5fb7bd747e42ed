"""AG2 ``ag2.eval`` run files (schema version 0.2) as an :class:`~cogeval.data.EvalRun`.

An AG2 run file (``RunResult.save()``, ``run_agent(..., store_dir=)``,
``evaluate_traces``) holds one entry per task with the task, its trace (events,
exception, tokens, duration) and its scorers' feedback. The rules of the mapping
(``docs/import-ag2.md`` gives it field by field):

- **a task is a case**: ``input`` is ``inputs["input"]``, else the whole ``inputs``
  when it has other keys, else the task id; ``expected`` is ``reference_outputs``;
  the case's metadata is the task's, plus ``ag2``: its task id, tags and other inputs;
- **repeats are trials**: when every task id is ``<id>#<n>`` with ``n`` running
  1..k (k ≥ 2) for every id, as ``run_agent(repeats=k)`` writes them, ``#<n>``
  is trial n - 1 of task ``<id>``; a task id seen again is the next trial too;
- **each feedback key is a metric**, True/False scoring 1/0, unless the key only
  ever carries a categorical ``value`` (a label): labels are kept, not scored;
  AG2 records no direction, so every metric is higher-is-better unless
  ``directions`` says otherwise, with its direction *assumed* (comparisons say so);
- the output is the text of the last ``ModelResponse`` event; the exception is the
  error; the trace (events, tokens, budget violation, trace ref) is kept with the
  result under the key ``ag2``.

>>> _repeat_ids(["a#1", "a#2", "b#1", "b#2"])
{'a#1': 'a', 'a#2': 'a', 'b#1': 'b', 'b#2': 'b'}
>>> _repeat_ids(["a#1", "b"])
{'a#1': 'a#1', 'b': 'b'}
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any

from cogeval._check import check_path, describe, is_real
from cogeval.data import Case, EvalRun
from cogeval.data.from_frame import check_directions
from cogeval.data.json_limits import loads
from cogeval.data.run_id import new_run_id
from cogeval.data.runfile import validated_run
from cogeval.errors import InputError, RunFileError

_VERSIONS = ("0.1", "0.2")
"""Schema versions read: 0.2, and 0.1, whose only difference is how AG2 counted tokens."""

_CASE_FIELDS = ("inputs", "reference_outputs", "tags", "metadata", "duration_ms", "exception", "feedback")
"""A task's fields that become the case or the result; every other one is kept under the result's ``ag2`` key."""

_MAX_COUNT = 2**63 - 1
"""The largest count a run holds (the int64 columns of its tables)."""

_REPEAT = re.compile(r"(.+)#([1-9][0-9]*)")
_SOURCE = "ag2"
"""What :func:`_looks_like` answers, and the run's ``metadata["source"]``."""

_KIND = "an AG2 ag2.eval run file"


def read_ag2_run(path: str | os.PathLike[str], *, directions: Mapping[str, bool] | None = None) -> EvalRun:
    """The run of an AG2 ``ag2.eval`` run file (``RunResult.save()``; schema version 0.2, or 0.1).

    ``directions`` maps metric (feedback key) names to ``higher_is_better``;
    every other metric is higher-is-better, AG2 recording none. A missing file
    raises ``FileNotFoundError``; a malformed one, or a file of another kind,
    :class:`~cogeval.errors.RunFileError` naming the file and field.
    """
    checked = check_path("path", path)
    if not checked.is_file():
        raise FileNotFoundError(2, "AG2 run file not found", str(checked))
    where = f"AG2 run file '{checked}'"
    raw = checked.read_bytes()
    data = _document(raw, where)
    tasks = [_task(task, f"{where}: tasks[{i}]") for i, task in enumerate(data["tasks"])]
    metrics, labels = _keys(tasks)
    return _run(data, tasks, metrics, labels, check_directions(directions, metrics, "run"), raw, where)


def _looks_like(data: Any) -> str | None:
    """``"ag2"`` when parsed JSON ``data`` is an ``ag2.eval`` run file, else None."""
    return _SOURCE if isinstance(data, dict) and "schema_version" in data and "tasks" in data else None


def _other_kind(data: Any) -> str | None:
    """What a JSON document of another tool looks like, for the error that refuses it."""
    if not isinstance(data, dict):
        return None
    if data.get("format") == "cogitator.eval-run":
        return "a cogeval run file (read it with cogeval.load_run)"
    if "schema_version" in data and "win_rates" in data:
        return "an AG2 pairwise run file (evaluate_pairwise: win rates, no per-task scores)"
    if isinstance(data.get("eval"), dict) and ("samples" in data or "results" in data or "status" in data):
        return "an Inspect AI log (read it with cogeval.importers.read_inspect_log)"
    if "evalId" in data or (isinstance(data.get("results"), dict) and "prompts" in data["results"]):
        return "a promptfoo output (read it with cogeval.importers.read_promptfoo)"
    if isinstance(data.get("results"), dict) and ("configs" in data or "versions" in data):
        return "an lm-eval results file"
    if "doc_id" in data and "doc" in data:
        return "lm-eval --log_samples output (read it with cogeval.importers.read_lm_eval_samples)"
    return None


# -- reading and checking the file ---------------------------------------------------------------------


def _document(raw: bytes, where: str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(f"{where} is not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        data = loads(text, where, error=RunFileError, allow_nan=True)  # AG2 writes with json.dumps: NaN may occur
    except json.JSONDecodeError as error:
        first = _first_line(text, where)  # JSON lines of another tool (lm-eval samples) are refused by name
        if _other_kind(first) is not None:
            raise RunFileError(_wrong_kind(where, first)) from None
        raise RunFileError(f"{where} is not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    if _looks_like(data) != _SOURCE:
        raise RunFileError(_wrong_kind(where, data))
    version = data["schema_version"]
    if version not in _VERSIONS:
        raise RunFileError(f"{where} has schema_version {describe(version)}; this cogeval reads AG2 run files "
                           f"of schema version {' and '.join(_VERSIONS)}")
    required: tuple[tuple[str, type], ...] = (("tasks", list), ("created_at", str))
    optional: tuple[tuple[str, type], ...] = (
        ("run_id", str), ("label", str), ("target", str), ("suite", dict), ("aggregates", dict))
    for field, kind in required:
        _expect(data, field, kind, where, required=True)
    for field, kind in optional:
        _expect(data, field, kind, where)
    for field in ("duration_ms", "concurrency"):
        _expect_count(data, field, where)
    try:
        datetime.datetime.fromisoformat(data["created_at"])
    except ValueError:
        raise RunFileError(f"{where}: created_at must be an ISO 8601 time; got {describe(data['created_at'])}") from None
    document: dict[str, Any] = data
    return document


def _first_line(text: str, where: str) -> Any:
    """The first line's JSON value, or None when it is not JSON on its own."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return loads(line, where, error=RunFileError, allow_nan=True)
    except (json.JSONDecodeError, RunFileError):
        return None


def _wrong_kind(where: str, data: Any) -> str:
    kind = _other_kind(data)
    if kind is not None:
        return f"{where} looks like {kind}, not {_KIND}"
    if isinstance(data, dict):
        return f"{where} is not {_KIND} (no 'schema_version' and 'tasks'); its keys are {sorted(data)[:8]!r}"
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return f"{where} must hold a JSON object ({_KIND}); got {names.get(type(data), 'a number')}"


def _expect(data: Mapping[str, Any], field: str, kind: type, where: str, *, required: bool = False) -> None:
    names: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    if field not in data:
        if required:
            raise RunFileError(f"{where} has no {field!r} field")
        return
    value = data[field]
    if value is not None and not isinstance(value, kind):
        raise RunFileError(f"{where}: {field} must be {names[kind]}; got {describe(value)}")
    if value is None and required:
        raise RunFileError(f"{where}: {field} must be {names[kind]}; got None")


def _expect_count(data: Mapping[str, Any], field: str, where: str) -> None:
    value = data.get(field)
    if value is not None and (not is_real(value) or not float(value).is_integer() or value < 0):
        raise RunFileError(f"{where}: {field} must be an integer >= 0; got {describe(value)}")
    if value is not None and value > _MAX_COUNT:
        raise RunFileError(f"{where}: {field} is too large: {describe(value)} (at most 2**63 - 1)")


def _task(task: Any, where: str) -> dict[str, Any]:
    if not isinstance(task, dict):
        raise RunFileError(f"{where} must be an object; got {describe(task)}")
    if not isinstance(task.get("task_id"), str) or not task["task_id"]:
        raise RunFileError(f"{where}.task_id must be a non-empty string; got {describe(task.get('task_id'))}")
    fields: tuple[tuple[str, type], ...] = (
        ("feedback", list), ("inputs", dict), ("metadata", dict), ("tags", list), ("events", list),
        ("exception", dict), ("tokens", dict), ("trace_ref", dict))
    for field, kind in fields:
        _expect(task, field, kind, where)
    _expect_count(task, "duration_ms", where)
    for field in ("input", "output"):
        _expect_count(task.get("tokens") or {}, field, f"{where}.tokens")
    for i, feedback in enumerate(task.get("feedback") or []):
        _check_feedback(feedback, f"{where}.feedback[{i}]")
    return task


def _check_feedback(feedback: Any, where: str) -> None:
    if not isinstance(feedback, dict):
        raise RunFileError(f"{where} must be an object; got {describe(feedback)}")
    if not isinstance(feedback.get("key"), str) or not feedback["key"]:
        raise RunFileError(f"{where}.key must be a non-empty string; got {describe(feedback.get('key'))}")
    score = feedback.get("score")
    if score is not None and not isinstance(score, bool) and not is_real(score):
        raise RunFileError(f"{where}.score must be a boolean, a number or null; got {describe(score)}")


def _keys(tasks: list[dict[str, Any]]) -> tuple[list[str], set[str]]:
    """The metrics (feedback keys in order of appearance) and the labels (keys that only ever carry a ``value``)."""
    entries = [f for task in tasks for f in task.get("feedback") or []]
    keys = list(dict.fromkeys(f["key"] for f in entries))
    scored = {f["key"] for f in entries if f.get("score") is not None}
    labelled = {f["key"] for f in entries if f.get("value") is not None}
    labels = labelled - scored
    return [k for k in keys if k not in labels], labels


# -- the run -------------------------------------------------------------------------------------------


def _run(data: dict[str, Any], tasks: list[dict[str, Any]], metrics: list[str], labels: set[str],
         directions: Mapping[str, bool], raw: bytes, where: str) -> EvalRun:
    started = datetime.datetime.fromisoformat(data["created_at"])
    started = started if started.tzinfo else started.replace(tzinfo=datetime.UTC)
    seconds = _seconds(data.get("duration_ms"))
    records = _results(tasks, metrics, labels, where)
    models = _models(tasks)
    record = {
        "run_id": new_run_id(started)[:20] + hashlib.sha256(raw).hexdigest()[:8],
        "started_at": started, "finished_at": _finished(started, seconds),
        "name": data.get("label"), "metadata": _run_metadata(data, models),
        "config": {
            "metrics": [{"name": m, "higher_is_better": directions.get(m, True), "kind": "case"}
                        | ({} if m in directions else {"direction_assumed": True}) for m in metrics],
            "trials": max((r["trial"] + 1 for r in records), default=1),
            "concurrency": int(data.get("concurrency") or 1),
            "target": {"type": "ag2", "name": data.get("target"), "model": models[0] if len(models) == 1 else None},
        },
        "results": records,
        "stats": {"total": len(records), "errors": sum(r["error"] is not None for r in records),
                  "duration": seconds * 1000, "cost": math.nan},  # the file's milliseconds
    }
    return validated_run(record, where)


def _repeat_ids(task_ids: list[str]) -> dict[str, str]:
    """Each task id → its task's id: ``<id>#<n>`` → ``<id>`` when the ids are ``run_agent(repeats=k)``'s, else itself."""
    matches = [_REPEAT.fullmatch(t) for t in task_ids]
    plain = {t: t for t in task_ids}
    if not task_ids or not all(matches):
        return plain
    runs: dict[str, list[int]] = {}
    for match in filter(None, matches):
        runs.setdefault(match[1], []).append(int(match[2]))
    counts = {len(numbers) for numbers in runs.values()}
    if len(counts) != 1 or counts == {1} or any(n != list(range(1, len(n) + 1)) for n in runs.values()):
        return plain
    return {t: m[1] for t, m in zip(task_ids, matches) if m is not None}


def _results(tasks: list[dict[str, Any]], metrics: list[str], labels: set[str], where: str) -> list[dict[str, Any]]:
    bases = _repeat_ids([t["task_id"] for t in tasks])
    trials: dict[str, int] = {}
    occurrences: dict[str, int] = {}
    cases: dict[str, tuple[Case, int]] = {}
    records = []
    for index, task in enumerate(tasks):
        base = bases[task["task_id"]]
        if base not in cases:
            case = _case(task, base, f"{where}: tasks[{index}]")
            cases[base] = (case, occurrences.get(case.key, 0))
            occurrences[case.key] = cases[base][1] + 1
        case, occurrence = cases[base]
        trial = trials.get(base, 0)
        trials[base] = trial + 1
        records.append(_result(task, case, occurrence, trial, metrics, labels, f"{where}: tasks[{index}]"))
    return records


def _case(task: Mapping[str, Any], base: str, where: str) -> Case:
    inputs = task.get("inputs") or {}
    given = inputs.get("input", inputs or base)  # no inputs at all (a reference-free trace): the task id
    own: dict[str, Any] = {"task_id": base, "tags": list(task.get("tags") or [])}
    if "input" in inputs and len(inputs) > 1:
        own["inputs"] = {k: v for k, v in inputs.items() if k != "input"}  # given to the scorers, not the agent
    metadata = dict(task.get("metadata") or {})
    key = _SOURCE
    while key in metadata:  # the task's own metadata already has an "ag2" key: ours goes beside it
        key += "_"
    metadata[key] = own
    try:
        return Case(given, expected=task.get("reference_outputs"), metadata=metadata)
    except InputError as error:
        raise RunFileError(f"{where}: {error}") from None


def _result(task: Mapping[str, Any], case: Case, occurrence: int, trial: int, metrics: list[str], labels: set[str],
            where: str) -> dict[str, Any]:
    error = _error(task.get("exception"))
    feedback = _feedback_by_key(task.get("feedback") or [], labels, where)
    tokens = task.get("tokens") or {}
    events = task.get("events")
    ref = task.get("trace_ref") or {}
    kept = {k: v for k, v in task.items() if k not in _CASE_FIELDS}
    label_feedback = [f for f in task.get("feedback") or [] if f["key"] in labels]
    if label_feedback:
        kept["feedback"] = label_feedback
    return {
        "case_key": case.key, "occurrence": occurrence, "trial": trial, "case": case,
        "output": _final_text(events), "error": error, "duration": _seconds(task.get("duration_ms")) * 1000,
        "usage": {"input_tokens": tokens.get("input"), "output_tokens": tokens.get("output"), "cost": math.nan},
        "trace_id": ref.get("trace_id") if isinstance(ref.get("trace_id"), str) and ref.get("trace_id") else None,
        "tool_calls": None if events is None else [e for e in events if _event_type(e).endswith("ToolCallEvent")],
        "scores": [_score(m, feedback.get(m), error) for m in metrics],
        "ag2": kept,
    }


def _feedback_by_key(entries: list[dict[str, Any]], labels: set[str], where: str) -> dict[str, tuple[int, dict[str, Any]]]:
    by_key: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, entry in enumerate(entries):
        if entry["key"] in labels:
            continue
        if entry["key"] in by_key:
            raise RunFileError(f"{where}.feedback[{i}] repeats key {entry['key']!r} of feedback[{by_key[entry['key']][0]}]; "
                               "cogeval keeps one score per metric and task")
        by_key[entry["key"]] = (i, entry)
    return by_key


def _score(metric: str, found: tuple[int, dict[str, Any]] | None, task_error: str | None) -> dict[str, Any]:
    if found is None:
        why = f" (the task failed: {task_error})" if task_error else ""
        return {"metric": metric, "score": math.nan, "error": f"AG2 recorded no {metric!r} feedback for this task{why}"}
    feedback = found[1]
    details = {k: feedback.get(k) for k in ("comment", "value", "detail") if feedback.get(k) is not None} or None
    score = feedback.get("score")
    if score is None:
        return {"metric": metric, "score": math.nan, "details": details,
                "error": feedback.get("comment") or "AG2 recorded no score"}
    number = float(score)
    if not math.isfinite(number):
        return {"metric": metric, "score": math.nan, "details": details, "error": f"AG2 recorded {number!r}"}
    return {"metric": metric, "score": number, "error": None, "details": details}


def _error(exception: Mapping[str, Any] | None) -> str | None:
    if not exception:
        return None
    kind, message = exception.get("type") or "Exception", exception.get("message")
    return f"{kind}: {message}" if message else str(kind)


def _event_type(event: Any) -> str:
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else ""


def _final_text(events: list[Any] | None) -> Any:
    """The content of the last ``ModelResponse`` event (what AG2's scorers see as ``outputs["body"]``), else ``""``."""
    for event in reversed(events or []):
        if _event_type(event) == "ModelResponse":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            return "" if content is None else content
    return ""


def _models(tasks: list[dict[str, Any]]) -> list[str]:
    """The models named by the runs' ``ModelResponse`` and ``UsageEvent`` events, in order of appearance."""
    names = (e.get("model") for t in tasks for e in t.get("events") or []
             if _event_type(e) in ("ModelResponse", "UsageEvent"))
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def _seconds(milliseconds: Any) -> float:
    return float(milliseconds) / 1000 if is_real(milliseconds) else math.nan


def _finished(started: datetime.datetime, seconds: float) -> datetime.datetime:
    try:
        return started + datetime.timedelta(seconds=seconds if math.isfinite(seconds) else 0.0)
    except OverflowError:
        return started


def _run_metadata(data: Mapping[str, Any], models: list[str]) -> dict[str, Any]:
    suite = data.get("suite") or {}
    return {
        "source": _SOURCE, "label": data.get("label"), "suite": suite.get("name"), "target": data.get("target"),
        "models": models, "schema_version": data["schema_version"],
        "ag2": {k: v for k, v in data.items() if k != "tasks"},
    }
