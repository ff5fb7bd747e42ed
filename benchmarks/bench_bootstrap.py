"""Time and memory of bootstrap_ci against the bare numpy floor and scipy.stats.bootstrap.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_bootstrap.py [--repeat N] [--n N] [--resamples B]

Everything is measured in this one process, so the ratios compare like with like:
- floor: one ``rng.integers(0, n, size=(B, n))`` draw and one ``.mean(axis=1)`` of it,
  the least any vectorised bootstrap of the mean must do (it even skips the gather);
- scipy: ``scipy.stats.bootstrap((x,), np.mean, vectorized=True, method="percentile")``.
Time is the best of ``--repeat`` runs; peak memory is tracemalloc's peak of one run;
faults are the minor page faults of one run (memory the allocator had to map afresh).
A last table sweeps ``cogeval.stats.intervals.CHUNK_ELEMENTS``.
"""

from __future__ import annotations

import argparse
import resource

import numpy as np
from scipy import stats

from cogeval.stats import bootstrap_ci, intervals
from measure import best_time, peak_bytes


def floor(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, len(x), size=(n_resamples, len(x))).mean(axis=1)


def scipy_bootstrap(x: np.ndarray, n_resamples: int, seed: int):
    return stats.bootstrap((x,), np.mean, vectorized=True, n_resamples=n_resamples, method="percentile",
                           rng=np.random.default_rng(seed)).confidence_interval


def ours(x: np.ndarray, n_resamples: int, seed: int, method: str = "percentile"):
    return bootstrap_ci(x, n_resamples=n_resamples, seed=seed, method=method)


def page_faults(function) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    function()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="number of values")
    parser.add_argument("--resamples", type=int, default=10_000, help="number of resamples")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (best is kept)")
    args = parser.parse_args()
    x = np.random.default_rng(0).normal(size=args.n)
    b = args.resamples
    cases = {
        "numpy floor": lambda: floor(x, b, 1),
        "bootstrap_ci percentile": lambda: ours(x, b, 1),
        "bootstrap_ci bca": lambda: ours(x, b, 1, "bca"),
        "scipy.stats.bootstrap percentile": lambda: scipy_bootstrap(x, b, 1),
    }
    for function in cases.values():  # warm up: imports, page faults of first allocations
        function()
    times = {name: best_time(function, args.repeat) for name, function in cases.items()}
    peaks = {name: peak_bytes(function) for name, function in cases.items()}
    faults = {name: page_faults(function) for name, function in cases.items()}
    print(f"{args.n:,} values x {b:,} resamples, best of {args.repeat}; numpy {np.__version__}")
    print(f"{'':34} {'time s':>8} {'/ floor':>8} {'peak MB':>9} {'/ floor':>8} {'faults':>8}")
    for name in cases:
        print(f"{name:34} {times[name]:8.3f} {times[name] / times['numpy floor']:8.2f} "
              f"{peaks[name] / 1e6:9.1f} {peaks[name] / peaks['numpy floor']:8.3f} {faults[name]:8d}")
    print(f"bootstrap_ci percentile / scipy: time {times['bootstrap_ci percentile'] / times['scipy.stats.bootstrap percentile']:.2f}, "
          f"memory {peaks['bootstrap_ci percentile'] / peaks['scipy.stats.bootstrap percentile']:.3f}")

    default = intervals.CHUNK_ELEMENTS
    print(f"\nCHUNK_ELEMENTS sweep (default {default:,}), bootstrap_ci percentile")
    print(f"{'elements':>10} {'time s':>8} {'/ floor':>8} {'faults':>8}")
    for chunk in (1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 20, 1 << 22):
        intervals.CHUNK_ELEMENTS = chunk
        seconds = best_time(cases["bootstrap_ci percentile"], args.repeat)
        print(f"{chunk:10,} {seconds:8.3f} {seconds / times['numpy floor']:8.2f} "
              f"{page_faults(cases['bootstrap_ci percentile']):8d}")
    intervals.CHUNK_ELEMENTS = default


if __name__ == "__main__":
    main()
