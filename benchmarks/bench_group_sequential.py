"""compare_sequential(method="group"): type-I error, power and cases against the fixed-n plan, simulated.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_group_sequential.py [--reps N] [--seed S] [--all-designs]

First the designs: ``group_sequential_design`` (rpact's values, tests/stats/test_group_sequential.py) two-sided
at alpha 0.05 with power 0.8 and 10 looks, for the spending pairs compared below, and the one-sided design the
issue quotes. Then the rule compare_sequential runs (``_group_looks``: a pilot of 20 cases, the maximum re-planned
from the spread seen after each look, McNemar's z for 0/1 scores, the paired t mapped to z for graded ones) on
simulated paired scores, one deciding metric, alpha 0.05 (no targets run: tests/compare/test_sequential_group.py
checks that compare_sequential makes exactly these decisions on the same scores):

- pass/fail: base passes with probability 0.7, head with 0.7 + shift, independently; effect δ = 0.1;
- graded: base uniform on 0, 0.1, ..., 1; head = base + shift + normal(0, 0.25), clipped to [0, 1] and rounded to
  0.1; δ = the true mean difference at shift 0.1 (0.077, measured on 10^6 draws), as benchmarks/bench_sequential.py.

Each replication draws 4 × n_fixed cases (the rule never needs more: its maximum is about 1.3 × n_fixed).
n_fixed is the fixed-n plan for δ with the true spread of the row's data (``plan_sample_size(δ, discordance=...)``
or ``sd=...``, power 0.8, two-sided 0.05), what compare_sequential reports as ``planned_cases`` on average.
Reported: the share decided better / worse (power at δ and 2δ, the type-I error at 0), the share stopped for no
difference and shown equivalent within a margin of δ (the rest of those are ``inconclusive``), E[N] / n_fixed, the
median and 90th percentile of N / n_fixed and the largest. The rows simulate the default design
(``--all-designs``: each design of the first table).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from cogeval.compare.sequential import _group_looks, _Planned
from cogeval.stats import group_sequential_design, plan_sample_size
from cogeval.stats.group_sequential import Spending

DESIGNS: dict[str, tuple[Spending, Spending]] = {
    "Kim-DeMets(2) / Pocock (default)": (("kim-demets", 2.0), "pocock"),
    "Kim-DeMets(2) / Kim-DeMets(2)": (("kim-demets", 2.0), ("kim-demets", 2.0)),
    "O'Brien-Fleming / O'Brien-Fleming": ("obrien-fleming", "obrien-fleming"),
    "Pocock / Pocock": ("pocock", "pocock"),
}


def pass_fail(rng: np.random.Generator, shift: float, n: int) -> np.ndarray:
    return np.stack([rng.random(n) < 0.7, rng.random(n) < 0.7 + shift]).astype(float)


def graded(rng: np.random.Generator, shift: float, n: int) -> np.ndarray:
    base = rng.integers(0, 11, n) / 10
    return np.stack([base, np.round(np.clip(base + shift + rng.normal(0, 0.25, n), 0, 1), 1)])


def rule(design, scores: np.ndarray, effect: float) -> tuple[int, str]:
    """compare_sequential's rule on one metric's scores (2 × n), margin = effect: (cases run, verdict)."""
    looks = _group_looks(design, [_Planned("m", True, effect, effect)], scores.shape[1], 20, 0.05)
    target = next(looks)
    while True:
        try:
            target = looks.send({"m": scores[:, :target]})
        except StopIteration as stopped:
            return target, stopped.value[0].get("m", ("inconclusive", math.nan))[0]


def fixed_plan(kind: str, effect: float, shift: float) -> tuple[int, float]:
    """The fixed-n plan for ``effect`` with the true spread at ``shift``, and the true mean difference (10^6 draws)."""
    d = np.diff((pass_fail if kind == "pass/fail" else graded)(np.random.default_rng(1), shift, 1_000_000), axis=0)
    if kind == "pass/fail":
        return plan_sample_size(effect, discordance=float(np.mean(d != 0))), float(d.mean())
    return plan_sample_size(effect, sd=float(d.std())), float(d.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="replications per row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--all-designs", action="store_true", help="simulate every design, not only the default")
    args = parser.parse_args()
    started = time.perf_counter()
    print("| design (alpha spending / beta spending) | inflation | E[N] / n_fixed at δ | under the null |")
    print("|---|---|---|---|")
    designs = {}
    for name, (spending, futility) in DESIGNS.items():
        designs[name] = d = group_sequential_design(10, alpha=0.05, sided=2, spending=spending, futility=futility)
        print(f"| {name}, two-sided 0.05 | {d.inflation_factor:.3f} | {d.expected_fraction_h1:.3f} | "
              f"{d.expected_fraction_h0:.3f} |")
    d = group_sequential_design(10, spending=("kim-demets", 2), futility=("kim-demets", 2))
    print(f"| Kim-DeMets(2) / Kim-DeMets(2), one-sided 0.025 (the issue's) | {d.inflation_factor:.3f} | "
          f"{d.expected_fraction_h1:.3f} | {d.expected_fraction_h0:.3f} |")
    print()
    effects = {"pass/fail": 0.1, "graded": float(np.diff(graded(np.random.default_rng(1), 0.1, 1_000_000), axis=0).mean())}
    print(f"δ: pass/fail {effects['pass/fail']:.3f}, graded {effects['graded']:.3f}\n")
    print("| design | metric | true difference | n_fixed | better | worse | equivalent | E[N] / n_fixed | median | p90 "
          "| max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, design in designs.items() if args.all_designs else list(designs.items())[:1]:
        for kind, draw in (("pass/fail", pass_fail), ("graded", graded)):
            effect = effects[kind]
            for shift in (0.1, 0.2, 0.0):
                fixed, difference = fixed_plan(kind, effect, shift)
                rng = np.random.default_rng(args.seed)
                runs = [rule(design, draw(rng, shift, 4 * fixed), effect) for _ in range(args.reps)]
                cases = np.array([n for n, _ in runs]) / fixed
                verdicts = np.array([v for _, v in runs])
                print(f"| {name} | {kind} | {difference:.3f} | {fixed} | {np.mean(verdicts == 'better'):.1%} | "
                      f"{np.mean(verdicts == 'worse'):.1%} | {np.mean(verdicts == 'equivalent'):.1%} | {cases.mean():.3f} | {np.median(cases):.2f} | "
                      f"{np.percentile(cases, 90):.2f} | {cases.max():.2f} |", flush=True)
    print(f"\n{args.reps} replications per row, seed {args.seed}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
