"""Built-in per-case metrics: hand-computed values, errors as NaN, invariants over every built-in."""

from __future__ import annotations

import asyncio
import math
import re

import pytest

from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.scoring import (
    BUILTIN_METRICS,
    Metric,
    Score,
    contains,
    exact_match,
    from_description,
    json_valid,
    numeric_match,
    regex,
    token_f1,
)


def case(expected=None):
    return Case("question", expected=expected)


def value(m, output, expected=None):
    return m.score(output, case(expected)).value


# --- exact_match ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "sensitive", "result"),
    [
        ("Paris", "Paris", False, 1.0),
        ("  paris\n", "PARIS ", False, 1.0),
        ("paris", "Paris", True, 0.0),
        ("Paris", "Paris", True, 1.0),
        ("Paris, France", "Paris", False, 0.0),
        ("4", 4, False, 1.0),  # a non-str expected compares by its str()
        ("colour", ["color", "colour"], False, 1.0),  # a list: acceptable answers
        ("", "", False, 1.0),
    ],
)
def test_exact_match(output, expected, sensitive, result):
    assert value(exact_match(case_sensitive=sensitive), output, expected) == result


def test_exact_match_without_expected_is_an_error():
    score = exact_match().score("Paris", case())
    assert math.isnan(score.value)
    assert score.error == "exact_match needs case.expected"


# --- contains ------------------------------------------------------------------


def test_contains():
    assert value(contains(), "The capital is Paris.", "paris") == 1.0
    assert value(contains(case_sensitive=True), "The capital is Paris.", "paris") == 0.0
    assert value(contains(), "anything", "") == 1.0


def test_contains_a_list_needs_all_items_by_default():
    m = contains()
    assert m.score("red, yellow and blue", case(["Red", "blue"])) == Score(1.0)
    assert m.score("red and green", case(["red", "blue", "yellow"])) == Score(0.0, {"missing": ["blue", "yellow"]})


def test_contains_any():
    m = contains(match="ANY")
    assert m.params == {"case_sensitive": False, "match": "any"}
    assert m.score("red and green", case(["blue", "red"])) == Score(1.0, {"missing": ["blue"]})
    assert value(m, "green", ["blue", "red"]) == 0.0


def test_contains_bad_match():
    with pytest.raises(InputError, match="match must be one of 'all', 'any'; got 'some'"):
        contains(match="some")


# --- regex ---------------------------------------------------------------------


def test_regex_searches_anywhere():
    m = regex(r"\d{4}-\d{2}-\d{2}")
    assert m.score("Due on 2024-05-01, ok?", case()) == Score(1.0, {"match": "2024-05-01"})
    assert m.score("no date", case()) == Score(0.0)


def test_regex_flags_and_params():
    m = regex("^yes", flags=re.IGNORECASE | re.MULTILINE)
    assert value(m, "well\nYES indeed") == 1.0
    assert m.params == {"pattern": "^yes", "flags": int(re.IGNORECASE | re.MULTILINE)}
    assert type(m.params["flags"]) is int


def test_regex_bad_pattern_fails_at_construction():
    with pytest.raises(InputError) as info:
        regex("(unclosed")
    assert str(info.value) == (
        "regex pattern '(unclosed' is not a valid regular expression: missing ) at position 9"
    )


def test_regex_bad_arguments():
    with pytest.raises(InputError, match="regex pattern must be a string; got 3"):
        regex(3)
    with pytest.raises(InputError, match="regex flags must be an int"):
        regex("a", flags="i")


# --- json_valid ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "result"),
    [('{"a": [1, 2]}', 1.0), (" [1] \n", 1.0), ("null", 1.0), ("3", 1.0), ("{'a': 1}", 0.0), ("", 0.0),
     ('```json\n{"a": 1}\n```', 0.0)],
)
def test_json_valid(output, result):
    assert value(json_valid(), output) == result


def test_json_valid_gives_the_reason():
    assert json_valid().score("{", case()).details == {
        "reason": "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    }


# --- numeric_match -------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "found"),
    [
        ("The answer is 42.", "42", 42.0),
        ("It is 1,234 in total", "1234", 1234.0),
        ("about -3.5 degrees", -3.5, -3.5),
        ("1e3", 1000, 1000.0),
        ("1.5e-3", 0.0015, 0.0015),
        ("from 10-20", 20, 20.0),  # a hyphen between numbers is not a minus sign
        ("x=-2", -2, -2.0),
        ("+5", 5, 5.0),
        (".5 of it", 0.5, 0.5),
        ("first 3 then 7", 7, 7.0),  # the last number counts
        ("total: 1,234,567.5", "$1,234,567.50", 1234567.5),  # expected text is parsed too
        ("0.30000000000000004", 0.3, 0.30000000000000004),  # float rounding is not a miss
    ],
)
def test_numeric_match_finds_the_last_number(output, expected, found):
    score = numeric_match().score(output, case(expected))
    assert score.value == 1.0
    assert score.details["found"] == found


def test_numeric_match_tolerance_is_absolute():
    m = numeric_match(tolerance=0.5)
    assert value(m, "3.5", 3) == 1.0
    assert value(m, "3.6", 3) == 0.0
    assert value(m, "-2.5", -3) == 1.0
    assert value(numeric_match(), "3.01", 3) == 0.0


