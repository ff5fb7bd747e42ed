"""Comparisons of clustered cases (``cluster=``): 12 passages × 4 questions, head against base.

Reference values were computed once in R 4.x with clubSandwich (the call is beside each number);
the exact McNemar sign-flip p-value by enumerating the 2^12 sign flips here.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, Leaderboard, compare_frames, compare_runs
from cogeval.errors import InputError

# base and head: a graded score of 48 questions, 4 per passage (passage = 1..12, each 4 in a row).
# The head moved each passage by its own amount: the naive paired t-test calls it significant, R:
# t.test(head, base, paired = TRUE)$p.value = 0.00908409174569
BASE = [0.45, 0.76, 0.36, 0.24, 0.39, 0.63, 0.67, 0.52, 0.39, 0.75, 0.76, 0.46, 0.45, 0.57, 0.63, 0.57, 0.46,
        0.47, 0.59, 0.75, 0.23, 0.25, 0.66, 0.48, 0.67, 0.52, 0.48, 0.77, 0.42, 0.59, 0.53, 0.27, 0.3, 0.69, 0.51,
        0.61, 0.47, 0.71, 0.71, 0.46, 0.28, 0.7, 0.5, 0.53, 0.5, 0.22, 0.51, 0.26]
HEAD = [0.58, 0.9, 0.5, 0.38, 0.49, 0.72, 0.78, 0.63, 0.41, 0.78, 0.81, 0.51, 0.28, 0.43, 0.48, 0.41, 0.52,
        0.52, 0.66, 0.83, 0.26, 0.26, 0.69, 0.49, 0.66, 0.53, 0.46, 0.78, 0.48, 0.66, 0.61, 0.33, 0.41, 0.81, 0.63,
        0.72, 0.49, 0.75, 0.74, 0.5, 0.26, 0.69, 0.49, 0.53, 0.45, 0.19, 0.45, 0.22]
PASSAGE = [f"p{k}" for k in range(1, 13) for _ in range(4)]
# A 0/1 metric on the same questions.
BASE_01 = [0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,
           0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0]
HEAD_01 = [0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0,
           0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0]

# R: d <- head - base; g <- rep(1:12, each = 4)
#    clubSandwich::coef_test(lm(d ~ 1), vcov = "CR2", cluster = g, test = "Satterthwaite")
R_T, R_SE, R_P = 1.3271530795, 0.0229187326892, 0.211345908152  # df_Satt = 11 (balanced: G - 1)
# R: the same without questions 4, 47 and 48 (keep <- !(seq_along(d) %in% c(47, 48, 4)))
R_T_UNBALANCED, R_P_UNBALANCED = 1.38854936571, 0.193180268899  # df_Satt = 10.7061001672


def frame(base=BASE, head=HEAD, passage=PASSAGE, name="quality"):
    n = len(base)
    return pd.DataFrame({"id": list(range(n)) * 2, "version": ["v1"] * n + ["v2"] * n,
                         "passage": list(passage) * 2, name: list(base) + list(head)})


def test_a_graded_metric_is_tested_by_cr2_with_bell_mccaffrey_df():
    m = compare_frames(frame(), by="version", base="v1", head="v2", case="id", cluster="passage").metrics["quality"]
    assert (m.test, m.n, m.clusters) == ("clustered-t", 48, 12)
    assert m.statistic == pytest.approx(R_T, rel=1e-9)
    assert m.p_value == pytest.approx(R_P, rel=1e-9)
    d = np.array(HEAD) - np.array(BASE)
    naive_se = d.std(ddof=1) / math.sqrt(len(d))
    assert m.design_effect == pytest.approx((R_SE / naive_se) ** 2, rel=1e-9)
    assert (m.significant, m.verdict) == (False, "inconclusive")


def test_unbalanced_clusters_follow_clubsandwich():
    keep = [i for i in range(48) if i not in (3, 46, 47)]
    data = frame([BASE[i] for i in keep], [HEAD[i] for i in keep], [PASSAGE[i] for i in keep])
    m = compare_frames(data, by="version", base="v1", head="v2", case="id", cluster="passage").metrics["quality"]
    assert m.statistic == pytest.approx(R_T_UNBALANCED, rel=1e-9)
    assert m.p_value == pytest.approx(R_P_UNBALANCED, rel=1e-9)


def test_without_cluster_the_naive_verdict_comes_with_a_warning_naming_the_field():
    c = compare_frames(frame(), by="version", base="v1", head="v2", case="id")
    m = c.metrics["quality"]
    assert (m.test, m.clusters, m.verdict) == ("t", None, "better")
    assert m.p_value == pytest.approx(0.00908409174569, rel=1e-9)  # R: t.test(head, base, paired = TRUE)
    assert math.isnan(m.design_effect)
    warned = [w for w in c.warnings if "cluster='passage'" in w]
    effect = (R_SE / (np.std(np.array(HEAD) - np.array(BASE), ddof=1) / math.sqrt(48))) ** 2
    assert warned == [
        f"Cases that share a 'passage' succeed and fail together: on quality the design effect is {effect:.4g} (12 "
        "groups). If each passage is one of many that could have been drawn (a passage, a conversation, a template), "
        "this comparison's p-values and intervals, which take every case as independent, are too sure of themselves: "
        "compare with cluster='passage' to test whole groups; if the values of 'passage' are fixed categories, "
        "by='passage' compares each one (docs/statistics-clusters.md)"]


def test_one_case_per_cluster_is_exactly_the_unclustered_comparison():
    data = frame()
    data["own"] = data["id"]
    data["passage"] = "unused"  # a field that groups nothing must not change anything either
    alone = compare_frames(data.drop(columns=["own"]), by="version", base="v1", head="v2", case="id")
    clustered = compare_frames(data, by="version", base="v1", head="v2", case="id", cluster="own")
    left, right = alone.to_frame(), clustered.to_frame()
    assert right["clusters"].tolist() == [48]
    assert right["design_effect"].tolist() == [1.0]
    shared = [c for c in left.columns if c not in ("clusters", "design_effect", "clusters_needed")]
    pd.testing.assert_frame_equal(left[shared], right[shared])


def test_a_binary_metric_with_few_clusters_takes_the_exact_cluster_sign_flip():
    data = frame(BASE_01, HEAD_01, name="exact_match")
    m = compare_frames(data, by="version", base="v1", head="v2", case="id", cluster="passage").metrics["exact_match"]
    sums = (np.array(HEAD_01) - np.array(BASE_01)).reshape(12, 4).sum(axis=1)
    observed = abs(sums.sum())
    flips = [abs(np.dot(signs, sums)) >= observed for signs in itertools.product((-1, 1), repeat=12)]
    assert m.test == "clustered-mcnemar-exact"
    assert m.p_value == pytest.approx(np.mean(flips), rel=1e-12)


def test_a_case_without_a_cluster_is_an_error_naming_it():
    data = frame()
    data.loc[5, "passage"] = None
    with pytest.raises(InputError) as error:
        compare_frames(data, by="version", base="v1", head="v2", case="id", cluster="passage")
    assert str(error.value) == ("cluster='passage': case '5' (occurrence 0) has no cluster; every case needs one "
                                "(give a case with no group a cluster of its own)")


def runs(base=BASE, head=HEAD):
    inputs = [f"question {i} on passage {p}" for i, p in enumerate(PASSAGE)]
    return tuple(EvalRun.from_frame(pd.DataFrame({"input": inputs, "passage": PASSAGE, "quality": scores}))
                 for scores in (base, head))


def test_compare_runs_clusters_by_a_metadata_field_or_a_function_of_the_case():
    base, head = runs()
    by_field = compare_runs(base, head, cluster="passage")
    by_function = compare_runs(base, head, cluster=lambda case: case.metadata["passage"])
    for c in (by_field, by_function):
        m = c.metrics["quality"]
        assert (m.test, m.clusters) == ("clustered-t", 12)
        assert m.p_value == pytest.approx(R_P, rel=1e-9)
    assert by_field.cluster == "passage" and by_field.clusters == 12
    assert by_function.cluster == "test_compare_runs_clusters_by_a_metadata_field_or_a_function_of_the_case.<locals>.<lambda>"
    assert by_field.headline().endswith("; cases clustered by passage: 12 clusters, design effect up to "
                                        f"{by_field.metrics['quality'].design_effect:.4g}")


def test_compare_runs_names_a_case_without_the_field():
    base, head = runs()
    results = list(base.results)
    first = results[0].model_copy(update={"case": results[0].case.model_copy(update={"metadata": {"topic": "x"}})})
    base = base.model_copy(update={"results": [first, *results[1:]]})
    with pytest.raises(InputError) as error:
        compare_runs(base, head, cluster="passage")
    assert str(error.value) == (f"cluster='passage': case 'question 0 on passage p1' (case key {first.case_key[:12]}) "
                                "has no metadata field 'passage' (its fields: topic); every case needs a cluster (give "
                                "a case with no group a cluster of its own)")


def test_compare_runs_without_cluster_warns_of_the_field_that_groups_the_cases():
    base, head = runs()
    c = compare_runs(base, head)
    assert c.metrics["quality"].verdict == "better"
    assert any("compare with cluster='passage'" in w for w in c.warnings)
    sliced = compare_runs(base, head, by="passage")  # already compared passage by passage: nothing to add
    assert not any("cluster='passage'" in w for w in sliced.warnings)


def test_slices_are_tested_on_their_own_clusters_and_slicing_by_the_cluster_is_warned():
    base, head = runs()
    c = compare_runs(base, head, cluster="passage", by=lambda case: "early" if case.metadata["passage"] < "p5" else "late")
    assert c.slices["clusters"].tolist() == [7, 5]  # "early": p1, p10, p11, p12, p2, p3, p4 (as text, < "p5")
    same = compare_runs(base, head, cluster="passage", by="passage")
    assert any(w.startswith("by and cluster are the same field ('passage')") for w in same.warnings)


def test_fragility_counts_whole_clusters():
    shifted = [h + 0.2 for h in HEAD]  # head is now clearly better, passage by passage
    m = compare_frames(frame(head=shifted), by="version", base="v1", head="v2", case="id",
                       cluster="passage").metrics["quality"]
    assert m.significant and m.fragility is not None
    assert 1 <= m.fragility <= 11  # at most G - 1 clusters: one cluster left is no test


def test_power_figures_use_the_clustered_variance():
    clustered = compare_frames(frame(), by="version", base="v1", head="v2", case="id", cluster="passage",
                               margins={"quality": 0.01}).metrics["quality"]
    naive = compare_frames(frame(), by="version", base="v1", head="v2", case="id",
                           margins={"quality": 0.01}).metrics["quality"]
    assert clustered.mde > naive.mde
    assert clustered.n_needed >= math.ceil(naive.n_needed * clustered.design_effect) - 1
    assert clustered.clusters_needed == math.ceil(clustered.n_needed / 4)


def test_a_leaderboard_tests_every_pair_on_clusters():
    base, head = runs()
    board = Leaderboard({"v1": base, "v2": head}, cluster="passage")
    table = board.leaderboard("quality")
    assert table["p_value"].dropna().tolist() == pytest.approx([R_P], rel=1e-9)


def test_cogeval_compare_cluster_in_a_fresh_process(tmp_path):
    base, head = runs()
    paths = [str(base.save(tmp_path / "base.json")), str(head.save(tmp_path / "head.json"))]
    done = subprocess.run([sys.executable, "-m", "cogeval.cli", "compare", *paths, "--cluster", "passage",
                           "--format", "json"], capture_output=True, text=True, check=True)
    document = json.loads(done.stdout)
    assert (document["cluster"], document["clusters"]) == ("passage", 12)
    (quality,) = document["metrics"]
    assert quality["test"] == "clustered-t"
    assert quality["p_value"] == pytest.approx(R_P, rel=1e-9)


def test_a_leaderboard_gives_each_variant_its_clustered_interval():
    base, head = runs()
    table = Leaderboard({"v1": base, "v2": head}, cluster="passage").leaderboard("quality").set_index("variant")
    # Computed here: the CR2 SE in numpy and, for equal clusters, clubSandwich's Satterthwaite df G - 1 = 11
    from scipy import stats
    values = np.array(BASE)
    sums = (values - values.mean()).reshape(12, 4).sum(axis=1)
    se = math.sqrt(np.sum(sums**2 / (1 - 4 / 48))) / 48  # CR2, balanced: df = G - 1 = 11
    half = stats.t.ppf(0.975, 11) * se
    assert (table.loc["v1", "ci_low"], table.loc["v1", "ci_high"]) == pytest.approx(
        (values.mean() - half, values.mean() + half), rel=1e-9)


def test_eval_comparison_runs_both_targets_and_compares_whole_clusters():
    from cogeval import EvalComparison, exact_match
    from cogeval.examples import passages, reader_v1, reader_v2

    result = EvalComparison(passages(), {"baseline": reader_v1, "challenger": reader_v2}, metrics=[exact_match()],
                            progress=False, cluster="passage").run()
    comparison = result.comparison
    assert (comparison.cluster, comparison.clusters) == ("passage", 40)
    assert comparison.metrics["exact_match"].test.startswith("clustered-mcnemar")


def test_noise_report_takes_the_clustered_se_of_rerun_differences_into_its_margin():
    from scipy import stats

    from cogeval import noise_report

    rng = np.random.default_rng(5)
    inputs = [f"question {i} on passage {p}" for i, p in enumerate(PASSAGE)]
    values = [np.clip(np.array(BASE) + np.repeat(rng.normal(0, 0.05, 12), 4) + rng.normal(0, 0.01, 48), 0, 1)
              for _ in range(3)]
    reruns = [EvalRun.from_frame(pd.DataFrame({"input": inputs, "passage": PASSAGE, "quality": v})) for v in values]
    margin = noise_report(reruns, cluster="passage").to_frame()["suggested_margin"].iloc[0]

    def cr2_se(d):  # sqrt(sum_k D_k^2 / (1 - n_k/n)) / n, the clustered SE of a mean (clubSandwich's CR2)
        sums = (d - d.mean()).reshape(12, 4).sum(axis=1)
        return math.sqrt(np.sum(sums**2 / (1 - 4 / 48))) / 48

    pooled = np.mean([cr2_se(values[i] - values[j]) ** 2 for i, j in itertools.combinations(range(3), 2)])
    assert margin == pytest.approx(stats.norm.ppf(0.975) * math.sqrt(pooled), rel=1e-9)
    assert noise_report(reruns, cluster="passage").cluster == "passage"
