"""The issue's own table, end to end: two big runs saved to a store, listed, loaded and compared.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_big_runs.py [--cases 200000]

Two runs of ``--cases`` cases × 5 metrics (``bench_runfiles.make_run``, seeds 0 and 1: the same cases, other
scores) go through what a user does with them, each step timed once in this process, next to its floor:

- ``RunStore.save`` of each vs ``json.dumps(indent=2)`` of its data (every floor with the cyclic collector off,
  as cogeval's own steps run);
- ``RunStore.list()`` of the folder (a fresh store, index present) vs reading the two files' first 4 KB;
- ``load_run`` of both vs ``json.loads`` of both files' text;
- ``compare_runs`` of the two loaded runs (no floor: the engine's is in ``bench_compare_scale.py``).

Resident memory is the process's peak (``VmHWM``) after each step, so it only grows.
"""

from __future__ import annotations

import argparse
import gc
import json
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from bench_runfiles import make_run

from cogeval import RunStore, compare_runs, load_run


def peak_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))


def timed(function):
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def floor(function) -> float:
    """Seconds of ``function()`` with the cyclic collector off, as cogeval's own steps run (a fair floor)."""
    gc.disable()
    try:
        return timed(function)[0]
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200_000)
    args = parser.parse_args()
    rows = []

    def row(step: str, seconds: float, floor: float | None = None) -> None:
        ratio = f"{seconds / floor:8.2f}" if floor else "       –"
        rows.append(f"  {step:34s} {seconds:8.2f} s  × floor {ratio}   peak RSS {peak_mb():7.0f} MB")

    with tempfile.TemporaryDirectory() as name:
        store = RunStore(name)
        runs = [make_run(args.cases, seed) for seed in (0, 1)]
        runs[1] = runs[1].model_copy(update={"run_id": "20261022T111530123Z-2b3c4d5e"})
        data = [run.to_dict() for run in runs]  # the floor is the text of the data, as in bench_runfiles
        dumps = sum(floor(lambda d=d: json.dumps(d, ensure_ascii=False, indent=2)) for d in data)
        del data
        saved, paths = timed(lambda: [store.save(run) for run in runs])
        row("save both", saved, dumps)
        runs.clear()
        heads = floor(lambda: [path.open("rb").read(4096) for path in paths])
        listed, summaries = timed(lambda: RunStore(name).list())
        assert len(summaries) == 2
        row("list the store (index)", listed, heads)
        loads = floor(lambda: [json.loads(path.read_bytes().decode("utf-8-sig")) for path in paths])
        loaded, (base, head) = timed(lambda: [load_run(path) for path in paths])
        row("load both", loaded, loads)
        compared, comparison = timed(lambda: compare_runs(base, head))
        row("compare_runs", compared)
    size = sum(1 for _ in comparison.changes.itertuples())
    print(f"{args.cases} cases × 5 metrics per run; changes has {size} rows; once each:")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