def test_numeric_match_no_number_scores_zero_with_a_reason():
    assert numeric_match().score("I don't know", case(4)) == Score(0.0, {"reason": "no number found in output"})


def test_numeric_match_alternatives_use_the_closest():
    assert numeric_match().score("5", case([3, 5])) == Score(1.0, {"found": 5.0, "expected": 5.0})


def test_numeric_match_errors():
    score = numeric_match().score("4", case("four"))
    assert math.isnan(score.value)
    assert score.error == "numeric_match needs a number in case.expected; got 'four'"
    assert numeric_match().score("4", case()).error == "numeric_match needs case.expected"
    for bad in (-1, math.inf, "0.1", True):
        with pytest.raises(InputError, match="tolerance must be a finite number >= 0"):
            numeric_match(tolerance=bad)


# --- token_f1 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "f1", "precision", "recall"),
    [
        # "the cat sat" -> [cat, sat]; "a cat sat down" -> [cat, sat, down]
        # common 2: precision 2/2, recall 2/3, F1 = 2*1*(2/3)/(1+2/3) = 0.8
        ("the cat sat", "a cat sat down", 0.8, 1.0, 2 / 3),
        # [paris, france] vs [paris]: precision 1/2, recall 1, F1 = 2/3
        ("Paris, France", "paris", 2 / 3, 0.5, 1.0),
        # multiset: [cat, cat, cat] vs [cat]: common 1, precision 1/3, recall 1, F1 = 0.5
        ("cat cat cat", "cat", 0.5, 1 / 3, 1.0),
        ("The Eiffel Tower!", "eiffel tower", 1.0, 1.0, 1.0),
        ("dog", "cat", 0.0, 0.0, 0.0),
        # both empty after normalisation (only articles and punctuation): 1
        ("The.", "a", 1.0, 1.0, 1.0),
        ("cat", "", 0.0, 0.0, 0.0),
    ],
)
def test_token_f1_by_hand(output, expected, f1, precision, recall):
    score = token_f1().score(output, case(expected))
    assert score.value == pytest.approx(f1)
    assert score.details == {"precision": pytest.approx(precision), "recall": pytest.approx(recall)}


def test_token_f1_is_symmetric_and_takes_the_best_reference():
    assert value(token_f1(), "a cat sat down", "the cat sat") == pytest.approx(0.8)
    assert value(token_f1(), "the cat sat", ["dog", "cat sat"]) == 1.0


# --- every built-in ------------------------------------------------------------

CASE_METRICS = {
    "exact_match": exact_match,
    "contains": contains,
    "regex": lambda: regex(r"\w+"),
    "json_valid": json_valid,
    "numeric_match": numeric_match,
    "token_f1": token_f1,
}
WEIRD_OUTPUTS = [None, "", " ", "x" * 200_000, 42, 3.5, ["a", 1], {"a": None}, b"bytes", object(), "😀 \x00 \u202e"]
WEIRD_EXPECTED = [None, "", "4", 4, ["a", "b"], [], {"k": 1}]


def test_every_case_builtin_is_registered():
    assert set(CASE_METRICS) <= set(BUILTIN_METRICS)


@pytest.mark.parametrize("name", sorted(CASE_METRICS))
@pytest.mark.parametrize("output", WEIRD_OUTPUTS, ids=lambda o: type(o).__name__)
@pytest.mark.parametrize("expected", WEIRD_EXPECTED, ids=repr)
def test_builtins_never_raise_and_score_in_unit_interval(name, output, expected):
    score = CASE_METRICS[name]().score(output, case(expected))
    assert isinstance(score, Score)
    if score.error is None:
        assert 0.0 <= score.value <= 1.0
    else:
        assert math.isnan(score.value)
        assert score.error.startswith(name)


@pytest.mark.parametrize("name", sorted(CASE_METRICS))
def test_builtins_none_output_is_an_error_not_zero(name):
    score = CASE_METRICS[name]().score(None, case("x"))
    assert math.isnan(score.value)
    assert score.error == f"{name} got no output (None)"


@pytest.mark.parametrize("name", sorted(CASE_METRICS))
def test_builtins_are_named_after_their_function_and_rebuild_from_description(name):
    m = CASE_METRICS[name]()
    assert isinstance(m, Metric)
    assert m.name == name and m.higher_is_better is True and m.kind == "case"
    rebuilt = from_description(m.describe())
    assert rebuilt.describe() == m.describe()
    assert repr(rebuilt) == repr(m) and repr(m).startswith(f"Metric({name!r}")


@pytest.mark.parametrize("name", sorted(CASE_METRICS))
def test_builtins_ascore_matches_score(name):
    m = CASE_METRICS[name]()
    assert asyncio.run(m.ascore("4", case("4"))) == m.score("4", case("4"))


def test_from_description_errors():
    with pytest.raises(InputError, match="'quality' is not a built-in metric; built-ins are contains, cost, "):
        from_description({"name": "quality", "params": {}})
    with pytest.raises(InputError, match="cannot rebuild metric 'regex' from params"):
        from_description({"name": "regex", "params": {}})
