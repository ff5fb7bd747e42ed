"""A judge nobody can reach fails fast and loud (issue 34): a refused connection or OpenAI's endpoint without a
key fails every cell within seconds with one message naming the URL, never retried with backoff, and the run
still scores its other metrics, fails (exit_code 2), warns and says FAILED."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from chat_server import ChatServer, completion

from cogeval import EvalSuite, JudgeConfig, correctness, exact_match, faithfulness
from cogeval.evaluate.result import EXIT_RUN_FAILED
from cogeval.scoring import judge_client
from cogeval.scoring.judge import JudgeError

CASES = [{"input": f"q{i}", "expected": f"q{i}", "context": "a document"} for i in range(20)]
OPENAI_WITHOUT_KEY = ("judge endpoint https://api.openai.com/v1 is OpenAI's (the default) and no API key is set: "
                      "set OPENAI_API_KEY (or api_key=), or point base_url= (or OPENAI_BASE_URL) at your model server")


def closed_port() -> int:
    """A port nothing listens on: bound, then closed again, so connections to it are refused."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def refused(port: int) -> str:
    return (f"judge endpoint http://127.0.0.1:{port}/v1 refused the connection; is the model server running? "
            "(set base_url= or OPENAI_BASE_URL)")


def test_a_refusing_judge_fails_every_cell_within_seconds_and_the_run_is_loud(tmp_path):
    port = closed_port()
    judge = JudgeConfig("judge", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=False,
                        retries=3, backoff=1.0, samples=3)  # the backoff alone would take 1-7 s a cell
    suite = EvalSuite(CASES, lambda q: q, metrics=[exact_match(), faithfulness(), correctness()], judge=judge,
                      progress=False, name="judged")
    import openai  # noqa: F401 - imported on first use; on a loaded machine that alone may take seconds

    started = time.perf_counter()
    with pytest.warns(UserWarning) as caught:
        result = suite.run()
    took = time.perf_counter() - started
    assert took < 10  # 0.1 s measured here; 20 cases x 2 metrics x 3 samples x 4 attempts with backoff before
    message = refused(port)
    for case in result.results:
        assert case.scores["faithfulness"].error == f"metric 'faithfulness' sample 1 of 3: {message}"
        assert case.scores["correctness"].error == f"metric 'correctness' sample 1 of 3: {message}"
        assert case.scores["exact_match"].value == 1.0  # the other metrics never lose a case
    # the first wave (5 cases at once, 3 samples each) tried; every later cell failed without a call
    assert 1 <= result.stats.judge_calls <= 15 and result.stats.judge_errors == 40
    assert result.aggregated["exact_match"].mean == 1.0 and result.aggregated["faithfulness"].count == 0
    assert (result.passed, result.exit_code) == (False, EXIT_RUN_FAILED)
    reasons = [f"metric {name!r} has no score on any case: 20 judge errors, first: sample 1 of 3: {message}"
               for name in ("faithfulness", "correctness")]
    assert result.failures == reasons
    assert [str(w.message) for w in caught] == [
        f"run {result.run_id}: {reason}; the run failed (exit_code 2; see result.failures and "
        "result.metric_errors_frame)" for reason in reasons]
    assert {w.filename for w in caught} == {__file__}  # at the caller's line, in a script as in a notebook
    assert repr(result) == (f"EvalSuiteResult(run_id={result.run_id!r}, name='judged', results=20, FAILED: metrics "
                            "'faithfulness', 'correctness' have no score on any case)")
    html = result._repr_html_()
    assert html.count("FAILED: metric &#x27;faithfulness&#x27; has no score on any case: 20 judge errors") == 1
    assert f"http://127.0.0.1:{port}/v1 refused the connection" in html
    assert result.summary()["failures"] == reasons


def test_openais_endpoint_without_a_key_fails_before_any_call(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    judge = JudgeConfig("gpt-4o-mini", cache=False, retries=3, samples=3)
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="no API key is set"):
        result = EvalSuite(CASES, lambda q: q, metrics=[exact_match(), correctness()], judge=judge,
                           progress=False).run()
    assert time.perf_counter() - started < 10
    assert result.stats.judge_calls == 0 and result.stats.judge_errors == 20
    assert {r.scores["correctness"].error for r in result.results} == {
        f"metric 'correctness' sample 1 of 3: {OPENAI_WITHOUT_KEY}"}
    assert result.aggregated["exact_match"].mean == 1.0 and result.exit_code == EXIT_RUN_FAILED


def test_a_key_or_a_base_url_makes_the_default_endpoint_usable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert JudgeConfig("m", cache=False)._chat.missing_openai_key
    assert not JudgeConfig("m", api_key="sk-x", cache=False)._chat.missing_openai_key
    assert not JudgeConfig("m", base_url="http://127.0.0.1:1/v1", cache=False)._chat.missing_openai_key
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway:4000/v1")
    assert not JudgeConfig("m", cache=False)._chat.missing_openai_key
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert not JudgeConfig("m", cache=False)._chat.missing_openai_key


def test_cached_answers_are_read_with_no_key_and_no_server(tmp_path, monkeypatch):
    with ChatServer() as server:
        server.enqueue(completion('{"score": 4, "reasoning": "right"}'))
        judge = JudgeConfig("m", base_url=server.url, api_key="sk-test", cache=tmp_path / "cache")
        first = EvalSuite(CASES[:1], lambda q: q, metrics=[correctness()], judge=judge, progress=False).run()
    port = int(server.url.split(":")[2].split("/")[0])
    again = JudgeConfig("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=tmp_path / "cache")
    second = EvalSuite(CASES[:1], lambda q: q, metrics=[correctness()], judge=again, progress=False).run()
    assert first.results[0].scores["correctness"].value == second.results[0].scores["correctness"].value == 0.75
    assert second.stats.judge_cache_hits == 1 and second.stats.judge_calls == 0


def ask(judge: JudgeConfig, text: str = "hi") -> str:
    return asyncio.run(judge.ask([{"role": "user", "content": text}]))


def test_a_refused_endpoint_is_taken_as_down_for_a_few_seconds():
    port = closed_port()
    judge = JudgeConfig("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=False, retries=3)
    with pytest.raises(JudgeError) as caught:
        ask(judge)
    assert str(caught.value) == refused(port)
    assert judge_client._DOWN_FOR_S == 5.0
    with ChatServer(port=port) as server:  # the server comes up: within the 5 s nobody asks it
        server.enqueue(completion("fine"))
        with pytest.raises(JudgeError) as again:
            ask(judge, "again")
        assert str(again.value) == refused(port) and server.requests == []


def test_a_refusal_marks_the_endpoint_down_for_the_time_set(monkeypatch):
    monkeypatch.setattr(judge_client, "_DOWN_FOR_S", 0.0)
    port = closed_port()
    judge = JudgeConfig("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=False, retries=3)
    with pytest.raises(JudgeError):
        ask(judge)
    with ChatServer(port=port) as server:
        server.enqueue(completion("fine"))
        assert ask(judge, "up") == "fine" and len(server.requests) == 1
    assert judge._down is None  # an answer clears the mark


def test_a_pickled_judge_forgets_that_its_endpoint_was_down():
    import pickle

    port = closed_port()
    judge = JudgeConfig("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=False)
    with pytest.raises(JudgeError):
        ask(judge)
    assert judge._down is not None and pickle.loads(pickle.dumps(judge))._down is None
