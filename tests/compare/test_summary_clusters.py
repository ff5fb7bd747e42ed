"""A run's metric with its clustered interval (``cluster=``): the one rule's clustered branch, checked by hand and by R."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from clustered_runs import PASSAGES, R_CI_90, R_CI_95, R_DF, R_SE, TRIALS, VALUES, clustered_run, cr2_by_hand
from scipy import stats

from cogeval import Case, EvalRun
from cogeval.compare.summary import HISTORY_COLUMNS, history_frame, metric_summary, summarise
from cogeval.errors import InputError


def test_the_fixture_has_the_values_r_was_given():
    assert [sum(t) / 2 if i != 3 else t[0] / 2 for i, t in enumerate(TRIALS)] == pytest.approx(VALUES, abs=1e-15)
    assert cr2_by_hand(VALUES, PASSAGES) == pytest.approx(R_SE, rel=1e-12)


def test_a_runs_clustered_interval_is_clubsandwichs_cr2_interval():
    s = metric_summary(clustered_run(), "quality", cluster="passage")
    assert (s.n, s.clusters, s.interval) == (14, 6, "clustered-t")
    assert s.score == pytest.approx(np.mean(VALUES), rel=1e-12)
    assert s.ci == pytest.approx(R_CI_95, rel=1e-9)
    # the same interval from the numpy SE and the df R reports: mean ± t(df)·SE
    half = stats.t.ppf(0.975, R_DF) * cr2_by_hand(VALUES, PASSAGES)
    assert s.ci == pytest.approx((np.mean(VALUES) - half, np.mean(VALUES) + half), rel=1e-9)
    assert metric_summary(clustered_run(), "quality", cluster="passage", confidence=0.9).ci == pytest.approx(R_CI_90, rel=1e-9)
    assert list(s.to_frame().columns) == ["metric", "score", "n", "ci_low", "ci_high", "interval", "confidence", "clusters"]


def test_a_function_of_the_case_clusters_as_its_field_does():
    by_field = metric_summary(clustered_run(), "quality", cluster="passage")

    def passage(case: Case) -> str:
        return case.metadata["passage"]

    assert metric_summary(clustered_run(), "quality", cluster=passage) == by_field
    # a coarser grouping by a function: three clusters, the passages' numbers 1-2, 3-4, 5-6
    coarse = metric_summary(clustered_run(), "quality", cluster=lambda case: (int(case.metadata["passage"][1]) + 1) // 2)
    assert coarse.clusters == 3
    by_hand = summarise("quality", VALUES, clusters=[(int(p[1]) + 1) // 2 for p in PASSAGES])
    assert (coarse.n, coarse.interval) == (by_hand.n, by_hand.interval) and coarse.ci == pytest.approx(by_hand.ci, rel=1e-12)


def test_a_case_without_the_field_is_an_error_naming_the_case_and_the_field():
    run = EvalRun.from_frame(pd.DataFrame({"input": ["q0", "q1", "q2"], "topic": ["a", "b", None],
                                           "quality": [0.1, 0.5, 0.9]}))
    key = Case("q2").key
    with pytest.raises(InputError) as error:
        metric_summary(run, "quality", cluster="passage")
    assert str(error.value) == (f"cluster='passage': case 'q0' (case key {Case('q0').key[:12]}) has no metadata field "
                                "'passage' (its fields: topic); every case needs a cluster (give a case with no group a "
                                "cluster of its own)")
    with pytest.raises(InputError) as error:
        metric_summary(run, "quality", cluster="topic")
    assert str(error.value) == (f"cluster='topic': case 'q2' (case key {key[:12]}) has no metadata field 'topic' "
                                "(its fields: none); every case needs a cluster (give a case with no group a cluster "
                                "of its own)")
    with pytest.raises(InputError) as error:
        history_frame([run], "quality", cluster=3)
    assert str(error.value) == ("cluster must be a case-metadata field name (e.g. cluster='passage'), a function of "
                                "the case or None; got 3")


def test_one_case_per_cluster_is_the_t_interval():
    alone = metric_summary(clustered_run(passages=[f"c{i}" for i in range(14)]), "quality", cluster="passage")
    sample = np.asarray(VALUES)
    low, high = stats.t.interval(0.95, len(sample) - 1, loc=sample.mean(), scale=stats.sem(sample))
    assert alone.clusters == 14 and alone.interval == "clustered-t"
    assert alone.ci == pytest.approx((low, high), rel=1e-9)


def test_summarise_takes_one_label_per_value_and_leaves_nan_out_with_its_label():
    with_nan = summarise("quality", [*VALUES, math.nan], clusters=[*PASSAGES, "p9"])
    assert (with_nan.n, with_nan.clusters) == (14, 6) and with_nan.ci == pytest.approx(R_CI_95, rel=1e-9)
    tuples = summarise("quality", VALUES, clusters=[(p, 0) for p in PASSAGES])  # any hashable label, a tuple too
    assert tuples.ci == with_nan.ci
    binary = summarise("exact_match", [1, 0, 1, 1], clusters=["a", "a", "b", "b"])
    assert binary.interval == "clustered-t"  # 0/1 values too: the clustered interval, never Wilson's
    constant = summarise("exact_match", [1, 1, 1, 1], clusters=["a", "a", "b", "b"])
    assert constant.ci == (1.0, 1.0) and constant.clusters == 2  # no warning: the test is undefined, the interval is not
    empty = summarise("quality", [], clusters=[])
    assert (empty.n, empty.clusters, empty.interval, math.isnan(empty.ci.low)) == (0, None, None, True)
    with pytest.warns(UserWarning, match="at least 2 clusters; got 1"):
        one = summarise("quality", [0.2, 0.4], clusters=["a", "a"])
    assert one.clusters == 1 and math.isnan(one.ci.low) and math.isnan(one.ci.high) and one.score == pytest.approx(0.3)


def test_summarise_refuses_clusters_it_cannot_use():
    with pytest.raises(InputError) as error:
        summarise("quality", [0.1, 0.2], clusters=["a"])
    assert str(error.value) == "clusters must give one label per value; got 1 labels for 2 values of 'quality'"
    with pytest.raises(InputError) as error:
        summarise("quality", [0.1, 0.2], clusters=["a", "b"], interval="wilson")
    assert str(error.value) == "interval 'wilson' takes no clusters; with clusters the interval is 'clustered-t'"
    with pytest.raises(InputError) as error:
        summarise("quality", [0.1, 0.2], interval="clustered-t")
    assert str(error.value) == "interval 'clustered-t' needs clusters (one label per value); got none for 'quality'"


def test_history_frame_with_clusters_has_g_per_run_and_without_them_na():
    runs = [clustered_run(day=1), clustered_run(day=2, passages=[f"c{i}" for i in range(14)])]
    frame = history_frame(runs, "quality", cluster="passage")
    assert list(frame.columns) == list(HISTORY_COLUMNS) and HISTORY_COLUMNS[-1] == "clusters"
    assert str(frame["clusters"].dtype) == "Int64" and frame["clusters"].tolist() == [6, 14]
    assert frame["interval"].tolist() == ["clustered-t", "clustered-t"] and frame["n"].tolist() == [14, 14]
    assert (frame.loc[0, "ci_low"], frame.loc[0, "ci_high"]) == pytest.approx(R_CI_95, rel=1e-9)
    plain = history_frame(runs, "quality")
    assert str(plain["clusters"].dtype) == "Int64" and plain["clusters"].isna().all()
    assert plain["interval"].tolist() == ["bootstrap", "bootstrap"]


def test_history_frame_a_run_without_the_metric_has_na_clusters_and_needs_no_field():
    other = EvalRun.from_frame(pd.DataFrame({"input": ["a", "b"], "latency_ok": [1, 0]}), started_at="2026-01-05T08:00:00Z")
    frame = history_frame([clustered_run(), other], "quality", cluster="passage")
    assert frame["clusters"].tolist()[0] == 6 and frame["clusters"].isna().tolist() == [False, True]
    assert frame.loc[1, "n"] == 0 and frame.loc[1, "interval"] is None and math.isnan(frame.loc[1, "ci_low"])
