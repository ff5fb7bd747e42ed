"""Ctrl-C anywhere keeps what finished; an interrupted run (or a checkpoint) resumes with only the missing calls.

The SIGINTs here are sent by the target, metric or judge itself when it reaches a chosen case, so what has
finished at that moment is fixed by the order of the work (concurrency 1), never by a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from chat_server import completion

from cogeval import (
    Case,
    EvalSuite,
    JudgeConfig,
    RunInterrupted,
    compare_runs,
    correctness,
    exact_match,
    load_run,
    metric,
)
from cogeval.data.run_writer import RunFileWriter
from cogeval.errors import InputError

CASES = [Case(f"q{i}", expected=f"q{i}") for i in range(5)]
SLEEP_FOREVER = 3600


@contextlib.contextmanager
def ctrl_c_means_keyboard_interrupt():
    """A process started in the background inherits SIGINT ignored; make it mean Ctrl-C here."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def press_ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)


def answering(calls, *, stop_at=None):
    async def target(text):
        calls.append(text)
        if text == stop_at:
            press_ctrl_c()
            await asyncio.sleep(SLEEP_FOREVER)
        return text

    return target


def interrupted(suite, **options):
    with ctrl_c_means_keyboard_interrupt(), pytest.raises(RunInterrupted) as info:
        suite.run(**options)
    return info.value


# --- Ctrl-C in each phase ------------------------------------------------------------------------


def test_ctrl_c_while_the_target_answers_keeps_every_answer_in_a_saveable_run(tmp_path):
    calls = []
    suite = EvalSuite(CASES, answering(calls, stop_at="q2"), metrics=[exact_match()], concurrency=1, progress=False)
    stop = interrupted(suite)
    partial = stop.result
    assert [r.output for r in partial.results] == ["q0", "q1"]
    assert [dict(r.scores) for r in partial.results] == [{}, {}]  # answered, not yet scored
    assert partial.run.status == "interrupted"
    assert partial.failures == ["the run was interrupted: 2 of 5 case-trials answered, 0 scored"]
    assert (partial.passed, partial.exit_code) == (False, 2)
    assert str(stop).startswith("Run interrupted after 2 of 5 cases; the run so far is this exception's .result")
    saved = load_run(partial.save_run(tmp_path))
    assert saved == partial.run and json.loads((tmp_path / f"{partial.run_id}.json").read_text())["status"] == "interrupted"


def test_ctrl_c_while_metrics_score_keeps_every_answer_and_the_finished_scores():
    seen = []

    @metric("slow_match")
    async def slow_match(output, case):
        seen.append(output)
        if output == "q2":
            press_ctrl_c()
            await asyncio.sleep(SLEEP_FOREVER)
        return float(output == case.expected)

    suite = EvalSuite(CASES, str, metrics=[slow_match], concurrency=1, progress=False)
    partial = interrupted(suite).result
    assert [r.output for r in partial.results] == ["q0", "q1", "q2", "q3", "q4"]
    assert [r.scores["slow_match"].value if r.scores else None for r in partial.results] == [1.0, 1.0, None, None, None]
    assert partial.aggregated["slow_match"].count == 2
    assert partial.failures == ["the run was interrupted: 5 of 5 case-trials answered, 2 scored"]


def test_ctrl_c_while_the_judge_answers_keeps_the_judged_scores(chat_server, tmp_path):
    def judge_reply(body):
        if "q2" in json.dumps(body):
            press_ctrl_c()
            return completion('{"score": 5, "reasoning": "late"}', delay=SLEEP_FOREVER)
        return completion('{"score": 5, "reasoning": "right"}')

    chat_server.responder = judge_reply
    judge = JudgeConfig("judge-model", base_url=chat_server.url, api_key="sk-test", cache=tmp_path / "cache",
                        timeout=SLEEP_FOREVER / 2)
    suite = EvalSuite(CASES, str, metrics=[correctness()], judge=judge, concurrency=1, progress=False)
    partial = interrupted(suite).result
    assert [r.scores["correctness"].value if r.scores else None for r in partial.results] == [1.0, 1.0, None, None, None]
    assert partial.stats.judge_calls == 2  # q0 and q1 judged; q2's call, under way, has no answer to count


def test_a_target_passing_on_keyboard_interrupt_stops_the_run_and_keeps_what_finished():
    def target(text):
        if text == "q1":
            raise KeyboardInterrupt
        return text

    stop = interrupted(EvalSuite(CASES, target, metrics=[exact_match()], concurrency=1, progress=False))
    assert [r.output for r in stop.result.results] == ["q0"]


