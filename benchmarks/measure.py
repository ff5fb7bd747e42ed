"""Timing and memory helpers shared by the benchmarks (run them as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import subprocess
import sys
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


_RSS_PROBE = """
{setup}
def memory(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))
before = memory("VmRSS:")
{call}
print(memory("VmHWM:") - before)
"""


def peak_rss_growth(setup: str, call: str) -> int:
    """How far one ``call`` raises a fresh process's peak resident memory (``VmHWM``, which unlike ``ru_maxrss``
    does not inherit the parent's) above what it held after ``setup``, in bytes: memory that pydantic-core or
    numpy take outside Python's allocator, which tracemalloc cannot see, included. Linux only."""
    probe = _RSS_PROBE.format(setup=setup, call=call)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])
