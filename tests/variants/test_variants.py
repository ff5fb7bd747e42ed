"""Variants, run_variants and Leaderboard: real runs of deterministic targets, numbers checked by hand."""

from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from cogeval import EvalRun, Leaderboard, RunStore, Variants, compare_runs, exact_match, metric, run_variants
from cogeval.compare.leaderboard import LEADERBOARD_COLUMNS
from cogeval.errors import InputError
from cogeval.execution import run_sync
from cogeval.stats import bootstrap_ci
from cogeval.variants import arun_variants

DATA = [{"input": str(i), "expected": str(i)} for i in range(10)]
Z = 1.959963984540054  # qnorm(0.975)


def echo(q):
    return q


def zero(q):
    return "0"


def even(q):
    return q if int(q) % 2 == 0 else "x"


def wilson(x, n, z=Z):
    """Wilson (1927) score interval, written out: (x + z²/2 ± z·sqrt(x(n−x)/n + z²/4)) / (n + z²)."""
    centre = (x + z * z / 2) / (n + z * z)
    half = z * math.sqrt(x * (n - x) / n + z * z / 4) / (n + z * z)
    return centre - half, centre + half


@pytest.fixture(scope="module")
def tied():
    """Three variants that get everything right, one that gets 1 of 10."""
    return run_variants(DATA, Variants({"a": echo, "b": echo, "c": echo, "d": zero}, axis="prompt"),
                        [exact_match()], progress=False)


# --- Variants ---------------------------------------------------------------------------------


def test_variants_are_frozen():
    variants = Variants({"short": echo, "long": zero}, axis="prompt")
    assert variants.names == ["short", "long"] and len(variants) == 2 and variants.axis == "prompt"
    with pytest.raises(dataclasses.FrozenInstanceError):
        variants.axis = "model"
    with pytest.raises(TypeError):
        variants.targets["other"] = echo
    assert Variants({"a": echo}).axis == "config"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (({},), "Variants must map at least one variant name to a target; got {}"),
        (({1: echo},), "variant names must be non-empty strings; got 1"),
        (({" ": echo},), "variant names must be non-empty strings; got ' '"),
        (({"a": echo}, ""), "axis must be a non-empty string naming what was varied; got ''"),
    ],
)
def test_bad_variants_are_named(arguments, message):
    with pytest.raises(InputError) as error:
        Variants(*arguments)
    assert str(error.value) == message


# --- run_variants ------------------------------------------------------------------------------


def test_each_variant_is_a_named_run_with_axis_and_variant_metadata(tied):
    assert list(tied.results) == ["a", "b", "c", "d"]
    run = tied.results["d"]
    assert run.name == "d"
    assert dict(run.metadata) == {"axis": "prompt", "variant": "d"}
    assert run.config.trials == 1
    assert tied.axis == "prompt"


def test_runs_are_saved_to_the_store_and_a_leaderboard_rebuilds_from_the_files(tmp_path):
    board = run_variants(DATA, {"echo": echo, "even": even}, [exact_match()], store=tmp_path, progress=False)
    runs = RunStore(tmp_path).runs()
    assert sorted((r.name, r.metadata["axis"], r.metadata["variant"]) for r in runs) == [
        ("echo", "config", "echo"), ("even", "config", "even")]
    paths = {r.name: tmp_path / f"{r.run_id}.json" for r in runs}
    again = Leaderboard({"echo": paths["echo"], "even": str(paths["even"])})
    pd.testing.assert_frame_equal(again.leaderboard("exact_match"), board.leaderboard("exact_match"))


def test_a_mapping_of_targets_is_accepted_and_the_async_form_works():
    # run_sync, not asyncio.run: it also works when another test left an event loop running.
    board = run_sync(arun_variants(DATA, {"echo": echo, "zero": zero}, [exact_match()], progress=False))
    assert board.best("exact_match") == "echo" and board.axis == "config"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variants": [echo]}, r"^variants must be a Variants or a mapping of names to targets; got \[<function echo"),
        ({"repeats": 0}, r"^repeats must be an integer >= 1; got 0$"),
        ({"alpha": 2}, r"^alpha must be a number in \(0, 1\); got 2$"),
        ({"test": "z"}, r"^test must be one of 't', 'wilcoxon'; got 'z'$"),
        ({"seed": -1}, r"^seed must be None, an integer >= 0, a string or a numpy Generator; got -1$"),
    ],
)
def test_bad_arguments_fail_before_anything_runs(kwargs, message):
    calls = []
    arguments = {"variants": {"echo": lambda q: calls.append(q) or q}, **kwargs}
    with pytest.raises(InputError, match=message):
        run_variants(DATA, metrics=[exact_match()], progress=False, **arguments)
    assert calls == []