def test_a_target_raising_system_exit_fails_its_case_only():
    def target(text):
        if text == "q1":
            sys.exit(3)
        return text

    result = EvalSuite(CASES, target, metrics=[exact_match()], concurrency=1, progress=False).run()
    assert [r.error for r in result.results] == [None, "SystemExit: 3", None, None, None]


# --- resume ------------------------------------------------------------------------------------


def test_resume_asks_the_target_only_for_the_missing_case_trials(tmp_path):
    calls = []
    first = EvalSuite(CASES, answering(calls, stop_at="q3"), metrics=[exact_match()], concurrency=1, trials=1,
                      progress=False)
    path = interrupted(first).result.save_run(tmp_path)
    calls.clear()
    resumed = EvalSuite(CASES, answering(calls), metrics=[exact_match()], concurrency=1, progress=False)
    result = resumed.run(resume=path)
    assert calls == ["q3", "q4"]
    assert [r.output for r in result.results] == ["q0", "q1", "q2", "q3", "q4"]
    assert result.run.status is None and result.passed and result.aggregated["exact_match"].mean == 1.0
    assert result.run_id == load_run(path).run_id  # one run, finished: saving it replaces the partial file
    assert "status" not in json.loads(result.run.model_dump_json(by_alias=True, exclude_none=True))


def test_resume_retries_failed_case_trials_unless_told_not_to():
    calls, failing = [], {"q1"}

    def flaky(text):
        calls.append(text)
        if text in failing:
            raise RuntimeError("flaky")
        return text

    suite = EvalSuite(CASES, flaky, metrics=[exact_match()], concurrency=1, trials=1, progress=False)
    earlier = suite.run()
    assert [r.error for r in earlier.results][1] == "RuntimeError: flaky"
    calls.clear()
    kept = suite.run(resume=earlier, retry_errors=False)
    assert calls == [] and kept.results[1].error == "RuntimeError: flaky"
    failing.clear()
    retried = suite.run(resume=earlier)
    assert calls == ["q1"] and retried.results[1].error is None and retried.results[1].output == "q1"


def test_resume_scores_only_answers_without_scores():
    scored = []

    @metric("counted")
    def counted(output, case):
        scored.append(output)
        return 1.0

    suite = EvalSuite(CASES, str, metrics=[counted], concurrency=1, progress=False)
    earlier = suite.run().run
    half = earlier.model_copy(update={"results": [r if i < 3 else r.model_copy(update={"scores": []})
                                                  for i, r in enumerate(earlier.results)]})
    scored.clear()
    suite.run(resume=half)
    assert scored == ["q3", "q4"]


def test_resume_adds_the_trials_an_earlier_run_lacks():
    calls = []
    one = EvalSuite(CASES[:2], answering(calls), metrics=[exact_match()], trials=1, progress=False).run()
    calls.clear()
    three = EvalSuite(CASES[:2], answering(calls), metrics=[exact_match()], trials=3, concurrency=1, progress=False)
    result = three.run(resume=one)
    assert sorted(calls) == ["q0", "q0", "q1", "q1"]
    assert [(r.case.input, r.trial) for r in result.results] == [("q0", 0), ("q0", 1), ("q0", 2), ("q1", 0), ("q1", 1),
                                                                 ("q1", 2)]


def test_resume_refuses_other_cases_and_another_target():
    calls = []
    earlier = EvalSuite(CASES, answering(calls), metrics=[exact_match()], progress=False).run()
    with pytest.raises(InputError, match=r"^resume: run '.+' was made on other cases \(dataset fingerprint .+, 5 cases\) "
                                         r"than this suite runs \(.+, 4 cases\)$"):
        EvalSuite(CASES[:4], answering(calls), metrics=[exact_match()], progress=False).run(resume=earlier)
    with pytest.raises(InputError, match=r"^resume: run '.+' was made with target \{'type': 'function', 'name': "
                                         r"'answering.<locals>.target'\}, not this suite's \{'type': 'function', "
                                         r"'name': 'str.upper'\}; a resumed run must keep its target$"):
        EvalSuite(CASES, str.upper, metrics=[exact_match()], progress=False).run(resume=earlier)
    with pytest.raises(InputError, match=r"^resume must be an EvalRun, a suite result or a run-file path; got 42$"):
        EvalSuite(CASES, str, progress=False).run(resume=42)


# --- checkpoints --------------------------------------------------------------------------------


