"""An immutable, ordered sequence of cases, read from records, JSONL, CSV or a DataFrame.

>>> data = Dataset.from_records([{"input": "2+2?", "expected": "4"}, {"input": "3+3?", "difficulty": "easy"}])
>>> len(data), data[1].metadata
(2, {'difficulty': 'easy'})
>>> data.to_frame()[["occurrence", "input", "expected"]]
   occurrence input expected
0           0  2+2?        4
1           0  3+3?     None

A record holds ``input`` (required unless ``turns`` is given), ``expected``,
``context``, ``metadata`` and ``turns``; any other field is kept in
``metadata``. A malformed file, line, row or record raises
:class:`~cogeval.errors.DatasetError` naming the file, line or row, and field;
so does JSON beyond the limits of :mod:`cogeval.data.json_limits` (nesting, numbers).
"""

from __future__ import annotations

import csv
import errno
import functools
import io
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from numbers import Integral
from pathlib import Path
from typing import Any, overload

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_path, check_positive_int, check_seed, describe
from cogeval._html import html_table, safe_html
from cogeval._text import cut
from cogeval.data.canonical import canonical_json
from cogeval.data.case import FIELDS, Case, sha256_hex
from cogeval.data.json_limits import loads
from cogeval.errors import DatasetError, InputError

_FRAME_COLUMNS = (*col.CASES_COLUMNS, col.TURNS)
_DERIVED = (col.CASE_KEY, col.OCCURRENCE)
_CSV_JSON_FIELDS = (col.METADATA, col.TURNS)  # cells must hold JSON
_CSV_MAYBE_JSON_FIELDS = (col.EXPECTED, col.CONTEXT)  # cells starting with { or [ are decoded when valid JSON
_PREVIEW_ROWS = 10
_PREVIEW_CHARS = 200