def test_variants_answer_each_case_back_to_back_in_an_order_rotating_per_case(tmp_path):
    calls = []  # concurrency=1: one call at a time, so appending needs no lock

    def recording(name):
        def target(q):
            calls.append(name)
            return q
        return target

    board = run_variants(DATA[:6], {"a": recording("a"), "b": recording("b"), "c": recording("c")}, [exact_match()],
                         concurrency=1, store=tmp_path, progress=False)
    groups = ["".join(calls[i:i + 3]) for i in range(0, 18, 3)]
    assert groups == ["abc", "bca", "cab", "abc", "bca", "cab"]  # each variant goes first twice
    assert sorted(r.name for r in RunStore(tmp_path).runs()) == ["a", "b", "c"]
    assert [board.results[name].stats.total for name in "abc"] == [6, 6, 6]


# --- the leaderboard table -----------------------------------------------------------------------


def test_ties_share_a_rank_and_best_is_none(tied):
    frame = tied.leaderboard("exact_match")
    assert list(frame.columns) == list(LEADERBOARD_COLUMNS)
    assert frame["variant"].tolist() == ["a", "b", "c", "d"]
    assert frame["rank"].tolist() == [1, 1, 1, 4]
    assert frame["score"].tolist() == [1.0, 1.0, 1.0, 0.1]  # "0" is right for case "0"
    assert frame["n"].tolist() == [10, 10, 10, 10]
    assert tied.best("exact_match") is None


def test_binary_metrics_get_wilson_intervals(tied):
    frame = tied.leaderboard("exact_match").set_index("variant")
    assert frame.loc["a", ["ci_low", "ci_high"]].tolist() == pytest.approx(wilson(10, 10))
    assert frame.loc["d", ["ci_low", "ci_high"]].tolist() == pytest.approx(wilson(1, 10))
    # Published value: 1 success in 10 trials, Wilson 95% interval (0.0179, 0.4042) (Newcombe 1998, Table I style)
    assert frame.loc["d", ["ci_low", "ci_high"]].round(4).tolist() == [0.0179, 0.4042]
    board = run_variants(DATA, {"even": even, "echo": echo}, [exact_match()], progress=False, alpha=0.1)
    even_row = board.leaderboard("exact_match").set_index("variant").loc["even"]
    assert [even_row.ci_low, even_row.ci_high] == pytest.approx(wilson(5, 10, z=1.6448536269514722))  # 90%


def test_every_variant_is_tested_against_the_leader_with_holm_across_variants(tied):
    frame = tied.leaderboard("exact_match").set_index("variant")
    # The leader is a (first of the tied); b and c equal it: McNemar b = c = 0, p = 1.
    # d vs a: a right and d wrong on 9 cases, never the other way: exact p = 2 · 0.5⁹ = 0.00390625.
    assert math.isnan(frame.loc["a", "p_value"]) and not frame.loc["a", "significant"]
    assert frame["p_value"].iloc[1:].tolist() == [1.0, 1.0, 0.00390625]
    # Holm over all six pairs (the leader is picked from the data): d differs from a, b and c with
    # p = 0.00390625 each, the three pairs among a, b, c have p = 1; the smallest of six: 6 · 0.00390625.
    assert frame["adjusted_p_value"].iloc[1:].tolist() == [1.0, 1.0, 0.0234375]
    assert frame["significant"].tolist() == [False, False, False, True]
    runs = {name: result.to_run() for name, result in tied.results.items()}
    assert compare_runs(runs["a"], runs["d"], metrics=["exact_match"], seed=0).metrics["exact_match"].p_value == 0.00390625


def test_holm_family_is_every_pair_of_variants_on_one_metric():
    board = run_variants(DATA, {"echo": echo, "even": even, "zero": zero}, [exact_match()], progress=False)
    frame = board.leaderboard("exact_match").set_index("variant")
    runs = {name: result.to_run() for name, result in board.results.items()}
    pairs = [("echo", "even"), ("echo", "zero"), ("even", "zero")]
    p = [compare_runs(runs[a], runs[b], metrics=["exact_match"]).metrics["exact_match"].p_value for a, b in pairs]
    assert frame.loc[["even", "zero"], "p_value"].tolist() == p[:2]  # 2 · 0.5⁵ = 0.0625 and 2 · 0.5⁹
    assert p[:2] == [0.0625, 0.00390625]
    # statsmodels, independently: Holm over the three pairs, of which the leader's two are shown
    _, adjusted, _, _ = multipletests(p, method="holm")
    np.testing.assert_allclose(frame.loc[["even", "zero"], "adjusted_p_value"], adjusted[:2], rtol=1e-12)


