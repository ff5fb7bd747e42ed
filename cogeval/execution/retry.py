"""The retry policy shared by the runner and LLM judges: what to retry, how long to wait.

>>> retryable(TimeoutError()), retryable(InputError("bad input"))
(True, False)
>>> retry_delay(0, 0.0, None)
0.0

Everything is retried except cogeval's input errors and HTTP 4xx answers
other than 408, 409 and 429. The wait before retry ``k`` (from 0) is
``backoff · 2^k`` seconds, at most 30 s, halved at random (jitter), and at
least a 429's ``Retry-After`` (at most 60 s).
"""

from __future__ import annotations

import random

from cogeval.errors import CogevalError, InputError

MAX_BACKOFF_S = 30.0
_MAX_RETRY_AFTER_S = 60.0


def error_text(error: BaseException) -> str:
    """cogeval's own messages as they are; anything else prefixed by its type, and an HTTP request that got no
    answer (a connection error, a timeout) followed by the request
    (``APIConnectionError: Connection error. (POST http://…/v1/chat/completions)``)."""
    if isinstance(error, CogevalError):
        return str(error)
    text = str(error)
    text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    request = None if getattr(error, "status_code", None) is not None else _request(error)  # a server that answered
    return text if request is None or request in text else f"{text} ({request})"


def _request(error: BaseException) -> str | None:
    """``METHOD scheme://host:port/path`` of the HTTP request an error (openai's, httpx's) is about; no query,
    no user name or password (they may hold a key)."""
    try:
        request = getattr(error, "request", None)  # httpx raises RuntimeError when it was never set
        url = getattr(request, "url", None)
        if url is None or not getattr(url, "host", None):
            return None
        port = f":{url.port}" if url.port else ""
        return f"{request.method} {url.scheme}://{url.host}{port}{url.path}"  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - an error message must never fail
        return None


def retryable(error: BaseException) -> bool:
    """False for cogeval's input errors and HTTP 4xx other than 408, 409 and 429; else True."""
    if isinstance(error, InputError):
        return False
    status = getattr(error, "status_code", None)
    return not (isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429))


def retry_after(error: BaseException) -> float | None:
    """The ``Retry-After`` seconds of an HTTP error (capped at 60), or ``None``."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return None if value is None else min(max(float(value), 0.0), _MAX_RETRY_AFTER_S)
    except (TypeError, ValueError):  # an HTTP date or garbage: use the backoff
        return None


def retry_delay(attempt: int, backoff: float, error: BaseException | None) -> float:
    """Seconds to wait after failed attempt ``attempt`` (from 0)."""
    delay = min(backoff * 2 ** attempt, MAX_BACKOFF_S) * random.uniform(0.5, 1.0)
    wait = None if error is None else retry_after(error)
    return delay if wait is None else max(delay, wait)
