"""Fuzzed run files and datasets: a reader raises cogeval's own errors or returns something usable, never crashes.

Seeded (``derandomize``) and bounded, so the suite stays fast and every run tries the same files: the
format's own example, the run-file fixtures and the dataset fixtures, mutated with deep nesting, numbers
JSON or cogeval cannot hold, duplicate results, extra or missing CSV fields, random bytes and truncation.
"""

from __future__ import annotations

import csv
import io
import json
import pathlib
import re
import warnings

import pytest
from formats_example import format_example
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogeval import RunStore, compare_runs
from cogeval.data import Dataset, load_run
from cogeval.data.runfile import run_from_json
from cogeval.errors import CogevalError

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
EXAMPLE = FIXTURES / "runs" / "format-example.json"
"""A verbatim copy of the format's example (``shared/formats/eval-run-example.json`` beside the repository)."""
RUNS = [json.loads(p.read_text(encoding="utf-8")) for p in (EXAMPLE, FIXTURES / "runs" / "minimal.json",
                                                             FIXTURES / "runs" / "full.json")]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
RAW = re.compile(r'"@raw:([^"]*)@"')


def raw(text: str) -> str:
    """A string that the writer below replaces by ``text`` itself: JSON ``json.dumps`` cannot write."""
    return f"@raw:{text}@"


def nested(levels: int, opener: str) -> str:
    closer = "]" if opener == "[" else "}"
    inner = '"k": ' if opener == "{" else ""
    return (opener + inner) * levels + "1" + closer * levels


# Values that break a limit, or sit just within one, written as raw JSON text.
DEEP = st.builds(nested, st.sampled_from([3000, 101, 400, 99, 100, 81, 80, 79]), st.sampled_from(["[", "{"]))
DIGITS = st.sampled_from([6000, 4301, 4300, 400, 309, 300]).map(lambda n: "9" * n)
CONSTANTS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1e308", "5e-324", "-0"])
HOSTILE_TEXT = st.sampled_from([DEEP, DIGITS, CONSTANTS]).flatmap(lambda strategy: strategy)
PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)
VALUES = st.sampled_from([HOSTILE_TEXT.map(raw), HOSTILE_TEXT.map(raw), PLAIN,
                          st.sampled_from([-1, 0, 2**63, 10**30, "exact_match", "k1"])]).flatmap(lambda strategy: strategy)

NUMBERS = st.sampled_from([0, -1, 0.5, 1e308, -1e308, 5e-324, 2**62, 2**63, 10**30, 10**300, None,
                           *map(raw, ["NaN", "Infinity", "-Infinity", "1e999", "9" * 400, "9" * 5000])])


def places(document) -> list[tuple]:
    """Every path in ``document``, the root first."""
    found, stack = [], [((), document)]
    while stack:
        path, value = stack.pop()
        found.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(((*path, key), child) for key, child in items)
    return found


def get(document, path: tuple):
    for key in path:
        document = document[key]
    return document


def put(document, path: tuple, value):
    if not path:
        return value
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return document


def write_text(document) -> str:
    return RAW.sub(lambda m: m[1], json.dumps(document))


@st.composite
def run_files(draw) -> bytes:
    document = json.loads(json.dumps(draw(st.sampled_from(RUNS))))  # a fresh copy
    pick = draw(st.randoms(use_true_random=False))  # a uniform choice of place, seeded by hypothesis
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "number", "duplicate"]))
        paths = places(document)[1:]  # never the root: the document stays an object
        numbers = [path for path in paths if isinstance(get(document, path), (int, float))]
        results = document["results"] if isinstance(document["results"], list) else []
        if kind == "duplicate" and results:
            results.append(json.loads(json.dumps(pick.choice(results))))  # the same identity, unless the file
            # has no occurrences, which are then numbered
        elif kind == "number" and numbers:
            document = put(document, pick.choice(numbers), draw(NUMBERS))
        else:
            document = put(document, pick.choice(paths), draw(VALUES))
    return mangle(draw, write_text(document).encode("utf-8"))


