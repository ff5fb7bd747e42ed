"""A store's table as a Hive-partitioned Parquet folder, one file per run, for lazy reads of thousands of runs.

- ``partition_by="run_id"``: ``<folder>/run_id=<id>/<id>.parquet``, the ``run_id`` column in the path
  only (readers add it back from there); ``"name"``: ``name=<name>/<id>.parquet`` (a run without a name
  in ``name=__HIVE_DEFAULT_PARTITION__``, Hive's null); ``"day"``: ``day=<YYYY-MM-DD>/<id>.parquet``, the
  UTC day the run started;
- a value is written URI-encoded (``nightly v2/α`` as ``nightly%20v2%2F%CE%B1``), as pyarrow reads it;
- runs are read and written one at a time, so the store never has to fit in memory;
- the folder is written whole beside its place, then put there (replacing one written before); a folder
  holding anything else (not partitions of ``.parquet`` files) is never replaced.

>>> partition_value("name", {"name": "nightly v2/α", "started_at": "2026-01-02T23:30:00-02:00"})
'nightly%20v2%2F%CE%B1'
>>> partition_value("day", {"name": None, "started_at": "2026-01-02T23:30:00-02:00"})
'2026-01-03'
"""

from __future__ import annotations

import datetime
import os
import pathlib
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterable
from typing import Any

from cogeval._files import write_parquet_atomic
from cogeval.errors import InputError

PARTITIONS = ("run_id", "name", "day")
"""What :meth:`RunStore.to_parquet`'s ``partition_by`` takes."""
_NULL = "__HIVE_DEFAULT_PARTITION__"
_PARTITION = re.compile(r"[A-Za-z_]+=[^/]*")


def partition_value(partition_by: str, summary: dict[str, Any]) -> str:
    """The folder name's value of the run with this store summary (``id``, ``name``, ``started_at``)."""
    if partition_by == "run_id":
        value = summary["id"]
    elif partition_by == "name":
        value = summary["name"]
    else:
        moment = datetime.datetime.fromisoformat(summary["started_at"])
        value = (moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)).astimezone(datetime.UTC).date().isoformat()
    return _NULL if value is None else urllib.parse.quote(str(value), safe="")


def write_partitioned(path: pathlib.Path, partition_by: str, parts: Iterable[tuple[str, str, Any]]) -> pathlib.Path:
    """Write ``parts`` (partition value, file stem, DataFrame) as ``path/<partition_by>=<value>/<stem>.parquet``;
    returns ``path``. The folder is made beside ``path``, then put in its place."""
    if path.exists() and not _written_here(path):
        raise InputError(f"path {str(path)!r} holds other files than a partitioned table; give a new folder, or "
                         "one to_parquet(partition_by=...) wrote before (it is replaced)")
    path.parent.mkdir(parents=True, exist_ok=True)
    building = pathlib.Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        for value, stem, frame in parts:
            write_parquet_atomic(building / f"{partition_by}={value}" / f"{stem}.parquet", frame)
        os.chmod(building, 0o777 & ~_umask())
        if path.exists():
            old = pathlib.Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / path.name)
            os.replace(building, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(building, path)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return path


def _written_here(path: pathlib.Path) -> bool:
    """Whether ``path`` is a folder of ``key=value`` folders of ``.parquet`` files (or empty): one to replace."""
    if not path.is_dir() or path.is_symlink():
        return False
    for entry in path.iterdir():
        if not (entry.is_dir() and not entry.is_symlink() and _PARTITION.fullmatch(entry.name)):
            return False
        if any(not (f.is_file() and f.suffix == ".parquet") for f in entry.iterdir()):
            return False
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
