"""Comparison reports: console, Markdown and HTML, built from a hand-made RunComparison."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re

import pandas as pd
import pytest

from cogeval import InputError, Interval
from cogeval._text import shorten
from cogeval.compare.result import MetricComparison, RunComparison, RunInfo
from cogeval.present.comparison_report import comparison_html, comparison_markdown, forest_plot_html, report_comparison
from cogeval.present.comparison_rows import format_p
from cogeval.present.plots import plot_comparison

PAYLOADS = [
    "a | b | c",
    "line one\nline two\n\nline four",
    "uses `backticks` and ```fences```",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** and _under_",
    "[link](javascript:alert(1))",
]


def _metric(name, *, higher=True, base, head, verdict, p, adjusted, test="t", role="decides", margin=0.0,
            level=0.95, mde=0.06, n_needed=None, improved=0, regressed=0):
    difference = head - base
    significant = adjusted < 0.05
    winner = "tie" if not significant else "head" if (difference > 0) == higher else "base"
    return MetricComparison(
        metric=name, higher_is_better=higher, base=base, head=head, n=120, difference=difference,
        ci=Interval(difference - 0.05, difference + 0.05), effect_size=difference / 0.2, test=test,
        p_value=p, adjusted_p_value=adjusted, significant=significant, winner=winner,
        n_improved=improved, n_regressed=regressed, role=role, verdict=verdict, margin=margin, ci_level=level,
        mde=mde, n_needed=n_needed,
    )


def _changes(payload_metric="exact_match", many=60):
    rows = [
        {"case_key": f"{i:064x}", "input": text, "metric": payload_metric, "base": 1.0, "head": 0.0,
         "delta": -1.0, "direction": "regressed"}
        for i, text in enumerate(PAYLOADS)
    ]
    rows += [
        {"case_key": f"f{i:063x}", "input": f"question {i}", "metric": "exact_match", "base": 0.0, "head": 1.0,
         "delta": 1.0, "direction": "improved"}
        for i in range(many)
    ]
    rows += [
        {"case_key": "c" * 64, "input": {"messages": [{"role": "user", "content": "hi"}]}, "metric": "latency_s",
         "base": 0.8123456, "head": 1.9, "delta": 1.0876544, "direction": "regressed"},
    ]
    frame = pd.DataFrame(rows)
    return frame.sort_values("delta", key=abs, ascending=False, kind="stable").reset_index(drop=True)


def _unpaired(*keys):
    return pd.DataFrame({"case_key": list(keys), "occurrence": [0] * len(keys), "input": [f"input {k}" for k in keys]})


def _comparison(metrics, changes=None, warnings=(), verdict="better", base_name="baseline", head_name="candidate"):
    deciding = [m for m in metrics if m.role == "decides"]
    winners = [m.winner for m in deciding]
    return RunComparison(
        base=RunInfo("run-a1", base_name, "2025-05-01T10:00:00Z"),
        head=RunInfo("run-b2", head_name, "2025-05-02T11:30:00Z"),
        winner="head" if winners.count("head") > winners.count("base") else "base" if winners.count("base") else "tie",
        metrics={m.metric: m for m in metrics},
        matched=120, added=_unpaired("x", "y", "z"), removed=_unpaired("w"),
        warnings=list(warnings),
        changes=changes if changes is not None else pd.DataFrame(columns=["case_key", "input", "metric", "base", "head", "delta", "direction"]),
        alpha=0.05, seed=0, verdict=verdict, margins={m.metric: m.margin for m in metrics if m.margin},
    )


@pytest.fixture()
def comparison():
    # Two deciding metrics (one Holm family: token_f1 at step 1, level 1 - 0.05/2; exact_match at step 2)
    # and latency_s, which only informs (its own family of one). latency_s is listed second, shown last.
    metrics = [
        _metric("exact_match", base=0.62, head=0.74, verdict="better", p=0.0012, adjusted=0.0036,
                test="mcnemar", level=0.95, mde=0.061, n_needed=150, improved=60, regressed=7),
        _metric("latency_s", higher=False, base=0.91, head=0.93, verdict="inconclusive", p=0.41, adjusted=0.41,
                test="wilcoxon", role="informs", mde=0.05, n_needed=2400, regressed=1),
        _metric("token_f1", base=0.7012345, head=0.8012, verdict="better", p=3.2e-06, adjusted=9.6e-06,
                level=0.975, margin=0.02, mde=0.03, n_needed=40),
    ]
    return _comparison(metrics, _changes(), warnings=["3 cases only in head were left out <b>unpaired</b>"])


HEADLINE = "head is better: better on exact_match, token_f1 (α = 0.05, 120 matched cases)"


# --- formatting -------------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "text"), [(0.0012, "0.0012"), (3.2e-06, "3.2e-06"), (0.41, "0.41"),
                                         (1.0, "1"), (math.nan, "–"), (None, "–")])
def test_p_values_are_formatted_for_reading(p, text):
    assert format_p(p) == text


def test_shorten_keeps_one_line_and_cuts():
    assert shorten("a\n b\t c") == "a b c"
    assert shorten("x" * 100, limit=10) == "x" * 9 + "…"
    assert shorten({"k": "v"}) == '{"k": "v"}'
    assert shorten(None) == "–"


# --- paths and kinds --------------------------------------------------------------------------


def test_paths_drop_a_trailing_extension_and_create_folders(comparison, tmp_path):
    written = report_comparison(comparison, ["markdown", "html"], tmp_path / "out" / "deep" / "report.html")
    assert written == [str(tmp_path / "out" / "deep" / "report.md"), str(tmp_path / "out" / "deep" / "report.html")]
    assert all(pathlib.Path(p).read_text(encoding="utf-8") for p in written)
    assert sorted(p.name for p in (tmp_path / "out" / "deep").iterdir()) == ["report.html", "report.md"]


def test_default_path_and_report_method(comparison, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert comparison.report("markdown") == ["eval-comparison.md"]
    assert report_comparison(comparison, "html", "r.md") == ["r.html"]


def test_kind_is_validated(comparison):
    with pytest.raises(InputError, match="kind must be one of 'console', 'markdown', 'html'; got 'pdf'"):
        report_comparison(comparison, "pdf")
    with pytest.raises(InputError, match="kind must name at least one report"):
        report_comparison(comparison, [])


# --- console --------------------------------------------------------------------------------


def test_console_prints_and_writes_nothing(comparison, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert report_comparison(comparison, "console", wide=True) == []
    assert list(tmp_path.iterdir()) == []
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == HEADLINE
    assert lines[3] == "verdict: better · 2 metrics decide, 1 informs · 120 matched, 3 added, 1 removed · α = 0.05"
    assert "baseline" in out and "candidate" in out and "2025-05-02T11:30:00Z" in out
    header = next(line for line in lines if "adjusted p" in line).split()
    assert header == ["metric", "role", "base", "head", "n", "difference", "interval", "effect", "size", "test", "p",
                      "adjusted", "p", "verdict", "mde", "n", "needed", "fragility"]
    rows = [line.split() for line in lines if line.strip().startswith(("exact_match", "token_f1", "latency_s"))]
    assert [r[:2] for r in rows[:3]] == [["exact_match", "↑"], ["token_f1", "↑"], ["latency_s", "(s)"]]  # deciding first
    # n needed (150 for exact_match) is blank where the verdict is decided (issue 34, item 8): only the fragility
    assert rows[0] == ["exact_match", "↑", "decides", "0.62", "0.74", "120", "+0.12", "[0.07,", "0.17]", "at", "95%",
                       "+0.6", "mcnemar", "0.0012", "0.0036", "better", "0.061", "–"]
    assert rows[2][3] == "informs" and rows[2][-4:] == ["inconclusive", "0.05", "2,400", "–"]
    # the table's role column says which metric informs: no mark on a name, and a legend of n needed only
    assert lines[lines.index(next(line for line in lines if line.startswith("latency_s (s) ↓ "))) + 1] == (
        "n needed: the paired cases that would detect the observed difference (the margin, when one is set) with 80% "
        "power; blank where the verdict is already decided")
    assert "ⁱ" not in out
    assert "token_f1 — better by more than 0.02" in lines
    assert ("latency_s — inconclusive: not significant with 120 cases; about 2,400 cases would detect "
            "a difference this large") in lines
    assert "… and 55 more improved cases" in out
    assert "warning: 3 cases only in head" in out
    assert "winner" not in out and "\x1b[" not in out  # plain text when not a terminal


@pytest.mark.parametrize("columns", [80, 120])
def test_console_fits_the_terminal_and_keeps_each_metrics_difference_p_and_verdict(comparison, capsys, monkeypatch,
                                                                                    columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    report_comparison(comparison, "console")
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert lines[0] == lines[-1] == HEADLINE  # the verdict first and last
    header = next(line for line in lines if "difference [CI]" in line).split()
    # issue 25: two-cell gaps. At 80 columns the role column is left out, so the informing metric's name carries
    # the mark ⁱ (issue 34, item 7), explained on the line under the table; its cell leaves no room for adj. p
    expected = {80: ["metric", "difference", "[CI]", "p", "verdict"],
                120: ["metric", "role", "base", "head", "difference", "[CI]", "p", "adj.", "p", "verdict"]}
    assert header == expected[columns]
    rows = {line.split()[0]: line.strip() for line in lines
            if line.lstrip().startswith(("exact_match ↑", "token_f1 ↑", "latency_s (s) ↓"))}
    assert sorted(rows) == ["exact_match", "latency_s", "token_f1"]
    assert "+0.12 [0.07, 0.17] @95%" in rows["exact_match"] and "0.0012" in rows["exact_match"]
    assert rows["exact_match"].endswith("better") and rows["token_f1"].endswith("better")
    assert rows["latency_s"].endswith("inconclusive")
    legend = "ⁱ informs: does not decide the verdict"
    if columns == 80:
        assert rows["latency_s"].startswith("latency_s (s) ↓ⁱ  ") and "ⁱ" not in rows["exact_match"] + rows["token_f1"]
        assert lines[lines.index(rows["latency_s"]) + 1] == legend
    else:
        assert rows["latency_s"].split()[:4] == ["latency_s", "(s)", "↓", "informs"] and legend not in lines


def test_console_does_not_interpret_rich_markup_in_case_text(capsys):
    changes = _changes().assign(input=lambda f: f["input"].map(lambda _: "[bold red]x[/bold red]"))
    report_comparison(_comparison([_metric("exact_match", base=0.5, head=0.6, verdict="better", p=0.01, adjusted=0.01)], changes), "console")
    assert "[bold red]x[/bold red]" in capsys.readouterr().out


# --- Markdown -------------------------------------------------------------------------------


def _unescaped_pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_shows_verdict_runs_metrics_and_counts(comparison):
    text = comparison_markdown(comparison)
    lines = text.splitlines()
    assert lines[:5] == [
        "### cogeval comparison: candidate vs baseline",
        "",
        "🟢 **head is better**: better on exact\\_match, token\\_f1 (α = 0.05, 120 matched cases)",
        "",
        "Verdict: **better** · 2 metrics decide, 1 informs · 120 matched cases, 3 added, 1 removed · α = 0.05",
    ]
    assert "| base | baseline | run-a1 | 2025-05-01T10:00:00Z |" in text
    table = [line for line in lines if line.startswith("| metric |")]
    assert table == ["| metric | role | base | head | n | difference | interval | effect size | test | p | adjusted p | "
                     "verdict | mde | n needed | fragility |"]
    rows = lines[lines.index(table[0]) + 2:lines.index(table[0]) + 5]
    assert rows == [  # deciding metrics first, each interval with its level
        "| exact\\_match ↑ | decides | 0.62 | 0.74 | 120 | +0.12 | \\[0.07, 0.17\\] at 95% | +0.6 | mcnemar | 0.0012 "
        "| 0.0036 | 🟢 better | 0.061 |  | – |",  # n needed blank: the verdict is decided
        "| token\\_f1 ↑ | decides | 0.7012 | 0.8012 | 120 | +0.09997 | \\[0.04997, 0.15\\] at 97.5% | +0.4998 | t "
        "| 3.2e-06 | 9.6e-06 | 🟢 better | 0.03 |  | – |",
        "| latency\\_s (s) ↓ | informs | 0.91 | 0.93 | 120 | +0.02 | \\[-0.03, 0.07\\] at 95% | +0.1 | wilcoxon | 0.41 "
        "| 0.41 | ⚪ inconclusive | 0.05 | 2,400 | – |",
    ]
    assert lines[lines.index(rows[-1]) + 2] == (  # the legend under the table: what informs and n needed mean
        "**informs**: does not decide the verdict · **n needed**: the paired cases that would detect the observed "
        "difference (the margin, when one is set) with 80% power; blank where the verdict is already decided")
    notes = lines[lines.index(rows[-1]) + 4:lines.index(rows[-1]) + 6]
    assert notes == [
        "- **token\\_f1** — better by more than 0.02",
        "- **latency\\_s** — inconclusive: not significant with 120 cases; about 2,400 cases would detect a "
        "difference this large",
    ]
    assert "winner" not in text.lower()


def test_markdown_tables_cannot_be_broken_or_inject_html(comparison):
    text = comparison_markdown(comparison)
    assert "<script" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "\\*\\*bold\\*\\*" in text and "\\[link\\](javascript:alert(1))" in text and "\\`backticks\\`" in text
    for block in re.split(r"\n\s*\n", text):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:  # every row of a table has exactly as many unescaped pipes as its header
            assert {_unescaped_pipes(line) for line in rows} == {_unescaped_pipes(rows[0])}, block
    assert "line one line two line four" in text


def test_markdown_limits_changes_per_metric_and_direction(comparison):
    text = comparison_markdown(comparison)
    # headings count cases (issue 15), not case × metric pairs, and only the deciding metrics' (issue 23)
    assert "#### Regressed cases (7 cases)" in text
    assert "**exact\\_match** — 7 regressed" in text and "**latency\\_s** — 1 regressed" in text
    assert text.index("**exact\\_match** — 7 regressed") < text.index("Improved cases") < text.index(
        "<summary>Cases moved on informing metrics, which do not decide (latency\\_s: 1 regressed; 1 case moved on "
        "these only)</summary>") < text.index("**latency\\_s** — 1 regressed")
    assert "<summary>Improved cases (60 cases)</summary>" in text
    assert "… and 50 more improved cases" in text
    assert "| ffffffff |" not in text and text.count("question ") == 10
    assert "| 0.8123 → 1.9 | +1.088 |" in text  # 4 significant digits


def test_markdown_warnings_are_escaped(comparison):
    assert "> - 3 cases only in head were left out &lt;b&gt;unpaired&lt;/b&gt;" in comparison_markdown(comparison)


WHERE = "(α = 0.05, 120 matched cases)"


@pytest.mark.parametrize(
    ("verdicts", "run_verdict", "heading"),
    [
        (["inconclusive", "inconclusive"], "inconclusive",
         f"⚪ **inconclusive**: no deciding metric is shown better, worse or equivalent; about 120 cases would settle "
         f"the closest one {WHERE}"),
        (["worse", "inconclusive"], "worse", f"🔴 **head is worse**: worse on m0 {WHERE}"),
        (["better", "worse"], "mixed", f"🔴 **mixed**: head is better on m0 and worse on m1 {WHERE}"),
        (["better"], "better", f"🟢 **head is better**: better on m0 {WHERE}"),
        (["equivalent", "equivalent"], "equivalent", f"⚪ **equivalent**: every deciding metric is within its margin {WHERE}"),
        (["better@informs"], "inconclusive", f"⚪ **inconclusive**: no compared metric decides {WHERE}"),
        ([], "inconclusive", f"⚪ **nothing to compare**: no metric was scored in both runs {WHERE}"),
    ],
)
def test_markdown_verdicts(verdicts, run_verdict, heading):
    metrics = []
    for i, word in enumerate(verdicts):
        verdict, _, role = word.partition("@")
        sign = {"better": 1, "worse": -1}.get(verdict, 0)
        metrics.append(_metric(f"m{i}", base=0.5, head=0.5 + 0.1 * sign, verdict=verdict, p=0.001 if sign else 0.5,
                               adjusted=0.001 if sign else 0.5, role=role or "decides", margin=0.05 * (verdict == "equivalent"),
                               n_needed=None if sign else 120 * (i + 1)))
    text = comparison_markdown(_comparison(metrics, verdict=run_verdict))
    assert text.splitlines()[2] == heading
    assert text.splitlines()[4].startswith(f"Verdict: **{run_verdict}** · ")


def test_a_metric_name_cannot_break_or_inject_into_the_headline_table_or_notes():
    name = "<script>alert(1)</script> | *m*\n# h"
    metrics = [_metric(name, base=0.5, head=0.6, verdict="better", p=0.001, adjusted=0.001, margin=0.01)]
    text = comparison_markdown(_comparison(metrics))
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; \\| \\*m\\* # h"
    assert text.splitlines()[2] == f"🟢 **head is better**: better on {escaped} {WHERE}"
    assert f"| {escaped} ↑ | decides |" in text and f"- **{escaped}** — better by more than 0.01" in text
    assert "<script" not in text
    page = comparison_html(_comparison(metrics), figure=False)
    html_name = "&lt;script&gt;alert(1)&lt;/script&gt; | *m*\n# h"
    assert f'<strong class="good">head is better</strong>: better on {html_name} {WHERE}</p>' in page
    assert f"<li><b>{html_name}</b> — better by more than 0.01</li>" in page
    assert "<script" not in page


def test_nan_values_show_as_a_dash():
    metric = _metric("judge", base=math.nan, head=0.5, verdict="inconclusive", p=math.nan, adjusted=math.nan,
                     test="none", level=math.nan, mde=math.nan)
    text = comparison_markdown(_comparison([metric], verdict="inconclusive"))
    assert "| judge ↑ | decides | – | 0.5 | 120 | – | – | – | none | – | – | ⚪ inconclusive | – | – |" in text
    assert ("- **judge** — inconclusive: not significant with 120 cases; no sample size would settle it "
            "from these data") in text
    assert ">nan<" not in comparison_html(_comparison([metric], verdict="inconclusive"), figure=False).lower()


# --- HTML -----------------------------------------------------------------------------------


def test_html_is_self_contained_and_offline(comparison):
    page = comparison_html(comparison, figure=False)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", page)
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page, re.I)
    assert "@media (prefers-color-scheme: dark)" in page and "<style>" in page


def test_html_escapes_every_payload(comparison):
    page = comparison_html(comparison, figure=False)
    assert "<script" not in page and "<img" not in page
    assert not re.search(r"<[^>]*onerror=", page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;b&gt;unpaired&lt;/b&gt;" in page  # warnings too


def test_html_escapes_run_names_and_metric_names():
    metric = _metric('<i>"m"</i>', base=0.5, head=0.6, verdict="better", p=0.01, adjusted=0.01)
    page = comparison_html(_comparison([metric], base_name="<b>base</b>", head_name='x" onmouseover="alert(1)'), figure=False)
    assert "<b>base</b>" not in page and "&lt;b&gt;base&lt;/b&gt;" in page
    assert '" onmouseover="' not in page and "&lt;i&gt;&#34;m&#34;&lt;/i&gt;" in page


def test_html_shows_verdict_table_colours_and_collapsible_changes(comparison):
    page = comparison_html(comparison, figure=False)
    assert ('<p class="verdict good"><strong class="good">head is better</strong>: better on exact_match, token_f1 '
            '(α = 0.05, 120 matched cases)</p>') in page
    assert ('<p class="facts">Verdict <span class="badge good">better</span> · 2 metrics decide, 1 informs · '
            '<b>120</b> matched cases') in page
    head = re.search(r"<thead>(.*?)</thead>", page).group(1)
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head) == ["metric", "verdict", "role", "base", "head", "n", "difference",
                                                           "interval", "effect size", "test", "p", "adjusted p", "mde",
                                                           "n needed", "fragility"]  # the verdict next to the metric: both stay in sight
    rows = re.findall(r'<tr class="([^"]*)">\s*<td class="t">([^<]*)</td>', page)
    assert rows == [("good decides", "exact_match ↑"), ("good decides", "token_f1 ↑"),
                    ("neutral informs first-informing", "latency_s (s) ↓")]
    assert page.count('<span class="badge good">better</span>') == 3  # facts line + two rows
    assert '<span class="badge neutral">inconclusive</span>' in page
    assert '<td data-label="interval" class="interval">[0.04997,\u00a00.15] at 97.5%</td>' in page  # wraps only before "at"
    assert ("<li><b>latency_s</b> — inconclusive: not significant with 120 cases; about 2,400 cases would detect "
            "a difference this large</li>") in page
    assert "winner" not in page.lower()
    assert page.count("<details") == 3  # regressed: exact_match, latency_s; improved: exact_match
    assert "· 60 improved" in page and "… and 10 more improved cases" in page
    assert page.count("question ") == 50
    assert '<section class="warnings"' in page
    assert re.search(r"Generated by cogeval (\d[\w.+-]*|dev)\.", page)


def test_html_marks_regressions_red():
    metric = _metric("exact_match", base=0.7, head=0.6, verdict="worse", p=0.001, adjusted=0.001)
    page = comparison_html(_comparison([metric], verdict="worse"), figure=False)
    assert '<tr class="bad decides">' in page and '<strong class="bad">head is worse</strong>: worse on exact_match' in page
    assert '<span class="badge bad">worse</span>' in page


def test_html_figure_slot(comparison):
    page = comparison_html(comparison)  # the forest plot by default, as report() writes it
    assert '<section class="figure" id="forest-plot">' in page and page.count("Plotly.newPlot(") == 1
    assert "<script" not in comparison_html(comparison, figure=False)
    page = comparison_html(comparison, figure_html='<div class="plotly-graph-div">chart</div>')
    assert '<section class="figure" id="forest-plot">\n<div class="plotly-graph-div">chart</div>' in page
    assert page.index("forest-plot") < page.index("Regressed cases")


def test_reports_without_changes_or_warnings():
    metric = _metric("exact_match", base=0.7, head=0.7, verdict="inconclusive", p=1.0, adjusted=1.0)
    page = comparison_html(_comparison([metric], verdict="inconclusive"), figure=False)
    assert "<details" not in page and "warnings" not in page.split("</style>")[1]
    assert "Regressed" not in comparison_markdown(_comparison([metric], verdict="inconclusive"))


def test_an_eval_comparison_result_is_reported_like_its_run_comparison(tmp_path, capsys):
    # issue 4 §6: report_comparison (and comparison_markdown / comparison_html) take both result kinds.
    from cogeval import EvalComparison, exact_match

    data = [{"input": str(i), "expected": str(i)} for i in range(30)]
    result = EvalComparison(data, targets={"baseline": lambda q: "0", "challenger": lambda q: q},
                            metrics=[exact_match()], progress=False, seed=0).run()
    assert comparison_markdown(result) == comparison_markdown(result.comparison)
    assert comparison_markdown(result).splitlines()[2] == (
        "🟢 **head is better**: better on exact\\_match (α = 0.05, 30 matched cases)")
    assert comparison_html(result, figure=False) == comparison_html(result.comparison, figure=False)
    written = report_comparison(result, ["console", "markdown", "html"], tmp_path / "both.md")
    assert [p.rsplit("/", 1)[-1] for p in written] == ["both.md", "both.html"]
    assert "exact_match" in capsys.readouterr().out


@pytest.mark.parametrize("function", [comparison_markdown, comparison_html, report_comparison, forest_plot_html,
                                      plot_comparison])
@pytest.mark.parametrize("value, shown", [(42, "42"), ({"metrics": {}}, "{'metrics': {}}"), (None, "None")])
def test_a_wrong_comparison_is_named_not_an_attribute_error(function, value, shown):
    with pytest.raises(InputError) as caught:
        function(value)
    assert str(caught.value) == f"comparison must be a RunComparison or an EvalComparison result; got {shown}"


def test_report_kind_of_a_wrong_type_lists_the_kinds(comparison):
    with pytest.raises(InputError) as caught:
        report_comparison(comparison, kind=42)
    assert str(caught.value) == "kind must be one of 'console', 'markdown', 'html'; got 42"


def test_a_case_that_moved_on_two_metrics_counts_once_in_the_heading(comparison):
    changes = comparison.changes.copy()
    regressed_exact = (changes["direction"] == "regressed") & (changes["metric"] == "exact_match")
    changes.loc[changes["metric"] == "latency_s", "case_key"] = changes.loc[regressed_exact, "case_key"].iloc[0]
    text = comparison_markdown(dataclasses.replace(comparison, changes=changes))
    assert "#### Regressed cases (7 cases)" in text  # latency_s informs: counted apart
    assert "(latency\\_s: 1 regressed; 0 cases moved on these only)" in text  # its case moved on exact_match too
    changes.loc[changes["metric"] == "latency_s", "metric"] = "token_f1"  # a deciding metric
    text = comparison_markdown(dataclasses.replace(comparison, changes=changes))
    assert "#### Regressed cases (7 cases, 8 case × metric)" in text
    assert "informing metrics" not in text
