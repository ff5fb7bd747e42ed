"""A real, scripted HTTP server speaking OpenAI's chat-completions protocol, for tests.

It listens on 127.0.0.1 (an ephemeral port) in a background thread and answers
``POST .../chat/completions`` from a script: each request takes the next
:class:`Reply` queued with :meth:`ChatServer.enqueue`; once the queue is empty,
``ChatServer.responder(body)`` answers (by default it echoes the last user
message). Every request is recorded, so a test can check exactly what was sent.

Use the ``chat_server`` fixture (tests/conftest.py), or the class directly::

    with ChatServer() as server:
        server.enqueue(error(429, retry_after=0), completion("4", id="cmpl-1"))
        target = ChatTarget("m", base_url=server.url)
        ...
        server.requests[0]["messages"]      # the JSON bodies received, in order

Replies: :func:`completion` (200 with id, usage and optional tool calls),
:func:`error` (any status, optional ``Retry-After``), :func:`malformed` (a body
that is not a completion), and ``delay=`` on any of them for a slow answer.

``port=`` fixes the port (default: any free one).

The server speaks HTTP/1.0 (a connection per request) unless ``ChatServer(keep_alive=True)``:
then HTTP/1.1, and clients keep idle connections in their pools, as with real servers.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "RecordedRequest", "Reply", "completion", "echo", "error", "malformed"]

_ids = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer: ``status``, a JSON-able or bytes ``body``, ``headers``, after ``delay`` seconds."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    delay: float = 0.0


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """A request the server received: its path, headers (lower-case names) and JSON body (``None`` if not JSON)."""

    path: str
    headers: dict[str, str]
    body: Any


def completion(content: str | None = "ok", *, id: str | None = None, model: str = "test-model",
               prompt_tokens: int | None = 10, completion_tokens: int | None = 5,
               tool_calls: list[dict[str, Any]] | None = None, finish_reason: str = "stop",
               delay: float = 0.0) -> Reply:
    """A 200 chat completion; ``prompt_tokens=None`` leaves ``usage`` out."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": id or f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if prompt_tokens is not None:
        done = completion_tokens or 0
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": done, "total_tokens": prompt_tokens + done}
    return Reply(200, body, delay=delay)


def error(status: int, message: str = "scripted error", *, retry_after: float | None = None, delay: float = 0.0) -> Reply:
    """An error answer in OpenAI's shape, e.g. ``error(429, retry_after=0)`` or ``error(500)``."""
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    body = {"error": {"message": message, "type": "scripted", "code": status}}
    return Reply(status, body, headers, delay)


def malformed(body: bytes | Any = b"this is not json", *, status: int = 200, delay: float = 0.0) -> Reply:
    """A body that is not a valid chat completion (bytes sent as is, anything else as JSON)."""
    return Reply(status, body, delay=delay)


def echo(body: dict[str, Any]) -> Reply:
    """The default responder: answers ``"echo: <last user message>"``."""
    users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
    return completion(f"echo: {users[-1] if users else ''}")


class ChatServer:
    """The server; ``url`` is the base URL to give ``ChatTarget(base_url=...)`` (ends in ``/v1``)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] = echo, *, keep_alive: bool = False,
                 port: int = 0) -> None:
        self.responder = responder
        self.calls: list[RecordedRequest] = []
        self._script: list[Reply | Callable[[dict[str, Any]], Reply]] = []
        self._lock = threading.Lock()
        handler = _handler(self)
        if keep_alive:  # HTTP/1.1: a connection stays open between requests, in the client's pool, as real servers do
            handler.protocol_version = "HTTP/1.1"
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = not keep_alive  # an idle kept-alive connection must not hold up close()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies received, in arrival order."""
        return [call.body for call in self.calls]

    def enqueue(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        """Queue replies (or callables ``body -> Reply``) for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> ChatServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="chat-server", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_reply(self, body: Any) -> Reply:
        with self._lock:
            scripted = self._script.pop(0) if self._script else self.responder
        return scripted(body) if callable(scripted) else scripted


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            with server._lock:
                server.calls.append(RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                reply = error(404, f"no route {self.path}")
            else:
                reply = server._next_reply(body)
            time.sleep(reply.delay)
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


JUDGE_KEY = "sk-judge-secret-123"
"""The API key test judges send; tests check it never reaches a run file or the cache."""


def make_judge(server: ChatServer, tmp_path: Any, model: str = "judge-model", **options: Any) -> Any:
    """A JudgeConfig pointed at ``server``, caching under ``tmp_path``, with tiny timeouts and no backoff."""
    from cogeval import JudgeConfig

    options = {"base_url": server.url, "api_key": JUDGE_KEY, "cache": tmp_path / "cache", "timeout": 2.0,
               "retries": 0, "backoff": 0.0, **options}
    return JudgeConfig(model, **options)
