"""Every public result shows itself in a notebook: an HTML string, escaped, compact, and never an exception (DESIGN §6)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from present_runs import SCRIPT, make_run

import cogeval
from cogeval import (
    Aggregate,
    AssertionResult,
    Case,
    ComparisonResult,
    Dataset,
    EvalComparison,
    EvalRun,
    EvalSuite,
    EvalSuiteResult,
    Leaderboard,
    McNemarResult,
    MetricComparison,
    PPIResult,
    RunComparison,
    RunStore,
    SequentialComparison,
    TTestResult,
    Variants,
    WilcoxonResult,
    aggregate,
    compare_runs,
    compare_sequential,
    exact_match,
    mcnemars_test,
    paired_t_test,
    ppi_mean,
    run_variants,
    threshold,
    wilcoxon_test,
)
from cogeval.pairwise import Agreement, Flips, PairwiseResult, WinRate

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
DATA = [{"input": f"{SCRIPT} {i}", "expected": f"{SCRIPT} {i}"} for i in range(12)]


def suite_result() -> EvalSuiteResult:
    return EvalSuite(DATA, lambda q: q if q.endswith(("1", "2")) else "no", metrics=[exact_match()], name=SCRIPT,
                     assertions=[threshold("exact_match", 0.9)], progress=False).run()


def comparison() -> RunComparison:
    return compare_runs(make_run("base", name=SCRIPT), make_run("head"), seed=0)


def store(tmp_path) -> RunStore:
    store = RunStore(tmp_path / "runs")
    store.save(make_run("base", name=SCRIPT))
    return store


def two_humans():
    longer = lambda case, response_1, response_2: "1" if len(response_1) > len(response_2) else "2"  # noqa: E731
    return cogeval.run_pairwise(DATA[:4], lambda q: "ok", lambda q: f"the answer to {q}",
                                [cogeval.human_pairwise("longer", ask=longer, seed=0),
                                 cogeval.human_pairwise("shorter", ask=longer, seed=1)], names=(SCRIPT, "wordy"))


def pairwise() -> PairwiseResult:
    from cogeval import human_pairwise, run_pairwise

    return run_pairwise(DATA[:3], lambda q: q, lambda q: "no", [human_pairwise(SCRIPT, ask=lambda c, x, y: "1")],
                        names=(SCRIPT, "b"))


def noise_of_two() -> cogeval.NoiseReport:
    runs = [EvalRun.from_frame(pd.DataFrame({"input": ["a", "b", "c"], SCRIPT: [1.0, 0.0, x]}), run_id=f"20260101T00000{x}000Z-0000000{x}")
            for x in (0, 1)]
    return cogeval.noise_report(runs)


# name → (build(tmp_path), whether SCRIPT is planted in its text, an attribute whose failure must not escape)
RESULTS = {
    Dataset: (lambda tmp: Dataset([Case(SCRIPT, expected=SCRIPT)], name=SCRIPT), True, "fingerprint"),
    EvalSuiteResult: (lambda tmp: suite_result(), True, "aggregated"),
    EvalRun: (lambda tmp: make_run("base", name=SCRIPT), True, "aggregated"),
    RunStore: (store, True, "to_frame"),
    RunComparison: (lambda tmp: comparison(), True, "metrics"),
    ComparisonResult: (lambda tmp: EvalComparison(DATA, targets={"baseline": lambda q: q if q[-1] < "6" else "no",
                                                                    "challenger": lambda q: q if q[-1] in "13579" else "no"},
                                                  metrics=[exact_match()], progress=False, seed=0).run(), True, "comparison"),
    MetricComparison: (lambda tmp: dataclasses.replace(comparison().metrics["quality"], metric=SCRIPT), True, "to_dict"),
    Leaderboard: (lambda tmp: run_variants(DATA, Variants({SCRIPT: lambda q: q, "zero": lambda q: "0"}), [exact_match()],
                                           progress=False), True, "leaderboard"),
    AssertionResult: (lambda tmp: AssertionResult(name=SCRIPT, passed=False, message=SCRIPT), True, "to_dict"),
    TTestResult: (lambda tmp: paired_t_test([1.0, 2.0, 4.0], [1.5, 1.0, 2.0]), False, "to_dict"),
    McNemarResult: (lambda tmp: mcnemars_test(b=1, c=9), False, "to_dict"),
    WilcoxonResult: (lambda tmp: wilcoxon_test([1.0, 2.0, 4.0, 3.0], [1.5, 1.0, 2.0, 0.0]), False, "to_dict"),
    Aggregate: (lambda tmp: aggregate([1.0, 2.0, float("nan")]), False, "to_dict"),
    SequentialComparison: (lambda tmp: compare_sequential(DATA, lambda q: q, lambda q: "no", [exact_match()],
                                                          names=(SCRIPT, "b")), True, "decisions"),
    PPIResult: (lambda tmp: ppi_mean([0.2, 0.9, 0.4, 0.8, 0.1, 0.7], [0, 1, 0, 1, float("nan"), float("nan")]),
                False, "to_dict"),
    # (cogeval.PairwiseResult is PairwiseResult, and so on: one entry per class; a dict keeps only the last of two)
    PairwiseResult: (lambda tmp: pairwise(), True, "summary"),
    WinRate: (lambda tmp: two_humans().win_rate("longer"), False, "to_dict"),
    Flips: (lambda tmp: Flips(2, 1, 0.5, 1, 0, 1.0, ("t",)), False, "to_dict"),
    Agreement: (lambda tmp: two_humans().agreement("longer", "shorter"), False, "to_dict"),
    cogeval.NoiseReport: (lambda tmp: noise_of_two(), True, "run_ids"),
}
TYPES = list(RESULTS)


def test_every_public_result_with_a_display_is_covered():
    shown = {getattr(cogeval, name) for name in cogeval.__all__
             if isinstance(getattr(cogeval, name), type) and hasattr(getattr(cogeval, name), "_repr_html_")}
    assert shown == set(TYPES)


@pytest.mark.parametrize("kind", TYPES, ids=lambda t: t.__name__)
def test_display_is_an_escaped_html_string(kind, tmp_path):
    build, planted, _ = RESULTS[kind]
    html = build(tmp_path)._repr_html_()
    assert isinstance(html, str) and '<div class="cogeval">' in html
    assert "could not display" not in html
    assert "<script>alert" not in html
    if planted:
        assert ESCAPED in html


@pytest.mark.parametrize("kind", TYPES, ids=lambda t: t.__name__)
def test_display_of_a_broken_result_is_a_short_message(kind, tmp_path, monkeypatch):
    build, _, attribute = RESULTS[kind]
    result = build(tmp_path)

    def boom(*args, **kwargs):
        raise RuntimeError("<b>boom</b>")

    monkeypatch.setattr(kind, attribute, property(boom), raising=False)
    html = result._repr_html_()
    assert html == f"<pre>{kind.__name__}: could not display (RuntimeError: &lt;b&gt;boom&lt;/b&gt;)</pre>"


def test_comparison_shows_wins_and_regressions_at_a_glance():
    html = comparison()._repr_html_()
    assert html.startswith(  # one deciding metric each way: the run's verdict is mixed, in the words of every report
        '<div class="cogeval"><span class="b bad">mixed</span> mixed: head is better on exact_match and worse on '
        f"latency (α = 0.05, 20 matched cases) · head (head) vs {ESCAPED} (base) · 0 added, 0 removed cases<br>changed: "
        "nothing recorded differs (target, system prompt, temperature, trials, judge, metric parameters, prompts, "
        "dataset)</div>")
    rows = html.split("<tr>")
    exact, latency, quality = (next(r for r in rows if f">{name}" in r) for name in ("exact_match ↑", "latency ↓", "quality ↑"))
    assert '<span class="b good">better</span>' in exact and '<span class="b bad">worse</span>' in latency
    assert '<span class="b neutral">inconclusive</span>' in quality
    assert '<td class="s">[0.3041, 0.8487] at 97.5%</td>' in exact and '<td class="s">16 / 1</td>' in exact
    assert "<td>+0.75</td>" in exact  # a difference has its sign, as in every report
    deciding = html.split("<caption>Deciding metrics")[1].split("</table>")[0]  # one table per role
    assert all(f">{name}" in deciding for name in ("exact_match ↑", "latency ↓", "quality ↑"))
    assert "Informing metrics" not in html
    assert "<caption>Regressed cases × deciding metrics: 32, largest first (all in .changes)</caption>" in html
    assert "27 more rows" in html  # compact: the five largest are shown
    assert '<td class="s">latency</td><td class="s">question' in html


def test_comparison_warnings_are_listed_and_escaped():
    import pandas as pd

    base = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1.0, 0.0], SCRIPT: [1.0, 1.0]}))
    head = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "q": [1.0, 1.0]}))
    html = compare_runs(base, head, seed=0)._repr_html_()
    assert f"<li>Metric &#x27;{ESCAPED}&#x27; is only in the base run; it was not compared</li>" in html


def test_run_and_suite_show_assertions_as_pass_fail_badges(tmp_path):
    result = suite_result()
    for html in (result._repr_html_(), result.to_run()._repr_html_()):
        assert '<span class="b bad">fail</span>' in html and "exact_match" in html


def test_store_lists_runs_compactly(tmp_path):
    html = store(tmp_path)._repr_html_()
    assert "1 runs" in html and "<th>quality</th>" in html and "<th>path</th>" not in html
