"""Hung and slow metrics (issue 24 item 5): sync metrics run off the event loop, each score within
``metric_timeout``; a score past it is an error on that case, and the other scores and cases are kept."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import cogeval.scoring.metrics as builtin_metrics
from cogeval import Dataset, EvalSuite, exact_match, metric, regex, rescore
from cogeval.errors import InputError
from cogeval.evaluate.case_scoring import _WORKERS

DATA = Dataset.from_records([{"input": f"q{i}", "expected": f"q{i}"} for i in range(6)])


def _hangs_on(key: str, release: threading.Event):
    @metric("picky")
    def picky(output, case):
        if output == key:
            release.wait(120)  # a metric stuck on one answer (a catastrophic regex, a loop)
        return 1.0
    return picky


def test_a_hung_sync_metric_is_an_error_on_its_case_and_every_other_score_is_kept():
    release = threading.Event()
    try:
        result = EvalSuite(DATA, lambda q: q, metrics=[exact_match(), _hangs_on("q2", release), exact_match().renamed("again")],
                           progress=False, metric_timeout=1.0).run()
    finally:
        release.set()
    scores = result.run.scores.set_index(["case_key", "metric"])
    stuck = scores.loc[(DATA[2].key, "picky")]
    assert stuck["error"] == "metric 'picky' took over 1 s (metric_timeout); its score is left out"
    assert scores["score"].isna().sum() == 1  # every other cell, the stuck case's other metrics too
    assert scores.loc[(DATA[2].key, "again"), "score"] == 1.0
    assert result.run.stats.metric_errors == 1


def test_a_sync_metric_runs_off_the_event_loop():
    seen = []

    @metric("where")
    def where(output, case):
        try:
            asyncio.get_running_loop()
            seen.append("loop")
        except RuntimeError:
            seen.append(threading.current_thread().name)
        return 1.0

    EvalSuite(DATA, lambda q: q, metrics=[where], progress=False).run()
    assert seen == ["cogeval-metrics"] * len(DATA)


def test_other_cases_are_scored_while_one_score_is_slow():
    """A metric that takes 2 s on q0 does not hold up the scores of the other cases: they are all done first."""
    done: list[str] = []

    @metric("slow")
    def slow(output, case):
        time.sleep(2 if output == "q0" else 0)
        done.append(output)
        return 1.0

    EvalSuite(DATA, lambda q: q, metrics=[slow], progress=False, concurrency=3).run()
    assert done[-1] == "q0" and sorted(done) == sorted(c.input for c in DATA)


def test_an_async_metric_past_the_timeout_is_an_error_on_its_case():
    @metric("sleepy")
    async def sleepy(output, case):
        await asyncio.sleep(60 if output == "q1" else 0)
        return 1.0

    result = asyncio.run(EvalSuite(DATA, lambda q: q, metrics=[sleepy], progress=False, metric_timeout=1.0).arun())
    errors = result.run.scores.dropna(subset=["error"])
    assert list(errors["case_key"]) == [DATA[1].key]
    assert list(errors["error"]) == ["metric 'sleepy' took over 1 s (metric_timeout); its score is left out"]


def test_a_metric_raising_timeouterror_itself_is_its_own_error_not_a_metric_timeout():
    @metric("own")
    def own(output, case):
        raise TimeoutError("my service timed out")

    result = EvalSuite(DATA[:1], lambda q: q, metrics=[own], progress=False).run()
    assert result.run.scores["error"].tolist() == ["metric 'own' raised TimeoutError: my service timed out"]


def test_a_sync_metric_returning_an_awaitable_is_awaited_on_the_loop():
    async def later():
        return 0.5

    result = EvalSuite(DATA[:2], lambda q: q, metrics=[metric("later")(lambda o, c: later())], progress=False).run()
    assert result.run.scores["score"].tolist() == [0.5, 0.5]


def test_metric_timeout_is_checked():
    with pytest.raises(InputError, match="metric_timeout must be"):
        EvalSuite(DATA, str, metrics=[exact_match()], metric_timeout=0)


def test_rescore_has_the_same_timeout(tmp_path):
    release = threading.Event()
    run = EvalSuite(DATA, lambda q: q, metrics=[exact_match()], progress=False).run().run
    try:
        again = rescore(run, [_hangs_on("q4", release)], metric_timeout=1.0)
    finally:
        release.set()
    errors = again.scores.dropna(subset=["error"])
    assert list(errors["case_key"]) == [DATA[4].key]
    assert list(errors["metric"]) == ["picky"]


def _metric_workers() -> int:
    """The metric pool's threads (other threads an earlier test of this process left running are not counted)."""
    return sum(thread.name == "cogeval-metrics" for thread in threading.enumerate())


def test_workers_are_reused_not_one_thread_per_score():
    before = _metric_workers()
    EvalSuite(Dataset.from_records([{"input": str(i)} for i in range(300)]), str,
              metrics=[metric("one")(lambda o, c: 1.0)], progress=False, concurrency=3).run()
    assert _metric_workers() - before <= 3 + 1  # the pool grows to the scores in flight at most
    assert _WORKERS.idle >= 1


def test_a_catastrophic_regex_is_an_error_score_and_lets_other_threads_run(monkeypatch):
    monkeypatch.setattr(builtin_metrics, "REGEX_TIMEOUT_S", 1.0)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.05)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        score = regex(r"(a|aa)+$").score("a" * 60 + "b", None)
    finally:
        stop.set()
        ticker.join()
    assert score.error == "the regex search took over 1 s (the pattern backtracks without end on this answer)"
    assert len(ticks) >= 5  # Python's re would hold the GIL the whole second: no tick at all


@pytest.mark.slow
def test_ctrl_c_during_a_hung_metric_keeps_the_answers(tmp_path):
    """In a fresh process: a metric stuck forever, then SIGINT: RunInterrupted with every answer, at once."""
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent("""
        import sys, threading, time
        from cogeval import EvalSuite, metric
        from cogeval.execution import RunInterrupted

        @metric("forever")
        def forever(output, case):
            print("scoring", flush=True)
            while True:
                time.sleep(0.01)

        try:
            EvalSuite([{"input": str(i)} for i in range(4)], str, metrics=[forever], progress=False).run()
        except RunInterrupted as stop:
            print("kept", len(stop.result.run.results), flush=True)
    """))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None
    assert process.stdout.readline().startswith("scoring")  # the first of the stuck scores (threads may share a line)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.strip().splitlines()[-1] == "kept 4"
