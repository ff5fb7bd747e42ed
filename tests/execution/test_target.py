"""Targets: calling conventions, return values, multi-turn conversations."""

from __future__ import annotations

import asyncio
import threading

import pytest

from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.execution import ChatTarget, Target, TargetResponse, as_target, converse


def call(target, case):
    return asyncio.run(as_target(target).call(case))


def test_sync_function_with_one_parameter():
    assert call(lambda text: text + "!", Case("hi")).output == "hi!"


def test_sync_function_with_case_parameter_gets_the_case():
    def target(text, case):
        return f"{text}|{case.expected}"

    assert call(target, Case("q", expected="4")).output == "q|4"


def test_async_functions_with_one_or_two_parameters():
    async def one(text):
        return text.upper()

    async def two(text, case):
        return case.metadata["tag"]

    assert call(one, Case("a")).output == "A"
    assert call(two, Case("a", metadata={"tag": "t"})).output == "t"


def test_a_second_parameter_with_a_default_is_not_the_case_unless_named_case():
    def with_option(text, style="plain"):
        return style

    def named(text, case=None):
        return case.input

    assert call(with_option, Case("a")).output == "plain"
    assert call(named, Case("a")).output == "a"


def test_callable_object_and_async_callable_object():
    class Upper:
        def __call__(self, text):
            return text.upper()

    class AsyncUpper:
        async def __call__(self, text, case):
            return text.upper() + case.input

    assert call(Upper(), Case("a")).output == "A"
    assert call(AsyncUpper(), Case("a")).output == "Aa"


def test_sync_function_runs_off_the_event_loop_thread():
    threads = []

    def target(text):
        threads.append(threading.current_thread())
        return text

    call(target, Case("a"))
    assert threads[0] is not threading.main_thread()


def test_target_response_passes_through():
    response = TargetResponse("4", usage={"input_tokens": 3, "output_tokens": 1, "cost_usd": 0.01},
                              tool_calls=[{"name": "calc"}], trace_id="t-1", prompt={"key": "p", "version": 2},
                              duration_s=0.5)  # a sync function's call is timed only when it reports no duration
    assert call(lambda text: response, Case("q")) is response


