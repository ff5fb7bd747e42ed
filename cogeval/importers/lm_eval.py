"""lm-evaluation-harness ``--log_samples`` output as an :class:`~cogeval.data.EvalRun`.

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task (one JSON object per
doc and filter) and one ``results_<date>.json`` beside it (model, task config,
directions, n-shot, versions). The rules of the mapping (``docs/import-lm-eval.md``
gives it field by field):

- **one samples file is one run**; its task is the file name's (``samples_<task>_<date>``,
  lm-eval's own rule) or ``task=``; the results file is ``results=`` or the
  ``*_<date>.json`` beside it, and is optional;
- **a doc is a case**: ``input`` is the doc's first non-empty text field among
  ``question, query, problem, prompt, input, text``, else the prompt of its first
  request, else the doc itself; ``expected`` is ``target``; the doc, its id, the
  prompts and the hashes go in the case's ``metadata``;
- lines of one ``doc_id`` under different filters are **one result**; a ``doc_id``
  seen again under the same filter is the **next trial**;
- **every metric of every filter is a metric**, named ``metric`` when the file has
  one filter and ``metric,filter`` (lm-eval's own naming) when it has several;
  the output is the first filter's filtered response;
- a metric's **direction** is the results file's ``higher_is_better`` (or its task
  config's ``metric_list``), else higher-is-better with the direction *assumed*
  (``direction_assumed``: comparisons say so).

>>> _metric_name("exact_match", "strict-match", several_filters=True)
'exact_match,strict-match'
>>> _input({"doc": {"question": "2+2?", "answer": "4"}, "arguments": {"gen_args_0": {"arg_0": "Q: 2+2?\\nA:"}}})
'2+2?'
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from cogeval._check import check_path, describe, is_real
from cogeval.data import Case, EvalRun
from cogeval.data.json_limits import loads
from cogeval.data.run_id import new_run_id
from cogeval.data.runfile import validated_run
from cogeval.errors import InputError, RunFileError

_QUESTION_FIELDS = ("question", "query", "problem", "prompt", "input", "text")
"""The doc fields tried, in order, for a case's input."""

_LINE_FIELDS = ("doc_id", "doc", "target", "filtered_resps", "filter", "metrics")
"""What every line of a samples file holds (besides one field per metric)."""

_PER_TASK = ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "task_hashes")
"""Sections of a results file keyed by task: a run keeps only its own task's entry."""

_MAX_SECONDS = 10 * 365 * 86400
"""A duration beyond this (ten years) is not believed: it is read as unknown (NaN)."""

_SOURCE = "lm-eval"
"""What :func:`_looks_like` answers, and the run's ``metadata["source"]``."""

_KIND = "lm-eval --log_samples output"
_SHAPE = "one JSON object per line with doc_id, doc, target, filtered_resps, filter and metrics"


def read_lm_eval_samples(
    path: str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    task: str | None = None,
) -> EvalRun:
    """The run of one lm-eval ``samples_<task>_<date>.jsonl`` file (``lm_eval --log_samples``).

    ``results`` is the run's ``results_<date>.json`` (model, directions, n-shot,
    versions); ``None`` looks for the ``*_<date>.json`` beside ``path`` and reads
    the samples alone when there is none. ``task`` names the task when the file
    name does not follow lm-eval's ``samples_<task>_<date>.jsonl``. A missing file
    raises ``FileNotFoundError``; a malformed one, or a file of another kind,
    :class:`~cogeval.errors.RunFileError` naming the file, line and field.
    """
    samples_path = _existing("path", path, "lm-eval samples file")
    where = f"lm-eval samples file '{samples_path}'"
    raw = samples_path.read_bytes()
    lines = _sample_lines(_text(raw, where), where)
    file_task, stamp = _name_parts(samples_path)
    results_path = _results_path(samples_path, stamp, results)
    summary = None if results_path is None else _read_summary(results_path)
    task_name = _task_name(task, file_task, summary, results_path, where)
    return _run(lines, where, samples_path, raw, stamp, task_name, results_path, summary)


def _looks_like(data: Any) -> str | None:
    """``"lm-eval"`` when parsed JSON ``data`` is a line of lm-eval's ``--log_samples`` output, else None."""
    return _SOURCE if isinstance(data, dict) and "doc_id" in data and "doc" in data else None


