"""Metric, Score and the metric() decorator: normalisation of results, errors as NaN, description."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.scoring import Metric, Score, metric

CASE = Case("What is 2+2?", expected="4")


def make(result):
    return metric("m")(lambda output, case: result)


@pytest.mark.parametrize(
    ("returned", "value", "details"),
    [
        (0.25, 0.25, None),
        (3, 3.0, None),
        (True, 1.0, None),
        (False, 0.0, None),
        (np.float32(0.5), 0.5, None),
        (np.bool_(True), 1.0, None),
        ((0.5, {"reason": "half"}), 0.5, {"reason": "half"}),
        ((0.5, None), 0.5, None),
        ({"score": 0.75, "reason": "ok"}, 0.75, {"reason": "ok"}),
        ({"score": 1}, 1.0, None),
        (Score(0.1, {"a": 1}), 0.1, {"a": 1}),
    ],
)
def test_accepted_results_are_normalised(returned, value, details):
    score = make(returned).score("out", CASE)
    assert score == Score(value, details, None)
    assert isinstance(score.value, float)


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ("0.5", "metric 'm' returned str '0.5'; expected a number, a (number, details) tuple, a mapping with 'score', or a Score"),
        (None, "metric 'm' returned NoneType None; expected a number, a (number, details) tuple, a mapping with 'score', or a Score"),
        (float("nan"), "metric 'm' returned nan; a score must be a finite number"),
        (float("inf"), "metric 'm' returned inf; a score must be a finite number"),
        ((1, 2, 3), "metric 'm' returned a tuple of 3 items; expected (score, details)"),
        ({"value": 1}, "metric 'm' returned a mapping without a 'score' key: {'value': 1}"),
        ((0.5, "why"), "metric 'm' returned details of type str; expected a mapping or None"),
        (Score(math.nan, None, "judge timed out"), "judge timed out"),
    ],
)
def test_bad_results_are_nan_with_an_error_never_zero(returned, error):
    score = make(returned).score("out", CASE)
    assert math.isnan(score.value)
    assert score.error == error
    assert not score.ok


def test_an_exception_becomes_an_error_score():
    @metric("ratio")
    def ratio(output, case):
        return 1 / 0

    score = ratio.score("x", CASE)
    assert math.isnan(score.value)
    assert score.error == "metric 'ratio' raised ZeroDivisionError: division by zero"


def test_the_function_receives_output_and_case():
    seen = []
    m = metric("spy")(lambda output, case: seen.append((output, case)) or 1)
    assert m("answer", CASE).value == 1.0  # calling the metric scores
    assert seen == [("answer", CASE)]


def test_describe_and_repr_record_how_it_was_made():
    m = metric("length_ok", higher_is_better=False, max_chars=200, unit="chars")(lambda o, c: 1)
    assert m.describe() == {
        "name": "length_ok",
        "higher_is_better": False,
        "params": {"max_chars": 200, "unit": "chars"},
        "kind": "case",
    }
    assert repr(m) == "Metric('length_ok', max_chars=200, unit='chars', higher_is_better=False)"
    assert m.requires_judge is False
    m.describe()["params"]["max_chars"] = 1
    assert m.params == {"max_chars": 200, "unit": "chars"}


def test_renamed_keeps_function_and_params():
    m = metric("a", k=1)(lambda o, c: 0.5)
    other = m.renamed("b")
    assert (other.name, other.params, other.score("", CASE).value) == ("b", {"k": 1}, 0.5)
    assert m.name == "a"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "metric name must be a non-empty string; got ''"),
        (3, "metric name must be a non-empty string; got 3"),
        (" q", "metric name must not start or end with whitespace; got ' q'"),
        (
            "latency.p95",
            "metric name must not contain '.' (names start assertion paths such as 'latency.p95'); "
            "got 'latency.p95', try 'latency_p95'",
        ),
    ],
)
def test_bad_names_are_refused(name, message):
    with pytest.raises(InputError) as info:
        metric(name)
    assert str(info.value) == message


def test_bare_decorator_gets_a_hint():
    with pytest.raises(InputError, match=r'use @metric\("name"\), not bare @metric'):

        @metric
        def quality(output, case):
            return 1


def test_other_construction_errors():
    with pytest.raises(InputError, match="higher_is_better must be True or False; got 'yes'"):
        metric("q", higher_is_better="yes")
    with pytest.raises(InputError, match=r"parameter model=<object.*cannot be written to a run file"):
        metric("q", model=object())
    with pytest.raises(InputError, match="fn must be a callable fn\\(output, case\\); got 3"):
        metric("q")(3)


def test_unicode_and_spaces_inside_names_are_allowed():
    assert metric("réponse correcte")(lambda o, c: 1).name == "réponse correcte"


async def _async_score(output, case):
    await asyncio.sleep(0)
    return {"score": len(output) / 10, "reason": "async"}


def test_async_function_with_ascore():
    m = metric("async_len")(_async_score)
    assert asyncio.run(m.ascore("hello", CASE)) == Score(0.5, {"reason": "async"})


def test_async_function_with_score_outside_a_loop():
    assert metric("async_len")(_async_score).score("hello", CASE).value == 0.5


def test_async_function_with_score_inside_a_running_loop():
    m = metric("async_len")(_async_score)

    async def main():
        return m.score("hello", CASE)  # e.g. in Jupyter: runs in a helper thread

    assert asyncio.run(main()).value == 0.5


def test_async_failures_are_error_scores():
    async def boom(output, case):
        raise RuntimeError("judge down")

    m = metric("judge")(boom)
    expected = "metric 'judge' raised RuntimeError: judge down"
    assert asyncio.run(m.ascore("x", CASE)).error == expected
    assert m.score("x", CASE).error == expected


def test_ascore_of_a_sync_metric():
    assert asyncio.run(make(0.3).ascore("x", CASE)).value == 0.3


def test_subclass_overriding_async_compute():
    class FakeJudge(Metric):
        requires_judge = True

        def __init__(self):
            super().__init__("fake_judge", params={"model": "m"})

        async def compute(self, output, case, judge=None):
            return 0.9, {"reasoning": f"judged by {judge}"}

    judge = FakeJudge()
    assert asyncio.run(judge.ascore("x", CASE, judge="gpt")) == Score(0.9, {"reasoning": "judged by gpt"})
    assert judge.score("x", CASE).value == 0.9
    assert repr(judge) == "FakeJudge('fake_judge', model='m')"


def test_unexpected_options_are_an_error_score():
    assert make(1).score("x", CASE, judge="gpt").error == (
        "metric 'm' raised TypeError: Metric.compute() got an unexpected keyword argument 'judge'"
    )


def test_metric_without_fn_or_compute_is_an_error_score():
    assert Metric("empty").score("x", CASE).error == (
        "metric 'empty' raised NotImplementedError: Metric must define compute() or be given fn"
    )


def test_score_to_dict():
    assert Score(1.0, {"a": 1}).to_dict() == {"value": 1.0, "details": {"a": 1}, "error": None}
