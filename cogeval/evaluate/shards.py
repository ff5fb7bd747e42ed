"""Shards: which cases of a dataset a shard run (``suite.run(shard=(index, count))``) runs.

- a case belongs to shard ``int(sha256(f"{case_key}:{occurrence}").hexdigest(), 16) % count``;
- so the split depends on the cases alone: not on their order, the machine or the Python process;
- a repeated case's copies (occurrence 0, 1, ...) are split like any two cases, each whole with its trials;
- every case falls in exactly one shard; a shard may hold no case (a small dataset, many shards);
- a shard run records ``shard: {index, count}``, the whole dataset's fingerprint and case count, and each
  result's ``caseIndex`` (its case's position in the dataset), which :func:`~cogeval.merge_runs` orders by.

>>> from cogeval import Case
>>> cases = [Case(f"q{i}") for i in range(8)] + [Case("q0")]  # q0 twice: occurrences 0 and 1
>>> parts = [shard_jobs(cases, 1, (index, 3)) for index in range(3)]
>>> sorted(job for part in parts for job in part) == list(range(9))
True
>>> shard_of(Case("q0").key, 0, 3) == shard_of(Case("q0").key, 0, 3)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from cogeval._check import describe
from cogeval.data import Case
from cogeval.errors import InputError


def check_shard(shard: Any) -> tuple[int, int]:
    """``shard`` as ``(index, count)``: two integers with ``0 <= index < count``; else an InputError naming it.

    >>> check_shard((1, 4))
    (1, 4)
    >>> check_shard((4, 4))
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: shard must be (index, count): integers with 0 <= index < count, e.g. shard=(0, 4) for the first of 4 shards; got (4, 4)
    """
    pair = tuple(shard) if isinstance(shard, (tuple, list)) else None
    if (pair is None or len(pair) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
            or not 0 <= pair[0] < pair[1]):
        raise InputError("shard must be (index, count): integers with 0 <= index < count, e.g. shard=(0, 4) for the "
                         f"first of 4 shards; got {describe(shard)}")
    return pair[0], pair[1]


def shard_of(case_key: str, occurrence: int, count: int) -> int:
    """The shard (of ``count``) that the case with this key and occurrence belongs to.

    >>> shard_of("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 0, 4)
    3
    """
    return int(hashlib.sha256(f"{case_key}:{occurrence}".encode()).hexdigest(), 16) % count


def case_shards(cases: Sequence[Case], count: int) -> list[int]:
    """The shard (of ``count``) of each case of ``cases``, in order."""
    seen: dict[str, int] = {}
    shards = []
    for case in cases:
        key = case.key
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        shards.append(shard_of(key, occurrence, count))
    return shards


def shard_jobs(cases: Sequence[Case], trials: int, shard: tuple[int, int]) -> list[int]:
    """The jobs (``position · trials + trial``) of the cases of ``cases`` in ``shard``, in order."""
    index, count = shard
    return [position * trials + trial for position, of in enumerate(case_shards(cases, count)) if of == index
            for trial in range(trials)]


def shard_text(shard: tuple[int, int] | None) -> str:
    """``"shard 1 of 4"``, or ``"a whole run (no shard)"``, for messages."""
    return "a whole run (no shard)" if shard is None else f"shard {shard[0]} of {shard[1]}"
