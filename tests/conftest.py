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
