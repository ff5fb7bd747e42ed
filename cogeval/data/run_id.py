"""Run identities: ids that sort by start time, and their validation (DESIGN §5).

A run id is the UTC start time ``YYYYMMDDTHHMMSSmmmZ``, a dash and 8 random hex
digits, so run files sort by start time by name.

>>> import datetime
>>> new_run_id(datetime.datetime(2026, 10, 22, 10, 15, 30, 123456, tzinfo=datetime.timezone.utc))[:20]
'20261022T101530123Z-'
"""

from __future__ import annotations

import datetime
import re
import secrets

from cogeval._check import describe
from cogeval.errors import InputError

_RUN_ID_PATTERN = re.compile(r"[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}")
"""The whole run id (ASCII digits only, matched with ``fullmatch``: ``$`` would let a trailing newline through)."""


def utc_now() -> datetime.datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.datetime.now(datetime.UTC)


def iso_utc(moment: datetime.datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a ``Z``: ``2026-10-22T10:15:30.123Z``."""
    moment = moment.astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_run_id(started_at: datetime.datetime) -> str:
    """A fresh run id for a run started at ``started_at``."""
    moment = started_at.astimezone(datetime.UTC)
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f"{moment.microsecond // 1000:03d}Z"
    return f"{stamp}-{secrets.token_hex(4)}"


def check_run_id(run_id: object) -> str:
    """Return ``run_id`` if it has the run-id shape, all of it, so it is safe as a file name.

    >>> check_run_id("20261022T101530123Z-1a2b3c4d\\n")
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got '20261022T101530123Z-1a2b3c4d\\n'
    """
    if not isinstance(run_id, str) or not _RUN_ID_PATTERN.fullmatch(run_id):
        raise InputError(
            f"run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got {describe(run_id)}"
        )
    return run_id
