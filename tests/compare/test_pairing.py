"""Pairing two score tables: units, trials, and the error rules, checked on hand-built tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cogeval.compare.pairing import metrics_of, pair_scores
from cogeval.errors import InputError

COLUMNS = ["run_id", "case_key", "occurrence", "trial", "metric", "score", "error", "case_error"]


def table(*rows):
    """Rows of (case_key, occurrence, trial, metric, score, case_error)."""
    return pd.DataFrame(
        [("r", k, o, t, m, s, "boom" if e else None, e) for k, o, t, m, s, e in rows], columns=COLUMNS
    )


UP = {"acc": True}


def test_units_matched_added_removed_in_first_appearance_order():
    base = table(("b", 0, 0, "acc", 1.0, False), ("a", 0, 0, "acc", 1.0, False), ("a", 1, 0, "acc", 0.0, False),
                 ("gone", 0, 0, "acc", 1.0, False))
    head = table(("new", 0, 0, "acc", 1.0, False), ("a", 0, 0, "acc", 0.0, False), ("b", 0, 0, "acc", 1.0, False),
                 ("a", 1, 0, "acc", 1.0, False), ("a", 2, 0, "acc", 1.0, False), ("new", 1, 0, "acc", 0.0, False))
    p = pair_scores(base, head, directions=UP)
    assert list(p.units) == [("b", 0), ("a", 0), ("a", 1)]  # base order
    assert list(p.added) == [("new", 0), ("a", 2), ("new", 1)]  # head order
    assert list(p.removed) == [("gone", 0)]
    assert p.base["acc"].tolist() == [1.0, 1.0, 0.0]
    assert p.head["acc"].tolist() == [1.0, 0.0, 1.0]  # aligned on the unit, not on the row


def test_trials_are_averaged_per_side():
    base = table(("a", 0, 0, "acc", 1.0, False), ("a", 0, 1, "acc", 0.0, False), ("a", 0, 2, "acc", 0.0, False))
    head = table(("a", 0, 0, "acc", 1.0, False))
    p = pair_scores(base, head, directions=UP)
    assert p.base["acc"].tolist() == pytest.approx([1 / 3])
    assert p.head["acc"].tolist() == [1.0]


def test_failed_trial_counts_zero_when_higher_is_better_and_is_left_out_when_lower():
    # trial 1 failed: (0.9 + 0) / 2 for accuracy; latency keeps only the trial that ran.
    base = table(("a", 0, 0, "acc", 0.9, False), ("a", 0, 1, "acc", math.nan, True),
                 ("a", 0, 0, "latency", 2.0, False), ("a", 0, 1, "latency", 0.1, True))
    p = pair_scores(base, base, directions={"acc": True, "latency": False})
    assert p.base.loc[("a", 0)].tolist() == pytest.approx([0.45, 2.0])


def test_one_side_failed_counts_zero_even_without_score_rows():
    base = table(("a", 0, 0, "acc", 1.0, False), ("b", 0, 0, "acc", 1.0, False))
    # head failed on "b" and its table has a row for the case with no metric (no scores were made)
    head = table(("a", 0, 0, "acc", 1.0, False), ("b", 0, 0, None, math.nan, True))
    p = pair_scores(base, head, directions=UP)
    assert p.head_errored.tolist() == [False, True]
    assert p.head["acc"].tolist() == [1.0, 0.0]
    assert metrics_of(head) == ["acc"]


def test_one_side_failed_on_lower_is_better_metric_is_nan():
    base = table(("a", 0, 0, "latency", 1.0, False))
    head = table(("a", 0, 0, "latency", 0.0, True))
    p = pair_scores(base, head, directions={"latency": False})
    assert np.isnan(p.head["latency"].iloc[0])


def test_both_failed_is_left_out_of_every_metric():
    base = table(("a", 0, 0, "acc", math.nan, True), ("a", 0, 1, "acc", math.nan, True), ("b", 0, 0, "acc", 1.0, False))
    head = table(("a", 0, 0, "acc", math.nan, True), ("b", 0, 0, "acc", 0.0, False))
    p = pair_scores(base, head, directions=UP)
    assert p.base["acc"].isna().tolist() == [True, False]
    assert p.head["acc"].isna().tolist() == [True, False]


def test_partly_failed_unit_is_not_errored():
    base = table(("a", 0, 0, "acc", 1.0, False), ("a", 0, 1, "acc", math.nan, True))
    head = table(("a", 0, 0, "acc", math.nan, True))
    p = pair_scores(base, head, directions=UP)
    assert p.base_errored.tolist() == [False] and p.head_errored.tolist() == [True]
    assert p.base["acc"].tolist() == [0.5] and p.head["acc"].tolist() == [0.0]


def test_nan_score_is_skipped_in_the_trial_mean_and_all_nan_is_nan():
    base = table(("a", 0, 0, "acc", math.nan, False), ("a", 0, 1, "acc", 1.0, False), ("b", 0, 0, "acc", math.nan, False))
    p = pair_scores(base, base, directions=UP)
    assert p.base["acc"].iloc[0] == 1.0
    assert np.isnan(p.base["acc"].iloc[1])


def test_a_metric_a_side_lacks_is_nan_there():
    base = table(("a", 0, 0, "acc", 1.0, False), ("a", 0, 0, "f1", 0.5, False))
    head = table(("a", 0, 0, "acc", 1.0, False))
    p = pair_scores(base, head, directions={"acc": True, "f1": True})
    assert list(p.base.columns) == ["acc", "f1"]
    assert p.base["f1"].tolist() == [0.5] and np.isnan(p.head["f1"].iloc[0])


def test_empty_head_removes_everything():
    base = table(("a", 0, 0, "acc", 1.0, False))
    p = pair_scores(base, table(), directions=UP)
    assert len(p.units) == 0 and list(p.removed) == [("a", 0)] and len(p.added) == 0
    assert list(p.base.columns) == ["acc"] and len(p.base) == 0


def test_missing_column_names_it():
    frame = table(("a", 0, 0, "acc", 1.0, False)).drop(columns="case_error")
    with pytest.raises(InputError) as info:
        pair_scores(frame, frame, directions=UP)
    assert str(info.value) == (
        "base is missing the column(s) case_error; a score table needs case_key, occurrence, trial, metric, "
        "score, case_error (it has: run_id, case_key, occurrence, trial, metric, score, error)"
    )


def test_not_a_frame():
    with pytest.raises(InputError, match=r"^head must be a pandas DataFrame of scores; got list$"):
        pair_scores(table(), [], directions=UP)
