"""Time of listing a RunStore (``RunStore.list()``) next to loading every run it holds, with and without its index.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_store.py [--runs 500] [--cases 100] [--big-cases 200000] [--repeat 3]

- many runs: ``--runs`` runs of ``--cases`` cases (four metrics, a short input, expected and output each);
  "load every run" is ``load_run`` of each file; the cold list has no index (a fresh ``RunStore`` after
  ``.cogeval-index`` is removed: it reads every file and writes the index); the warm list reads the index
  (a fresh ``RunStore``, so nothing is remembered in memory);
- one big run: a folder holding one run of ``--big-cases`` cases, saved after a first listing wrote the
  (empty) index, so ``save`` entered it (the save time includes building the run); the warm list next to one ``load_run`` of it (timed once), and
  the cold list (timed once).

Each time is the fastest of ``--repeat`` (once where said). Ratios are list time / load time.
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time

import pandas as pd
from measure import best_time

from cogeval import EvalRun, RunStore, load_run
from cogeval.store.index import INDEX_FILE


def make_run(cases: int) -> EvalRun:
    frame = pd.DataFrame({
        "input": [f"What is the capital of country number {i}? Answer in one word." for i in range(cases)],
        "expected": [f"City {i}" for i in range(cases)],
        "output": [f"The capital of country number {i} is City {i if i % 7 else i + 1}." for i in range(cases)],
        "exact_match": [float(i % 7 != 0) for i in range(cases)],
        "contains": [float(i % 5 != 0) for i in range(cases)],
        "token_f1": [(i % 10) / 10 for i in range(cases)],
        "latency": [0.1 + (i % 13) / 100 for i in range(cases)],
    })
    return EvalRun.from_frame(frame, name="bench", metadata={"model": "m", "commit": "abc123"},
                              directions={"latency": False})


def with_id(run: EvalRun, i: int) -> EvalRun:
    started = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
    return run.model_copy(update={"run_id": f"20260101T00{i // 60 % 60:02d}{i % 60:02d}000Z-{i:08x}", "started_at": started,
                                  "finished_at": started})


def cold_list(folder: pathlib.Path) -> None:
    (folder / INDEX_FILE).unlink(missing_ok=True)
    RunStore(folder).list()


def timed_once(function):
    """The wall time of one call of ``function()``, in seconds, and what it returned."""
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--big-cases", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name) / "many"
        store, run = RunStore(folder), make_run(args.cases)
        paths = [store.save(with_id(run, i)) for i in range(args.runs)]
        load = best_time(lambda: [load_run(path) for path in paths], args.repeat)
        cold = best_time(lambda: cold_list(folder), args.repeat)
        assert len(RunStore(folder).list()) == args.runs
        warm = best_time(lambda: RunStore(folder).list(), args.repeat)
        print(f"{args.runs} runs x {args.cases} cases, fastest of {args.repeat}:")
        print(f"  load every run      {load:8.3f} s")
        print(f"  list, no index      {cold:8.3f} s   {cold / load:.3f} x load")
        print(f"  list, index         {warm:8.3f} s   {warm / load:.1e} x load")

        folder = pathlib.Path(name) / "big"
        folder.mkdir()
        store = RunStore(folder)
        store.list()  # writes the empty index, which save then keeps
        save, path = timed_once(lambda: store.save(make_run(args.big_cases)))
        load = timed_once(lambda: load_run(path))[0]
        warm = best_time(lambda: RunStore(folder).list(), args.repeat)
        cold = timed_once(lambda: cold_list(folder))[0]
        print(f"one run of {args.big_cases} cases ({path.stat().st_size / 1e6:.0f} MB):")
        print(f"  save (with index)   {save:8.3f} s (once)")
        print(f"  load it             {load:8.3f} s (once)")
        print(f"  list, no index      {cold:8.3f} s   {cold / load:.3f} x load (once)")
        print(f"  list, index         {warm:8.4f} s   {warm / load:.1e} x load")


if __name__ == "__main__":
    main()
