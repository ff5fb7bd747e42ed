"""Case: construction, validation, to_dict, key (DESIGN §5) and from_dict."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from cogeval.data import Case
from cogeval.errors import DatasetError, InputError


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_design_example_key():
    case = Case(input="What is 2+2?", expected="4")
    assert case.key == sha256('{"expected":"4","input":"What is 2+2?"}')
    assert case.key == "990ca836ae07956538faa8d21968dd11a50566a118d4738b4fc0be2a4d632c2c"


def test_positional_and_keyword_construction_agree():
    assert Case("q", "a") == Case(input="q", expected="a")
    assert Case("q").to_dict() == {"input": "q"}


def test_absent_fields_are_left_out_of_dict_and_key_but_nested_none_is_kept():
    case = Case({"question": "q", "hint": None})
    assert case.to_dict() == {"input": {"question": "q", "hint": None}}
    assert case.key == sha256('{"input":{"hint":null,"question":"q"}}')


def test_key_covers_input_turns_and_expected_only():
    base = Case("q", expected="a")
    assert Case("q", expected="a", context=["doc"], metadata={"split": "dev"}).key == base.key
    assert Case("q", expected="b").key != base.key
    assert Case("q").key == sha256('{"input":"q"}')
    assert Case("q", expected="a", turns=["t"]).key == sha256('{"expected":"a","input":"q","turns":["t"]}')


def test_a_multi_turn_case_may_leave_input_out():
    case = Case(turns=["Hi", {"role": "user", "content": "Bye"}])
    assert case.input is None
    assert case.to_dict() == {"turns": ["Hi", {"role": "user", "content": "Bye"}]}
    assert case.key == sha256('{"turns":["Hi",{"content":"Bye","role":"user"}]}')


def test_turns_given_as_a_tuple_are_stored_as_a_list():
    assert Case(turns=("a", "b")).turns == ["a", "b"]


def test_to_dict_keeps_field_order():
    case = Case(turns=["t"], metadata={"m": 1}, context="c", expected="e", input="i")
    assert list(case.to_dict()) == ["input", "expected", "context", "metadata", "turns"]


def test_case_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Case("q").input = "other"  # type: ignore[misc]


def test_equality_and_hash_follow_the_canonical_json():
    assert Case("q", metadata={"n": 1}) == Case("q", metadata={"n": 1.0})
    assert hash(Case("q", metadata={"n": 1})) == hash(Case("q", metadata={"n": 1.0}))
    assert Case(True) != Case(1)
    assert Case("q", context="c") != Case("q")
    assert len({Case("q"), Case("q"), Case("r")}) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "Case field 'input' is required (or give 'turns' for a multi-turn case)"),
        ({"input": "q", "metadata": ["hard"]}, "Case field 'metadata' must be a dict (a JSON object); got ['hard']"),
        (
            {"input": "q", "turns": "hello"},
            "Case field 'turns' must be a non-empty list of user messages (strings or dicts); got 'hello'",
        ),
        (
            {"turns": []},
            "Case field 'turns' must be a non-empty list of user messages (strings or dicts); got []",
        ),
        ({"turns": ["a", 3]}, "Case field 'turns' must hold strings or dicts; turns[1] is 3"),
        (
            {"input": "q", "metadata": {"seen": {1, 2}}},
            "Case field 'metadata' is not JSON data: cannot write metadata['seen'] as JSON: set is not a JSON value "
            "(use str, number, bool, None, list or dict); got {1, 2}",
        ),
        (
            {"input": b"raw"},
            "Case field 'input' is not JSON data: cannot write input as JSON: bytes is not a JSON value "
            "(use str, number, bool, None, list or dict); got b'raw'",
        ),
    ],
)
def test_bad_fields_raise_input_error_naming_the_field(kwargs, message):
    with pytest.raises(InputError) as caught:
        Case(**kwargs)
    assert str(caught.value) == message


def test_from_dict_keeps_unknown_fields_in_metadata():
    case = Case.from_dict({"input": "q", "difficulty": "hard", "metadata": {"split": "dev"}, "notes": None})
    assert case.metadata == {"split": "dev", "difficulty": "hard", "notes": None}
    assert Case.from_dict(case.to_dict()) == case


def test_from_dict_reads_back_to_dict():
    case = Case("q", expected=["a", 1], context=["d"], metadata={"k": None}, turns=["t"])
    assert Case.from_dict(case.to_dict()) == case


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (["q"], "a case record must be a JSON object (a dict); got ['q']"),
        ({"expected": "a"}, "Case field 'input' is required (or give 'turns' for a multi-turn case)"),
        ({"input": "q", "metadata": "x"}, "Case field 'metadata' must be a dict (a JSON object); got 'x'"),
        ({"input": "q", "metadata": "x", "extra": 1}, "Case field 'metadata' must be a dict (a JSON object); got 'x'"),
        (
            {"input": "q", "difficulty": "hard", "metadata": {"difficulty": "easy"}},
            "field 'difficulty' is given both as a record field and as a key of 'metadata'; keep one of them",
        ),
    ],
)
def test_from_dict_errors_are_dataset_errors(record, message):
    with pytest.raises(DatasetError) as caught:
        Case.from_dict(record)
    assert str(caught.value) == message
