"""Dataset: reading records, JSONL, CSV and frames; sequence behaviour; sampling; fingerprint; tables."""

from __future__ import annotations

import hashlib
import math
import os
import pathlib

import numpy as np
import pandas as pd
import pytest

from cogeval.data import Case, Dataset
from cogeval.errors import DatasetError, InputError

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def letters() -> Dataset:
    return Dataset([Case(letter) for letter in "abcdefghij"], name="letters")


# -- records ------------------------------------------------------------------------------------


def test_from_records_round_trips_through_to_records():
    records = [
        {"input": "q1", "expected": "a1"},
        {"input": {"question": "q2"}, "context": ["d"], "metadata": {"tags": ["x"], "score": None}},
        {"turns": ["hi", {"role": "user", "content": "bye"}], "expected": "ok"},
    ]
    data = Dataset.from_records(records, name="mixed")
    assert data.to_records() == records
    assert data.name == "mixed"
    assert Dataset.from_records(data.to_records(), name="mixed") == data


def test_unknown_record_fields_are_kept_in_metadata():
    data = Dataset.from_records([{"input": "q", "difficulty": "hard", "metadata": {"split": "dev"}}])
    assert data[0].metadata == {"split": "dev", "difficulty": "hard"}


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"input": "q"}, "q2"], "records[1]: a case record must be a JSON object (a dict); got 'q2'"),
        (
            [{"expected": "a"}],
            "records[0]: Case field 'input' is required (or give 'turns' for a multi-turn case)",
        ),
        (
            [{"input": "q", "tier": 1, "metadata": {"tier": 2}}],
            "records[0]: field 'tier' is given both as a record field and as a key of 'metadata'; keep one of them",
        ),
    ],
)
def test_bad_records_raise_naming_the_record(records, message):
    with pytest.raises(DatasetError) as caught:
        Dataset.from_records(records)
    assert str(caught.value) == message


def test_constructor_takes_cases_only():
    with pytest.raises(InputError) as caught:
        Dataset([Case("q"), {"input": "q"}])
    assert str(caught.value) == "cases[1] must be a Case; got {'input': 'q'} (use Dataset.from_records for dicts)"
    with pytest.raises(InputError, match=r"^name must be a string or None; got 3$"):
        Dataset([], name=3)


# -- JSONL --------------------------------------------------------------------------------------


def test_from_jsonl_reads_the_fixture_and_skips_blank_lines():
    data = Dataset.from_jsonl(FIXTURES / "cases.jsonl")
    assert data.name == "cases"
    assert data.to_records() == [
        {"input": "What is 2+2?", "expected": "4"},
        {
            "input": "Capital of France?",
            "expected": "Paris",
            "context": ["France is in Europe."],
            "metadata": {"difficulty": "easy"},
        },
        {"metadata": {"split": "dev"}, "turns": ["Hi", "Now say it in French"]},
        {"input": "Écris « bonjour » 😀"},
    ]
    assert Dataset.from_jsonl(str(FIXTURES / "cases.jsonl"), name="own").name == "own"


