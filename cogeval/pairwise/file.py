"""The pairwise file: what :meth:`~cogeval.PairwiseResult.save` writes and :func:`~cogeval.load_pairwise` reads.

``<id>.pairwise.json`` is JSON with snake_case keys, described by the pydantic
model :class:`PairwiseFile` (format ``"cogeval.pairwise"``, version 1), as the
run file is by :class:`~cogeval.EvalRun`. Reading validates, and an error names
the file and the field::

    pairwise file 'runs/x.pairwise.json' is invalid: verdicts.quality[2].winner: Input should be 'a', 'b' or 'tie'

The rules:

- a file with no ``format`` or ``version`` is read as version 1 (the keys
  have not changed since the first files were written);
- another ``format`` (a run file, say) or a newer ``version`` is refused by name;
- every comparator with verdicts has a description, and one verdict per task;
- ``label`` (the comparison's name, AG2's ``label``) is written only when set,
  so a file without one is as the first files were;
- values JSON cannot hold (bytes, objects in outputs or details) are written as
  their string form, so writing never fails.

>>> record = PairwiseFile.model_validate({"id": "20260101T000000000Z-0000abcd",
...     "created_at": "2026-01-01T00:00:00.000Z", "names": ["old", "new"], "comparators": {"j": {"kind": "judge"}},
...     "tasks": [{"task_id": "t1", "case_key": "t1", "case": {"input": "2+2"}, "output_a": "4", "output_b": "5"}],
...     "verdicts": {"j": [{"winner": "a"}]}})
>>> record.format, record.version, record.verdicts["j"][0].winner
('cogeval.pairwise', 1, 'a')
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from cogeval._check import check_path, describe
from cogeval.data.json_limits import loads
from cogeval.data.jsonable import jsonable
from cogeval.data.records import CheckedCase
from cogeval.data.run_id import check_run_id
from cogeval.data.runfile import describe_errors
from cogeval.errors import InputError, RunFileError
from cogeval.pairwise.verdict import PairTask, Verdict, check_names

FORMAT: Literal["cogeval.pairwise"] = "cogeval.pairwise"
VERSION: Literal[1] = 1
_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}

Winner = Literal["a", "b", "tie"]


def check_label(label: Any) -> str | None:
    """``label`` as given: ``None`` or a non-empty string naming the comparison, else :class:`InputError`.

    >>> check_label("prompt v2 vs v1")
    'prompt v2 vs v1'
    >>> check_label("")
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: label must be None or a non-empty string naming the comparison; got ''
    """
    if label is None or (isinstance(label, str) and label.strip()):
        return label
    raise InputError(f"label must be None or a non-empty string naming the comparison; got {describe(label)}")


class _Record(BaseModel):
    """Base of every part of the file: snake_case keys, unknown keys refused (they would be lost), and each
    field's docstring as its description in the JSON schema."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, defer_build=True)


class TaskRecord(_Record):
    """``tasks[]``: one task both variants answered."""

    task_id: str = Field(min_length=1)
    """The task's id: the case key, then ``#k`` for the k-th repeat (or a trace's own ``task_id``)."""
    case_key: str
    """The case's key (``Case.key``)."""
    case: CheckedCase
    """The case the comparators saw, as ``Case.to_dict`` writes it."""
    output_a: Any
    """What variant A answered (JSON; ``null`` when it failed)."""
    output_b: Any
    """What variant B answered."""
    error_a: str | None = None
    """Why A's target failed, or ``null`` when it answered."""
    error_b: str | None = None
    """Why B's target failed, or ``null`` when it answered."""

    def to_task(self) -> PairTask:
        """This record as a :class:`~cogeval.pairwise.PairTask`."""
        return PairTask(self.task_id, self.case_key, self.case.to_case(), self.output_a, self.output_b,
                        self.error_a, self.error_b)


class VerdictRecord(_Record):
    """``verdicts[key][]``: one comparator's decision on one task (a :class:`~cogeval.pairwise.Verdict`)."""

    winner: Winner | None
    """``"a"``, ``"b"``, ``"tie"``, or ``null``: no verdict, ``error`` says why."""
    ab: Winner | None = None
    """The verdict given with A shown first, or ``null`` when that order was not shown."""
    ba: Winner | None = None
    """The verdict given with B shown first, or ``null`` when that order was not shown."""
    reasoning: str | None = None
    """A judge's reasoning, or why a failed target lost."""
    error: str | None = None
    """Why there is no verdict (``"not labelled yet"``: a widget was still waiting)."""
    details: dict[str, Any] = Field(default_factory=dict)
    """The rest: the order a person saw (``first``), a judge's usage and unusable answers."""

    def to_verdict(self) -> Verdict:
        """This record as a :class:`~cogeval.pairwise.Verdict`."""
        return Verdict(self.winner, self.ab, self.ba, self.reasoning, self.error, self.details)


