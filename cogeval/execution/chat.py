"""``ChatTarget``: a model behind the OpenAI-compatible chat-completions protocol.

Works with OpenAI and with any server that speaks the protocol (vLLM, Ollama,
LM Studio, llama.cpp server, ...): give its ``base_url``.

>>> target = ChatTarget("gpt-4o-mini", api_key="sk-secret", temperature=0)
>>> target
ChatTarget(model='gpt-4o-mini', temperature=0)
>>> target.describe()["model"]
'gpt-4o-mini'

``openai`` is imported on first use, not when cogeval is imported: by
:meth:`ChatTarget.prepare`, which the runner awaits before any deadline starts.

The rules for the client and the answer:

- each event loop gets its own client (its pooled connections belong to that
  loop), closed in that loop when the loop shuts down (``asyncio.run`` and
  ``run_sync`` do this), or when the target is collected while the loop runs;
  so no connection is left for the garbage collector to close on a closed loop;
  a pickled copy (a Ray worker's) leaves the clients behind and opens its own;
- a 200 answer that is not a chat completion (not JSON, no ``choices``, no
  ``choices[0].message``, a ``content`` that is not text, bad ``usage``) raises
  :class:`~cogeval.errors.ExecutionError` ``malformed completion from <url>: <what>``;
  the runner and the judges retry it as they retry a 5xx (the request was fine,
  the server failed to answer it; gateways do this on an upstream failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any

import pydantic

from cogeval._check import describe, is_real
from cogeval.errors import ExecutionError, InputError
from cogeval.execution.target import Target, TargetResponse, input_text

if TYPE_CHECKING:
    from cogeval.data import Case

_PLACEHOLDER_API_KEY = "not-needed"
_OPENAI_URL = "https://api.openai.com/v1"


class ChatTarget(Target):
    """A chat model as a target.

    - ``model``: the model name the server knows (``"gpt-4o-mini"``, ``"llama3.1"``...).
    - ``base_url``: the server's ``/v1`` URL; ``None`` means OpenAI (or the
      ``OPENAI_BASE_URL`` environment variable).
    - ``api_key``: defaults to ``OPENAI_API_KEY``, else a placeholder that local
      servers ignore. Never shown by ``repr`` or :meth:`describe`.
    - ``system``: a system prompt put before every conversation.
    - ``temperature``, ``max_tokens``: sent only when given.
    - ``prices``: ``{"input": usd, "output": usd}``, US dollars **per million
      tokens**, to compute ``cost_usd`` from the usage the server reports.
    - ``options``: other request fields sent as given (``seed``, ``top_p``,
      ``response_format``...).
    - ``model_for``: ``fn(case) -> str | None`` choosing the model of one case
      (``None`` keeps ``model``), e.g. ``lambda case: case.metadata.get("model")``.

    A single-turn case sends ``[system?, context?, {"role": "user", "content": input}]``
    (a non-string input is sent as JSON). A case with ``context`` gets it as a
    system message ``"Context:\n<context>"`` right after the system prompt, in
    every call of the case (a list's items one per paragraph, non-strings as
    JSON), as a function target receives ``case.context``. The
    response's ``id`` is the trace id. The client does no retries of its own
    (``max_retries=0``): the runner retries, with backoff, and honours a 429's
    ``Retry-After``.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 system: str | None = None, temperature: float | None = None, max_tokens: int | None = None,
                 prices: Mapping[str, float] | None = None, options: Mapping[str, Any] | None = None,
                 model_for: Callable[[Case], str | None] | None = None) -> None:
        if not isinstance(model, str) or not model:
            raise InputError(f"model must be a non-empty string; got {describe(model)}")
        for name, value in (("base_url", base_url), ("api_key", api_key), ("system", system)):
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name} must be a string or None; got {type(value).__name__}")
        if temperature is not None and (not isinstance(temperature, Real) or isinstance(temperature, bool) or temperature < 0):
            raise InputError(f"temperature must be a number >= 0 or None; got {describe(temperature)}")
        if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
            raise InputError(f"max_tokens must be an integer >= 1 or None; got {describe(max_tokens)}")
        self.model = model
        self.base_url = base_url
        self.system = system
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.prices = _checked_prices(prices)
        self.options = dict(options or {})
        if model_for is not None and not callable(model_for):
            raise InputError(f"model_for must be a function of the case returning a model name or None; got {describe(model_for)}")
        self.model_for = model_for
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or _PLACEHOLDER_API_KEY
        # loop -> (its client, the started async generator that closes the client when the loop shuts down)
        self._clients: dict[asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for another process: a Ray worker) without its clients, which belong to this process's
        event loops: the copy opens its own, one per loop, on first use."""
        return {**self.__dict__, "_clients": {}}

    def __repr__(self) -> str:
        shown = {"base_url": self.base_url, "system": self.system, "temperature": self.temperature,
                 "max_tokens": self.max_tokens, "prices": self.prices}
        fields = "".join(f", {name}={value!r}" for name, value in shown.items() if value is not None)
        return f"ChatTarget(model={self.model!r}{fields})"

    def describe(self) -> dict[str, Any]:
        """The configuration as a JSON-able dict for the run file (camelCase keys, as the format); never the api key,
        and never the system prompt itself: its SHA-256 (``systemSha256``), so comparisons still see it change."""
        system = None if self.system is None else hashlib.sha256(self.system.encode("utf-8", "surrogatepass")).hexdigest()
        return {"type": "chat", "model": self.model, "baseUrl": self.base_url, "systemSha256": system,
                "temperature": self.temperature, "maxTokens": self.max_tokens, "prices": self.prices,
                "options": self.options, **({} if self.model_for is None else {"modelFor": _qualname(self.model_for)})}

    @property
    def server_url(self) -> str:
        """The ``/v1`` URL requests go to: ``base_url``, else ``OPENAI_BASE_URL``, else OpenAI's."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or _OPENAI_URL

    @property
    def missing_openai_key(self) -> bool:
        """True when requests go to OpenAI's own endpoint (no ``base_url``, no ``OPENAI_BASE_URL``) without an API
        key (none given, ``OPENAI_API_KEY`` unset when the target was made): every such call is refused."""
        return self._api_key == _PLACEHOLDER_API_KEY and self.server_url == _OPENAI_URL

    async def prepare(self) -> None:
        """Import ``openai`` and create this event loop's client, outside any call's timeout."""
        await self._client()

    async def _client(self) -> Any:
        # An AsyncOpenAI client's pooled connections belong to the event loop that opened them: one client
        # per loop, closed in that loop (by _close_with_loop), never left to the garbage collector, whose
        # openai finaliser would close it from whatever loop runs then and meet "Event loop is closed".
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            import openai

            client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0)
            closer = _close_with_loop(client, weakref.ref(self), loop)
            self._clients[loop] = entry = (client, closer)
            await closer.asend(None)  # started, so the loop knows it and closes it at shutdown
        return entry[0]

    async def call(self, case: Case, *, messages: list[dict[str, Any]] | None = None,
                   timeout: float | None = None) -> TargetResponse:
        if messages is None:
            messages = [{"role": "user", "content": input_text(case.input)}]
        if case.context is not None:
            messages = [{"role": "system", "content": _context_text(case.context)}, *messages]
        return await self.complete(messages, timeout=timeout, **self._model_of(case))

    def _model_of(self, case: Case) -> dict[str, str]:
        """``{"model": name}`` when ``model_for`` picks another model for ``case``, else ``{}``."""
        if self.model_for is None:
            return {}
        chosen = self.model_for(case)
        if chosen is None:
            return {}
        if not isinstance(chosen, str) or not chosen:
            raise InputError(f"model_for must return a non-empty model name or None; got {describe(chosen)}")
        return {"model": chosen}

    async def complete(self, messages: list[dict[str, Any]], *, timeout: float | None = None, **options: Any) -> TargetResponse:
        """Send ``messages`` (the system prompt is put first) and return the answer.

        ``options`` are extra request fields, over the target's own ``options``.
        """
        if self.system is not None:
            messages = [{"role": "system", "content": self.system}, *messages]
        request: dict[str, Any] = {"model": self.model, "messages": messages, **self.options, **options}
        if self.temperature is not None:
            request.setdefault("temperature", self.temperature)
        if self.max_tokens is not None:
            request.setdefault("max_tokens", self.max_tokens)
        if timeout is not None:
            request["timeout"] = timeout
        client = await self._client()
        try:
            completion = await client.chat.completions.create(**request)
        except json.JSONDecodeError as error:  # a 200 whose body is not JSON
            raise self._malformed(f"the body is not JSON ({error})") from None
        except RecursionError:  # raised by the JSON decoder: a body nested too deeply to read
            raise self._malformed("the body is nested too deeply to read") from None
        return self._response(completion)

    def _malformed(self, what: str) -> ExecutionError:
        return ExecutionError(f"malformed completion from {self.server_url}: {what}")

    def _response(self, completion: Any) -> TargetResponse:
        malformed = self._malformed
        if not _is_object(completion):
            raise malformed(f"the body is not a JSON object: {describe(completion)}")
        choices = _field(completion, "choices")
        if choices is None:
            found = _field(completion, "error")  # a gateway's 200 with an error body
            held = "" if found is None else f"; the body holds an error: {describe(found, 200)}"
            raise malformed(f"choices is missing{held}")
        if not isinstance(choices, list):
            raise malformed(f"choices is not a list: {describe(choices)}")
        if not choices:
            raise malformed("choices is empty")
        if not _is_object(choices[0]):
            raise malformed(f"choices[0] is not an object: {describe(choices[0])}")
        message = _field(choices[0], "message")
        if message is None:
            raise malformed("choices[0].message is missing")
        if not _is_object(message):
            raise malformed(f"choices[0].message is not an object: {describe(message)}")
        content = _field(message, "content")
        if content is not None and not isinstance(content, str):
            raise malformed(f"choices[0].message.content is not a string or null: {describe(content)}")
        calls = _field(message, "tool_calls")
        if calls is not None and (not isinstance(calls, list) or not all(_is_object(c) for c in calls)):
            raise malformed(f"choices[0].message.tool_calls is not a list of objects: {describe(calls)}")
        tool_calls = [_as_dict(call) for call in calls] if calls else None
        usage = _field(completion, "usage")
        if usage is not None and not _is_object(usage):
            raise malformed(f"usage is not an object: {describe(usage)}")
        input_tokens, output_tokens = (_field(usage, name) for name in ("prompt_tokens", "completion_tokens"))
        for name, count in (("prompt_tokens", input_tokens), ("completion_tokens", output_tokens)):
            if count is not None and not (isinstance(count, int) and not isinstance(count, bool) and count >= 0):
                raise malformed(f"usage.{name} is not an integer >= 0: {describe(count)}")
        cost = None
        if self.prices is not None and input_tokens is not None and output_tokens is not None:
            cost = (input_tokens * self.prices["input"] + output_tokens * self.prices["output"]) / 1_000_000
        return TargetResponse(
            content or "",
            usage={"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost},
            tool_calls=tool_calls,
            trace_id=_field(completion, "id"),
        )


def connection_refused(error: BaseException) -> bool:
    """Whether ``error`` (openai's ``APIConnectionError``, httpx's ``ConnectError``...) is a request that no server
    answered because the connection was refused (``ConnectionRefusedError`` among its causes): nothing listens at
    the endpoint's address and port.

    >>> refused = OSError("All connection attempts failed")
    >>> refused.__context__ = ConnectionRefusedError(111, "Connect call failed")
    >>> connection_refused(refused), connection_refused(TimeoutError())
    (True, False)
    """
    if getattr(error, "status_code", None) is not None:  # a server answered
        return False
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, ConnectionRefusedError):
            return True
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return False


