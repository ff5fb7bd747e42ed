"""compare_sequential(..., cluster=): whole clusters in the random order, batches and looks at cluster boundaries,
the clustered statistic and plan at each look, the confidence sequences on cluster means, and a simulated clustered
null (the rule itself on simulated scores, as tests/compare/test_sequential_group.py simulates it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cogeval import Case, exact_match, metric
from cogeval.compare import compare_sequential
from cogeval.compare.paired import PairedSample
from cogeval.compare.sequential import _ends, _group_looks, _Planned
from cogeval.errors import InputError
from cogeval.examples import assistant_v1, assistant_v2, passages, questions, reader_v1, reader_v2
from cogeval.present.sequential_plot import plot_sequential
from cogeval.stats import (
    clustered_mcnemar_test,
    clustered_t_test,
    confidence_sequence,
    group_sequential_design,
    plan_sample_size,
)

DESIGN = group_sequential_design(10, alpha=0.05, sided=2, spending=("kim-demets", 2), futility="pocock")
"""compare_sequential's default design for one metric."""


def _group(cluster):
    return compare_sequential(passages(), reader_v1, reader_v2, [exact_match()], method="group", effect=0.1,
                              cluster=cluster)


@pytest.fixture(scope="module")
def naive():
    return _group(None)


@pytest.fixture(scope="module")
def clustered():
    return _group("passage")


def _scores(result):
    return [np.array([r.scores["exact_match"].value for r in side.results]) for side in (result.base, result.head)]


def _passages(result):
    return [r.case.metadata["passage"] for r in result.base.results]


def test_the_passages_demo_is_better_case_by_case_and_inconclusive_passage_by_passage(naive, clustered):
    # v2 gains 5 questions on each of 8 story passages and loses 5 on each of 3 records (cogeval.examples.passages):
    # taken as 240 independent questions that is a clear gain, and the naive design stops for it at its 8th look;
    # taken as 40 passages, 8 against 3 is what a fair coin gives 23% of the time (binom.test(8, 11)), so the
    # clustered design runs every passage and decides nothing
    assert (naive.verdict, naive.stopped_at, naive.cluster, naive.clusters) == ("better", 183, None, None)
    assert (clustered.verdict, clustered.stopped_at, clustered.cluster, clustered.clusters) == (
        "inconclusive", 240, "passage", 40)
    m = clustered.comparison.metrics["exact_match"]
    assert (clustered.comparison.cluster, m.test, m.clusters) == ("passage", "clustered-mcnemar-exact", 40)
    assert m.p_value == pytest.approx(stats.binomtest(8, 11).pvalue, rel=1e-12)
    assert math.isnan(clustered.to_frame().decided_at[0]) and clustered.to_frame().n[0] == 240
    # the fixed-n plan for the effect with the discordance seen (55 of 240), times the design effect: the clustered
    # variance over the unclustered one, as the comparison's n_needed plans
    assert clustered.planned_cases == math.ceil(plan_sample_size(0.1, discordance=55 / 240) * m.design_effect) == 900
    assert naive.planned_cases == plan_sample_size(0.1, discordance=np.mean(np.diff(_scores(naive), axis=0) != 0))
    assert "clustered by" in clustered._repr_html_() and "40 clusters run" in clustered._repr_html_()
    assert plot_sequential(clustered).layout.title.text.startswith("Group-sequential comparison: inconclusive")


def test_whole_passages_run_in_the_seeded_order_of_the_passages(clustered):
    ran = _passages(clustered)
    # each passage's 6 questions run one after the other, the passages in the order drawn from the seed over the
    # 40 passages (numbered as they first appear in the dataset)
    first_seen = list(dict.fromkeys(c.metadata["passage"] for c in passages()))
    expected = [first_seen[k] for k in np.random.default_rng(0).permutation(40)]
    assert ran == [p for p in expected for _ in range(6)]


def test_each_look_ends_at_a_passage_and_tests_it_with_the_clustered_mcnemar(clustered):
    b, h = _scores(clustered)
    ran = np.array(_passages(clustered))
    looks = clustered.looks
    assert len(looks) >= 2 and all(n % 6 == 0 for n in looks.n)
    for look, row in zip(looks.itertuples(), clustered.sequence.itertuples()):
        n = look.n
        r = clustered_mcnemar_test(h[:n], b[:n], ran[:n], exact=False)  # Yang's χ², R clust.bin.pair(method = "yang")
        assert look.statistic == pytest.approx(np.sign(r.mean_difference) * math.sqrt(r.statistic), rel=1e-12)
        # the repeated confidence interval excludes 0 exactly when |z| >= efficacy
        assert (row.ci_low > 0 or row.ci_high < 0) == (abs(look.statistic) >= look.efficacy)
        assert row.estimate == pytest.approx(np.mean(h[:n] - b[:n]))
    assert (looks.statistic < looks.efficacy).all()


