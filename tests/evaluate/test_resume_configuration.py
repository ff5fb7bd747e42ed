"""Resume is keyed by the whole configuration (issue 24 item 6): a metric of the same name made otherwise,
another judge, or a target made with other arguments is refused with what differs, or rescored on request."""

from __future__ import annotations

import functools

import pytest

from cogeval import Case, EvalSuite, exact_match, metric
from cogeval.errors import InputError
from cogeval.execution.target import as_target

CASES = [Case("a", expected="A"), Case("b", expected="b")]


def _suite(*metrics, target=str):
    return EvalSuite(CASES, target, metrics=list(metrics), progress=False)


def test_a_metric_with_other_parameters_is_refused_naming_them():
    earlier = _suite(exact_match()).run().run
    with pytest.raises(InputError) as info:
        _suite(exact_match(case_sensitive=True)).run(resume=earlier)
    assert str(info.value) == (
        f"resume: run {earlier.run_id!r} scored 'exact_match' with params {{'case_sensitive': False}} (now "
        "{'case_sensitive': True}); resume with rescore_changed=True to score those metrics afresh, or keep the "
        "metrics as they were")


def test_rescore_changed_scores_only_the_changed_metric_afresh():
    scored: list[str] = []

    def length(limit):
        @metric("short", higher_is_better=True)
        def short(output, case):
            scored.append(output)
            return float(len(output) <= limit)
        short.params["limit"] = limit
        return short

    earlier = _suite(exact_match(), length(0)).run().run
    assert [s.score for r in earlier.results for s in r.scores if s.metric == "short"] == [0.0, 0.0]
    scored.clear()
    again = _suite(exact_match(), length(1)).run(resume=earlier, rescore_changed=True).run
    assert scored == ["a", "b"]  # the answers were kept; only the changed metric scored them again
    assert [s.score for r in again.results for s in r.scores if s.metric == "short"] == [1.0, 1.0]
    assert [s.score for r in again.results for s in r.scores if s.metric == "exact_match"] == [
        s.score for r in earlier.results for s in r.scores if s.metric == "exact_match"]


def test_a_metric_turned_around_is_refused():
    earlier = _suite(metric("quality")(lambda output, case: 1.0)).run().run
    with pytest.raises(InputError, match=r"scored 'quality' with higher_is_better True \(now False\)"):
        _suite(metric("quality", higher_is_better=False)(lambda output, case: 1.0)).run(resume=earlier)


def test_a_partial_with_other_arguments_is_another_target():
    def answer(text, style="plain"):
        return text

    earlier = _suite(exact_match(), target=functools.partial(answer, style="terse")).run().run
    assert earlier.config.target["name"].endswith("answer")
    assert earlier.config.target["arguments"] == "((), {'style': 'terse'})"
    with pytest.raises(InputError, match=r"a resumed run must keep its target"):
        _suite(exact_match(), target=functools.partial(answer, style="verbose")).run(resume=earlier)
    assert len(_suite(exact_match(), target=functools.partial(answer, style="terse")).run(resume=earlier).run.results) == 2


def test_a_callable_object_is_described_by_its_class_and_its_own_repr():
    class Bot:
        def __init__(self, temperature):
            self.temperature = temperature

        def __call__(self, text):
            return text

        def __repr__(self):
            return f"Bot(temperature={self.temperature})"

    class Plain:
        def __call__(self, text):
            return text

    described = as_target(Bot(0.2)).describe()
    assert (described["name"], described["repr"]) == ("test_a_callable_object_is_described_by_its_class_and_its_own_"
                                                      "repr.<locals>.Bot", "Bot(temperature=0.2)")
    assert "repr" not in as_target(Plain()).describe()  # object's repr holds an address: it would never match
