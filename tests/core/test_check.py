import hashlib
import math
import pathlib

import numpy as np
import pytest

import cogeval
import cogeval.scoring
from cogeval._check import (
    MAX_RETRIES,
    MIN_TIMEOUT_S,
    as_float_array,
    check_choice,
    check_path,
    check_positive_int,
    check_positive_number,
    check_probability,
    check_retries,
    check_same_length,
    check_seed,
    check_timeout,
    describe,
)
from cogeval.errors import CogevalError, InputError


def test_input_error_is_a_value_error_and_a_cogeval_error():
    assert issubclass(InputError, ValueError)
    assert issubclass(InputError, CogevalError)


@pytest.mark.parametrize("value", [0, 0.5, 1])
def test_probability_accepts_the_closed_interval(value):
    assert check_probability("alpha", value) == value


@pytest.mark.parametrize("value", [-0.1, 1.01, float("nan"), "0.5", True, None])
def test_probability_names_the_argument_and_the_value(value):
    with pytest.raises(InputError, match=r"^alpha must be a number in \[0, 1\]; got "):
        check_probability("alpha", value)


def test_open_probability_refuses_the_ends():
    with pytest.raises(InputError, match=r"confidence must be a number in \(0, 1\); got 1"):
        check_probability("confidence", 1, open_interval=True)


def test_positive_int():
    assert check_positive_int("n", np.int64(3)) == 3
    assert check_positive_int("retries", 0, minimum=0) == 0
    for bad in (0, 2.0, True, "3"):
        with pytest.raises(InputError, match=r"^n must be an integer >= 1; got "):
            check_positive_int("n", bad)


@pytest.mark.parametrize("value", [None, 0, 7, np.int64(3), np.uint8(2)])
def test_seed_accepts_none_and_integers(value):
    result = check_seed("seed", value)
    assert result == value and (result is None or type(result) is int)


def test_seed_keeps_a_generator():
    rng = np.random.default_rng(1)
    assert check_seed("seed", rng) is rng


@pytest.mark.parametrize("value, shown", [
    (-1, "-1"), (True, "True"), (1.0, "1.0"), (b"3", "b'3'"), (np.random.RandomState(0), "RandomState"),
])
def test_seed_names_the_argument_and_the_rule(value, shown):
    with pytest.raises(InputError) as error:
        check_seed("random_state", value)
    message = str(error.value)
    assert message.startswith("random_state must be None, an integer >= 0, a string or a numpy Generator; got ")
    assert shown in message


def test_a_string_seed_is_the_first_8_bytes_of_its_sha256():
    # Cogitator-style string seeds ("nightly") hashed stably, never with Python's salted hash():
    # hashlib.sha256("nightly".encode()).hexdigest()[:16] == "2a3b62b53ddb9f16"
    assert check_seed("seed", "nightly") == 0x2A3B62B53DDB9F16 == 3043134503785307926
    assert check_seed("seed", "") == 0xE3B0C44298FC1C14  # SHA-256 of the empty text starts e3b0c442 98fc1c14
    assert check_seed("seed", "é") == int(hashlib.sha256("é".encode()).hexdigest()[:16], 16)
    draws = [np.random.default_rng(check_seed("seed", "nightly")).random() for _ in range(2)]
    assert draws[0] == draws[1]


def test_timeout_has_a_minimum_of_one_millisecond():
    assert MIN_TIMEOUT_S == 0.001
    assert check_timeout("timeout", 0.001) == 0.001 and check_timeout("timeout", np.float64(30)) == 30.0
    with pytest.raises(InputError) as error:
        check_timeout("timeout", 0.0005)
    assert str(error.value) == "timeout must be at least 0.001 seconds (a shorter deadline fails every call); got 0.0005"
    with pytest.raises(InputError, match=r"^timeout must be a finite number > 0; got 0$"):
        check_timeout("timeout", 0)


def test_retries_has_one_limit_and_one_message():
    assert MAX_RETRIES == 10
    assert check_retries("retries", 0) == 0 and check_retries("retries", np.int64(10)) == 10
    assert type(check_retries("retries", np.int64(3))) is int
    for bad, shown in ((-1, "-1"), (11, "11"), (True, "True"), (2.0, "2.0"), ("3", "'3'"), (None, "None")):
        with pytest.raises(InputError) as error:
            check_retries("retries", bad)
        assert str(error.value) == f"retries must be an integer from 0 to 10; got {shown}"


