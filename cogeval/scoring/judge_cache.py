"""A disk cache of judge answers: one small JSON file per request.

The key is the SHA-256 of the canonical JSON of everything that changes the
answer (model, base URL, messages, temperature, max_tokens, response_format,
sample index), so an identical request is never paid for twice, across runs,
re-scorings and processes.

>>> import tempfile
>>> cache = JudgeCache(tempfile.mkdtemp())
>>> key = JudgeCache.key({"model": "m", "messages": [{"role": "user", "content": "hi"}], "sample": 0})
>>> cache.get(key) is None
True
>>> cache.put(key, {"content": '{"score": 1}'})
>>> cache.get(key)
{'content': '{"score": 1}'}

A file that cannot be read is a miss; a write that fails is skipped (the
judgement is kept, only not cached). Delete the folder to forget everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from cogeval._files import write_text_atomic
from cogeval.data import canonical_json
from cogeval.data.json_limits import loads

DEFAULT_CACHE_FOLDER = pathlib.Path(".cogeval-cache") / "judge"
"""Where ``JudgeConfig(cache=True)`` keeps answers, relative to the working directory."""


class JudgeCache:
    """Judge answers under ``folder``, as ``<folder>/<key[:2]>/<key>.json``."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = pathlib.Path(folder)

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.folder)!r})"

    @staticmethod
    def key(request: Mapping[str, Any]) -> str:
        """SHA-256 hex of the canonical JSON of ``request``."""
        return hashlib.sha256(canonical_json(dict(request)).encode("utf-8")).hexdigest()

    def _path(self, key: str) -> pathlib.Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key``, or ``None``."""
        try:
            entry = loads(self._path(key).read_text(encoding="utf-8"), "judge cache entry", allow_nan=True)
        except (OSError, ValueError):  # a missing, unreadable, hostile or half-written entry: ask the judge again
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store ``entry`` (a JSON object) under ``key``; a failed write is skipped."""
        try:
            write_text_atomic(self._path(key), json.dumps(dict(entry), ensure_ascii=False))
        except OSError:
            pass
