"""The run file a suite writes stays what it was: byte for byte against a fixture, and the format's own example loads.

``fixtures/suite-run.json`` was written by the code of commit f3e673f (before the suite's
result became a thin holder of an :class:`EvalRun`), from the suite :func:`suite` builds here,
with the few values that change from run to run (:data:`VOLATILE`) set to fixed ones; regenerated
once, on purpose, when cogeval began writing the format's own shape (metric names, a list of
prompts, milliseconds, the whole cost: issue 13), the only change in that diff.
Regenerate it only on purpose: ``COGEVAL_REGENERATE_FIXTURES=1 pytest tests/evaluate/test_run_file_compat.py``.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import pathlib
import re
import time

import chat_server
import pytest
from chat_server import completion
from formats_example import format_example

from cogeval import (
    Case,
    EvalSuite,
    TargetResponse,
    correctness,
    cost,
    exact_match,
    latency,
    load_run,
    metric,
    threshold,
    token_usage,
)
from cogeval.scoring import StatisticalMetric

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "suite-run.json"
VOLATILE = {"runId": "20261022T101530123Z-1a2b3c4d", "startedAt": "2026-10-22T10:15:30.123Z",
            "finishedAt": "2026-10-22T10:15:31.000Z"}

CASES = [
    Case("2+2", expected="4", metadata={"topic": "math"}),
    Case("capital of France", expected="Paris", context=["France's capital is Paris."]),
    Case(None, turns=["hi", "what is 2+2?"], expected="4"),
    Case("2+2", expected="4", metadata={"topic": "math", "copy": 2}),
]
ANSWERS = {"2+2": "4", "capital of France": "Lyon", "hi": "hello", "what is 2+2?": "4"}


def target(text):
    if text == "capital of France":
        raise RuntimeError("kaboom")
    return TargetResponse(
        ANSWERS[text],
        usage={"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.25},
        trace_id=f"tr-{text}",
        prompt={"key": "support", "version_id": "support_v1", "version": 1},
        tool_calls=[{"name": "search", "arguments": {"q": text}}] if text == "2+2" else None,
        duration_s=0.125 * len(text),
    )


@metric("length")
def length(output, case):
    return float(len(output))


def judge(body):
    right = "<response>\n4\n</response>" in body["messages"][1]["content"]
    return completion(json.dumps({"score": 5 if right else 1, "reasoning": "compared"}), id="chatcmpl-fixed",
                      prompt_tokens=100, completion_tokens=10)


def suite(server, tmp_path):
    server.responder = judge
    return EvalSuite(
        CASES, target, metrics=[exact_match(), length, correctness()],
        statistical_metrics=[latency(), cost(), token_usage(),
                             StatisticalMetric("tool_calls", lambda o: None if o.tool_calls is None else len(o.tool_calls))],
        judge=chat_server.make_judge(server, tmp_path, cache=False, prices={"input": 1.0, "output": 10.0}),
        assertions=[threshold("exact_match", 0.9)], trials=2, concurrency=1, progress=False,
        name="nightly", metadata={"commit": "abc123"},
    )


def normalised(text: str, server_url: str) -> str:
    """The run file with its run id, times and judge URL set to fixed values."""
    for key, value in VOLATILE.items():
        text = re.sub(rf'"{key}": "[^"]*"', f'"{key}": "{value}"', text, count=1)
    return text.replace(server_url, "http://judge.invalid/v1")


@pytest.fixture
def written(chat_server, tmp_path, monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) / 8)  # wall-clock durations: multiples of 1/8 s
    result = suite(chat_server, tmp_path).run()
    return normalised(result.save_run(tmp_path / "runs/").read_text(encoding="utf-8"), chat_server.url)


def test_a_suite_writes_the_same_run_file_as_before(written):
    if os.environ.get("COGEVAL_REGENERATE_FIXTURES"):
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(written, encoding="utf-8")
    assert written == FIXTURE.read_text(encoding="utf-8")


def test_the_fixture_loads_and_saves_back_byte_for_byte(tmp_path):
    path = load_run(FIXTURE).save(tmp_path / "again.json")
    assert path.read_bytes() == FIXTURE.read_bytes()


def test_the_judge_statistics_are_typed_fields_with_the_file_keys():
    stats = load_run(FIXTURE).stats
    written = json.loads(FIXTURE.read_text(encoding="utf-8"))["stats"]
    assert (stats.judge_calls, stats.judge_cache_hits, stats.judge_input_tokens, stats.judge_output_tokens) == (
        written["judgeCalls"], written["judgeCacheHits"], written["judgeInputTokens"], written["judgeOutputTokens"])
    assert stats.judge_cost == written["judgeCost"]


@functools.cache
def example_text() -> str:
    return format_example().read_text(encoding="utf-8")


def test_the_formats_own_example_loads_verbatim():
    run = load_run(format_example())  # skips when shared/ is missing, fails under CI
    assert (run.run_id, run.name, run.dataset.cases, run.stats.total) == ("20261022T101530123Z-1a2b3c4d", "support-agent", 50, 50)
    assert [m.name for m in run.config.metrics] == ["exactMatch", "faithfulness"]
    assert run.prompts["support"].version_id == "ver_2"
    assert run.aggregated["exactMatch"].mean == 0.92
