"""Saving and loading run files, as ratios to the standard library's JSON floor.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_runfiles.py [--cases 200000] [--repeat 1]

A run of ``--cases`` cases × 5 metrics (one judge metric with details, 2% failed answers with
NaN scores, unicode text, case metadata, prompts, usage) is saved and loaded. Printed ratios:

- **save**: ``EvalRun.save`` vs ``json.dumps(run.to_dict(), indent=2)`` of the same data (the
  text the file holds, without writing it);
- **load**: ``load_run`` vs ``json.loads`` of the file's text (read and decoded by both); also the careful path
  alone (``json`` with the limits, then validation in Python), which reads what the fast path leaves to it;
- **peak**: tracemalloc's peak of a save and of a load vs the peak of ``json.loads`` of the file
  (the parsed JSON), measured in separate calls since tracing slows everything down;
- **per case**: microseconds per case of save and load at 10,000 cases vs at ``--cases``.

Each time is the fastest of ``--repeat`` (the minimum is the steadiest figure on a shared machine).
"""

from __future__ import annotations

import argparse
import gc
import json
import pathlib
import random
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from measure import best_time, peak_bytes, peak_rss_growth

from cogeval.data import EvalRun, load_run
from cogeval.data.gc_pause import paused_gc
from cogeval.data.runfile import _read_carefully

METRICS = ("exact_match", "contains", "f1", "bleu", "correctness")
SMALL = 10_000


def make_run(cases: int, seed: int = 0) -> EvalRun:
    """A run of ``cases`` cases × 5 metrics, about 1.6 KB of file per case."""
    rng = random.Random(seed)
    results = []
    for i in range(cases):
        failed = rng.random() < 0.02
        scores = [{"metric": m, "score": None if failed else round(rng.random(), 4),
                   "error": "no answer" if failed else None} for m in METRICS]
        scores[-1]["details"] = {"reasoning": f"The answer states the sum {2 * i} — correct ✓", "votes": [1, 1, 0]}
        results.append({
            "case_key": f"{i:064x}",
            "case": {"input": f"What is {i} + {i}? Antworte kurz, bitte.", "expected": str(2 * i),
                     "metadata": {"topic": rng.choice(["math", "arithmetic", "数学"]), "level": i % 5}},
            "output": "" if failed else f"The sum is {2 * i}.",
            "error": "timeout after 30 s" if failed else None,
            "duration": round(rng.uniform(50, 2000), 3),
            "usage": {"input_tokens": rng.randint(20, 200), "output_tokens": rng.randint(5, 50),
                      "cost": rng.random() / 1000},
            "trace_id": f"tr-{i}",
            "prompt": {"key": "qa", "version_id": f"pv_{i % 2}", "version": i % 2 + 1},
            "scores": scores,
        })
    return EvalRun.model_validate({
        "run_id": "20261022T101530123Z-1a2b3c4d", "started_at": "2026-10-22T10:15:30.123Z",
        "finished_at": "2026-10-22T11:15:30.123Z", "name": "bench · runfiles",
        "metadata": {"model": "gpt-4o-mini", "commit": "a1b2c3d"},
        "config": {"metrics": [{"name": m} for m in METRICS], "judge": {"model": "gpt-4o", "temperature": 0}},
        "results": results,
    })


def read_carefully(path: pathlib.Path) -> EvalRun:
    """The careful path of ``load_run`` alone, as ``load_run`` runs it (the collector paused)."""
    with paused_gc():
        return _read_carefully(path.read_bytes(), f"run file '{path}'")


def measure(cases: int, repeat: int, folder: pathlib.Path, *, memory: bool) -> dict[str, float]:
    """Seconds of save, dumps, load and loads (and peak bytes when ``memory``) for a run of ``cases``."""
    run = make_run(cases)
    assert all(len(r.scores) == len(METRICS) for r in run.results), "every case has its five scores"
    path = folder / f"run-{cases}.json"
    data = run.to_dict()
    found = {
        "dumps": best_time(lambda: json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False), repeat),
        "save": best_time(lambda: run.save(path), repeat),
        "size": path.stat().st_size,
    }
    gc.collect()
    found["loads"] = best_time(lambda: json.loads(path.read_bytes().decode("utf-8-sig")), repeat)
    found["load"] = best_time(lambda: load_run(path), repeat)
    found["careful"] = best_time(lambda: read_carefully(path), repeat)
    if memory:
        gc.collect()
        found["loads_peak"] = peak_bytes(lambda: json.loads(path.read_bytes().decode("utf-8-sig")))
        found["load_peak"] = peak_bytes(lambda: load_run(path))
        found["save_peak"] = peak_bytes(lambda: run.save(path))
        setup = f"import json, pathlib; from cogeval.data import load_run; path = pathlib.Path({str(path)!r})"
        found["loads_rss"] = peak_rss_growth(setup, "value = json.loads(path.read_bytes().decode('utf-8-sig'))")
        found["load_rss"] = peak_rss_growth(setup, "run = load_run(path)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        small = measure(SMALL, max(args.repeat, 3), folder, memory=False)
        big = measure(args.cases, args.repeat, folder, memory=True)
    mb = 1e6
    print(f"{args.cases} cases × {len(METRICS)} metrics, file {big['size'] / mb:.0f} MB, fastest of {args.repeat}:")
    print(f"  save  {big['save']:7.2f} s   json.dumps(indent=2) {big['dumps']:7.2f} s   "
          f"ratio {big['save'] / big['dumps']:.2f} (target ≤ 1.5)")
    print(f"  load  {big['load']:7.2f} s   json.loads           {big['loads']:7.2f} s   "
          f"ratio {big['load'] / big['loads']:.2f} (target ≤ 2)")
    print(f"  load, careful path alone (json + Python validation, what a file the fast path leaves takes) "
          f"{big['careful']:.2f} s   ratio {big['careful'] / big['loads']:.2f}")
    print(f"  peak  load {big['load_peak'] / mb:.0f} MB, save {big['save_peak'] / mb:.0f} MB; "
          f"json.loads {big['loads_peak'] / mb:.0f} MB   ratios load {big['load_peak'] / big['loads_peak']:.2f}, "
          f"save {big['save_peak'] / big['loads_peak']:.2f} (target ≤ 2)")
    print(f"  peak resident growth of a fresh process (what tracemalloc cannot see included): load "
          f"{big['load_rss'] / mb:.0f} MB, json.loads {big['loads_rss'] / mb:.0f} MB, "
          f"ratio {big['load_rss'] / big['loads_rss']:.2f}")
    for label in ("save", "load"):
        per_small, per_big = small[label] / SMALL * 1e6, big[label] / args.cases * 1e6
        print(f"  {label} per case: {per_small:.0f} µs at {SMALL}, {per_big:.0f} µs at {args.cases} "
              f"(ratio {per_big / per_small:.2f})")


if __name__ == "__main__":
    main()
