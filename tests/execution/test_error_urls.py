"""A server that cannot be reached is named in the error: its method and URL, never a key in the URL."""

from __future__ import annotations

import socket

import httpx
import pytest

from cogeval import ChatTarget, EvalSuite, JudgeConfig, correctness
from cogeval.execution.retry import error_text


def _closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]  # closed again: connections are refused


def test_an_unreachable_chat_target_names_its_url():
    port = _closed_port()
    target = ChatTarget("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test")
    result = EvalSuite([{"input": "hi"}], target, progress=False).run()
    assert result.results[0].error == f"APIConnectionError: Connection error. (POST http://127.0.0.1:{port}/v1/chat/completions)"


@pytest.mark.filterwarnings("ignore:run .* has no score on any case:UserWarning")
def test_an_unreachable_judge_names_its_url():
    port = _closed_port()
    judge = JudgeConfig("judge", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", retries=0)
    result = EvalSuite([{"input": "2+2", "expected": "4"}], lambda q: "4", metrics=[correctness()], judge=judge,
                       progress=False).run()
    error = result.results[0].scores["correctness"].error
    assert error == (f"metric 'correctness' judge endpoint http://127.0.0.1:{port}/v1 refused the connection; is the "
                     "model server running? (set base_url= or OPENAI_BASE_URL)")


def test_the_url_shown_leaves_out_the_query_and_the_password():
    request = httpx.Request("POST", "https://user:secret@example.test:8443/v1/chat?api-key=sk-secret")
    error = httpx.ConnectError("refused", request=request)
    assert error_text(error) == "ConnectError: refused (POST https://example.test:8443/v1/chat)"
    assert error_text(httpx.ConnectError("no request")) == "ConnectError: no request"  # .request unset: raises inside
