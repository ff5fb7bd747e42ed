"""Head-to-head on answers you already have: sources, blinded labelling files, and grading two sources.

A *source* is what one variant answered: an :class:`~cogeval.EvalRun`, a suite
result, a run-file path, a folder or :class:`DirectoryTraceSource` of run files
and traces, a trace file (``.json``/``.jsonl``) or a list of trace records.
Two sources pair by **task id**:

- a run's result (trial 0 of each case): its case key, then ``#k`` for the
  k-th repeat of the case (``9f2c…``, ``9f2c…#1``), as :func:`run_pairwise` does;
- a trace record ``{"input", "output"}`` (optional: ``"task_id"``,
  ``"case_key"``, ``"expected"``, ``"context"``, ``"metadata"``, ``"error"``):
  its ``task_id`` as given; else its ``case_key`` (or the key of the case
  ``{input, expected}``, so traces pair with runs of the same cases), numbered
  by repeat over the source in reading order as above.

A task id found twice in one source is an error naming both places.

>>> import tempfile, pathlib
>>> a = [{"input": "2+2", "output": "4"}, {"input": "3+3", "output": "6"}]
>>> b = [{"input": "2+2", "output": "four"}, {"input": "3+3", "output": "6"}]
>>> out = export_pairwise_cases(a, b, ["correct"], pathlib.Path(tempfile.mkdtemp()) / "pairs.jsonl", seed=1)
>>> [json.loads(line)["first_variant"] for line in out.read_text().splitlines()]
['a', 'b']
"""

from __future__ import annotations

import json
import os
import pathlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from cogeval._check import describe
from cogeval._files import write_text_atomic
from cogeval.compare.pairwise import (
    Comparator,
    PairTask,
    PairwiseResult,
    Verdict,
    check_comparators,
    check_key,
    check_names,
    check_store,
    finish,
    judge_tasks,
    one_order_verdict,
    read_choice,
    seeded_orders,
    task_id,
)
from cogeval.compare.runs import as_run
from cogeval.compare.store import RUN_FORMAT, RunStore
from cogeval.data import Case, EvalRun, load_run
from cogeval.data.case import sha256_hex
from cogeval.errors import DatasetError, InputError
from cogeval.execution import run_sync

__all__ = [
    "MANIFEST_FIELDS",
    "DirectoryTraceSource",
    "LabelComparator",
    "aevaluate_pairwise",
    "evaluate_pairwise",
    "export_pairwise_cases",
    "human_labels",
    "source_tasks",
]

MANIFEST_FIELDS = ("case_id", "task_id", "criterion", "task_input", "response_1", "response_2", "first_variant")
"""The fields of each line :func:`export_pairwise_cases` writes, in order."""


def _run_answers(run: EvalRun, where: str) -> list[tuple[str, str, Case, Any, str | None, str]]:
    answers, seen = [], set()
    for index, r in enumerate(run.results):
        if (r.case_key, r.occurrence) in seen:
            continue  # later trials of the same case: trial 0 (the first in the file) stands for it
        seen.add((r.case_key, r.occurrence))
        answers.append((task_id(r.case_key, r.occurrence), r.case_key, r.case.to_case(), r.output, r.error,
                        f"{where}: results[{index}]"))
    return answers


def _trace_answer(record: Any, where: str, repeats: dict[str, int]) -> tuple[str, str, Case, Any, str | None, str]:
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


def _file_answers(path: pathlib.Path, repeats: dict[str, int]) -> list[tuple[str, str, Case, Any, str | None, str]]:
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
                    records.append((json.loads(line), f"{path}: line {number}"))
                except ValueError as error:
                    raise DatasetError(f"{path}: line {number} is not valid JSON: {error}") from None
    else:
        try:
            document = json.loads(text)
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

    def answers(self) -> list[tuple[str, str, Case, Any, str | None, str]]:
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


def source_tasks(source: Any, name: str = "source") -> dict[str, tuple[str, str, Case, Any, str | None, str]]:
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