class Dataset(Sequence[Case]):
    """Cases in order (duplicates allowed), with an optional ``name``.

    Indexing with an int gives a :class:`Case`, with a slice a ``Dataset``.
    Every method returns a new dataset; none changes this one.

    >>> data = Dataset([Case("a"), Case("b"), Case("c")], name="letters")
    >>> [case.input for case in data.shuffle(seed=3)]
    ['c', 'b', 'a']
    >>> data[:2]
    Dataset(name='letters', cases=2, fingerprint='79699ad471d5')
    """

    def __init__(self, cases: Iterable[Case] = (), name: str | None = None) -> None:
        self._cases = tuple(cases)
        for index, case in enumerate(self._cases):
            if not isinstance(case, Case):
                raise InputError(
                    f"cases[{index}] must be a Case; got {describe(case)} (use Dataset.from_records for dicts)"
                )
        if name is not None and not isinstance(name, str):
            raise InputError(f"name must be a string or None; got {describe(name)}")
        self._name = name

    # -- reading ---------------------------------------------------------------

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, name: str | None = None) -> Dataset:
        """Cases from dicts (see :meth:`Case.from_dict`); errors name ``records[i]``."""
        return cls(_cases((f"records[{index}]", record) for index, record in enumerate(records)), name=name)

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], *, name: str | None = None) -> Dataset:
        """Cases from a UTF-8 JSON Lines file, one object per line; blank lines are skipped.

        ``name`` defaults to the file name without its extension. An empty file
        gives an empty dataset.
        """
        path = _existing(path)
        return cls(_cases(_jsonl_records(path)), name=path.stem if name is None else name)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], *, name: str | None = None) -> Dataset:
        """Cases from a UTF-8 CSV file with a header row; cells are read as text.

        An empty cell is ``None``; other cells stay strings (``"007"`` stays
        ``"007"``), except that ``metadata`` and ``turns`` cells must hold JSON
        (an object, a list), and ``expected`` and ``context`` cells that start
        with ``{`` or ``[`` and parse as JSON are decoded. Extra columns go into
        ``metadata``. Rows are counted from 1 below the header; a row with more
        or fewer fields than the header is refused (never read shifted).
        """
        path = _existing(path)
        name = path.stem if name is None else name
        try:
            text = path.read_bytes().decode("utf-8-sig")
            _check_field_counts(path, text)
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, index_col=False)
        except pd.errors.EmptyDataError:
            return cls(name=name)
        except (pd.errors.ParserError, UnicodeDecodeError) as error:
            raise DatasetError(f"{path}: cannot read as CSV: {error}") from None
        _require_input_column(str(path), frame)
        rows = (
            (f"{path}, row {number}", _csv_record(f"{path}, row {number}", row))
            for number, row in enumerate(frame.to_dict("records"), start=1)
        )
        return cls(_cases(rows), name=name)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, name: str | None = None) -> Dataset:
        """Cases from a DataFrame, one per row (the inverse of :meth:`to_frame`).

        Missing values (None, NaN) are ``None``; ``case_key`` and ``occurrence``
        are derived, so they are ignored; other extra columns go into ``metadata``.
        """
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"frame must be a pandas DataFrame; got {describe(frame)}")
        _require_input_column("frame", frame)
        columns = [column for column in frame.columns if column not in _DERIVED]
        rows = (
            (f"frame row {label!r}", {column: missing_to_none(record[column]) for column in columns})
            for label, record in zip(frame.index, frame[columns].to_dict("records"))
        )
        return cls(_cases(rows), name=name)

    # -- the sequence ------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The dataset's name, or ``None``."""
        return self._name

    def __len__(self) -> int:
        return len(self._cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self._cases)

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | slice) -> Case | Dataset:
        if isinstance(index, slice):
            return Dataset(self._cases[index], name=self._name)
        if isinstance(index, Integral) and not isinstance(index, bool):
            return self._cases[index]
        raise TypeError(f"Dataset indices must be integers or slices, not {type(index).__name__}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dataset):
            return NotImplemented
        return self._name == other._name and self._cases == other._cases

    def __hash__(self) -> int:
        return hash((self._name, self.fingerprint))

    def __repr__(self) -> str:
        return f"Dataset(name={self._name!r}, cases={len(self)}, fingerprint={self.fingerprint[:12]!r})"

    # -- new datasets ------------------------------------------------------------

    def filter(self, predicate: Callable[[Case], Any]) -> Dataset:
        """The cases for which ``predicate(case)`` is true, in order."""
        return Dataset((case for case in self._cases if predicate(case)), name=self._name)

    def sample(self, n: int, *, seed: int | np.random.Generator | None = None) -> Dataset:
        """``n`` cases drawn without replacement, kept in dataset order (use :meth:`shuffle` to mix them).

        >>> Dataset([Case(str(i)) for i in range(10)]).sample(3, seed=7).to_records()
        [{'input': '5'}, {'input': '6'}, {'input': '7'}]
        """
        n = check_positive_int("n", n, minimum=0)
        if n > len(self):
            raise InputError(f"n must be at most the number of cases ({len(self)}); got {n}")
        chosen = np.sort(np.random.default_rng(check_seed("seed", seed)).choice(len(self), size=n, replace=False))
        return Dataset((self._cases[i] for i in chosen), name=self._name)

    def shuffle(self, *, seed: int | np.random.Generator | None = None) -> Dataset:
        """All cases in a random order drawn from ``numpy.random.default_rng(seed)``."""
        order = np.random.default_rng(check_seed("seed", seed)).permutation(len(self))
        return Dataset((self._cases[i] for i in order), name=self._name)

    # -- identity and tables -------------------------------------------------------

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 hex of the canonical JSON of the list of case dicts, in order, duplicates included."""
        return sha256_hex([case.to_dict() for case in self._cases])

    def to_records(self) -> list[dict[str, Any]]:
        """The cases as dicts (``None`` fields absent); ``from_records`` reads them back."""
        return [case.to_dict() for case in self._cases]

    def to_frame(self) -> pd.DataFrame:
        """The tidy ``cases`` table: ``case_key, occurrence, input, expected, context, metadata, turns``.

        ``occurrence`` counts 0, 1, 2... among cases with the same key, in order.
        """
        seen: dict[str, int] = {}
        occurrences = []
        for case in self._cases:
            occurrences.append(seen.get(case.key, 0))
            seen[case.key] = occurrences[-1] + 1
        columns = {
            col.CASE_KEY: pd.Series([case.key for case in self._cases], dtype=object),
            col.OCCURRENCE: pd.Series(occurrences, dtype="int64"),
            **{f: pd.Series([getattr(case, f) for case in self._cases], dtype=object) for f in FIELDS},
        }
        return pd.DataFrame(columns)[list(_FRAME_COLUMNS)]

    @safe_html
    def _repr_html_(self) -> str:
        title = "Dataset" if self._name is None else f"Dataset {self._name!r}"
        shown = f" (first {_PREVIEW_ROWS} shown)" if len(self) > _PREVIEW_ROWS else ""
        caption = f"{title} · {len(self)} cases{shown} · fingerprint {self.fingerprint[:12]}"
        rows = [
            {col.CASE_KEY: case.key[:12], **{f: _preview(getattr(case, f)) for f in FIELDS}}
            for case in self._cases[:_PREVIEW_ROWS]
        ]
        return html_table(rows, (col.CASE_KEY, *FIELDS), caption=caption, max_rows=_PREVIEW_ROWS)


def _cases(located: Iterable[tuple[str, Any]]) -> Iterator[Case]:
    for where, record in located:
        try:
            yield Case.from_dict(record)
        except DatasetError as error:
            raise DatasetError(f"{where}: {error}") from None


def _existing(path: str | os.PathLike[str]) -> Path:
    path = check_path("path", path)
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "dataset file not found", str(path))
    return path


def _jsonl_records(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open("rb") as file:
        for number, raw in enumerate(file, start=1):
            where = f"{path}, line {number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise DatasetError(f"{where}: not UTF-8 text ({error.reason} at byte {error.start})") from None
            if not line.strip():
                continue
            try:
                yield where, loads(line, where, error=DatasetError)
            except json.JSONDecodeError as error:
                raise DatasetError(f"{where}: invalid JSON: {error.msg} (column {error.colno})") from None


def _require_input_column(source: str, frame: pd.DataFrame) -> None:
    if col.INPUT not in frame.columns and col.TURNS not in frame.columns:
        found = ", ".join(repr(str(c)) for c in frame.columns) or "none"
        raise DatasetError(f"{source} has no 'input' column (nor 'turns'); its columns are {found}")


def _check_field_counts(path: Path, text: str) -> None:
    """Refuse a row with more or fewer fields than the header, which pandas would read shifted or padded.

    Rows are counted as :meth:`Dataset.from_csv` counts them (blank lines skipped); text
    the ``csv`` module cannot split is left for pandas to report. The ``csv`` module's
    limit on a field's size (a setting of the whole process) is lifted while it reads.
    """
    header: list[str] | None = None
    number = 0
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    try:
        for fields in csv.reader(io.StringIO(text, newline="")):
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue  # a blank line, which pandas skips too
            if header is None:
                header = fields
                continue
            number += 1
            if len(fields) != len(header):
                columns = ", ".join(describe(c, 30) for c in header[:8]) + (", ..." if len(header) > 8 else "")
                hint = "quote a cell that holds a comma" if len(fields) > len(header) else "an empty cell is None"
                raise DatasetError(
                    f"{path}, row {number}: {len(fields)} field{'s' if len(fields) > 1 else ''}, but the header has "
                    f"{len(header)} ({columns}); every row needs one cell per column ({hint})"
                )
    except csv.Error:
        return
    finally:
        csv.field_size_limit(limit)


def _csv_record(where: str, row: Mapping[Any, str]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for column, text in row.items():
        if text == "":
            record[column] = None
        elif column in _CSV_JSON_FIELDS:
            try:
                record[column] = loads(text, f"{where}: field {column!r}", error=DatasetError)
            except json.JSONDecodeError as error:
                raise DatasetError(
                    f"{where}: field {column!r} must hold JSON; {error.msg} (column {error.colno}) in {describe(text)}"
                ) from None
        elif column in _CSV_MAYBE_JSON_FIELDS and text.lstrip()[:1] in ("{", "["):
            try:
                record[column] = loads(text, f"{where}: field {column!r}", error=DatasetError)
            except json.JSONDecodeError:
                record[column] = text
        else:
            record[column] = text
    return record


def missing_to_none(value: Any) -> Any:
    """``None`` for a missing frame cell (None, NaN, pd.NA, NaT), else the value."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _preview(value: Any) -> Any:
    if value is None:
        return None
    return cut(value if isinstance(value, str) else canonical_json(value), _PREVIEW_CHARS)
