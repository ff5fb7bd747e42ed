"""compare_runs on runs built from tables, by hand, by suites and from files, against independent statistics."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from cogeval import (
    Case,
    EvalRun,
    EvalSuite,
    TargetResponse,
    compare_runs,
    cost,
    exact_match,
    latency,
    load_run,
    token_usage,
)
from cogeval.compare.runs import as_run, run_warnings, score_frame
from cogeval.errors import InputError

RNG = np.random.default_rng(20261022)
N = 30
INPUTS = [f"question {i}" for i in range(N)]
BASE_QUALITY = np.round(RNG.uniform(0.2, 0.8, N), 3)
HEAD_QUALITY = np.round(BASE_QUALITY + RNG.normal(0.08, 0.1, N), 3)
# exact_match: b = 3 cases base right & head wrong, c = 11 cases base wrong & head right, the rest agree
BASE_EXACT = np.array([1] * 3 + [0] * 11 + [1] * 8 + [0] * 8, dtype=float)
HEAD_EXACT = np.array([0] * 3 + [1] * 11 + [1] * 8 + [0] * 8, dtype=float)


def quality_warnings(comparison):
    """The warnings, without the sample-size ones (tests/compare/test_verdicts.py checks those)."""
    return [w for w in comparison.warnings if not w.startswith("Fewer than")]


def table_run(quality, exact, *, name, started_at="2026-01-01T00:00:00Z", inputs=INPUTS, **columns):
    frame = pd.DataFrame({"input": inputs, "quality": quality, "exact_match": exact, **columns})
    return EvalRun.from_frame(frame, name=name, started_at=started_at, directions={"quality": True, "exact_match": True})


@pytest.fixture(scope="module")
def pair():
    base = table_run(BASE_QUALITY, BASE_EXACT, name="base")
    head = table_run(HEAD_QUALITY, HEAD_EXACT, name="head", started_at="2026-01-02T00:00:00Z")
    return base, head


def test_numbers_match_scipy_and_statsmodels(pair):
    base, head = pair
    c = compare_runs(base, head, seed=7)
    quality, exact = c.metrics["quality"], c.metrics["exact_match"]

    d = HEAD_QUALITY - BASE_QUALITY
    t_p = sps.ttest_rel(HEAD_QUALITY, BASE_QUALITY).pvalue
    m_p = mcnemar([[8, 3], [11, 8]], exact=True).pvalue  # [[both right, base only], [head only, both wrong]]
    holm = multipletests([t_p, m_p], method="holm")[1]

    assert (quality.test, quality.n) == ("t", N)
    assert quality.base == pytest.approx(BASE_QUALITY.mean()) and quality.head == pytest.approx(HEAD_QUALITY.mean())
    assert quality.difference == pytest.approx(d.mean())
    assert quality.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert quality.p_value == pytest.approx(t_p, rel=1e-9)
    assert quality.adjusted_p_value == pytest.approx(holm[0], rel=1e-9)
    assert quality.ci.low < d.mean() < quality.ci.high
    assert quality.n_improved == int((d > 1e-9).sum()) and quality.n_regressed == int((d < -1e-9).sum())

    assert (exact.test, exact.n) == ("mcnemar-exact", N)
    assert exact.p_value == pytest.approx(m_p, rel=1e-12)
    assert exact.p_value == pytest.approx(2 * sps.binom.cdf(3, 14, 0.5), rel=1e-12)
    assert exact.adjusted_p_value == pytest.approx(holm[1], rel=1e-9)
    assert (exact.n_improved, exact.n_regressed) == (11, 3)
    # issue 14: improved / regressed are that metric's rows of changes, largest move first
    assert exact.improved.equals(c.changes[(c.changes["metric"] == "exact_match") & (c.changes["direction"] == "improved")])
    assert len(exact.regressed) == 3 and set(exact.regressed["delta"]) == {-1.0}
    moves = quality.improved["delta"].abs().tolist()
    assert len(moves) == quality.n_improved and moves == sorted(moves, reverse=True)
    assert exact.difference == pytest.approx(8 / 30)

    # quality: adjusted p ≈ 0.0082 < 0.05; exact_match: adjusted p ≈ 0.0574 (Holm: max(2·0.0041, 0.0574))
    assert (quality.significant, quality.winner) == (True, "head")
    assert (exact.significant, exact.winner) == (False, "tie")
    assert c.winner == "head"
    assert (c.base.name, c.head.name, c.base.run_id) == ("base", "head", base.run_id)
    assert (c.matched, c.n_added, c.n_removed) == (N, 0, 0)
    assert quality_warnings(c) == []


def test_same_seed_same_interval(pair):
    a = compare_runs(*pair, seed=3).metrics["quality"].ci
    b = compare_runs(*pair, seed=3).metrics["quality"].ci
    assert a == b


def test_wilcoxon_matches_scipy(pair):
    c = compare_runs(*pair, test="wilcoxon", seed=0)
    # The scores have 3 decimals: in exact thousandths two |d| tie (in floats they differ in the last bit), so
    # the noise floor keeps the tie and the test is the normal approximation, as R on the exact values.
    thousandths = np.round((HEAD_QUALITY - BASE_QUALITY) * 1000).astype(int)
    assert len(np.unique(np.abs(thousandths))) == N - 1 and (thousandths != 0).all()
    assert c.metrics["quality"].test == "wilcoxon"
    reference = sps.wilcoxon(thousandths, zero_method="wilcox", correction=True, method="approx").pvalue
    assert c.metrics["quality"].p_value == pytest.approx(reference, rel=1e-9)


def test_large_mcnemar_uses_corrected_chi_square():
    base_exact = np.array([1] * 5 + [0] * 25, dtype=float)  # b = 5, c = 25: b + c >= 25
    head_exact = np.array([0] * 5 + [1] * 25, dtype=float)
    c = compare_runs(table_run(BASE_QUALITY, base_exact, name="b"), table_run(BASE_QUALITY, head_exact, name="h"),
                     metrics=["exact_match"], seed=0)
    m = c.metrics["exact_match"]
    assert m.test == "mcnemar"
    assert m.p_value == pytest.approx(mcnemar([[0, 5], [25, 0]], exact=False, correction=True).pvalue, rel=1e-12)
    assert m.adjusted_p_value == m.p_value  # one metric compared: Holm changes nothing
    assert list(c.metrics) == ["exact_match"]


def test_added_removed_and_repeated_cases():
    # base: q0 q1 q1 q2 q3; head: q0 q1 q1 q1 q2 q4 → pairs q0, q1#0, q1#1, q2; head adds q1#2 and q4; base removes q3
    base = EvalRun.from_frame(pd.DataFrame({
        "input": ["q0", "q1", "q1", "q2", "q3"], "occurrence": [0, 0, 1, 0, 0], "quality": [0.1, 0.2, 0.3, 0.4, 0.5]}),
        directions={"quality": True})
    head = EvalRun.from_frame(pd.DataFrame({
        "input": ["q0", "q1", "q1", "q1", "q2", "q4"], "occurrence": [0, 0, 1, 2, 0, 0],
        "quality": [0.2, 0.5, 0.3, 0.9, 0.6, 0.9]}), directions={"quality": True})
    c = compare_runs(base, head, seed=0)
    q = c.metrics["quality"]
    b, h = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.2, 0.5, 0.3, 0.6])
    assert (c.matched, c.n_added, c.n_removed, q.n) == (4, 2, 1, 4)
    assert c.added[["case_key", "occurrence", "input"]].values.tolist() == [[Case("q1").key, 2, "q1"], [Case("q4").key, 0, "q4"]]
    assert c.removed[["case_key", "input"]].values.tolist() == [[Case("q3").key, "q3"]]
    assert q.base == pytest.approx(b.mean()) and q.head == pytest.approx(h.mean())
    assert q.p_value == pytest.approx(sps.ttest_rel(h, b).pvalue, rel=1e-9)
    assert quality_warnings(c) == [
        "The runs used different datasets (fingerprints differ): the head run has 2 case(s) the base run lacks, "
        "and the base run has 1 case(s) the head run lacks"]
    changes = c.changes
    assert changes["input"].tolist() == ["q1", "q2", "q0"]  # largest change first; q1#1 did not move
    assert changes["occurrence"].tolist() == [0, 0, 0]
    assert changes["delta"].tolist() == pytest.approx([0.3, 0.2, 0.1])


def test_errors_count_zero_and_both_errored_cases_are_left_out():
    frame = pd.DataFrame({"input": ["a", "b", "c", "d", "e", "f"], "exact_match": [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]})
    base = EvalRun.from_frame(frame.assign(error=[None, "boom", None, None, "boom", None]))
    head = EvalRun.from_frame(frame.assign(exact_match=[1.0, 1.0, 0.0, 1.0, None, 1.0],
                                           error=["timeout", None, None, None, "boom", None]))
    m = compare_runs(base, head, seed=0).metrics["exact_match"]
    # a: head failed → 0 (base 1); b: base failed → 0 (head 1); e: both failed → out
    b = np.array([1, 0, 1, 0, 0], dtype=float)
    h = np.array([0, 1, 0, 1, 1], dtype=float)
    assert m.n == 5
    assert (m.base, m.head) == pytest.approx((b.mean(), h.mean()))
    assert m.p_value == pytest.approx(mcnemar([[0, 2], [3, 0]], exact=True).pvalue)


def test_a_failed_case_written_without_scores_is_paired_not_taken_for_added():
    # another implementation may write a failed case as {"error": ..., "scores": []}
    def hand(run_id, scores, errors):
        return EvalRun.model_validate({
            "runId": run_id, "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:00Z",
            "results": [{"caseKey": f"k{i}", "case": {"input": f"q{i}"}, "error": e,
                         "scores": [] if e else [{"metric": "m", "score": s}]}
                        for i, (s, e) in enumerate(zip(scores, errors))]})

    base = hand("20260101T000000000Z-00000001", [1, 0, 0, 1, 0, 0], [None, None, "boom", None, "boom", None])
    head = hand("20260101T000000000Z-00000002", [1, 1, 1, 1, 0, 1], [None, None, None, None, "boom", None])
    c = compare_runs(base, head, seed=0)
    m = c.metrics["m"]
    # k2: base failed → 0 against head 1; k4: both failed → left out. 5 pairs, b = 0, c = 3: binom.test(0, 3)
    assert (c.matched, c.n_added, c.n_removed, m.n) == (6, 0, 0, 5)
    assert (m.base, m.head) == pytest.approx((0.4, 1.0))
    assert m.p_value == pytest.approx(2 * sps.binom.cdf(0, 3, 0.5))


def test_a_hand_written_run_without_metric_config_compares_higher_is_better():
    def hand(run_id, scores):
        return EvalRun.model_validate({
            "run_id": run_id, "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:00Z",
            "results": [{"case_key": f"k{i}", "case": {"input": f"q{i}"}, "scores": [{"metric": "helpful", "score": s}]}
                        for i, s in enumerate(scores)]})

    base = hand("20260101T000000000Z-00000001", [0.1, 0.2, 0.3, 0.2, 0.1, 0.3])
    head = hand("20260101T000000000Z-00000002", [0.9, 0.8, 0.9, 0.7, 0.9, 0.8])
    m = compare_runs(base, head, seed=0).metrics["helpful"]
    assert m.higher_is_better is True and m.winner == "head" and m.test == "t"


def test_hand_written_repeated_cases_without_occurrence_pair_copy_by_copy():
    # q0 is run twice; the files leave out occurrence (only caseKey and case are required).
    def hand(run_id, scores):
        keys = ["k0", "k1", "k0", "k2"]
        return EvalRun.model_validate({
            "runId": run_id, "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:00Z",
            "results": [{"caseKey": k, "case": {"input": k}, "scores": [{"metric": "m", "score": s}]}
                        for k, s in zip(keys, scores)]})

    c = compare_runs(hand("20260101T000000000Z-00000001", [1, 0, 0, 1]),
                     hand("20260101T000000000Z-00000002", [1, 1, 1, 1]), seed=0)
    m = c.metrics["m"]
    # 4 pairs, b = 0, c = 2 (k1 and the second k0): R binom.test(0, 2) gives p = 0.5
    assert (c.matched, m.n, m.test) == (4, 4, "mcnemar-exact")
    assert m.p_value == pytest.approx(2 * sps.binom.cdf(0, 2, 0.5))
    assert (m.base, m.head, m.n_improved) == (0.5, 1.0, 2)


# -- latency, cost and tokens from suite runs -------------------------------------------------------------


def slow_target(question):
    time.sleep(0.2)  # far above thread start-up, even on a loaded machine
    return TargetResponse(question, usage={"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.002})


def fast_target(question):
    return TargetResponse(question if question != "q3" else "?", usage={"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.001})


@pytest.fixture(scope="module")
def suite_runs():
    data = [{"input": f"q{i}", "expected": f"q{i}"} for i in range(8)]
    kw = dict(metrics=[exact_match()], statistical_metrics=[latency(), cost(), token_usage()], progress=False, concurrency=8)
    return EvalSuite(data, slow_target, name="slow", **kw).run(), EvalSuite(data, fast_target, name="fast", **kw).run()


def test_latency_is_compared_case_by_case_lower_is_better(suite_runs):
    base, head = suite_runs
    c = compare_runs(base, head, seed=0)
    m = c.metrics["latency"]
    b, h = base.results_frame["duration_s"].to_numpy(), head.results_frame["duration_s"].to_numpy()
    assert (m.test, m.n, m.higher_is_better) == ("t", 8, False)
    assert m.base == pytest.approx(b.mean()) and m.head == pytest.approx(h.mean())
    assert m.p_value == pytest.approx(sps.ttest_rel(h, b).pvalue, rel=1e-9)
    assert m.difference < 0 and m.significant and m.winner == "head"  # head is faster: head wins
    assert m.n_improved == 8 and m.n_regressed == 0


def test_cost_and_tokens_per_case(suite_runs):
    base, head = suite_runs
    c = compare_runs(base, head, seed=0)
    assert (c.metrics["cost"].base, c.metrics["cost"].head) == pytest.approx((0.002, 0.001))
    assert (c.metrics["token_usage"].base, c.metrics["token_usage"].head) == (15.0, 12.0)
    assert c.metrics["cost"].n_improved == 8 and c.metrics["token_usage"].n_improved == 8
    assert c.metrics["exact_match"].n_regressed == 1
    scores = score_frame(base.to_run())
    assert scores.groupby("metric").size().to_dict() == {"cost": 8, "exact_match": 8, "latency": 8, "token_usage": 8}
    assert not scores["case_error"].any()


def test_suite_results_runs_and_paths_give_the_same_comparison(suite_runs, tmp_path):
    base, head = suite_runs
    from_results = compare_runs(base, head, seed=1)
    from_runs = compare_runs(base.to_run(), head.to_run(), seed=1)
    from_paths = compare_runs(base.save_run(tmp_path), str(head.save_run(tmp_path)), seed=1)
    for other in (from_runs, from_paths):
        pd.testing.assert_frame_equal(from_results.to_frame(), other.to_frame())
        assert quality_warnings(other) == quality_warnings(from_results)
    assert load_run(tmp_path / f"{base.run_id}.json").run_id == from_paths.base.run_id


def test_as_run_refuses_other_things():
    with pytest.raises(InputError) as caught:
        compare_runs(42, "x.json")
    assert str(caught.value) == "base must be an EvalRun, a suite result or a run-file path; got 42"
    with pytest.raises(InputError) as caught:
        as_run([1], "head")
    assert str(caught.value) == "head must be an EvalRun, a suite result or a run-file path; got [1]"


# -- warnings ------------------------------------------------------------------------------------------------


def hand_run(run_id, *, cases=("a", "b", "c"), scores=None, prompt=None, judge=None, metrics=None,
             statistical=(), metadata=None):
    scores = scores or {"quality": [0.5, 0.6, 0.7]}
    results = []
    for i, text in enumerate(cases):
        case = {"input": text} if metadata is None else {"input": text, "metadata": metadata}
        record = {"case_key": Case(text).key, "case": case, "duration": 1000.0,
                  "scores": [{"metric": m, "score": values[i]} for m, values in scores.items()]}
        if prompt is not None:
            record["prompt"] = prompt
        results.append(record)
    return EvalRun.model_validate({
        "run_id": run_id, "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:00Z",
        "config": {"metrics": metrics if metrics is not None else [{"name": m, "higher_is_better": True} for m in scores],
                   "statistical_metrics": list(statistical), "judge": judge},
        "results": results,
    })


B, H = "20260101T000000000Z-0000000b", "20260102T000000000Z-0000000e"


COPY = (f"The base run {B!r} and the head run {H!r} have identical results (every output, score and timing) and "
        "configuration: a run compared with a copy of itself shows no difference")


def test_identical_runs_warn_only_that_they_are_copies():
    assert run_warnings(hand_run(B), hand_run(H)) == [COPY]  # issue 23: a gate must not pass a run against itself


def test_prompt_versions_differ():
    base = hand_run(B, prompt={"key": "support", "version": 1, "version_id": "ver_1"})
    head = hand_run(H, prompt={"key": "support", "version": 2, "version_id": "ver_2"})
    assert quality_warnings(compare_runs(base, head, seed=0)) == [
        "Prompt 'support' differs: the base run used v1 (ver_1), the head run v2 (ver_2)"]


def test_prompt_labels_without_a_version_or_an_id():
    base = hand_run(B, prompt={"key": "support", "version_id": "ver_1"})
    head = hand_run(H, prompt={"key": "support", "version": "beta"})
    assert run_warnings(base, head) == ["Prompt 'support' differs: the base run used ver_1, the head run beta"]
    base = hand_run(B, prompt={"key": "support"})
    assert run_warnings(base, head) == ["Prompt 'support' differs: the base run used no version, the head run beta"]


def test_an_ab_tested_prompt_shows_every_version_it_used():
    base = hand_run(B, prompt={"key": "support", "version": 1, "version_id": "ver_1"})
    head = hand_run(H, prompt={"key": "support", "version": 1, "version_id": "ver_1"})
    head.results[2].prompt = head.results[2].prompt.model_copy(update={"version": 2, "version_id": "ver_2"})
    assert run_warnings(base, head) == [
        "Prompt 'support' differs: the base run used v1 (ver_1), the head run v1 (ver_1) and v2 (ver_2)"]
    assert run_warnings(base, base) == [f"The base and the head run are the same run ({B!r}): a run compared with "
                                        "itself shows no difference; compare it with another run"]


def test_a_prompt_only_one_run_used():
    prompted = hand_run(H, prompt={"key": "support", "version": 1})
    assert run_warnings(hand_run(B), prompted) == ["Prompt 'support' is only in the head run"]
    assert run_warnings(prompted, hand_run(B)) == ["Prompt 'support' is only in the base run"]


def test_judges_differ():
    old = {"model": "judge-a", "temperature": 0.0, "samples": 1}
    new = {"model": "judge-b", "temperature": 0.0, "samples": 3}
    assert run_warnings(hand_run(B, judge=old), hand_run(H, judge=new)) == [
        "The runs used different judges: model 'judge-a' → 'judge-b', samples 1 → 3"]
    assert run_warnings(hand_run(B, judge=old), hand_run(H)) == [
        "Only the base run used an LLM judge; judge-scored metrics may not be comparable"]
    assert run_warnings(hand_run(B), hand_run(H, judge=old)) == [
        "Only the head run used an LLM judge; judge-scored metrics may not be comparable"]
    assert run_warnings(hand_run(B, judge=old), hand_run(H, judge=dict(old))) == [COPY]  # the same judge: no judge warning


def test_only_order_context_or_metadata_changed():
    reordered = hand_run(H, cases=("c", "a", "b"))
    assert quality_warnings(compare_runs(hand_run(B), reordered, seed=0)) == [
        "The runs used different datasets (fingerprints differ) with the same cases: only their order, "
        "context or metadata changed"]
    relabelled = hand_run(H, metadata={"split": "test"})
    assert run_warnings(hand_run(B), relabelled) == [
        "The runs used different datasets (fingerprints differ) with the same cases: only their order, "
        "context or metadata changed"]


def test_a_metric_only_one_run_has():
    base = hand_run(B, scores={"quality": [0.5, 0.6, 0.7], "tone": [1, 0, 1]})
    head = hand_run(H, scores={"quality": [0.5, 0.6, 0.9], "brevity": [0.1, 0.2, 0.3]})
    c = compare_runs(base, head, seed=0)
    assert list(c.metrics) == ["quality"]
    assert quality_warnings(c) == ["Metric 'tone' is only in the base run; it was not compared",
                          "Metric 'brevity' is only in the head run; it was not compared"]


def test_a_requested_metric_a_run_lacks_is_an_error_naming_each_runs_metrics():
    base = hand_run(B, scores={"quality": [0.5, 0.6, 0.7], "tone": [1, 0, 1]})
    head = hand_run(H)
    with pytest.raises(InputError) as caught:
        compare_runs(base, head, metrics=["quality", "tone"])
    assert str(caught.value) == "metric 'tone' is not in the head run (its metrics: quality)"
    with pytest.raises(InputError) as caught:
        compare_runs(base, head, metrics=["speed"])
    assert str(caught.value) == (
        "metric 'speed' is not in the base run (its metrics: quality, tone) nor in the head run (its metrics: quality)")


def test_directions_disagree_and_the_base_direction_is_used():
    cases = tuple("abcdefgh")
    lower = [1.0, 1.1, 1.2, 1.0, 1.3, 1.1, 1.2, 1.0]
    base = hand_run(B, cases=cases, scores={"speed": lower}, metrics=[{"name": "speed", "higher_is_better": False}])
    head = hand_run(H, cases=cases, scores={"speed": [v + 1 for v in lower]},
                    metrics=[{"name": "speed", "higher_is_better": True}])
    c = compare_runs(base, head, seed=0)
    assert quality_warnings(c) == [
        "Metric 'speed' is higher-is-better in the head run only; the base run's direction was used",
        "Metric 'speed': every paired difference is +1, so the t-test has no spread to use; the exact sign test "
        "decides (all 8 cases moved the same way: p = 2^(1 − 8) = 0.0078)"]
    m = c.metrics["speed"]
    assert m.higher_is_better is False and m.n_regressed == 8
    # every difference is exactly +1: the t-test is undefined (DESIGN §4), the sign test is R's binom.test(8, 8)
    assert (m.test, m.p_value, m.verdict) == ("sign", 0.0078125, "worse")


def test_a_run_level_metric_without_per_case_values_is_named():
    tools = {"name": "tool_calls", "higher_is_better": False, "kind": "run"}
    c = compare_runs(hand_run(B, statistical=[tools]), hand_run(H, statistical=[tools]), seed=0)
    assert list(c.metrics) == ["quality"]
    assert quality_warnings(c) == [COPY, "Metric 'tool_calls' is a run-level metric without per-case values; it was not compared"]


def test_latency_of_hand_written_runs_comes_from_durations():
    base = hand_run(B, statistical=[{"name": "latency", "higher_is_better": False, "kind": "run"}])
    scores = score_frame(base)
    latency_rows = scores[scores["metric"] == "latency"]
    assert latency_rows["score"].tolist() == [1.0, 1.0, 1.0]
    assert latency_rows["case_key"].tolist() == [Case(t).key for t in "abc"]


def test_changes_show_the_turns_of_a_multi_turn_case():
    def run(run_id, score):
        return EvalRun.model_validate({
            "run_id": run_id, "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:00Z",
            "config": {"metrics": [{"name": "quality"}]},
            "results": [{"case_key": "k1", "case": {"turns": ["hi", "what is\n2+2?"]},
                         "scores": [{"metric": "quality", "score": score}]}]})

    changes = compare_runs(run(B, 0.2), run(H, 0.9), seed=0).changes
    assert changes["input"].tolist() == ['["hi", "what is\\n2+2?"]']  # JSON text, so still one line


def test_fields_read_as_issue_4_lists_them(pair):
    # base/head are {run_id, name, started_at}; metrics per metric: base, head, n, ..., ci (low, high)
    base, head = pair
    c = compare_runs(base, head, seed=7)
    assert c.base.run_id == c.base["run_id"] == base.run_id
    assert dict(c.head) == {"run_id": head.run_id, "name": "head", "started_at": head.started_at}
    m = c.metrics["quality"]
    assert m["p_value"] == m.p_value and m["ci"].low == m.ci.low == m.ci[0]
    low, high = m["ci"]
    assert (low, high) == (m.ci.low, m.ci.high) and "adjusted_p_value" in m and "nope" not in m
    with pytest.raises(KeyError):
        c.base["nope"]
    assert isinstance(c.matched, int) and c.added.empty and c.n_added == c.n_removed == 0


def test_the_garbage_collector_is_paused_while_comparing_and_back_after_even_on_error(monkeypatch):
    import gc

    import cogeval.compare.runs as runs_module

    seen = []
    real = runs_module.compare_scores
    monkeypatch.setattr(runs_module, "compare_scores", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    run = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "quality": [1.0, 0.0]}))
    compare_runs(run, run)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(InputError):
        compare_runs(run, run, alpha=2)
    assert gc.isenabled()
