"""Time and memory of compare_scores against the floor of what any comparison must do.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_compare.py [--cases N] [--metrics M] [--repeat R]

Two score tables of ``--cases`` matched cases × ``--metrics`` metrics (half
binary, half continuous; one trial; 1% of cases failed in one run). Everything
is measured in this one process:

- floor: one pandas pivot of each table to ``cases × metrics`` and, per metric,
  scipy's paired t-test or McNemar's discordant counts and binomial p-value:
  the least a paired comparison of these tables must do;
- compare_scores: the whole comparison (pairing with the failure rules, tests,
  Holm per role, test-inversion intervals, TOST where a margin is set, power,
  changes), with ``test="t"`` and with ``test="wilcoxon"`` (whose Hodges–Lehmann
  interval is searched by bisection on 10,000 pairs).

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


def floor(base: pd.DataFrame, head: pd.DataFrame) -> None:
    from scipy import stats

    b = base.pivot_table(index="case_key", columns="metric", values="score")
    h = head.pivot_table(index="case_key", columns="metric", values="score").reindex(b.index)
    for metric in b.columns:
        x, y = b[metric].to_numpy(), h[metric].to_numpy()
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all():
            worse, better = int(np.sum(x > y)), int(np.sum(x < y))
            stats.binomtest(worse, worse + better)
        else:
            stats.ttest_rel(y, x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best is kept)")
    args = parser.parse_args()
    n, m = args.cases, args.metrics
    base = score_table("base", n, m, 0.0, 1)
    head = score_table("head", n, m, 0.01, 2)
    directions = {f"metric_{j}": True for j in range(m)}
    cases = {
        "floor": lambda: floor(base, head),
        "compare_scores": lambda: compare_scores(base, head, directions=directions),
        "compare_scores, wilcoxon": lambda: compare_scores(base, head, directions=directions, test="wilcoxon"),
    }
    for function in cases.values():  # warm up: imports, first allocations
        function()
    times = {name: best_time(function, args.repeat) for name, function in cases.items()}
    peaks = {name: peak_bytes(function) for name, function in cases.items()}
    print(f"{n:,} cases x {m} metrics, best of {args.repeat}; numpy {np.__version__}, pandas {pd.__version__}")
    print(f"{'':28} {'time s':>8} {'/ floor':>8} {'peak MB':>9}")
    for name in cases:
        print(f"{name:28} {times[name]:8.3f} {times[name] / times['floor']:8.2f} {peaks[name] / 1e6:9.1f}")


if __name__ == "__main__":
    main()
