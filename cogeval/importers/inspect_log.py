"""Inspect AI logs (``.eval`` and ``.json``) as runs: :func:`read_inspect_log` (docs/import-inspect.md).

The mapping, read through Inspect's own ``inspect_ai.log.read_eval_log``:

- one result per sample × epoch, in dataset order: the sample is the case (``input``; ``target`` as
  ``expected``, an empty target as none; the sample's ``metadata`` as the case's, plus ``inspect``: its
  id and its other fields), ``epoch - 1`` the trial; identical samples are told apart by ``occurrence``;
- the output's ``completion`` is the output, ``working_time`` (else ``total_time``) the duration, the eval
  model's usage the usage (cached input tokens counted); the sample's error is the result's error, or,
  when scoring began before it (a scorer failed), the error of every score it lacks;
- one metric per scorer, and per key (``scorer/key``) of a scorer whose value is a dict (per index of a
  list); values through Inspect's ``value_to_float`` (``C``, ``I``, ``P``, ``N`` → 1, 0, 0.5, 0); an
  unscored (NaN) value, or text that is no score, is NaN with an error; the raw value, answer,
  explanation, reason, metadata and edits go in the score's ``details``; every metric is
  higher-is-better, since Inspect gives no direction;
- task, model, ids, dataset and task args go in the run's ``metadata`` and ``config.target``, the rest of
  the log's header (plan, results, stats...) in ``metadata["inspect"]``, and the fields of a sample that
  change between epochs (times, usage by model, limits, retries, store) in each result's ``inspect`` key.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import os
import pathlib
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from pydantic import ValidationError

from cogeval._check import check_path, describe
from cogeval.data import Case, EvalRun
from cogeval.data.run_id import iso_utc
from cogeval.data.runfile import describe_errors, validated_run
from cogeval.errors import InputError, RunFileError
from cogeval.stats import aggregate

_KIND = "inspect"
"""What :func:`_looks_like` answers for an Inspect log."""

_FLAT_FIELDS = ("task", "model", "eval_id", "run_id", "task_id", "task_version", "task_args", "dataset")
"""Fields of the log's ``eval`` spec put at the top of the run's metadata (the rest goes under ``inspect``)."""

_SAMPLE_CASE_FIELDS = ("choices", "description", "files", "setup", "sandbox")
"""Fields of a sample, beside its id, kept in the case's ``metadata["inspect"]``."""

_MAPPED = frozenset({"id", "input", "target", "metadata", *_SAMPLE_CASE_FIELDS, "output", "scores", "error",
                     "error_retries"})
"""Fields of a sample that go in the case, the output, the error or the scores."""

_TRANSCRIPT = frozenset({"events", "messages", "attachments", "events_data", "timelines"})
"""Fields of a sample not imported: the transcript, which stays in the log (a result's ``inspect.uuid`` finds it).
Only the tool calls of its messages are kept, as the result's ``tool_calls``."""


_MISSING = ("reading Inspect AI logs needs the inspect_ai package: "
            "pip install 'cogeval[inspect]' (or pip install inspect_ai)")


def read_inspect_log(path: str | os.PathLike[str]) -> EvalRun:
    """The run an Inspect AI log holds: one result per sample × epoch, one metric per scorer (value).

    ``path`` is a local ``.eval`` (zip) or ``.json`` log, told apart by its content. Needs the
    ``inspect_ai`` package (``pip install 'cogeval[inspect]'``). A missing file raises
    ``FileNotFoundError``; a file that is not an Inspect log, or an invalid one, raises
    :class:`~cogeval.errors.RunFileError` naming the file and what is wrong.
    """
    file = check_path("path", path)
    log = _read(file)
    if log.samples is None:
        raise RunFileError(f"Inspect log '{file}' holds no samples (was it written with log_samples=False?); "
                           "cogeval imports the scores of each sample")
    try:
        data = _run_data(log, str(path))
    except InputError as error:
        raise RunFileError(f"Inspect log '{file}' cannot be imported: {error}") from None
    return validated_run(data, f"Inspect log '{file}'")


# -- reading -----------------------------------------------------------------------


