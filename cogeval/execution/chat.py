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
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any

from cogeval._check import describe, is_real
from cogeval.errors import ExecutionError, InputError
from cogeval.execution.target import Target, TargetResponse, input_text

if TYPE_CHECKING:
    from cogeval.data import Case

_PLACEHOLDER_API_KEY = "not-needed"


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

    A single-turn case sends ``[system?, {"role": "user", "content": input}]``
    (a non-string input is sent as JSON); ``case.context`` is not sent. The
    response's ``id`` is the trace id. The client does no retries of its own
    (``max_retries=0``): the runner retries, with backoff, and honours a 429's
    ``Retry-After``.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 system: str | None = None, temperature: float | None = None, max_tokens: int | None = None,
                 prices: Mapping[str, float] | None = None, options: Mapping[str, Any] | None = None) -> None:
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
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or _PLACEHOLDER_API_KEY
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        shown = {"base_url": self.base_url, "system": self.system, "temperature": self.temperature,
                 "max_tokens": self.max_tokens, "prices": self.prices}
        fields = "".join(f", {name}={value!r}" for name, value in shown.items() if value is not None)
        return f"ChatTarget(model={self.model!r}{fields})"

    def describe(self) -> dict[str, Any]:
        """The configuration as a JSON-able dict for the run file (camelCase keys, as the format); never the api key."""
        return {"type": "chat", "model": self.model, "baseUrl": self.base_url, "system": self.system,
                "temperature": self.temperature, "maxTokens": self.max_tokens, "prices": self.prices,
                "options": self.options}

    async def prepare(self) -> None:
        """Import ``openai`` and create this event loop's client, outside any call's timeout."""
        self._client()

    def _client(self) -> Any:
        # An AsyncOpenAI client (its connection pool) belongs to the event loop it
        # first runs in, so keep one per loop.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import openai

            client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0)
            self._clients[loop] = client
        return client

    async def call(self, case: Case, *, messages: list[dict[str, Any]] | None = None,
                   timeout: float | None = None) -> TargetResponse:
        if messages is None:
            messages = [{"role": "user", "content": input_text(case.input)}]
        return await self.complete(messages, timeout=timeout)

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
        completion = await self._client().chat.completions.create(**request)
        return self._response(completion)

    def _response(self, completion: Any) -> TargetResponse:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ExecutionError(
                f"malformed chat completion from {self.model!r}: the response has no choices "
                f"(id {getattr(completion, 'id', None)!r})"
            )
        message = choices[0].message
        tool_calls = [call.model_dump() for call in message.tool_calls] if getattr(message, "tool_calls", None) else None
        usage = getattr(completion, "usage", None)
        input_tokens = getattr(usage, "prompt_tokens", None)
        output_tokens = getattr(usage, "completion_tokens", None)
        cost = None
        if self.prices is not None and input_tokens is not None and output_tokens is not None:
            cost = (input_tokens * self.prices["input"] + output_tokens * self.prices["output"]) / 1_000_000
        return TargetResponse(
            message.content or "",
            usage={"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost},
            tool_calls=tool_calls,
            trace_id=getattr(completion, "id", None),
        )


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
