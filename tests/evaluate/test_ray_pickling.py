"""What run_on_ray checks before it connects to Ray (issue 26 item 3): its arguments, and that the target,
metrics and judge pickle with cloudpickle (Ray's pickler), naming the one that does not; a pickled ChatTarget
or judge opens its own connection pool. None of these start Ray."""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys
import threading

import pytest
from ray import cloudpickle

from cogeval import Case, ChatTarget, EvalSuite, InputError, JudgeConfig, correctness, exact_match, metric, run_on_ray


def suite_of(target=str.upper, **options):
    return EvalSuite([Case("a", expected="A"), Case("b", expected="B")], target, progress=False, **options)


def refusal(*args, **options):
    import ray

    connected = ray.is_initialized()  # False, unless this pytest worker runs the Ray tests' cluster now
    with pytest.raises(InputError) as refused:
        run_on_ray(*args, **options)
    assert ray.is_initialized() == connected  # refused before any cluster was started or joined
    return str(refused.value)


def test_a_target_that_cannot_be_pickled_is_named():
    lock = threading.Lock()

    def guarded(text):
        with lock:
            return text.upper()

    assert refusal(suite_of(guarded, metrics=[exact_match()]), shards=2) == (
        "target 'test_a_target_that_cannot_be_pickled_is_named.<locals>.guarded' cannot be sent to Ray workers: "
        "pickling it failed (TypeError: cannot pickle '_thread.lock' object); targets and metrics must be picklable "
        "(cloudpickle): open clients, locks and files inside the call, not in the object")


def test_a_metric_that_cannot_be_pickled_is_named():
    lock = threading.Lock()

    @metric("careful")
    def careful(output, case):
        with lock:
            return float(output == case.expected)

    assert refusal(suite_of(metrics=[exact_match(), careful]), shards=2).startswith(
        "metrics[1] 'careful' cannot be sent to Ray workers: pickling it failed (TypeError: cannot pickle "
        "'_thread.lock' object)")


@pytest.mark.parametrize(("options", "message"), [
    ({"shards": 0}, "shards must be an integer >= 1; got 0"),
    ({"shards": 2, "max_retries": 11}, "max_retries must be an integer from 0 to 10; got 11"),
    ({"shards": 2, "resources": {"num_cpus": -1}}, "resources['num_cpus'] must be a number >= 0; got -1"),
    ({"shards": 2, "resources": ["num_cpus"]},
     "resources must be a mapping such as {'num_cpus': 1, 'num_gpus': 1}; got ['num_cpus']"),
    ({"shards": 2, "address": 6379}, "address must be None, 'auto' or a Ray address such as 'ray://host:10001'; got 6379"),
    ({"shards": 2, "checkpoint": 42}, "checkpoint must be a file or folder path (str or os.PathLike); got 42"),
    ({"shards": 2, "checkpoint_every": -1}, "checkpoint_every must be a number of seconds >= 0; got -1"),
])
def test_bad_arguments_are_refused_naming_them(options, message):
    assert refusal(suite_of(metrics=[exact_match()]), **options) == message


def test_a_suite_is_needed():
    assert refusal("cases.jsonl", shards=2) == "suite must be an EvalSuite; got 'cases.jsonl'"


def test_a_pickled_chat_target_leaves_its_client_behind_and_opens_its_own(chat_server):
    target = ChatTarget("m", base_url=chat_server.url, api_key="sk-local")

    async def pickled_while_its_client_is_open():
        await target.prepare()
        assert len(target._clients) == 1
        return cloudpickle.dumps(target)

    copy = pickle.loads(asyncio.run(pickled_while_its_client_is_open()))
    assert copy._clients == {} and copy._api_key == "sk-local" and copy.describe() == target.describe()
    answer = asyncio.run(copy.call(Case("hello")))  # another loop, as in a Ray worker: its own client
    assert answer.output == "echo: hello" and chat_server.calls[-1].headers["authorization"] == "Bearer sk-local"


def test_a_judge_and_its_metrics_pickle():
    judge = JudgeConfig("judge-model", base_url="http://127.0.0.1:9/v1", cache=False)
    copy = pickle.loads(cloudpickle.dumps(correctness(judge=judge)))
    assert copy.judge.describe() == judge.describe() and len(copy.judge._limits) == 0


def test_import_cogeval_and_its_ray_runner_load_no_ray():
    code = "import sys, cogeval; cogeval.run_on_ray, cogeval.merge_runs; print('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
