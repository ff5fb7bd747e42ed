"""Clustered comparisons: type-I error and power of naive and clustered tests, and what ``cluster=`` costs.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_clustered.py [--reps 2000] [--seed 0] [--runs 5]
(``--only type-i,power,cost`` picks the parts). Seeded: the same arguments print the same tables (the times aside).

Simulated data: G clusters (passages) of 8 questions each, head against base, no true difference unless stated.

- graded: the paired difference of question j of passage k is ``d = u_k + e_kj`` with ``u_k ~ N(0, ICC)`` (the
  passage moves head against base by its own amount, mean 0) and ``e_kj ~ N(0, 1 - ICC)``; base ~ N(0.5, 0.2²),
  head = base + 0.1·d (+ the effect, for power; the scale changes no test).
- 0/1: each passage flips a question (head differs from base) with its own probability ``f_k ~ Beta`` (mean 0.3,
  ICC 0.5 of the flips), and a flip goes head's way with the passage's own probability ``π_k ~ Beta(a, a)``
  (mean 1/2: no difference); ``a`` is set for the ICC of the paired differences, which is
  ``(0.3 + 0.5·0.7) / (2a + 1)``. Unflipped questions are right on both sides with probability 0.7.

(a) Type-I error at alpha 0.05: the share of replications whose one deciding metric gets the verdict better or
worse, naive (every question independent) and clustered (``cluster=``: CR2 t with Bell–McCaffrey df for graded
scores, Yang's McNemar or the exact cluster sign flip for 0/1). The grid runs the comparison's own paired test
(``cogeval.compare.paired.paired_test`` on a ``PairedSample``, what ``compare_frames`` runs per metric; with no
margin and one deciding metric the verdict is better or worse exactly when it is significant); one row also runs
every replication through ``compare_frames`` with and without ``cluster=`` and checks that the verdicts agree.

(b) Power at a planned effect (each ICC, 8 questions a passage): the plan comes from the product: one pilot of
1,000 passages through ``compare_frames(..., margins={metric: δ})``, without ``cluster=`` (``n_needed``) and with it
(``n_needed``, ``clusters_needed``, which use the clustered variance); then the share of replications decided
better at each plan's size, by the naive and by the clustered test.

(c) Cost: ``compare_frames`` of 100,000 cases in 1,000 clusters (100 questions each): a graded and a 0/1 metric
(``test="t"``), and the graded one with ``test="wilcoxon"``, with ``cluster="passage"`` against the same call
without it, alternated in one process, median of ``--runs`` runs after a warm-up.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import numpy as np
import pandas as pd

from cogeval import compare_frames
from cogeval.compare.paired import PairedSample, paired_test

SIZE = 8
"""Questions per passage (a)-(b)."""
ALPHA = 0.05
ICCS = (0.05, 0.2, 0.5)
GROUPS = (10, 30, 100, 200)
FLIPS, FLIP_ICC, BOTH_RIGHT = 0.3, 0.5, 0.7
"""0/1 data: the mean flip probability, the ICC of the passages' flip probabilities, P(right on both | no flip)."""


def _beta(rng: np.random.Generator, mean: float, icc: float, size: tuple[int, ...]) -> np.ndarray:
    """Beta draws with the given mean and intra-class correlation (a + b = 1/icc - 1)."""
    total = 1 / icc - 1
    return rng.beta(mean * total, (1 - mean) * total, size)


def graded(rng: np.random.Generator, reps: int, groups: int, icc: float, effect: float = 0.0,
           size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` replications (rows) of base and head scores of ``groups`` passages × ``size`` questions."""
    u = rng.normal(0, math.sqrt(icc), (reps, groups)).repeat(size, axis=1)
    d = u + rng.normal(0, math.sqrt(1 - icc), (reps, groups * size))
    base = rng.normal(0.5, 0.2, (reps, groups * size))
    return base, base + 0.1 * d + effect


def _direction_shape(icc: float) -> float:
    """The Beta(a, a) shape of the passages' flip directions that makes the paired differences' ICC ``icc``."""
    return ((FLIPS + FLIP_ICC * (1 - FLIPS)) / icc - 1) / 2


def pass_fail(rng: np.random.Generator, reps: int, groups: int, icc: float, effect: float = 0.0,
              size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """0/1 base and head; ``effect`` moves the mean difference to ``effect`` (the flips lean head's way)."""
    n = groups * size
    flips = _beta(rng, FLIPS, FLIP_ICC, (reps, groups)).repeat(size, axis=1)
    a = _direction_shape(icc)
    lean = 0.5 + effect / (2 * FLIPS)  # E[d] = FLIPS · (2·E[π] - 1)
    up = rng.beta(2 * a * lean, 2 * a * (1 - lean), (reps, groups)).repeat(size, axis=1)
    flipped = rng.random((reps, n)) < flips
    towards_head = rng.random((reps, n)) < up
    both = (rng.random((reps, n)) < BOTH_RIGHT).astype(float)
    base = np.where(flipped, (~towards_head).astype(float), both)
    head = np.where(flipped, towards_head.astype(float), both)
    return base, head


DRAWS = {"graded": graded, "0/1": pass_fail}


def _codes(groups: int, size: int = SIZE) -> np.ndarray:
    return np.repeat(np.arange(groups), size)


def decided(base: np.ndarray, head: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    """Per replication (row): the test's p-value < alpha, as the comparison tests one deciding metric."""
    return np.array([paired_test(PairedSample(b, h, clusters), "t").p_value < ALPHA for b, h in zip(base, head)])


def _frame(base: np.ndarray, head: np.ndarray, clusters: np.ndarray, name: str = "score") -> pd.DataFrame:
    n = len(base)
    return pd.DataFrame({"id": np.tile(np.arange(n), 2), "version": np.repeat(["v1", "v2"], n),
                         "passage": np.tile([f"p{k}" for k in clusters], 2), name: np.concatenate([base, head])})


def _verdict(frame: pd.DataFrame, cluster: str | None) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare_frames(frame, by="version", base="v1", head="v2", case="id", cluster=cluster).verdict


def type_one(reps: int, seed: int) -> None:
    print("### (a) Type-I error under a clustered null (alpha 0.05, 8 questions a passage)\n")
    print(f"{reps:,} replications a row; share decided better or worse. Monte-Carlo standard error "
          f"{math.sqrt(ALPHA * (1 - ALPHA) / reps):.1%} at 5%.\n")
    print("| scores | ICC | passages (G) | cases | naive | clustered | clustered test |")
    print("|---|---|---|---|---|---|---|")
    for kind, draw in DRAWS.items():
        for icc in ICCS:
            for groups in GROUPS:
                rng = np.random.default_rng([seed, GROUPS.index(groups), ICCS.index(icc), len(kind)])
                base, head = draw(rng, reps, groups, icc)
                codes = _codes(groups)
                naive, clustered = decided(base, head, None), decided(base, head, codes)
                used = {paired_test(PairedSample(b, h, codes), "t").name for b, h in zip(base[:50], head[:50])}
                print(f"| {kind} | {icc} | {groups} | {groups * SIZE:,} | {naive.mean():.1%} | {clustered.mean():.1%} "
                      f"| {', '.join(sorted(used))} |", flush=True)
    # one row through the product, replication by replication
    kind, icc, groups, rows = "graded", 0.2, 30, min(reps, 1000)
    rng = np.random.default_rng([seed, GROUPS.index(groups), ICCS.index(icc), len(kind)])
    base, head = graded(rng, reps, groups, icc)
    codes = _codes(groups)
    verdicts = {cluster: np.array([_verdict(_frame(b, h, codes), cluster) for b, h in zip(base[:rows], head[:rows])])
                for cluster in (None, "passage")}
    agree = all((np.isin(verdicts[c], ["better", "worse"]) == decided(base[:rows], head[:rows], k)).all()
                for c, k in ((None, None), ("passage", codes)))
    print(f"\nThrough `compare_frames` ({kind}, ICC {icc}, {groups} passages, the row's first {rows:,} replications): "
          f"naive {np.isin(verdicts[None], ['better', 'worse']).mean():.1%}, clustered "
          f"{np.isin(verdicts['passage'], ['better', 'worse']).mean():.1%}; the verdicts "
          f"{'agree with the table in every replication' if agree else 'DISAGREE with the table'}.\n")


def _plan(kind: str, icc: float, effect: float, seed: int) -> tuple[int, int, int]:
    """(naive n_needed, clustered n_needed, clustered clusters_needed) from one pilot of 1,000 passages."""
    rng = np.random.default_rng([seed, 99, ICCS.index(icc), len(kind)])
    base, head = DRAWS[kind](rng, 1, 1000, icc, effect)
    frame = _frame(base[0], head[0], _codes(1000))
    plans = []
    for cluster in (None, "passage"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = compare_frames(frame, by="version", base="v1", head="v2", case="id", cluster=cluster,
                               margins={"score": effect}).metrics["score"]
        plans.append(m)
    return int(plans[0].n_needed), int(plans[1].n_needed), int(plans[1].clusters_needed)


def power(reps: int, seed: int) -> None:
    effects = {"graded": 0.025, "0/1": 0.05}  # graded: a quarter of the differences' sd (0.1)
    print("### (b) Power at the planned effect (8 questions a passage, alpha 0.05, power 0.8 planned)\n")
    print("Plans from one pilot of 1,000 passages through `compare_frames(..., margins={\"score\": δ})`; "
          f"{reps:,} replications a cell; share decided better (the type-I error of the same test and size "
          "with no true difference in brackets).\n")
    print("| scores | ICC | δ | naive n_needed | clustered n_needed (clusters_needed) | naive test at naive n "
          "| clustered test at naive n | clustered test at clusters_needed |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in DRAWS:
        for icc in ICCS:
            effect = effects[kind]
            naive_n, clustered_n, needed = _plan(kind, icc, effect, seed)
            cells = []
            for groups, clustered in ((math.ceil(naive_n / SIZE), False), (math.ceil(naive_n / SIZE), True),
                                      (needed, True)):
                codes = _codes(groups)
                found = []
                for shift in (effect, 0.0):
                    rng = np.random.default_rng([seed, groups, ICCS.index(icc), len(kind), int(shift > 0)])
                    base, head = DRAWS[kind](rng, reps, groups, icc, shift)
                    found.append(decided(base, head, codes if clustered else None).mean())
                cells.append(f"{found[0]:.1%} ({found[1]:.1%})")
            print(f"| {kind} | {icc} | {effect:g} | {naive_n:,} | {clustered_n:,} ({needed:,}) | "
                  f"{' | '.join(cells)} |", flush=True)
    print()


def cost(runs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups, size = 1000, 100
    n = groups * size
    codes = _codes(groups, size)
    u = rng.normal(0, 0.3, groups)[codes]
    base_graded = rng.uniform(0, 1, n)
    head_graded = np.clip(base_graded + 0.01 + 0.1 * u + rng.normal(0, 0.2, n), 0, 1)
    base_binary = (rng.random(n) < 0.7).astype(float)
    head_binary = np.where(rng.random(n) < 0.2 + 0.1 * np.abs(u), 1 - base_binary, base_binary)
    frame = pd.DataFrame({"id": np.tile(np.arange(n), 2), "version": np.repeat(["v1", "v2"], n),
                          "passage": np.tile([f"p{k}" for k in codes], 2),
                          "graded": np.concatenate([base_graded, head_graded]),
                          "binary": np.concatenate([base_binary, head_binary])})
    calls = {"graded + 0/1, test=\"t\"": {"metrics": ["graded", "binary"], "test": "t"},
             "graded, test=\"wilcoxon\"": {"metrics": ["graded"], "test": "wilcoxon"}}

    def timed(options: dict, cluster: str | None) -> float:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare_frames(frame, by="version", base="v1", head="v2", case="id", cluster=cluster, **options)
        return time.perf_counter() - started

    print(f"### (c) Cost: 100,000 cases in 1,000 clusters, median of {runs} alternated runs after a warm-up\n")
    print("| call | without cluster= | cluster=\"passage\" | ratio |")
    print("|---|---|---|---|")
    totals: dict[str | None, list[float]] = {None: [0.0] * runs, "passage": [0.0] * runs}
    for name, options in calls.items():
        for cluster in (None, "passage"):
            timed(options, cluster)  # warm-up
        times: dict[str | None, list[float]] = {None: [], "passage": []}
        for run in range(runs):
            for cluster in ((None, "passage") if run % 2 == 0 else ("passage", None)):
                times[cluster].append(timed(options, cluster))
                totals[cluster][run] += times[cluster][-1]
        plain, clustered = statistics.median(times[None]), statistics.median(times["passage"])
        ratios = [c / p for c, p in zip(times["passage"], times[None])]
        print(f"| {name} | {plain:.2f} s | {clustered:.2f} s | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}–{max(ratios):.2f}) |", flush=True)
    ratios = [c / p for c, p in zip(totals["passage"], totals[None])]
    print(f"| all three metrics | {statistics.median(totals[None]):.2f} s | {statistics.median(totals['passage']):.2f} s "
          f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="replications per row of (a) and cell of (b)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each call in (c)")
    parser.add_argument("--only", default="type-i,power,cost", help="the parts to run, comma-separated")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    started = time.perf_counter()
    if "type-i" in parts:
        type_one(args.reps, args.seed)
    if "power" in parts:
        power(args.reps, args.seed)
    if "cost" in parts:
        cost(args.runs, args.seed)
    print(f"seed {args.seed}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