def test_an_empty_jsonl_file_is_an_empty_dataset(tmp_path):
    assert len(Dataset.from_jsonl(write(tmp_path, "empty.jsonl", ""))) == 0
    assert len(Dataset.from_jsonl(write(tmp_path, "blank.jsonl", "\n  \n"))) == 0


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"input": "q"}\n')
    assert Dataset.from_jsonl(path).to_records() == [{"input": "q"}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"input": "a"}\n{"input": "b"}\n{"input": "c",}\n',
            "bad.jsonl, line 3: invalid JSON: Expecting property name enclosed in double quotes (column 15)",
        ),
        ('{"input": "a"}\n["b"]\n', "bad.jsonl, line 2: a case record must be a JSON object (a dict); got ['b']"),
        (
            '{"input": "a"}\n\n{"expected": "b"}\n',
            "bad.jsonl, line 3: Case field 'input' is required (or give 'turns' for a multi-turn case)",
        ),
        (
            '{"input": "a", "metadata": [1, 2]}\n',
            "bad.jsonl, line 1: Case field 'metadata' must be a dict (a JSON object); got [1, 2]",
        ),
        (
            '{"input": "a", "turns": "hi"}\n',
            "bad.jsonl, line 1: Case field 'turns' must be a non-empty list of user messages (strings or dicts); "
            "got 'hi'",
        ),
        (
            '{"input": "a", "lang": "en", "metadata": {"lang": "fr"}}\n',
            "bad.jsonl, line 1: field 'lang' is given both as a record field and as a key of 'metadata'; "
            "keep one of them",
        ),
    ],
)
def test_bad_jsonl_lines_raise_naming_file_line_and_field(tmp_path, text, message):
    path = write(tmp_path, "bad.jsonl", text)
    with pytest.raises(DatasetError) as caught:
        Dataset.from_jsonl(path)
    assert str(caught.value) == f"{tmp_path}{os.sep}{message}"


def test_non_utf8_jsonl_names_the_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"input": "a"}\n{"input": "caf\xe9"}\n')
    with pytest.raises(DatasetError) as caught:
        Dataset.from_jsonl(path)
    assert str(caught.value) == f"{path}, line 2: not UTF-8 text (invalid continuation byte at byte 14)"


@pytest.mark.parametrize("reader", [Dataset.from_jsonl, Dataset.from_csv])
def test_a_missing_file_raises_naming_the_path(tmp_path, reader):
    path = tmp_path / "nowhere.data"
    with pytest.raises(FileNotFoundError) as caught:
        reader(path)
    assert str(caught.value) == f"[Errno 2] dataset file not found: '{path}'"


# -- CSV ----------------------------------------------------------------------------------------


def test_from_csv_keeps_text_decodes_json_fields_and_moves_extra_columns_to_metadata():
    data = Dataset.from_csv(FIXTURES / "cases.csv")
    assert data.name == "cases"
    assert data.to_records() == [
        {"input": "What is 2+2?", "expected": "4", "metadata": {"difficulty": "easy"}},
        {
            "input": "Code for agent?",
            "expected": "007",
            "context": ["doc one", "doc two"],
            "metadata": {"split": "dev", "difficulty": None},
        },
        {"input": "Two\nlines", "expected": "[1 is not json", "context": {"k": 1}, "metadata": {"difficulty": "hard"}},
    ]


def test_csv_without_rows_is_an_empty_dataset(tmp_path):
    assert len(Dataset.from_csv(write(tmp_path, "empty.csv", ""))) == 0
    assert len(Dataset.from_csv(write(tmp_path, "header.csv", "input,expected\n"))) == 0


def test_csv_turns_cell_holds_a_json_list(tmp_path):
    path = write(tmp_path, "turns.csv", 'turns,expected\n"[""hi"", ""bye""]",ok\n')
    assert Dataset.from_csv(path).to_records() == [{"expected": "ok", "turns": ["hi", "bye"]}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("question,answer\nq,a\n", "bad.csv has no 'input' column (nor 'turns'); its columns are 'question', 'answer'"),
        (
            'input,metadata\nq,\nr,{split: dev}\n',
            "bad.csv, row 2: field 'metadata' must hold JSON; Expecting property name enclosed in double quotes "
            "(column 2) in '{split: dev}'",
        ),
        ('input,metadata\nq,"[1]"\n', "bad.csv, row 1: Case field 'metadata' must be a dict (a JSON object); got [1]"),
        (
            "input,expected\nq,a\n,b\n",
            "bad.csv, row 2: Case field 'input' is required (or give 'turns' for a multi-turn case)",
        ),
    ],
)
def test_bad_csv_raises_naming_file_row_and_field(tmp_path, text, message):
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(DatasetError) as caught:
        Dataset.from_csv(path)
    assert str(caught.value) == f"{tmp_path}{os.sep}{message}"


