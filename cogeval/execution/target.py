"""Targets: what a case is run against, behind one small async interface.

A target is a function ``fn(input)`` or ``fn(input, case)``, sync or async,
returning a ``str`` or a :class:`TargetResponse` (or an answer that is a number, bool,
list or dict: see :data:`ANSWER_RULE`), or a
:class:`~cogeval.execution.chat.ChatTarget`. :func:`as_target` turns any of
them into a :class:`Target`, whose one method is::

    response = await target.call(case, messages=None, timeout=None)

>>> import asyncio
>>> from cogeval.data import Case
>>> target = as_target(lambda text: text.upper())
>>> asyncio.run(target.call(Case("hi"))).output
'HI'

Multi-turn cases (``case.turns``) go through :func:`converse`, which calls the
target once per user turn with the conversation so far (see its docstring).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

from cogeval._check import describe, is_real
from cogeval._text import safe_str
from cogeval.data.jsonable import jsonable
from cogeval.errors import InputError

if TYPE_CHECKING:
    from cogeval.data import Case

_USAGE_ALIASES = {
    "input_tokens": ("input_tokens", "prompt_tokens"),
    "output_tokens": ("output_tokens", "completion_tokens"),
    "cost_usd": ("cost_usd",),
}

ANSWER_RULE = "a str, or a number, bool, list or dict"
"""What a target's answer may be (returned, or as ``TargetResponse.output``). Text is kept as it is; any other
of these is kept as the output, made JSON-safe (:func:`~cogeval.data.jsonable.jsonable`: a tuple becomes a
list, NaN ``None``), and metrics score its ``str()``. Anything else (``None``, an SDK's response object) is
refused: the case's error names the type, so a forgotten ``.text`` never scores as an answer."""

late_cost: contextvars.ContextVar[Callable[[float], None] | None] = contextvars.ContextVar("late_cost", default=None)
"""Set by the runner for one case-trial: called, in the event loop, with the ``cost_usd`` of a sync
function's answer that came after its call stopped waiting (a timeout): the money was spent."""


@dataclasses.dataclass(frozen=True)
class TargetResponse:
    """What a target answered for one case (or one turn).

    - ``output``: the answer: text, or a number, bool, list or dict, kept as the output (JSON-safe;
      metrics score its ``str()``; :data:`ANSWER_RULE`).
    - ``usage``: ``{"input_tokens", "output_tokens", "cost_usd"}``; OpenAI's
      ``prompt_tokens`` / ``completion_tokens`` are accepted and renamed; a
      missing value is ``None``; other keys are kept as given.
    - ``tool_calls``: tool calls the model made, as given (e.g. a list of dicts).
    - ``trace_id``: an id to find the call in a tracing system (a chat
      completion's id for a ``ChatTarget``).
    - ``prompt``: which prompt made the answer, e.g. ``{"key", "version_id",
      "version", "ab_test"}``; kept as given.
    - ``duration_s``: the latency the target measured itself, in seconds
      (>= 0), e.g. server-side timing or a simulation; when given, it replaces
      the wall-clock time of the call as the outcome's (or turn's) ``duration_s``.
      A sync function's call is timed in its own thread, and its response carries
      that time when the function gave none (:func:`as_target`).

    >>> TargetResponse("4", usage={"prompt_tokens": 12, "completion_tokens": 1}).usage
    {'input_tokens': 12, 'output_tokens': 1, 'cost_usd': None}
    >>> TargetResponse("4", duration_s=-1)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: TargetResponse.duration_s must be a finite number of seconds >= 0 or None; got -1
    """

    output: Any
    usage: Mapping[str, Any] | None = None
    tool_calls: Any = None
    trace_id: str | None = None
    prompt: Mapping[str, Any] | None = None
    duration_s: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.output, str):
            if not _is_answer(self.output):
                raise InputError(f"TargetResponse.output must be {ANSWER_RULE}; got {type(self.output).__name__}: "
                                 f"{describe(self.output)}")
            object.__setattr__(self, "output", jsonable(self.output))
        if self.usage is not None:
            object.__setattr__(self, "usage", _normalised_usage(self.usage))
        if self.prompt is not None:
            if not isinstance(self.prompt, Mapping):
                raise InputError(f"TargetResponse.prompt must be a dict; got {describe(self.prompt)}")
            # keys as text, as the run file must hold them (a tuple key becomes its str())
            prompt = {key if isinstance(key, str) else safe_str(key): value for key, value in self.prompt.items()}
            object.__setattr__(self, "prompt", prompt)
        if self.trace_id is not None and not isinstance(self.trace_id, str):
            object.__setattr__(self, "trace_id", str(self.trace_id))
        if self.duration_s is not None:
            value = self.duration_s
            if not isinstance(value, Real) or isinstance(value, bool) or not 0 <= value < math.inf:
                raise InputError(
                    f"TargetResponse.duration_s must be a finite number of seconds >= 0 or None; got {describe(value)}"
                )
            object.__setattr__(self, "duration_s", float(value))

    def get(self, name: str) -> Any:
        """A usage value (``input_tokens``, ``output_tokens``, ``cost_usd``) or ``None``."""
        return None if self.usage is None else self.usage.get(name)


