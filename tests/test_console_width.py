"""One width-aware console layout for every command (issue 25, item 1), run as users run them: fresh processes,
through a pipe with ``COLUMNS=80`` (what CI logs get) and under an 80-column pseudo-terminal.

At 80 columns no line is wider, and no metric name, number or verdict is cut; ``--wide`` keeps every column.
"""

from __future__ import annotations

import fcntl
import json
import os
import pathlib
import pty
import re
import struct
import subprocess
import sys
import termios

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len

from cogeval import EvalRun, EvalSuite, compare_runs, exact_match, metric
from cogeval._numbers import number
from cogeval.data.jsonable import json_text
from cogeval.present.comparison_console import console_width, wrap_parts
from cogeval.present.comparison_rows import METRIC_COLUMNS, metric_rows
from cogeval.present.reporters import render

PROMPTFOO = pathlib.Path(__file__).parent / "importers" / "fixtures" / "promptfoo" / "two-prompts.json"
LONG = ["faithfulness_to_the_retrieved_documents_", "answer_relevance_judged_by_a_large_model",
        "share_of_answers_that_cite_their_sources"]
TINY, HUGE = "latency_per_token_s", "prompt_tokens_in_the_whole_conversation"
"""A metric of tiny values (intervals such as ``[-1.234e-05, 5.678e-06]``) and one of huge ones (``[-12,340, …]``)."""
METRICS = [*LONG, TINY, HUGE]
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def test_the_long_names_are_40_characters():
    assert [len(name) for name in LONG] == [40, 40, 40]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of 40 cases on metrics with 40-character names and wide intervals, saved in a store folder."""
    rng = np.random.default_rng(25)
    folder = tmp_path_factory.mktemp("store")
    made = []
    for name, shift, day in (("base", 0.0, "01"), ("head", 0.15, "02")):
        frame = pd.DataFrame({"input": [f"question {i}" for i in range(40)]})
        frame[LONG[0]] = (rng.random(40) < 0.5 + shift).astype(float)
        frame[LONG[1]] = rng.random(40) + shift
        frame[LONG[2]] = (rng.random(40) < 0.7).astype(float)
        frame[TINY] = rng.normal(2e-5, 3e-5, 40)
        frame[HUGE] = rng.normal(123_456.7 * (1 + shift), 40_000.0, 40)
        run = EvalRun.from_frame(frame, name=f"assistant-{name}", started_at=f"2026-01-{day}T00:00:00Z",
                                 directions={TINY: False, HUGE: False})
        made.append((run, run.save(f"{folder}/")))
    return folder, made


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The two runs of a promptfoo results file, imported as run files (long metadata)."""
    folder = tmp_path_factory.mktemp("imported")
    done = cogeval("import", str(PROMPTFOO), "--out", str(folder / "runs"))
    assert done.returncode == 0, done.stderr
    return sorted((folder / "runs").glob("*.json"))


