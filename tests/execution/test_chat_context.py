"""ChatTarget sends the case's context (as an agent target receives it) and can choose a model per case."""

from __future__ import annotations

import pytest

from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.execution import ChatTarget, run_cases, run_sync


def run(cases, target):
    return run_sync(run_cases(cases, target, timeout=5.0, backoff=0.0, concurrency=1))  # requests in case order


def test_the_context_is_a_system_message_after_the_system_prompt(chat_server):
    # Cogitator's agent target receives the case context; a ChatTarget sends it as "Context:\n<items>".
    target = ChatTarget("m", base_url=chat_server.url, system="Be brief.")
    run([Case("Capital?", context=["Paris is in France.", {"doc": 2}])], target)
    [body] = chat_server.requests
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": 'Context:\nParis is in France.\n\n{"doc": 2}'},
        {"role": "user", "content": "Capital?"},
    ]


def test_a_text_context_goes_in_every_turn_and_no_context_changes_nothing(chat_server):
    target = ChatTarget("m", base_url=chat_server.url)
    run([Case(turns=["hi", "again"], context="doc"), Case("plain")], target)
    first, second, plain = chat_server.requests
    assert first["messages"] == [{"role": "system", "content": "Context:\ndoc"}, {"role": "user", "content": "hi"}]
    assert second["messages"][0] == {"role": "system", "content": "Context:\ndoc"}
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert plain["messages"] == [{"role": "user", "content": "plain"}]


def test_model_for_chooses_the_model_of_each_case(chat_server):
    target = ChatTarget("default-model", base_url=chat_server.url, model_for=lambda case: case.metadata.get("model"))
    run([Case("a", metadata={"model": "big-model"}), Case("b", metadata={})], target)
    assert [body["model"] for body in chat_server.requests] == ["big-model", "default-model"]
    assert target.describe()["modelFor"] == "test_model_for_chooses_the_model_of_each_case.<locals>.<lambda>"
    assert "modelFor" not in ChatTarget("m").describe()


def test_model_for_must_be_a_function_returning_a_name(chat_server):
    with pytest.raises(InputError) as error:
        ChatTarget("m", model_for="big-model")
    assert str(error.value) == "model_for must be a function of the case returning a model name or None; got 'big-model'"
    [outcome] = run([Case("a")], ChatTarget("m", base_url=chat_server.url, model_for=lambda case: 3))
    assert outcome.error == "model_for must return a non-empty model name or None; got 3"
    assert chat_server.requests == []
