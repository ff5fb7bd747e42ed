"""Comparison reports: console, Markdown and HTML, built from a hand-made RunComparison."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from cogeval import InputError, Interval
from cogeval.compare.result import MetricComparison, RunComparison, RunInfo
from cogeval.present.comparison_report import (
    comparison_html,
    comparison_markdown,
    format_p,
    report_comparison,
    shorten,
)

PAYLOADS = [
    "a | b | c",
    "line one\nline two\n\nline four",
    "uses `backticks` and ```fences```",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** and _under_",
    "[link](javascript:alert(1))",
]


def _metric(name, *, higher=True, base, head, winner, p, adjusted, test="t", improved=0, regressed=0):
    difference = head - base
    return MetricComparison(
        metric=name, higher_is_better=higher, base=base, head=head, n=120, difference=difference,
        ci=Interval(difference - 0.05, difference + 0.05), effect_size=difference / 0.2, test=test,
        p_value=p, adjusted_p_value=adjusted, significant=winner != "tie", winner=winner,
        improved=improved, regressed=regressed,
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


def _comparison(metrics, changes=None, warnings=(), winner="head", base_name="baseline", head_name="candidate"):
    return RunComparison(
        base=RunInfo("run-a1", base_name, "2025-05-01T10:00:00Z"),
        head=RunInfo("run-b2", head_name, "2025-05-02T11:30:00Z"),
        winner=winner, metrics={m.metric: m for m in metrics},
        matched=120, added=3, removed=1, added_cases=["x", "y", "z"], removed_cases=["w"],
        warnings=list(warnings),
        changes=changes if changes is not None else pd.DataFrame(columns=["case_key", "input", "metric", "base", "head", "delta", "direction"]),
        alpha=0.05, seed=0,
    )


@pytest.fixture()
def comparison():
    metrics = [
        _metric("exact_match", base=0.62, head=0.74, winner="head", p=0.0012, adjusted=0.0036,
                test="mcnemar", improved=60, regressed=7),
        _metric("token_f1", base=0.7012345, head=0.8012, winner="head", p=3.2e-06, adjusted=9.6e-06),
        _metric("latency_s", higher=False, base=0.91, head=0.93, winner="tie", p=0.41, adjusted=0.41,
                test="wilcoxon", regressed=1),
    ]
    return _comparison(metrics, _changes(), warnings=["3 cases only in head were left out <b>unpaired</b>"])


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
    assert all(open(p, encoding="utf-8").read() for p in written)
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
    assert report_comparison(comparison, "console") == []
    assert list(tmp_path.iterdir()) == []
    out = capsys.readouterr().out
    assert "head wins on 2 of 3 metrics (significant at α = 0.05 after Holm correction)" in out
    assert "baseline" in out and "candidate" in out and "2025-05-02T11:30:00Z" in out
    assert "exact_match" in out and "0.0012" in out and "3.2e-06" in out
    assert "… and 55 more improved cases" in out
    assert "warning: 3 cases only in head" in out
    assert "\x1b[" not in out  # plain text when not a terminal


def test_console_does_not_interpret_rich_markup_in_case_text(capsys):
    changes = _changes().assign(input=lambda f: f["input"].map(lambda _: "[bold red]x[/bold red]"))
    report_comparison(_comparison([_metric("exact_match", base=0.5, head=0.6, winner="head", p=0.01, adjusted=0.01)], changes), "console")
    assert "[bold red]x[/bold red]" in capsys.readouterr().out


# --- Markdown -------------------------------------------------------------------------------


def _unescaped_pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_shows_verdict_runs_metrics_and_counts(comparison):
    text = comparison_markdown(comparison)
    lines = text.splitlines()
    assert lines[2] == "**head wins** on 2 of 3 metrics (significant at α = 0.05 after Holm correction)"
    assert "120 matched cases, 3 added, 1 removed · α = 0.05" in text
    assert "| base | baseline | run-a1 | 2025-05-01T10:00:00Z |" in text
    assert "| exact\\_match | ↑ | 0.62 | 0.74 | 120 | +0.12 | \\[0.07, 0.17\\] | +0.6 | mcnemar | 0.0012 | 0.0036 | yes | ✅ head |" in text
    assert "| latency\\_s | ↓ |" in text and "3.2e-06" in text


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
    assert "#### Regressed cases (8)" in text
    assert "**exact\\_match** — 7 regressed" in text and "**latency\\_s** — 1 regressed" in text
    assert "<summary>Improved cases (60)</summary>" in text
    assert "… and 50 more improved cases" in text
    assert "| ffffffff |" not in text and text.count("question ") == 10
    assert "| 0.8123 → 1.9 | +1.088 |" in text  # 4 significant digits


def test_markdown_warnings_are_escaped(comparison):
    assert "> - 3 cases only in head were left out &lt;b&gt;unpaired&lt;/b&gt;" in comparison_markdown(comparison)


@pytest.mark.parametrize(
    ("winners", "heading"),
    [
        (["tie", "tie"], "**no significant difference** on 2 metrics (α = 0.05 after Holm correction)"),
        (["base", "tie"], "**head regressed** on m0 (significant at α = 0.05 after Holm correction)"),
        (["head", "base"], "**mixed result**: head better on m0, worse on m1 (significant at α = 0.05 after Holm correction)"),
        (["head"], "**head wins** on 1 of 1 metric (significant at α = 0.05)"),
        ([], "**nothing to compare**: no metric was scored on both runs"),
    ],
)
def test_markdown_verdicts(winners, heading):
    metrics = [_metric(f"m{i}", base=0.5, head=0.5, winner=w, p=0.5, adjusted=0.5) for i, w in enumerate(winners)]
    assert comparison_markdown(_comparison(metrics)).splitlines()[2] == heading


def test_nan_values_show_as_a_dash():
    metric = _metric("judge", base=math.nan, head=0.5, winner="tie", p=math.nan, adjusted=math.nan, test="none")
    text = comparison_markdown(_comparison([metric]))
    assert "| judge | ↑ | – | 0.5 | 120 | – | \\[–, –\\] | – | none | – | – | no | tie |" in text
    assert ">nan<" not in comparison_html(_comparison([metric])).lower()


# --- HTML -----------------------------------------------------------------------------------


def test_html_is_self_contained_and_offline(comparison):
    page = comparison_html(comparison)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", page)
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page, re.I)
    assert "@media (prefers-color-scheme: dark)" in page and "<style>" in page


def test_html_escapes_every_payload(comparison):
    page = comparison_html(comparison)
    assert "<script" not in page and "<img" not in page
    assert not re.search(r"<[^>]*onerror=", page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;b&gt;unpaired&lt;/b&gt;" in page  # warnings too


def test_html_escapes_run_names_and_metric_names():
    metric = _metric('<i>"m"</i>', base=0.5, head=0.6, winner="head", p=0.01, adjusted=0.01)
    page = comparison_html(_comparison([metric], base_name="<b>base</b>", head_name='x" onmouseover="alert(1)'))
    assert "<b>base</b>" not in page and "&lt;b&gt;base&lt;/b&gt;" in page
    assert '" onmouseover="' not in page and "&lt;i&gt;&#34;m&#34;&lt;/i&gt;" in page


def test_html_shows_verdict_table_colours_and_collapsible_changes(comparison):
    page = comparison_html(comparison)
    assert '<strong class="good">head wins</strong> on 2 of 3 metrics' in page
    assert page.count('<tr class="win">') == 2 and page.count('<tr class="loss">') == 0
    assert '<span class="badge head">head</span>' in page
    assert page.count("<details") == 3  # regressed: exact_match, latency_s; improved: exact_match
    assert "· 60 improved" in page and "… and 10 more improved cases" in page
    assert page.count("question ") == 50
    assert '<section class="warnings"' in page
    assert re.search(r"Generated by cogeval (\d[\w.+-]*|dev)\.", page)


def test_html_marks_regressions_red():
    metric = _metric("exact_match", base=0.7, head=0.6, winner="base", p=0.001, adjusted=0.001)
    page = comparison_html(_comparison([metric], winner="base"))
    assert '<tr class="loss">' in page and '<strong class="bad">head regressed</strong>' in page


def test_html_figure_slot(comparison):
    assert 'id="forest-plot"' not in comparison_html(comparison)
    page = comparison_html(comparison, figure_html='<div class="plotly-graph-div">chart</div>')
    assert '<section class="figure" id="forest-plot">\n<div class="plotly-graph-div">chart</div>' in page
    assert page.index("forest-plot") < page.index("Regressed cases")


def test_reports_without_changes_or_warnings():
    metric = _metric("exact_match", base=0.7, head=0.7, winner="tie", p=1.0, adjusted=1.0)
    page = comparison_html(_comparison([metric], winner="tie"))
    assert "<details" not in page and "warnings" not in page.split("</style>")[1]
    assert "Regressed" not in comparison_markdown(_comparison([metric], winner="tie"))


def test_an_eval_comparison_result_is_reported_like_its_run_comparison(tmp_path, capsys):
    # issue 4 §6: report_comparison (and comparison_markdown / comparison_html) take both result kinds.
    from cogeval import EvalComparison, exact_match

    data = [{"input": str(i), "expected": str(i)} for i in range(30)]
    result = EvalComparison(data, targets={"baseline": lambda q: "0", "challenger": lambda q: q},
                            metrics=[exact_match()], progress=False, seed=0).run()
    assert comparison_markdown(result) == comparison_markdown(result.comparison)
    assert "head wins" in comparison_markdown(result)
    assert comparison_html(result) == comparison_html(result.comparison)
    written = report_comparison(result, ["console", "markdown", "html"], tmp_path / "both.md")
    assert [p.rsplit("/", 1)[-1] for p in written] == ["both.md", "both.html"]
    assert "exact_match" in capsys.readouterr().out
