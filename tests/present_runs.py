"""Two small runs with known verdicts for the chart, widget and display tests.

Head against base, 20 cases: ``exact_match`` significantly better (green),
``latency`` (lower is better, seconds) significantly worse (red), ``quality``
unchanged on average (grey). Case 0's input plants a ``<script>``; it regresses
on ``exact_match`` and on ``quality``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cogeval import EvalRun, RunStore

SCRIPT = "<script>alert(1)</script>"
N = 20
DIRECTIONS = {"exact_match": True, "latency": False, "quality": True}


def inputs() -> list[str]:
    return [f"{SCRIPT} question 0"] + [f"question {i}" for i in range(1, N)]


def frame(exact_match, latency, quality, outputs) -> pd.DataFrame:
    return pd.DataFrame({"input": inputs(), "expected": [f"answer {i}" for i in range(N)], "output": outputs,
                         "exact_match": exact_match, "latency": latency, "quality": quality})


def make_run(side: str, *, name: str | None = None, started_at: str = "2026-01-01T00:00:00Z",
             run_id: str | None = None) -> EvalRun:
    """``side`` is ``"base"`` or ``"head"``."""
    rng = np.random.default_rng(7)
    noise = rng.normal(0, 0.01, N)
    quality = np.round(rng.uniform(0.2, 0.8, N), 3)
    if side == "base":
        data = frame([1, 1, 1, 1] + [0] * 16, 1.0 + noise, quality, [f"base out {i}" for i in range(N)])
    else:
        shift = np.where(np.arange(N) % 2 == 0, 0.1, -0.1)
        shift[0] = -0.15  # case 0 regresses on quality
        data = frame([0] + [1] * 19, 2.0 + noise[::-1], np.round(quality + shift, 3),
                     [f"{SCRIPT} head out 0"] + [f"head out {i}" for i in range(1, N)])
    return EvalRun.from_frame(data, name=name or side, started_at=started_at, run_id=run_id,
                              directions=DIRECTIONS)


def make_store(path) -> RunStore:
    """A store of five runs, saved out of time order: three 'nightly' (quality rising), one 'adhoc', one 'head'."""
    store = RunStore(path)
    for day, bump in ((3, 0.2), (1, 0.0), (2, 0.1)):
        run = make_run("base", name="nightly", started_at=f"2026-01-0{day}T08:00:00Z",
                       run_id=f"2026010{day}T080000000Z-0000000{day}")
        data = run.to_frame().assign(quality=lambda f, b=bump: f["quality"] + b)
        store.save(EvalRun.from_frame(data[["input", "expected", "output", "exact_match", "latency", "quality"]],
                                      name="nightly", started_at=run.started_at, run_id=run.run_id,
                                      directions=DIRECTIONS))
    store.save(make_run("base", name="adhoc", started_at="2026-01-04T08:00:00Z", run_id="20260104T080000000Z-00000004"))
    store.save(make_run("head", name="head", started_at="2026-01-05T08:00:00Z", run_id="20260105T080000000Z-00000005"))
    return store
