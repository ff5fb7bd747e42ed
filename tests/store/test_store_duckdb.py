"""A store's Parquet tables answer questions across runs in one DuckDB query (docs/run-files.md).

The expected answer is computed here with pandas from the scores as they were made, not from the files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, RunStore


@pytest.mark.slow
def test_mean_exact_match_by_week_and_model_over_1000_runs_in_one_query(tmp_path):
    import duckdb
    store, rng, made = RunStore(tmp_path / "runs"), np.random.default_rng(0), []
    for i in range(1000):
        model, day, hour = ("small", "large")[i % 2], 1 + i % 28, i % 10
        scores = rng.integers(0, 2, 5).astype(float)
        store.save(EvalRun.from_frame(
            pd.DataFrame({"input": [f"q{j}" for j in range(5)], "exact_match": scores}), name="nightly",
            metadata={"model": model, "note": {"nested": i}}, started_at=f"2026-02-{day:02d}T{hour:02d}:00:00Z",
            run_id=f"202602{day:02d}T{hour:02d}0000000Z-{i:08x}"))
        made += [{"started": pd.Timestamp(f"2026-02-{day:02d}T{hour:02d}:00:00Z"), "model": model, "score": s}
                 for s in scores]
    scores_file = store.to_parquet(tmp_path / "scores.parquet")
    runs_file = store.to_parquet(tmp_path / "runs.parquet", table="runs")

    answer = duckdb.sql(f"""
        SELECT date_trunc('week', r.started_at) AS week, r.metadata->>'model' AS model,
               avg(s.score) AS exact_match, count(DISTINCT run_id) AS runs
        FROM '{scores_file}' s JOIN '{runs_file}' r USING (run_id)
        WHERE s.metric = 'exact_match'
        GROUP BY ALL ORDER BY ALL""").df()

    made = pd.DataFrame(made)
    made["week"] = made["started"].dt.tz_localize(None).dt.to_period("W-SUN").dt.start_time
    expected = made.groupby(["week", "model"]).agg(exact_match=("score", "mean"), n=("score", "size")).reset_index()
    assert [pd.Timestamp(w).tz_localize(None) for w in answer["week"]] == list(expected["week"])
    assert list(answer["model"]) == list(expected["model"])
    np.testing.assert_allclose(answer["exact_match"], expected["exact_match"], rtol=1e-12)
    assert list(answer["runs"]) == list(expected["n"] // 5) and answer["runs"].sum() == 1000


def test_the_runs_table_has_one_row_per_run_with_timestamps_and_metadata_as_json(tmp_path):
    store = RunStore(tmp_path)
    frame = pd.DataFrame({"input": ["a"], "exact_match": [1.0]})
    store.save(EvalRun.from_frame(frame, name="v1", metadata={"model": "m", "café": [1, 2]},
                                  started_at="2026-02-01T10:00:00Z", run_id="20260201T100000000Z-00000001"))
    table = store.runs_table()
    assert list(table.columns) == ["run_id", "name", "started_at", "finished_at", "cases", "metadata"]
    assert table.loc[0, "run_id"] == "20260201T100000000Z-00000001" and table.loc[0, "cases"] == 1
    assert table.loc[0, "started_at"] == pd.Timestamp("2026-02-01T10:00:00Z")
    assert table.loc[0, "metadata"] == '{"model": "m", "café": [1, 2]}'
    back = pd.read_parquet(store.to_parquet(tmp_path / "runs.parquet", table="runs"))
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