def test_csv_the_parser_cannot_read_raises_naming_the_file(tmp_path):
    path = write(tmp_path, "bad.csv", 'input\nq\n"unclosed\n')
    with pytest.raises(DatasetError, match=r"bad\.csv: cannot read as CSV: Error tokenizing data"):
        Dataset.from_csv(path)


# -- frames -------------------------------------------------------------------------------------


def test_to_frame_is_the_tidy_cases_table():
    data = Dataset([Case("q", expected="a"), Case("r"), Case("q", expected="a", metadata={"i": 2}), Case("q", expected="a")])
    frame = data.to_frame()
    assert list(frame.columns) == ["case_key", "occurrence", "input", "expected", "context", "metadata", "turns"]
    assert frame["occurrence"].tolist() == [0, 0, 1, 2]
    assert frame["occurrence"].dtype == np.int64
    assert frame["case_key"].tolist() == [case.key for case in data]
    assert frame["case_key"][0] == sha256('{"expected":"a","input":"q"}')
    assert frame["expected"].tolist() == ["a", None, "a", "a"]
    assert frame["metadata"].tolist() == [None, None, {"i": 2}, None]


def test_an_empty_dataset_has_an_empty_frame_with_all_columns():
    frame = Dataset().to_frame()
    assert frame.shape == (0, 7)
    assert frame["occurrence"].dtype == np.int64


def test_from_frame_reads_back_to_frame():
    data = Dataset.from_jsonl(FIXTURES / "cases.jsonl")
    assert Dataset.from_frame(data.to_frame(), name="cases") == data


def test_from_frame_treats_nan_as_missing_and_keeps_extra_columns():
    frame = pd.DataFrame({"input": ["q", "r"], "expected": ["a", np.nan], "score": [0.5, np.nan]}, index=[10, 11])
    assert Dataset.from_frame(frame).to_records() == [
        {"input": "q", "expected": "a", "metadata": {"score": 0.5}},
        {"input": "r", "metadata": {"score": None}},
    ]


def test_from_frame_errors_name_the_row_label():
    frame = pd.DataFrame({"input": ["q", None]}, index=["first", "second"])
    with pytest.raises(DatasetError) as caught:
        Dataset.from_frame(frame)
    assert str(caught.value) == (
        "frame row 'second': Case field 'input' is required (or give 'turns' for a multi-turn case)"
    )
    with pytest.raises(DatasetError, match=r"^frame has no 'input' column \(nor 'turns'\); its columns are 'q'$"):
        Dataset.from_frame(pd.DataFrame({"q": ["x"]}))
    with pytest.raises(InputError, match=r"^frame must be a pandas DataFrame; got \[\{'input': 'q'\}\]$"):
        Dataset.from_frame([{"input": "q"}])


# -- sequence behaviour ---------------------------------------------------------------------------


def test_indexing_iteration_and_membership(letters):
    assert len(letters) == 10
    assert letters[0] == Case("a")
    assert letters[-1] == Case("j")
    assert letters[np.int64(2)] == Case("c")
    assert [case.input for case in letters[2:5]] == ["c", "d", "e"]
    assert isinstance(letters[2:5], Dataset)
    assert letters[::-1].name == "letters"
    assert Case("b") in letters
    assert letters.index(Case("d")) == 3
    with pytest.raises(TypeError, match=r"^Dataset indices must be integers or slices, not str$"):
        letters["a"]
    with pytest.raises(IndexError):
        letters[10]


def test_filter_keeps_order_and_name(letters):
    vowels = letters.filter(lambda case: case.input in "aeiou")
    assert [case.input for case in vowels] == ["a", "e", "i"]
    assert vowels.name == "letters"


def test_equality_compares_cases_and_name(letters):
    assert letters == Dataset(list(letters), name="letters")
    assert letters != Dataset(list(letters))
    assert hash(letters) == hash(Dataset(list(letters), name="letters"))