def _read(file: pathlib.Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise InputError(_MISSING) from None
    try:
        with file.open("rb") as stream:
            head = stream.read(4)
    except FileNotFoundError:
        raise FileNotFoundError(2, "Inspect log not found", str(file)) from None
    kind: Literal["eval", "json"] = "eval" if head == b"PK\x03\x04" else "json"
    if kind == "eval":
        _check_unpacked_size(file)
    try:
        return read_eval_log(str(file), resolve_attachments=True, format=kind)
    except Exception as error:  # noqa: BLE001 - any failure of Inspect's reader is explained below
        raise _diagnosis(file, kind, error) from None


def _diagnosis(file: pathlib.Path, kind: str, error: Exception) -> RunFileError:
    """Why Inspect could not read ``file``: not a log at all, a file of another tool, or an invalid log."""
    if kind == "eval" and not _zip_is_inspect(file):
        return RunFileError(f"file '{file}' is a zip archive but not an Inspect .eval log (it has no header.json "
                            "or _journal/start.json)")
    refusal = _json_refusal(file) if kind == "json" else None
    if refusal is not None:
        return RunFileError(refusal)
    if isinstance(error, ValidationError):
        return RunFileError(f"Inspect log '{file}' is invalid: {describe_errors(error)}")
    return RunFileError(f"Inspect log '{file}' cannot be read: {type(error).__name__}: {error}")


def _json_refusal(file: pathlib.Path) -> str | None:
    """Why ``file`` is no JSON log at all (not JSON text, or JSON of another kind); None when it looks like one."""
    try:
        data = json.loads(file.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as bad:
        return (f"file '{file}' is neither an Inspect .eval log (a zip archive) nor JSON text "
                f"({bad.reason} at byte {bad.start})")
    except json.JSONDecodeError as bad:
        return f"file '{file}' is not an Inspect log: not valid JSON: line {bad.lineno} column {bad.colno}: {bad.msg}"
    return None if _looks_like(data) == _KIND else f"file '{file}' is not an Inspect log: {_other_kind(data)}"


_MAX_UNPACKED = 2 * 2**30
"""The most a ``.eval`` log may unpack to (2 GiB), and, past :data:`_BOMB_FLOOR`, the most it may grow by."""
_BOMB_FLOOR, _MAX_RATIO = 64 * 2**20, 200
"""A log that unpacks to more than 64 MiB at more than 200 times its packed size is a zip bomb (JSON logs
pack 5-20 times): Inspect's reader would hold it all in memory."""


def _check_unpacked_size(file: pathlib.Path) -> None:
    """Refuse (:class:`RunFileError`) a ``.eval`` log whose members unpack past the limits, before reading it."""
    try:
        with zipfile.ZipFile(file) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError):
        return  # a damaged log: let Inspect's own error say what is wrong
    packed = max(file.stat().st_size, 1)
    if unpacked > _MAX_UNPACKED or (unpacked > _BOMB_FLOOR and unpacked > _MAX_RATIO * packed):
        raise RunFileError(f"Inspect log '{file}' unpacks to {unpacked:,} bytes from {packed:,}; cogeval reads "
                           f"logs that unpack to at most {_MAX_UNPACKED:,} bytes, or {_MAX_RATIO} times their size "
                           f"past {_BOMB_FLOOR:,} (a zip bomb would fill memory)")


def _zip_is_inspect(file: pathlib.Path) -> bool:
    try:
        with zipfile.ZipFile(file) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return True  # a damaged log: let Inspect's own error say what is wrong
    return bool(names & {"header.json", "_journal/start.json"})


def _looks_like(data: Any) -> str | None:
    """``"inspect"`` when parsed JSON ``data`` is an Inspect log, else None.

    That is a JSON log, or the ``header.json`` or ``_journal/start.json`` inside a ``.eval`` zip:
    an object with an ``eval`` object that names the ``task`` and the ``model``.
    """
    spec = data.get("eval") if isinstance(data, Mapping) else None
    if isinstance(spec, Mapping) and isinstance(spec.get("task"), str) and isinstance(spec.get("model"), str):
        return _KIND
    return None


def _other_kind(data: Any) -> str:
    """What parsed JSON that is not an Inspect log looks like instead, and what reads it."""
    if not isinstance(data, Mapping):
        return f"it holds a JSON {'array' if isinstance(data, list) else 'value'}, not an object"
    results = data.get("results")
    if data.get("format") == "cogitator.eval-run":
        return "it looks like a cogeval run file, use cogeval.load_run"
    if "evalId" in data or (isinstance(results, Mapping) and "prompts" in results and "stats" in results):
        return "it looks like a promptfoo output, use cogeval.importers.read_promptfoo"
    if isinstance(results, Mapping) and ("versions" in data or "configs" in data or "n-shot" in data):
        return "it looks like an lm-evaluation-harness results file, use cogeval.importers.read_lm_eval_samples on its samples files"
    keys = ", ".join(repr(str(k)) for k in list(data)[:8]) or "none"
    return f"it is a JSON object with the keys {keys}; an Inspect log has 'version', 'status', 'eval' and 'samples'"


# -- the run -------------------------------------------------------------------------


def _run_data(log: Any, path: str) -> dict[str, Any]:
    """The run's data (snake_case keys, for ``EvalRun.model_validate``)."""
    from inspect_ai.scorer import value_to_float  # type: ignore[import-not-found, unused-ignore]  # loaded by _read

    spec = log.eval
    samples = _ordered(log.samples, spec.dataset.sample_ids)
    metrics = _metric_scorers(log, samples)
    occurrences = _occurrences(samples)
    to_float = value_to_float()
    results = [_result(s, occurrences[id(s)], spec, metrics, to_float) for s in samples]
    started = _moment(spec.created)
    finished = _moment(log.stats.completed_at) if log.stats.completed_at else started
    return {
        "run_id": _run_id(started, spec.eval_id or spec.task_id or spec.task),
        "started_at": started, "finished_at": finished,
        "name": f"{spec.task} ({spec.model})",
        "metadata": _run_metadata(log, path),
        "config": _config(spec, samples, metrics),
        "results": results,
        "stats": _stats(results, (finished - started).total_seconds()),
        "aggregated": _aggregated(list(metrics), results),
        "status": None if log.status == "success" else "interrupted",
    }


def _config(spec: Any, samples: list[Any], metrics: Mapping[str, str]) -> dict[str, Any]:
    """Metrics (params: the scorer, and its ``options`` when it was given any), epochs as trials, the target."""
    options = {scorer.name: {"options": _jsonish(scorer.options)} for scorer in spec.scorers or [] if scorer.options}
    return {
        "metrics": [{"name": name, "higher_is_better": True, "kind": "case",
                     "params": {"scorer": scorer, **options.get(scorer, {})}} for name, scorer in metrics.items()],
        "statistical_metrics": [{"name": n, "higher_is_better": False, "params": {}, "kind": "run"}
                                for n in ("latency", "cost", "token_usage")],  # from each sample's time and usage
        "trials": spec.config.epochs or max((s.epoch for s in samples), default=1),
        "concurrency": spec.config.max_samples or 1,
        "target": _target(spec),
    }


def _ordered(samples: list[Any], sample_ids: list[Any] | None) -> list[Any]:
    """Samples by dataset order (``eval.dataset.sample_ids``; else order of first appearance), then epoch."""
    rank = {_id_key(i): n for n, i in enumerate(sample_ids or [])}
    for s in samples:
        rank.setdefault(_id_key(s.id), len(rank))
    return sorted(samples, key=lambda s: (rank[_id_key(s.id)], s.epoch))


def _id_key(sample_id: Any) -> tuple[str, str]:
    return type(sample_id).__name__, str(sample_id)


def _occurrences(samples: list[Any]) -> dict[int, int]:
    """Each sample's occurrence: how many samples before it (other ids, dataset order) are the same case."""
    by_id: dict[tuple[str, str], int] = {}
    per_key: dict[str, int] = {}
    found = {}
    for s in samples:
        ident = _id_key(s.id)
        if ident not in by_id:
            key = _case(s).key
            by_id[ident] = per_key.get(key, 0)
            per_key[key] = by_id[ident] + 1
        found[id(s)] = by_id[ident]
    return found


def _case(sample: Any) -> Case:
    target = sample.target
    extra = {f: _jsonish(getattr(sample, f, None)) for f in _SAMPLE_CASE_FIELDS if getattr(sample, f, None)}
    metadata = dict(sample.metadata or {})
    if "inspect" in metadata:
        raise InputError(f"sample {sample.id!r} has a metadata key 'inspect', which cogeval keeps the sample's id in")
    metadata["inspect"] = {"sample_id": sample.id, **extra}
    return Case(input=_input(sample.input), expected=target if target not in ("", []) else None,
                metadata=_jsonish(metadata))


def _input(value: Any) -> Any:
    """A string input as it is; a list of chat messages as their dicts, without their random ``id``."""
    if isinstance(value, str):
        return value
    return [m.model_dump(mode="json", exclude={"id"}, exclude_none=True) for m in value]


def _jsonish(value: Any) -> Any:
    """Inspect's pydantic objects (a sandbox spec...) as JSON data; other values as they are."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _jsonish(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    return value


def _moment(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def _run_id(started: datetime.datetime, ident: str) -> str:
    """The same id each time a log is imported: its creation time and a hash of its eval id."""
    stamp = iso_utc(started).replace("-", "").replace(":", "").replace(".", "")
    return f"{stamp}-{hashlib.sha256(ident.encode('utf-8')).hexdigest()[:8]}"


def _run_metadata(log: Any, path: str) -> dict[str, Any]:
    spec = log.eval
    rest = spec.model_dump(mode="json", exclude=set(_FLAT_FIELDS), exclude_none=True)
    return {
        "source": "inspect_ai", "log": path, "status": log.status,
        "task": spec.task, "model": spec.model, "eval_id": spec.eval_id, "inspect_run_id": spec.run_id,
        "task_id": spec.task_id, "task_version": spec.task_version, "task_args": _jsonish(spec.task_args),
        "dataset": spec.dataset.name,
        "inspect": {
            "version": log.version, "eval": rest, "dataset": spec.dataset.model_dump(mode="json", exclude_none=True),
            **{name: _dump(getattr(log, name, None)) for name in ("plan", "results", "stats", "error")},
            "tags": list(log.tags or []), "metadata": _jsonish(log.metadata or {}),
        },
    }


def _dump(value: Any) -> Any:
    return None if value is None else value.model_dump(mode="json", exclude_none=True)


def _target(spec: Any) -> dict[str, Any]:
    target = {"type": "inspect", "task": spec.task, "model": spec.model, "dataset": spec.dataset.name,
              "task_args": _jsonish(spec.task_args), "solver": spec.solver, "base_url": spec.model_base_url}
    return {key: value for key, value in target.items() if value not in (None, {})}


def _aggregated(names: list[str], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every metric's summary, the statistical ones too (latency in seconds, cost, tokens), as a suite writes them."""
    values: dict[str, list[Any]] = {n: [s["score"] for r in results for s in r["scores"] if s["metric"] == n] for n in names}
    usage = [r["usage"] for r in results]
    values["latency"] = [r["duration"] / 1000 for r in results]
    values["cost"] = [u["cost"] for u in usage]
    values["token_usage"] = [sum(t for t in (u["input_tokens"], u["output_tokens"]) if t is not None)
                             if (u["input_tokens"], u["output_tokens"]) != (None, None) else math.nan for u in usage]
    return {name: dataclasses.asdict(aggregate(v)) for name, v in values.items()}


def _stats(results: list[dict[str, Any]], duration_s: float) -> dict[str, Any]:
    costs = [r["usage"]["cost"] for r in results if not math.isnan(r["usage"]["cost"])]
    return {
        "total": len(results), "errors": sum(r["error"] is not None for r in results),
        "duration": duration_s * 1000, "cost": sum(costs) if costs else math.nan,  # the file's milliseconds
        "metric_errors": sum(s["error"] is not None for r in results if r["error"] is None for s in r["scores"]),
    }


# -- one sample × epoch ----------------------------------------------------------------


def _result(sample: Any, occurrence: int, spec: Any, metrics: Mapping[str, str],
            to_float: Callable[[Any], float]) -> dict[str, Any]:
    case = _case(sample)
    failure = sample.error.message if sample.error else None
    scores = dict(_sample_scores(sample, to_float))
    scoring_failed = failure is not None and _failed_in_scorer(sample, scores, spec.config.score_on_error)
    output = sample.output
    duration = sample.working_time if sample.working_time is not None else sample.total_time
    return {
        "case_key": case.key, "occurrence": occurrence, "trial": sample.epoch - 1, "case": case,
        "output": output.completion if output else "",
        "error": None if scoring_failed else failure,
        "duration": math.nan if duration is None else duration * 1000,  # the file's milliseconds
        "usage": _usage(sample.model_usage.get(spec.model)),
        "tool_calls": _tool_calls(sample.messages) or None,
        "scores": [scores.get(name) or _missing(name, scorer, failure, scoring_failed)
                   for name, scorer in metrics.items()],
        "inspect": _sample_extra(sample),
    }


def _failed_in_scorer(sample: Any, scores: Mapping[str, Any], score_on_error: bool | None) -> bool:
    """True when the sample's error came from a scorer: scoring began before the error (by its events).

    A log without events: some scores were made, in an eval that does not score failed samples.
    """
    for event in sample.events or []:
        kind = getattr(event, "event", None)
        if kind == "error":
            return False
        if kind == "span_begin" and getattr(event, "type", None) == "scorers":
            return True
    return bool(scores) and not score_on_error


def _missing(name: str, scorer: str, failure: str | None, scoring_failed: bool) -> dict[str, Any]:
    if failure is None:
        error = f"the log has no score of scorer {scorer!r} for this sample"
    elif scoring_failed:
        error = f"a scorer failed: {failure}"
    else:
        error = "not scored: the sample failed (see the result's error)"
    return {"metric": name, "score": math.nan, "error": error}


def _usage(usage: Any) -> dict[str, Any]:
    """The eval model's usage: input tokens with those read from and written to a cache (Inspect counts them apart)."""
    if usage is None:
        return {"input_tokens": None, "output_tokens": None, "cost": math.nan}
    cached = (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    cost = getattr(usage, "total_cost", None)
    return {"input_tokens": usage.input_tokens + cached, "output_tokens": usage.output_tokens,
            "cost": math.nan if cost is None else cost}


def _tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    return [call.model_dump(mode="json", exclude_none=True)
            for m in messages or [] for call in getattr(m, "tool_calls", None) or []]


def _sample_extra(sample: Any) -> dict[str, Any]:
    """The fields of a sample × epoch that are neither its case, output text, usage, error nor scores."""
    extra = sample.model_dump(mode="json", exclude=_MAPPED | _TRANSCRIPT, exclude_none=True)
    if sample.output:
        extra["output"] = sample.output.model_dump(mode="json", exclude={"choices", "completion"}, exclude_none=True)
    if sample.error:
        extra["error_traceback"] = sample.error.traceback
    if sample.error_retries:
        extra["error_retries"] = [retry.message for retry in sample.error_retries]
    return {key: value for key, value in extra.items() if value not in ({}, [])}


# -- scores ------------------------------------------------------------------------------


def _metric_scorers(log: Any, samples: list[Any]) -> dict[str, str]:
    """Every metric of the run (in the order the scorers come) and the scorer that makes it."""
    found: dict[str, str] = {}
    for sample in samples:
        for scorer, score in (sample.scores or {}).items():
            found.update((name, scorer) for name, _ in _values(scorer, score.value))
    for scorer in log.eval.scorers or []:
        if not any(s == scorer.name for s in found.values()):
            keys = list(scorer.metrics) if isinstance(scorer.metrics, Mapping) else [None]
            found.update((scorer.name if k is None else f"{scorer.name}/{k}", scorer.name) for k in keys)
    return found


def _values(scorer: str, value: Any) -> Iterator[tuple[str, Any]]:
    """A score's value(s) by metric name: the scorer's name, or ``scorer/key`` for each key (index) of a dict (list)."""
    if isinstance(value, Mapping):
        yield from ((f"{scorer}/{key}", v) for key, v in value.items())
    elif isinstance(value, (list, tuple)):
        yield from ((f"{scorer}/{index}", v) for index, v in enumerate(value))
    else:
        yield scorer, value


def _sample_scores(sample: Any, to_float: Callable[[Any], float]) -> Iterator[tuple[str, dict[str, Any]]]:
    for scorer, score in (sample.scores or {}).items():
        details = _details(score)
        for name, value in _values(scorer, score.value):
            number, error = _number(value, to_float, getattr(score, "reason", None))
            yield name, {"metric": name, "score": number, "error": error, "details": {"value": value, **details}}


def _details(score: Any) -> dict[str, Any]:
    fields = {"answer": score.answer, "explanation": score.explanation, "reason": getattr(score, "reason", None),
              "metadata": score.metadata,
              "history": [edit.model_dump(mode="json", exclude_none=True) for edit in getattr(score, "history", [])]}
    return {key: _jsonish(value) for key, value in fields.items() if value not in (None, [], {})}


def _number(value: Any, to_float: Callable[[Any], float], reason: Any) -> tuple[float, str | None]:
    """A value as a score: through Inspect's ``value_to_float``; NaN and an error when it is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan, "unscored" + (f": {reason}" if reason else "")
    if isinstance(value, str) and not _is_score_text(value):
        return math.nan, f"value {describe(value)} is neither a number nor one of Inspect's C, I, P, N"
    if not isinstance(value, (str, int, float)):
        return math.nan, f"value {describe(value)} is not a number"
    return float(to_float(value)), None


def _is_score_text(text: str) -> bool:
    """Text ``value_to_float`` converts (it gives 0 with a warning for any other)."""
    if text in ("C", "I", "P", "N") or text.lower() in ("yes", "no", "true", "false"):
        return True
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
