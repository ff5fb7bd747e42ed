"""Atomic file writes: a file on disk is never left half-written (DESIGN §5).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.txt"
>>> write_text_atomic(path, "hello").read_text()
'hello'
"""

from __future__ import annotations

import os
import pathlib
import tempfile


def write_text_atomic(path: str | os.PathLike[str], text: str) -> pathlib.Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and ``os.replace``.

    Missing parent folders are created. Returns the path written.
    """
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would make reports unreadable to others
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