def mangle(draw, data: bytes) -> bytes:
    """Sometimes cut the bytes short or overwrite a few of them at random."""
    kind = draw(st.sampled_from(["keep", "keep", "keep", "keep", "keep", "truncate", "bytes"]))
    if kind == "truncate" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind == "bytes" and data:
        changed = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            changed[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(changed)
    return data


def quietly(function, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy and cogeval warn about degenerate data; only raising matters here
        return function(*args)


def test_the_example_copy_is_the_format_s_own_example():
    assert EXAMPLE.read_bytes() == format_example().read_bytes()  # skips when shared/ is missing, fails under CI
    assert load_run(EXAMPLE).run_id == "20261022T101530123Z-1a2b3c4d"


@FUZZ
@given(data=run_files())
def test_fuzzed_run_files_load_or_raise_cogeval_errors(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("runs")
    path = folder / "run.json"
    path.write_bytes(data)
    try:
        run = quietly(load_run, path)
    except CogevalError:
        run = None
    if run is not None:
        quietly(compare_runs, run, run)  # what loads can be compared
    try:  # RunStore parses with plain json.loads, then hands the data to run_from_json
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        pass  # reported by the store as "not UTF-8" / "not valid JSON"
    else:
        try:
            quietly(run_from_json, document, "run file 'x.json'")
        except CogevalError:
            pass
    skipped: list[dict[str, str]] = []
    listed = quietly(RunStore(folder, on_skip=skipped.append).list)
    assert len(listed) + len(skipped) <= 1


DATASET_VALUES = st.one_of(HOSTILE_TEXT, PLAIN.map(json.dumps))


@st.composite
def jsonl_files(draw) -> bytes:
    lines = (FIXTURES / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(["input", "expected", "context", "metadata", "turns", "extra"]))
        line = f'{{"input": "q", "{field}": {draw(DATASET_VALUES)}}}'
        lines.insert(draw(st.integers(0, len(lines))), line)
    return mangle(draw, "\n".join(lines).encode("utf-8"))


@st.composite
def csv_files(draw) -> tuple[bytes, bool]:
    rows = (FIXTURES / "cases.csv").read_text(encoding="utf-8").split("\n")
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(1, len(rows) - 1))
        change = draw(st.sampled_from(["extra", "fewer", "every-row-extra", "json-cell"]))
        if change == "extra":
            rows[index] += ",surplus"
        elif change == "fewer":
            rows[index] = rows[index].rsplit(",", 1)[0]
        elif change == "every-row-extra":
            rows = [rows[0], *(row + ",shift" for row in rows[1:] if row)]
        else:
            cell = draw(DATASET_VALUES).replace('"', '""')
            rows.insert(index, f'q,,,"{cell}",')
    data = "\n".join(rows).encode("utf-8")
    mangled = mangle(draw, data)
    return mangled, mangled == data


def read_dataset(folder: pathlib.Path, name: str, data: bytes) -> Dataset | None:
    path = folder / name
    path.write_bytes(data)
    reader = Dataset.from_csv if name.endswith(".csv") else Dataset.from_jsonl
    try:
        dataset = reader(path)
    except CogevalError:
        return None
    dataset.to_frame()  # what loads is usable
    assert len(dataset.fingerprint) == 64
    return dataset


@FUZZ
@given(data=jsonl_files())
def test_fuzzed_jsonl_datasets_load_or_raise_dataset_errors(tmp_path_factory, data):
    read_dataset(tmp_path_factory.mktemp("jsonl"), "cases.jsonl", data)


@FUZZ
@given(data=csv_files())
def test_fuzzed_csv_datasets_load_or_raise_dataset_errors(tmp_path_factory, data):
    text, intact = data
    dataset = read_dataset(tmp_path_factory.mktemp("csv"), "cases.csv", text)
    if dataset is not None and intact:  # read as written: every row as wide as the header, its input the first cell
        rows = [row for row in csv.reader(io.StringIO(text.decode("utf-8"), newline="")) if "".join(row).strip()]
        assert [len(row) for row in rows[1:]] == [len(rows[0])] * (len(rows) - 1)
        assert [case.input for case in dataset] == [row[0] or None for row in rows[1:]]


def test_a_csv_row_with_an_extra_field_is_never_read_shifted(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text("input,expected\nq,a,x\n", encoding="utf-8")
    with pytest.raises(CogevalError, match="row 1: 3 fields, but the header has 2"):
        Dataset.from_csv(path)
