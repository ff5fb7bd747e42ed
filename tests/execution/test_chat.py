"""ChatTarget against a real local HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import time

import pytest
from chat_server import ChatServer, completion, error, malformed

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
    assert cold_client == ["client"]  # made once, by prepare(); the attempt's deadline is asyncio.wait's, not logged


def test_slow_server_times_out(chat_server):
    chat_server.enqueue(completion("late", delay=1.0))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), timeout=0.2)
    assert (outcome.output, outcome.error) == ("", "Timed out after 0.2 s")


def choice(**fields):
    return {"id": "x", "choices": [{"index": 0, "finish_reason": "stop", **fields}]}


@pytest.mark.parametrize(("body", "what"), [
    (b"this is not json", "the body is not JSON (Expecting value: line 1 column 1 (char 0))"),
    (b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "the body is nested too deeply to read"),
    ([1, 2], "the body is not a JSON object: [1, 2]"),
    ({"id": "x"}, "choices is missing"),
    ({"id": "x", "choices": None}, "choices is missing"),
    ({"error": {"message": "upstream timed out"}}, "choices is missing; the body holds an error: "
                                                   "{'message': 'upstream timed out'}"),
    ({"id": "x", "choices": "abc"}, "choices is not a list: 'abc'"),
    ({"id": "x", "choices": []}, "choices is empty"),
    ({"id": "x", "choices": [None]}, "choices[0] is not an object: None"),
    (choice(), "choices[0].message is missing"),
    (choice(message=None), "choices[0].message is missing"),
    (choice(message="hello"), "choices[0].message is not an object: 'hello'"),
    (choice(message={"role": "assistant", "content": 5}), "choices[0].message.content is not a string or null: 5"),
    (choice(message={"content": [{"type": "text"}]}),
     "choices[0].message.content is not a string or null: [{'type': 'text'}]"),
    (choice(message={"content": "hi", "tool_calls": "calc"}),
     "choices[0].message.tool_calls is not a list of objects: 'calc'"),
    ({**choice(message={"content": "hi"}), "usage": "many"}, "usage is not an object: 'many'"),
    ({**choice(message={"content": "hi"}), "usage": {"prompt_tokens": "12", "completion_tokens": 1}},
     "usage.prompt_tokens is not an integer >= 0: '12'"),
])
def test_malformed_completions_are_named_errors(chat_server, body, what):
    chat_server.enqueue(malformed(body))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url))
    assert (outcome.output, outcome.attempts) == ("", 1)
    assert outcome.error == f"malformed completion from {chat_server.url}: {what}"


def test_a_malformed_completion_is_retried(chat_server):
    # The request was fine and the server failed to answer it (gateways send a 200 with an error body when an
    # upstream fails): retried like a 5xx, within the retries asked for.
    chat_server.enqueue(malformed(choice()), completion("second time lucky"))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url), retries=1)
    assert (outcome.output, outcome.error, outcome.attempts) == ("second time lucky", None, 2)


def test_a_null_content_is_an_empty_answer(chat_server):
    chat_server.enqueue(malformed(choice(message={"role": "assistant", "content": None})))
    [outcome] = run([Case("q")], ChatTarget("m", base_url=chat_server.url))
    assert (outcome.output, outcome.error) == ("", None)


def test_the_server_url_named_in_errors_defaults_to_the_environment_then_openai(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert ChatTarget("m").server_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway:4000/v1")
    assert ChatTarget("m").server_url == "http://gateway:4000/v1"
    assert ChatTarget("m", base_url="http://localhost:11434/v1").server_url == "http://localhost:11434/v1"


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


def test_each_loops_client_is_closed_when_the_loop_shuts_down():
    with ChatServer(keep_alive=True) as server:
        target = ChatTarget("m", base_url=server.url)

        async def ask(text):
            client = await target._client()
            assert await target._client() is client  # one client for the loop
            return client, (await target.complete([{"role": "user", "content": text}])).output

        first, answer = asyncio.run(ask("a"))
        assert answer == "echo: a" and first.is_closed() and target._clients == {}
        second, answer = asyncio.run(ask("b"))
        assert answer == "echo: b" and second is not first and second.is_closed() and target._clients == {}


# A fresh target's client, collected while a later loop runs, used to be closed by openai's finaliser in that
# loop, on connections of the closed loop: "Task exception was never retrieved ... Event loop is closed".
STRAY_TRACEBACKS = r'''
import asyncio, gc, sys
from cogeval import EvalSuite, JudgeConfig
from cogeval.execution import ChatTarget

url = sys.argv[1]


async def ask(target, text):
    return (await target.complete([{"role": "user", "content": text}])).output

same = ChatTarget("m", base_url=url)  # one target, two asyncio.run calls
print(asyncio.run(ask(same, "one")), asyncio.run(ask(same, "two")))

fresh = [ChatTarget("m", base_url=url)]
print(asyncio.run(ask(fresh[0], "three")))


async def collect_the_first_then_ask():
    fresh.clear()  # the first loop's target and client are collected while this loop runs
    gc.collect()
    await asyncio.sleep(0)
    return await ask(ChatTarget("m", base_url=url), "four")

print(asyncio.run(collect_the_first_then_ask()))

for text in ("five", "six"):  # suite.run() twice in a plain script, a fresh target each time
    result = EvalSuite([{"input": text}], ChatTarget("m", base_url=url), progress=False).run()
    print(result.to_frame()["output"].tolist()[0])
    gc.collect()

judge = JudgeConfig("judge", base_url=url, api_key="k", cache=False)
print(asyncio.run(judge.ask([{"role": "user", "content": "seven"}])))
judges = [judge]
del judge


async def collect_the_judge_then_ask():
    judges.clear()
    gc.collect()
    await asyncio.sleep(0)
    return await JudgeConfig("judge", base_url=url, api_key="k", cache=False).ask([{"role": "user", "content": "8"}])

print(asyncio.run(collect_the_judge_then_ask()))
'''


def test_no_event_loop_is_closed_traceback_in_a_script():
    with ChatServer(keep_alive=True) as server:
        done = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", STRAY_TRACEBACKS, server.url],
                              capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["echo: one echo: two", "echo: three", "echo: four", "echo: five",
                                        "echo: six", "echo: seven", "echo: 8"], done.stderr
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr  # every client was closed, none left to the collector


def test_repr_and_describe_hide_the_api_key():
    target = ChatTarget("m", base_url="http://localhost:11434/v1", api_key="sk-very-secret", system="s",
                        temperature=0.0, max_tokens=9)
    assert "secret" not in repr(target)
    assert repr(target) == ("ChatTarget(model='m', base_url='http://localhost:11434/v1', system='s', "
                            "temperature=0.0, max_tokens=9)")
    described = target.describe()
    assert "secret" not in str(described)
    assert described == {"type": "chat", "model": "m", "baseUrl": "http://localhost:11434/v1",
                         "systemSha256": hashlib.sha256(b"s").hexdigest(),  # never the instructions themselves
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
