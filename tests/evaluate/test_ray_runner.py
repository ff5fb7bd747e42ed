"""run_on_ray on a local Ray cluster of 2 CPUs (issue 26 items 3 to 5): the same run as one process, a worker
killed mid-shard and retried, a driver that stopped and runs again (only the missing shards run), and Ray
Data reading a store's partitioned table.

One xdist group, so one pytest worker starts Ray (`--dist loadgroup`); the cluster is started once for the
module. The targets are callable objects of this module, pickled by value (the workers cannot import a test
module); each logs its calls to a file, since they run in the workers' processes.
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

import pytest

from cogeval import (
    ChatTarget,
    Dataset,
    EvalSuite,
    ExecutionError,
    RunStore,
    TargetResponse,
    compare_runs,
    exact_match,
    latency,
    load_run,
    run_on_ray,
)
from cogeval.evaluate.ray_runner import shard_folder
from cogeval.evaluate.shards import shard_of

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"), pytest.mark.timeout(600)]

SHARDS = 4


@pytest.fixture(scope="module")
def ray_cluster():
    import ray
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False)
    yield ray
    ray.shutdown()


class Logged:
    """A deterministic target reporting its own latency, logging each call's input to ``log``; one call
    (``dies_on``) ends its worker's process the first time, once the shard's checkpoint holds 20 answers."""

    def __init__(self, log, dies_on=None, checkpoint=None):
        self.log, self.dies_on, self.checkpoint = str(log), dies_on, checkpoint

    def __call__(self, text):
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        died = pathlib.Path(self.log + ".died")
        if text == self.dies_on and not died.exists():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not _holds(self.checkpoint, 20):
                time.sleep(0.05)
            died.touch()
            os._exit(1)  # the worker's process ends mid-shard, as a killed or crashed one does
        return TargetResponse(text.upper(), duration_s=len(text) / 100)

    def calls(self):
        path = pathlib.Path(self.log)
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _holds(folder, answers):
    if folder is None:  # no checkpoint to wait for
        return True
    files = sorted(pathlib.Path(folder).glob("*.json"))
    return bool(files) and len(load_run(files[-1]).results) >= answers


def dataset():
    made = [{"input": f"question {i}", "expected": f"QUESTION {i}" if i % 7 else "no"} for i in range(199)]
    return Dataset.from_records([*made, dict(made[5])])  # 200 cases, case 5 twice


def suite_of(target, **options):
    return EvalSuite(dataset(), target, metrics=[exact_match()], statistical_metrics=[latency()], trials=2,
                     name="on ray", **options)


def same_run(merged, single):
    assert [r.model_dump() for r in merged.results] == [r.model_dump() for r in single.results]  # order, scores
    assert merged.fingerprint == single.fingerprint == dataset().fingerprint
    assert merged.aggregated["exact_match"] == single.aggregated["exact_match"]
    assert merged.aggregated["latency"].mean == pytest.approx(single.aggregated["latency"].mean, rel=1e-12)
    comparison = compare_runs(single, merged)
    assert comparison.changed == [] and comparison.changes.empty and comparison.matched == 200
    assert (comparison.to_frame()["difference"] == 0).all()


def shard_inputs(index):
    seen, inputs = {}, []
    for case in dataset():
        occurrence = seen.get(case.key, 0)
        seen[case.key] = occurrence + 1
        if shard_of(case.key, occurrence, SHARDS) == index:
            inputs.append(case.input)
    return inputs


def test_run_on_ray_is_the_single_process_run(ray_cluster, tmp_path):
    target = Logged(tmp_path / "calls.log")
    events = []
    merged = run_on_ray(suite_of(target, on_progress=events.append), shards=SHARDS)
    assert sorted(target.calls()) == sorted(c.input for c in dataset() for _ in range(2))  # each case-trial once
    assert events[-1] == {"completed": 400, "total": 400, "current_case": None}
    assert len(merged.merged_from) == SHARDS and merged.shard is None
    same_run(merged, suite_of(target, progress=False).run().run)


def test_a_worker_killed_mid_shard_is_retried_and_resumes_from_its_checkpoint(ray_cluster, tmp_path):
    victim_shard = shard_of(dataset()[60].key, 0, SHARDS)
    inputs = shard_inputs(victim_shard)
    victim = inputs[30]  # the shard's 31st case: its first trial ends the worker
    folder = tmp_path / "checkpoints"
    target = Logged(tmp_path / "calls.log", dies_on=victim, checkpoint=shard_folder(folder, victim_shard, SHARDS))
    merged = run_on_ray(suite_of(target, concurrency=1, progress=False), shards=SHARDS, max_retries=2,
                        checkpoint=folder, checkpoint_every=0)
    assert pathlib.Path(target.log + ".died").exists()
    calls = [text for text in target.calls() if text in set(inputs)]
    # 60 answers and the victim's call, then the retry asks for what its checkpoint (20 answers or more) lacks
    assert len(inputs) * 2 < len(calls) <= len(inputs) * 2 + 61 - 20
    same_run(merged, suite_of(target, progress=False).run().run)


def test_a_driver_run_again_runs_only_the_missing_shards(ray_cluster, tmp_path):
    folder = tmp_path / "checkpoints"
    target = Logged(tmp_path / "calls.log")
    suite = suite_of(target, progress=False)
    before = {index: suite.run(shard=(index, SHARDS), checkpoint=f"{shard_folder(folder, index, SHARDS)}/").run
              for index in (0, 1, 2)}  # as a first driver left them: shards 0 and 2 done, 1 stopped, 3 not begun
    partial = before[1].model_copy(update={"results": before[1].results[:20], "status": "interrupted"})
    partial.save(f"{shard_folder(folder, 1, SHARDS)}/")
    pathlib.Path(target.log).unlink()

    merged = run_on_ray(suite, shards=SHARDS, checkpoint=folder)
    missing = [r.case.input for r in before[1].results[20:]] + [text for text in shard_inputs(3) for _ in range(2)]
    assert sorted(target.calls()) == sorted(missing)
    assert merged.merged_from[0] == before[0].run_id and merged.merged_from[2] == before[2].run_id
    assert merged.merged_from[1] == before[1].run_id  # resumed under its own id
    same_run(merged, suite.run().run)


def test_ray_data_reads_a_stores_partitioned_scores(ray_cluster, tmp_path):
    store = RunStore(tmp_path / "runs")
    for _ in range(3):
        store.save(suite_of(Logged(tmp_path / "calls.log"), progress=False).run())
    folder = store.to_parquet(tmp_path / "scores", partition_by="run_id")
    scores = ray_cluster.data.read_parquet(str(folder))
    read, expected = scores.to_pandas(), store.scores()
    assert len(read) == len(expected) == 3 * 400
    assert sorted(read["run_id"].unique()) == sorted(expected["run_id"].unique())
    by_run = scores.filter(lambda row: row["metric"] == "exact_match").groupby("run_id").mean("score").to_pandas()
    means = expected[expected["metric"] == "exact_match"].groupby("run_id")["score"].mean()  # as docs/run-files.md
    assert dict(zip(by_run["run_id"], by_run["mean(score)"])) == pytest.approx(means.to_dict())


def test_a_shard_whose_worker_dies_more_often_than_it_is_retried_fails_naming_it(ray_cluster, tmp_path):
    victim = dataset()[7].input
    index = shard_of(dataset()[7].key, 0, SHARDS)
    with pytest.raises(ExecutionError) as failed:
        run_on_ray(suite_of(Logged(tmp_path / "calls.log", dies_on=victim), progress=False), shards=SHARDS,
                   max_retries=0)
    assert str(failed.value).startswith(f"shard {index} of {SHARDS} failed: its worker died and was retried 0 times (")
    assert str(failed.value).endswith("its checkpoint, if it has one, keeps what it finished: run_on_ray again to "
                                      "resume it")


def test_a_chat_target_runs_on_ray_each_worker_with_its_own_client(ray_cluster, chat_server):
    target = ChatTarget("test-model", base_url=chat_server.url, api_key="sk-local")
    cases = Dataset.from_records([{"input": f"question {i}", "expected": f"echo: question {i}"} for i in range(40)])
    suite = EvalSuite(cases, target, metrics=[exact_match()], concurrency=4, progress=False)
    merged = run_on_ray(suite, shards=SHARDS)
    assert [r.output for r in merged.results] == [f"echo: question {i}" for i in range(40)]
    assert merged.aggregated["exact_match"].mean == 1.0 and len(chat_server.requests) == 40
    assert {call.headers["authorization"] for call in chat_server.calls} == {"Bearer sk-local"}