class PairwiseFile(_Record):
    """One head-to-head result, as stored in a pairwise file (format ``cogeval.pairwise``, version 1)."""

    format: Literal["cogeval.pairwise"] = FORMAT
    """The format's name; a file without it is read as this format."""
    version: Literal[1] = VERSION
    """The format version: 1; a file without it is read as version 1."""
    id: str
    """The result's id, shaped like a run id (UTC time, ``-``, 8 hex digits); also its file name."""
    created_at: str
    """When the comparators started, ISO 8601 in UTC (``2026-01-01T00:00:00.000Z``)."""
    names: tuple[str, str]
    """The names of A and B: two different non-empty strings."""
    label: str | None = Field(default=None, min_length=1)
    """The comparison's name (``run_pairwise(..., label=)``, AG2's ``label``), or ``null``; left out when ``null``."""
    comparators: dict[str, dict[str, Any]]
    """Comparator key → how it decides: ``kind``, and a judge's ``criterion``, ``swap`` and ``judge``, or a
    person's ``seed``."""
    tasks: list[TaskRecord]
    """The tasks, in order."""
    verdicts: dict[str, list[VerdictRecord]]
    """Comparator key → one verdict per task, in the tasks' order."""

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_run_id(value)

    @field_validator("names")
    @classmethod
    def _valid_names(cls, value: tuple[str, str]) -> tuple[str, str]:
        return check_names(value)

    @field_validator("verdicts")
    @classmethod
    def _one_per_task(cls, value: dict[str, list[VerdictRecord]], info: ValidationInfo) -> Any:
        tasks, comparators = info.data.get("tasks"), info.data.get("comparators")
        for key, items in value.items():
            if comparators is not None and key not in comparators:
                raise ValueError(f"comparator {key!r} has verdicts but no description in 'comparators'")
            if tasks is not None and len(items) != len(tasks):
                raise ValueError(f"comparator {key!r} has {len(items)} verdicts for {len(tasks)} tasks; "
                                 "it needs one verdict per task")
        return value

    @classmethod
    def from_parts(cls, ident: str, created_at: str, names: Sequence[str], comparators: Mapping[str, Any],
                   tasks: Sequence[PairTask], verdicts: Mapping[str, Sequence[Verdict]],
                   label: str | None = None) -> PairwiseFile:
        """The file of a result, its values made JSON-safe."""
        return cls.model_validate(jsonable({
            "id": ident, "created_at": created_at, "names": list(names), "label": label,
            "comparators": dict(comparators),
            "tasks": [{"task_id": t.task_id, "case_key": t.case_key, "case": t.case.to_dict(), "output_a": t.output_a,
                       "output_b": t.output_b, "error_a": t.error_a, "error_b": t.error_b} for t in tasks],
            "verdicts": {key: [{"winner": v.winner, "ab": v.ab, "ba": v.ba, "reasoning": v.reasoning, "error": v.error,
                                "details": dict(v.details)} for v in items] for key, items in verdicts.items()},
        }))

    def to_dict(self) -> dict[str, Any]:
        """The file's content (JSON data), keys in the order written; no ``label`` key when it is ``null``."""
        data = self.model_dump(mode="json")
        if data["label"] is None:
            del data["label"]
        return data

    def to_json(self) -> str:
        """The file's text: indented UTF-8 JSON, ending with a newline."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def read_pairwise_file(path: str | os.PathLike[str]) -> PairwiseFile:
    """Read and validate the pairwise file at ``path``.

    A missing file raises ``FileNotFoundError``; anything else wrong raises
    :class:`~cogeval.errors.RunFileError` naming the file and, for a schema
    error, the field (``tasks[0].case_key: Field required``).
    """
    path = check_path("path", path)
    where = f"pairwise file '{path}'"
    try:
        data = loads(path.read_bytes().decode("utf-8-sig"), f"{where} is invalid", error=RunFileError)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "pairwise file not found", str(path)) from None
    except UnicodeDecodeError as error:
        raise RunFileError(f"{where} is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise RunFileError(f"{where} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise RunFileError(f"{where} must hold a JSON object; got {_JSON_TYPES.get(type(data), 'a value')}")
    if "format" in data and data["format"] != FORMAT:
        raise RunFileError(f"{where} has format {describe(data['format'])}; expected {FORMAT!r}")
    if "version" in data and (data["version"] != VERSION or isinstance(data["version"], bool)):
        raise RunFileError(f"{where} has version {describe(data['version'])}; this cogeval reads version {VERSION}")
    try:
        return PairwiseFile.model_validate(data)
    except ValidationError as error:
        raise RunFileError(f"{where} is invalid: {describe_errors(error)}") from None
