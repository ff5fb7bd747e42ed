"""Labelling at scale: a blinded JSONL manifest for people to label, and the labels read back as a comparator.

:func:`export_pairwise_cases` writes one line per task × criterion, the order of
the two responses drawn per task from ``seed``; people add ``"preferred"``;
:func:`human_labels` reads the lines of one criterion back, mapping each answer
to a variant through ``first_variant``. A line without a label gets no verdict,
never a tie.

>>> import json, pathlib, tempfile
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

from cogeval._check import check_path, check_seed, describe
from cogeval._files import write_text_atomic
from cogeval.data.case import sha256_hex
from cogeval.data.json_limits import loads
from cogeval.data.jsonable import jsonable
from cogeval.errors import DatasetError, InputError
from cogeval.pairwise.comparator import Comparator
from cogeval.pairwise.sources import pair_sources
from cogeval.pairwise.verdict import PairTask, Verdict, check_key, one_order_verdict, read_choice, seeded_orders

MANIFEST_FIELDS = ("case_id", "task_id", "criterion", "task_input", "response_1", "response_2", "first_variant")
"""The fields of each line :func:`export_pairwise_cases` writes, in order."""


def export_pairwise_cases(source_a: Any, source_b: Any, criteria: str | Sequence[str],
                          out: str | os.PathLike[str], dataset: Any = None, seed: Any = None) -> pathlib.Path:
    """Write a blinded JSONL manifest for people to label; returns its path.

    One line per task × criterion (task by task), with the :data:`MANIFEST_FIELDS`:
    ``case_id`` (an opaque id of the line: the first 16 hex digits of the
    SHA-256 of ``[task_id, criterion]``), ``task_id``, ``criterion``,
    ``task_input``, ``response_1``, ``response_2`` and ``first_variant``
    (``"a"`` or ``"b"``: whose output is ``response_1``). The order is drawn
    once per task from ``seed`` (``numpy.random.default_rng(seed).integers(0, 2)``
    per task, 0 → ``"a"``), the same for every criterion of the task, as
    :func:`~cogeval.human_pairwise` draws it. Tasks are paired as
    :mod:`cogeval.pairwise.sources` says; a task a target failed on is not exported (it is decided
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
    out = check_path("out", out)
    seed = check_seed("seed", seed)
    tasks = [t for t in pair_sources(source_a, source_b, dataset) if t.error_a is None and t.error_b is None]
    lines = []
    for task, first in zip(tasks, seeded_orders(seed, len(tasks))):
        response_1, response_2 = task.shown(first)
        given = task.case.input if task.case.input is not None else task.case.turns
        for criterion in criteria:
            line = dict(zip(MANIFEST_FIELDS, (sha256_hex([task.task_id, criterion])[:16], task.task_id, criterion,
                                              given, response_1, response_2, first)))
            lines.append(json.dumps(jsonable(line), ensure_ascii=False, allow_nan=False) + "\n")
    return write_text_atomic(out, "".join(lines))


class LabelComparator(Comparator):
    """Verdicts read from a labelled manifest; see :func:`human_labels`.

    ``verdicts`` maps task id → :class:`~cogeval.pairwise.Verdict`;
    ``missing`` lists the task ids of lines with no label.
    """

    def __init__(self, path: str | os.PathLike[str], criterion: str, key: str) -> None:
        self.path, self.criterion, self.key = check_path("path", path), criterion, check_key(key)
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
                line = loads(raw, where, error=DatasetError)
            except json.JSONDecodeError as error:
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
        labelled = len(self.verdicts) - len(self.missing)
        return (f"LabelComparator(key={self.key!r}, criterion={self.criterion!r}, labelled={labelled}, "
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

