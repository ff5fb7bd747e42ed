"""Atomic file writes: a file on disk is never left half-written, and writing never fails on text (DESIGN §5).

- the text goes to a hidden temporary file ``.<name>.<8 random characters>.tmp`` in the same
  folder, then ``os.replace`` puts it in place; a process killed in between can leave that
  temporary behind: :func:`remove_stale_temporaries` (run when a ``RunStore`` is opened) removes
  those older than an hour;
- a lone surrogate (``"\\ud83d"``, half an emoji cut at ``max_tokens``), which UTF-8 cannot
  encode, is written as the six characters ``\\ud83d``: inside a JSON string that is the JSON
  escape of the same character, so the file reads back unchanged; in other text it is a visible escape;
- every report writer names its files by one rule, :func:`report_paths`: a path without the kind's
  suffix gets it, a path ending in ``/`` (or an existing folder) is a folder.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.txt"
>>> write_text_atomic(path, "hello").read_text()
'hello'
>>> write_text_atomic(path, "half \\ud83d").read_text()
'half \\\\ud83d'
"""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Sequence
from typing import Any

_STALE_AFTER_S = 3600.0
"""Age in seconds after which a leftover temporary file of :func:`write_text_atomic` is removed."""

_PIECES_PER_WRITE = 16384
"""Pieces of text joined into one write: few calls, little memory."""

_TEMPORARY = re.compile(r"\..+\.[0-9a-z_]{8}\.tmp")
"""The name ``tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")`` gives."""


def write_text_atomic(path: str | os.PathLike[str], text: str | Iterable[str]) -> pathlib.Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and ``os.replace``.

    ``text`` may come in pieces (``json.JSONEncoder.iterencode``), so that a large file is never held whole.
    Missing parent folders are created. A lone surrogate in ``text`` is written as ``\\udXXX``
    (see the module's rules). Returns the path written.
    """
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would make reports unreadable to others
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                pieces = iter(text)
                while batch := list(itertools.islice(pieces, _PIECES_PER_WRITE)):
                    handle.write("".join(batch))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return target


def write_parquet_atomic(path: str | os.PathLike[str], frame: Any) -> pathlib.Path:
    """Write a DataFrame as Parquet (pyarrow) to ``path``, atomically as :func:`write_text_atomic` does.

    Columns of mixed Python values (inputs that are text in one row and a dict in another) are written
    as text: each non-text value as its JSON, so a Parquet reader gets one type per column.
    """
    try:
        import pyarrow  # type: ignore[import-untyped]  # noqa: F401 - the engine pandas uses; a clear message when missing
    except ImportError:
        from cogeval.errors import InputError

        raise InputError("writing Parquet needs pyarrow: pip install 'cogeval[parquet]' (or pip install pyarrow)") from None
    from pandas.api.types import is_object_dtype

    from cogeval._text import as_text

    frame = frame.copy()
    for name in frame.columns:
        if is_object_dtype(frame[name]):
            frame[name] = [None if v is None else as_text(v) for v in frame[name]]
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        frame.to_parquet(temporary, index=False)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def remove_stale_temporaries(folder: str | os.PathLike[str], older_than_s: float = _STALE_AFTER_S) -> list[pathlib.Path]:
    """Remove the temporary files :func:`write_text_atomic` left in ``folder`` (a process killed
    mid-write) that were last modified more than ``older_than_s`` seconds ago; returns the paths removed.

    Younger ones are kept: another process may be writing them. Only regular files named like
    ``.<name>.<8 characters>.tmp`` are touched; anything that cannot be listed or removed is left alone.
    """
    removed: list[pathlib.Path] = []
    deadline = time.time() - older_than_s
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMPORARY.fullmatch(entry.name):
            continue
        try:
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(status.st_mode) and status.st_mtime < deadline:
                os.unlink(entry.path)
                removed.append(pathlib.Path(entry.path))
        except OSError:
            continue
    return removed


def is_folder_path(path: str | os.PathLike[str]) -> bool:
    """Whether a report ``path`` names a folder: it ends in ``/`` (or ``\\``), or is an existing folder."""
    return str(path).endswith(("/", "\\")) or pathlib.Path(path).is_dir()


def report_paths(path: str | os.PathLike[str], suffixes: Sequence[str], *, default_name: str,
                 known: Iterable[str] = ()) -> list[pathlib.Path]:
    """The file each report of one call goes to: the one path rule of every report writer (suite and comparison).

    - a folder (``path`` ends in ``/``, or is an existing folder) receives ``<default_name><suffix>`` for each kind;
    - any other ``path`` names the file: one that ends in a report suffix (one of ``suffixes`` or ``known``, any
      case) has that suffix replaced by each kind's own, and one that does not gets the kind's suffix added.

    So ``"out/suite"`` is written as ``out/suite.html``, ``"out/suite.html"`` stays, and ``"out/"`` becomes
    ``out/<default_name>.html``; several kinds share one stem (``report.md`` and ``report.html``).

    >>> [p.as_posix() for p in report_paths("out/suite", [".html"], default_name="run")]
    ['out/suite.html']
    >>> [p.as_posix() for p in report_paths("out/suite.html", [".html"], default_name="run")]
    ['out/suite.html']
    >>> [p.as_posix() for p in report_paths("out/", [".json", ".html"], default_name="run")]
    ['out/run.json', 'out/run.html']
    >>> [p.as_posix() for p in report_paths("out/report.html", [".md", ".html"], default_name="run")]
    ['out/report.md', 'out/report.html']
    >>> [p.as_posix() for p in report_paths("out/v1.2", [".md"], default_name="run")]
    ['out/v1.2.md']
    """
    if is_folder_path(path):
        return [pathlib.Path(path) / f"{default_name}{suffix}" for suffix in suffixes]
    text = os.fspath(path)
    ending = next((s for s in sorted({*suffixes, *known}, key=len, reverse=True) if text.lower().endswith(s.lower())), "")
    stem = text[: len(text) - len(ending)]
    return [pathlib.Path(text if suffix.lower() == ending.lower() else stem + suffix) for suffix in suffixes]