def test_the_naive_design_looks_where_it_likes_and_uses_mcnemars_z(naive):
    b, h = _scores(naive)
    assert any(n % 6 for n in naive.looks.n)  # a look ends inside a passage
    for look in naive.looks.itertuples():
        up, down = int(np.sum(h[: look.n] > b[: look.n])), int(np.sum(h[: look.n] < b[: look.n]))
        assert look.statistic == pytest.approx((up - down) / math.sqrt(up + down))


def test_the_confidence_sequences_take_one_observation_per_cluster():
    r = compare_sequential(passages(), reader_v1, reader_v2, [exact_match()], cluster="passage")
    assert (r.method, r.verdict, r.stopped_at, r.clusters) == ("betting", "inconclusive", 240, 40)
    b, h = _scores(r)
    means = (h - b).reshape(40, 6).mean(axis=1)  # each passage's mean difference, in the order run
    expected = confidence_sequence(means, alpha=0.05, lower=-1.0, upper=1.0, method="betting").to_frame()
    seq = r.sequence
    assert seq.n.tolist() == list(range(6, 241, 6))  # the paired cases seen at each passage's end
    assert seq[["estimate", "ci_low", "ci_high"]].to_numpy() == pytest.approx(
        expected[["estimate", "ci_low", "ci_high"]].to_numpy())
    # far wider than the sequence of the 240 questions taken one by one
    alone = compare_sequential(passages(), reader_v1, reader_v2, [exact_match()])
    assert r.to_frame().ci_high[0] - r.to_frame().ci_low[0] > 2 * (alone.to_frame().ci_high[0] - alone.to_frame().ci_low[0])


@metric("quality")
def quality(output, case):
    return float(output)


def _side(key):
    return lambda question, case: str(case.metadata[key])


