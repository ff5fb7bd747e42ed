"""ppi_mean and ppi_paired_difference against ppi-python (ppi_py 0.2.3, the reference implementation of
Angelopoulos et al. 2023 and of PPI++), called here on the same data; plus a seeded coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from cogeval.errors import InputError
from cogeval.stats import PPIResult, ppi_mean, ppi_paired_difference


def cases(kind, n_cases=60, n_labelled=15, seed=5):
    """Human scores and judge scores of ``n_cases`` cases; the first ``n_labelled`` are labelled."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n_cases) < 0.6).astype(float) if kind != "continuous" else rng.random(n_cases)
    judge = {
        "binary": np.clip(truth + 0.1 + rng.normal(0, 0.3, n_cases), 0, 1),  # biased, correlated
        "continuous": np.clip(truth + rng.normal(0.05, 0.15, n_cases), 0, 1),
        "anticorrelated": 1 - truth + rng.normal(0, 0.1, n_cases),  # λ clipped to 0
        "shrunk": 0.3 * truth + 0.2,  # λ above 1, clipped to 1
    }[kind]
    labels = truth.copy()
    labels[n_labelled:] = np.nan
    return judge, labels


def reference(judge, labels, alpha):
    labelled = ~np.isnan(labels)
    y, y_hat, y_unlabelled = labels[labelled], judge[labelled], judge[~labelled]
    low, high = ppi_mean_ci(y, y_hat, y_unlabelled, alpha=alpha)
    return (float(ppi_mean_pointestimate(y, y_hat, y_unlabelled)[0]), (float(low[0]), float(high[0])),
            classical_mean_ci(y, alpha=alpha), classical_mean_ci(judge, alpha=alpha))


@pytest.mark.parametrize("alpha", [0.05, 0.1])
@pytest.mark.parametrize("kind", ["binary", "continuous", "anticorrelated", "shrunk"])
def test_equals_ppi_python(kind, alpha):
    judge, labels = cases(kind)
    estimate, ci, classical, judge_only = reference(judge, labels, alpha)
    r = ppi_mean(judge, labels, alpha=alpha)
    assert r.estimate == pytest.approx(estimate, rel=1e-12, abs=1e-14)
    assert r.ci == pytest.approx(ci, rel=1e-12)
    assert r.classical_ci == pytest.approx(classical, rel=1e-12)
    assert r.classical_estimate == pytest.approx(float(np.nanmean(labels)), rel=1e-12)
    assert r.judge_ci == pytest.approx(judge_only, rel=1e-12)
    assert r.judge_estimate == pytest.approx(float(judge.mean()), rel=1e-12)
    assert (r.n_labelled, r.n_cases, r.alpha) == (15, 60, alpha)


def test_lambda_is_clipped_to_zero_and_one():
    assert ppi_mean(*cases("anticorrelated")).lam == 0.0
    assert ppi_mean(*cases("shrunk")).lam == 1.0
    r = ppi_mean(*cases("anticorrelated"))  # λ = 0: the humans-only estimate
    assert r.estimate == pytest.approx(r.classical_estimate)
    assert r.ci == pytest.approx(r.classical_ci)


def test_effective_sample_size_is_the_squared_width_ratio_times_n():
    r = ppi_mean(*cases("continuous"))
    classical_width = r.classical_ci.high - r.classical_ci.low
    width = r.ci.high - r.ci.low
    assert r.effective_sample_size == pytest.approx(15 * (classical_width / width) ** 2)
    assert r.effective_sample_size > 15  # a judge that agrees with people is worth more labels than were given


def test_frame_has_one_row_per_method():
    r = ppi_mean(*cases("binary"))
    frame = r.to_frame()
    assert list(frame.columns) == ["method", "estimate", "ci_low", "ci_high", "n"]
    assert frame.method.tolist() == ["ppi", "classical", "judge"]
    assert frame.n.tolist() == [60, 15, 60]
    assert frame.estimate.tolist() == [r.estimate, r.classical_estimate, r.judge_estimate]
    assert frame.ci_low.tolist() == [r.ci.low, r.classical_ci.low, r.judge_ci.low]
    assert isinstance(r, PPIResult)
    assert "PPIResult" in r._repr_html_()


def test_every_case_labelled_gives_the_classical_interval():
    judge, labels = cases("binary")
    labels = np.where(np.isnan(labels), 1.0, labels)
    r = ppi_mean(judge, labels)
    assert r.lam == 0.0
    assert r.estimate == pytest.approx(r.classical_estimate)
    assert r.ci == pytest.approx(r.classical_ci)
    assert r.effective_sample_size == pytest.approx(60)


def test_a_constant_judge_is_ignored():
    _, labels = cases("binary")
    r = ppi_mean(np.full(60, 0.7), labels)
    assert r.lam == 0.0
    assert r.ci == pytest.approx(r.classical_ci)


