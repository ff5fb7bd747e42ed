"""A growing run written to its file again and again, each result encoded once (a run's checkpoint).

:meth:`EvalRun.save` validates, dumps and encodes every result each time; a checkpoint written every
few seconds during a long run would redo all of it for every write. :class:`RunFileWriter` keeps each
result's text and encodes only the results new or changed since its last write; what is left per write
is the run's head (counts and means) and putting the pieces together. The file is the very text
:meth:`EvalRun.save` writes for the same run, written atomically the same way.

>>> import tempfile, pathlib
>>> from cogeval.data import Case, EvalRun
>>> record = {"case_key": "k", "case": Case("2+2", expected="4"), "output": "4", "scores": [{"metric": "m", "score": 1.0}]}
>>> run = EvalRun.model_validate({"run_id": "20261022T101530123Z-0a1b2c3d", "started_at": "2026-10-22T10:15:30.123Z",
...                               "finished_at": "2026-10-22T10:15:31.000Z", "results": [record]})
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> path = RunFileWriter().write(folder / "a.json", run.model_copy(update={"results": []}), [("job 0", record, lambda: record)])
>>> path.read_text() == run.save(folder / "b.json").read_text()
True
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from cogeval._files import write_text_atomic
from cogeval.data.file_form import distinct_prompts
from cogeval.data.gc_pause import paused_gc
from cogeval.data.records import ResultRecord
from cogeval.data.run import EvalRun, result_file_form

_RESULTS = "\x00cogeval-results\x00"
"""What stands for the results in the head's text until they are put in (JSON writes the NULs as ``\\u0000``)."""

_INDENT = " " * 4
"""A result's indentation in the file: the second level, as ``indent=2`` puts it."""


class RunFileWriter:
    """Writes runs to a file, remembering each result's text by its key (e.g. its job number)."""

    def __init__(self) -> None:
        self._encoded: dict[Hashable, tuple[Any, str, dict[str, Any]]] = {}

    def write(self, path: str | os.PathLike[str], head: EvalRun,
              results: Iterable[tuple[Hashable, Any, Callable[[], Any]]]) -> pathlib.Path:
        """Write ``head`` (a run whose ``results`` are left empty) with ``results`` to ``path``, atomically.

        ``results`` are ``(key, version, record)`` in file order: ``record()`` makes the result (a
        :class:`~cogeval.data.records.ResultRecord` or its data), called only when the key is new or its
        ``version`` is another object than at the last write. Returns the path written.
        """
        encoder = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False)
        texts, prompts = [], []
        with paused_gc():
            for key, version, record in results:
                known = self._encoded.get(key)
                if known is None or known[0] is not version:
                    known = self._encoded[key] = (version, *_encoded(encoder, record()))
                texts.append(known[1])
                prompts.append(known[2])
            data = head.to_dict()
            data["prompts"] = distinct_prompts({"results": prompts, "prompts": data.get("prompts")})
            data["results"] = _RESULTS
            before, after = encoder.encode(data).split(encoder.encode(_RESULTS))
            middle = f"[\n{_INDENT}" + f",\n{_INDENT}".join(texts) + "\n  ]" if texts else "[]"
            return write_text_atomic(path, [before, middle, after, "\n"])


def _encoded(encoder: json.JSONEncoder, record: Any) -> tuple[str, dict[str, Any]]:
    """A result's text in the file, and the prompts it used (what the file's ``prompts`` lists)."""
    if not isinstance(record, ResultRecord):
        record = ResultRecord.model_validate(record)
    data = result_file_form(record)
    used = {"prompt": data.get("prompt"), "turns": [{"prompt": t.get("prompt")} for t in data.get("turns") or []]}
    return encoder.encode(data).replace("\n", "\n" + _INDENT), used