def test_a_checkpoint_holds_the_run_so_far_and_then_the_whole_run(tmp_path):
    path = tmp_path / "checkpoint.json"
    seen = []

    def target(text):
        answered = int(text[1:])  # q3 comes after 3 answers
        deadline = time.monotonic() + 60
        while answered and time.monotonic() < deadline and not (path.exists() and written() >= answered):
            time.sleep(0.01)  # the write is made in a thread, soon after the answer
        seen.append(written() if path.exists() else 0)
        return text

    def written():
        run = load_run(path)
        assert run.status == "interrupted" and run.results[-1].scores == []  # the answers so far, not scored yet
        return len(run.results)

    result = EvalSuite(CASES, target, metrics=[exact_match()], concurrency=1, progress=False).run(
        checkpoint=path, checkpoint_every=0)
    assert seen == [0, 1, 2, 3, 4]  # every answer written before the next call (every=0)
    assert load_run(path) == result.run and result.run.status is None


def test_a_slow_checkpoint_write_does_not_hold_up_the_run(tmp_path, monkeypatch):
    """The writes are made in a thread: the run goes on calling the target while one is under way."""
    release, calls, waited = threading.Event(), [], []
    write = RunFileWriter.write

    def slow_write(self, *args, **kwargs):
        waited.append(release.wait(60))  # a slow disk: the write waits for the run's last call
        return write(self, *args, **kwargs)

    def target(text):
        calls.append(text)
        if len(calls) == len(CASES):
            release.set()
        return text

    monkeypatch.setattr(RunFileWriter, "write", slow_write)
    path = tmp_path / "checkpoint.json"
    result = EvalSuite(CASES, target, metrics=[exact_match()], concurrency=1, progress=False).run(
        checkpoint=path, checkpoint_every=0)
    assert waited and all(waited)  # every write waited for calls made meanwhile (on the loop: a 60 s stall)
    assert load_run(path) == result.run


def test_checkpoint_arguments_are_checked(tmp_path):
    suite = EvalSuite(CASES, str, progress=False)
    with pytest.raises(InputError, match=r"^checkpoint must be a file or folder path"):
        suite.run(checkpoint=42)
    with pytest.raises(InputError, match=r"^checkpoint_every must be a number of seconds >= 0; got -1$"):
        suite.run(checkpoint=tmp_path / "c.json", checkpoint_every=-1)


KILLED_RUN = textwrap.dedent("""
    import os, pathlib, sys, time
    from cogeval import Case, EvalSuite, exact_match

    marker, checkpoint = pathlib.Path(sys.argv[1]), sys.argv[2]

    def target(text):
        if text == "q3":
            marker.write_text("reached")
            time.sleep(3600)
        return text

    cases = [Case(f"q{i}", expected=f"q{i}") for i in range(5)]
    EvalSuite(cases, target, metrics=[exact_match()], concurrency=1, progress=False).run(
        checkpoint=checkpoint, checkpoint_every=0)
""")


@pytest.mark.slow
def test_kill_9_loses_nothing_the_checkpoint_had_and_resume_finishes_it(tmp_path):
    marker, checkpoint = tmp_path / "reached", tmp_path / "checkpoint.json"
    process = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(marker), str(checkpoint)],
                               cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    deadline = time.monotonic() + 120
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the run never reached q3"
    while not _holds(checkpoint, 3) and time.monotonic() < deadline:  # written in a thread, soon after the answers
        time.sleep(0.05)
    process.kill()
    process.wait()
    partial = load_run(checkpoint)
    assert partial.status == "interrupted" and [r.output for r in partial.results] == ["q0", "q1", "q2"]
    calls = []

    def target(text):
        calls.append(text)
        return text

    target.__name__ = target.__qualname__ = "target"
    result = EvalSuite([Case(f"q{i}", expected=f"q{i}") for i in range(5)], target, metrics=[exact_match()],
                       progress=False).run(resume=checkpoint)
    assert calls == ["q3", "q4"] and result.passed and len(result.results) == 5


def _holds(checkpoint, answers):
    try:
        return len(load_run(checkpoint).results) >= answers
    except (OSError, ValueError):  # not written yet
        return False


def test_comparing_an_interrupted_run_warns_that_it_is_partial():
    calls = []
    partial = interrupted(EvalSuite(CASES, answering(calls, stop_at="q3"), metrics=[exact_match()], concurrency=1,
                                    progress=False)).result
    complete = EvalSuite(CASES, str, metrics=[exact_match()], progress=False).run()
    comparison = compare_runs(complete, partial)
    assert comparison.warnings[0] == (f"head run {partial.run_id!r} was interrupted before it finished (3 of 5 "
                                      "case-trials answered): finish it with suite.run(resume=...)")
