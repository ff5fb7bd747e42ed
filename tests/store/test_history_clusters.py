"""RunStore.history(cluster=), RunStore.plot(cluster=) and plot_history(cluster=): each run's clustered interval."""

from __future__ import annotations

import math

import clustered_runs as fixtures  # the run of 14 cases in 6 passages and its clubSandwich interval
import pytest

from cogeval import Case, RunStore
from cogeval.errors import InputError


def passage(case):
    return case.metadata["passage"]


@pytest.fixture
def store(tmp_path):
    store = RunStore(tmp_path)
    store.save(fixtures.clustered_run(day=2))
    store.save(fixtures.clustered_run(day=1, passages=[f"c{i}" for i in range(14)], name="singletons"))
    return store


def test_history_gives_each_run_its_clustered_interval_and_g(store):
    table = store.history("quality", cluster="passage")
    assert table["name"].tolist() == ["singletons", "nightly"]  # oldest first
    assert table["interval"].tolist() == ["clustered-t"] * 2 and table["clusters"].tolist() == [14, 6]
    assert tuple(table.loc[1, ["ci_low", "ci_high"]]) == pytest.approx(fixtures.R_CI_95, rel=1e-9)
    assert table.columns[-1] == "clusters" and str(table["clusters"].dtype) == "Int64"
    nightly = store.history("quality", "nightly", cluster=lambda case: case.metadata["passage"], confidence=0.9)
    assert len(nightly) == 1 and tuple(nightly.loc[0, ["ci_low", "ci_high"]]) == pytest.approx(fixtures.R_CI_90, rel=1e-9)
    plain = store.history("quality")
    assert plain["clusters"].isna().all() and plain["interval"].tolist() == ["bootstrap"] * 2


def test_history_names_the_case_without_the_field(store):
    with pytest.raises(InputError) as error:
        store.history("quality", cluster="doc")
    key = Case("q0").key
    assert str(error.value) == (f"cluster='doc': case 'q0' (case key {key[:12]}) has no metadata field 'doc' (its "
                                "fields: passage); every case needs a cluster (give a case with no group a cluster of "
                                "its own)")


def test_plot_history_draws_the_clustered_interval_and_says_so(store):
    from cogeval.present.plots import plot_history

    fig = plot_history(store, "quality", cluster="passage")
    table = store.history("quality", cluster="passage")
    for trace in fig.data:
        row = table[table["name"] == trace.name].iloc[0]
        y = trace.y[0]
        assert y == pytest.approx(row["score"])
        assert (y - trace.error_y.arrayminus[0], y + trace.error_y.array[0]) == pytest.approx((row["ci_low"], row["ci_high"]))
        assert trace.customdata[0][5] == f", clustered by passage, {row['clusters']} clusters"
        assert "%{customdata[5]}" in trace.hovertemplate
    nightly = next(t for t in fig.data if t.name == "nightly")
    low, high = fixtures.R_CI_95
    assert nightly.y[0] - nightly.error_y.arrayminus[0] == pytest.approx(low, rel=1e-9)
    assert nightly.y[0] + nightly.error_y.array[0] == pytest.approx(high, rel=1e-9)
    assert "clustered t interval by passage" in fig.layout.title.text
    # without cluster= the hover says nothing of clusters; store.plot reaches the same chart
    assert all(t.customdata[0][5] == "" for t in plot_history(store, "quality").data)
    by_function = store.plot("quality", cluster=passage)  # a function is named by its name
    assert [t.customdata[0][5] for t in by_function.data] == [t.customdata[0][5] for t in fig.data]
    assert [t.error_y.array[0] for t in by_function.data] == pytest.approx([t.error_y.array[0] for t in fig.data])
    assert by_function.layout.title.text == fig.layout.title.text


def test_one_cluster_draws_no_interval_and_says_one_cluster(tmp_path):
    from cogeval.present.plots import plot_history

    store = RunStore(tmp_path)
    store.save(fixtures.clustered_run(passages=["same"] * 14))
    with pytest.warns(UserWarning, match="at least 2 clusters; got 1"):
        fig = plot_history(store, "quality", cluster="passage")
    (trace,) = fig.data
    assert trace.customdata[0][5] == ", clustered by passage, 1 cluster"
    assert math.isnan(trace.customdata[0][2]) and math.isnan(trace.customdata[0][3])
