"""Runner overhead: 10,000 cases against an async target sleeping 20 ms, at concurrency 100.

The ideal wall time is cases × 0.02 s / concurrency = 2.0 s. The script times
``run_cases`` next to a bare ``asyncio`` + semaphore loop doing the same calls
in the same process, and the peak traced memory (tracemalloc, in a second
run of each, since tracing slows the loop).
Goal: ``run_cases`` within 1.10× of ideal.

    .venv/bin/python benchmarks/bench_runner.py [--cases 10000] [--concurrency 100] [--delay 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import tracemalloc

from cogeval.data import Case
from cogeval.execution import run_cases


async def target(text: str) -> str:
    await asyncio.sleep(DELAY)
    return text


async def sleep_rounds(rounds: int) -> None:
    for _ in range(rounds):
        await asyncio.sleep(DELAY)


async def bare_loop(cases: list[Case], concurrency: int) -> list[str]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> str:
        async with semaphore:
            return await target(case.input)

    return await asyncio.gather(*(one(case) for case in cases))


def measure(label: str, make, ideal: float) -> None:
    """Wall time in a plain run, then peak memory in a second run under tracemalloc (which slows it)."""
    started = time.perf_counter()
    result = asyncio.run(make())
    wall = time.perf_counter() - started
    assert len(result) == N
    tracemalloc.start()
    asyncio.run(make())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<26} wall {wall:6.3f} s   {wall / ideal:5.3f}x ideal   peak traced memory {peak / 2**20:6.1f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.02)
    args = parser.parse_args()
    N, DELAY = args.cases, args.delay
    cases = [Case(f"question {i}") for i in range(N)]
    for case in cases:  # compute the keys up front, as a Dataset would have
        case.key
    ideal = N * DELAY / args.concurrency
    print(f"{N} cases, target sleeps {DELAY * 1000:g} ms, concurrency {args.concurrency}: ideal {ideal:.3f} s")
    rounds = N // args.concurrency
    started = time.perf_counter()
    asyncio.run(sleep_rounds(rounds))
    floor = time.perf_counter() - started
    print(f"{'floor: ' + str(rounds) + ' sleeps in a row':<26} wall {floor:6.3f} s   {floor / ideal:5.3f}x ideal   "
          "(what asyncio.sleep itself overshoots)")
    measure("bare asyncio + semaphore", lambda: bare_loop(cases, args.concurrency), ideal)
    measure("run_cases", lambda: run_cases(cases, target, concurrency=args.concurrency), ideal)
