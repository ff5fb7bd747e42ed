"""Timing and memory helpers shared by the benchmarks (run them as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable


def best_time(function: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``function()``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_bytes(function: Callable[[], object]) -> int:
    """tracemalloc's peak of one call of ``function()``, in bytes."""
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak
