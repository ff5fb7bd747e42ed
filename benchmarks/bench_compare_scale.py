"""compare_runs at scale: time and memory as ratios to a numpy floor and to the score columns.

Run by hand (not in CI):
.venv/bin/python benchmarks/bench_compare_scale.py [--sizes 10000 100000 1000000] [--repeat R] [--by]

For each size, two runs of that many matched cases × 5 metrics (3 binary, 2 continuous, one trial;
1% of the head run's cases failed) are built with ``EvalRun.from_frame``, the public path from a table
(its time is printed but not part of any ratio). Imports are made by a warm-up comparison of 200 cases
(enough discordant pairs for McNemar's chi-square, which imports scipy.stats) before any timing.
Measured in this one process:

- floor: per metric, on the two runs' aligned score arrays, the paired differences and McNemar's
  discordant counts (binary) or the t statistic (continuous): the arithmetic any paired comparison
  of these runs must do, with no table work at all;
- ``compare_runs(base, head)``: everything, from the two ``EvalRun`` objects to the result with its
  ``changes`` table;
- ``compare_scores`` (the engine alone) on the two runs' score tables, made beforehand;
- with ``--by``: ``compare_runs(base, head, by="topic")``, each case's metadata holding one of 8 topics.

Printed ratios: time over the floor; tracemalloc's peak over the bytes of the score columns
(2 runs × cases × 5 float64 values); the time per case relative to the first size.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from cogeval.compare.engine import compare_scores
from cogeval.compare.runs import compare_runs, score_frame
from cogeval.data import EvalRun
from measure import best_time, peak_bytes

METRICS = ["binary_0", "binary_1", "binary_2", "continuous_0", "continuous_1"]


def table(n: int, shift: float, failed: float, seed: int, topics: bool = False) -> pd.DataFrame:
    """One run's wide table: ``case_key``, ``input``, 5 metric columns and ``error`` (``failed`` share of cases);
    with ``topics``, a ``topic`` column (the case's metadata) of 8 topics."""
    rng = np.random.default_rng(seed)
    keys = np.char.add("case-", np.arange(n).astype(str)).astype(object)
    frame = pd.DataFrame({"case_key": keys, "input": keys})
    for name in METRICS:
        frame[name] = (rng.random(n) < 0.6 + shift).astype(float) if name.startswith("binary") else rng.normal(shift, 1, n)
    frame["error"] = np.where(rng.random(n) < failed, "timeout", None)
    if topics:
        frame["topic"] = np.char.add("topic-", (np.arange(n) % 8).astype(str)).astype(object)
    return frame


def floor(base: dict[str, np.ndarray], head: dict[str, np.ndarray]) -> None:
    """Per metric: the paired differences and McNemar's counts or the t statistic, on aligned arrays."""
    for name in METRICS:
        d = head[name] - base[name]
        if name.startswith("binary"):
            int(np.count_nonzero(d < 0)), int(np.count_nonzero(d > 0))
        else:
            d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))


def arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The score columns, with a failed case's score 0 (what the comparison counts it as)."""
    failed = frame["error"].notna().to_numpy()
    return {name: np.where(failed, 0.0, frame[name].to_numpy()) for name in METRICS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=2, help="runs per timing (best is kept)")
    parser.add_argument("--test", default="t", choices=["t", "wilcoxon"])
    parser.add_argument("--by", action="store_true", help='also time compare_runs(by="topic")')
    args = parser.parse_args()
    print(f"numpy {np.__version__}, pandas {pd.__version__}; best of {args.repeat}; test={args.test}")
    print(f"{'cases':>9} {'':16} {'time s':>8} {'x floor':>9} {'peak MB':>9} {'x columns':>10} {'s/case x first':>15}")
    first: dict[str, float] = {}
    warm = [EvalRun.from_frame(table(200, shift, 0.01, seed, args.by)) for shift, seed in ((0.0, 0), (0.2, 3))]
    compare_runs(*warm, test=args.test, by="topic" if args.by else None)  # imports scipy and statsmodels
    for n in args.sizes:
        base_table, head_table = table(n, 0.0, 0.0, 1, args.by), table(n, 0.01, 0.01, 2, args.by)
        start = time.perf_counter()
        base, head = EvalRun.from_frame(base_table), EvalRun.from_frame(head_table)
        built = time.perf_counter() - start
        base_scores, head_scores = score_frame(base), score_frame(head)
        base_arrays, head_arrays = arrays(base_table), arrays(head_table)
        directions = dict.fromkeys(METRICS, True)
        cases = {
            "floor": lambda: floor(base_arrays, head_arrays),
            "compare_runs": lambda: compare_runs(base, head, test=args.test),
            "compare_scores": lambda: compare_scores(base_scores, head_scores, directions=directions, test=args.test),
        }
        if args.by:
            cases["compare_runs by"] = lambda: compare_runs(base, head, test=args.test, by="topic")
        times = {name: best_time(function, args.repeat) for name, function in cases.items()}
        peaks = {name: peak_bytes(function) for name, function in cases.items()}
        columns = 2 * n * len(METRICS) * 8
        print(f"{n:9,} {'from_frame x2':16} {built:8.2f}")
        for name in cases:
            per_case = times[name] / n
            first.setdefault(name, per_case)
            print(f"{n:9,} {name:16} {times[name]:8.3f} {times[name] / times['floor']:9.1f} "
                  f"{peaks[name] / 1e6:9.1f} {peaks[name] / columns:10.2f} {per_case / first[name]:15.2f}")


if __name__ == "__main__":
    main()
