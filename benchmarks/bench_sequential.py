"""Cases compare_sequential runs to a decision, against the fixed-n design with the same alpha, margin and power 0.8.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_sequential.py [--reps N] [--seed S]

Simulated paired differences (no targets run), one deciding metric, alpha = 0.05:

- pass/fail: base passes with probability 0.7, head with 0.7 + effect, independently (McNemar plan,
  discordance from those rates);
- graded: base scores uniform on 0, 0.1, ..., 1; head = base + effect + normal(0, 0.25) noise, clipped to
  [0, 1] and rounded to 0.1 (t-test plan with the differences' sd; the true mean difference is measured on
  10^6 draws and is the margin, so the effect equals the margin exactly).

The fixed-n plan is ``plan_sample_size(margin, ..., power=0.8)``, what ``compare_sequential`` reports as
``planned_cases``. Each replication draws 4 × that many cases; the sequence is computed once on them (its rows
never change, so row t is what the comparison sees after t cases) and compare_sequential's rule is applied at
every batch end: stop once the sequence excludes 0 or lies within ±margin, else at the cap. Reported: the mean
cases to a decision, E[N] / n_fixed, the median, the 90th percentile, and the share of replications that
reached the right decision (``better`` when effect > 0, ``equivalent`` when 0) before the cap. Rows: the
true difference equal to the margin (the issue's criterion), twice the shift, and 0.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cogeval.compare.sequential import _verdicts
from cogeval.stats import confidence_sequence, plan_sample_size


def pass_fail(rng: np.random.Generator, effect: float, size: tuple[int, int]) -> np.ndarray:
    return (rng.random(size) < 0.7 + effect).astype(float) - (rng.random(size) < 0.7).astype(float)


def graded(rng: np.random.Generator, effect: float, size: tuple[int, int]) -> np.ndarray:
    base = rng.integers(0, 11, size) / 10
    head = np.round(np.clip(base + effect + rng.normal(0, 0.25, size), 0, 1), 1)
    return head - base


def plan(kind: str, margin: float, effect: float) -> int:
    if kind == "pass/fail":
        return plan_sample_size(margin, discordance=0.7 * (0.3 - effect) + 0.3 * (0.7 + effect))
    sd = float(graded(np.random.default_rng(1), effect, (1, 1_000_000)).std())
    return plan_sample_size(margin, sd=sd)


def stopping(d: np.ndarray, margin: float, batch: int, method: str, right: str) -> tuple[int, bool]:
    cs = confidence_sequence(d, method=method)
    ends = np.r_[np.arange(batch, len(d), batch), len(d)] - 1
    states = _verdicts(cs.ci_low[ends], cs.ci_high[ends], True, margin)
    decided = np.flatnonzero(states != "inconclusive")
    if not len(decided):
        return len(d), False
    return int(ends[decided[0]] + 1), bool(states[decided[0]] == right)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="replications per row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| metric | true difference | margin | batch | method | n_fixed | E[N] | E[N] / n_fixed | median | p90 | right decision |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for kind, draw in (("pass/fail", pass_fail), ("graded", graded)):
        effect = 0.1
        margin = effect if kind == "pass/fail" else float(draw(np.random.default_rng(1), effect, (1, 1_000_000)).mean())
        for true_effect in (effect, 2 * effect, 0.0):
            n_fixed = plan(kind, margin, effect)
            for batch, method in ((1, "betting"), (20, "betting"), (20, "eb")):
                rng = np.random.default_rng(args.seed)
                d = draw(rng, true_effect, (args.reps, 4 * n_fixed))
                right = "better" if true_effect else "equivalent"
                n, ok = zip(*(stopping(row, margin, batch, method, right) for row in d))
                n_arr = np.array(n)
                print(f"| {kind} | {d.mean():.3f} | {margin:.3f} | {batch} | {method} | {n_fixed} | {n_arr.mean():.0f} | "
                      f"{n_arr.mean() / n_fixed:.2f} | {np.median(n_arr):.0f} | {np.percentile(n_arr, 90):.0f} | "
                      f"{np.mean(ok):.1%} |", flush=True)
    print(f"\n{args.reps} replications per row, seed {args.seed}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
