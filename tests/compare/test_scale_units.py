"""The unit codes, the one-trial trial means and the object text of ``changes`` against computations written here."""

from __future__ import annotations

import functools
import operator

import numpy as np
import pandas as pd
import pytest

from cogeval.compare import compare_scores
from cogeval.compare.pairing import unit_values


def two_pass_mean(values: list[float]) -> float:
    """R's two-pass mean of ``values`` in ascending order, each sum taken left to right (docs/comparing.md §1)."""
    v = sorted(x for x in values if not np.isnan(x))
    if not v:
        return np.nan
    m = functools.reduce(operator.add, v) / len(v)
    return m + functools.reduce(operator.add, [x - m for x in v]) / len(v)


@pytest.mark.parametrize("trials", [1, 2])
def test_unit_values_equal_a_dictionary_of_units_with_their_two_pass_means(trials):
    rng = np.random.default_rng(3)
    rows = [(f"k{k}", o, t) for k in rng.permutation(40) for o in range(1 + (k % 5 == 0)) for t in range(trials)]
    frame = pd.DataFrame(rows, columns=["case_key", "occurrence", "trial"]).sample(frac=1.0, random_state=1)
    frame = pd.concat([frame.assign(metric=m) for m in ("acc", "cost")], ignore_index=True)
    scores = rng.choice([0.0, -0.0, 0.25, 1.0, np.inf, -np.inf, np.nan], len(frame))
    frame = frame.assign(score=scores, case_error=rng.random(len(frame)) < 0.1)
    directions = {"acc": True, "cost": False}

    units, values, errored = unit_values(frame, directions)

    expected: dict[tuple[str, int], dict[str, list[float]]] = {}
    for key, occurrence, metric, score, failed in frame[
            ["case_key", "occurrence", "metric", "score", "case_error"]].itertuples(index=False):
        cell = expected.setdefault((key, int(occurrence)), {"acc": [], "cost": [], "ran": []})
        cell[metric].append((0.0 if directions[metric] else np.nan) if failed else score)
        cell["ran"].append(float(not failed))
    assert list(units) == list(expected)
    assert errored.tolist() == [not any(cell["ran"]) for cell in expected.values()]
    for metric in directions:
        want = np.array([0.0 if directions[metric] and not any(cell["ran"]) else two_pass_mean(cell[metric])
                         for cell in expected.values()])
        got = values[metric].to_numpy()
        np.testing.assert_array_equal(got, want)
        assert np.signbit(got[got == 0]).tolist() == np.signbit(want[want == 0]).tolist()  # -0.0 as the formula gives


def test_changes_keep_text_as_python_objects_even_a_lone_surrogate():
    keys = ["a\ud800", "b", "c"]

    def rows(scores):
        return pd.DataFrame({"run_id": "r", "case_key": pd.Series(keys, dtype=object), "occurrence": 0, "trial": 0, "metric": "m",
                             "score": scores, "error": None, "case_error": False})

    inputs = {"a\ud800": "half an emoji \ud83d", "c": {"q": 1}}
    changes = compare_scores(rows([0.0, 1.0, 0.5]), rows([1.0, 1.0, 0.25]), directions={"m": True},
                             inputs=inputs).changes

    text = {"case_key": ["a\ud800", "c"], "input": ["half an emoji \ud83d", '{"q": 1}'], "metric": ["m", "m"]}
    expected = pd.DataFrame({
        **{name: pd.Series(values, dtype=object) for name, values in text.items()},
        "base": [0.0, 0.5], "head": [1.0, 0.25], "delta": [1.0, -0.25],
        "direction": pd.Series(["improved", "regressed"], dtype=object), "occurrence": [0, 0],
        "errored": pd.Series([None, None], dtype=object)})
    pd.testing.assert_frame_equal(changes, expected)
