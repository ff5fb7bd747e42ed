"""Sources: the answers a variant already gave (runs, run files, traces), and the tasks two of them share.

A *source* is what one variant answered: an :class:`~cogeval.EvalRun`, a suite
result, a run-file path, a folder or :class:`DirectoryTraceSource` of run files
and traces, a trace file (``.json``/``.jsonl``) or a list of trace records.
Two sources pair by **task id**:

- a run's result (trial 0 of each case): its case key, then ``#k`` for the
  k-th repeat of the case (``9f2c…``, ``9f2c…#1``), as :func:`~cogeval.run_pairwise` does;
- a trace record ``{"input", "output"}`` (optional: ``"task_id"``,
  ``"case_key"``, ``"expected"``, ``"context"``, ``"metadata"``, ``"error"``):
  its ``task_id`` as given; else its ``case_key`` (or the key of the case
  ``{input, expected}``, so traces pair with runs of the same cases), numbered
  by repeat over the source in reading order as above.

A task id found twice in one source is an error naming both places.

>>> a = [{"input": "2+2", "output": "4"}, {"input": "3+3", "output": "6"}]
>>> b = [{"input": "3+3", "output": "six"}, {"input": "2+2", "output": "four"}]
>>> [(t.case.input, t.output_a, t.output_b) for t in pair_sources(a, b, None)]
[('2+2', '4', 'four'), ('3+3', '6', 'six')]
"""

from __future__ import annotations

import os
import pathlib
import warnings
from collections.abc import Mapping
from typing import Any

from cogeval._check import describe
from cogeval.compare.runs import as_run
from cogeval.data import Case, EvalRun, load_run
from cogeval.data.json_limits import loads
from cogeval.errors import DatasetError, InputError
from cogeval.evaluate.suite import as_dataset
from cogeval.pairwise.verdict import PairTask, task_id
from cogeval.store.run_store import RUN_FORMAT

Answer = tuple[str, str, Case, Any, str | None, str]
"""``(task_id, case_key, case, output, error, where)``: one answer of a source."""


def _run_answers(run: EvalRun, where: str) -> list[Answer]:
    answers, seen = [], set()
    for index, r in enumerate(run.results):
        if (r.case_key, r.occurrence) in seen:
            continue  # later trials of the same case: trial 0 (the first in the file) stands for it
        seen.add((r.case_key, r.occurrence))
        answers.append((task_id(r.case_key, r.occurrence), r.case_key, r.case.to_case(), r.output, r.error,
                        f"{where}: results[{index}]"))
    return answers


def _trace_answer(record: Any, where: str, repeats: dict[str, int]) -> Answer:
    if not isinstance(record, Mapping) or "input" not in record or "output" not in record:
        got = f"keys {', '.join(map(repr, record))}" if isinstance(record, Mapping) else describe(record)
        raise InputError(f"{where}: a trace needs 'input' and 'output' (and may have 'task_id', 'case_key', "
                         f"'expected', 'context', 'metadata', 'error'); got {got}")
    for name in ("task_id", "case_key", "error"):
        if record.get(name) is not None and not isinstance(record[name], str):
            raise InputError(f"{where}: {name!r} must be a string; got {describe(record[name])}")
    try:
        case = Case(record["input"], expected=record.get("expected"), context=record.get("context"),
                    metadata=record.get("metadata"))
    except InputError as error:
        raise InputError(f"{where}: {error}") from None
    key = record.get("case_key") or case.key
    ident = record.get("task_id")
    if ident is None:
        ident = task_id(key, repeats.get(key, 0))
        repeats[key] = repeats.get(key, 0) + 1
    return ident, key, case, record["output"], record.get("error"), where


