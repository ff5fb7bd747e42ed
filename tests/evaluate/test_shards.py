"""Shard runs (issue 26): suite.run(shard=(i, n)) runs the cases that hash into shard i; merge_runs makes
the shards of one run that run again, equal to the single-process run.

The shard of a case is computed here independently (hashlib) from the rule the docs state:
int(sha256(f"{case_key}:{occurrence}").hexdigest(), 16) % n.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import random
import time

import pytest

from cogeval import (
    Case,
    Dataset,
    EvalSuite,
    InputError,
    TargetResponse,
    compare_runs,
    cost,
    exact_match,
    latency,
    load_run,
    merge_runs,
    threshold,
    token_usage,
)
from cogeval.data.run_writer import RunFileWriter
from cogeval.scoring import StatisticalMetric

SHARDS = 4


def records(count=199):
    """``count`` distinct cases (every 7th answered wrongly by ``target``) and case 5 again: ``count + 1`` cases."""
    made = [{"input": f"question {i}", "expected": f"QUESTION {i}" if i % 7 else "no"} for i in range(count)]
    return [*made, dict(made[5])]


CALLS: list[str] = []
"""The inputs ``target`` was called with, in this process."""


async def target(text):
    """Deterministic, and it reports its own latency, tokens and cost: two runs of it agree on every value."""
    CALLS.append(text)
    return TargetResponse(text.upper(), duration_s=len(text) / 100,
                          usage={"input_tokens": len(text), "output_tokens": 3, "cost_usd": len(text) * 1e-6})


def suite_of(data, **options):
    words = StatisticalMetric("words", lambda result: len(str(result.output).split()))  # written per case
    return EvalSuite(data, target, metrics=[exact_match()], statistical_metrics=[latency(), cost(), token_usage(), words],
                     trials=2, progress=False, name="sharded", metadata={"commit": "abc"}, **options)


def shard_by_hand(case_key, occurrence, count=SHARDS):
    return int(hashlib.sha256(f"{case_key}:{occurrence}".encode()).hexdigest(), 16) % count


def units(run):
    return [(r.case_key, r.occurrence) for r in run.results if r.trial == 0]


@pytest.fixture(scope="module")
def runs():
    data = Dataset.from_records(records())
    suite = suite_of(data)
    return data, suite, suite.run().run, [suite.run(shard=(i, SHARDS)).run for i in range(SHARDS)]


def test_the_shards_partition_the_dataset_by_the_documented_hash(runs):
    data, _, single, shards = runs
    assert len(data) == 200 and single.dataset.cases == 200
    every = units(single)
    assert len(set(every)) == 200 and every.count((data[5].key, 1)) == 1  # the repeated case: occurrence 1
    for index, shard in enumerate(shards):
        assert units(shard) == [u for u in every if shard_by_hand(*u) == index]
        assert {(r.case_key, r.occurrence) for r in shard.results if r.trial == 1} == set(units(shard))  # trials whole
        assert shard.shard.index == index and shard.shard.count == SHARDS
        assert (shard.dataset.fingerprint, shard.dataset.cases) == (data.fingerprint, 200)  # the whole dataset's
        assert [r.case_index for r in shard.results] == [every.index(u) for u in units(shard) for _ in range(2)]
    assert sorted(u for shard in shards for u in units(shard)) == sorted(every)  # each case in exactly one shard
    assert all(units(shard) for shard in shards)


def test_the_split_does_not_depend_on_the_order_of_the_cases(runs):
    data, _, _, shards = runs
    shuffled = list(data)
    random.Random(3).shuffle(shuffled)
    again = [set(units(suite_of(Dataset(shuffled)).run(shard=(i, SHARDS)).run)) for i in range(SHARDS)]
    assert again == [set(units(shard)) for shard in shards]


def test_merged_shards_are_the_single_process_run(runs):
    data, _, single, shards = runs
    merged = merge_runs(shards[::-1])  # in any order
    assert [(r.case_key, r.occurrence, r.trial) for r in merged.results] == [
        (r.case_key, r.occurrence, r.trial) for r in single.results]
    assert [r.model_dump() for r in merged.results] == [r.model_dump() for r in single.results]  # scores, outputs, usage
    assert merged.fingerprint == single.fingerprint == data.fingerprint and merged.dataset == single.dataset
    assert list(merged.aggregated) == list(single.aggregated) == ["exact_match", "latency", "cost", "token_usage", "words"]
    for name in ("exact_match", "token_usage", "words"):
        assert merged.aggregated[name] == single.aggregated[name]
    for name in ("latency", "cost"):  # from milliseconds in the file back to seconds: equal within float noise
        for field, value in single.aggregated[name].model_dump().items():
            assert getattr(merged.aggregated[name], field) == pytest.approx(value, rel=1e-12)
    assert merged.aggregated["exact_match"].mean == pytest.approx(171 / 200)  # 29 cases (i % 7 == 0) answered wrongly
    assert merged.config == single.config and merged.name == "sharded" and merged.metadata == {"commit": "abc"}
    comparison = compare_runs(single, merged)
    assert comparison.changed == [] and comparison.matched == 200 and comparison.n_added == comparison.n_removed == 0
    assert comparison.changes.empty and (comparison.to_frame()["difference"] == 0).all()
    stats = merged.stats
    assert (stats.total, stats.errors, stats.metric_errors, stats.cost) == (400, 0, 0, single.stats.cost)
    assert merged.shard is None and all(r.case_index is None for r in merged.results)


def test_the_merged_run_has_a_new_id_its_shards_ids_and_their_times(runs):
    _, _, _, shards = runs
    merged = merge_runs(shards)
    assert merged.merged_from == [shard.run_id for shard in shards] and merged.run_id not in merged.merged_from
    assert merged.started_at == min(s.started_at for s in shards) and merged.finished_at == max(s.finished_at for s in shards)
    assert merged.run_id.startswith(merged.started_at.replace("-", "").replace(":", "").replace(".", "")[:18])
    wall = datetime.datetime.fromisoformat(merged.finished_at) - datetime.datetime.fromisoformat(merged.started_at)
    assert merged.stats.duration == pytest.approx(wall.total_seconds() * 1000)  # first start to last finish
    assert merged.stats.model_extra["shardsDuration"] == pytest.approx(sum(s.stats.duration for s in shards))
    written = merged.to_dict()
    assert written["mergedFrom"] == merged.merged_from and "shard" not in written
    assert "caseIndex" not in json.dumps(written["results"])


def test_a_shard_checks_no_assertions_and_the_merge_checks_them_on_the_whole(runs):
    data, _, single, _ = runs
    suite = suite_of(data, assertions=[threshold("exact_match.mean", 0.9)])
    shard = suite.run(shard=(0, 2)).run
    assert shard.assertions == []
    merged = merge_runs([shard, suite.run(shard=(1, 2))], assertions=suite.assertions)
    [check] = merged.assertions
    assert check == suite.run().run.assertions[0] and check.passed is False  # 0.855 < 0.9, as in one process
    assert single.assertions == []


def test_the_shard_fields_are_camel_case_in_the_file_and_absent_from_other_runs(runs, tmp_path):
    _, _, single, shards = runs
    document = json.loads(shards[2].save(tmp_path / "shard.json").read_text())
    assert document["shard"] == {"index": 2, "count": 4}
    assert [r["caseIndex"] for r in document["results"]] == [r.case_index for r in shards[2].results]
    plain = json.loads(single.save(tmp_path / "single.json").read_text())
    assert "shard" not in plain and "mergedFrom" not in plain and "caseIndex" not in json.dumps(plain["results"])
    assert load_run(tmp_path / "shard.json") == shards[2]


def test_the_incremental_writer_writes_a_shard_as_save_does(runs, tmp_path):
    _, _, _, shards = runs
    shard = shards[1]
    head = shard.model_copy(update={"results": []})
    items = [(job, record, lambda record=record: record) for job, record in enumerate(shard.results)]
    written = RunFileWriter().write(tmp_path / "written.json", head, items)
    assert written.read_bytes() == shard.save(tmp_path / "saved.json").read_bytes()


def test_a_shard_resumes_from_its_checkpoint_and_not_from_another_shards(runs, tmp_path):
    _, suite, _, shards = runs
    partial = shards[3].model_copy(update={"results": shards[3].results[:10], "status": "interrupted"})
    path = partial.save(tmp_path / "partial.json")
    before = len(CALLS)
    resumed = suite.run(shard=(3, SHARDS), resume=path, checkpoint=tmp_path / "checkpoint.json").run
    assert [r.model_dump() for r in resumed.results] == [r.model_dump() for r in shards[3].results]
    assert len(CALLS) - before == len(shards[3].results) - 10 and resumed.run_id == shards[3].run_id
    assert load_run(tmp_path / "checkpoint.json") == resumed
    with pytest.raises(InputError) as refused:
        suite.run(shard=(2, SHARDS), resume=path)
    assert str(refused.value) == (f"resume: run {shards[3].run_id!r} is shard 3 of 4, but this run is shard 2 of 4; "
                                  "resume each shard from its own run or checkpoint")
    with pytest.raises(InputError, match=r"is shard 3 of 4, but this run is a whole run \(no shard\)"):
        suite.run(resume=path)


@pytest.mark.parametrize("shard", [(4, 4), (-1, 4), (0, 0), (1.0, 4), (True, 2), (0, 2, 1), "0/4", 3, None])
def test_a_bad_shard_is_refused_naming_it(shard):
    suite = suite_of(Dataset([Case("a")]))
    if shard is None:
        assert suite.run(shard=None).run.shard is None
        return
    with pytest.raises(InputError) as refused:
        suite.run(shard=shard)
    assert str(refused.value).startswith("shard must be (index, count): integers with 0 <= index < count, "
                                         "e.g. shard=(0, 4) for the first of 4 shards; got ")


def test_a_shard_of_no_case_is_an_empty_run_that_merges(tmp_path):
    data = Dataset([Case("only one", expected="ONLY ONE")])
    suite = suite_of(data)
    results = [suite.run(shard=(i, 3)) for i in range(3)]
    parts = [result.run for result in results]
    assert sorted(len(p.results) for p in parts) == [0, 0, 2]
    empty = next(result for result in results if not result.results)  # not a pass on nothing, and says why
    index = empty.run.shard.index
    assert empty.failures == [f"the run has no cases: shard {index} of 3 holds none of the dataset's 1, so nothing "
                              "was evaluated (merge_runs still takes it)"] and empty.exit_code == 2
    merged = merge_runs(parts)
    assert merged.aggregated["exact_match"].mean == 1.0 and merged.aggregated["words"].count == 2
    assert math.isclose(merged.aggregated["latency"].mean, len("only one") / 100)


def test_a_shards_checkpoint_while_it_runs_is_an_interrupted_shard_with_case_indexes(tmp_path):
    path = tmp_path / "checkpoint.json"
    data = Dataset([Case(f"q{i}", expected=f"Q{i}") for i in range(40)])
    jobs = [job for job in range(40) if shard_by_hand(data[job].key, 0, 2) == 1]
    snapshots = []

    def answer(text):
        position = int(text[1:])
        if position == jobs[3]:  # three answers before it: wait until the checkpoint (a thread's write) holds them
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (path.exists() and len(load_run(path).results) >= 3):
                time.sleep(0.01)
            snapshots.append(load_run(path))
        return text.upper()

    done = EvalSuite(data, answer, metrics=[exact_match()], concurrency=1, progress=False).run(
        shard=(1, 2), checkpoint=path, checkpoint_every=0).run
    [snapshot] = snapshots
    assert snapshot.status == "interrupted" and (snapshot.shard.index, snapshot.shard.count) == (1, 2)
    assert [r.case_index for r in snapshot.results] == jobs[:3] and snapshot.dataset == done.dataset
    assert [r.case_index for r in done.results] == jobs and load_run(path) == done


class Slowest:
    """A run-level metric with an aggregate only (``compute``), no per-case values: the merge cannot sum it up."""

    name, higher_is_better, kind = "slowest", False, "run"

    def describe(self):
        return {"name": self.name, "higher_is_better": False, "params": {}, "kind": "run"}

    def compute(self, results):
        from cogeval import aggregate

        return aggregate([max(r.duration_s for r in results)] if results else [])


def test_a_metric_without_per_case_values_is_nan_in_the_merged_run_with_a_warning():
    suite = EvalSuite(Dataset.from_records(records(20)), target, metrics=[exact_match()], statistical_metrics=[Slowest()],
                      progress=False)
    shards = [suite.run(shard=(i, 2)).run for i in range(2)]
    assert all(shard.aggregated["slowest"].count == 1 for shard in shards)
    with pytest.warns(RuntimeWarning, match=r"^merge_runs: metric 'slowest' has no per-case values in the shards, so "
                                            r"its aggregate cannot be computed again over the merged run: it is NaN$"):
        merged = merge_runs(shards)
    assert math.isnan(merged.aggregated["slowest"].mean) and merged.aggregated["slowest"].count == 0
    assert merged.aggregated["exact_match"] == suite.run().run.aggregated["exact_match"]
