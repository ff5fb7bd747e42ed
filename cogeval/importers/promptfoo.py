"""Read promptfoo's ``promptfoo eval -o results.json`` output as runs: one :class:`~cogeval.data.EvalRun` per prompt × provider.

The mapping (field by field in ``docs/import-promptfoo.md``):

- **runs**: one per entry of ``results.prompts`` (promptfoo's columns, a prompt × provider), in file
  order; ``prompt=`` (label, promptfoo id or template SHA-256) and ``provider=`` (id or label) keep some.
- **cases**: a test's ``vars`` dict is the input (no ``expected``); the test's ``metadata`` keys,
  ``description``, ``assert`` and its other fields go into the case's metadata.
- **trials**: a test run ``--repeat N`` times (or ``options.repeat``) appears N times in a row: those are
  trials 0…N-1. A later test with the same vars is the next ``occurrence`` of that case.
- **results**: ``response.output`` → output (``""`` when none), ``latencyMs`` → duration (milliseconds, as the run file),
  ``response.tokenUsage`` prompt/completion and ``cost`` → usage, ``error`` → error unless the test only
  failed its assertions (then it is the ``pass`` score's reason). Other fields of the record go into the
  result's extra ``promptfoo`` key.
- **metrics** (all higher-is-better): ``pass`` (``success`` as 1/0), ``score`` (with the grading result as
  details) and one per ``namedScores`` key; a metric a test does not score is NaN with the reason. Scores
  are promptfoo's own numbers, never re-derived. Statistical metrics ``latency``, ``cost`` and
  ``token_usage`` (lower is better) read each result's duration and usage.
- **never copied**: prompt text (a prompt is named by its label, else by the SHA-256 of its template) and
  values under secret-like keys (``apiKey``, ``authorization``, ``password``...: ``"[redacted]"``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import os
import pathlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from cogeval._check import check_path, describe, is_real
from cogeval.data import Case, EvalRun
from cogeval.data.json_limits import loads
from cogeval.data.run_id import iso_utc
from cogeval.data.runfile import validated_run
from cogeval.errors import InputError, RunFileError
from cogeval.stats import aggregate

_KIND = "promptfoo"
_ASSERT_FAILURE = 1
"""promptfoo's ``failureReason`` for a test that ran and failed its assertions (0: none, 2: an error)."""
_BUILTIN_METRICS = ("pass", "score")
_STATISTICAL_METRICS = ("latency", "cost", "token_usage")
_TEST_FIELDS_USED = ("vars", "metadata")
_RESULT_FIELDS_USED = frozenset({
    "promptIdx", "testIdx", "success", "score", "namedScores", "latencyMs", "cost", "response", "error",
    "failureReason", "gradingResult", "testCase", "vars", "metadata", "provider", "prompt", "promptId", "traceId",
})
_RESPONSE_FIELDS_USED = frozenset({"output", "tokenUsage", "cost"})
_SECRET_KEYS = frozenset({
    "apikey", "apisecret", "secret", "secretkey", "clientsecret", "password", "token", "accesstoken", "authtoken",
    "bearertoken", "sessiontoken", "authorization", "privatekey", "awssecretaccesskey", "awssessiontoken",
})
_REDACTED = "[redacted]"


@dataclasses.dataclass(frozen=True)
class _Column:
    """One entry of ``results.prompts``: a prompt × provider, the unit of one run."""

    index: int
    label: str | None
    prompt_id: str | None
    sha256: str
    provider_id: str
    provider_label: str | None
    summary: Any

    @property
    def prompt_name(self) -> str:
        return self.label or f"prompt {self.sha256[:12]}"

    @property
    def provider_name(self) -> str:
        return self.provider_label or self.provider_id


@dataclasses.dataclass(frozen=True)
class _Identity:
    """Which case, occurrence and trial a test (a ``testIdx``) is."""

    case: Case
    occurrence: int
    trial: int


