"""noise_report against an independent computation: numpy by hand, scipy's one-way ANOVA for ICC(1), scipy's
binomial test for the A/A comparisons; the refusals; compare_runs(..., noise=); a seeded A/A simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval import EvalRun, NoiseReport, compare_runs, noise_report
from cogeval.errors import InputError

N = 60
INPUTS = [f"question {i}" for i in range(N)]


def reruns_of(exact: np.ndarray, quality: np.ndarray, ids: str = "0123456789") -> list[EvalRun]:
    """One run per column of ``exact`` and ``quality`` (cases × reruns), same cases, same configuration."""
    return [EvalRun.from_frame(pd.DataFrame({"input": INPUTS, "exact_match": exact[:, j], "quality": quality[:, j]}),
                               run_id=f"20260101T00000{ids[j]}000Z-0000000{ids[j]}")
            for j in range(exact.shape[1])]


def data(seed: int, k: int = 3, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Cases with their own pass rate and quality, rerun k times; rerun j's pass rate raised by j·shift."""
    rng = np.random.default_rng(seed)
    rate = rng.uniform(0.1, 0.9, N)
    exact = (rng.random((N, k)) < np.clip(rate[:, None] + shift * np.arange(k), 0, 1)).astype(float)
    quality = np.round(rng.normal(rate[:, None], 0.15, (N, k)), 3)
    return exact, quality


def by_hand(x: np.ndarray, alpha: float = 0.05) -> dict[str, float]:
    """The report's figures from their definitions, written out with numpy and scipy."""
    n, k = x.shape
    run_means = x.mean(axis=0)
    run_sd = float(np.std(run_means, ddof=1))
    within = sum(float(np.var(row, ddof=1)) for row in x) / n  # pooled: the mean within-case variance
    f = stats.f_oneway(*x).statistic  # one group per case: F = MSB / MSW
    binary = np.isin(x, (0, 1)).all()
    flips = [np.mean([x[i, a] != x[i, b] for i in range(n)]) for a, b in itertools.combinations(range(k), 2)]
    return {"run_sd": run_sd, "case_sd": math.sqrt(within), "icc": (f - 1) / (f + k - 1),  # ICC(1) = (F-1)/(F+k-1)
            "flip_rate": float(np.mean(flips)) if binary else math.nan, "mean": float(x.mean()),
            "suggested_margin": stats.norm.ppf(1 - alpha / 2) * math.sqrt(2) * run_sd,
            # the chi-square interval of an sd on k - 1 df: sd·sqrt((k-1)/chi2.ppf(0.975)) .. sd·sqrt((k-1)/chi2.ppf(0.025))
            "suggested_margin_low": stats.norm.ppf(1 - alpha / 2) * math.sqrt(2) * run_sd
            * math.sqrt((k - 1) / stats.chi2.ppf(0.975, k - 1)),
            "suggested_margin_high": stats.norm.ppf(1 - alpha / 2) * math.sqrt(2) * run_sd
            * math.sqrt((k - 1) / stats.chi2.ppf(0.025, k - 1))}


def test_figures_equal_an_independent_computation():
    exact, quality = data(1, k=4)
    report = noise_report(reruns_of(exact, quality))
    frame = report.to_frame()
    assert list(frame.columns) == ["metric", "runs", "cases", "mean", "run_sd", "case_sd", "flip_rate", "icc",
                                   "aa_pairs", "aa_decided", "suggested_margin", "suggested_margin_low",
                                   "suggested_margin_high"]
    assert frame["metric"].tolist() == ["exact_match", "quality"]
    for name, x in (("exact_match", exact), ("quality", quality)):
        row = frame.set_index("metric").loc[name]
        assert (row["runs"], row["cases"], row["aa_pairs"]) == (4, N, 6)
        expected = by_hand(x)
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-10, nan_ok=True), (name, column)
    assert report.suggested_margins == pytest.approx(dict(zip(frame["metric"], frame["suggested_margin"])))


def test_icc_matches_shrout_and_fleiss():
    # Shrout & Fleiss (1979), Psychological Bulletin 86:420, Table 2 (6 targets × 4 judges): ICC(1,1) = .17 (Table 4); 0.1657 unrounded
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)
    inputs = [f"target {i}" for i in range(6)]
    runs = [EvalRun.from_frame(pd.DataFrame({"input": inputs, "rating": x[:, j]}), run_id=f"20260101T00000{j}000Z-0000000{j}")
            for j in range(4)]
    assert noise_report(runs).to_frame()["icc"][0] == pytest.approx(0.1657, abs=5e-5)