def test_positive_number():
    assert check_positive_number("timeout", 0.5) == 0.5
    with pytest.raises(InputError, match=r"^timeout must be a finite number > 0; got inf$"):
        check_positive_number("timeout", math.inf)


def test_choice_is_case_insensitive_and_lists_the_choices():
    assert check_choice("method", "HOLM", ["holm", "bh"]) == "holm"
    with pytest.raises(InputError, match=r"^method must be one of 'holm', 'bh'; got 'sidak'$"):
        check_choice("method", "sidak", ["holm", "bh"])


def test_float_array():
    np.testing.assert_array_equal(as_float_array("a", [1, 2]), [1.0, 2.0])
    with pytest.raises(InputError, match=r"^a must not contain NaN; found one at position 1$"):
        as_float_array("a", [1, float("nan")])
    assert np.isnan(as_float_array("a", [1, float("nan")], allow_nan=True)[1])
    with pytest.raises(InputError, match=r"^a must be a sequence of numbers; got \['x'\]$"):
        as_float_array("a", ["x"])
    with pytest.raises(InputError, match=r"^a must be a sequence of numbers, not a single value; got 3$"):
        as_float_array("a", 3)
    with pytest.raises(InputError, match=r"^a must be one-dimensional; got shape \(1, 2\)$"):
        as_float_array("a", [[1, 2]])
    with pytest.raises(InputError, match=r"^a must not contain infinite values; found one at position 0$"):
        as_float_array("a", [math.inf])


def test_same_length():
    with pytest.raises(InputError, match=r"^a and b must be paired \(the same length\); got 2 and 3 values$"):
        check_same_length("a", np.zeros(2), "b", np.zeros(3))


def test_describe_cuts_long_values():
    assert describe("x" * 100) == repr("x" * 100)[:57] + "..."


def test_json_metadata_drops_none_and_names_bad_keys():
    import datetime

    from cogeval._check import check_json_metadata

    assert check_json_metadata("metadata", {"a": None, "b": {"c": None, "d": [1, 2.5]}}) == {"b": {"d": [1, 2.5]}}
    assert check_json_metadata("metadata", None) == {}
    with pytest.raises(InputError, match=r"^metadata\['when'\] must be a JSON value .*; got datetime "):
        check_json_metadata("metadata", {"when": datetime.datetime(2026, 1, 1)})
    with pytest.raises(InputError, match=r"^metadata\['f'\] must be a JSON value .*; got function "):
        check_json_metadata("metadata", {"f": lambda: 1})
    with pytest.raises(InputError, match=r"^metadata\['raw'\] must be a JSON value .*; got bytes b'x'$"):
        check_json_metadata("metadata", {"raw": b"x"})
    with pytest.raises(InputError, match=r"^metadata\['x'\]\[1\] must be a finite number"):
        check_json_metadata("metadata", {"x": [1, float("nan")]})
    with pytest.raises(InputError, match=r"^metadata must be a dict of JSON values; got \[1\]$"):
        check_json_metadata("metadata", [1])



@pytest.mark.parametrize(
    "call",
    [
        lambda: cogeval.load_run(42),
        lambda: cogeval.Dataset.from_jsonl(42),
        lambda: cogeval.Dataset.from_csv(None),
        lambda: cogeval.load_pairwise(3.5),
        lambda: cogeval.RunStore(42),
        lambda: cogeval.scoring.read_baseline(None),
        lambda: cogeval.scoring.write_baseline(42, {}, {}),
    ],
)
def test_every_path_argument_refuses_a_non_path_by_name(call):
    with pytest.raises(InputError, match=r"^(path|target|out) must be a file or folder path \(str or os.PathLike\); got "):
        call()


def test_path_refuses_the_empty_string():
    with pytest.raises(InputError, match="path must be a file or folder path"):
        check_path("path", "")
    assert check_path("path", "runs") == pathlib.Path("runs")


def test_describe_survives_a_repr_that_raises():
    class Broken:
        def __repr__(self):
            raise RuntimeError("no")

    assert describe(Broken()) == "<unprintable Broken>"
    with pytest.raises(InputError, match=r"^metadata\['x'\] .*<unprintable Broken>"):
        cogeval.EvalSuite([cogeval.Case("a")], str, metadata={"x": Broken()}, progress=False)
