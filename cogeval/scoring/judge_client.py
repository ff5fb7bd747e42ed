"""The judge model and how to ask it: :class:`JudgeConfig` (cache, retries, concurrency) and :class:`JudgeUsage`.

A config is shared by every judge metric of a suite and by the pairwise judge;
:meth:`JudgeConfig.ask` returns the answer text, and what reading it means is
the caller's (:mod:`cogeval.scoring.judge_answer`, :mod:`cogeval.pairwise.judge`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
import time
import weakref
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

from cogeval._check import check_positive_int, check_positive_number, check_retries
from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.execution.chat import ChatTarget, connection_refused
from cogeval.execution.retry import MAX_BACKOFF_S, error_text, retry_delay, retryable
from cogeval.execution.target import TargetResponse
from cogeval.scoring.judge_answer import RESPONSE_FORMAT, JudgeError
from cogeval.scoring.judge_cache import DEFAULT_CACHE_FOLDER, JudgeCache

_DOWN_FOR_S = 5.0
"""Seconds a judge endpoint that refused a connection is taken to be down: its calls in that time fail at once."""


@dataclasses.dataclass
class JudgeUsage:
    """What judging one cell cost: HTTP ``calls`` made (failed attempts too), ``cache_hits``,
    the tokens the server reported and ``cost_usd`` (``None`` without ``prices``)."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def add(self, response: TargetResponse) -> None:
        self.input_tokens += response.get("input_tokens") or 0
        self.output_tokens += response.get("output_tokens") or 0
        if self.cost_usd is not None and response.get("cost_usd") is not None:
            self.cost_usd += response.get("cost_usd")