def test_rank_intervals_follow_the_interval_overlaps():
    board = run_variants(DATA, {"echo": echo, "even": even, "zero": zero}, [exact_match()], progress=False)
    frame = board.leaderboard("exact_match")
    # echo [0.72, 1], even [0.24, 0.76], zero [0.018, 0.40]: echo and even overlap, even and zero overlap,
    # echo lies entirely above zero.
    assert frame["variant"].tolist() == ["echo", "even", "zero"]
    assert frame[["rank", "rank_low", "rank_high"]].values.tolist() == [[1, 1, 2], [2, 1, 3], [3, 2, 3]]
    for row in frame.itertuples():
        above = sum(other.ci_low > row.ci_high for other in frame.itertuples())
        not_below = sum(other.ci_high >= row.ci_low for other in frame.itertuples())
        assert (row.rank_low, row.rank_high) == (1 + above, not_below)


def test_lower_is_better_metrics_rank_ascending():
    @metric("length", higher_is_better=False)
    def length(output, case):
        return float(len(output))

    board = run_variants(DATA, {"long": lambda q: q * 3, "short": lambda q: q}, [length], progress=False)
    frame = board.leaderboard("length")
    assert frame["variant"].tolist() == ["short", "long"] and frame["score"].tolist() == [1.0, 3.0]
    assert board.best("length") == "short"
    assert frame["ci_low"].tolist() == [1.0, 3.0]  # constant values: bootstrap (c, c)


# --- repeats are clusters --------------------------------------------------------------------------