def _file_answers(path: pathlib.Path, repeats: dict[str, int]) -> list[Answer]:
    """The answers in one run file or trace file (``.json``: a run, a trace or a list of traces; ``.jsonl``: traces)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot be read: {error}") from None
    if path.suffix == ".jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((loads(line, f"{path}: line {number}", error=DatasetError), f"{path}: line {number}"))
                except ValueError as error:
                    raise DatasetError(f"{path}: line {number} is not valid JSON: {error}") from None
    else:
        try:
            document = loads(text, str(path), error=DatasetError)
        except DatasetError:
            raise
        except ValueError as error:
            raise DatasetError(f"{path} is not valid JSON: {error}") from None
        if isinstance(document, dict) and (document.get("format") == RUN_FORMAT or "runId" in document):
            return _run_answers(load_run(path), str(path))
        items = document if isinstance(document, list) else [document]
        records = [(record, f"{path}: [{i}]" if isinstance(document, list) else str(path))
                   for i, record in enumerate(items)]
    return [_trace_answer(record, where, repeats) for record, where in records]


class DirectoryTraceSource:
    """A folder of run files and trace files, read as one source.

    Every ``*.json`` (a run file, one trace object or a list of them) and
    ``*.jsonl`` (one trace per line) directly in ``path``, in name order;
    other files, hidden ones and saved pairwise results (``*.pairwise.json``,
    which live next to run files in a store) are ignored. See the module docstring for the
    trace fields and task ids.

    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "day1.jsonl").write_text('{"task_id": "t1", "input": "2+2", "output": "4"}\\n')
    >>> DirectoryTraceSource(folder).task_ids()
    ['t1']
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)) or not pathlib.Path(path).is_dir():
            shown = f"'{path}'" if isinstance(path, (str, os.PathLike)) else describe(path)
            raise InputError(f"DirectoryTraceSource needs a folder of run files or traces; {shown} is not one")
        self.path = pathlib.Path(path)

    def __repr__(self) -> str:
        return f"DirectoryTraceSource({str(self.path)!r})"

    def files(self) -> list[pathlib.Path]:
        """The files read, in order."""
        return sorted(p for p in self.path.iterdir()
                      if p.is_file() and p.suffix in (".json", ".jsonl") and not p.name.startswith(".")
                      and not p.name.endswith(".pairwise.json"))

    def answers(self) -> list[Answer]:
        """``(task_id, case_key, case, output, error, where)`` for every task, in reading order."""
        repeats: dict[str, int] = {}
        return [answer for path in self.files() for answer in _file_answers(path, repeats)]

    def task_ids(self) -> list[str]:
        """The task ids, in reading order."""
        return [answer[0] for answer in _checked(self.answers())]


def _checked(answers: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    seen: dict[str, str] = {}
    for answer in answers:
        if answer[0] in seen:
            raise InputError(f"task id {answer[0]!r} appears twice in one source: {seen[answer[0]]} and {answer[5]}")
        seen[answer[0]] = answer[5]
    return answers


def source_tasks(source: Any, name: str = "source") -> dict[str, Answer]:
    """Task id → ``(task_id, case_key, case, output, error, where)`` of a source, in order."""
    if isinstance(source, DirectoryTraceSource):
        answers = source.answers()
    elif isinstance(source, (str, os.PathLike)) and pathlib.Path(source).is_dir():
        answers = DirectoryTraceSource(source).answers()
    elif isinstance(source, (str, os.PathLike)):
        if not pathlib.Path(source).is_file():
            raise FileNotFoundError(f"{name}: no such file or folder: {source}")
        answers = _file_answers(pathlib.Path(source), {})
    elif isinstance(source, list):
        repeats: dict[str, int] = {}
        answers = [_trace_answer(record, f"{name}[{i}]", repeats) for i, record in enumerate(source)]
    elif isinstance(source, EvalRun) or hasattr(source, "to_run"):
        answers = _run_answers(as_run(source, name), name)
    else:
        raise InputError(f"{name} must be a run, a suite result, a run or trace file, a folder, a DirectoryTraceSource "
                         f"or a list of trace records; got {describe(source)}")
    return {answer[0]: answer for answer in _checked(answers)}



def pair_sources(source_a: Any, source_b: Any, dataset: Any) -> list[PairTask]:
    """The tasks both sources answered: the dataset's (in its order) when given, else A's in A's order."""
    a, b = source_tasks(source_a, "source_a"), source_tasks(source_b, "source_b")
    if dataset is not None:
        counts: dict[str, int] = {}
        wanted = {}
        for case in as_dataset(dataset):
            ident = task_id(case.key, counts.get(case.key, 0))
            counts[case.key] = counts.get(case.key, 0) + 1
            wanted[ident] = (case.key, case)
    else:
        wanted = {ident: (answer[1], answer[2]) for ident, answer in a.items()}
    unpaired = [*(i for i in wanted if i not in a or i not in b), *(i for i in (*a, *b) if i not in wanted)]
    left_out = list(dict.fromkeys(unpaired))
    if left_out:
        shown = ", ".join(repr(i) for i in left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        warnings.warn(f"{len(left_out)} task(s) not in both sources{' and the dataset' if dataset is not None else ''} "
                      f"are left out: {shown}", UserWarning, stacklevel=3)
    return [PairTask(ident, key, case, a[ident][3], b[ident][3], a[ident][4], b[ident][4])
            for ident, (key, case) in wanted.items() if ident in a and ident in b]

