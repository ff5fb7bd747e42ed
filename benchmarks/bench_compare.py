"""Time and memory of compare_scores against the numpy floor of its bootstrap resampling.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_compare.py [--cases N] [--metrics M] [--resamples B] [--repeat R]

Two score tables of ``--cases`` matched cases × ``--metrics`` metrics (half
binary, half continuous; one trial; 1% of cases failed in one run), compared
with ``--resamples`` bootstrap resamples per metric. Everything is measured in
this one process:

- floor: per metric one ``rng.integers(0, n, size=(B, n))`` draw and its
  ``.mean(axis=1)``, the least any vectorised bootstrap of the mean must do;
- compare_scores: the whole comparison (pairing, tests, Holm, intervals, changes);
- compare_scores with ``n_resamples=1``: everything but the resampling.

Time is the best of ``--repeat`` runs; peak memory is tracemalloc's peak of one run.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from cogeval.compare.engine import compare_scores
from measure import best_time, peak_bytes


def score_table(run_id: str, n: int, metrics: int, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for j in range(metrics):
        binary = j % 2 == 0
        score = (rng.random(n) < 0.6 + shift).astype(float) if binary else rng.normal(0.5 + shift, 0.1, n)
        frames.append(pd.DataFrame({
            "run_id": run_id, "case_key": [f"case-{i:05d}" for i in range(n)], "occurrence": 0, "trial": 0,
            "metric": f"metric_{j}", "score": score, "error": None, "case_error": False,
        }))
    table = pd.concat(frames, ignore_index=True)
    failed = table["case_key"].isin([f"case-{i:05d}" for i in rng.choice(n, n // 100, replace=False)])
    table.loc[failed, ["score", "case_error"]] = [np.nan, True]
    return table


def floor(n: int, metrics: int, n_resamples: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(metrics):
        rng.integers(0, n, size=(n_resamples, n)).mean(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best is kept)")
    args = parser.parse_args()
    n, m, b = args.cases, args.metrics, args.resamples
    base = score_table("base", n, m, 0.0, 1)
    head = score_table("head", n, m, 0.01, 2)
    directions = {f"metric_{j}": True for j in range(m)}
    cases = {
        "numpy floor": lambda: floor(n, m, b, 0),
        "compare_scores": lambda: compare_scores(base, head, directions=directions, seed=0, n_resamples=b),
        "compare_scores, 1 resample": lambda: compare_scores(base, head, directions=directions, seed=0, n_resamples=1),
    }
    for function in cases.values():  # warm up: imports, first allocations
        function()
    times = {name: best_time(function, args.repeat) for name, function in cases.items()}
    peaks = {name: peak_bytes(function) for name, function in cases.items()}
    print(f"{n:,} cases x {m} metrics x {b:,} resamples, best of {args.repeat}; "
          f"numpy {np.__version__}, pandas {pd.__version__}")
    print(f"{'':28} {'time s':>8} {'/ floor':>8} {'peak MB':>9}")
    for name in cases:
        print(f"{name:28} {times[name]:8.3f} {times[name] / times['numpy floor']:8.2f} {peaks[name] / 1e6:9.1f}")


if __name__ == "__main__":
    main()