class JudgeConfig:
    """The judge model and how to ask it.

    - ``model``, ``base_url``, ``api_key``: as for :class:`~cogeval.execution.ChatTarget`
      (``api_key`` defaults to ``OPENAI_API_KEY``; it is never shown or written).
    - ``temperature`` (default 0), ``max_tokens``: sent with every request.
    - ``samples``: ask this many times per cell; the score is the mean and the
      details keep every sample and the spread.
    - ``concurrency``: at most this many judge calls in flight (``None``: no
      limit beyond the suite's).
    - ``cache``: ``True`` keeps answers in ``.cogeval-cache/judge`` under the
      working directory (resolved when the config is made), a path keeps them
      there, ``False`` turns the cache off.
    - ``timeout`` (seconds per call), ``retries`` (extra attempts after a 429,
      5xx, timeout, connection error or malformed completion; 0 to 10),
      ``backoff`` (seconds, doubled per retry, at least the server's ``Retry-After``).
    - An endpoint nobody can reach fails fast, never retried: a refused connection
      (nothing listens there) fails its call at once with ``judge endpoint <url>
      refused the connection; ...``, and every call in the next 5 s fails with the
      same message without trying; OpenAI's endpoint (the default) with no API key
      fails every call before it is made. Cached answers are still read.
    - The HTTP client is the :class:`~cogeval.execution.ChatTarget`'s: one per
      event loop, closed in that loop when the loop shuts down.
    - ``prices``: ``{"input": usd, "output": usd}`` per million tokens, to
      record the judge's cost (``stats.judge_cost_usd``).
    """

    # Declared for mypy, which cannot infer them from ``__init__`` here ("Cannot determine type").
    _chat: ChatTarget
    samples: int
    concurrency: int | None
    timeout: float
    retries: int
    backoff: float
    cache: JudgeCache | None
    _structured: bool
    _down: tuple[str, float] | None  # why the endpoint is down, and until when (time.monotonic())

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, max_tokens: int | None = None, samples: int = 1,
                 concurrency: int | None = None, cache: bool | str | os.PathLike[str] = True,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
                 prices: Mapping[str, float] | None = None) -> None:
        if not isinstance(temperature, Real) or isinstance(temperature, bool) or not 0 <= temperature < math.inf:
            raise InputError(f"temperature must be a number >= 0; got {_short(temperature)}")
        self._chat = ChatTarget(model, base_url=base_url, api_key=api_key, temperature=float(temperature),
                                max_tokens=max_tokens, prices=prices)
        self.samples = check_positive_int("samples", samples)
        self.concurrency = None if concurrency is None else check_positive_int("concurrency", concurrency)
        self.timeout = check_positive_number("timeout", timeout)
        self.retries = check_retries("retries", retries)
        if not isinstance(backoff, Real) or isinstance(backoff, bool) or not 0 <= backoff <= MAX_BACKOFF_S:
            raise InputError(f"backoff must be a number of seconds in [0, {MAX_BACKOFF_S:g}]; got {_short(backoff)}")
        self.backoff = float(backoff)
        self.cache = _as_cache(cache)
        self._structured = True  # until the server rejects response_format
        self._down = None
        self._limits: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()  # one per loop

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for a Ray worker) without its per-loop limits, which hold this process's loops weakly, and
        without what it found of its endpoint (the worker finds out for itself)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("_limits", "_down")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _limits=weakref.WeakKeyDictionary(), _down=None)

    model = property(lambda self: self._chat.model, doc="The judge model's name.")
    base_url = property(lambda self: self._chat.base_url, doc="The server's ``/v1`` URL, or ``None`` for OpenAI.")
    temperature = property(lambda self: self._chat.temperature, doc="Sampling temperature sent with every request.")
    max_tokens = property(lambda self: self._chat.max_tokens, doc="Answer length limit, or ``None``.")
    prices = property(lambda self: self._chat.prices, doc="USD per million tokens, or ``None``.")

    def __repr__(self) -> str:
        extra = "".join(f", {name}={value!r}" for name, value in
                        (("base_url", self.base_url), ("max_tokens", self.max_tokens)) if value is not None)
        return f"JudgeConfig(model={self.model!r}{extra}, temperature={self.temperature!r}, samples={self.samples})"

    def describe(self) -> dict[str, Any]:
        """What shapes the judgements, for the run file's ``config.judge`` (camelCase keys); never the API key."""
        return {"model": self.model, "baseUrl": self.base_url, "temperature": self.temperature,
                "maxTokens": self.max_tokens, "samples": self.samples}

    async def ask(self, messages: list[dict[str, Any]], *, sample: int = 0, usage: JudgeUsage | None = None,
                  usable: Callable[[str], bool] | None = None, response_format: Any = RESPONSE_FORMAT) -> str:
        """The judge's answer to ``messages`` (sample number ``sample``), from the cache when it holds it.

        Asks for structured output first; a server that rejects ``response_format``
        is asked without it (and is not asked with it again by this config,
        though answers it gave with it earlier are still read from the cache).
        Raises :class:`JudgeError` when the call still fails after the retries,
        and at once, unretried, when the endpoint cannot be reached (see the class).
        ``usage``, if given, counts the calls, cache hits, tokens and cost. An
        answer is cached unless ``usable(answer)`` says it is not (no score).
        ``response_format`` is the structured output asked for (the score schema
        by default; the pairwise judge asks for its own).
        """
        usage = JudgeUsage() if usage is None else usage
        answer = await self._ask(messages, sample, response_format, usage, usable, call=self._structured)
        if answer is not None:
            return answer
        return await self._ask(messages, sample, None, usage, usable)  # type: ignore[return-value]

    def cache_key(self, messages: list[dict[str, Any]], sample: int, response_format: Any) -> str:
        """The cache key: everything that changes the answer, never the API key."""
        return JudgeCache.key({
            "model": self.model, "base_url": self._chat.server_url, "messages": messages, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "response_format": response_format, "sample": sample,
        })

    async def _ask(self, messages: list[dict[str, Any]], sample: int, response_format: Any,
                   usage: JudgeUsage, usable: Callable[[str], bool] | None, call: bool = True) -> str | None:
        """The answer (cached, or asked when ``call``), or ``None`` when the server rejects ``response_format``."""
        key = self.cache_key(messages, sample, response_format)
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is not None and isinstance(entry.get("content"), str):
            usage.cache_hits += 1
            return entry["content"]
        if not call or (entry is not None and entry.get("rejected") == "response_format"):
            self._structured = False
            return None
        options = {} if response_format is None else {"response_format": response_format}
        self._check_reachable()
        await self._chat.prepare()  # import openai and create the client before the deadline starts

        for attempt in range(self.retries + 1):
            if attempt:
                self._check_reachable()  # another call found the endpoint down while this one waited to retry
            deadline = asyncio.timeout(self.timeout)
            try:
                async with self._limit():
                    usage.calls += 1
                    async with deadline:
                        response = await self._chat.complete(messages, **options)
            except Exception as error:  # noqa: BLE001 - retried, then reported on the cell
                if options and _rejects_response_format(error):
                    self._store(key, {"rejected": "response_format"})
                    self._structured = False
                    return None
                if not deadline.expired() and connection_refused(error):
                    raise JudgeError(self._refused()) from None
                text = f"timed out after {self.timeout:g} s" if deadline.expired() else error_text(error)
                if attempt == self.retries or not retryable(error):
                    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                    raise JudgeError(f"judge call failed after {tries}: {text}") from None
                await asyncio.sleep(retry_delay(attempt, self.backoff, error))
                continue
            self._down = None
            usage.add(response)
            if usable is None or usable(response.output):
                self._store(key, {"content": response.output})
            return response.output
        raise AssertionError("unreachable")

    def _check_reachable(self) -> None:
        """Raise :class:`JudgeError` when no call can succeed now: OpenAI's endpoint without an API key, or an
        endpoint that refused a connection less than :data:`_DOWN_FOR_S` seconds ago."""
        if self._chat.missing_openai_key:
            raise JudgeError(f"judge endpoint {self._chat.server_url} is OpenAI's (the default) and no API key is set: "
                             "set OPENAI_API_KEY (or api_key=), or point base_url= (or OPENAI_BASE_URL) at your "
                             "model server")
        down = self._down
        if down is not None and time.monotonic() < down[1]:
            raise JudgeError(down[0])

    def _refused(self) -> str:
        """The message of a refused connection; the endpoint is taken to be down for :data:`_DOWN_FOR_S` seconds."""
        message = (f"judge endpoint {self._chat.server_url} refused the connection; is the model server running? "
                   "(set base_url= or OPENAI_BASE_URL)")
        self._down = (message, time.monotonic() + _DOWN_FOR_S)
        return message

    def _store(self, key: str, entry: dict[str, Any]) -> None:
        if self.cache is not None:
            self.cache.put(key, entry)

    def _limit(self) -> Any:
        if self.concurrency is None:
            return contextlib.nullcontext()
        loop = asyncio.get_running_loop()
        limit = self._limits.get(loop)
        if limit is None:
            limit = self._limits[loop] = asyncio.Semaphore(self.concurrency)
        return limit


def _as_cache(cache: Any) -> JudgeCache | None:
    if cache is True:
        return JudgeCache(DEFAULT_CACHE_FOLDER.resolve())
    if cache is False or cache is None:
        return None
    if isinstance(cache, (str, os.PathLike)) and str(cache):
        return JudgeCache(cache)
    raise InputError(f"cache must be True, False or a folder path; got {_short(cache)}")


def _rejects_response_format(error: BaseException) -> bool:
    status = getattr(error, "status_code", None)
    text = str(error).lower()
    return status in (400, 422) and ("response_format" in text or "json_schema" in text)