def test_target_response_normalises_openai_usage_names_and_keeps_others():
    response = TargetResponse("x", usage={"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
    assert response.usage == {"input_tokens": 7, "output_tokens": 2, "cost_usd": None, "total_tokens": 9}


@pytest.mark.parametrize(("usage", "message"), [
    ({"input_tokens": -1}, "TargetResponse.usage['input_tokens'] must be a number >= 0 or None; got -1"),
    ({"cost_usd": "cheap"}, "TargetResponse.usage['cost_usd'] must be a number >= 0 or None; got 'cheap'"),
    ([1, 2], "TargetResponse.usage must be a dict; got [1, 2]"),
    ({"input_tokens": 2**63}, "TargetResponse.usage['input_tokens'] must be a count from 0 to 2**63 - 1 "
                              "(what a run holds); got 9223372036854775808"),
    ({"completion_tokens": float("nan")}, "TargetResponse.usage['output_tokens'] must be a count from 0 to "
                                          "2**63 - 1 (what a run holds); got nan"),
    ({"cost_usd": float("inf")}, "TargetResponse.usage['cost_usd'] must be a finite number or None; got inf"),
    ({"cost_usd": 10**400}, "TargetResponse.usage['cost_usd'] must be a finite number or None; got "
                            "100000000000000000000000000000000000000000000000000000000..."),
])
def test_target_response_refuses_bad_usage(usage, message):
    with pytest.raises(InputError) as info:
        TargetResponse("x", usage=usage)
    assert str(info.value) == message


def test_target_response_duration_is_seconds_as_a_float():
    assert TargetResponse("x").duration_s is None
    assert TargetResponse("x", duration_s=2).duration_s == 2.0 and isinstance(TargetResponse("x", duration_s=2).duration_s, float)
    assert TargetResponse("x", duration_s=0).duration_s == 0.0


@pytest.mark.parametrize(("duration", "shown"), [(-0.5, "-0.5"), (float("nan"), "nan"), (float("inf"), "inf"),
                                                 (True, "True"), ("1", "'1'")])
def test_target_response_refuses_a_bad_duration(duration, shown):
    with pytest.raises(InputError) as info:
        TargetResponse("x", duration_s=duration)
    assert str(info.value) == f"TargetResponse.duration_s must be a finite number of seconds >= 0 or None; got {shown}"


def test_target_response_output_must_be_an_answer():
    with pytest.raises(InputError) as info:
        TargetResponse(None)
    assert str(info.value) == "TargetResponse.output must be a str, or a number, bool, list or dict; got NoneType: None"
    assert TargetResponse(3).output == 3 and TargetResponse((1, 2)).output == [1, 2]  # JSON-safe, as the file holds it


def test_wrong_return_type_is_named():
    with pytest.raises(InputError) as info:
        call(lambda text: object(), Case("q"))
    assert str(info.value) == "target returned object; expected a str, or a number, bool, list or dict, or a TargetResponse"


def test_a_number_answer_joins_a_conversation_as_json_text():
    seen = []

    def target(text, messages):
        seen.append(messages)
        return len(messages)

    response, turns = asyncio.run(converse(as_target(target), Case(turns=["a", "b"])))
    assert [t.output for t in turns] == [1, 3] and response.output == 3
    assert seen[1][1] == {"role": "assistant", "content": "1"}


def test_exceptions_propagate_from_sync_and_async_targets():
    def sync(text):
        raise RuntimeError("boom")

    async def async_(text):
        raise KeyError("k")

    with pytest.raises(RuntimeError, match="boom"):
        call(sync, Case("q"))
    with pytest.raises(KeyError):
        call(async_, Case("q"))


@pytest.mark.parametrize("bad", [42, "gpt-4o", None])
def test_as_target_refuses_non_callables(bad):
    with pytest.raises(InputError) as info:
        as_target(bad)
    assert str(info.value) == f'target must be a callable, a ChatTarget or {{"fn": callable}}; got {bad!r}'


def test_as_target_refuses_a_function_without_parameters():
    def nothing():
        return "x"

    with pytest.raises(InputError, match="must take the input as its first parameter"):
        as_target(nothing)


def test_as_target_returns_targets_unchanged():
    chat = ChatTarget("m")
    assert as_target(chat) is chat
    assert isinstance(as_target(str.upper), Target)


def test_function_describe():
    def my_app(text):
        return text

    assert as_target(my_app).describe() == {"type": "function", "name": "test_function_describe.<locals>.my_app",
                                            "module": __name__}


# multi-turn -------------------------------------------------------------------

def test_function_target_gets_each_turn_and_the_history():
    seen = []

    def bot(text, case, messages):
        seen.append((text, [m["content"] for m in messages]))
        return TargetResponse(f"re:{text}", usage={"input_tokens": 2, "output_tokens": 1}, trace_id=text)

    final, turns = asyncio.run(converse(as_target(bot), Case(turns=["hi", {"role": "user", "content": "bye"}])))
    assert seen == [("hi", ["hi"]), ("bye", ["hi", "re:hi", "bye"])]
    assert final.output == "re:bye"
    assert final.trace_id == "bye"
    assert final.usage == {"input_tokens": 4, "output_tokens": 2, "cost_usd": None}
    assert [(t.turn, t.input, t.output, t.trace_id, t.input_tokens) for t in turns] == [
        (0, "hi", "re:hi", "hi", 2), (1, "bye", "re:bye", "bye", 2)]


def test_scripted_assistant_turns_are_kept_without_a_call():
    calls = []

    def bot(text, messages):
        calls.append([m["role"] for m in messages])
        return "ok"

    case = Case(turns=["a", {"role": "assistant", "content": "prefilled"}, "b"])
    _final, turns = asyncio.run(converse(as_target(bot), case))
    assert calls == [["user", "assistant", "user"]]
    assert [t.input for t in turns] == ["b"]


def test_a_conversation_must_end_with_a_user_turn():
    case = Case(turns=["a", {"role": "assistant", "content": "done"}])
    with pytest.raises(InputError) as info:
        asyncio.run(converse(as_target(str.upper), case))
    assert str(info.value) == "a multi-turn case must end with a user turn (the one the target answers last)"


def test_a_bad_turn_is_named():
    case = Case(turns=["a", {"role": "robot", "content": "x"}])
    with pytest.raises(InputError, match=r"case turns\[1\] must be a string or a dict with 'content'"):
        asyncio.run(converse(as_target(str.upper), case))


def test_turns_take_the_duration_the_target_reports_and_the_conversation_sums_them():
    def bot(text):
        return TargetResponse(text.upper(), duration_s={"a": 1.5, "b": 0.25}[text])

    final, turns = asyncio.run(converse(as_target(bot), Case(turns=["a", "b"])))
    assert [t.duration_s for t in turns] == [1.5, 0.25]
    assert final.duration_s == 1.75


def test_turns_without_a_reported_duration_are_timed_and_leave_the_conversation_to_the_caller():
    async def upper(text):  # async: a sync function's calls are timed in their thread (tests/execution/test_sync_durations.py)
        return text.upper()

    final, turns = asyncio.run(converse(as_target(upper), Case(turns=["a", "b"])))
    assert all(0 <= t.duration_s < 5 for t in turns)
    assert final.duration_s is None


def test_a_turn_that_reports_no_duration_counts_its_wall_clock_in_the_sum():
    def bot(text):
        return TargetResponse(text, duration_s=2.0) if text == "a" else text

    final, turns = asyncio.run(converse(as_target(bot), Case(turns=["a", "b"])))
    assert turns[0].duration_s == 2.0 and 0 <= turns[1].duration_s < 5
    assert final.duration_s == turns[0].duration_s + turns[1].duration_s


def test_a_fn_mapping_is_cogitators_function_target():
    # Cogitator's target { fn: async (input) => ... } is the function itself.
    target = as_target({"fn": lambda text, case: f"{text}|{case.context}"})
    assert asyncio.run(target.call(Case("q", context="doc"))).output == "q|doc"
    with pytest.raises(InputError):
        as_target({"fn": "not callable"})
    with pytest.raises(InputError):
        as_target({"fn": str.upper, "agent": None})
