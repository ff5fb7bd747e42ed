"""Checkpoint cost: a suite of N cases against an async target sleeping 20 ms, with and without a checkpoint.

Three runs in one process, the same cases, metric and concurrency: no checkpoint (the baseline), a
checkpoint written as often as it can be (``checkpoint_every=0``) and the default (every 30 s). Each line
gives the wall time as a ratio of the baseline's and the median latency the run recorded (the target's
own is 20 ms). Goal: latencies unchanged (the writes are off the event loop), the default within 1.15× of
the baseline, and ``checkpoint_every=0`` no longer quadratic (it was 200× the baseline at 1,000 cases).

    .venv/bin/python benchmarks/bench_checkpoint.py [--cases 10000] [--concurrency 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from cogeval import Dataset, EvalSuite, exact_match, load_run


async def target(text: str) -> str:
    await asyncio.sleep(0.02)
    return text


def timed(cases: int, concurrency: int, **options: object) -> tuple[float, float]:
    """Wall time of one run, and the median latency it recorded (ms)."""
    data = Dataset.from_records([{"input": f"question {i}", "expected": f"question {i}"} for i in range(cases)])
    suite = EvalSuite(data, target, metrics=[exact_match()], progress=False, concurrency=concurrency)
    started = time.perf_counter()
    result = suite.run(**options)
    wall = time.perf_counter() - started
    if "checkpoint" in options:
        assert load_run(options["checkpoint"]) == result.run  # type: ignore[arg-type]
    return wall, 1000 * statistics.median(r.duration_s for r in result.results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    folder = tempfile.mkdtemp()
    base, base_latency = timed(args.cases, args.concurrency)
    print(f"{args.cases} cases, concurrency {args.concurrency}; ideal {args.cases * 0.02 / args.concurrency:.2f} s")
    print(f"{'no checkpoint':<26} wall {base:6.2f} s   1.00x   median latency {base_latency:5.1f} ms")
    for label, every in (("checkpoint_every=0", 0), ("checkpoint_every=30", 30)):
        wall, latency = timed(args.cases, args.concurrency, checkpoint=f"{folder}/{every}.json", checkpoint_every=every)
        print(f"{label:<26} wall {wall:6.2f} s   {wall / base:4.2f}x   median latency {latency:5.1f} ms")