def test_effective_sample_size_is_nan_without_any_variance():
    assert math.isnan(ppi_mean([0.5, 0.5, 0.5], [1.0, 1.0, math.nan]).effective_sample_size)


@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_difference_equals_ppi_python_on_the_differences(kind):
    judge_base, labels_base = cases(kind, seed=1)
    judge_head, labels_head = cases(kind, seed=2)
    estimate, ci, classical, _ = reference(judge_head - judge_base, labels_head - labels_base, 0.05)
    r = ppi_paired_difference(judge_base, judge_head, labels_base, labels_head)
    assert r.estimate == pytest.approx(estimate, rel=1e-12, abs=1e-14)
    assert r.ci == pytest.approx(ci, rel=1e-12)
    assert r.classical_ci == pytest.approx(classical, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0.1, 0.2, 0.3], [1.0, 0.0]), "judge and labels must be paired (the same length); got 3 and 2 values"),
        (([0.1, math.nan, 0.3], [1.0, 0.0, 1.0]), "judge must not contain NaN; found one at position 1"),
        (([0.1, 0.2, 0.3], [1.0, math.nan, math.nan]),
         "labels must have at least 2 labelled cases (not NaN) to estimate a variance; got 1"),
        (([0.1, 0.2], [1.0, math.inf]), "labels must not contain infinite values; found one at position 1"),
    ],
)
def test_ppi_mean_input_errors(args, message):
    with pytest.raises(InputError) as error:
        ppi_mean(*args)
    assert str(error.value) == message


def test_ppi_mean_alpha_error():
    with pytest.raises(InputError, match=r"^alpha must be a number in \(0, 1\); got 0$"):
        ppi_mean([0.1, 0.2], [1.0, 0.0], alpha=0)


@pytest.mark.parametrize(
    ("labels_base", "labels_head", "message"),
    [
        ([1.0, 0.0, math.nan], [1.0, math.nan, math.nan],
         "labels_base and labels_head must label the same cases (a difference needs both); case 1 has labels_base but labels_head is NaN"),
        ([1.0, math.nan, math.nan], [1.0, 0.0, math.nan],
         "labels_base and labels_head must label the same cases (a difference needs both); case 1 has labels_head but labels_base is NaN"),
        ([1.0, 0.0], [1.0, 0.0, 1.0], "judge_base and labels_base must be paired (the same length); got 3 and 2 values"),
    ],
)
def test_ppi_paired_difference_input_errors(labels_base, labels_head, message):
    with pytest.raises(InputError) as error:
        ppi_paired_difference([0.1, 0.2, 0.3], [0.2, 0.2, 0.4], labels_base, labels_head)
    assert str(error.value) == message


@pytest.mark.slow
def test_ppi_covers_where_a_biased_judge_does_not():
    # 2,000 replications: 1,000 cases whose human score is Bernoulli(0.6) (true mean 0.6), a judge scoring
    # truth + 0.1 + N(0, 0.3²) (biased, correlation with people about 0.85), people labelling a random 100.
    # Monte-Carlo error of a coverage near 0.95: sqrt(0.05·0.95/2000) = 0.0049; allow 3 of them.
    # Measured (seed 17): coverage ppi 0.9465, classical 0.9455, judge 0.0005; mean width ppi 0.113 vs
    # classical 0.191; mean effective sample size 289 (from 100 labels).
    rng = np.random.default_rng(17)
    reps, n_cases, n_labelled, alpha = 2000, 1000, 100, 0.05
    covered = {"ppi": 0, "classical": 0, "judge": 0}
    widths = {"ppi": 0.0, "classical": 0.0}
    effective = 0.0
    for _ in range(reps):
        truth = (rng.random(n_cases) < 0.6).astype(float)
        judge = truth + 0.1 + rng.normal(0, 0.3, n_cases)
        labels = np.full(n_cases, np.nan)
        chosen = rng.choice(n_cases, n_labelled, replace=False)
        labels[chosen] = truth[chosen]
        r = ppi_mean(judge, labels, alpha=alpha)
        for method, ci in (("ppi", r.ci), ("classical", r.classical_ci), ("judge", r.judge_ci)):
            covered[method] += ci.low <= 0.6 <= ci.high
        widths["ppi"] += r.ci.high - r.ci.low
        widths["classical"] += r.classical_ci.high - r.classical_ci.low
        effective += r.effective_sample_size
    coverage = {method: count / reps for method, count in covered.items()}
    assert coverage["ppi"] >= 1 - alpha - 3 * math.sqrt(alpha * (1 - alpha) / reps)
    assert coverage["judge"] < 0.5
    assert widths["ppi"] < 0.7 * widths["classical"]
    assert effective / reps > 2 * n_labelled
