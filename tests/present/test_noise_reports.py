"""Reports of comparisons with trials, fragility and a noise report: the pass^k rows right after their metric in
the console, Markdown and HTML; fragility in --wide and the HTML report; beyond noise; the flip-rate chart."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import cogeval
from cogeval import EvalRun, compare_runs, comparison_html, comparison_markdown, noise_report, report_comparison
from cogeval.errors import InputError
from cogeval.present.plots import plot_noise

N = 120


def run_of(exact: np.ndarray, quality: np.ndarray, run_id: str) -> EvalRun:
    """Cases × trials scores; ``latency`` lower is better."""
    n, k = exact.shape
    frame = pd.DataFrame({"input": np.repeat([f"q{i}" for i in range(n)], k), "trial": np.tile(range(k), n),
                          "exact_match": exact.ravel(), "quality": quality.ravel()})
    return EvalRun.from_frame(frame, run_id=run_id, directions={"exact_match": True, "quality": True})


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(4)
    rate = rng.uniform(0.2, 0.9, N)
    base = (rng.random((N, 3)) < rate[:, None]).astype(float)
    head = (rng.random((N, 3)) < np.clip(rate + 0.25, 0, 1)[:, None]).astype(float)
    quality = rng.uniform(0, 1, (N, 3))
    return compare_runs(run_of(base, quality, "20260101T000000000Z-0000000a"),
                        run_of(head, quality + rng.normal(0.0, 0.01, (N, 3)), "20260101T000000000Z-0000000b"))


ORDER = ["exact_match ↑", "exact_match.pass^3 ↑", "exact_match.pass@3 ↑", "quality ↑"]


def test_console_wide_shows_the_rows_after_their_metric_and_fragility(comparison, capsys):
    report_comparison(comparison, "console", wide=True)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert re.split(r"\s{2,}", header.strip())[-1] == "fragility"
    table = [line for line in lines if line.startswith(("exact_match", "quality"))]
    assert [" ".join(line.split()[:2]) for line in table[:4]] == ORDER
    m = comparison.metrics["exact_match"]
    assert m.significant and table[0].split()[-1] == str(m.fragility)
    assert table[3].split()[-1] == "–"  # quality is not significant: no fragility


def test_markdown_and_html_show_the_rows_after_their_metric_with_fragility(comparison):
    markdown = comparison_markdown(comparison)
    rows = [line for line in markdown.splitlines() if line.startswith(("| exact", "| quality"))]
    assert [row.split(" | ")[0][2:].replace("\\", "") for row in rows] == ORDER
    assert markdown.splitlines()[next(i for i, line in enumerate(markdown.splitlines())
                                      if line.startswith("| metric |"))].endswith("| n needed | fragility |")
    page = comparison_html(comparison, figure=False)
    head = re.search(r"<thead>(.*?)</thead>", page).group(1)
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head)[-1] == "fragility"
    names = re.findall(r'<tr class="[^"]*">\s*<td class="t">([^<]*)</td>', page)
    assert names[:4] == ORDER
    fragility = comparison.metrics["exact_match.pass@3"].fragility
    assert f'<td data-label="fragility">{fragility}</td>' in page


def test_a_deciding_row_keeps_its_place_after_its_metric():
    rng = np.random.default_rng(5)
    base = np.ones((N, 2))
    head = np.where(rng.random((N, 2)) < 0.1, 0.0, 1.0)
    quality = rng.uniform(0, 1, (N, 2))
    c = compare_runs(run_of(base, quality, "20260101T000000000Z-0000000a"),
                     run_of(head, quality, "20260101T000000000Z-0000000b"), decide_on=["quality", "exact_match.pass^2"])
    markdown = comparison_markdown(c)
    rows = [line.split(" | ")[0][2:].replace("\\", "") for line in markdown.splitlines()
            if line.startswith(("| exact", "| quality"))]
    assert rows == ["exact_match ↑", "exact_match.pass^2 ↑", "exact_match.pass@2 ↑", "quality ↑"]  # a family decides


def test_fragile_and_within_noise_metrics_get_a_note():
    inputs = [str(i) for i in range(10)]

    def run(scores, i):
        return EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": scores}),
                                  run_id=f"20260101T00000{i}000Z-0000000{i}")

    reruns = [run([1] * 3 + [0] * 7, 3), run([1] * 8 + [0] * 2, 4), run([0] * 10, 5)]
    c = compare_runs(run([0] * 10, 1), run([1] * 6 + [0] * 4, 2), noise=noise_report(reruns))
    markdown = comparison_markdown(c)
    margin = c.metrics["exact_match"].noise_margin
    assert (f"- **exact\\_match** — better; fragile: not significant without its 1 most supporting case of 10; "
            f"difference +0.6 is within rerun noise (suggested margin {margin:.4g})") in markdown
    assert markdown.splitlines()[next(i for i, line in enumerate(markdown.splitlines())
                                      if line.startswith("| metric |"))].endswith("| fragility | beyond noise |")
    assert "| 1 (fragile) | no |" in markdown


def test_flip_rate_chart_counts_the_cases_of_each_flip_rate():
    rng = np.random.default_rng(6)
    exact = (rng.random((N, 3)) < rng.uniform(0, 1, N)[:, None]).astype(float)
    inputs = [f"q{i}" for i in range(N)]
    runs = [EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": exact[:, j], "quality": rng.random(N)}),
                               run_id=f"20260101T00000{j}000Z-0000000{j}") for j in range(3)]
    report = noise_report(runs)
    fig = report.plot()
    assert isinstance(fig, go.Figure) and cogeval.plot_noise is plot_noise
    [bars] = fig.data  # quality is not 0/1: no flip rates
    ones = exact.sum(axis=1)
    rates, counts = np.unique(ones * (3 - ones) / 3, return_counts=True)
    assert [float(x) for x in bars.x] == pytest.approx(rates.tolist(), abs=5e-4) and list(bars.y) == counts.tolist()
    assert list(bars.x) == ["0", "0.667"] and fig.layout.xaxis.type == "category"
    assert bars.name == "exact_match" and "over 3 reruns" in fig.layout.title.text
    only_quality = noise_report([EvalRun.from_frame(pd.DataFrame({"input": inputs, "quality": rng.random(N)}),
                                                    run_id=f"20260101T00000{j}000Z-0000000{j}") for j in range(2)])
    assert plot_noise(only_quality).layout.title.text.startswith("No 0/1 metric in the noise report")
    with pytest.raises(InputError, match=r"report must be a NoiseReport \(cogeval.noise_report\(reruns\)\); got 3"):
        plot_noise(3)


def test_flip_rate_chart_escapes_metric_names():
    inputs = [f"q{i}" for i in range(20)]
    runs = [EvalRun.from_frame(pd.DataFrame({"input": inputs, "<script>x</script>": np.tile([0.0, 1.0], 10)[::1 - 2 * j]}),
                               run_id=f"20260101T00000{j}000Z-0000000{j}") for j in range(2)]
    assert "<script" not in plot_noise(noise_report(runs)).to_json()
