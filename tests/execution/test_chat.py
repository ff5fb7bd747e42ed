"""ChatTarget against a real local HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import asyncio
import time

import pytest
from chat_server import completion, error, malformed

from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.execution import ChatTarget, run_cases, run_sync


def run(cases, target, **options):
    options = {"timeout": 5.0, "backoff": 0.0, **options}
    return run_sync(run_cases(cases, target, **options))


def test_single_turn_request_and_response(chat_server):
    chat_server.enqueue(completion("4", id="chatcmpl-abc", prompt_tokens=12, completion_tokens=3))
    target = ChatTarget("test-model", base_url=chat_server.url, api_key="sk-local", system="Be brief.",
                        temperature=0.2, max_tokens=50, prices={"input": 2.5, "output": 10.0})
    [outcome] = run([Case("What is 2+2?")], target)
    assert outcome.error is None
    assert (outcome.output, outcome.trace_id) == ("4", "chatcmpl-abc")
    assert (outcome.input_tokens, outcome.output_tokens) == (12, 3)
    assert outcome.cost_usd == pytest.approx((12 * 2.5 + 3 * 10.0) / 1e6)
    [body] = chat_server.requests
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}]
    assert (body["temperature"], body["max_tokens"]) == (0.2, 50)
    assert chat_server.calls[0].headers["authorization"] == "Bearer sk-local"


def test_optional_fields_are_not_sent_and_cost_is_unknown_without_prices(chat_server):
    [outcome] = run([Case({"question": "q"})], ChatTarget("m", base_url=chat_server.url))
    [body] = chat_server.requests
    assert "temperature" not in body and "max_tokens" not in body
    assert body["messages"] == [{"role": "user", "content": '{"question": "q"}'}]
    assert outcome.cost_usd is None
    assert outcome.output == 'echo: {"question": "q"}'


def test_options_and_complete_pass_request_fields(chat_server):
    target = ChatTarget("m", base_url=chat_server.url, options={"seed": 7})
    response = asyncio.run(target.complete([{"role": "user", "content": "x"}],
                                           response_format={"type": "json_object"}))
    assert response.output == "echo: x"
    assert chat_server.requests[0]["seed"] == 7
    assert chat_server.requests[0]["response_format"] == {"type": "json_object"}


def test_missing_usage_gives_none(chat_server):
    chat_server.enqueue(completion("x", prompt_tokens=None))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url, prices={"input": 1, "output": 1}))
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (None, None, None)


def test_tool_calls_are_recorded(chat_server):
    call = {"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": '{"x": 1}'}}
    chat_server.enqueue(completion(None, tool_calls=[call], finish_reason="tool_calls"))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url))
    assert outcome.output == ""
    assert outcome.tool_calls[0]["function"] == {"name": "calc", "arguments": '{"x": 1}'}


def test_429_then_success_with_retries(chat_server):
    chat_server.enqueue(error(429, "slow down", retry_after=0), completion("fine", id="ok-1"))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), retries=2)
    assert (outcome.output, outcome.error, outcome.attempts, outcome.trace_id) == ("fine", None, 2, "ok-1")
    assert len(chat_server.requests) == 2


def test_500s_exhaust_the_retries(chat_server):
    chat_server.enqueue(*[error(500, "kaput")] * 3)
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), retries=2)
    assert outcome.output == ""
    assert outcome.attempts == 3
    assert outcome.error.startswith("InternalServerError: Error code: 500")
    assert len(chat_server.requests) == 3


def test_400_is_not_retried(chat_server):
    chat_server.enqueue(error(400, "bad request"))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), retries=3)
    assert outcome.attempts == 1
    assert outcome.error.startswith("BadRequestError: Error code: 400")


def test_slow_server_times_out_then_succeeds(chat_server):
    chat_server.enqueue(completion("late", delay=1.0), completion("on time"))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), timeout=0.3, retries=1)
    assert (outcome.output, outcome.attempts) == ("on time", 2)


COLD_START_S = 2.5  # as tests/conftest.py's cold_client sleeps
DEADLINE_S = 2.0


def test_client_creation_is_outside_the_first_calls_deadline(chat_server, cold_client):
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), timeout=DEADLINE_S, retries=0)
    assert (outcome.output, outcome.error, outcome.attempts) == ("echo: q", None, 1)
    assert outcome.duration_s < COLD_START_S  # the attempt's clock started after the client was made
    assert cold_client == ["client", "deadline"]


def test_slow_server_times_out(chat_server):
    chat_server.enqueue(completion("late", delay=1.0))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), timeout=0.2)
    assert (outcome.output, outcome.error) == ("", "Timed out after 0.2 s")


@pytest.mark.parametrize("reply", [malformed(), malformed({"id": "x", "choices": []})])
def test_malformed_responses_become_errors(chat_server, reply):
    chat_server.enqueue(reply)
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url))
    assert outcome.output == ""
    assert outcome.error


def test_multi_turn_conversation_as_sent(chat_server):
    target = ChatTarget("m", base_url=chat_server.url, system="sys")
    [outcome] = run([Case(turns=["hello", "and again"])], target)
    first, second = chat_server.requests
    assert first["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
    assert second["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "echo: hello"},
        {"role": "user", "content": "and again"},
    ]
    assert outcome.output == "echo: and again"
    assert [t.output for t in outcome.turns] == ["echo: hello", "echo: and again"]
    assert all(t.trace_id.startswith("chatcmpl-") for t in outcome.turns)
    assert (outcome.input_tokens, outcome.output_tokens) == (20, 10)
    assert outcome.trace_id == outcome.turns[-1].trace_id


def test_one_client_per_event_loop(chat_server):
    target = ChatTarget("m", base_url=chat_server.url)
    assert run([Case("a")], target)[0].output == "echo: a"
    assert run([Case("b")], target)[0].output == "echo: b"  # a second asyncio.run: a new loop, a new client


def test_repr_and_describe_hide_the_api_key():
    target = ChatTarget("m", base_url="http://localhost:11434/v1", api_key="sk-very-secret", system="s",
                        temperature=0.0, max_tokens=9)
    assert "secret" not in repr(target)
    assert repr(target) == ("ChatTarget(model='m', base_url='http://localhost:11434/v1', system='s', "
                            "temperature=0.0, max_tokens=9)")
    described = target.describe()
    assert "secret" not in str(described)
    assert described == {"type": "chat", "model": "m", "baseUrl": "http://localhost:11434/v1", "system": "s",
                         "temperature": 0.0, "maxTokens": 9, "prices": None, "options": {}}


def test_api_key_defaults(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert ChatTarget("m")._api_key == "not-needed"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert ChatTarget("m")._api_key == "sk-env"


@pytest.mark.parametrize(("options", "message"), [
    ({"model": ""}, "model must be a non-empty string; got ''"),
    ({"model": "m", "temperature": -1}, "temperature must be a number >= 0 or None; got -1"),
    ({"model": "m", "max_tokens": 0}, "max_tokens must be an integer >= 1 or None; got 0"),
    ({"model": "m", "prices": {"input": 1}}, 'prices must be {"input": usd, "output": usd}, US dollars per '
                                             "million tokens, each a number >= 0; got {'input': 1}"),
])
def test_chat_target_validation(options, message):
    with pytest.raises(InputError) as info:
        ChatTarget(**options)
    assert str(info.value) == message


def test_retry_after_is_honoured(chat_server):
    chat_server.enqueue(error(429, retry_after=0.3), completion("after the wait"))
    started = time.perf_counter()
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), retries=1)
    assert outcome.output == "after the wait"
    assert time.perf_counter() - started >= 0.3
