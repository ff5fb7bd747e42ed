"""compare_frames: one table with both versions in, a paired comparison out (references from scipy)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval.compare import compare_frames
from cogeval.errors import InputError


def table():
    rng = np.random.default_rng(7)
    ids = np.arange(40)
    v1 = rng.normal(0.5, 0.2, 40)
    v2 = v1 + rng.normal(0.1, 0.1, 40)
    correct_v1 = (rng.random(40) < 0.5).astype(int)
    correct_v2 = np.where(rng.random(40) < 0.3, 1, correct_v1)
    frame = pd.DataFrame({
        "id": np.concatenate([ids, ids]), "version": ["v1"] * 40 + ["v2"] * 40,
        "quality": np.concatenate([v1, v2]), "correct": np.concatenate([correct_v1, correct_v2]),
        "input": [f"question {i}: " + "long text " * 20 for i in ids] * 2,
    })
    return frame.sample(frac=1.0, random_state=3), (v1, v2), (correct_v1, correct_v2)


def test_a_wide_table_compares_each_score_column_against_scipy():
    frame, (v1, v2), (c1, c2) = table()
    comparison = compare_frames(frame, by="version", base="v1", head="v2", case="id")
    quality, correct = comparison.metrics["quality"], comparison.metrics["correct"]
    assert quality.p_value == pytest.approx(stats.ttest_rel(v2, v1).pvalue, rel=1e-9)
    assert quality.difference == pytest.approx(np.mean(v2 - v1), rel=1e-12) and quality.n == 40
    b, c = int(np.sum((c1 == 1) & (c2 == 0))), int(np.sum((c1 == 0) & (c2 == 1)))
    assert correct.test == "mcnemar-exact"
    assert correct.p_value == pytest.approx(stats.binomtest(b, b + c).pvalue, rel=1e-9)
    assert (comparison.base.name, comparison.head.name) == ("v1", "v2")


def test_changes_carry_the_whole_input_so_they_merge_back():
    frame, *_ = table()
    changes = compare_frames(frame, by="version", base="v1", head="v2", case="id", metrics=["quality"]).changes
    merged = changes.merge(frame[frame["version"] == "v1"][["id", "input"]], on="input")
    assert len(merged) == len(changes) == 40
    assert (merged["case_key"] == merged["id"].astype(str)).all()


def test_a_long_table_and_repeated_rows_as_trials():
    long = pd.DataFrame({"id": ["a", "a", "b", "b", "c", "c"] * 2, "version": ["old"] * 6 + ["new"] * 6,
                         "metric": "score", "score": [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5]})
    comparison = compare_frames(long, by="version", base="old", head="new", case="id")
    score = comparison.metrics["score"]
    assert score.n == 3  # cases, their two trials averaged
    assert (score.base, score.head) == pytest.approx((0.5, 5 / 6))


def test_directions_and_options_pass_through():
    frame, *_ = table()
    frame["latency_s"] = np.where(frame["version"] == "v2", 1.0, 2.0) + np.tile(np.linspace(0, 0.1, 40), 2)
    comparison = compare_frames(frame, by="version", base="v1", head="v2", case="id", metrics=["latency_s"],
                                directions={"latency_s": False}, decide_on=["latency_s"])
    assert comparison.metrics["latency_s"].verdict == "better" and comparison.verdict == "better"


@pytest.mark.parametrize(("call", "message"), [
    (lambda f: compare_frames(f, by="release", base="v1", head="v2", case="id"),
     r"^by='release' is not a column of the frame \(it has: id, version, quality, correct, input\)$"),
    (lambda f: compare_frames(f, by="version", base="v1", head="v9", case="id"),
     r"^head='v9': no row has version == 'v9' \(it has: 'v1', 'v2'\)$|^head='v9': no row has version == 'v9' \(it has: 'v2', 'v1'\)$"),
    (lambda f: compare_frames(f, by="version", base="v1", head="v2", case="id", metrics=["speed"]),
     r"^metrics \['speed'\] are not score columns of the frame"),
    (lambda f: compare_frames([1, 2], by="version", base="v1", head="v2", case="id"),
     r"^frame must be a pandas DataFrame; got \[1, 2\]$"),
])
def test_bad_arguments_are_named(call, message):
    frame, *_ = table()
    with pytest.raises(InputError, match=message):
        call(frame)


def test_two_rows_for_one_trial_are_refused():
    frame = pd.DataFrame({"id": [1, 1, 1], "version": ["a", "a", "b"], "trial": [0, 0, 0], "q": [1.0, 0.0, 1.0]})
    with pytest.raises(InputError, match=r"^case 1 has two rows for trial 0 of metric 'q' in version 'a'$"):
        compare_frames(frame, by="version", base="a", head="b", case="id")