_MAX_TOKENS = 2**63 - 1
"""The largest token count a run holds (``cogeval.data.records.MAX_COUNT``: int64 columns)."""


def _finite(cost: Any) -> float:
    try:
        number = float(cost)
    except OverflowError:  # an int past the float range
        number = math.inf
    if not math.isfinite(number):
        raise InputError(f"TargetResponse.usage['cost_usd'] must be a finite number or None; got {describe(cost)}")
    return number


def _count(name: str, tokens: Any) -> int:
    if not tokens <= _MAX_TOKENS:
        raise InputError(f"TargetResponse.usage[{name!r}] must be a count from 0 to 2**63 - 1 (what a run holds); "
                         f"got {describe(tokens)}")
    return int(tokens)


def _normalised_usage(usage: Any) -> dict[str, Any]:
    if hasattr(usage, "model_dump"):  # e.g. openai's CompletionUsage
        usage = usage.model_dump()
    if not isinstance(usage, Mapping):
        raise InputError(f"TargetResponse.usage must be a dict; got {describe(usage)}")
    aliases = {alias for names in _USAGE_ALIASES.values() for alias in names}
    result: dict[str, Any] = {}
    for name, names in _USAGE_ALIASES.items():
        value = next((usage[n] for n in names if usage.get(n) is not None), None)
        if value is not None and (not is_real(value) or value < 0):
            raise InputError(f"TargetResponse.usage[{name!r}] must be a number >= 0 or None; got {describe(value)}")
        result[name] = None if value is None else _finite(value) if name == "cost_usd" else _count(name, value)
    result.update((k, v) for k, v in usage.items() if k not in aliases)
    return result


@dataclasses.dataclass(frozen=True)
class TurnOutcome:
    """One turn of a multi-turn case: the user message sent and what came back."""

    turn: int
    input: Any
    output: Any
    duration_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    trace_id: str | None = None
    tool_calls: Any = None
    prompt: Mapping[str, Any] | None = None


class Target:
    """Base class of targets: answer one case, or one turn of a conversation.

    ``messages`` (a list of ``{"role", "content"}`` dicts ending with the
    current user message) is given for each turn of a multi-turn case.
    ``timeout`` is the runner's per-attempt timeout in seconds, for targets
    that can pass it on (the runner enforces it anyway).
    """

    async def prepare(self) -> None:
        """Get ready to answer (import libraries, create clients) before any deadline starts.

        The runner awaits it once per run, in the run's event loop, before the
        first attempt's timeout starts, so a cold start never counts against a
        call's timeout. The default does nothing.
        """

    async def call(self, case: Case, *, messages: list[dict[str, Any]] | None = None,
                   timeout: float | None = None) -> TargetResponse:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the target for the run file (never a secret)."""
        return {"type": type(self).__name__}


class _FunctionTarget(Target):
    """A user function as a target; see :func:`as_target` for the calling convention."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        # the bound __call__ itself is wanted (is an instance's __call__ async?), not a callable() check
        call = fn if inspect.isroutine(fn) or isinstance(fn, type) else getattr(fn, "__call__", fn)  # noqa: B004
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        self.pass_case, self.pass_messages = _calling_convention(fn)

    def __repr__(self) -> str:
        return f"_FunctionTarget({_name(self.fn)})"

    def describe(self) -> dict[str, Any]:
        """The function's name and module; for a ``functools.partial`` its function and arguments, for a
        callable object its class and ``repr`` (what tells two differently made targets apart on resume)."""
        fn, described = self.fn, {}
        if isinstance(fn, functools.partial):
            described["arguments"] = describe((fn.args, fn.keywords), 200)
            fn = fn.func
        elif not (inspect.isroutine(fn) or isinstance(fn, type)) and type(fn).__repr__ is not object.__repr__:
            described["repr"] = describe(fn, 200)  # an instance with __call__ and a repr of its own (not an address)
        return {"type": "function", "name": _name(fn), "module": getattr(fn, "__module__", None), **described}

    async def call(self, case: Case, *, messages: list[dict[str, Any]] | None = None,
                   timeout: float | None = None) -> TargetResponse:
        text = case.input if messages is None else messages[-1]["content"]
        args = (text, case) if self.pass_case else (text,)
        kwargs = {}
        if self.pass_messages:
            kwargs["messages"] = messages if messages is not None else [{"role": "user", "content": case.input}]
        took = None
        if self.is_async:
            result = await self.fn(*args, **kwargs)
        else:
            result, took = await _run_in_daemon_thread(self.fn, *args, **kwargs)
        if inspect.isawaitable(result):  # the work is the awaitable's, in the event loop: the caller times it
            result, took = await result, None
        return _as_response(result, took)


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", "") or getattr(type(fn), "__qualname__", repr(fn))


