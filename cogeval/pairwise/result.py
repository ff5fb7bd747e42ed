"""The result of a head-to-head: every comparator's verdict on every task, and what they add up to.

A :class:`PairwiseResult` never changes once made: labels given later (in the
labelling widget, or with :meth:`PairwiseResult.with_labels`) make a new result.

>>> from cogeval import Case
>>> tasks = [PairTask("t1", "t1", Case("2+2"), "4", "four")]
>>> result = PairwiseResult("20260101T000000000Z-0000abcd", "2026-01-01T00:00:00.000Z", ("a", "b"), tasks,
...                         {"people": [Verdict(None, error="not labelled yet", details={"first": "b"})]},
...                         {"people": {"kind": "human", "seed": 0}})
>>> labelled = result.with_labels("people", {"t1": "1"})   # "four" was shown first and preferred
>>> labelled.win_rate("people").wins, result.win_rate("people").wins
(1, 0)
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from cogeval import _columns as col
from cogeval._check import describe
from cogeval._files import write_text_atomic
from cogeval._html import escape, html_table, safe_html
from cogeval._numbers import number, p_value
from cogeval._text import cut, one_line
from cogeval.data.run_id import check_run_id
from cogeval.errors import InputError
from cogeval.pairwise.file import PairwiseFile, check_label, read_pairwise_file
from cogeval.pairwise.measures import Agreement, Flips, WinRate, agreement_of, flips_of, win_rate_of
from cogeval.pairwise.verdict import NOT_LABELLED_YET, PairTask, Verdict, check_names, one_order_verdict, read_choice
from cogeval.store import RunStore

TASK_ID, COMPARATOR = "task_id", "comparator"
OUTPUT_A, OUTPUT_B, VERDICT_AB, VERDICT_BA, FLIPPED, REASONING = (
    "output_a", "output_b", "verdict_ab", "verdict_ba", "flipped", "reasoning")
PAIRWISE_COLUMNS = (TASK_ID, col.CASE_KEY, col.INPUT, OUTPUT_A, OUTPUT_B, COMPARATOR, col.WINNER,
                    VERDICT_AB, VERDICT_BA, FLIPPED, REASONING, col.ERROR)
"""The columns of :meth:`PairwiseResult.to_frame`, in order."""
SUMMARY_COLUMNS = (COMPARATOR, col.N, "wins", "losses", "ties", "rate", col.CI_LOW, col.CI_HIGH, col.P_VALUE,
                   "missing", "flips")
"""The columns of :meth:`PairwiseResult.summary`, in order."""


@dataclasses.dataclass(frozen=True)
class PairwiseResult:
    """Verdicts of one or more comparators on the tasks variants A and B both answered.

    ``tasks`` are the :class:`PairTask` s in order; ``verdicts`` maps each
    comparator's key to one :class:`Verdict` per task (kept as a tuple); ``comparators``
    maps it to how the comparator decides. Rates are B's: above 0.5, B is preferred.
    ``pairs(key)`` is the input of :func:`~cogeval.bradley_terry`. ``label`` names
    the comparison (``run_pairwise(..., label=)``), or is ``None``. Save it with
    ``save(folder)`` (a ``<id>.pairwise.json`` file, which a
    :class:`~cogeval.RunStore` in the same folder passes over) and read it back
    with :func:`load_pairwise`. It never changes: :meth:`with_labels` returns a new result.
    """

    id: str
    created_at: str
    names: tuple[str, str]
    tasks: tuple[PairTask, ...]
    verdicts: Mapping[str, Sequence[Verdict]]
    comparators: Mapping[str, Mapping[str, Any]]
    path: pathlib.Path | None = dataclasses.field(default=None, compare=False)
    """The file that holds this result (it was read from it, or ``run_pairwise(..., store=)`` wrote it), or ``None``."""
    label: str | None = None
    """The comparison's name, as AG2's ``label`` (``run_pairwise(..., label="prompt v2 vs v1")``), or ``None``."""

    def __post_init__(self) -> None:
        # Copies, so that a caller's lists never change the result.
        check_label(self.label)
        object.__setattr__(self, "names", check_names(self.names))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "verdicts", {key: tuple(items) for key, items in self.verdicts.items()})
        object.__setattr__(self, "comparators", {key: dict(how) for key, how in self.comparators.items()})
        for key, items in self.verdicts.items():
            if key not in self.comparators or len(items) != len(self.tasks):
                raise InputError(f"comparator {key!r} needs a description in comparators and one verdict per task "
                                 f"({len(items)} verdicts for {len(self.tasks)} tasks)")

    @property
    def keys(self) -> list[str]:
        """The comparators' keys, in order."""
        return list(self.verdicts)

    @property
    def warnings(self) -> list[str]:
        """One sentence per comparator that decided no pair (n = 0: its rate and interval are undefined), saying
        why: ``"no pair was decided by 'quality' (4 of 4 tasks without a verdict: 4 judge errors, first: ...)"``."""
        return [text for text in map(self._undecided, self.verdicts) if text is not None]

    def _failures(self) -> dict[str, str]:
        """The comparators that decided no pair for a reason other than labels still to give (every judge call
        failed, say), each with its sentence of :attr:`warnings`."""
        failed = {}
        for key, verdicts in self.verdicts.items():
            undecided = self._undecided(key)
            if undecided is not None and verdicts and all(v.error != NOT_LABELLED_YET for v in verdicts):
                failed[key] = undecided
        return failed

    def _warn_failures(self, stacklevel: int = 2) -> None:
        """One ``UserWarning`` per comparator of :meth:`_failures`, naming the result; the runners call it."""
        for reason in self._failures().values():
            warnings.warn(f"pairwise result {self.id}: {reason}; its win rate is undefined (FAILED)", UserWarning,
                          stacklevel=stacklevel + 1)

    def _undecided(self, key: str) -> str | None:
        """Why comparator ``key`` has no verdict on any task, or ``None`` when it decided at least one."""
        verdicts = self.verdicts[key]
        if any(v.winner is not None for v in verdicts):
            return None
        if not verdicts:
            return f"no pair was decided by {key!r}: there were no tasks"
        kind = "judge errors" if self.comparators.get(key, {}).get("kind") == "judge" else "comparator errors"
        counts: Counter[str] = Counter()
        for task, verdict in zip(self.tasks, verdicts):
            if task.error_a is not None and task.error_b is not None:
                counts["where both variants failed"] += 1
            elif verdict.error == NOT_LABELLED_YET:
                counts[NOT_LABELLED_YET] += 1
            else:
                counts[kind] += 1
        parts = ", ".join(f"{count} {reason}" for reason, count in counts.items())
        first = next((v.error for v in verdicts if v.error is not None and v.error != NOT_LABELLED_YET), None)
        first_text = "" if first is None else ", first: " + cut(one_line(str(first)), 200)
        return (f"no pair was decided by {key!r} ({len(verdicts)} of {len(self.tasks)} tasks without a verdict: "
                f"{parts}{first_text})")

    def __repr__(self) -> str:
        a, b = self.names
        named = "" if self.label is None else f" {self.label!r}"
        lines = [f"PairwiseResult {self.id}{named}: {b} (B) vs {a} (A), {len(self.tasks)} tasks"]
        failed = self._failures()
        for key in self.verdicts:
            undecided = self._undecided(key)
            if undecided is not None:
                lines.append(f"  {'FAILED: ' if key in failed else ''}{undecided}")
                continue
            win = self.win_rate(key)
            low, high = win.ci if win.ci is not None else (math.nan, math.nan)
            lines.append(f"  {key}: B's rate {number(win.rate)} [{number(low)}, {number(high)}], n = {win.n} ({win.wins} "
                         f"wins, {win.losses} losses, {win.ties} ties), p = {p_value(win.p_value)}, "
                         f"{win.missing} without a verdict")
        return "\n".join(lines)

    def _key(self, key: str | None) -> str:
        if key is None and len(self.verdicts) == 1:
            return self.keys[0]
        if key in self.verdicts:
            return key  # type: ignore[return-value]
        listed = ", ".join(repr(k) for k in self.verdicts)
        if key is None:
            raise InputError(f"this result has several comparators ({listed}); name one")
        raise InputError(f"no comparator has the key {describe(key)}; the keys are {listed}")

    def win_rate(self, key: str | None = None) -> WinRate:
        """B's win rate by comparator ``key`` (may be left out when there is one comparator); see :class:`WinRate`
        (its ``failure`` says why when the comparator decided no pair, not for want of labels)."""
        key = self._key(key)
        return dataclasses.replace(win_rate_of(self.verdicts[key]), failure=self._failures().get(key))

    def flips(self, key: str | None = None) -> Flips:
        """Cases where the two presentation orders disagreed, and a binomial test of position bias; see :class:`Flips`.

        Only for a comparator that saw each pair in both orders (``pairwise_judge(..., swap=True)``).
        """
        key = self._key(key)
        if not self.comparators[key].get("swap"):
            raise InputError(f"comparator {key!r} saw each pair in one order only; flips need both orders: "
                             "pairwise_judge(..., swap=True)")
        return flips_of(self.tasks, self.verdicts[key])

    def agreement(self, key_x: str, key_y: str) -> Agreement:
        """How often comparators ``key_x`` and ``key_y`` agree, over the cases both gave a verdict."""
        return agreement_of(self.verdicts[self._key(key_x)], self.verdicts[self._key(key_y)])

    def pairs(self, key: str | None = None) -> pd.DataFrame:
        """One row per case with a verdict: ``a``, ``b`` (the variants' names) and ``winner``, as
        :func:`~cogeval.bradley_terry` takes them; concatenate the pairs of every pair of variants to rank N."""
        rows = [(*self.names, v.winner) for v in self.verdicts[self._key(key)] if v.winner is not None]
        return pd.DataFrame(rows, columns=["a", "b", col.WINNER], dtype=object)

    def summary(self) -> pd.DataFrame:
        """One row per comparator with the :data:`SUMMARY_COLUMNS`: ``comparator``, ``n``, ``wins``, ``losses``,
        ``ties``, ``rate``, ``ci_low``, ``ci_high``, ``p_value``, ``missing``, ``flips`` (NaN for a comparator
        that saw one order)."""
        rows = []
        for key in self.verdicts:
            win = self.win_rate(key).to_dict()
            flips = self.flips(key).flips if self.comparators[key].get("swap") else math.nan
            rows.append({COMPARATOR: key, **win, "flips": flips})
        return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        """One row per task × comparator with the :data:`PAIRWISE_COLUMNS`; ``winner`` is ``a``, ``b``, ``tie``
        or ``None`` (no verdict: ``error`` says why)."""
        rows = [
            (t.task_id, t.case_key, t.case.input, t.output_a, t.output_b, key, v.winner, v.ab, v.ba, v.flipped,
             v.reasoning, v.error)
            for key, verdicts in self.verdicts.items()
            for t, v in zip(self.tasks, verdicts)
        ]
        return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS), dtype=object).astype({FLIPPED: bool})

    def with_labels(self, key: str, labels: Mapping[str, Any]) -> PairwiseResult:
        """A new result in which a person's answers fill in comparator ``key``'s verdicts; this one is unchanged.

        ``labels`` maps task ids to ``"1"``, ``"2"`` or ``"tie"`` (``1``, ``2`` too), the answer
        about the pair as it was shown: each verdict's ``details["first"]``
        says which variant was response 1 (as :func:`~cogeval.human_pairwise`
        records it). The new result has no ``path`` until it is saved.
        """
        key = self._key(key)
        index = {task.task_id: i for i, task in enumerate(self.tasks)}
        verdicts = list(self.verdicts[key])
        for ident, answer in labels.items():
            if ident not in index:
                raise InputError(f"no task has the id {describe(ident)}; label the task ids of result.tasks")
            first = verdicts[index[ident]].details.get("first")
            if first not in ("a", "b"):
                raise InputError(f"comparator {key!r} did not record which variant was shown first on task "
                                 f"{ident!r}; only a person's verdicts can be labelled")
            choice = read_choice(answer)
            if choice is None:
                raise InputError(f"the label of task {ident!r} must be '1', '2' or 'tie'; got {describe(answer)}")
            verdicts[index[ident]] = one_order_verdict(choice, first)
        return dataclasses.replace(self, verdicts={**self.verdicts, key: tuple(verdicts)}, path=None)

    def to_file(self) -> PairwiseFile:
        """The pairwise file's model of this result (see :mod:`cogeval.pairwise.file`)."""
        return PairwiseFile.from_parts(self.id, self.created_at, self.names, self.comparators, self.tasks,
                                       self.verdicts, self.label)

    def to_dict(self) -> dict[str, Any]:
        """The pairwise file's content (JSON data)."""
        return self.to_file().to_dict()

    def save(self, target: RunStore | str | os.PathLike[str]) -> pathlib.Path:
        """Write ``<id>.pairwise.json`` into a :class:`~cogeval.RunStore` or folder (or to a file path ending in
        ``.json``), atomically; returns the path. The result itself does not change (``load_pairwise(path)``
        gives it back with its ``path``)."""
        folder = target.path if isinstance(target, RunStore) else target
        if not isinstance(folder, (str, os.PathLike)):
            raise InputError(f"save needs a RunStore, a folder or a file path; got {describe(target)}")
        path = pathlib.Path(folder)
        if path.suffix != ".json" or path.is_dir():
            path = path / f"{check_run_id(self.id)}.pairwise.json"
        return write_text_atomic(path, self.to_file().to_json())

    @classmethod
    def from_file(cls, record: PairwiseFile, path: pathlib.Path | None = None) -> PairwiseResult:
        """The result a pairwise file's model holds."""
        return cls(record.id, record.created_at, record.names, tuple(t.to_task() for t in record.tasks),
                   {key: tuple(v.to_verdict() for v in items) for key, items in record.verdicts.items()},
                   record.comparators, path=path, label=record.label)

    @safe_html
    def _repr_html_(self) -> str:
        a, b = self.names
        summary = self.summary()
        named = "" if self.label is None else f" {self.label}"  # html_table escapes the caption
        caption = f"PairwiseResult{named}: {b} (B) vs {a} (A) · {len(self.tasks)} tasks · rate = B's share, a tie half"
        rows = summary.to_dict("records")
        for row in rows:  # a comparator that decided nothing has no rate, interval or test to show
            if row[col.N] == 0:
                row[col.P_VALUE] = None
        table = html_table(rows, list(summary.columns), caption=caption)
        failed = set(self._failures().values())
        notes = "".join(f"<li>{'<strong>FAILED</strong>: ' if text in failed else ''}{escape(text)}</li>"
                        for text in self.warnings)
        notes = f'<div class="cogeval"><ul>{notes}</ul></div>' if notes else ""
        cases = self.to_frame()[[TASK_ID, col.INPUT, COMPARATOR, col.WINNER, FLIPPED, col.ERROR]]
        verdicts = html_table(cases.to_dict("records"), list(cases.columns), caption="Verdicts", max_rows=10)
        return table + notes + verdicts


def load_pairwise(path: str | os.PathLike[str]) -> PairwiseResult:
    """Read a pairwise file written by :meth:`PairwiseResult.save`; errors name the file and the field
    (see :mod:`cogeval.pairwise.file`)."""
    return PairwiseResult.from_file(read_pairwise_file(path), pathlib.Path(path))