def test_aa_decided_counts_the_pairs_a_binomial_test_decides():
    exact, _ = data(2, k=3, shift=0.2)  # the third rerun passes far more often: some pairs are decided
    runs = [EvalRun.from_frame(pd.DataFrame({"input": INPUTS, "exact_match": exact[:, j]}),
                               run_id=f"20260101T00000{j}000Z-0000000{j}") for j in range(3)]
    decided = 0
    for a, b in itertools.combinations(range(3), 2):
        worse, better = int(np.sum(exact[:, a] > exact[:, b])), int(np.sum(exact[:, a] < exact[:, b]))
        p = (stats.binomtest(better, worse + better).pvalue if worse + better < 25
             else stats.chi2.sf(max(abs(worse - better) - 1, 0) ** 2 / (worse + better), 1))
        decided += p < 0.05
    row = noise_report(runs).to_frame().iloc[0]
    assert decided >= 1 and row["aa_decided"] == decided and row["aa_pairs"] == 3


def test_one_run_with_trials_is_its_own_reruns():
    exact, quality = data(3, k=3)
    frame = pd.DataFrame({"input": np.repeat(INPUTS, 3), "trial": np.tile(range(3), N),
                          "exact_match": exact.ravel(), "quality": quality.ravel()})
    one = noise_report(EvalRun.from_frame(frame, run_id="20260101T000000000Z-00000000"))
    three = noise_report(reruns_of(exact, quality))
    assert (one.source, one.reruns, three.source) == ("trials", 3, "runs")
    pd.testing.assert_frame_equal(one.to_frame(), three.to_frame())
    pd.testing.assert_frame_equal(one.cases, three.cases)


def test_cases_table_holds_each_case_over_the_reruns():
    exact, quality = data(4, k=3)
    report = noise_report(reruns_of(exact, quality))
    cases = report.cases
    assert list(cases.columns) == ["case_key", "occurrence", "input", "metric", "mean", "sd", "flip_rate"]
    binary = cases[cases["metric"] == "exact_match"]
    assert binary["input"].tolist() == INPUTS
    ones = exact.sum(axis=1)
    assert binary["flip_rate"].to_numpy() == pytest.approx(ones * (3 - ones) / 3)  # pairs that disagree, of 3
    assert binary["sd"].to_numpy() == pytest.approx(exact.std(axis=1, ddof=1))
    assert cases[cases["metric"] == "quality"]["flip_rate"].isna().all()
    # the report's flip rate is the mean of the cases' (each pair of reruns weighs the same)
    assert report.to_frame()["flip_rate"][0] == pytest.approx(binary["flip_rate"].mean())


def test_cases_without_a_value_in_every_rerun_are_left_out():
    exact, quality = data(5, k=3)
    quality[[0, 7], 1] = np.nan  # the scorer failed on two cases in the second rerun
    row = noise_report(reruns_of(exact, quality)).to_frame().set_index("metric").loc["quality"]
    keep = np.ones(N, dtype=bool)
    keep[[0, 7]] = False
    assert row["cases"] == N - 2
    assert row["run_sd"] == pytest.approx(by_hand(quality[keep])["run_sd"], rel=1e-10)


def configured(run: EvalRun, **config) -> EvalRun:
    return run.model_copy(update={"config": run.config.model_copy(update=config)})


def test_refuses_what_is_not_a_rerun_and_says_what_differs():
    exact, quality = data(6, k=2)
    first, second = reruns_of(exact, quality)
    other_cases = EvalRun.from_frame(pd.DataFrame({"input": [f"other {i}" for i in range(N)], "exact_match": 1.0,
                                                   "quality": 0.5}))
    with pytest.raises(InputError, match=r"runs\[1\] ran another dataset than runs\[0\] \(fingerprint "):
        noise_report([first, other_cases])
    fewer = EvalRun.from_frame(pd.DataFrame({"input": INPUTS, "exact_match": exact[:, 1]}),
                               run_id="20260101T000009000Z-00000009")
    with pytest.raises(InputError, match=r"runs\[1\] scored other metrics than runs\[0\] \(exact_match, not "
                                         r"exact_match, quality\)"):
        noise_report([first, fewer])
    with pytest.raises(InputError, match=r"runs\[1\] is not a rerun of runs\[0\]: model None → 'gpt-b'; "):
        noise_report([first, configured(second, target={"model": "gpt-b"})])
    with pytest.raises(InputError, match=r"runs\[1\] is not a rerun of runs\[0\]: trials 1 → 3; "):
        noise_report([first, configured(second, trials=3)])
    with pytest.raises(InputError, match=r"runs\[1\] is runs\[0\] again"):
        noise_report([first, first])
    with pytest.raises(InputError, match=r"got one run \('20260101T000000000Z-00000000'\) with 1 trial per case"):
        noise_report(first)
    with pytest.raises(InputError, match="got an empty list"):
        noise_report([])
    with pytest.raises(InputError, match=r"runs\[1\] must be an EvalRun, a suite result or a run-file path; got 3"):
        noise_report([first, 3])
    with pytest.raises(InputError, match="alpha"):
        noise_report([first, second], alpha=1.5)