def test_repeats_are_averaged_per_case_before_intervals_and_tests():
    calls = collections.Counter()

    def flaky(q):  # cases 0-3 always right; cases 4-9 right on the first repeat only
        calls[q] += 1
        return q if int(q) < 4 or calls[q] == 1 else "x"

    board = run_variants(DATA, {"echo": echo, "flaky": flaky}, [exact_match()], repeats=2, progress=False,
                         test="wilcoxon")
    assert board.results["flaky"].config.trials == 2 and len(board.results["flaky"].results) == 20
    frame = board.leaderboard("exact_match").set_index("variant")
    per_case = [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    assert frame.loc["flaky", "n"] == 10  # cases, not case × repeat
    assert frame.loc["flaky", "score"] == pytest.approx(0.7)
    # Case means of 0.5 are not 0/1, so the metric takes the bootstrap over the 10 case means for every variant
    # (not a Wilson interval of 14 successes in 20 independent trials).
    assert tuple(frame.loc["flaky", ["ci_low", "ci_high"]]) == bootstrap_ci(per_case, seed=0)
    assert tuple(frame.loc["echo", ["ci_low", "ci_high"]]) == (1.0, 1.0)
    # The paired test sees the 10 case means too: Wilcoxon of six differences of -0.5 (R: wilcox.test,
    # normal approximation with ties) is the same as compare_runs gives.
    runs = {name: result.to_run() for name, result in board.results.items()}
    expected = compare_runs(runs["echo"], runs["flaky"], test="wilcoxon").metrics["exact_match"]
    assert expected.n == 10
    assert frame.loc["flaky", "p_value"] == expected.p_value


# --- a variant lacking a metric ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def partial():
    """a has quality and speed; b has quality only; c has speed only. speed is lower-is-better."""
    inputs = ["q1", "q2", "q3", "q4"]
    frames = {
        "a": pd.DataFrame({"input": inputs, "quality": [0.8, 0.6, 0.7, 0.9], "speed": [2.0, 3.0, 2.0, 3.0]}),
        "b": pd.DataFrame({"input": inputs, "quality": [0.5, 0.4, 0.6, 0.5]}),
        "c": pd.DataFrame({"input": inputs, "speed": [1.0, 1.0, 2.0, 1.0]}),
    }
    return Leaderboard({
        name: EvalRun.from_frame(frame, name=name, directions={"speed": False} if "speed" in frame else None)
        for name, frame in frames.items()
    })


def test_a_variant_lacking_a_metric_scores_nan_and_ranks_last(partial):
    frame = partial.leaderboard("quality")
    assert frame["variant"].tolist() == ["a", "b", "c"]
    assert frame["score"].tolist()[:2] == pytest.approx([0.75, 0.5])
    assert math.isnan(frame["score"].iloc[2])  # no data, never 0
    assert frame["n"].tolist() == [4, 4, 0]
    assert frame[["rank", "rank_low", "rank_high"]].values.tolist()[2] == [3, 3, 3]
    last = frame.iloc[2]
    assert math.isnan(last.ci_low) and math.isnan(last.ci_high) and math.isnan(last.p_value)
    assert not last.significant
    assert tuple(frame.iloc[0][["ci_low", "ci_high"]]) == bootstrap_ci([0.8, 0.6, 0.7, 0.9], seed=0)


def test_a_missing_lower_is_better_metric_does_not_win(partial):
    frame = partial.leaderboard("speed")
    assert frame["variant"].tolist() == ["c", "a", "b"]
    assert frame["score"].tolist()[:2] == [1.25, 2.5] and math.isnan(frame["score"].iloc[2])
    assert frame["rank"].tolist() == [1, 2, 3]
    assert partial.directions == {"quality": True, "speed": False}
    assert partial.best("speed") == "c"


def test_to_frame_stacks_every_metric(partial):
    frame = partial.to_frame()
    assert list(frame.columns) == ["metric", "higher_is_better", *LEADERBOARD_COLUMNS]
    assert frame[["metric", "higher_is_better", "variant"]].values.tolist() == [
        ["quality", True, "a"], ["quality", True, "b"], ["quality", True, "c"],
        ["speed", False, "c"], ["speed", False, "a"], ["speed", False, "b"],
    ]


def test_an_unknown_metric_is_named(partial):
    with pytest.raises(InputError) as error:
        partial.leaderboard("bleu")
    assert str(error.value) == "metric 'bleu' is not scored per case by any variant; the metrics are: quality, speed"


def test_the_table_is_the_same_at_every_call_and_cannot_be_changed_through_a_copy(partial):
    first = partial.leaderboard("quality")
    first.loc[0, "score"] = 99.0
    pd.testing.assert_frame_equal(partial.leaderboard("quality"), Leaderboard(dict(partial.results)).leaderboard("quality"))


def test_leaderboard_is_frozen(partial):
    with pytest.raises(dataclasses.FrozenInstanceError):
        partial.alpha = 0.1
    with pytest.raises(TypeError):
        partial.results["d"] = None


# --- text, HTML, plot --------------------------------------------------------------------------------


def test_summary_text(tied):
    assert tied.summary("exact_match") == "\n".join([
        "exact_match (higher is better; pass rate with 95% Wilson intervals) across 4 variants (axis: prompt):",
        "  1. a: 1 [0.7225, 1], n = 10, rank 1 (could be 1–3); leader",
        "  1. b: 1 [0.7225, 1], n = 10, rank 1 (could be 1–3); vs leader: adjusted p = 1, not significant",
        "  1. c: 1 [0.7225, 1], n = 10, rank 1 (could be 1–3); vs leader: adjusted p = 1, not significant",
        "  4. d: 0.1 [0.01788, 0.4042], n = 10, rank 4; vs leader: adjusted p = 0.0234, significant",
        "No single best: several variants share rank 1.",
        "Significantly different from a (Holm-adjusted over all pairs, p < 0.05): d.",
        "Not distinguishable from a: b, c.",
    ])


def test_html_is_escaped():
    board = run_variants(DATA, {"<script>x</script>": echo, "plain": zero}, [exact_match()], progress=False)
    html = board._repr_html_()
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
    assert "exact_match (higher is better) · axis: config" in html


def test_html_never_raises():
    broken = Leaderboard({"a": "/no/such/run.json"})
    assert broken._repr_html_().startswith("<pre>Leaderboard: could not display (FileNotFoundError: ")


def test_plot_shows_scores_with_intervals(tied):
    import plotly.graph_objects as go

    figure = tied.plot("exact_match")
    assert isinstance(figure, go.Figure)
    trace = figure.data[0]
    frame = tied.leaderboard("exact_match")
    assert list(trace.y) == frame["variant"].tolist() and list(trace.x) == frame["score"].tolist()
    np.testing.assert_allclose(trace.error_x.array, frame["ci_high"] - frame["score"])
    np.testing.assert_allclose(trace.error_x.arrayminus, frame["score"] - frame["ci_low"])
    assert figure.layout.yaxis.autorange == "reversed"


def test_plot_escapes_variant_axis_and_metric_names_for_plotly():
    # plotly's labels read <b>, <a>...; plotly.js decodes &lt; &gt; &amp; but not &quot;, so quotes stay as they are
    board = run_variants(DATA, Variants({'<b>"v1"</b>': echo, "plain": zero}, axis="<i>prompt</i>"),
                         [exact_match()], progress=False)
    figure = board.plot("exact_match")
    assert list(figure.data[0].y) == ['&lt;b&gt;"v1"&lt;/b&gt;', "plain"]
    assert figure.layout.yaxis.title.text == "&lt;i&gt;prompt&lt;/i&gt;"
    assert figure.layout.title.text == "exact_match by &lt;i&gt;prompt&lt;/i&gt;, 95% intervals"
    assert "<b>" not in figure.to_json() and "&quot;" not in figure.to_json()
