"""A pairwise judge nobody can reach fails fast and loud (issue 34): every verdict missing warns, naming the judge
and the first error, and the win rate says FAILED instead of a normal-looking NaN."""

from __future__ import annotations

import asyncio
import socket
import time
import warnings

import pytest

from cogeval import Case, JudgeConfig, arun_pairwise, evaluate_pairwise, pairwise_judge, run_pairwise
from cogeval.pairwise import PairTask, PairwiseResult, Verdict
from cogeval.pairwise.verdict import NOT_LABELLED_YET

CASES = [{"input": f"q{i}"} for i in range(20)]


def closed_port() -> int:
    """A port nothing listens on: bound, then closed again, so connections to it are refused."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def test_a_refusing_pairwise_judge_fails_every_pair_within_seconds_and_says_failed():
    port = closed_port()
    judge = JudgeConfig("judge", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", cache=False,
                        retries=3, backoff=1.0, samples=3)
    import openai  # noqa: F401 - imported on first use; on a loaded machine that alone may take seconds

    started = time.perf_counter()
    with pytest.warns(UserWarning) as caught:
        result = run_pairwise(CASES, lambda q: "A", lambda q: "B", [pairwise_judge(judge, "Better?", "quality")])
    assert time.perf_counter() - started < 10  # 0.1 s measured here
    message = (f"judge endpoint http://127.0.0.1:{port}/v1 refused the connection; is the model server running? "
               "(set base_url= or OPENAI_BASE_URL)")
    assert {v.error for v in result.verdicts["quality"]} == {f"order A/B: {message}"}
    reason = (f"no pair was decided by 'quality' (20 of 20 tasks without a verdict: 20 judge errors, first: "
              f"order A/B: {message})")
    assert [str(w.message) for w in caught] == [
        f"pairwise result {result.id}: {reason}; its win rate is undefined (FAILED)"]
    assert caught[0].filename == __file__
    win = result.win_rate("quality")
    assert (win.n, win.missing, win.failure) == (0, 20, reason)
    assert repr(win) == (f"WinRate(FAILED: {reason}, rate=nan, ci=None, wins=0, losses=0, ties=0, n=0, p_value=1.0, "
                         "missing=20)")
    assert "<caption>WinRate FAILED: no pair was decided by &#x27;quality&#x27;" in win._repr_html_()
    assert "failure" not in win.to_frame().columns and "failure" not in result.summary().columns
    assert repr(result).splitlines()[1] == f"  FAILED: {reason}"


def test_the_async_form_and_evaluate_pairwise_warn_too():
    port = closed_port()
    judge = pairwise_judge(JudgeConfig("j", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", cache=False), "B?",
                           "j", swap=False)

    async def notebook_cell():
        return await arun_pairwise(CASES[:2], lambda q: "A", lambda q: "B", [judge])

    with pytest.warns(UserWarning, match="no pair was decided by 'j'") as caught:
        result = asyncio.run(notebook_cell())
    assert [w.filename for w in caught] == [__file__] and result.win_rate().failure is not None
    with pytest.warns(UserWarning, match="no pair was decided by 'j'"):
        again = evaluate_pairwise([{"input": "2+2", "output": "4"}], [{"input": "2+2", "output": "four"}], None,
                                  [judge])
    assert again.win_rate().failure is not None


def pending() -> PairwiseResult:
    tasks = [PairTask(f"t{i}", f"k{i}", Case(f"q{i}"), "A", "B") for i in range(3)]
    return PairwiseResult("20260101T000000000Z-0000abcd", "2026-01-01T00:00:00.000Z", ("a", "b"), tasks,
                          {"people": [Verdict(None, error=NOT_LABELLED_YET, details={"first": "a"})] * 3},
                          {"people": {"kind": "human", "seed": 0}})


def test_labels_still_to_give_are_no_failure():
    result = pending()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result._warn_failures()
    win = result.win_rate("people")
    assert (win.n, win.missing, win.failure) == (0, 3, None)
    assert repr(win) == "WinRate(rate=nan, ci=None, wins=0, losses=0, ties=0, n=0, p_value=1.0, missing=3)"
    assert "FAILED" not in repr(result) and "FAILED" not in result._repr_html_()
    assert result.with_labels("people", {"t0": "2"}).win_rate("people").failure is None