def _clustered_cases(shift, groups=40, size=4, seed=6):
    """Graded scores of ``groups`` clusters of ``size`` cases: head - base = shift + a cluster effect + noise."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0, 0.2, groups)
    data = []
    for i in range(groups * size):
        base = round(float(rng.uniform(0.3, 0.7)), 3)
        head = round(base + shift + effects[i // size] + float(rng.normal(0, 0.1)), 3)
        data.append(Case(f"q{i}", metadata={"doc": f"d{i // size}", "base": base, "head": head}))
    return data


def test_a_graded_metric_uses_the_clustered_t_mapped_to_z_and_batches_of_whole_clusters():
    data = _clustered_cases(0.1)
    r = compare_sequential(data, _side("base"), _side("head"), [quality], method="group", effect=0.1, batch_size=10,
                           cluster="doc")
    assert r.verdict == "better" and r.stopped_at % 4 == 0
    b, h = (np.array([x.scores["quality"].value for x in side.results]) for side in (r.base, r.head))
    docs = [x.case.metadata["doc"] for x in r.base.results]
    # whole clusters of 4; the first look after the pilot: batch_size cases, but at least 20 whole clusters
    assert r.looks.n.tolist() == [80, 88, 100]
    for look in r.looks.itertuples():
        t = clustered_t_test(h[: look.n], b[: look.n], docs[: look.n])  # R clubSandwich::coef_test(..., "CR2")
        one_sided = stats.t.sf(abs(t.statistic), t.df)  # its tail probability back to z, as for the paired t
        assert look.statistic == pytest.approx(np.sign(t.statistic) * stats.norm.isf(one_sided), rel=1e-9)
    # the confidence sequences: batches of whole clusters holding at least batch_size cases (12 here)
    cs = compare_sequential(_clustered_cases(0.8), _side("base"), _side("head"), [quality], bounds={"quality": (-1, 2)},
                            batch_size=10, cluster="doc")
    assert cs.verdict == "better" and cs.stopped_at % 12 == 0 and cs.stopped_at < 160


def test_one_case_per_cluster_is_exactly_the_unclustered_comparison():
    for method, effect in (("group", 0.1), ("auto", None)):
        alone = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], method=method,
                                   effect=effect, margin=0.1)
        singles = compare_sequential(questions(), assistant_v1, assistant_v2, [exact_match()], method=method,
                                     effect=effect, margin=0.1, cluster=lambda case: case.input)
        assert (singles.verdict, singles.stopped_at, singles.clusters) == (alone.verdict, alone.stopped_at,
                                                                           alone.stopped_at)
        assert singles.looks.equals(alone.looks) and singles.sequence.equals(alone.sequence)
        assert singles.comparison.metrics["exact_match"].test == alone.comparison.metrics["exact_match"].test


def test_max_cases_takes_whole_clusters():
    r = compare_sequential(passages(), reader_v1, reader_v2, [exact_match()], method="group", effect=0.1,
                           cluster="passage", max_cases=100)
    assert (r.stopped_at, r.clusters) == (96, 16)  # 16 whole passages of 6 fit in 100 cases
    with pytest.raises(InputError) as error:
        compare_sequential(passages(), reader_v1, reader_v2, [exact_match()], cluster="passage", max_cases=5)
    first = list(dict.fromkeys(c.metadata["passage"] for c in passages()))[np.random.default_rng(0).permutation(40)[0]]
    assert str(error.value) == (f"max_cases=5 holds no whole cluster: the first cluster in the seeded order "
                                f"({first!r}) has 6 cases, and a cluster runs whole; give max_cases >= 6")


def test_a_case_without_a_cluster_is_an_error_naming_it_before_anything_runs():
    calls = []

    def target(question):
        calls.append(question)
        return "a"

    data = [Case(f"q{i}", expected="a", metadata={"passage": i // 3} if i != 4 else {"topic": "x"}) for i in range(12)]
    with pytest.raises(InputError) as error:
        compare_sequential(data, target, target, [exact_match()], cluster="passage")
    assert str(error.value) == (f"cluster='passage': case 'q4' (case key {data[4].key[:12]}) has no metadata field "
                                "'passage' (its fields: topic); every case needs a cluster (give a case with no "
                                "group a cluster of its own)")
    with pytest.raises(InputError) as error:
        compare_sequential(data, target, target, [exact_match()], method="group", effect=0.1,
                           cluster=lambda case: (case.metadata or {}).get("passage"))
    assert str(error.value) == (f"cluster=test_a_case_without_a_cluster_is_an_error_naming_it_before_anything_runs."
                                f"<locals>.<lambda>: the function gave None for case 'q4' (case key "
                                f"{data[4].key[:12]}); every case needs a cluster (give a case with no group a "
                                "cluster of its own)")
    with pytest.raises(InputError, match="cluster must be a case-metadata field name"):
        compare_sequential(data, target, target, [exact_match()], cluster=3)
    assert calls == []


# The simulated clustered null: 60 passages × 5 questions, the passages in random order; no true difference, but each
# passage moves head against base by its own amount (ICC 0.3 of the differences).
GROUPS, SIZE, ICC = 60, 5, 0.3
CODES = np.repeat(np.arange(GROUPS), SIZE)


def _graded_null(rng):
    d = rng.normal(0, math.sqrt(ICC), GROUPS)[CODES] + rng.normal(0, math.sqrt(1 - ICC), GROUPS * SIZE)
    return np.zeros(GROUPS * SIZE), d


def _pass_fail_null(rng):
    # each passage's chances of success drawn for base and head alike (Beta with mean 0.6 and ICC 0.3): each
    # passage flips one way or the other as a whole, with no difference on average
    a, b = 0.6 * (1 / ICC - 1), 0.4 * (1 / ICC - 1)
    chances = rng.beta(a, b, (2, GROUPS))[:, CODES]
    return (rng.random((2, GROUPS * SIZE)) < chances).astype(float)


def _rule(scores, effect, clustered):
    """compare_sequential(method="group")'s rule on one metric's simulated scores, with or without the passages."""
    base, head = scores
    ends = _ends(CODES, len(base)) if clustered else None
    rule = _group_looks(DESIGN, [_Planned("m", True, effect, 0.0)], len(base), 20, 0.05, ends)
    target = next(rule)
    while True:
        sample = PairedSample(base[:target], head[:target], CODES[:target] if clustered else None)
        try:
            target = rule.send({"m": sample})
        except StopIteration as stopped:
            return stopped.value[0].get("m", ("inconclusive", math.nan))[0]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("kind", "effect", "reps"), [("graded", 0.25, 1000), ("pass/fail", 0.15, 1000)])
def test_a_clustered_null_keeps_alpha_only_when_clustered(kind, effect, reps):
    # The rule of compare_sequential(method="group", effect=...) with its defaults, with and without the passages
    # (a pilot of 20 cases; clustered, at least 20 whole passages). Here (seed 1): graded type-I 25.0% naive (300
    # replications), 4.9% clustered (1,000); pass/fail 16.3% and 3.5%. With 2,000 replications each: graded 5.35%
    # clustered; pass/fail 18.7% naive and 2.95% clustered. The graded effect 0.25 plans a maximum of about 350
    # cases; at effect 0.3 (a maximum of about 250 of the 300 cases, the pilot 40% of it) the clustered rate was
    # 6.1% (3,000 replications), as the unclustered rule's is 5.3% when its pilot is that share of its maximum
    # (docs/sequential.md, "Clustered cases"). The clustered bound allows 3 Monte-Carlo standard errors above
    # alpha; the naive rate must be at least twice alpha.
    draw = _graded_null if kind == "graded" else _pass_fail_null
    rejected = {}
    for clustered, replications in ((False, 300), (True, reps)):
        rng = np.random.default_rng(1)
        verdicts = np.array([_rule(draw(rng), effect, clustered) for _ in range(replications)])
        rejected[clustered] = float(np.isin(verdicts, ["better", "worse"]).mean())
    assert rejected[True] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert rejected[False] >= 0.10