def read_promptfoo(
    path: str | os.PathLike[str], *, prompt: str | None = None, provider: str | None = None
) -> list[EvalRun]:
    """The runs of a promptfoo results file (``promptfoo eval -o results.json``): one per prompt × provider.

    Always a list, in the file's column order; ``prompt`` keeps the columns whose prompt has that
    label, promptfoo id or template SHA-256, ``provider`` those whose provider has that id or label.
    A filter that matches nothing raises :class:`~cogeval.errors.InputError` listing the choices. A
    malformed file, or a file of another kind, raises :class:`~cogeval.errors.RunFileError` naming it.
    Compare two prompts with ``base, head = read_promptfoo(path)`` and ``compare_runs(base, head)``.
    """
    where = f"promptfoo file '{check_path('path', path)}'"
    data = _read_json(path, where)
    _check_kind(data, where)
    results = _results(data, where)
    columns = _select(_columns(data, results, where), prompt, provider, where)
    identities = _identities(results, _default_repeat(data), where)
    return [_run(column, [r for r in results if r[1]["promptIdx"] == column.index], identities, data, where)
            for column in columns]


def _looks_like(data: Any) -> str | None:
    """``"promptfoo"`` when parsed JSON ``data`` is promptfoo's eval output, else None."""
    inner = data.get("results") if isinstance(data, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("results"), list) and isinstance(inner.get("prompts"), list):
        return _KIND
    return None


# -- reading and recognising -----------------------------------------------------------


