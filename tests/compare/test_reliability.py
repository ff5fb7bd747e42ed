"""pass^k and pass@k rows: per-case indicators and McNemar p-values recomputed with numpy and scipy, roles and
order, runs of different k, failures, and a seeded simulation of the type-I error under the null."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval import EvalRun, compare_frames, compare_runs
from cogeval.errors import InputError

N = 80


def run_of(scores: np.ndarray, run_id: str, quality: np.ndarray | None = None, errors: np.ndarray | None = None,
           name: str = "exact_match") -> EvalRun:
    """A run of N cases × k trials (``scores`` is cases × trials), trial i of case c being ``scores[c, i]``."""
    n, k = scores.shape
    frame = pd.DataFrame({"input": np.repeat([f"q{i}" for i in range(n)], k), "trial": np.tile(range(k), n),
                          name: scores.ravel()})
    if quality is not None:
        frame["quality"] = quality.ravel()
    if errors is not None:
        frame["error"] = np.where(errors.ravel(), "boom", None)
    return EvalRun.from_frame(frame, run_id=run_id)


def scipy_mcnemar(b: np.ndarray, h: np.ndarray) -> float:
    worse, better = int(np.sum(b > h)), int(np.sum(b < h))
    if worse + better == 0:
        return 1.0
    if worse + better < 25:
        return stats.binomtest(better, worse + better).pvalue
    excess = max(abs(worse - better) - 1, 0)
    return 1.0 if excess == 0 else stats.chi2.sf(excess**2 / (worse + better), 1)


def trials(seed: int, k: int, lift: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rate = np.clip(rng.uniform(0.2, 0.95, N) + lift, 0, 1)
    return (rng.random((N, k)) < rate[:, None]).astype(float)


def test_indicators_and_p_values_equal_numpy_and_scipy():
    base, head = trials(1, 3), trials(2, 3, lift=0.15)
    c = compare_runs(run_of(base, "20260101T000000000Z-0000000a"), run_of(head, "20260101T000000000Z-0000000b"))
    assert list(c.metrics) == ["exact_match", "exact_match.pass^3", "exact_match.pass@3"]
    for name, indicator in (("exact_match.pass^3", lambda x: x.all(axis=1)), ("exact_match.pass@3", lambda x: x.any(axis=1))):
        b, h = indicator(base).astype(float), indicator(head).astype(float)
        m = c.metrics[name]
        assert (m.role, m.derived_from, m.n, m.higher_is_better) == ("informs", "exact_match", N, True)
        assert (m.base, m.head, m.difference) == pytest.approx((b.mean(), h.mean(), h.mean() - b.mean()))
        assert m.test == ("mcnemar-exact" if np.sum(b != h) < 25 else "mcnemar")
        assert m.p_value == pytest.approx(scipy_mcnemar(b, h), rel=1e-10)
        assert (m.n_improved, m.n_regressed) == (int(np.sum(h > b)), int(np.sum(h < b)))
    informing = [c.metrics[n].p_value for n in ("exact_match.pass^3", "exact_match.pass@3")]
    holm = np.minimum(1, np.maximum.accumulate(np.sort(informing) * [2, 1]))  # Holm over the informing pair
    assert sorted(c.metrics[n].adjusted_p_value for n in ("exact_match.pass^3", "exact_match.pass@3")) == \
        pytest.approx(holm.tolist())
    frame = c.to_frame()
    assert frame["metric"].tolist() == list(c.metrics) and frame["role"].tolist() == ["decides", "informs", "informs"]
    rows = c.changes[c.changes["metric"] == "exact_match.pass^3"]
    assert len(rows) == int(np.sum(base.all(axis=1) != head.all(axis=1)))


def test_decide_on_a_reliability_row_gates_on_it():
    base = np.ones((N, 3))
    head = np.ones((N, 3))
    head[:40, 2] = 0.0  # 40 cases fail their third trial: pass^3 falls, pass@3 and the mean barely move
    c = compare_runs(run_of(base, "20260101T000000000Z-0000000a"), run_of(head, "20260101T000000000Z-0000000b"),
                     decide_on=["exact_match.pass^3"])
    assert c.decide_on == ["exact_match.pass^3"] and c.metrics["exact_match"].role == "informs"
    assert c.metrics["exact_match.pass^3"].verdict == "worse" and c.verdict == "worse"
    assert c.regressions == ["exact_match.pass^3"]
    assert c.metrics["exact_match.pass@3"].difference == 0.0
    with pytest.raises(InputError, match=r"decide_on names 'exact_match.pass\^2', which is not compared"):
        compare_runs(run_of(base, "20260101T000000000Z-0000000a"), run_of(head, "20260101T000000000Z-0000000b"),
                     decide_on=["exact_match.pass^2"])


def test_runs_of_different_k_use_the_first_min_k_trials_and_say_so():
    base, head = trials(3, 3), trials(4, 5, lift=0.1)
    c = compare_runs(run_of(base, "20260101T000000000Z-0000000a"), run_of(head, "20260101T000000000Z-0000000b"))
    assert list(c.metrics) == ["exact_match", "exact_match.pass^3", "exact_match.pass@3"]
    b, h = base.all(axis=1).astype(float), head[:, :3].all(axis=1).astype(float)  # head's trials 0, 1, 2
    assert c.metrics["exact_match.pass^3"].p_value == pytest.approx(scipy_mcnemar(b, h), rel=1e-10)
    assert c.metrics["exact_match.pass^3"].head == pytest.approx(h.mean())
    assert c.metrics["exact_match"].head == pytest.approx(head.mean())  # the metric itself keeps every trial
    assert ("The base run has 3 trials per case and the head run 5: the pass^3 and pass@3 rows use the first 3 "
            "trials of each case (by trial index)") in c.warnings


def test_only_higher_is_better_0_1_metrics_of_runs_with_trials_get_rows():
    rng = np.random.default_rng(5)
    base, head = trials(5, 2), trials(6, 2)
    quality = rng.uniform(0, 1, (N, 2))
    c = compare_runs(run_of(base, "20260101T000000000Z-0000000a", quality),
                     run_of(head, "20260101T000000000Z-0000000b", quality))
    assert list(c.metrics) == ["exact_match", "exact_match.pass^2", "exact_match.pass@2", "quality"]
    one = compare_runs(run_of(base[:, :1], "20260101T000000000Z-0000000a"),
                       run_of(head[:, :1], "20260101T000000000Z-0000000b"))
    assert list(one.metrics) == ["exact_match"]
    lower = [run.model_copy(update={"config": run.config.model_copy(update={"metrics": [
        m.model_copy(update={"higher_is_better": False}) for m in run.config.metrics]})})
        for run in (run_of(base, "20260101T000000000Z-0000000a"), run_of(head, "20260101T000000000Z-0000000b"))]
    assert list(compare_runs(*lower).metrics) == ["exact_match"]  # "all trials 1" is no pass when 1 is bad
    only = compare_runs(run_of(base, "20260101T000000000Z-0000000a", quality),
                        run_of(head, "20260101T000000000Z-0000000b", quality), metrics=["quality", "exact_match"])
    assert list(only.metrics) == ["quality", "exact_match", "exact_match.pass^2", "exact_match.pass@2"]


def test_failed_trials_score_0_and_a_case_failed_everywhere_stays_errored():
    base, head = np.ones((N, 2)), np.ones((N, 2))
    errors = np.zeros((N, 2), dtype=bool)
    errors[0, 1] = True  # one failed trial: the case fails pass^2, passes pass@2
    errors[1, :] = True  # every trial failed: errored in head
    c = compare_runs(run_of(base, "20260101T000000000Z-0000000a"),
                     run_of(head, "20260101T000000000Z-0000000b", errors=errors))
    assert c.n_errored_head == 1 and c.errored["input"].tolist() == ["q1"]
    strict, lenient = c.metrics["exact_match.pass^2"], c.metrics["exact_match.pass@2"]
    assert (strict.head, lenient.head) == (pytest.approx((N - 2) / N), pytest.approx((N - 1) / N))
    assert (strict.n_regressed, lenient.n_regressed) == (1, 0)  # the errored case counts as neither way


def test_compare_frames_with_trials_gets_the_rows_too():
    base, head = trials(7, 2), trials(8, 2)
    frame = pd.concat([pd.DataFrame({"v": side, "id": np.repeat(range(N), 2), "trial": np.tile([0, 1], N),
                                     "ok": x.ravel()}) for side, x in (("a", base), ("b", head))])
    c = compare_frames(frame, by="v", base="a", head="b", case="id", metrics=["ok"])
    assert list(c.metrics) == ["ok", "ok.pass^2", "ok.pass@2"]
    b, h = base.any(axis=1).astype(float), head.any(axis=1).astype(float)
    assert c.metrics["ok.pass@2"].p_value == pytest.approx(scipy_mcnemar(b, h), rel=1e-10)


@pytest.mark.slow
def test_pass_k_keeps_its_type_i_error_under_the_null():
    """Both runs draw every trial from the same per-case pass rates: the pass^3 and pass@3 comparisons reject at
    most alpha of the time, up to three Monte Carlo standard errors (raw p-values and Holm's verdicts alike)."""
    rng = np.random.default_rng(20260127)
    sims, n, k = 600, 150, 3
    rejected = {"pass^3": 0, "pass@3": 0}
    significant = 0
    for _ in range(sims):
        rate = rng.beta(2, 1.2, n)
        frame = pd.concat([pd.DataFrame({"v": side, "id": np.repeat(range(n), k), "trial": np.tile(range(k), n),
                                         "ok": (rng.random((n, k)) < rate[:, None]).astype(float).ravel()})
                           for side in ("a", "b")])
        c = compare_frames(frame, by="v", base="a", head="b", case="id", metrics=["ok"])
        for kind in rejected:
            rejected[kind] += c.metrics[f"ok.{kind}"].p_value < 0.05
        significant += c.metrics["ok.pass^3"].significant
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)
    assert all(count / sims <= bound for count in rejected.values()), rejected
    assert significant / sims <= bound