def _is_results(data: Any) -> bool:
    """Whether parsed JSON ``data`` is an lm-eval ``results_<date>.json``."""
    return isinstance(data, dict) and isinstance(data.get("results"), dict) and ("configs" in data or "versions" in data)


def _other_kind(data: Any) -> str | None:
    """What a JSON document of another tool looks like, for the error that refuses it."""
    if not isinstance(data, dict):
        return None
    if data.get("format") == "cogitator.eval-run":
        return "a cogeval run file (read it with cogeval.load_run)"
    if "schema_version" in data and isinstance(data.get("tasks"), list):
        return "an AG2 ag2.eval run file (read it with cogeval.importers.read_ag2_run)"
    if isinstance(data.get("eval"), dict) and ("samples" in data or "results" in data or "status" in data):
        return "an Inspect AI log (read it with cogeval.importers.read_inspect_log)"
    if "evalId" in data or (isinstance(data.get("results"), dict) and "prompts" in data["results"]):
        return "a promptfoo output (read it with cogeval.importers.read_promptfoo)"
    if _is_results(data):
        return "an lm-eval results file (aggregated scores only; pass the samples_<task>_<date>.jsonl beside it)"
    return None


# -- reading the files ---------------------------------------------------------------------------------


def _existing(name: str, path: Any, what: str) -> pathlib.Path:
    checked = check_path(name, path)
    if not checked.is_file():
        raise FileNotFoundError(2, f"{what} not found", str(checked))
    return checked


