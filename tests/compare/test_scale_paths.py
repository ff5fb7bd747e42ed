"""The vectorised pairing, failure rules, trial means and changes table against a straightforward pandas
reimplementation written here, with each metric's test recomputed by scipy on the paired arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval.compare import compare_runs, compare_scores
from cogeval.data import EvalRun

DIRECTIONS = {"acc": True, "quality": True, "latency": False}
UNIT = ["case_key", "occurrence"]


def wide(seed: int, shift: float, trials: int, keys: range, failed: float) -> pd.DataFrame:
    """One run, one row per case × occurrence × trial: repeated cases, NaN scores, failures, shuffled rows."""
    rng = np.random.default_rng(seed)
    rows = [(f"k{k}", o, t) for k in keys for o in range(2 if k % 9 == 0 else 1) for t in range(trials)]
    frame = pd.DataFrame(rows, columns=[*UNIT, "trial"])
    frame["acc"] = (rng.random(len(frame)) < 0.5 + shift).astype(float)
    # multiples of 1/4: ties for Wilcoxon's normal approximation, and means of 1 or 2 trials that are exact in
    # floating point, so that every way of averaging gives the same ties
    frame["quality"] = (rng.normal(shift, 1, len(frame)) * 4).round() / 4
    frame["latency"] = rng.gamma(2.0, 1.0, len(frame))
    frame.loc[rng.random(len(frame)) < 0.05, "quality"] = np.nan  # the scorer failed
    errors = rng.random(len(frame)) < failed
    errors |= frame["case_key"].isin(["k3", "k4"]).to_numpy() & (failed > 0)  # failed on every trial
    frame["error"] = np.where(errors, "boom", None)
    frame["topic"] = np.where(frame["case_key"].str[-1].astype(int) % 2 == 0, "even", "odd")
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def long(frame: pd.DataFrame, run_id: str) -> pd.DataFrame:
    scores = frame.melt(id_vars=[*UNIT, "trial", "error"], value_vars=list(DIRECTIONS), var_name="metric",
                        value_name="score")
    return scores.assign(run_id=run_id, case_error=scores["error"].notna(), error=None)


def r_mean(scores: pd.Series) -> float:
    """R's two-pass ``mean`` of the trials in ascending order, summed left to right (docs/comparing.md)."""
    v = sorted(scores.dropna())
    if not v:
        return np.nan
    m = sum(v) / len(v)
    return m + sum(x - m for x in v) / len(v)