def _read_json(path: str | os.PathLike[str], where: str) -> Any:
    try:
        raw = pathlib.Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(2, "promptfoo file not found", str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(f"{where} is not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        return loads(text, f"{where} is invalid", error=RunFileError)
    except json.JSONDecodeError as error:
        hint = "; it looks like promptfoo's JSONL output, write JSON with -o results.json" if _is_jsonl(text) else ""
        raise RunFileError(f"{where} is not valid JSON: line {error.lineno} column {error.colno}: {error.msg}{hint}") from None


def _is_jsonl(text: str) -> bool:
    try:
        first = json.loads(text.split("\n", 1)[0])
    except ValueError:
        return False
    return isinstance(first, dict) and "testIdx" in first and "promptIdx" in first


def _other_kind(data: dict[str, Any]) -> str | None:
    """What a JSON object that is not promptfoo output looks like, and what to do with it."""
    if data.get("format") == "cogitator.eval-run":
        return "a cogeval run file; read it with load_run"
    if isinstance(data.get("eval"), dict) and any(k in data for k in ("samples", "plan", "status")):
        return "an Inspect AI log"
    if isinstance(data.get("results"), dict) and any(k in data for k in ("configs", "versions", "n-shot")):
        return "lm-evaluation-harness results"
    if "prompts" in data and "providers" in data and "results" not in data:
        return "a promptfoo config, not its output; run `promptfoo eval -c CONFIG -o results.json` and read that"
    return None


def _check_kind(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(data), "a number")
        raise RunFileError(f"{where} must hold a JSON object (promptfoo's eval output); got {kind}")
    if _looks_like(data) == _KIND:
        return
    other = _other_kind(data)
    if other is not None:
        raise RunFileError(f"{where} looks like {other}")
    raise RunFileError(
        f"{where} is not promptfoo eval output: expected an object with 'results.prompts' and 'results.results' "
        f"(what `promptfoo eval -o results.json` writes); got keys {sorted(data)[:8]}"
    )


def _fail(where: str, place: str, expected: str, value: Any) -> RunFileError:
    return RunFileError(f"{where} is invalid: {place}: expected {expected}; got {describe(value)}")


# -- columns: one run each ---------------------------------------------------------------


def _columns(data: dict[str, Any], results: Sequence[tuple[int, dict[str, Any]]], where: str) -> list[_Column]:
    providers = {r["promptIdx"]: r.get("provider") for _, r in reversed(results)}  # each column's first record's
    return [_column(index, entry, providers.get(index), where) for index, entry in enumerate(data["results"]["prompts"])]


def _column(index: int, entry: Any, provider: Any, where: str) -> _Column:
    """A column from its ``results.prompts`` entry and the ``provider`` (``{id, label}``) of its results."""
    place = f"results.prompts[{index}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("raw"), str):
        raise _fail(where, f"{place}.raw", "the prompt template (a string)", entry.get("raw") if isinstance(entry, dict) else entry)
    raw, label, name = entry["raw"], entry.get("label"), entry.get("provider")  # name: the provider's label, else id
    if not isinstance(name, str):
        raise _fail(where, f"{place}.provider", "the provider's label or id (a string)", name)
    # promptfoo's default label is the prompt's text (or "<file>: <text>"): no label, then
    is_label = isinstance(label, str) and label and label != raw and not label.endswith(f": {raw}")
    return _Column(
        index=index, label=label if is_label else None, prompt_id=_text(entry.get("id")),
        sha256=hashlib.sha256(raw.encode("utf-8")).hexdigest(),
        provider_id=_text(_get(provider, "id")) or _text(provider) or name,
        provider_label=_text(_get(provider, "label")) or (name if name != _get(provider, "id") else None),
        summary=_scrub(entry.get("metrics")),
    )


def _select(columns: list[_Column], prompt: str | None, provider: str | None, where: str) -> list[_Column]:
    chosen = columns
    if prompt is not None:
        chosen = [c for c in chosen if prompt in (c.label, c.prompt_id, c.sha256)]
        if not chosen:
            names = list(dict.fromkeys(c.label or c.sha256 for c in columns))
            raise InputError(f"prompt={prompt!r} matches no prompt of {where}; its prompts are {names}")
    if provider is not None:
        before, chosen = chosen, [c for c in chosen if provider in (c.provider_id, c.provider_label)]
        if not chosen:
            names = list(dict.fromkeys(c.provider_id for c in before))
            raise InputError(f"provider={provider!r} matches no provider of {where}; its providers are {names}")
    return chosen


# -- results: checked once, identified by test ------------------------------------------------


def _results(data: dict[str, Any], where: str) -> list[tuple[int, dict[str, Any]]]:
    """``(position in the file, record)`` of every result, checked, in the order of their tests."""
    count = len(data["results"]["prompts"])
    checked = [(i, _checked(i, r, count, where)) for i, r in enumerate(data["results"]["results"])]
    seen: dict[tuple[int, int], int] = {}
    for i, r in checked:
        first = seen.setdefault((r["promptIdx"], r["testIdx"]), i)
        if first != i:
            raise RunFileError(
                f"{where} is invalid: results.results[{i}] repeats testIdx {r['testIdx']} of "
                f"promptIdx {r['promptIdx']} (results.results[{first}])"
            )
    return sorted(checked, key=lambda item: item[1]["testIdx"])


def _checked(i: int, record: Any, columns: int, where: str) -> dict[str, Any]:
    place = f"results.results[{i}]"
    if not isinstance(record, dict):
        raise _fail(where, place, "an object", record)
    for key, ok, expected in (
        ("promptIdx", lambda v: _is_index(v) and v < columns, f"an index of results.prompts (0 to {columns - 1})"),
        ("testIdx", _is_index, "an integer >= 0"),
        ("success", lambda v: isinstance(v, bool), "true or false"),
        ("score", lambda v: v is None or is_real(v), "a number"),
        ("namedScores", lambda v: v is None or (isinstance(v, dict) and all(is_real(s) for s in v.values())),
         "an object of numbers"),
        ("latencyMs", lambda v: v is None or (is_real(v) and v >= 0), "a number of milliseconds >= 0"),
        ("cost", lambda v: v is None or is_real(v), "a number"),
        ("response", lambda v: v is None or isinstance(v, dict), "an object"),
        ("testCase", lambda v: v is None or isinstance(v, dict), "an object"),
        ("error", lambda v: v is None or isinstance(v, str), "a string"),
    ):
        if not ok(record.get(key)):
            raise _fail(where, f"{place}.{key}", expected, record.get(key))
    variables = _test(record).get("vars")
    if variables is not None and not isinstance(variables, dict):
        raise _fail(where, f"{place}.testCase.vars", "an object of the test's variables", variables)
    return record


def _is_index(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _default_repeat(data: dict[str, Any]) -> int:
    """The eval's ``--repeat`` (``runtimeOptions.repeat``, else the config's ``evaluateOptions.repeat``), else 1."""
    for value in (_get(data, "runtimeOptions", "repeat"), _get(data, "config", "evaluateOptions", "repeat")):
        if _is_index(value) and value > 0:
            return int(value)
    return 1


def _test(record: dict[str, Any]) -> dict[str, Any]:
    test = record.get("testCase")
    return test if isinstance(test, dict) else {"vars": record.get("vars") or {}}


def _identities(results: Sequence[tuple[int, dict[str, Any]]], repeat: int, where: str) -> dict[int, _Identity]:
    """Case, occurrence and trial of every ``testIdx``, from the tests in order (the same for every column).

    promptfoo writes a test repeated N times as N identical tests in a row: the k-th copy of a
    test is trial ``k % N`` of instance ``k // N``; each new instance of a case (same vars) is
    its next occurrence.
    """
    tests = {r["testIdx"]: _test(r) for _, r in reversed(results)}  # the first record of each testIdx
    copies: dict[str, int] = {}
    instances: dict[tuple[str, int], tuple[Case, int]] = {}
    per_case: dict[str, int] = {}
    identities = {}
    for index in sorted(tests):
        test = tests[index]
        text = json.dumps(test, sort_keys=True, default=str)
        k = copies[text] = copies.get(text, -1) + 1
        times = _test_repeat(test, repeat)
        if (text, k // times) not in instances:
            case = _case(test, f"{where}: the test of testIdx {index}")
            instances[text, k // times] = (case, per_case.get(case.key, 0))
            per_case[case.key] = per_case.get(case.key, 0) + 1
        case, occurrence = instances[text, k // times]
        identities[index] = _Identity(case, occurrence, k % times)
    return identities


def _test_repeat(test: dict[str, Any], repeat: int) -> int:
    """How many times the test ran: its ``options.repeat``, else the eval's."""
    value = _get(test, "options", "repeat")
    return int(value) if _is_index(value) and value > 0 else repeat


def _case(test: dict[str, Any], where: str) -> Case:
    try:
        return Case(input=test.get("vars") or {}, metadata=_case_metadata(test))
    except InputError as error:
        raise RunFileError(f"{where}: {error}") from None


def _case_metadata(test: dict[str, Any]) -> dict[str, Any] | None:
    """The test's own ``metadata`` keys, then its other fields (``description``, ``assert``...) by name.

    A metadata key that a test field also has is kept as ``metadata.<key>``.
    """
    fields = {key: value for key, value in test.items() if key not in _TEST_FIELDS_USED and value not in (None, {}, [])}
    own = _object(test.get("metadata"))
    merged = {(f"metadata.{key}" if key in fields else key): value for key, value in own.items()}
    merged.update(fields)
    return _scrub(merged) or None


# -- one run ------------------------------------------------------------------------------


def _run(column: _Column, results: list[tuple[int, dict[str, Any]]], identities: Mapping[int, _Identity],
         data: dict[str, Any], where: str) -> EvalRun:
    """The run of one column from its ``results`` (``(position in the file, record)``, in test order)."""
    started = _started_at(data, where)
    names = _metric_names([r for _, r in results])
    prompt = {"key": column.label or column.sha256, "version_id": column.prompt_id}
    records = [_result(r, identities[r["testIdx"]], names, prompt, (where, f"results.results[{i}]")) for i, r in results]
    eval_id = _text(data.get("evalId"))
    duration = _get(data, "results", "stats", "durationMs")
    return validated_run({
        "run_id": _run_id(started, f"{eval_id or iso_utc(started)}|{column.index}|{column.prompt_id}|{column.provider_id}"),
        "started_at": started,
        "finished_at": started + datetime.timedelta(milliseconds=duration if is_real(duration) else 0),
        "name": f"{column.prompt_name} / {column.provider_name}",
        "metadata": _run_metadata(column, data, eval_id),
        "config": _config(column, names, records, data),
        "results": records,
        "aggregated": _aggregated(names, records),
    }, where)


def _run_id(started: datetime.datetime, seed: str) -> str:
    """The start time and 8 hex digits of the SHA-256 of ``seed``: the same run id on every read of the file."""
    stamp = started.strftime("%Y%m%dT%H%M%S") + f"{started.microsecond // 1000:03d}Z"
    return f"{stamp}-{hashlib.sha256(seed.encode('utf-8')).hexdigest()[:8]}"


def _started_at(data: dict[str, Any], where: str) -> datetime.datetime:
    """``results.timestamp`` (else ``metadata.evaluationCreatedAt``) in UTC."""
    stamp = _get(data, "results", "timestamp") or _get(data, "metadata", "evaluationCreatedAt")
    try:
        moment = datetime.datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise _fail(where, "results.timestamp", "an ISO 8601 time such as '2026-10-22T10:15:30.123Z'", stamp)
    return moment.astimezone(datetime.UTC) if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def _metric_names(results: list[dict[str, Any]]) -> list[str]:
    """``pass``, ``score``, then every named score in order of first appearance (renamed ``<name>_named`` on a clash)."""
    named = dict.fromkeys(_metric_name(n) for r in results for n in (r.get("namedScores") or {}))
    return [*_BUILTIN_METRICS, *named]


def _metric_name(named: str) -> str:
    return f"{named}_named" if named in _BUILTIN_METRICS else named


def _result(record: dict[str, Any], identity: _Identity, names: list[str], prompt: dict[str, Any],
            where: tuple[str, str]) -> dict[str, Any]:
    """One ``results[]`` record; ``where`` is the file and the record's place in it."""
    response = record.get("response") or {}
    error = _target_error(record)
    output = response.get("output")
    return {
        "case_key": identity.case.key, "occurrence": identity.occurrence, "trial": identity.trial,
        "case": identity.case, "output": "" if output is None else output, "error": error,
        "duration": float(record["latencyMs"]) if is_real(record.get("latencyMs")) else math.nan,  # ms, as the file
        "usage": _usage(record, response, where), "trace_id": _text(record.get("traceId")),
        "prompt": prompt, "scores": _scores(record, names, error), "promptfoo": _leftovers(record, response),
    }


def _target_error(record: dict[str, Any]) -> str | None:
    """promptfoo's ``error``, unless it only says why the assertions failed (``failureReason`` 1)."""
    error = record.get("error")
    reason = record.get("failureReason")
    only_assertions = reason == _ASSERT_FAILURE or (reason is None and record.get("gradingResult") is not None)
    return error if error and not only_assertions else None


def _usage(record: dict[str, Any], response: dict[str, Any], where: tuple[str, str]) -> dict[str, Any]:
    """The target's tokens (``response.tokenUsage`` prompt and completion) and cost (NaN when unknown)."""
    tokens = _object(response.get("tokenUsage"))
    counts = {}
    for key, name in (("prompt", "input_tokens"), ("completion", "output_tokens")):
        value = tokens.get(key)
        if value is not None and not (is_real(value) and value >= 0 and float(value).is_integer()):
            raise _fail(where[0], f"{where[1]}.response.tokenUsage.{key}", "a whole number >= 0", value)
        counts[name] = None if value is None else int(value)
    cost = record.get("cost") if record.get("cost") is not None else response.get("cost")
    return {**counts, "cost": float(cost) if is_real(cost) else math.nan}


def _scores(record: dict[str, Any], names: list[str], error: str | None) -> list[dict[str, Any]]:
    """``pass``, ``score`` and every named score of the run, NaN with the reason where this test has none."""
    grading = record.get("gradingResult") if isinstance(record.get("gradingResult"), dict) else None
    score = record.get("score")
    scores = [
        {"metric": "pass", "score": float(record["success"]), "details": _reason(grading, record, error)},
        {"metric": "score", "score": math.nan if score is None else float(score),
         "error": "promptfoo recorded no score" if score is None else None, "details": _scrub(grading)},
    ]
    named = {_metric_name(n): (n, s) for n, s in (record.get("namedScores") or {}).items()}
    weights = grading.get("namedScoreWeights") if grading and isinstance(grading.get("namedScoreWeights"), dict) else {}
    for name in names[len(_BUILTIN_METRICS):]:
        if name in named:
            original, value = named[name]
            weight = weights.get(original)
            scores.append({"metric": name, "score": float(value), "details": None if weight is None else {"weight": weight}})
        else:
            why = "the test errored" if error else "the test has no assertion with this metric"
            scores.append({"metric": name, "score": math.nan, "error": f"not scored: {why}"})
    return scores


def _reason(grading: dict[str, Any] | None, record: dict[str, Any], error: str | None) -> dict[str, Any] | None:
    """Why the test passed or failed: the grading result's reason (or, without one, an error that is not the target's)."""
    reason = grading.get("reason") if grading else (record.get("error") if error is None else None)
    return None if reason is None else {"reason": reason}


def _leftovers(record: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """Everything of the record no other field of the run holds, but the rendered prompt's text."""
    extra = {key: value for key, value in record.items() if key not in _RESULT_FIELDS_USED}
    extra["testIdx"], extra["promptIdx"] = record["testIdx"], record["promptIdx"]
    if record.get("failureReason") is not None:
        extra["failureReason"] = record["failureReason"]
    rest = {key: value for key, value in response.items() if key not in _RESPONSE_FIELDS_USED}
    if rest:
        extra["response"] = rest
    test = _test(record)
    own = _object(test.get("metadata"))
    metadata = {k: v for k, v in _object(record.get("metadata")).items() if k not in own or own[k] != v}
    if metadata:
        extra["metadata"] = metadata
    if record.get("vars") is not None and record.get("vars") != test.get("vars"):
        extra["vars"] = record["vars"]
    prompt_config = _get(record, "prompt", "config")
    if prompt_config:
        extra["promptConfig"] = prompt_config
    return dict(_scrub(extra))


def _config(column: _Column, names: list[str], records: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """Metrics with their promptfoo source, the statistical ones, trials, concurrency and the target."""
    sources = {"pass": {"promptfoo": "success"}, "score": {"promptfoo": "score"}}
    concurrency = _get(data, "runtimeOptions", "maxConcurrency")
    return {
        "metrics": [{"name": n, "higher_is_better": True, "kind": "case",
                     "params": sources.get(n, {"promptfoo": "namedScores", "name": _original(n)})}
                    for n in names],
        "statistical_metrics": [{"name": n, "higher_is_better": False, "params": {}, "kind": "run"}
                                for n in _STATISTICAL_METRICS],
        "trials": max((r["trial"] for r in records), default=0) + 1,
        "concurrency": concurrency if _is_index(concurrency) and concurrency > 0 else 1,
        "target": {"type": "promptfoo", "provider": column.provider_id, "providerLabel": column.provider_label,
                   "prompt": column.prompt_name, "promptId": column.prompt_id},
    }


def _original(name: str) -> str:
    """The ``namedScores`` key of a metric name (``pass_named`` → ``pass``)."""
    return name.removesuffix("_named") if name.removesuffix("_named") in _BUILTIN_METRICS else name


def _run_metadata(column: _Column, data: dict[str, Any], eval_id: str | None) -> dict[str, Any]:
    """The eval, the column's prompt and provider, and promptfoo's own summaries (never its config's providers or env)."""
    return dict(_scrub({
        "source": _KIND, "eval_id": eval_id,
        "description": _get(data, "config", "description"), "tags": _get(data, "config", "tags") or {},
        "prompt": {"label": column.label, "id": column.prompt_id, "sha256": column.sha256},
        "provider": {"id": column.provider_id, "label": column.provider_label},
        "promptfoo": data.get("metadata") if isinstance(data.get("metadata"), dict) else {},
        "results_version": _get(data, "results", "version"),
        "runtime_options": data.get("runtimeOptions") or {},
        "column_metrics": column.summary, "eval_stats": _get(data, "results", "stats"),
    }))


def _aggregated(names: list[str], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every metric's summary, the statistical ones too (as a suite writes them)."""
    by_metric: dict[str, list[float]] = {n: [] for n in names}
    for r in records:
        for s in r["scores"]:
            by_metric[s["metric"]].append(s["score"])
    usage = [r["usage"] for r in records]
    tokens = [_token_sum(u) for u in usage]
    values = {
        **by_metric, "latency": [r["duration"] / 1000 for r in records], "cost": [u["cost"] for u in usage], "token_usage": tokens,
    }
    return {name: dataclasses.asdict(aggregate(v)) for name, v in values.items()}


def _token_sum(usage: dict[str, Any]) -> float:
    known = [usage[k] for k in ("input_tokens", "output_tokens") if usage[k] is not None]
    return float(sum(known)) if known else math.nan


# -- small helpers -------------------------------------------------------------------------


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _scrub(value: Any) -> Any:
    """``value`` with every value under a secret-like key (``apiKey``, ``Authorization``...) replaced by ``"[redacted]"``."""
    if isinstance(value, dict):
        return {k: _REDACTED if re.sub(r"[^a-z]", "", str(k).lower()) in _SECRET_KEYS else _scrub(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


