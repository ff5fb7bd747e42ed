"""label_sample and the run-level ppi_difference: the sample, the values (those of the stats function), the errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, label_sample, ppi_difference
from cogeval.compare import LABEL_COLUMNS
from cogeval.errors import InputError
from cogeval.stats import ppi_paired_difference

N = 60
RNG = np.random.default_rng(5)
TRUTH_BASE = (RNG.random(N) < 0.6).astype(float)
TRUTH_HEAD = np.maximum(TRUTH_BASE, RNG.random(N) < 0.4)
JUDGE_BASE = np.clip(TRUTH_BASE - 0.2 + RNG.normal(0, 0.2, N), 0, 1).round(2)
JUDGE_HEAD = np.clip(TRUTH_HEAD - 0.2 + RNG.normal(0, 0.2, N), 0, 1).round(2)
INPUTS = [f"question {i}" for i in range(N)]


def run(judge, name, **columns) -> EvalRun:
    return EvalRun.from_frame(pd.DataFrame({"input": INPUTS, "output": [f"{name} {i}" for i in range(N)],
                                            "quality": judge, **columns}), name=name)


BASE, HEAD = run(JUDGE_BASE, "base"), run(JUDGE_HEAD, "head")


def labels_of(sheet: pd.DataFrame) -> pd.DataFrame:
    """What people would write: the true score of each sampled case, both sides."""
    index = [INPUTS.index(x) for x in sheet.input]
    return pd.DataFrame({"case_key": sheet.case_key, "base": TRUTH_BASE[index], "head": TRUTH_HEAD[index]})


def test_label_sample_is_a_seeded_sheet_of_distinct_cases():
    sheet = label_sample(BASE, 20, seed=3)
    assert list(sheet.columns) == LABEL_COLUMNS and len(sheet) == 20
    assert sheet.case_key.is_unique and sheet.label.isna().all()
    assert sheet.output.tolist() == [f"base {INPUTS.index(x)}" for x in sheet.input]
    assert sheet.equals(label_sample(BASE, 20, seed=3)) and not sheet.equals(label_sample(BASE, 20, seed=4))


def test_two_runs_of_one_dataset_give_the_same_sample_whatever_their_order():
    shuffled = EvalRun.from_frame(pd.DataFrame({"input": INPUTS[::-1], "quality": JUDGE_HEAD[::-1]}))
    assert label_sample(shuffled, 15, seed=1).case_key.tolist() == label_sample(BASE, 15, seed=1).case_key.tolist()


def test_the_draw_is_numpys_uniform_choice_over_the_cases_in_key_order():
    keys = sorted(r.case_key for r in BASE.results)
    picked = np.random.default_rng(9).choice(N, size=12, replace=False)
    assert label_sample(BASE, 12, seed=9).case_key.tolist() == [keys[i] for i in picked]


def test_ppi_difference_equals_the_stats_function_on_the_same_arrays():
    labels = labels_of(label_sample(BASE, 25, seed=2))
    r = ppi_difference(BASE, HEAD, labels, metric="quality")
    order = np.argsort([BASE.results[i].case_key for i in range(N)])  # cases in case-key order
    labelled = np.isin([BASE.results[i].case_key for i in order], labels.case_key)
    expected = ppi_paired_difference(JUDGE_BASE[order], JUDGE_HEAD[order], np.where(labelled, TRUTH_BASE[order], np.nan),
                                     np.where(labelled, TRUTH_HEAD[order], np.nan))
    assert r == expected
    assert (r.n_labelled, r.n_cases) == (25, N)


def test_a_labelled_case_without_a_score_on_both_sides_is_left_out_with_a_warning():
    judge = JUDGE_HEAD.copy()
    sheet = label_sample(BASE, 25, seed=2)
    judge[INPUTS.index(sheet.input[0])] = math.nan
    with pytest.warns(RuntimeWarning, match=rf"1 labelled case\(s\) have no 'quality' score on both sides and are left "
                                            rf"out, the first '{sheet.case_key[0]}'"):
        r = ppi_difference(BASE, run(judge, "head"), labels_of(sheet), metric="quality")
    assert (r.n_labelled, r.n_cases) == (24, N - 1)


def test_labels_may_give_the_occurrence():
    labels = labels_of(label_sample(BASE, 10)).assign(occurrence=0)
    assert ppi_difference(BASE, HEAD, labels, metric="quality") == ppi_difference(BASE, HEAD, labels.drop(columns="occurrence"),
                                                                                   metric="quality")


LABELS = labels_of(label_sample(BASE, 10))


@pytest.mark.parametrize(("labels", "message"), [
    ([1, 0], r"labels must be a DataFrame with columns case_key, base and head \(the human score of each side\); got"),
    (LABELS.drop(columns="head"), "labels must have the columns case_key, base and head; it lacks head"),
    (pd.concat([LABELS, LABELS.iloc[[3]]], ignore_index=True),
     f"labels row 10 labels case '{LABELS.case_key[3]}' again; give each case one row"),
    (LABELS.assign(head=[1, 1, None, 1, 1, 1, 1, 1, 1, 1]),
     f"labels row 2 \\(case '{LABELS.case_key[2]}'\\) has no head score \\(.*\\); label both sides of every case, or drop"),
    (LABELS.assign(case_key=["no-such-case", *LABELS.case_key[1:]]),
     r"labels name case 'no-such-case' \(occurrence 0\), which neither run has; the labels must come from label_sample"),
])
def test_label_errors_name_the_row_or_the_case(labels, message):
    with pytest.raises(InputError, match=message):
        ppi_difference(BASE, HEAD, labels, metric="quality")


def test_other_errors():
    with pytest.raises(InputError, match=r"base run '.*' has no metric 'accuracy'; it has: quality"):
        ppi_difference(BASE, HEAD, LABELS, metric="accuracy")
    with pytest.raises(InputError, match="n must be at most the run's 60 cases; got 61"):
        label_sample(BASE, 61)
    trials = EvalRun.from_frame(pd.DataFrame({"input": ["a", "a"], "trial": [0, 1], "quality": [0.1, 0.2]}))
    with pytest.raises(InputError, match=r"run: run '.*' has 2 trials per case; judge calibration takes runs of one trial"):
        label_sample(trials, 1)
