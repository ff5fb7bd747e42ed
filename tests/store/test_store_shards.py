"""A store lists a merged run once, not its shards next to it (issue 26 item 2), and writes its tables as
Hive-partitioned Parquet folders that DuckDB and pandas read lazily (item 4).

Expected tables are computed here with pandas from the runs as they were made, not from the files."""

from __future__ import annotations

import urllib.parse

import pandas as pd
import pytest

from cogeval import Case, EvalRun, EvalSuite, InputError, RunStore, exact_match, merge_runs
from cogeval.cli import main
from cogeval.store.index import INDEX_FILE


@pytest.fixture
def store(tmp_path):
    """A store holding a whole run, the three shards of another run, and their merged run."""
    store = RunStore(tmp_path / "runs")
    cases = [Case(f"q{i}", expected=f"Q{i}") for i in range(9)]
    suite = EvalSuite(cases, str.upper, metrics=[exact_match()], progress=False, name="nightly")
    store.save(suite.run())
    shards = [suite.run(shard=(i, 3)).run for i in range(3)]
    for shard in shards:
        store.save(shard)
    store.merged = store.save(merge_runs(shards))  # type: ignore[attr-defined]
    store.shards = shards  # type: ignore[attr-defined]
    return store


def test_the_listing_shows_the_merged_run_once_and_the_shards_only_when_asked(store):
    listed = store.list()
    assert len(listed) == 2 and listed[0]["path"] == str(store.merged)
    assert all("shard" not in summary for summary in listed)
    every = store.list(shards=True)
    marks = sorted(s["shard"]["index"] for s in every if "shard" in s)
    assert len(every) == 5 and marks == [0, 1, 2]
    assert {s["id"]: s["shard"] for s in every if "shard" in s} == {
        run.run_id: {"index": run.shard.index, "count": 3} for run in store.shards}
    assert [run.run_id for run in store.runs()] == [s["id"] for s in listed]
    assert len(store.runs(shards=True)) == 5
    assert store.latest().merged_from == [run.run_id for run in store.shards]
    assert store.latest(shards=True).shard.index == 2  # the last shard started last; the merged run at the first start
    assert len(store.to_frame()) == 2 and len(store.runs_table()) == 2 and store.scores()["run_id"].nunique() == 2


def test_the_index_keeps_the_mark_and_agrees_with_a_listing_from_the_files(store, tmp_path):
    from_index = RunStore(store.path).list(shards=True)
    (store.path / INDEX_FILE).unlink()
    assert RunStore(store.path).list(shards=True) == from_index
    assert [s["id"] for s in RunStore(store.path).list()] == [s["id"] for s in from_index if "shard" not in s]


def test_cogeval_runs_lists_the_merged_run_not_its_shards(store, capsys):
    assert main(["runs", str(store.path), "--wide"]) == 0
    out = capsys.readouterr().out
    assert out.count("nightly") == 2 and all(run.run_id not in out for run in store.shards)


def frame_run(number, day, name, quality):
    return EvalRun.from_frame(pd.DataFrame({"input": ["a", "b", "c"], "quality": quality}), name=name,
                              started_at=f"2026-03-{day:02d}T23:30:0{number}-02:00",  # the UTC day after
                              run_id=f"202603{day + 1:02d}T01300{number}000Z-{number:08x}")


@pytest.fixture
def runs(tmp_path):
    store = RunStore(tmp_path / "runs")
    made = [frame_run(number, day, name, quality) for number, (day, name, quality) in enumerate([
        (1, "nightly v2/α", [1.0, 0.0, 1.0]), (2, None, [0.5, 0.5, 0.0]), (2, "nightly v2/α", [0.0, 0.0, 0.25])])]
    for run in made:
        store.save(run)
    return store, made


@pytest.mark.parametrize(("key", "values"), [
    ("run_id", lambda run: run.run_id),
    ("name", lambda run: run.name),
    ("day", lambda run: pd.Timestamp(run.started_at).tz_convert("UTC").date().isoformat()),
])
def test_a_partitioned_table_is_one_file_per_run_in_hive_folders_that_duckdb_reads(runs, tmp_path, key, values):
    import duckdb

    store, made = runs
    folder = store.to_parquet(tmp_path / "scores", partition_by=key)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet"))
    expected = sorted(f"{key}={'__HIVE_DEFAULT_PARTITION__' if values(r) is None else urllib.parse.quote(values(r), safe='')}"
                      f"/{r.run_id}.parquet" for r in made)
    assert files == expected
    answer = duckdb.sql(f"SELECT {key}, run_id, case_key, score FROM read_parquet('{folder}/*/*.parquet', "
                        f"hive_partitioning = true) ORDER BY run_id, case_key").df()
    rows = sorted((r.run_id, s.case_key, s.score, values(r)) for r in made for s in r.scores.itertuples())
    read = [None if pd.isna(v) else str(v)[:10] if key == "day" else v for v in answer[key]]  # day: a DATE in DuckDB
    assert list(zip(answer["run_id"], answer["case_key"], answer["score"], read)) == rows


def test_pandas_reads_a_partitioned_folder_as_the_stores_scores(runs, tmp_path):
    store, _ = runs
    folder = store.to_parquet(tmp_path / "scores", partition_by="run_id")
    back = pd.read_parquet(folder).astype({"run_id": object})
    columns = ["run_id", "case_key", "occurrence", "trial", "metric", "score", "error"]
    expected = store.scores().sort_values(["run_id", "case_key"]).reset_index(drop=True)
    got = back[columns].sort_values(["run_id", "case_key"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected[columns], check_dtype=False)


def test_the_runs_table_partitions_too_and_a_filter_applies(runs, tmp_path):
    store, made = runs
    folder = store.to_parquet(tmp_path / "runs-table", {"name": "nightly v2/α"}, table="runs", partition_by="day")
    back = pd.read_parquet(folder)
    assert sorted(back["run_id"]) == [made[0].run_id, made[2].run_id]
    assert sorted(back["day"].astype(str)) == ["2026-03-02", "2026-03-03"]


def test_a_partitioned_folder_is_replaced_whole_but_never_a_folder_of_other_files(runs, tmp_path):
    store, made = runs
    folder = store.to_parquet(tmp_path / "scores", partition_by="run_id")
    store.to_parquet(folder, {"name": None}, partition_by="run_id")  # written again: only what is asked now
    assert [p.parent.name for p in folder.rglob("*.parquet")] == [f"run_id={made[1].run_id}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs", "scores"]  # nothing left beside it
    with pytest.raises(InputError) as refused:
        store.to_parquet(store.path, partition_by="name")
    assert str(refused.value) == (f"path {str(store.path)!r} holds other files than a partitioned table; give a new "
                                  "folder, or one to_parquet(partition_by=...) wrote before (it is replaced)")
    with pytest.raises(InputError, match=r"^partition_by must be one of 'run_id', 'name', 'day'; got 'week'$"):
        store.to_parquet(tmp_path / "other", partition_by="week")