def cogeval(*args: str, columns: int = 80, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess[str]:
    """``cogeval`` in a fresh process, its output through a pipe, ``COLUMNS`` set."""
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": str(columns), "PYTHONPATH": ROOT}, cwd=cwd)


ROOT = str(pathlib.Path(__file__).parent.parent)


def in_terminal(*args: str, columns: int = 80, cwd: pathlib.Path | None = None) -> str:
    """What ``cogeval`` prints on a pseudo-terminal ``columns`` wide (``COLUMNS`` says 200: the terminal wins),
    its colours taken out."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm-256color", "PYTHONPATH": ROOT}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "cogeval.cli", *args], stdin=follower, stdout=follower,
                               stderr=subprocess.PIPE, env=env, cwd=cwd)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, stderr = process.communicate(timeout=120)
    os.close(leader)
    assert process.returncode == 0, stderr
    return ANSI.sub("", b"".join(chunks).decode("utf-8")).replace("\r\n", "\n")


def fits(text: str, columns: int = 80) -> list[str]:
    lines = text.splitlines()
    too_wide = [line for line in lines if cell_len(line) > columns]
    assert not too_wide, "\n".join(too_wide)
    return lines


def assert_every_metric_row_whole(lines, comparison):
    """Each metric's row starts with its whole name; its difference, p and verdict are whole words of that line,
    its interval's ends and level whole words of its row (the lines up to the next row)."""
    rows = metric_rows(comparison)
    starts = [next(n for n, line in enumerate(lines) if line.startswith(r["metric"] + " ")) for r in rows]
    ends = [*starts[1:], next(n for n in range(starts[-1] + 1, len(lines) + 1)
                              if n == len(lines) or not lines[n].strip())]
    for r, start, end in zip(rows, starts, ends, strict=True):
        words = lines[start].split()
        assert r["difference"] in words and r["p"] in words and words[-1] == r["verdict"], lines[start]
        cell = " ".join(" ".join(lines[start:end]).split())
        bounds, level = r["interval"].split(" at ")
        low, high = bounds.strip("[]").split(", ")
        assert f"[{low}," in cell and f"{high}]" in cell and f"@{level}" in cell, cell


# --- compare ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_compare_at_80_columns_cuts_no_name_number_or_verdict(runs, where):
    _, [(base, base_path), (head, head_path)] = runs
    out = cogeval("compare", str(base_path), str(head_path)).stdout if where == "pipe" else \
        in_terminal("compare", str(base_path), str(head_path))
    lines = fits(out)
    comparison = compare_runs(base, head, seed=0)
    assert_every_metric_row_whole(lines, comparison)
    assert lines[0].startswith(comparison.headline().split(" (")[0])
    assert f"base: assistant-base · {base.run_id}" in lines  # the start time goes on the next line
    assert "  started 2026-01-01T00:00:00.000Z" in lines


def test_compare_of_imported_runs_at_80_columns(imported):
    done = cogeval("compare", *map(str, imported))
    lines = fits(done.stdout)
    # the role column left out, each informing row's name ends with ⁱ (issue 34, item 7): latency, cost and tokens,
    # and the pass^2 and pass@2 rows, which inform though they follow the deciding metric they derive from
    [latency] = [line for line in lines if line.startswith("latency (s) ↓ⁱ ")]
    assert latency.split()[-2:] == ["0.11", "inconclusive"]  # p and verdict, whole
    marked = [line.split(" ↑ⁱ ")[0] for line in lines if " ↑ⁱ " in line]
    assert marked == ["pass.pass^2", "pass.pass@2", "mentions_topic.pass^2", "mentions_topic.pass@2"]
    assert not any(line.startswith(("pass ↑ ", "score ↑ ", "brevity ↑ ")) and "ⁱ" in line for line in lines)
    assert "ⁱ informs: does not decide the verdict" in lines
    # the interval on the next line: the runs' 2 trials add pass^2 and pass@2 rows (issue 27), 7 informing in all
    assert "-0.0011" in latency and "[-0.003805, 0.001605] @99.3%" in lines[lines.index(latency) + 1]
    assert "base: terse / echo · 20261201T011707982Z-a3ac9736" in lines  # broken between parts, not inside one


def test_compare_wide_prints_every_column(runs):
    _, [(_, base_path), (_, head_path)] = runs
    lines = cogeval("compare", str(base_path), str(head_path), "--wide").stdout.splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert re.split(r"\s{2,}", header.strip()) == METRIC_COLUMNS
    assert all(any(line.startswith(f"{name} ") for line in lines) for name in METRICS)
    assert max(map(cell_len, lines)) > 80


# --- runs, show, import ----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_runs_at_80_columns_names_every_run_and_metric_whole(runs, where):
    folder, made = runs
    out = cogeval("runs", str(folder)).stdout if where == "pipe" else in_terminal("runs", str(folder))
    lines = fits(out)
    assert lines[0].split()[:3] == ["id", "name", "cases"]
    for run, _ in made:  # newest first, the id and the name whole
        assert any(line.startswith(f"{run.run_id}  {run.name}  ") for line in lines)
    words = " ".join(" ".join(lines).split())  # a metric is a column or named as not shown
    assert all(name in words for name in METRICS)
    assert "not shown at 80 columns: started_at, finished_at," in words
    assert words.endswith("(cogeval runs --wide shows every column)")


def test_runs_wide_prints_every_column_to_4_significant_digits(runs):
    folder, made = runs
    header, _, *rows = cogeval("runs", str(folder), "--wide").stdout.splitlines()
    assert re.split(r"\s{2,}", header) == ["id", "name", "started_at", "finished_at", "cases", *LONG,
                                           f"{TINY} (s)", HUGE]
    head, _ = made[1]
    assert rows[0].split()[:2] == [head.run_id, head.name]
    means = [number(head.aggregated[name].mean) for name in METRICS]
    assert rows[0].split()[-len(METRICS):] == means  # e.g. 0.6 and 1.5e-05 and 139,600: never 6 decimals
    assert any("e-05" in mean for mean in means) and any("," in mean for mean in means)


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_show_at_80_columns_names_every_metric_whole(runs, where):
    _, [(run, path), _] = runs
    out = cogeval("show", str(path)).stdout if where == "pipe" else in_terminal("show", str(path))
    lines = fits(out)
    assert lines[:2] == [f"run {run.run_id}  name assistant-base",
                         "  started 2026-01-01T00:00:00.000Z  finished 2026-01-01T00:00:00.000Z"]
    for name in METRICS:
        [row] = [line.split() for line in lines if line.startswith(f"{with_unit(name)} ")]
        assert row[len(with_unit(name).split())] == number(run.aggregated[name].mean)


def with_unit(name):
    return f"{name} (s)" if name.endswith("_s") else name


def test_show_summarises_long_metadata_on_one_line(imported):
    lines = fits(cogeval("show", str(imported[0])).stdout)
    [line] = [line for line in lines if line.startswith("metadata ")]
    assert line == "metadata source=promptfoo · eval_id=eval-H3U-2026-1… · … 9 more fields (--wide)"
    wide = cogeval("show", str(imported[0]), "--wide").stdout.splitlines()
    metadata = json.loads(imported[0].read_text(encoding="utf-8"))["metadata"]
    assert f"metadata {json_text(metadata)}" in wide
    header = next(line for line in wide if line.startswith("metric "))
    assert header.split() == ["metric", "mean", "median", "min", "max", "std_dev", "p50", "p95", "p99", "count",
                              "missing"]


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_import_at_80_columns_puts_the_path_under_its_run(tmp_path, where):
    out = "store-of-runs"
    args = ("import", str(PROMPTFOO), "--out", out)
    lines = fits(cogeval(*args, cwd=tmp_path).stdout if where == "pipe" else in_terminal(*args, cwd=tmp_path))
    ids = sorted(p.stem for p in (tmp_path / out).glob("*.json"))
    assert lines == [f"{ids[0]}  terse / echo  10 results", f"  → {out}/{ids[0]}.json",
                     f"{ids[1]}  verbose / echo  10 results", f"  → {out}/{ids[1]}.json"]
    wide = cogeval(*args, "--wide", cwd=tmp_path).stdout.splitlines()
    assert wide == [f"{ids[0]}  terse / echo  10 results  → {out}/{ids[0]}.json",
                    f"{ids[1]}  verbose / echo  10 results  → {out}/{ids[1]}.json"]
    deep = tmp_path / ("a-folder-deeper-than-a-line-" * 3)
    lines = fits(cogeval("import", str(PROMPTFOO), "--out", str(deep)).stdout)  # a path longer than a line: folded
    assert lines[1].startswith(f"  → {str(deep)[:60]}")
    assert "".join(line[2:] for line in lines[1:]).startswith(f"→ {deep}/{ids[0]}.json")


# --- the suite's console report and the rules ------------------------------------------------


def test_the_suite_console_report_at_80_columns_cuts_no_metric_name(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    scorers = [metric(name)(lambda output, case, k=k: k / 7) for k, name in enumerate(LONG)]
    result = EvalSuite([{"input": "a", "expected": "a"}, {"input": "b", "expected": "c"}], lambda q: q,
                       metrics=[exact_match(), *scorers], progress=False, name="suite").run()
    lines = fits(render(result, "console"))
    assert lines[3].split() == ["metric", "better", "mean", "p50", "n", "missing"]
    for name in ["exact_match", *LONG]:
        [row] = [line.split() for line in lines if line.startswith(f"{name} ")]
        aggregated = result.aggregated[name]
        assert row == [name, "higher", number(aggregated.mean), number(aggregated.p50), "2", "0"]
    assert "not shown at 80 columns: p95, min, max" in lines


def test_the_width_is_the_terminals_else_columns_else_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert console_width() == 132  # stdout is captured here: no terminal
    monkeypatch.setenv("COLUMNS", "20")
    assert console_width() == 40  # the narrowest fitted
    monkeypatch.delenv("COLUMNS")
    assert console_width() == 80 and console_width(wide=True) is None


def test_a_line_breaks_between_parts_then_words_then_characters():
    assert wrap_parts(["verdict: better", "2 metrics decide, 1 informs", "α = 0.05"], 40) == [
        "verdict: better", "  2 metrics decide, 1 informs · α = 0.05"]
    assert wrap_parts(["verdict: better", "2 metrics decide, 1 informs"], 30) == [
        "verdict: better", "  2 metrics decide, 1 informs"]
    assert wrap_parts(["a", "b c d e f g h i j k l m n o p q r s t"], 20, sep="; ") == [
        "a;", "  b c d e f g h i j", "  k l m n o p q r s", "  t"]
    assert wrap_parts(["verdict: better", "2 metrics decide, 1 informs", "α = 0.05"], 46) == [
        "verdict: better · 2 metrics decide, 1 informs", "  α = 0.05"]
    assert wrap_parts(["a" * 50], 40) == ["a" * 40, "  " + "a" * 10]
    assert wrap_parts(["x"], None, lead="changed: ") == ["changed: x"]
