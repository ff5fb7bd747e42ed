"""compare_runs(..., by=...): each slice compared, Holm over slices × metrics, small slices described only.

References: scipy's ttest_rel on each slice's paired values and statsmodels' multipletests(method="holm")
over the family, computed here independently of cogeval.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from cogeval import EvalRun, compare_runs, comparison_html, comparison_markdown
from cogeval.compare.slices import MIN_SLICE_CASES, SLICE_COLUMNS, compare_slices
from cogeval.errors import InputError

TOPICS = ["billing", "shipping", "returns"]


def run(quality, accuracy, topics, inputs=None):
    inputs = inputs or [f"question {i}" for i in range(len(quality))]
    frame = pd.DataFrame({"input": inputs, "quality": quality, "accuracy": accuracy,
                          "metadata": [{"topic": t} for t in topics]})
    return EvalRun.from_frame(frame)


def planted(seed=1, n=30):
    """Quality drops by 0.5 on billing only; accuracy (0/1) is the same in both runs."""
    rng = np.random.default_rng(seed)
    topics = [t for t in TOPICS for _ in range(n)]
    base_quality = rng.normal(0.0, 0.3, len(topics))
    head_quality = base_quality + rng.normal(0.0, 0.3, len(topics)) - np.where(np.array(topics) == "billing", 0.5, 0.0)
    accuracy = rng.integers(0, 2, len(topics)).astype(float)
    return run(base_quality, accuracy, topics), run(head_quality, accuracy, topics), base_quality, head_quality, topics


def test_a_planted_drop_in_one_slice_is_found_there_and_nowhere_else():
    base, head, *_ = planted()
    comparison = compare_runs(base, head, by="topic")
    table = comparison.slices.set_index(["slice", "metric"])
    assert list(comparison.slices.columns) == list(SLICE_COLUMNS)
    assert table.loc[("billing", "quality"), "verdict"] == "worse"
    assert [table.loc[(t, "quality"), "verdict"] for t in ("returns", "shipping")] == ["inconclusive", "inconclusive"]
    assert not table.xs("accuracy", level="metric")["significant"].any()
    assert comparison.by == "topic"


def test_slice_p_values_are_paired_t_tests_holm_adjusted_over_slices_and_metrics():
    base, head, base_quality, head_quality, topics = planted()
    table = compare_runs(base, head, by="topic").slices
    quality = table[table["metric"] == "quality"].set_index("slice")
    for topic in TOPICS:
        mask = np.array(topics) == topic
        reference = stats.ttest_rel(head_quality[mask], base_quality[mask])
        assert quality.loc[topic, "p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
        assert quality.loc[topic, "n"] == mask.sum()
    tested = table[table["test"] != "none"]
    expected = multipletests(tested["p_value"], method="holm")[1]
    assert tested["adjusted_p_value"].to_numpy() == pytest.approx(expected, rel=1e-12)
    assert list(quality["test"]) == ["t", "t", "t"] and len(tested) == 6  # accuracy's three slices are in the family too


def test_a_slice_interval_excludes_zero_exactly_when_it_is_significant():
    base, head, *_ = planted()
    table = compare_runs(base, head, by="topic").slices
    tested = table[table["test"] != "none"]
    excludes = (tested["ci_low"] > 0) | (tested["ci_high"] < 0)
    assert (excludes == tested["significant"]).all()


def test_a_small_slice_is_described_not_tested():
    base_values = [0.5] * 25 + [0.9] * 4
    head_values = [0.6] * 25 + [0.1] * 4
    topics = ["big"] * 25 + ["tiny"] * 4
    comparison = compare_runs(run(base_values, [1.0] * 29, topics), run(head_values, [1.0] * 29, topics), by="topic",
                              metrics=["quality"])
    tiny = comparison.slices.set_index("slice").loc["tiny"]
    assert (tiny["test"], tiny["n"], tiny["verdict"], bool(tiny["significant"])) == ("none", 4, "inconclusive", False)
    assert tiny["note"] == f"too few cases to test: n = 4 < {MIN_SLICE_CASES}"
    assert np.isnan(tiny["p_value"]) and tiny["difference"] == pytest.approx(-0.8)
    assert (f"Slices with fewer than {MIN_SLICE_CASES} paired cases were described, not tested: 'tiny' (4)"
            in comparison.warnings)


def test_by_a_function_of_the_case():
    base, head, *_ = planted()
    comparison = compare_runs(base, head, by=lambda case: case.metadata["topic"] == "billing")
    assert sorted(comparison.slices["slice"].unique()) == [False, True]
    assert comparison.slices.set_index(["slice", "metric"]).loc[(True, "quality"), "verdict"] == "worse"


def test_the_comparison_table_gains_a_slice_column():
    base, head, *_ = planted()
    frame = compare_runs(base, head, by="topic").to_frame()
    assert frame.columns[0] == "slice"
    assert frame["slice"].iloc[:2].isna().all() and list(frame["slice"].iloc[2:]) == ["billing", "returns", "shipping"] * 2
    assert "slice" not in compare_runs(base, head).to_frame().columns


def test_slicing_by_a_field_no_case_has_is_refused():
    base, head, *_ = planted()
    with pytest.raises(InputError, match=r"^by='team': no case of either run has a metadata field 'team' "
                                         r"\(fields seen: topic\)$"):
        compare_runs(base, head, by="team")
    with pytest.raises(InputError, match=r"^by must be a case-metadata field name or a function of the case; got 3$"):
        compare_runs(base, head, by=3)


@pytest.mark.slow
def test_family_wise_error_under_the_null_stays_at_alpha():
    """No difference anywhere: 6 slices × 2 metrics; how often is any slice × metric significant?"""
    rng = np.random.default_rng(20261201)
    slices, n, reps = 6, 20, 400
    keys = [f"c{i}" for i in range(slices * n)]
    labels = {k: i // n for i, k in enumerate(keys)}

    def scores(values):
        return pd.DataFrame({"run_id": "r", "case_key": np.repeat(keys, 2), "occurrence": 0, "trial": 0,
                             "metric": ["a", "b"] * len(keys), "score": values.ravel(), "error": None,
                             "case_error": False})

    false_alarms = 0
    for _ in range(reps):
        shared = rng.normal(size=(len(keys), 2))
        base, head = shared + rng.normal(size=shared.shape), shared + rng.normal(size=shared.shape)
        table = compare_slices(scores(base), scores(head), labels, directions={"a": True, "b": True})
        false_alarms += bool(table["significant"].any())
    rate = false_alarms / reps
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)  # Holm: at most alpha, within Monte Carlo error


def test_repeated_cases_keep_their_own_slice():
    def repeated(quality):
        return EvalRun.from_frame(pd.DataFrame({
            "input": ["same question"] * 2 + [f"q{i}" for i in range(20)], "occurrence": [0, 1] + [0] * 20,
            "quality": quality, "metadata": [{"topic": t} for t in ["first", "second"] + ["first"] * 10 + ["second"] * 10],
        }))

    table = compare_runs(repeated([1.0] * 22), repeated([0.5] * 22), by="topic").slices
    assert table.set_index("slice")["n"].to_dict() == {"first": 11, "second": 11}


def test_reports_and_the_forest_plot_show_the_slices():
    base, head, *_ = planted()
    comparison = compare_runs(base, head, by="topic")
    html = comparison_html(comparison)
    assert "<h2>Slices by topic</h2>" in html
    assert html.count('<tr class="bad">') >= 1 and '<td class="t">billing</td>' in html
    markdown = comparison_markdown(comparison)
    assert "#### Slices by topic (Holm over slices × metrics)" in markdown
    billing_quality = next(line for line in markdown.splitlines() if line.startswith("| billing | quality"))
    assert billing_quality.endswith("🔴 worse |  |")  # then the note column: nothing to say of a 30-case t-test
    fig = comparison.plot()
    labels = [trace.y[0] for trace in fig.data]
    assert labels[:4] == ["quality ↑", "quality · billing", "quality · returns", "quality · shipping"]
    assert len(fig.data) == 2 + 6  # two metrics, three slices each
    assert "Slices by" not in comparison_html(compare_runs(base, head))


def test_changes_carry_each_cases_metadata():
    base, head, *_ = planted()
    changes = compare_runs(base, head).changes
    assert list(changes.columns)[-1] == "metadata"
    topics = {k: r.case.metadata["topic"] for r in base.results for k in [r.case_key]}
    assert [m["topic"] for m in changes["metadata"]] == [topics[k] for k in changes["case_key"]]


def test_the_console_names_the_slice_a_deciding_metric_got_worse_in(capsys):
    from cogeval.present.comparison_console import print_console

    base, head, base_quality, head_quality, topics = planted()
    print_console(compare_runs(base, head, by="topic"), brief=True)
    billing = np.array(topics) == "billing"
    drop = float(np.mean(head_quality[billing] - base_quality[billing]))
    assert f"worse in billing (30 cases): quality {drop:+.4g}" in capsys.readouterr().out
    print_console(compare_runs(base, head), brief=True)
    assert "worse in" not in capsys.readouterr().out


def test_true_and_1_are_two_slices_as_json_keeps_them():
    """Issue 24 item 7: metadata ``True`` and ``1`` (``False`` and ``0``) equal in Python, not in JSON."""
    base, head, *_ = planted()
    flags = [True, 1, False, 0] * 15
    for run_ in (base, head):
        for result, flag in zip(run_.results, itertools.cycle(flags)):
            result.case.metadata = {**result.case.metadata, "flag": flag}
    table = compare_runs(base, head, by="flag").slices
    quality = table[table["metric"] == "quality"]
    by_label = {repr(label): n for label, n in zip(quality["slice"], quality["n"])}
    assert by_label == {"True": 23, "1": 23, "False": 22, "0": 22}  # 90 cases: flags[i % 4]
