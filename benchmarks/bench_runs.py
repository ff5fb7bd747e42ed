"""Time of what follows a suite run: comparing and saving two fresh suite results (one run model).

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_runs.py [--cases N] [--repeat R]

Two suites of ``--cases`` cases (one trial; ``exact_match`` and ``contains``, with
``latency`` and ``cost``) are run ``--repeat`` times each. For every fresh pair of
results this measures, in this process:

- ``suite.run()``: the run, its scoring and the building of its ``EvalRun`` (once);
- ``compare_runs(a, b)`` on the two fresh results (``to_run()`` is the held run);
- ``compare_runs`` on the same two runs given as ``EvalRun`` objects: the floor;
- ``RunStore.save`` of both results (serialising and writing the files).

Each time is the fastest of ``--repeat`` (the minimum is the most stable figure on a
loaded machine). The targets are async functions, so no thread is started per call.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time

from cogeval import EvalSuite, RunStore, compare_runs, contains, cost, exact_match, latency


def suites(n: int) -> tuple[EvalSuite, EvalSuite]:
    cases = [{"input": f"What is {i} + {i}?", "expected": str(2 * i)} for i in range(n)]

    def make(target):
        return EvalSuite(cases, target, metrics=[exact_match(), contains()],
                         statistical_metrics=[latency(), cost()], progress=False)

    async def right(question: str) -> str:  # async: no thread per call, so the timings are steadier
        return str(2 * int(question.split()[2]))

    async def sometimes_wrong(question: str) -> str:
        return str(2 * int(question.split()[2])) if int(question.split()[2]) % 7 else "?"

    return make(right), make(sometimes_wrong)


def timed(function):
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base, head = suites(args.cases)
    times: dict[str, list[float]] = {"suite.run() (each)": [], "compare_runs(fresh results)": [],
                                     "compare_runs(EvalRun objects)": [], "RunStore.save (both)": []}
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(folder)
        for _ in range(args.repeat):
            gc.collect()
            t_a, a = timed(base.run)
            t_b, b = timed(head.run)
            times["suite.run() (each)"] += [t_a, t_b]
            times["compare_runs(fresh results)"].append(timed(lambda: compare_runs(a, b, seed=0))[0])
            runs = a.to_run(), b.to_run()
            times["compare_runs(EvalRun objects)"].append(timed(lambda: compare_runs(*runs, seed=0))[0])
            times["RunStore.save (both)"].append(timed(lambda: (store.save(a), store.save(b)))[0])
            del a, b, runs
    print(f"{args.cases} cases per run, fastest of {args.repeat}:")
    for label, values in times.items():
        print(f"  {label:32s} {min(values):.3f} s")


if __name__ == "__main__":
    main()