def reference(base: pd.DataFrame, head: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each side's per-unit values on the matched units (base order), by groupby-mean, as docs/comparing.md says."""
    def side(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
        frame = frame.copy()
        higher = frame["metric"].map(DIRECTIONS).astype(bool)
        frame.loc[frame["case_error"] & higher, "score"] = 0.0
        frame.loc[frame["case_error"] & ~higher, "score"] = np.nan
        errored = frame.groupby(UNIT, sort=False)["case_error"].all()
        values = frame.groupby([*UNIT, "metric"])["score"].agg(r_mean).unstack("metric").reindex(errored.index)
        values.loc[errored.to_numpy(), [m for m, up in DIRECTIONS.items() if up]] = 0.0
        return values[list(DIRECTIONS)], errored

    (b, b_err), (h, h_err) = side(base), side(head)
    units = b.index[b.index.isin(h.index)]
    b, h = b.loc[units].copy(), h.loc[units].copy()
    both = (b_err.loc[units] & h_err.loc[units]).to_numpy()
    b.loc[both, :] = np.nan
    h.loc[both, :] = np.nan
    # which run's target failed on every trial of a unit, when only one did: its changes are errors (issue 23)
    base_only, head_only = (b_err.loc[units] & ~h_err.loc[units]).to_numpy(), (h_err.loc[units] & ~b_err.loc[units]).to_numpy()
    errored = pd.Series(None, units, dtype=object)
    errored[base_only], errored[head_only] = "base", "head"
    b.attrs["errored"] = errored
    return b, h


def scipy_test(b: np.ndarray, h: np.ndarray, test: str) -> tuple[str, float]:
    d = np.where(np.abs(h - b) <= 1e-9, 0.0, h - b)
    if np.isin(b, (0, 1)).all() and np.isin(h, (0, 1)).all():
        worse, better = int(np.sum(d < 0)), int(np.sum(d > 0))
        if worse + better < 25:
            return "mcnemar-exact", stats.binomtest(better, worse + better).pvalue
        return "mcnemar", stats.chi2.sf(max(abs(worse - better) - 1, 0) ** 2 / (worse + better), 1)
    if test == "t":
        return "t", stats.ttest_rel(h, b).pvalue
    nonzero = d[d != 0]
    exact = len(nonzero) < 50 and len(np.unique(np.abs(nonzero))) == len(nonzero) and len(nonzero) == len(d)
    return "wilcoxon", stats.wilcoxon(nonzero, correction=True, method="exact" if exact else "approx").pvalue


def reference_changes(b: pd.DataFrame, h: pd.DataFrame) -> pd.DataFrame:
    """Every metric decides here, so the rows are in one part: largest |delta| first. A unit only one run's target
    failed on (``b.attrs["errored"]``) moved because of that failure: its ``direction`` is ``error``."""
    errored = b.attrs.get("errored", pd.Series(None, b.index, dtype=object))
    rows = []
    for m, up in DIRECTIONS.items():
        keep = b[m].notna() & h[m].notna()
        d = h[m][keep] - b[m][keep]
        d = d.where(d.abs() > 1e-9, 0.0)
        for (key, occurrence), delta in d[d != 0].items():
            side = errored.loc[(key, occurrence)]
            side = side if isinstance(side, str) else None
            rows.append((key, occurrence, m, b.loc[(key, occurrence), m], h.loc[(key, occurrence), m], delta,
                         "error" if side else "improved" if (delta > 0) == up else "regressed", side))
    frame = pd.DataFrame(rows, columns=[*UNIT, "metric", "base", "head", "delta", "direction", "errored"])
    frame["errored"] = pd.Series([row[-1] for row in rows], dtype=object)  # None, as compare_scores keeps it
    # largest |delta| first; ties keep metric order, then unit (base) order: the row order above
    order = np.argsort(-frame["delta"].abs().round(9).to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def check(comparison, b: pd.DataFrame, h: pd.DataFrame, test: str) -> None:
    assert comparison.matched == len(b)
    for m in DIRECTIONS:
        keep = (b[m].notna() & h[m].notna()).to_numpy()
        x, y = b[m].to_numpy()[keep], h[m].to_numpy()[keep]
        result = comparison.metrics[m]
        name, p = scipy_test(x, y, test)
        assert (result.n, result.test) == (len(x), name)
        np.testing.assert_allclose([result.base, result.head, result.difference, result.p_value],
                                   [x.mean(), y.mean(), np.mean(np.where(np.abs(y - x) <= 1e-9, 0, y - x)), p],
                                   rtol=1e-9, atol=1e-12)
    expected = reference_changes(b, h)
    moved = comparison.changes[comparison.changes["metric"].isin(list(DIRECTIONS))]  # not the pass^k rows
    ours = moved[expected.columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, expected, check_dtype=False, rtol=1e-12)


@pytest.mark.parametrize("trials", [1, 2])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
@pytest.mark.parametrize("swap", [False, True], ids=["errors-in-head", "errors-in-base"])
def test_compare_scores_equals_the_pandas_reference(trials, test, swap):
    base, head = wide(1, 0.0, trials, range(0, 70), 0.0), wide(2, 0.15, trials, range(5, 75), 0.08)
    if swap:
        base, head = head, base
    b, h = reference(long(base, "b"), long(head, "h"))
    comparison = compare_scores(long(base, "b"), long(head, "h"), directions=DIRECTIONS, test=test)
    check(comparison, b, h, test)
    assert set(comparison.added["case_key"]) == {f"k{k}" for k in (range(70, 75) if not swap else range(0, 5))}
    assert set(comparison.removed["case_key"]) == {f"k{k}" for k in (range(0, 5) if not swap else range(70, 75))}


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_compare_runs_equals_the_pandas_reference(test):
    base, head = wide(3, 0.0, 2, range(0, 60), 0.0), wide(4, 0.2, 2, range(0, 62), 0.1)
    runs = [EvalRun.from_frame(frame, directions=DIRECTIONS, metrics=list(DIRECTIONS)) for frame in (base, head)]
    comparison = compare_runs(*runs, test=test)
    b, h = reference(long(base, "b"), long(head, "h"))
    check(comparison, b, h, test)
    topics = base.drop_duplicates("case_key").set_index("case_key")["topic"]
    changes = comparison.changes
    assert [meta["topic"] for meta in changes["metadata"]] == topics.loc[changes["case_key"]].tolist()
    assert changes["base_trace_id"].isna().all() and changes["head_prompt_version"].isna().all()