def test_paths_and_suite_results_are_accepted(tmp_path):
    exact, quality = data(7, k=2)
    runs = reruns_of(exact, quality)
    paths = [run.save(tmp_path / f"{i}.json") for i, run in enumerate(runs)]
    pd.testing.assert_frame_equal(noise_report(paths).to_frame(), noise_report(runs).to_frame())


def test_compare_runs_says_which_differences_lie_beyond_rerun_noise():
    exact, quality = data(8, k=3, shift=0.12)  # reruns that drift: a wide suggested margin
    report = noise_report(reruns_of(exact, quality))
    margin = report.suggested_margins["exact_match"]
    rng = np.random.default_rng(9)
    n = 2000
    base = (rng.random(n) < 0.5).astype(float)
    head = np.where(rng.random(n) < 0.12, 1.0, base)  # +0.06 or so: significant, yet within the margin
    inputs = [f"question {i}" for i in range(n)]

    def make(scores, quality, i):
        return EvalRun.from_frame(pd.DataFrame({"input": inputs, "exact_match": scores, "quality": quality}),
                                  run_id=f"20260102T00000{i}000Z-0000000{i}")

    comparison = compare_runs(make(base, base, 1), make(head, base + 0.5, 2), noise=report)
    m, q = comparison.metrics["exact_match"], comparison.metrics["quality"]
    assert m.verdict == "better" and 0 < m.difference < margin
    assert (m.noise_margin, m.beyond_noise) == (pytest.approx(margin), False)
    assert (q.beyond_noise, q.noise_margin) == (True, pytest.approx(report.suggested_margins["quality"]))
    frame = comparison.to_frame()
    assert frame["beyond_noise"].dtype == "boolean" and frame["beyond_noise"].tolist() == [False, True]
    assert comparison.headline().endswith(
        f"; exact_match's difference +{m.difference:.4g} is within rerun noise (suggested margin {margin:.4g})")
    plain = compare_runs(make(base, base, 1), make(head, base + 0.5, 2))
    assert plain.to_frame()["beyond_noise"].isna().all() and "noise" not in plain.headline()
    with pytest.raises(InputError, match=r"noise must be a NoiseReport \(cogeval.noise_report\(reruns\)\) or None; "
                                         r"got 42"):
        compare_runs(make(base, base, 1), make(head, base, 2), noise=42)


def test_display_never_raises_and_escapes():
    exact, _ = data(10, k=2)
    runs = [EvalRun.from_frame(pd.DataFrame({"input": INPUTS, "<b>x</b>": exact[:, j]}),
                               run_id=f"20260101T00000{j}000Z-0000000{j}") for j in range(2)]
    report = noise_report(runs)
    page = report._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page and "0 of 1" in page
    assert repr(report) == "NoiseReport(source='runs', reruns=2, metrics=['<b>x</b>'], cases=60)"
    broken = NoiseReport("runs", ("a",), 2, 0.05, report.cases, None)  # type: ignore[arg-type]
    assert broken._repr_html_().startswith("<pre>NoiseReport: could not display")


@pytest.mark.slow
def test_aa_false_alarms_stay_within_alpha():
    """Reruns of one stochastic system: the share of A/A pairs compare_runs decides is at most alpha plus three
    Monte Carlo standard errors (pairs of one simulation are dependent; the bound takes one draw per simulation)."""
    rng = np.random.default_rng(20260127)
    sims, k, n = 200, 4, 150
    decided = pairs = 0
    inputs = [f"q{i}" for i in range(n)]
    for _ in range(sims):
        rate = rng.beta(2, 2, n)
        exact = (rng.random((n, k)) < rate[:, None]).astype(float)
        frame = pd.DataFrame({"input": np.repeat(inputs, k), "trial": np.tile(range(k), n), "exact_match": exact.ravel()})
        row = noise_report(EvalRun.from_frame(frame)).to_frame().iloc[0]
        decided, pairs = decided + row["aa_decided"], pairs + row["aa_pairs"]
    assert pairs == sims * 6
    assert decided / pairs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)


def test_fewer_than_five_reruns_warn_that_the_margin_is_a_rough_guide():
    exact, quality = data(2, k=3)
    with pytest.warns(UserWarning) as caught:
        noise_report(reruns_of(exact, quality))
    # the high over the low multiplier of an sd on 2 df: sqrt(chi2.ppf(0.975, 2) / chi2.ppf(0.025, 2))
    ratio = math.sqrt(stats.chi2.ppf(0.975, 2) / stats.chi2.ppf(0.025, 2))
    assert [str(w.message) for w in caught] == [
        "noise_report of 3 reruns: suggested_margin is a rough guide (its 95 % interval, suggested_margin_low to "
        f"suggested_margin_high, spans a factor of {ratio:.4g}); 5 or more reruns pin it down better"]
