"""Shared fixtures. ``chat_server``: a scripted chat-completions server (see tests/chat_server.py)."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # so tests can `from chat_server import completion, ...`

from chat_server import ChatServer


@pytest.fixture
def chat_server():
    """A started :class:`chat_server.ChatServer` on 127.0.0.1; ``.url`` for ``base_url``, ``.requests`` for what was sent."""
    with ChatServer() as server:
        yield server


COLD_START_S = 2.5
"""How long ``cold_client`` makes creating an OpenAI client take: a cold ``import openai`` plus client
creation on a loaded machine, longer than the 2 s deadlines the tests that use it set."""


@pytest.fixture
def cold_client(monkeypatch):
    """openai.AsyncOpenAI made slow to create (as on a cold start); logs client creations and deadline starts."""
    import asyncio
    import time

    import openai

    events, real_client, real_timeout = [], openai.AsyncOpenAI, asyncio.timeout

    def slow_client(*args, **kwargs):
        time.sleep(COLD_START_S)
        events.append("client")
        return real_client(*args, **kwargs)

    def logged_timeout(delay):
        events.append("deadline")
        return real_timeout(delay)

    monkeypatch.setattr(openai, "AsyncOpenAI", slow_client)
    monkeypatch.setattr(asyncio, "timeout", logged_timeout)
    return events
