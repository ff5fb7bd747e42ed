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
true difference equal to the margin (the issue's criterion), twice the shift, and 0; for each, the methods
``betting`` and ``planned`` (bets tuned to the margin, ``effect=margin``; compare_sequential's default when a margin
is set) read after every case and
after batches of 20, and ``eb`` after batches of 20, all on the same replications.

Lower bound for any level-alpha sequential test of power 1 - beta (Wald 1945; from Wald's identity and the
data-processing inequality for KL):
E[N] >= [(1 - beta) log((1 - beta)/a) + beta log(beta/(1 - a))] / KL with a the one-sided level; printed at the
end for a normal difference against the fixed-n t-test plan.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import norm

from cogeval.compare.sequential import _verdicts
from cogeval.stats import ConfidenceSequence, confidence_sequence, plan_sample_size


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


def stopping(cs: ConfidenceSequence, margin: float, batch: int, right: str) -> tuple[int, bool]:
    size = len(cs.n)
    ends = np.r_[np.arange(batch, size, batch), size] - 1
    states = _verdicts(cs.ci_low[ends], cs.ci_high[ends], True, margin)
    decided = np.flatnonzero(states != "inconclusive")
    if not len(decided):
        return size, False
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
            d = draw(np.random.default_rng(args.seed), true_effect, (args.reps, 4 * n_fixed))
            right = "better" if true_effect else "equivalent"
            for method, batches in (("betting", (1, 20)), ("planned", (1, 20)), ("eb", (20,))):
                # the same replications for every method; each sequence computed once, read at both batch sizes
                planned = margin if method == "planned" else None
                sequences = [confidence_sequence(row, method=method, effect=planned) for row in d]
                for batch in batches:
                    n, ok = zip(*(stopping(cs, margin, batch, right) for cs in sequences))
                    n_arr = np.array(n)
                    print(f"| {kind} | {d.mean():.3f} | {margin:.3f} | {batch} | {method} | {n_fixed} | "
                          f"{n_arr.mean():.0f} | {n_arr.mean() / n_fixed:.2f} | {np.median(n_arr):.0f} | "
                          f"{np.percentile(n_arr, 90):.0f} | {np.mean(ok):.1%} |", flush=True)
    print(f"\n{args.reps} replications per row, seed {args.seed}; {time.perf_counter() - started:.0f} s")
    a, beta = 0.025, 0.2  # the fixed-n plan's one-sided level (two-sided 0.05) and its type-II error
    wald = ((1 - beta) * np.log((1 - beta) / a) + beta * np.log(beta / (1 - a))) / 0.5  # KL = (delta/sd)^2 / 2
    fixed = (norm.ppf(1 - a) + norm.ppf(1 - beta)) ** 2  # the normal-approximation fixed-n plan, in (sd/delta)^2
    power_one = np.log(1 / 0.05) / 0.5  # a test that only stops to reject (power 1), at level alpha = 0.05: log(1/alpha)/KL
    print(f"Wald's bound (one-sided 0.025, power 0.8, normal differences): E[N] / n_fixed >= {wald / fixed:.2f}; "
          f"a power-one test at alpha = 0.05 (one-sided): >= {power_one / fixed:.2f}, two-sided (alpha/2 each side): "
          f">= {np.log(2 / 0.05) / 0.5 / fixed:.2f}")


if __name__ == "__main__":
    main()
