"""Issue 34, items 7 and 8: which metrics inform is visible at every width, and the numbers that puzzle a reader
are explained where they appear: a slice's interval that ends at its difference, and ``n needed``.

The comparison: 60 cases in three topics of 20, a 0/1 metric ``m`` and a graded ``quality`` (both decide), and
``latency_s``, lower is better (informs). On ``m``, every base case of ``all-right`` scored 1 and 12 of them went 1 → 0; in ``mixed``
3 cases went 0 → 1 and none the other way; in ``swapped`` 10 went each way.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, compare_runs
from cogeval.present.comparison_report import comparison_html, comparison_markdown, report_comparison

N = 60
N_NEEDED = ("the paired cases that would detect the observed difference (the margin, when one is set) with 80% "
            "power; blank where the verdict is already decided")
LITTLE_POWER = "fewer than 30 paired cases: the test has little power, so 'inconclusive' may only mean too few cases"
ALL_RIGHT = ("the interval ends at the estimate: every base case scored 1, so all 12 cases that changed went 1 → 0, "
             "and McNemar's interval, built on the cases that changed, reaches no further")
MIXED = ("the interval ends at the estimate: all 3 cases that changed went 0 → 1, and McNemar's interval, built on "
         "the cases that changed, reaches no further")


@pytest.fixture(scope="module")
def comparison():
    base = [1.0] * 20 + [1.0, 0.0] * 10 + [1.0, 0.0] * 10
    head = [1.0] * 8 + [0.0] * 12 + [1.0, 1.0] * 3 + [1.0, 0.0] * 7 + [0.0, 1.0] * 10
    quality = np.linspace(0, 1, N)

    def run(m, q, latency):
        return EvalRun.from_frame(pd.DataFrame({
            "input": [f"q{i}" for i in range(N)], "m": m, "quality": q, "latency_s": latency,
            "metadata": [{"topic": ["all-right", "mixed", "swapped"][i // 20]} for i in range(N)]}),
            directions={"m": True, "quality": True, "latency_s": False})

    return compare_runs(run(base, quality, np.full(N, 0.2)),
                        run(head, quality + np.sin(np.arange(N)) * 0.05, np.full(N, 0.2) + np.linspace(0, 0.1, N)),
                        by="topic", decide_on=["m", "quality"])


def test_the_comparison_is_as_described(comparison):
    m = comparison.slices[comparison.slices["metric"] == "m"].set_index("slice")
    assert m["difference"].tolist() == pytest.approx([-0.6, 0.15, 0.0])
    # exact McNemar on 12 discordant pairs all one way, at the first Holm level of the 6 deciding slice tests:
    # R binom.test(0, 12, conf.level = 1 - 0.05 / 6)$conf.int is [0, 1 - (0.05 / 12)^(1/12)] = [0, 0.3667] for the
    # share that improved; scaled by 12/20: 0.6 * (2 * s - 1)
    assert m.loc["all-right", "ci_low"] == pytest.approx(-0.6)
    assert m.loc["all-right", "ci_high"] == pytest.approx(0.6 * (2 * (1 - (0.05 / 12) ** (1 / 12)) - 1))
    assert m.loc["mixed", "ci_high"] == pytest.approx(0.15) and m.loc["swapped", "ci_high"] > 0
    # the slices table keeps its own notes: the reports add theirs
    assert m["note"].isna().tolist() == [True, False, False]
    verdicts = {name: (mc.role, mc.verdict) for name, mc in comparison.metrics.items()}
    assert verdicts == {"m": ("decides", "inconclusive"), "quality": ("decides", "inconclusive"),
                        "latency_s": ("informs", "worse")}


def test_a_slice_whose_interval_ends_at_its_difference_gets_a_note(comparison):
    text = comparison_markdown(comparison)
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines() if re.match(r"\| [a-z-]+ \| m ↑ \|", line)}
    assert rows["all-right"].endswith("| -0.6 | \\[-0.6, -0.16\\] | 0.00049 | 0.0029 | 🔴 worse | " + ALL_RIGHT + " |")
    # after the slices table's own notes; fewer than 10 discordant pairs too
    assert rows["mixed"].endswith(
        f"| ⚪ inconclusive | {LITTLE_POWER}; fewer than 10 discordant pairs (cases exactly one run got right): "
        f"McNemar's test can say little; {MIXED} |".replace("'", "'"))
    assert rows["swapped"].endswith(f"| ⚪ inconclusive | {LITTLE_POWER} |")  # its interval is around 0: no note
    page = comparison_html(comparison, figure=False)
    assert f"<li>* <b>all-right · m ↑</b> — {ALL_RIGHT.replace(chr(39), '&#39;')}</li>" in page
    assert "the interval ends at the estimate" not in page.split("<b>swapped · m ↑</b>")[1].split("</li>")[0]


def test_n_needed_is_blank_where_the_verdict_is_decided(comparison):
    frame = comparison.to_frame().query("slice.isna()")  # the whole run's rows, not the slices'
    needed = dict(zip(frame["metric"], frame["n_needed"], strict=True))
    assert needed["latency_s"] == comparison.metrics["latency_s"].n_needed > 0  # the table keeps it
    text = comparison_markdown(comparison)
    header = next(line for line in text.splitlines() if line.startswith("| metric |")).split(" | ")
    column = header.index("n needed")
    cells = {line.split(" | ")[0][2:]: line.split(" | ")[column] for line in text.splitlines()
             if line.startswith(("| m ↑", "| quality ↑", "| latency\\_s (s) ↓"))}
    assert cells == {"m ↑": f"{needed['m']:,}", "quality ↑": f"{needed['quality']:,}", "latency\\_s (s) ↓": ""}
    page = comparison_html(comparison, figure=False)
    latency = re.search(r'<tr class="bad informs[^"]*">(.*?)</tr>', page, re.S).group(1)
    assert '<td data-label="n needed"></td>' in latency and '<td data-label="mde">' in latency


def test_the_legend_says_what_informs_and_n_needed_mean(comparison):
    text = comparison_markdown(comparison)
    assert f"**informs**: does not decide the verdict · **n needed**: {N_NEEDED}" in text.splitlines()
    page = comparison_html(comparison, figure=False)
    assert (f'<p class="more legend"><b>informs</b>: does not decide the verdict · <b>n needed</b>: '
            f'{N_NEEDED}</p>') in page
    # no metric informs: the legend has n needed only
    alone = compare_runs(*(EvalRun.from_frame(pd.DataFrame({"input": [f"q{i}" for i in range(N)], "m": s}),
                                              directions={"m": True})
                           for s in ([0.0] * N, [1.0] * N)))
    assert f"\n**n needed**: {N_NEEDED}\n" in comparison_markdown(alone)
    assert "does not decide the verdict" not in comparison_markdown(alone)


def test_the_console_marks_informing_metrics_where_it_leaves_the_role_out(comparison, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    report_comparison(comparison, "console")
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert "role" not in header.split()
    [latency] = [line for line in lines if line.startswith("latency_s ")]
    assert latency.split()[:3] == ["latency_s", "(s)", "↓ⁱ"] and latency.split()[-1] == "worse"
    assert lines[lines.index(latency) + 1] == "ⁱ informs: does not decide the verdict"
    assert not any("ⁱ" in line for line in lines if line.startswith(("m ↑", "quality ↑")))
    report_comparison(comparison, "console", wide=True)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert header.split()[:2] == ["metric", "role"] and "ⁱ" not in "\n".join(lines)
    end = header.index("n needed") + len("n needed")  # the column is right-justified: its cells end there
    rows = {line.split()[0]: line for line in lines if line.startswith(("m ↑", "quality ↑", "latency_s (s) ↓"))}
    assert rows["latency_s"].split()[3] == "informs"
    assert rows["m"][:end].endswith(f"  {comparison.metrics['m'].n_needed:,}")
    assert rows["latency_s"][end - len("n needed"):end] == " " * len("n needed")
    assert lines[lines.index(rows["latency_s"]) + 1] == f"n needed: {N_NEEDED}"  # the legend under the table