def _pair(source_a: Any, source_b: Any, dataset: Any) -> list[PairTask]:
    """The tasks both sources answered: the dataset's (in its order) when given, else A's in A's order."""
    a, b = source_tasks(source_a, "source_a"), source_tasks(source_b, "source_b")
    if dataset is not None:
        from cogeval.evaluate.suite import as_dataset

        counts: dict[str, int] = {}
        wanted = {}
        for case in as_dataset(dataset):
            ident = task_id(case.key, counts.get(case.key, 0))
            counts[case.key] = counts.get(case.key, 0) + 1
            wanted[ident] = (case.key, case)
    else:
        wanted = {ident: (answer[1], answer[2]) for ident, answer in a.items()}
    left_out = list(dict.fromkeys([*(i for i in wanted if i not in a or i not in b), *(i for i in (*a, *b) if i not in wanted)]))
    if left_out:
        shown = ", ".join(repr(i) for i in left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        warnings.warn(f"{len(left_out)} task(s) not in both sources{' and the dataset' if dataset is not None else ''} "
                      f"are left out: {shown}", UserWarning, stacklevel=3)
    return [PairTask(ident, key, case, a[ident][3], b[ident][3], a[ident][4], b[ident][4])
            for ident, (key, case) in wanted.items() if ident in a and ident in b]


def export_pairwise_cases(source_a: Any, source_b: Any, criteria: str | Sequence[str],
                          out: str | os.PathLike[str], dataset: Any = None, seed: int | None = None) -> pathlib.Path:
    """Write a blinded JSONL manifest for people to label; returns its path.

    One line per task × criterion (task by task), with the :data:`MANIFEST_FIELDS`:
    ``case_id`` (an opaque id of the line: the first 16 hex digits of the
    SHA-256 of ``[task_id, criterion]``), ``task_id``, ``criterion``,
    ``task_input``, ``response_1``, ``response_2`` and ``first_variant``
    (``"a"`` or ``"b"``: whose output is ``response_1``). The order is drawn
    once per task from ``seed`` (``numpy.random.default_rng(seed).integers(0, 2)``
    per task, 0 → ``"a"``), the same for every criterion of the task, as
    :func:`~cogeval.human_pairwise` draws it. Tasks are paired as the module
    docstring says; a task a target failed on is not exported (it is decided
    without labels). Show labellers ``task_input``, ``response_1`` and
    ``response_2`` only, and have them add ``"preferred": "1" | "2" | "tie"``;
    read it back with :func:`human_labels`. The file is written atomically.
    """
    criteria = [criteria] if isinstance(criteria, str) else criteria
    if (isinstance(criteria, (bytes, Mapping)) or not isinstance(criteria, Sequence) or not criteria
            or not all(isinstance(c, str) and c.strip() for c in criteria)):
        raise InputError(f"criteria must be a non-empty string or list of strings; got {describe(criteria)}")
    if len(set(criteria)) != len(criteria):
        raise InputError(f"criteria must be distinct; got {describe(criteria)}")
    if not isinstance(out, (str, os.PathLike)):
        raise InputError(f"out must be a file path; got {describe(out)}")
    tasks = [t for t in _pair(source_a, source_b, dataset) if t.error_a is None and t.error_b is None]
    lines = []
    for task, first in zip(tasks, seeded_orders(seed, len(tasks))):
        response_1, response_2 = task.shown(first)
        given = task.case.input if task.case.input is not None else task.case.turns
        for criterion in criteria:
            line = dict(zip(MANIFEST_FIELDS, (sha256_hex([task.task_id, criterion])[:16], task.task_id, criterion,
                                              given, response_1, response_2, first)))
            lines.append(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return write_text_atomic(out, "".join(lines))


class LabelComparator(Comparator):
    """Verdicts read from a labelled manifest; see :func:`human_labels`.

    ``verdicts`` maps task id → :class:`~cogeval.compare.pairwise.Verdict`;
    ``missing`` lists the task ids of lines with no label.
    """

    def __init__(self, path: str | os.PathLike[str], criterion: str, key: str) -> None:
        self.path, self.criterion, self.key = pathlib.Path(path), criterion, check_key(key)
        self.verdicts: dict[str, Verdict] = {}
        self.missing: list[str] = []
        criteria: dict[str, None] = {}
        lines: dict[str, int] = {}
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise FileNotFoundError(f"labels file not found: {self.path}") from None
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            where = f"{self.path}: line {number}"
            try:
                line = json.loads(raw)
            except ValueError as error:
                raise DatasetError(f"{where} is not valid JSON: {error}") from None
            if not isinstance(line, dict):
                raise DatasetError(f"{where} must be a JSON object; got {describe(line)}")
            criteria[str(line.get("criterion"))] = None
            if line.get("criterion") != criterion:
                continue
            ident = line.get("task_id")
            if not isinstance(ident, str):
                raise DatasetError(f"{where}: 'task_id' must be a string; got {describe(ident)}")
            if ident in lines:
                raise DatasetError(f"{where}: task {ident!r} is labelled twice for criterion {criterion!r} "
                                   f"(also on line {lines[ident]})")
            lines[ident] = number
            first = line.get("first_variant")
            if first not in ("a", "b"):
                raise DatasetError(f"{where}: 'first_variant' must be 'a' or 'b'; got {describe(first)}")
            preferred = line.get("preferred")
            if preferred is None or preferred == "":
                self.missing.append(ident)
                self.verdicts[ident] = Verdict(None, error="not labelled", details={"first": first})
                continue
            choice = read_choice(preferred)
            if choice is None:
                raise DatasetError(f"{where}: 'preferred' must be \"1\", \"2\" or \"tie\" (or empty when not "
                                   f"labelled); got {describe(preferred)}")
            self.verdicts[ident] = one_order_verdict(choice, first)
        if not lines:
            listed = ", ".join(repr(c) for c in criteria) or "none"
            raise DatasetError(f"{self.path} has no line with criterion {criterion!r}; its criteria: {listed}")
        if self.missing:
            shown = ", ".join(repr(i) for i in self.missing[:3]) + (", ..." if len(self.missing) > 3 else "")
            warnings.warn(f"{self.path}: {len(self.missing)} of {len(lines)} tasks have no label for criterion "
                          f"{criterion!r} ({shown}); they get no verdict", UserWarning, stacklevel=3)

    def __repr__(self) -> str:
        return (f"LabelComparator(key={self.key!r}, criterion={self.criterion!r}, labelled={len(self.verdicts) - len(self.missing)}, "
                f"missing={len(self.missing)})")

    def describe(self) -> dict[str, Any]:
        return {"kind": "labels", "path": str(self.path), "criterion": self.criterion}

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        return [self.verdicts.get(t.task_id, Verdict(None, error="not in the labels file")) for t in tasks]


def human_labels(path: str | os.PathLike[str], criterion: str, key: str) -> LabelComparator:
    """A comparator from a manifest of :func:`export_pairwise_cases` that people labelled.

    Reads the lines of ``criterion``; each needs ``task_id``, ``first_variant``
    (``"a"`` or ``"b"``) and ``"preferred": "1" | "2" | "tie"`` (``1``/``2``
    as numbers too), mapped back to the variants through ``first_variant``. A
    line with no ``preferred`` (absent, ``null`` or ``""``) is reported (in
    ``.missing`` and a warning) and gets no verdict, never a tie. An invalid
    ``first_variant`` or ``preferred``, a task labelled twice, or a line that
    is not JSON raises an error naming the line. Use it in
    :func:`evaluate_pairwise` with the sources in the order they were exported.
    """
    if not isinstance(criterion, str) or not criterion.strip():
        raise InputError(f"criterion must be a non-empty string; got {describe(criterion)}")
    return LabelComparator(path, criterion, key)


def evaluate_pairwise(a: Any, b: Any, dataset: Any, comparators: Any,
                      store: RunStore | str | os.PathLike[str] | None = None, *,
                      names: tuple[str, str] = ("a", "b"), concurrency: int = 5) -> PairwiseResult:
    """Grade two existing sources head to head, paired by task id (no target is called) → :class:`PairwiseResult`.

    ``a`` and ``b`` are sources (see the module docstring); ``dataset``
    (or ``None``) chooses the tasks and their order and gives the cases the
    comparators see (else A's). Tasks not in both are left out with a warning.
    ``comparators``, ``store`` and ``names`` are as for :func:`run_pairwise`.
    """
    comparators, store = check_comparators(comparators), check_store(store)
    names = check_names(names)
    result = run_sync(judge_tasks(_pair(a, b, dataset), comparators, names, concurrency))
    return finish(result, comparators, store)


async def aevaluate_pairwise(a: Any, b: Any, dataset: Any, comparators: Any,
                             store: RunStore | str | os.PathLike[str] | None = None, *,
                             names: tuple[str, str] = ("a", "b"), concurrency: int = 5) -> PairwiseResult:
    """Async form of :func:`evaluate_pairwise`."""
    comparators, store = check_comparators(comparators), check_store(store)
    names = check_names(names)
    result = await judge_tasks(_pair(a, b, dataset), comparators, names, concurrency)
    return finish(result, comparators, store)
