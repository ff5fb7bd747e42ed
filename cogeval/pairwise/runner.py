"""Running a head-to-head: ask every comparator about every task, live (:func:`run_pairwise`) or on answers
already given (:func:`evaluate_pairwise`).

The rule for a task a target failed on: the other variant wins without asking
anyone (as ``compare_runs`` scores a failure 0); a task both failed on has no
verdict. With ``store``, the result is saved there when it is returned, and
again once the last pair of a labelling widget is labelled (a new result).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from cogeval._check import check_positive_int, check_positive_number, check_retries, describe
from cogeval.data.run_id import iso_utc, new_run_id, utc_now
from cogeval.errors import InputError
from cogeval.evaluate.suite import as_dataset
from cogeval.execution import run_interleaved, run_sync
from cogeval.pairwise.comparator import Comparator, Labelling, check_comparators
from cogeval.pairwise.file import check_label
from cogeval.pairwise.judge import warn_self_preference
from cogeval.pairwise.result import PairwiseResult
from cogeval.pairwise.sources import pair_sources
from cogeval.pairwise.verdict import PairTask, Verdict, check_names, task_id
from cogeval.store import RunStore

Store = RunStore | str | os.PathLike[str] | None


def _failure_verdict(task: PairTask) -> Verdict:
    """The rule for a task a target failed on: the other variant wins; no verdict when both failed."""
    if task.error_a is not None and task.error_b is not None:
        return Verdict(None, error=f"both variants failed: a: {task.error_a}; b: {task.error_b}")
    loser, error = ("a", task.error_a) if task.error_a is not None else ("b", task.error_b)
    return Verdict("b" if loser == "a" else "a", reasoning=f"variant {loser} failed: {error}")


async def judge_tasks(tasks: Sequence[PairTask], comparators: Sequence[Comparator], names: tuple[str, str],
                      concurrency: int = 5, *, label: str | None = None) -> PairwiseResult:
    """Ask every comparator, in turn, about the tasks both variants answered; the shared core of
    :func:`run_pairwise` and :func:`evaluate_pairwise` (use it for tasks of your own making)."""
    started = utc_now()
    judged = [i for i, t in enumerate(tasks) if t.error_a is None and t.error_b is None]
    verdicts: dict[str, list[Verdict]] = {}
    for comparator in comparators:
        merged = [None if t.error_a is None and t.error_b is None else _failure_verdict(t) for t in tasks]
        decided = await comparator.decide([tasks[i] for i in judged], concurrency)
        for i, verdict in zip(judged, decided):
            merged[i] = verdict
        verdicts[comparator.key] = merged  # type: ignore[assignment]
    return PairwiseResult(new_run_id(started), iso_utc(started), names, tuple(tasks), verdicts,
                          {c.key: c.describe() for c in comparators}, label=label)


def _finish(result: PairwiseResult, comparators: Sequence[Comparator], store: Store) -> PairwiseResult:
    """Save the result to ``store`` (if any) and let the comparators follow up (the labelling widget)."""
    if store is not None:
        result = dataclasses.replace(result, path=result.save(store))
    labelling = Labelling(result, store)
    for comparator in comparators:
        comparator.after(labelling)
    return result


def _check_store(store: Any) -> Store:
    if store is not None and not isinstance(store, (RunStore, str, os.PathLike)):
        raise InputError(f"store must be a RunStore, a folder path or None; got {describe(store)}")
    return store


def _checked(comparators: Any, store: Any, names: Any, concurrency: Any,
             label: Any = None) -> tuple[list[Comparator], Store, tuple[str, str]]:
    checked = check_comparators(comparators), _check_store(store), check_names(names)
    check_positive_int("concurrency", concurrency)
    check_label(label)
    return checked


def _prepare(dataset: Any, variants: tuple[Any, Any], comparators: Any, store: Any, names: Any, concurrency: Any,
             timeout: Any, retries: Any, label: Any) -> tuple[list[Any], list[Comparator], Store, tuple[str, str]]:
    """Check every argument before any target runs, and warn about self-judging (at the caller of the caller)."""
    checked, store, names = _checked(comparators, store, names, concurrency, label)
    check_positive_number("timeout", timeout)
    check_retries("retries", retries)
    cases = list(as_dataset(dataset))
    warn_self_preference(checked, dict(zip(names, variants)), stacklevel=4)
    return cases, checked, store, names


async def _run(cases: list[Any], variants: tuple[Any, Any], comparators: list[Comparator], store: Store,
               names: tuple[str, str], concurrency: int, timeout: float, retries: int,
               label: str | None) -> PairwiseResult:
    # back to back per case, in an order alternating per case, so load over time hits both alike
    outcomes_a, outcomes_b = await run_interleaved(cases, list(variants), concurrency=concurrency, timeout=timeout,
                                                   retries=retries)
    tasks = [PairTask(task_id(a.case_key, a.occurrence), a.case_key, a.case, a.output, b.output, a.error, b.error)
             for a, b in zip(outcomes_a, outcomes_b)]
    return _finish(await judge_tasks(tasks, comparators, names, concurrency, label=label), comparators, store)


def run_pairwise(dataset: Any, variant_a: Any, variant_b: Any, comparators: Any, store: Store = None, *,
                 names: tuple[str, str] = ("a", "b"), concurrency: int = 5, timeout: float = 30.0,
                 retries: int = 0, label: str | None = None) -> PairwiseResult:
    """Run both targets on every case, then let each comparator decide, case by case, whether B beat A.

    ``variant_a`` and ``variant_b`` are targets (as for :class:`~cogeval.EvalSuite`),
    run back to back on each case, in an order alternating per case (so load
    that changes over time hits both alike), with up to ``concurrency`` cases
    in flight, ``timeout`` seconds and ``retries`` per attempt. ``comparators`` are
    :func:`~cogeval.pairwise_judge`, :func:`~cogeval.human_pairwise` and
    :func:`~cogeval.human_labels` comparators with distinct keys. ``names`` name A
    and B in :meth:`PairwiseResult.pairs`. ``label`` names the comparison (AG2's
    ``label``: e.g. ``"prompt-v2 vs v1"``), kept as the result's ``label`` and in
    its file. With ``store`` (a :class:`~cogeval.RunStore`
    or a folder) the result is saved there (and saved again, as a new result, when
    a labelling widget is done). Works inside Jupyter's running event loop;
    ``await arun_pairwise(...)`` is the async form.

    To rank N variants, run every pair and give the pairs to
    :func:`~cogeval.bradley_terry` (see docs/pairwise.md).
    """
    variants = (variant_a, variant_b)
    cases, checked, store, names = _prepare(dataset, variants, comparators, store, names, concurrency, timeout, retries,
                                            label)
    result: PairwiseResult = run_sync(_run(cases, variants, checked, store, names, concurrency, timeout, retries,
                                           label))
    result._warn_failures()
    return result


async def arun_pairwise(dataset: Any, variant_a: Any, variant_b: Any, comparators: Any, store: Store = None, *,
                        names: tuple[str, str] = ("a", "b"), concurrency: int = 5, timeout: float = 30.0,
                        retries: int = 0, label: str | None = None) -> PairwiseResult:
    """Async form of :func:`run_pairwise`."""
    variants = (variant_a, variant_b)
    cases, checked, store, names = _prepare(dataset, variants, comparators, store, names, concurrency, timeout, retries,
                                            label)
    result = await _run(cases, variants, checked, store, names, concurrency, timeout, retries, label)
    result._warn_failures()
    return result


def evaluate_pairwise(a: Any, b: Any, dataset: Any, comparators: Any, store: Store = None, *,
                      names: tuple[str, str] = ("a", "b"), concurrency: int = 5,
                      label: str | None = None) -> PairwiseResult:
    """Grade two existing sources head to head, paired by task id (no target is called) → :class:`PairwiseResult`.

    ``a`` and ``b`` are sources (see :mod:`cogeval.pairwise.sources`); ``dataset``
    (or ``None``) chooses the tasks and their order and gives the cases the
    comparators see (else A's). Tasks not in both are left out with a warning.
    ``comparators``, ``store``, ``names`` and ``label`` are as for :func:`run_pairwise`.
    """
    comparators, store, names = _checked(comparators, store, names, concurrency, label)
    tasks = pair_sources(a, b, dataset)
    result = _finish(run_sync(judge_tasks(tasks, comparators, names, concurrency, label=label)), comparators, store)
    result._warn_failures()
    return result


async def aevaluate_pairwise(a: Any, b: Any, dataset: Any, comparators: Any, store: Store = None, *,
                             names: tuple[str, str] = ("a", "b"), concurrency: int = 5,
                             label: str | None = None) -> PairwiseResult:
    """Async form of :func:`evaluate_pairwise`."""
    comparators, store, names = _checked(comparators, store, names, concurrency, label)
    tasks = pair_sources(a, b, dataset)
    result = _finish(await judge_tasks(tasks, comparators, names, concurrency, label=label), comparators, store)
    result._warn_failures()
    return result
