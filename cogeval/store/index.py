"""The store index: a hidden file ``.cogeval-index`` beside the run files, so listing a store reads no run file twice.

- it is JSON, named without ``.json`` so that no ``glob("*.json")`` takes it for a run file; it holds, per
  ``*.json`` name, the file's stamp (size, modification time in ns, inode) and what reading it gave: a
  run's summary (without its path; its metric means computed from the run's scores, ``EvalRun.summary``;
  a shard run's with ``shard: {index, count}`` too), or ``null`` for JSON that is not a run;
- saving a run through the store enters it (creating the index if need be); a listing writes it too
  (an empty folder's included), entering the files other tools put there;
- an entry is used only while its file's stamp is unchanged; a new or changed file is read again, the
  entry of a deleted file dropped, and the index rewritten atomically when anything changed;
- a file that could not be read as a run gets no entry: it is read, and reported, again at every listing;
- an index that is missing, unreadable, corrupt or of another version counts as empty (everything is read
  again); one that cannot be written (a read-only folder) is left as it is. The index is a cache, never the
  truth: a stale or broken one makes a listing slower, never different. Two processes saving at once may
  each drop the other's entry: the file is then simply read again at the next listing.

>>> import pathlib, tempfile
>>> index = StoreIndex(pathlib.Path(tempfile.mkdtemp()))
>>> (index.folder / "a.json").write_text('{"runId": "x"}')
14
>>> [summary["id"] for summary in index.summaries(lambda path: {"id": "x"})]
['x']
>>> sorted(p.name for p in index.folder.iterdir())
['.cogeval-index', 'a.json']
"""

from __future__ import annotations

import copy
import json
import pathlib
from collections.abc import Callable
from typing import Any

from cogeval._files import write_text_atomic

INDEX_FILE = ".cogeval-index"
_FORMAT, _VERSION = "cogeval.store-index", 3
"""Version 2: a summary's metric means come from the run's scores (``EvalRun.summary``), not its stored
``aggregated``. Version 3: a shard run's summary has ``shard`` (an older cogeval indexing a shard file wrote
none). An index of another version counts as empty, so every file is read again once."""
_Entry = dict[str, Any]
"""``{"stamp": [size, mtime_ns, inode], "summary": summary without "path", or None for JSON that is not a run}``."""


class Unlisted(Exception):
    """Raised by a reader for a file it reported as skipped: the index keeps no entry, so it is read again next time."""


class StoreIndex:
    """The index of the run files in ``folder``; it also keeps the last entries in memory for folders it cannot write."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        self._known: dict[str, _Entry] = {}

    def summaries(self, read: Callable[[pathlib.Path], dict[str, Any] | None]) -> list[dict[str, Any]]:
        """The summary (with its ``path``) of every run file of the folder, in name order.

        Unchanged files are taken from the index; ``read(path)`` reads the others: it returns the run's
        summary, ``None`` for JSON that is not a run, or raises :class:`Unlisted`.
        """
        if not self.folder.is_dir():
            return []
        names = sorted(p.name for p in self.folder.glob("*.json"))
        stored = self._load()
        entries: dict[str, _Entry] = {}
        found = []
        for name in names:
            path = self.folder / name
            stamp = _stamp(path)  # before reading: a file changed while being read is read again next time
            entry = next((e for e in (stored.get(name), self._known.get(name)) if e is not None and e["stamp"] == stamp), None)
            if entry is None:
                try:
                    entry = {"stamp": stamp, "summary": read(path)}
                except Unlisted:
                    continue
            if stamp is not None:
                entries[name] = entry
            if entry["summary"] is not None:
                found.append({**copy.deepcopy(entry["summary"]), "path": str(path)})
        if (entries.keys() != stored.keys() or any(entry is not stored[name] for name, entry in entries.items())
                or not (self.folder / INDEX_FILE).is_file()):
            self._write(entries)
        self._known = entries
        return found

    def record(self, path: pathlib.Path, summary: dict[str, Any]) -> None:
        """Enter the run file just written at ``path`` with its summary (without ``path``); creates the index if missing."""
        stamp = _stamp(path)
        if stamp is not None:
            self._write({**self._load(), path.name: {"stamp": stamp, "summary": summary}})

    def _load(self) -> dict[str, _Entry]:
        try:
            document = json.loads((self.folder / INDEX_FILE).read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        if not (isinstance(document, dict) and document.get("format") == _FORMAT and document.get("version") == _VERSION
                and isinstance(document.get("runs"), dict)):
            return {}
        return {name: entry for name, entry in document["runs"].items() if _well_formed(entry)}

    def _write(self, entries: dict[str, _Entry]) -> None:
        text = json.dumps({"format": _FORMAT, "version": _VERSION, "runs": entries}, separators=(",", ":"))
        try:
            write_text_atomic(self.folder / INDEX_FILE, text)
        except OSError:  # a read-only folder still lists, without an index
            pass


_SUMMARY_KEYS = {"id", "name", "metadata", "started_at", "finished_at", "cases", "metrics"}
_SHARD_KEYS = _SUMMARY_KEYS | {"shard"}


def _well_formed(entry: Any) -> bool:
    """An entry of the right shape (so a hand-edited index cannot break a listing)."""
    if not isinstance(entry, dict) or entry.keys() != {"stamp", "summary"}:
        return False
    stamp, summary = entry["stamp"], entry["summary"]
    return (isinstance(stamp, list) and len(stamp) == 3 and all(type(n) is int for n in stamp)
            and (summary is None or (isinstance(summary, dict) and summary.keys() in (_SUMMARY_KEYS, _SHARD_KEYS)
                                     and isinstance(summary["id"], str) and isinstance(summary["metrics"], dict)
                                     and isinstance(summary.get("shard", {}), dict))))


def _stamp(path: pathlib.Path) -> list[int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino]