def _text(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(f"{where} is not UTF-8 text ({error.reason} at byte {error.start})") from None


def _sample_lines(text: str, where: str) -> list[tuple[int, dict[str, Any]]]:
    """The file's objects with their line numbers; a whole-file JSON document of another kind is refused."""
    if not text.strip():
        raise RunFileError(f"{where} is empty; expected {_KIND}: {_SHAPE}")
    try:
        whole = loads(text, where, error=RunFileError, allow_nan=True)
    except json.JSONDecodeError:
        pass  # several lines: read one by one below
    else:
        if _looks_like(whole) != _SOURCE:
            raise RunFileError(_wrong_kind(where, whole))
        _check_line(whole, f"{where} line 1")
        return [(1, whole)]  # one doc (on one line, or printed over several)
    lines: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            data = _line(line, number, where)
            if not lines and _looks_like(data) != _SOURCE:
                raise RunFileError(_wrong_kind(where, data))
            _check_line(data, f"{where} line {number}")
            lines.append((number, data))
    return lines


def _line(line: str, number: int, where: str) -> dict[str, Any]:
    try:
        data = loads(line, f"{where} line {number}", error=RunFileError, allow_nan=True)
    except json.JSONDecodeError as error:
        raise RunFileError(f"{where} line {number} is not valid JSON: column {error.colno}: {error.msg}") from None
    if not isinstance(data, dict):
        raise RunFileError(f"{where} line {number} must hold a JSON object; got {_json_type(data)}")
    return data


def _wrong_kind(where: str, data: Any) -> str:
    kind = _other_kind(data)
    if kind is not None:
        return f"{where} looks like {kind}, not {_KIND}"
    if isinstance(data, dict):
        keys = sorted(data)[:8]
        return f"{where} is not {_KIND} ({_SHAPE}); its first object has keys {keys!r}"
    return f"{where} is not {_KIND} ({_SHAPE}); it holds {_json_type(data)}"


def _json_type(data: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(data), "a number")


def _check_line(data: dict[str, Any], where: str) -> None:
    for field in _LINE_FIELDS:
        if field not in data:
            raise RunFileError(f"{where} has no {field!r} field ({_KIND} has {', '.join(_LINE_FIELDS)} on every line)")
    doc_id = data["doc_id"]
    if not is_real(doc_id) or not (isinstance(doc_id, int) or float(doc_id).is_integer()) or doc_id < 0:
        raise RunFileError(f"{where}: doc_id must be an integer >= 0; got {describe(doc_id)}")
    if not isinstance(data["filter"], str) or not data["filter"]:
        raise RunFileError(f"{where}: filter must be a filter name (a non-empty string); got {describe(data['filter'])}")
    metrics = data["metrics"]
    if not isinstance(metrics, list) or not all(isinstance(m, str) and m for m in metrics):
        raise RunFileError(f"{where}: metrics must be a list of metric names; got {describe(metrics)}")
    for metric in metrics:
        if metric not in data:
            raise RunFileError(f"{where} lists metric {metric!r} in 'metrics' but has no {metric!r} field")


def _name_parts(path: pathlib.Path) -> tuple[str | None, str | None]:
    """Task and date of ``samples_<task>_<date>.jsonl``, split as lm-eval's ``get_file_task_name`` does."""
    stem = path.name.removesuffix(".jsonl")
    if not stem.startswith("samples_") or stem.rfind("_") <= len("samples"):
        return None, None
    return stem[stem.find("_") + 1 : stem.rfind("_")], stem[stem.rfind("_") + 1 :]


def _results_path(samples: pathlib.Path, stamp: str | None,
                  results: str | os.PathLike[str] | None) -> pathlib.Path | None:
    if results is not None:
        return _existing("results", results, "lm-eval results file")
    if stamp is None:
        return None
    beside = samples.parent / f"results_{stamp}.json"
    if beside.is_file():
        return beside
    found = sorted(samples.parent.glob(f"*_{stamp}.json"))
    return found[0] if len(found) == 1 else None


def _read_summary(path: pathlib.Path) -> dict[str, Any]:
    where = f"lm-eval results file '{path}'"
    text = _text(path.read_bytes(), where)
    try:
        data = loads(text, where, error=RunFileError, allow_nan=True)
    except json.JSONDecodeError as error:
        raise RunFileError(f"{where} is not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    if not _is_results(data):
        kind = _other_kind(data)
        what = f"looks like {kind}" if kind else "has no 'results' and 'configs' objects"
        raise RunFileError(f"{where} {what}, not an lm-eval results_<date>.json")
    summary: dict[str, Any] = data
    return summary


def _task_name(task: str | None, from_file: str | None, summary: Mapping[str, Any] | None,
               results_path: pathlib.Path | None, where: str) -> str | None:
    if task is not None and (not isinstance(task, str) or not task):
        raise InputError(f"task must be a task name (a non-empty string); got {describe(task)}")
    name = task or from_file
    if summary is None:
        return name
    tasks: list[str] = list(summary["configs"] if isinstance(summary.get("configs"), dict) else summary["results"])
    if name is None:
        if len(tasks) == 1:
            return tasks[0]
        raise RunFileError(f"{where} does not say its task (its name is not samples_<task>_<date>.jsonl) "
                           f"and results file '{results_path}' has several: {tasks!r}; pass task=")
    if name not in tasks:
        raise RunFileError(f"lm-eval results file '{results_path}' has no task {name!r} (its tasks: {tasks!r}); "
                           f"pass the results file of the run that wrote {where}")
    return name


# -- the run -------------------------------------------------------------------------------------------


def _run(lines: list[tuple[int, dict[str, Any]]], where: str, path: pathlib.Path, raw: bytes, stamp: str | None,
         task: str | None, results_path: pathlib.Path | None, summary: dict[str, Any] | None) -> EvalRun:
    filters = list(dict.fromkeys(line["filter"] for _, line in lines))
    metrics = list(dict.fromkeys((m, line["filter"]) for _, line in lines for m in line["metrics"]))
    names = {pair: _metric_name(*pair, several_filters=len(filters) > 1) for pair in metrics}
    trials = _trials(lines, where)
    started, seconds = _times(summary, stamp, path)
    model = _model(summary)
    records = _results(trials, names, filters[0], where)
    data = {
        "run_id": new_run_id(started)[:20] + hashlib.sha256(raw).hexdigest()[:8],
        "started_at": started, "finished_at": _finished(started, seconds),
        "name": model, "metadata": _run_metadata(task, model, path, results_path, summary),
        "config": {
            "metrics": [{"name": names[pair], **_direction(summary, task, pair[0]),
                         "params": _params(summary, task, *pair), "kind": "case"} for pair in metrics],
            "trials": max(len(t) for t in trials.values()), "concurrency": 1,
            "target": {"type": "lm-eval", "model": model, "task": task},
        },
        "results": records,
        "stats": {"total": len(records), "errors": 0, "duration": seconds * 1000, "cost": math.nan},  # ms
    }
    return validated_run(data, where)


def _metric_name(metric: str, filter_name: str, *, several_filters: bool) -> str:
    return f"{metric},{filter_name}" if several_filters else metric


def _trials(lines: list[tuple[int, dict[str, Any]]], where: str) -> dict[int, list[list[tuple[int, dict[str, Any]]]]]:
    """doc_id → trials → the lines of that trial (one per filter); a doc seen again under a filter starts a trial."""
    docs: dict[int, list[list[tuple[int, dict[str, Any]]]]] = {}
    first: dict[int, tuple[int, dict[str, Any]]] = {}
    for number, line in lines:
        doc_id = int(line["doc_id"])
        seen_number, seen = first.setdefault(doc_id, (number, line))
        if seen is not line and _as_text(seen["doc"]) != _as_text(line["doc"]):
            raise RunFileError(f"{where} line {number}: doc_id {doc_id} has another doc than on line {seen_number} "
                               "(samples of two tasks or datasets in one file?)")
        trials = docs.setdefault(doc_id, [])
        trial = sum(1 for t in trials if any(other["filter"] == line["filter"] for _, other in t))
        if trial == len(trials):
            trials.append([])
        trials[trial].append((number, line))
    return dict(sorted(docs.items()))


def _as_text(value: Any) -> str:
    """JSON text to compare two docs by (``NaN`` in a doc equals itself there)."""
    return json.dumps(value, sort_keys=True)


def _results(trials: Mapping[int, list[list[tuple[int, dict[str, Any]]]]],
             names: Mapping[tuple[str, str], str], first_filter: str, where: str) -> list[dict[str, Any]]:
    records = []
    occurrences: dict[str, int] = {}
    for doc_id, doc_trials in trials.items():
        number, first = doc_trials[0][0]
        case = _case(first, doc_id, f"{where} line {number}")
        occurrence = occurrences.get(case.key, 0)
        occurrences[case.key] = occurrence + 1
        for trial, trial_lines in enumerate(doc_trials):
            shown = next((line for _, line in trial_lines if line["filter"] == first_filter), trial_lines[0][1])
            records.append({
                "case_key": case.key, "occurrence": occurrence, "trial": trial, "case": case,
                "output": _output(shown["filtered_resps"]), "error": None,
                "scores": [_score(name, pair, trial_lines) for pair, name in names.items()],
            })
    return records


def _case(line: Mapping[str, Any], doc_id: int, where: str) -> Case:
    metadata = {"doc_id": doc_id, "doc": line["doc"], "arguments": line.get("arguments"),
                **{k: line.get(k) for k in ("doc_hash", "prompt_hash", "target_hash")}}
    try:
        return Case(_input(line), expected=line["target"], metadata=metadata)
    except InputError as error:
        raise RunFileError(f"{where}: {error}") from None


def _input(line: Mapping[str, Any]) -> Any:
    """The doc's question field, else the prompt of its first request, else the doc."""
    doc = line["doc"]
    if isinstance(doc, dict):
        for field in _QUESTION_FIELDS:
            if isinstance(doc.get(field), str) and doc[field].strip():
                return doc[field]
    prompt = _first_prompt(line.get("arguments"))
    return prompt if prompt is not None else doc


def _first_prompt(arguments: Any) -> str | None:
    """``arguments.gen_args_0.arg_0`` (lm-eval 0.4.3 and later), or ``arguments[0][0]`` (earlier)."""
    if isinstance(arguments, dict):
        first = arguments.get("gen_args_0")
        prompt = first.get("arg_0") if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        prompt = arguments[0][0]
    else:
        prompt = None
    return prompt if isinstance(prompt, str) else None


def _output(filtered: Any) -> Any:
    """One request's filtered response, or the list of them for a doc of several requests (multiple choice)."""
    return filtered[0] if isinstance(filtered, list) and len(filtered) == 1 else filtered


def _score(name: str, pair: tuple[str, str], trial_lines: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    metric, filter_name = pair
    line = next((line for _, line in trial_lines if line["filter"] == filter_name), None)
    if line is None or metric not in line["metrics"]:
        return {"metric": name, "score": math.nan, "error": f"lm-eval logged no {metric!r} under filter {filter_name!r} for this doc"}
    value = line[metric]
    score, error = _number(value)
    details = {"filter": filter_name, "resps": line.get("resps"), "filtered_resps": line["filtered_resps"]}
    if error is not None:
        details["value"] = value
    return {"metric": name, "score": score, "error": error, "details": details}


def _number(value: Any) -> tuple[float, str | None]:
    if isinstance(value, bool):
        return float(value), None
    if is_real(value):
        try:
            number = float(value)
        except OverflowError:  # an integer of hundreds of digits
            return math.nan, f"lm-eval logged {describe(value)}, beyond the range of a float"
        return (number, None) if math.isfinite(number) else (math.nan, f"lm-eval logged {number!r}, not a finite number")
    if value is None:
        return math.nan, "lm-eval logged null"
    return math.nan, ("not a number: lm-eval aggregates this metric over the whole task "
                      "(its value is in details, the task's in the run's metadata)")


# -- run-level fields ----------------------------------------------------------------------------------


def _times(summary: Mapping[str, Any] | None, stamp: str | None, path: pathlib.Path) -> tuple[datetime.datetime, float]:
    """Start (the results file's ``date``, else the file name's, read as UTC, else the file's time) and seconds taken."""
    date: Any = (summary or {}).get("date")
    try:
        started = datetime.datetime.fromtimestamp(date if is_real(date) else math.nan, datetime.UTC)
    except (ValueError, OverflowError, OSError):
        try:
            started = datetime.datetime.strptime(stamp or "", "%Y-%m-%dT%H-%M-%S.%f").replace(tzinfo=datetime.UTC)
        except ValueError:
            started = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
    written: Any = (summary or {}).get("total_evaluation_time_seconds")  # lm-eval writes it as text
    try:
        seconds = float(written)
    except (TypeError, ValueError):
        seconds = math.nan
    return started, seconds if 0 <= seconds < _MAX_SECONDS else math.nan


def _finished(started: datetime.datetime, seconds: float) -> datetime.datetime:
    try:
        return started + datetime.timedelta(seconds=seconds if math.isfinite(seconds) else 0.0)
    except OverflowError:
        return started


def _model(summary: Mapping[str, Any] | None) -> str | None:
    summary = summary or {}
    config: Mapping[str, Any] = summary["config"] if isinstance(summary.get("config"), dict) else {}
    model = summary.get("model_name") or config.get("model")
    return model if isinstance(model, str) else None


def _task_section(summary: Mapping[str, Any] | None, section: str, task: str | None) -> Any:
    part = (summary or {}).get(section)
    return part.get(task) if isinstance(part, dict) and task is not None else None


def _metric_entry(summary: Mapping[str, Any] | None, task: str | None, metric: str) -> dict[str, Any]:
    config = _task_section(summary, "configs", task)
    entries = config.get("metric_list") if isinstance(config, dict) else None
    entries = entries if isinstance(entries, list) else []
    return next((e for e in entries if isinstance(e, dict) and e.get("metric") == metric), {})


def _direction(summary: Mapping[str, Any] | None, task: str | None, metric: str) -> dict[str, bool]:
    """The direction fields of a metric's record: the results file's ``higher_is_better``, else assumed True."""
    declared = _task_section(summary, "higher_is_better", task)
    higher = declared.get(metric) if isinstance(declared, dict) else None
    if not isinstance(higher, bool):
        higher = _metric_entry(summary, task, metric).get("higher_is_better")
    return {"higher_is_better": higher} if isinstance(higher, bool) else {"higher_is_better": True,
                                                                         "direction_assumed": True}


def _params(summary: Mapping[str, Any] | None, task: str | None, metric: str, filter_name: str) -> dict[str, Any]:
    extra = {k: v for k, v in _metric_entry(summary, task, metric).items() if k not in ("metric", "higher_is_better")}
    return {"metric": metric, "filter": filter_name, **extra}


def _run_metadata(task: str | None, model: str | None, path: pathlib.Path, results_path: pathlib.Path | None,
                  summary: Mapping[str, Any] | None) -> dict[str, Any]:
    narrowed = None if summary is None else {
        key: ({task: value[task]} if task in value else {}) if key in _PER_TASK and isinstance(value, dict) else value
        for key, value in summary.items()
    }
    return {
        "source": _SOURCE, "task": task, "model": model,
        "num_fewshot": _task_section(summary, "n-shot", task), "task_version": _task_section(summary, "versions", task),
        "samples_file": path.name, "results_file": None if results_path is None else results_path.name,
        "lm_eval": narrowed,
    }
