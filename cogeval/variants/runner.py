"""Variants: run N targets on one dataset, interleaved, and rank them on a :class:`~cogeval.Leaderboard`.

>>> from cogeval import Variants, exact_match, run_variants
>>> data = [{"input": str(i), "expected": str(i)} for i in range(20)]
>>> board = run_variants(data, Variants({"echo": lambda q: q, "zero": lambda q: "0"}, axis="prompt"),
...                      [exact_match()], progress=False)
>>> board.leaderboard("exact_match")[["variant", "score", "n", "rank", "significant"]].values.tolist()
[['echo', 1.0, 20, 1, False], ['zero', 0.05, 20, 2, True]]
>>> board.best("exact_match")
'echo'
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from cogeval._check import check_positive_int, describe
from cogeval.compare.leaderboard import Leaderboard, frozen_mapping
from cogeval.errors import InputError
from cogeval.evaluate.suite import EvalSuite, arun_interleaved
from cogeval.execution import run_sync
from cogeval.store import RunStore


@dataclasses.dataclass(frozen=True)
class Variants:
    """Named targets that differ along one ``axis`` (a prompt, a model, a config...).

    >>> Variants({"short": lambda q: q, "long": lambda q: q * 2}, axis="prompt").names
    ['short', 'long']
    """

    targets: Mapping[str, Any]
    """Variant name → target (anything :class:`~cogeval.EvalSuite` accepts)."""
    axis: str = "config"
    """What was varied; recorded in every run's metadata."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", frozen_mapping("Variants", self.targets, "a target"))
        if not isinstance(self.axis, str) or not self.axis.strip():
            raise InputError(f"axis must be a non-empty string naming what was varied; got {describe(self.axis)}")

    @property
    def names(self) -> list[str]:
        """The variant names, in order."""
        return list(self.targets)

    def __len__(self) -> int:
        return len(self.targets)


def run_variants(
    dataset: Any,
    variants: Variants | Mapping[str, Any],
    metrics: Sequence[Any],
    judge: Any = None,
    store: RunStore | str | os.PathLike[str] | None = None,
    repeats: int = 1,
    concurrency: int = 5,
    *,
    statistical_metrics: Sequence[Any] = (),
    timeout: float = 30.0,
    retries: int = 0,
    progress: bool = True,
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = 0,
) -> Leaderboard:
    """Run every variant on ``dataset`` and return their :class:`Leaderboard`.

    Each variant is one :class:`~cogeval.EvalSuite` run named after the
    variant, with metadata ``{"axis": ..., "variant": ...}`` and
    ``trials=repeats``. The variants answer each case back to back, in an
    order rotating by one per case (each goes first equally often), with up to
    ``concurrency`` cases in flight; so load that changes over time (a warming
    cache, a busy API) hits every variant alike. With ``store`` (a
    :class:`~cogeval.RunStore` or a folder) every run is saved when they finish. ``alpha``, ``test`` and
    ``seed`` are the leaderboard's (see :class:`Leaderboard`). Works inside
    Jupyter's running event loop; ``await arun_variants(...)`` is the async form.
    """
    return run_sync(arun_variants(
        dataset, variants, metrics, judge, store, repeats, concurrency, statistical_metrics=statistical_metrics,
        timeout=timeout, retries=retries, progress=progress, alpha=alpha, test=test, seed=seed,
    ))


async def arun_variants(
    dataset: Any,
    variants: Variants | Mapping[str, Any],
    metrics: Sequence[Any],
    judge: Any = None,
    store: RunStore | str | os.PathLike[str] | None = None,
    repeats: int = 1,
    concurrency: int = 5,
    *,
    statistical_metrics: Sequence[Any] = (),
    timeout: float = 30.0,
    retries: int = 0,
    progress: bool = True,
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = 0,
) -> Leaderboard:
    """Async form of :func:`run_variants`.

    The variants run interleaved (:func:`~cogeval.evaluate.suite.arun_interleaved`):
    each case-trial is answered by every variant back to back, in an order
    that rotates by one variant per case-trial (with variants A, B, C and
    ``repeats=1``: case 0 ABC, case 1 BCA, case 2 CAB, ...), so each goes first
    equally often and load that changes over time meets every variant alike.
    Up to ``concurrency`` case-trials are in flight (so at most ``concurrency``
    calls at once); with ``store`` every run is saved when the runs finish.
    """
    if not isinstance(variants, Variants):
        if not isinstance(variants, Mapping):
            raise InputError(f"variants must be a Variants or a mapping of names to targets; got {describe(variants)}")
        variants = Variants(variants)
    repeats = check_positive_int("repeats", repeats)
    if store is not None and not isinstance(store, RunStore):
        store = RunStore(store)
    suites = {
        name: EvalSuite(
            dataset, target, metrics=metrics, statistical_metrics=statistical_metrics, judge=judge,
            concurrency=concurrency, timeout=timeout, retries=retries, trials=repeats, progress=progress,
            name=name, metadata={"axis": variants.axis, "variant": name},
        )
        for name, target in variants.targets.items()
    }
    # Check the leaderboard's arguments before spending anything on the runs.
    Leaderboard({name: None for name in suites}, axis=variants.axis, alpha=alpha, test=test, seed=seed)

    results = await arun_interleaved(list(suites.values()))
    if store is not None:
        for result in results:
            store.save(result)
    return Leaderboard(dict(zip(suites, results)), axis=variants.axis, alpha=alpha, test=test, seed=seed)
