"""Reports of a comparison with many metrics: time as ratios to the comparison itself, and growth per metric.

Run by hand (not in CI):
.venv/bin/python benchmarks/bench_report_scale.py [--metrics 10 200 1000] [--cases 100] [--repeat R]

For each size, two runs of ``--cases`` matched cases × that many metrics (even metrics 0/1, odd ones continuous;
every tenth metric moved: a pass rate 0.5 → 0.8, a mean shifted by 0.6 sd) are built with ``EvalRun.from_frame``
(not timed). Imports, plotly.js and the page template are loaded by a warm-up report of the first size before any
timing. Measured in this one process:

- ``compare_runs(base, head)``: the baseline, what any report of the comparison first costs;
- ``comparison_html``: the written HTML page, its forest plot drawn offline (plotly.js inlined);
- ``html, figure=False``: the same page without the figure; ``forest_plot_html``: the figure alone;
- ``plot_comparison``: the public forest plot of every metric (a ``go.Figure``, not rendered);
- ``comparison_markdown``, the console report (``print_console`` into a string) and the notebook's
  ``_repr_html_``.

Printed: the best of ``--repeat`` times; time over ``compare_runs``'s at the same size; time per metric over the
time per metric at the first size (1.0 = linear in the metrics); the text's size in MB.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from cogeval import EvalRun, compare_runs
from cogeval.present.comparison_console import print_console
from cogeval.present.comparison_report import comparison_html, comparison_markdown, forest_plot_html
from cogeval.present.plots import plot_comparison


def table(cases: int, metrics: int, moved: bool, seed: int) -> pd.DataFrame:
    """One run's wide table: ``case_key``, ``input`` and the metric columns (``moved``: every tenth metric shifted)."""
    rng = np.random.default_rng(seed)
    columns: dict[str, object] = {"case_key": [f"case-{k}" for k in range(cases)],
                                  "input": [f"question {k}" for k in range(cases)]}
    for j in range(metrics):
        shift = moved and j % 10 == 0
        columns[f"metric_{j:04d}"] = ((rng.random(cases) < (0.8 if shift else 0.5)).astype(float) if j % 2 == 0
                                      else rng.normal(0.6 if shift else 0.0, 1, cases))
    return pd.DataFrame(columns)


def timed(function: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The fastest of ``repeat`` timings of ``function()`` (seconds), and what it returned."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        times.append(time.perf_counter() - start)
    return min(times), out


def console(comparison: object) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        print_console(comparison)
    return out.getvalue()


def report_size(size: int, cases: int, repeat: int, first: dict[str, float]) -> None:
    """Print one row per report of a comparison of ``size`` metrics (``first``: time per metric at the first size)."""
    base = EvalRun.from_frame(table(cases, size, False, 1), name="base")
    head = EvalRun.from_frame(table(cases, size, True, 2), name="head")
    comparison = compare_runs(base, head, seed=0)
    if not first:
        comparison_html(comparison), console(comparison)  # warm-up: imports, plotly.js, the template
    compare, _ = timed(lambda: compare_runs(base, head, seed=0), repeat)
    reports = {
        "compare_runs": lambda: None,  # the baseline, timed above
        "comparison_html": lambda: comparison_html(comparison),
        "html, figure=False": lambda: comparison_html(comparison, figure=False),
        "forest_plot_html": lambda: forest_plot_html(comparison),
        "plot_comparison": lambda: plot_comparison(comparison),
        "comparison_markdown": lambda: comparison_markdown(comparison),
        "console": lambda: console(comparison),
        "_repr_html_": lambda: comparison._repr_html_(),
    }
    for name, function in reports.items():
        seconds, out = (compare, None) if name == "compare_runs" else timed(function, repeat)
        per_metric = seconds / size
        first.setdefault(name, per_metric)
        size_mb = f"{len(out) / 1e6:7.2f}" if isinstance(out, str) else ""
        print(f"{size:8,} {name:22} {seconds:8.3f} {seconds / compare:10.2f} {per_metric / first[name]:17.2f} "
              f"{size_mb:>7}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, nargs="+", default=[10, 200, 1000])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2, help="runs per timing (best is kept)")
    args = parser.parse_args()
    print(f"{args.cases} cases; best of {args.repeat}")
    print(f"{'metrics':>8} {'':22} {'time s':>8} {'x compare':>10} {'s/metric x first':>17} {'MB':>7}")
    first: dict[str, float] = {}
    for size in args.metrics:
        report_size(size, args.cases, args.repeat, first)

if __name__ == "__main__":
    main()
