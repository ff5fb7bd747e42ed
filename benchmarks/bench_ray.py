"""run_on_ray against one process: the speed-up on CPU-bound work, and Ray's overhead on I/O-bound work.

- CPU-bound: a sync target that spends 20 ms of CPU per case in Python, holding the GIL, so one process runs
  one case at a time whatever its concurrency; on Ray, ``--shards`` shards (default 4 per CPU, so that the
  workers finishing first take the rest) run in ``--cpus`` worker processes. Goal: at least 1.6× faster
  on 2 CPUs.
- I/O-bound: an async target sleeping 50 ms at concurrency 50, which one process already runs 50 at a time;
  on Ray as 1 shard (Ray's overhead alone) and as ``--cpus`` shards. Goal: at most 1.2× one process's time.

Ray starts a local cluster of ``--cpus`` CPUs first (its start is timed apart); a first, tiny run starts the
workers and imports cogeval in them ("cold"), and every timing after it is of warm workers. Two references
say what the machine gives at that moment: the same CPU-bound calls in ``--cpus`` processes of a
``multiprocessing`` pool, and as ``--cpus`` bare Ray tasks (no cogeval).

    .venv/bin/python benchmarks/bench_ray.py [--cpu-cases 400] [--io-cases 4000] [--cpus 2] [--shards 8]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time

from cogeval import Dataset, EvalSuite, exact_match, run_on_ray


def busy(text: str) -> str:
    """20 ms of this thread's CPU in a Python loop (the GIL held throughout), then the answer."""
    end = time.thread_time() + 0.02
    while time.thread_time() < end:
        pass
    return text.upper()


async def waits(text: str) -> str:
    await asyncio.sleep(0.05)
    return text.upper()


def busy_calls(count: int) -> int:
    for _ in range(count):
        busy("x")
    return count


def suite(target, cases: int, concurrency: int) -> EvalSuite:
    data = Dataset.from_records([{"input": f"question {i}", "expected": f"QUESTION {i}"} for i in range(cases)])
    return EvalSuite(data, target, metrics=[exact_match()], concurrency=concurrency, progress=False)


def timed(function) -> tuple[float, object]:
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-cases", type=int, default=400)
    parser.add_argument("--io-cases", type=int, default=4000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--cpu-concurrency", type=int, default=5)
    parser.add_argument("--shards", type=int, default=None, help="shards of the CPU-bound run (default: 4 per CPU)")
    args = parser.parse_args()
    import ray

    start, _ = timed(lambda: ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False))
    cold, _ = timed(lambda: run_on_ray(suite(busy, 4, 1), shards=args.cpus))
    print(f"Ray: local cluster of {args.cpus} CPUs started in {start:.2f} s; first run (workers start, import "
          f"cogeval) {cold:.2f} s")

    cpu = suite(busy, args.cpu_cases, args.cpu_concurrency)
    alone, single = timed(lambda: cpu.run().run)
    parts = [args.cpu_cases // args.cpus] * args.cpus
    with multiprocessing.get_context("spawn").Pool(args.cpus) as pool:
        pool.map(busy_calls, [1] * args.cpus)
        pooled, _ = timed(lambda: pool.map(busy_calls, parts))
    task = ray.remote(num_cpus=1)(busy_calls)
    bare, _ = timed(lambda: ray.get([task.remote(n) for n in parts]))
    print(f"CPU-bound references, {args.cpu_cases} calls of 20 ms: one process (the suite) {alone:.2f} s; "
          f"{args.cpus} processes of a pool {pooled:.2f} s ({alone / pooled:.2f}x); {args.cpus} bare Ray tasks "
          f"{bare:.2f} s ({alone / bare:.2f}x)")
    shards = args.shards or 4 * args.cpus
    on_ray, merged = timed(lambda: run_on_ray(cpu, shards=shards))
    assert [r.output for r in merged.results] == [r.output for r in single.results]
    print(f"CPU-bound, {args.cpu_cases} cases x 20 ms of CPU at concurrency {args.cpu_concurrency}: one process "
          f"{alone:.2f} s, Ray {shards} shards on {args.cpus} CPUs {on_ray:.2f} s: {alone / on_ray:.2f}x faster "
          "(goal >= 1.6x)")

    io = suite(waits, args.io_cases, 50)
    alone, single = timed(lambda: io.run().run)
    for shards in (1, args.cpus):
        on_ray, merged = timed(lambda shards=shards: run_on_ray(io, shards=shards))
        assert [r.output for r in merged.results] == [r.output for r in single.results]
        print(f"I/O-bound, {args.io_cases} cases x 50 ms at concurrency 50: one process {alone:.2f} s, Ray {shards} "
              f"shard{'s' if shards > 1 else ''} {on_ray:.2f} s: {on_ray / alone:.2f}x one process (goal <= 1.2x)")
    ray.shutdown()


if __name__ == "__main__":
    main()
