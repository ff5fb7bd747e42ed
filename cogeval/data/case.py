"""One evaluation case: an input, what is expected, and its identity ``key``.

>>> case = Case("What is 2+2?", expected="4")
>>> case.to_dict()
{'input': 'What is 2+2?', 'expected': '4'}
>>> case.key[:12]
'990ca836ae07'

A field that is ``None`` is absent (left out of ``to_dict``, the key and the
fingerprint); a ``None`` nested inside a value is JSON ``null``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from cogeval import _columns as col
from cogeval._check import describe
from cogeval.data.canonical import canonical_json
from cogeval.data.json_limits import MAX_CASE_DEPTH, check_depth, is_plain_json
from cogeval.errors import DatasetError, InputError

FIELDS = (col.INPUT, col.EXPECTED, col.CONTEXT, col.METADATA, col.TURNS)
_KEY_FIELDS = (col.INPUT, col.TURNS, col.EXPECTED)


def sha256_hex(value: Any) -> str:
    """SHA-256 hex digest of the canonical JSON of ``value`` (UTF-8)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    """A case to run: every field holds JSON data (str, number, bool, None, list, dict).

    - ``input``: what the target receives, usually a string. It may be ``None``
      only in a multi-turn case, i.e. when ``turns`` is given; it is never filled
      in from the turns, so the key matches the record as written.
    - ``expected``: the reference answer, if any.
    - ``context``: retrieved documents or other grounding (not part of the key).
    - ``metadata``: a dict of labels such as ``{"difficulty": "hard"}`` (not part of the key).
    - ``turns``: for a multi-turn case, a non-empty list of user messages, each a
      string or a dict such as ``{"role": "user", "content": "Hi"}``.

    Two cases are equal when their canonical JSON is equal. Treat the values as
    read-only: the key is computed once.

    >>> Case(turns=["Hi", "And in French?"]).to_dict()
    {'turns': ['Hi', 'And in French?']}
    >>> Case("q", metadata=["hard"])
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: Case field 'metadata' must be a dict (a JSON object); got ['hard']
    """

    input: Any = None
    expected: Any = None
    context: Any = None
    metadata: dict[str, Any] | None = None
    turns: list[Any] | None = None

    def __post_init__(self) -> None:
        if self.input is None and self.turns is None:
            raise InputError("Case field 'input' is required (or give 'turns' for a multi-turn case)")
        if self.metadata is not None and not isinstance(self.metadata, Mapping):
            raise InputError(f"Case field 'metadata' must be a dict (a JSON object); got {describe(self.metadata)}")
        if self.turns is not None:
            object.__setattr__(self, col.TURNS, _checked_turns(self.turns))
        for name in FIELDS:
            value = getattr(self, name)
            if value is not None and not is_plain_json(value, MAX_CASE_DEPTH):  # plain JSON passes both checks
                check_depth(value, name, label=f"Case field {name!r}")  # before canonical_json, which recurses
                try:
                    canonical_json(value, name=name)
                except InputError as error:
                    raise InputError(f"Case field {name!r} is not JSON data: {error}") from None

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Case:
        """Build a case from a record; fields other than the five go into ``metadata``.

        Raises :class:`~cogeval.errors.DatasetError` naming the field.

        >>> Case.from_dict({"input": "q", "difficulty": "hard"}).metadata
        {'difficulty': 'hard'}
        """
        if not isinstance(record, Mapping):
            raise DatasetError(f"a case record must be a JSON object (a dict); got {describe(record)}")
        fields = {name: record.get(name) for name in FIELDS}
        extra = {key: value for key, value in record.items() if key not in FIELDS}
        if extra:
            metadata = fields[col.METADATA]
            if metadata is not None and not isinstance(metadata, Mapping):
                raise DatasetError(f"Case field 'metadata' must be a dict (a JSON object); got {describe(metadata)}")
            both = sorted(str(key) for key in extra if key in (metadata or {}))
            if both:
                raise DatasetError(
                    f"field {both[0]!r} is given both as a record field and as a key of 'metadata'; keep one of them"
                )
            fields[col.METADATA] = {**(metadata or {}), **extra}
        try:
            return cls(**fields)
        except DatasetError:
            raise
        except InputError as error:
            raise DatasetError(str(error)) from None

    @functools.cached_property
    def key(self) -> str:
        """SHA-256 hex of the canonical JSON of ``{input, turns, expected}`` (absent fields left out)."""
        return sha256_hex({name: getattr(self, name) for name in _KEY_FIELDS if getattr(self, name) is not None})

    def to_dict(self) -> dict[str, Any]:
        """The fields that are not ``None``, in the order input, expected, context, metadata, turns."""
        return {name: getattr(self, name) for name in FIELDS if getattr(self, name) is not None}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Case):
            return NotImplemented
        return canonical_json(self.to_dict()) == canonical_json(other.to_dict())

    def __hash__(self) -> int:
        return hash(canonical_json(self.to_dict()))


def _checked_turns(turns: Any) -> list[Any]:
    if isinstance(turns, (str, Mapping)) or not isinstance(turns, (list, tuple)) or not turns:
        raise InputError(
            "Case field 'turns' must be a non-empty list of user messages (strings or dicts); "
            f"got {describe(turns)}"
        )
    for index, turn in enumerate(turns):
        if not isinstance(turn, (str, Mapping)):
            raise InputError(
                f"Case field 'turns' must hold strings or dicts; turns[{index}] is {describe(turn)}"
            )
    return list(turns)