# -- sampling -----------------------------------------------------------------------------------


def test_sample_is_reproducible_keeps_dataset_order_and_draws_without_replacement(letters):
    first = letters.sample(4, seed=11)
    assert first == letters.sample(4, seed=11)
    inputs = [case.input for case in first]
    assert inputs == sorted(inputs)
    assert len(set(inputs)) == 4
    assert letters.sample(4, seed=12) != first
    assert letters.sample(10, seed=0) == letters
    assert len(letters.sample(0)) == 0


def test_sample_matches_numpy_default_rng(letters):
    chosen = sorted(np.random.default_rng(5).choice(10, size=3, replace=False))
    assert letters.sample(3, seed=5) == Dataset([letters[i] for i in chosen], name="letters")


@pytest.mark.parametrize(
    ("n", "message"),
    [(11, "n must be at most the number of cases (10); got 11"), (-1, "n must be an integer >= 0; got -1")],
)
def test_sample_refuses_impossible_sizes(letters, n, message):
    with pytest.raises(InputError) as caught:
        letters.sample(n)
    assert str(caught.value) == message


def test_shuffle_is_a_reproducible_permutation(letters):
    mixed = letters.shuffle(seed=3)
    assert mixed == letters.shuffle(seed=3)
    assert mixed != letters.shuffle(seed=4)
    assert sorted(case.input for case in mixed) == list("abcdefghij")
    assert [case.input for case in mixed] == [letters[i].input for i in np.random.default_rng(3).permutation(10)]



@pytest.mark.parametrize("seed", [-1, b"x", 1.5, True])
def test_sample_and_shuffle_follow_the_one_seed_rule(letters, seed):
    message = f"seed must be None, an integer >= 0, a string or a numpy Generator; got {seed!r}"
    for draw in (lambda: letters.sample(2, seed=seed), lambda: letters.shuffle(seed=seed)):
        with pytest.raises(InputError) as caught:
            draw()
        assert str(caught.value) == message
    assert letters.shuffle(seed=np.random.default_rng(3)) == letters.shuffle(seed=3)


# -- fingerprint --------------------------------------------------------------------------------


def test_fingerprint_hashes_the_canonical_list_of_case_dicts():
    data = Dataset([Case("What is 2+2?", expected="4"), Case(turns=["hi"], metadata={"b": 1, "a": math.nan})])
    assert data.fingerprint == sha256('[{"expected":"4","input":"What is 2+2?"},{"metadata":{"a":null,"b":1},"turns":["hi"]}]')
    assert Dataset().fingerprint == sha256("[]")


def test_fingerprint_changes_with_order_duplicates_and_context_but_not_name():
    a, b = Case("a"), Case("b", context="doc")
    base = Dataset([a, b]).fingerprint
    assert Dataset([b, a]).fingerprint != base
    assert Dataset([a, b, b]).fingerprint != base
    assert Dataset([a, Case("b")]).fingerprint != base
    assert Dataset([a, b], name="named").fingerprint == base


# -- display ------------------------------------------------------------------------------------


def test_repr_html_escapes_text_and_summarises(letters):
    data = Dataset([Case("<script>alert(1)</script>", metadata={"x": "<b>"})] * 12, name="<evil>")
    html = data._repr_html_()
    assert "<script>alert" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f"Dataset &#x27;&lt;evil&gt;&#x27; · 12 cases (first 10 shown) · fingerprint {data.fingerprint[:12]}" in html
    assert html.count("<tr>") == 11  # header and ten rows
    assert repr(letters) == f"Dataset(name='letters', cases=10, fingerprint={letters.fingerprint[:12]!r})"


def test_repr_html_never_raises():
    class Broken(Dataset):
        @property
        def fingerprint(self):
            raise RuntimeError("boom")

    assert Broken([Case("q")])._repr_html_() == "<pre>Broken: could not display (RuntimeError: boom)</pre>"