async def _close_with_loop(client: Any, target: weakref.ref[ChatTarget],
                           loop: asyncio.AbstractEventLoop) -> AsyncGenerator[None, None]:
    """Started once and never resumed: the event loop closes it, in the loop, at its shutdown
    (``shutdown_asyncgens``), or when the target that keeps it is collected while the loop runs;
    then it closes ``client`` and forgets it."""
    try:
        yield
    finally:
        owner = target()  # weak: the target is not kept alive by its own clients
        if owner is not None:
            owner._clients.pop(loop, None)
        with contextlib.suppress(Exception):  # a connection already gone: nothing left to close
            await client.close()


def _context_text(context: Any) -> str:
    """The system message that carries a case's ``context`` to a chat model.

    >>> _context_text(["Paris is in France.", {"doc": 2}])
    'Context:\\nParis is in France.\\n\\n{"doc": 2}'
    """
    items = context if isinstance(context, (list, tuple)) else [context]
    return "Context:\n" + "\n\n".join(input_text(item) for item in items)


def _qualname(fn: Any) -> str:
    return getattr(fn, "__qualname__", "") or type(fn).__qualname__


def _is_object(value: Any) -> bool:
    """A JSON object as the openai client hands it over: a (lax) pydantic model, or a dict when it kept one."""
    return isinstance(value, (Mapping, pydantic.BaseModel))


def _field(value: Any, name: str) -> Any:
    """A JSON object's field, ``None`` when absent."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(warnings=False)  # a lax model may hold a field of the wrong type: no warning
    return dict(value)


def _checked_prices(prices: Any) -> dict[str, float] | None:
    if prices is None:
        return None
    ok = (isinstance(prices, Mapping) and set(prices) == {"input", "output"}
          and all(is_real(v) and v >= 0 for v in prices.values()))
    if not ok:
        raise InputError(
            'prices must be {"input": usd, "output": usd}, US dollars per million tokens, '
            f"each a number >= 0; got {describe(prices)}"
        )
    return {"input": float(prices["input"]), "output": float(prices["output"])}