def _calling_convention(fn: Callable[..., Any]) -> tuple[bool, bool]:
    """(pass the case?, pass messages=?) from the signature of ``fn``."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # some builtins have no signature: call fn(input)
        return False, False
    positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    pass_messages = any(p.name == "messages" and p.kind is not inspect.Parameter.POSITIONAL_ONLY for p in parameters)
    positional = [p for p in parameters if p.kind in positional_kinds and p.name != "messages"]
    takes_varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
    if not positional and not takes_varargs:
        raise InputError(f"a target function must take the input as its first parameter; {_name(fn)} takes none")
    second = positional[1] if len(positional) > 1 else None
    pass_case = second is not None and (second.default is inspect.Parameter.empty or second.name == "case")
    return pass_case, pass_messages


def _is_answer(value: Any) -> bool:
    """Whether ``value`` is an answer other than text (:data:`ANSWER_RULE`): a number, bool, list, tuple or mapping."""
    return isinstance(value, (Real, list, tuple, Mapping))


def _as_response(result: Any, took: float | None = None) -> TargetResponse:
    """A target's return value as a :class:`TargetResponse` (a ``str``, number, bool, list or dict becomes its output),
    with ``duration_s=took`` (the call's own timing) unless it reports a duration itself."""
    if isinstance(result, TargetResponse):
        return result if took is None or result.duration_s is not None else dataclasses.replace(result, duration_s=took)
    if isinstance(result, str) or _is_answer(result):
        return TargetResponse(result, duration_s=took)
    raise InputError(f"target returned {type(result).__name__}; expected {ANSWER_RULE}, or a TargetResponse")


def as_target(obj: Any) -> Target:
    """Turn a function or a ``ChatTarget`` into a :class:`Target`.

    A function is called ``fn(input)``, or ``fn(input, case)`` when it has a
    second positional parameter without a default (or one named ``case``). A
    parameter named ``messages`` receives the conversation so far (a list of
    ``{"role", "content"}`` dicts ending with the current user message). Async
    functions are awaited; sync ones run in a thread of their own, so they never
    block the event loop (a daemon thread, so one that hangs past the timeout
    neither blocks the run nor the interpreter's exit). A sync function's call is
    timed in that thread, so its response's ``duration_s`` (unless the function
    reported one) leaves out the time the event loop takes to see the answer. A
    mapping ``{"fn": f}`` (Cogitator's ``{ fn }`` target) is the function ``f``.

    >>> as_target({"fn": str.upper}).fn
    <method 'upper' of 'str' objects>
    >>> as_target(42)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: target must be a callable, a ChatTarget or {"fn": callable}; got 42
    """
    if isinstance(obj, Target):
        return obj
    if isinstance(obj, Mapping) and set(obj) == {"fn"} and callable(obj["fn"]):
        obj = obj["fn"]
    if callable(obj):
        return _FunctionTarget(obj)
    raise InputError(f'target must be a callable, a ChatTarget or {{"fn": callable}}; got {describe(obj)}')


async def _run_in_daemon_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """Run a sync ``fn`` in a new daemon thread and await its result and the seconds its call took there.

    The call is timed in its thread, so time the event loop spends on other work before it takes the
    answer is not counted. Unlike ``asyncio.to_thread`` this neither queues behind the default
    executor's few threads nor makes ``asyncio.run`` wait, at shutdown, for a
    call that hangs: a cancelled await simply stops waiting. An answer that
    comes after that reports its cost to :data:`late_cost` (when set).
    """
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    context = contextvars.copy_context()
    on_late = late_cost.get()

    def settle(result: Any, error: BaseException | None, took: float) -> None:
        if future.done():  # nobody waits any more (a timeout): only a late answer's cost is kept
            cost = result.get("cost_usd") if isinstance(result, TargetResponse) else None
            if on_late is not None and error is None and cost is not None:
                on_late(cost)
            return
        if error is None:
            future.set_result((result, took))
        else:
            future.set_exception(error)

    def work() -> None:
        started = time.perf_counter()
        try:
            result, error = context.run(fn, *args, **kwargs), None
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            result, error = None, exc
        took = time.perf_counter() - started
        try:
            loop.call_soon_threadsafe(settle, result, error, took)
        except RuntimeError:  # the loop closed while the call ran: nobody is waiting
            pass

    threading.Thread(target=work, name=f"cogeval-target-{_name(fn)}", daemon=True).start()
    return await future


def _turn_messages(case: Case) -> list[dict[str, Any]]:
    messages = []
    for index, turn in enumerate(case.turns or ()):
        if isinstance(turn, str):
            messages.append({"role": "user", "content": turn})
        elif isinstance(turn, Mapping) and "content" in turn and turn.get("role", "user") in ("user", "assistant", "system"):
            messages.append({"role": turn.get("role", "user"), "content": turn["content"]})
        else:
            raise InputError(
                f"case turns[{index}] must be a string or a dict with 'content' and a role of "
                f"'user', 'assistant' or 'system'; got {describe(turn)}"
            )
    if not messages or messages[-1]["role"] != "user":
        raise InputError("a multi-turn case must end with a user turn (the one the target answers last)")
    return messages


def _total(values: Sequence[Any]) -> Any:
    return None if any(v is None for v in values) else sum(values)


async def converse(target: Target, case: Case, *, timeout: float | None = None) -> tuple[TargetResponse, tuple[TurnOutcome, ...]]:
    """Run a multi-turn case: one call per user turn, the conversation growing each time.

    Turn *k* is sent as ``[user1, assistant1, ..., user_k]`` (a ``ChatTarget``
    puts its system prompt first); each answer joins the conversation before
    the next user turn. Turns given with role ``assistant`` or ``system`` are
    kept in the conversation as written; a user turn followed by a scripted
    assistant turn is not sent (the script answers it). A function target gets
    the turn's text as its input (and ``messages=`` when it declares that
    parameter). The result is the last answer, with tokens and cost summed over
    the turns (``None`` unless every turn reports them), and one
    :class:`TurnOutcome` per call. A turn's ``duration_s`` is the one its
    response reports (:attr:`TargetResponse.duration_s`; a sync function's call
    timed in its thread), else the wall-clock time of its call; when any turn
    reports one, the result's ``duration_s`` is the sum over the turns (else
    ``None``: the caller times the conversation).
    """
    conversation: list[dict[str, Any]] = []
    responses: list[TargetResponse] = []
    turns: list[TurnOutcome] = []
    messages = _turn_messages(case)
    for position, message in enumerate(messages):
        conversation.append(message)
        following = messages[position + 1]["role"] if position + 1 < len(messages) else None
        if message["role"] != "user" or following == "assistant":
            continue
        started = time.perf_counter()
        response = await target.call(case, messages=list(conversation), timeout=timeout)
        turns.append(TurnOutcome(
            turn=len(turns), input=message["content"], output=response.output,
            duration_s=time.perf_counter() - started if response.duration_s is None else response.duration_s,
            input_tokens=response.get("input_tokens"), output_tokens=response.get("output_tokens"),
            cost_usd=response.get("cost_usd"), trace_id=response.trace_id, tool_calls=response.tool_calls,
            prompt=response.prompt,
        ))
        responses.append(response)
        conversation.append({"role": "assistant", "content": input_text(response.output)})  # a number as JSON text
    last = responses[-1]
    usage = {name: _total([getattr(t, name) for t in turns]) for name in _USAGE_ALIASES}
    reported = any(r.duration_s is not None for r in responses)
    final = TargetResponse(last.output, usage=usage, tool_calls=last.tool_calls, trace_id=last.trace_id, prompt=last.prompt,
                           duration_s=sum(t.duration_s for t in turns) if reported else None)
    return final, tuple(turns)


def input_text(value: Any) -> str:
    """A case input as message text: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
