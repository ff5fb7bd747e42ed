"""read_inspect_log on logs made by Inspect AI itself (mock model, offline), and every refusal (docs/import-inspect.md).

The logs are made once per module by running Inspect on two tiny tasks (three logs) with its built-in ``mockllm/model``:
``arith`` (10 samples × 2 epochs, scorers ``match()`` and a dict-valued ``checks``) in a ``base`` variant,
which answers only 1+1 and 2+2 right and fails on 5+5 (the mock model raises), and a ``head`` variant that
answers all ten right; and ``brittle`` (4 samples, ``score_on_error``), whose second scorer raises on one
sample, one of whose inputs is a list of chat messages, and whose model fails on another.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import sys
import zipfile

import pytest

import cogeval
from cogeval import RunStore
from cogeval.data import Case, EvalRun, load_run
from cogeval.errors import InputError, RunFileError
from cogeval.importers.inspect_log import _looks_like, read_inspect_log

QUESTIONS = {f"q{i}": (f"What is {i}+{i}?", str(2 * i)) for i in range(1, 11)}
ANSWERS = {
    # right on q1 and q2; q4 in words (not a number); None: the mock model raises; q6-q10 off by one
    "base": {"q1": "2", "q2": "4", "q3": "7", "q4": "eight", "q5": None} | {f"q{i}": str(2 * i + 1) for i in range(6, 11)},
    "head": {sid: expected for sid, (_, expected) in QUESTIONS.items()},
}


pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
"""Inspect's own retry set-up uses a deprecated tenacity argument."""


def _need_inspect():
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("inspect_ai is not installed: pip install 'cogeval[inspect]'")
        pytest.skip("inspect_ai is not installed")


def _make_logs(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    """Run Inspect on the tasks; the base and brittle logs as .eval, the head log as .json."""
    from inspect_ai import Task, task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, match, mean, scorer

    def mock(answers):
        by_question = {question: answers[sid] for sid, (question, _) in QUESTIONS.items()}

        def answer(messages, tools, tool_choice, config):
            text = by_question.get(messages[-1].text, "2")
            if text is None:
                raise RuntimeError("mock model is down")
            output = ModelOutput.from_content("mockllm/model", text)
            output.usage = ModelUsage(input_tokens=10, output_tokens=len(text), total_tokens=10 + len(text))
            return output  # with a usage, so Inspect does not fetch a tokenizer

        return get_model("mockllm/model", custom_outputs=answer)

    @scorer(metrics={"correct": [accuracy()], "length": [mean()]})
    def checks(strip: bool = False):
        async def score(state, target: Target):
            text = state.output.completion.strip() if strip else state.output.completion
            value = {"correct": "C" if text == target.text else "I", "length": len(text) if text.isdigit() else math.nan}
            return Score(value=value, answer=text, reason=None if text.isdigit() else "invalid_response_format")
        return score

    @scorer(metrics=[accuracy()])
    def fragile():
        async def score(state, target: Target):
            if state.sample_id == "f2":
                raise ValueError("scorer broke")
            return Score(value="C")
        return score

    @task
    def arith(variant: str = "base"):
        samples = [Sample(id=sid, input=q, target=t, metadata={"level": int(sid[1:])})
                   for sid, (q, t) in QUESTIONS.items()]
        return Task(dataset=samples, scorer=[match(), checks(strip=True)], epochs=2, model=mock(ANSWERS[variant]))

    @task
    def brittle():
        samples = [Sample(id="f1", input="What is 1+1?", target="2"),
                   Sample(id="f2", input="Two plus two?", target=["4", "four"], choices=["4", "5"]),
                   Sample(id="f3", input=[ChatMessageSystem(content="Answer with a number."),
                                          ChatMessageUser(content="What is 1+1?")], target="2"),
                   Sample(id="f4", input="What is 5+5?", target="10")]  # the mock model raises
        return Task(dataset=samples, scorer=[match(), fragile()], score_on_error=True, model=mock(ANSWERS["base"]))

    options = {"display": "none", "fail_on_error": False, "log_dir": str(folder)}
    base, frag = inspect_eval([arith(variant="base"), brittle()], log_format="eval", **options)
    [head] = inspect_eval(arith(variant="head"), log_format="json", **options)
    return {"base": pathlib.Path(base.location), "head": pathlib.Path(head.location),
            "brittle": pathlib.Path(frag.location)}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    _need_inspect()
    return _make_logs(tmp_path_factory.mktemp("inspect-logs"))


@pytest.fixture(scope="module")
def base(logs):
    return read_inspect_log(logs["base"])


@pytest.fixture(scope="module")
def head(logs):
    return read_inspect_log(logs["head"])


def result(run, sid, trial=0):
    question, _ = QUESTIONS[sid]
    [found] = [r for r in run.results if r.case.input == question and r.trial == trial]
    return found


def score(run, sid, metric, trial=0):
    [found] = [s for s in result(run, sid, trial).scores if s.metric == metric]
    return found


# -- the mapping ------------------------------------------------------------------------------------


def test_samples_and_epochs_become_cases_and_trials(logs, base):
    assert logs["base"].suffix == ".eval" and zipfile.is_zipfile(logs["base"])
    assert (len(base.results), base.dataset.cases, base.config.trials) == (20, 10, 2)
    assert [(r.case.input, r.trial, r.occurrence) for r in base.results[:4]] == [
        ("What is 1+1?", 0, 0), ("What is 1+1?", 1, 0), ("What is 2+2?", 0, 0), ("What is 2+2?", 1, 0)]
    r = result(base, "q3", trial=1)
    assert r.case.to_case() == Case("What is 3+3?", expected="6", metadata={"level": 3, "inspect": {"sample_id": "q3"}})
    assert r.case_key == Case("What is 3+3?", expected="6").key
    assert r.output == "7" and r.error is None


def test_one_metric_per_scorer_value_all_higher_is_better(base):
    assert base.metric_names == ["match", "checks/correct", "checks/length"]
    assert base.directions == {"match": True, "checks/correct": True, "checks/length": True,
                               "latency": False, "cost": False, "token_usage": False}
    checks = {"scorer": "checks", "options": {"strip": True}}  # the arguments the scorer was made with
    assert [m.params for m in base.config.metrics] == [{"scorer": "match"}, checks, checks]


def test_scores_use_inspects_value_to_float_and_keep_the_rest_in_details(base):
    assert [score(base, sid, "match").score for sid in ("q1", "q2", "q3", "q4")] == [1.0, 1.0, 0.0, 0.0]
    assert score(base, "q3", "checks/correct", trial=1).score == 0.0
    assert score(base, "q1", "checks/length").score == 1.0
    assert score(base, "q3", "match").details == {"value": "I", "answer": "7", "explanation": "7"}
    assert score(base, "q1", "checks/correct").details == {"value": "C", "answer": "2"}
    unscored = score(base, "q4", "checks/length")
    assert math.isnan(unscored.score) and unscored.error == "unscored: invalid_response_format"
    assert unscored.details == {"value": None, "answer": "eight", "reason": "invalid_response_format"}
    assert base.aggregated["match"].mean == pytest.approx(4 / 18) and base.aggregated["match"].missing == 2


def test_a_failed_sample_is_the_results_error(base):
    for trial in (0, 1):
        failed = result(base, "q5", trial)
        assert (failed.error, failed.output) == ("RuntimeError('mock model is down')", "")
        assert [(s.metric, s.error) for s in failed.scores] == [
            (m, "not scored: the sample failed (see the result's error)") for m in base.metric_names]
        assert all(math.isnan(s.score) for s in failed.scores)
        assert (failed.usage.input_tokens, failed.usage.output_tokens) == (None, None)
        assert failed.inspect["error_traceback"].rstrip().endswith("RuntimeError: mock model is down")
    assert (base.stats.total, base.stats.errors, base.stats.metric_errors) == (20, 2, 2)


def test_a_failed_scorer_is_the_error_of_the_scores_it_lacks(logs):
    run = read_inspect_log(logs["brittle"])
    first, second, _, failed = run.results
    assert (second.error, second.output) == (None, "2")
    assert (second.scores[0].metric, second.scores[0].score, second.scores[0].error) == ("match", 0.0, None)
    assert second.scores[1].metric == "fragile" and math.isnan(second.scores[1].score)
    assert second.scores[1].error == "a scorer failed: ValueError('scorer broke')"
    assert [(s.metric, s.score, s.error) for s in first.scores] == [("match", 1.0, None), ("fragile", 1.0, None)]
    assert second.case.expected == ["4", "four"]
    assert second.case.metadata == {"inspect": {"sample_id": "f2", "choices": ["4", "5"]}}
    assert run.config.trials == 1 and run.stats.metric_errors == 1
    # score_on_error: Inspect scored the sample the model failed on; its error is the target's, its scores kept
    assert (failed.error, failed.output) == ("RuntimeError('mock model is down')", "")
    assert [(s.metric, s.score, s.error) for s in failed.scores] == [("match", 0.0, None), ("fragile", 1.0, None)]
    assert failed.scores[0].details == {"value": "I", "answer": "", "explanation": "", "reason": "no_response"}


def test_chat_messages_input_is_kept_without_message_ids(logs):
    chat = read_inspect_log(logs["brittle"]).results[2]
    assert chat.case.input == [{"content": "Answer with a number.", "role": "system"},
                               {"content": "What is 1+1?", "role": "user"}]
    assert chat.case_key == Case(chat.case.input, expected="2").key and chat.output == "2"


def test_list_values_and_text_that_is_no_score(logs, tmp_path):
    data = json.loads(logs["head"].read_text())
    samples = {(s["id"], s["epoch"]): s for s in data["samples"]}
    first, second = samples[("q1", 1)], samples[("q1", 2)]
    first["scores"]["match"]["value"] = "maybe"
    second["scores"]["match"]["value"] = [1, "P"]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    run = read_inspect_log(edited)
    assert run.metric_names == ["match", "checks/correct", "checks/length", "match/0", "match/1"]
    by_id = {(r.case.metadata["inspect"]["sample_id"], r.trial + 1): r for r in run.results}
    maybe = by_id[(first["id"], first["epoch"])].scores[0]
    assert (maybe.metric, maybe.error, maybe.details["value"]) == (
        "match", "value 'maybe' is neither a number nor one of Inspect's C, I, P, N", "maybe")
    listed = {s.metric: (s.score, s.error) for s in by_id[(second["id"], second["epoch"])].scores}
    assert listed["match/0"] == (1.0, None) and listed["match/1"] == (0.5, None)
    assert math.isnan(listed["match"][0])
    assert listed["match"][1] == "the log has no score of scorer 'match' for this sample"


def test_an_unfinished_log_is_an_interrupted_run(logs, tmp_path):
    data = json.loads(logs["head"].read_text())
    data["status"] = "cancelled"
    cancelled = tmp_path / "cancelled.json"
    cancelled.write_text(json.dumps(data))
    run = read_inspect_log(cancelled)
    assert (run.status, run.metadata["status"], len(run.results)) == ("interrupted", "cancelled", 20)


def test_usage_and_duration_come_from_the_sample(logs, base):
    from inspect_ai.log import read_eval_log

    samples = {(s.id, s.epoch): s for s in read_eval_log(str(logs["base"])).samples}
    r = result(base, "q4", trial=1)
    assert (r.usage.input_tokens, r.usage.output_tokens) == (10, 5) and math.isnan(r.usage.cost)
    assert r.duration == samples[("q4", 2)].working_time * 1000  # milliseconds, as the run file
    assert r.inspect["total_time"] == samples[("q4", 2)].total_time
    assert r.inspect["uuid"] == samples[("q4", 2)].uuid and r.inspect["epoch"] == 2
    assert r.inspect["model_usage"] == {"mockllm/model": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}


def test_latency_cost_and_tokens_are_statistical_metrics_of_the_samples(logs, base):
    from inspect_ai.log import read_eval_log

    times = [s.working_time for s in read_eval_log(str(logs["base"])).samples]
    assert [(m.name, m.higher_is_better, m.kind) for m in base.config.statistical_metrics] == [
        ("latency", False, "run"), ("cost", False, "run"), ("token_usage", False, "run")]
    assert base.aggregated["latency"].mean == pytest.approx(sum(times) / len(times), rel=1e-12)
    assert base.aggregated["latency"].count == len(times)


def test_task_model_and_ids_go_in_the_runs_metadata_and_target(logs, base):
    from inspect_ai.log import read_eval_log

    spec = read_eval_log(str(logs["base"]), header_only=True).eval
    assert base.name == "arith (mockllm/model)"
    assert {k: base.metadata[k] for k in ("source", "log", "status", "task", "model", "task_args", "dataset")} == {
        "source": "inspect_ai", "log": str(logs["base"]), "status": "success", "task": "arith",
        "model": "mockllm/model", "task_args": {"variant": "base"}, "dataset": None}
    assert (base.metadata["eval_id"], base.metadata["inspect_run_id"]) == (spec.eval_id, spec.run_id)
    assert base.metadata["inspect"]["results"]["scores"][0]["metrics"]["accuracy"]["value"] == pytest.approx(2 / 9)
    assert base.config.target == {"type": "inspect", "task": "arith", "model": "mockllm/model",
                                  "task_args": {"variant": "base"}}
    assert base.started_at == spec.created.replace("+00:00", ".000Z")
    assert base.run_id.startswith(base.started_at.replace("-", "").replace(":", "").replace(".", ""))
    assert read_inspect_log(logs["base"]).run_id == base.run_id  # the same id at every import


def test_eval_and_json_logs_give_the_same_run(logs, base, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    as_json = tmp_path / "base.json"
    write_eval_log(read_eval_log(str(logs["base"])), str(as_json), format="json")
    again = read_inspect_log(as_json)
    assert again.metadata.pop("log") == str(as_json)
    expected = base.model_copy(deep=True)
    expected.metadata.pop("log")
    assert again == expected


def test_compare_runs_finds_the_planted_difference(base, head, tmp_path):
    assert head.metadata["task_args"] == {"variant": "head"} and head.stats.errors == 0
    assert base.fingerprint == head.fingerprint and base.run_id != head.run_id
    comparison = cogeval.compare_runs(base, head)
    assert (comparison.matched, comparison.verdict, comparison.winner) == (10, "better", "head")
    match = comparison.metrics["match"]
    # per case, trials averaged, a failed trial counting 0: base right on 2 cases of 10, head on all 10;
    # 8 discordant pairs, all for head: R binom.test(0, 8)$p.value = 0.0078125, Holm over 3 metrics 0.0234375
    assert (match.n, match.base, match.head, match.difference) == (10, 0.2, 1.0, 0.8)
    assert (match.test, match.p_value, match.adjusted_p_value) == ("mcnemar-exact", 0.0078125, 0.0234375)
    # one of those 8 failed in base on every trial: an error, not an improvement (its 0 still counts in the test)
    assert (match.significant, match.winner, match.n_improved, match.n_regressed) == (True, "head", 7, 0)
    assert (comparison.n_errored_base, comparison.n_errored_head) == (1, 0)
    moved = comparison.changes[comparison.changes["metric"] == "match"]
    assert sorted(moved["input"]) == sorted(QUESTIONS[f"q{i}"][0] for i in range(3, 11))
    [errored] = moved.loc[moved["direction"] == "error", "input"]
    assert errored in list(comparison.errored["input"])
    # the base run's failure is the first warning, and the headline says it (issue 34, item 2): 1 of 10 is >= 1 %
    assert comparison.warnings[:2] == [
        "The base run's target failed on 1 of the 10 matched cases (10%): they score 0 on higher-is-better metrics "
        "and are left out of lower-is-better ones, so the verdict counts those failures; see .errored for the cases",
        "Metric 'checks/length': n = 9 of 10 matched cases, because scoring failed on 1 case(s) in the base run and 0 "
        "in the head run"]
    assert comparison.headline().endswith("; 1 of 10 cases errored in base, scored 0")
    assert load_run(RunStore(tmp_path / "runs").save(base)) == base


# -- refusals ---------------------------------------------------------------------------------------


def refusal(path) -> str:
    with pytest.raises(RunFileError) as caught:
        read_inspect_log(path)
    return str(caught.value)


def test_a_missing_inspect_ai_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(InputError) as caught:
        read_inspect_log(tmp_path / "x.eval")
    assert str(caught.value) == ("reading Inspect AI logs needs the inspect_ai package: "
                                 "pip install 'cogeval[inspect]' (or pip install inspect_ai)")


def test_a_missing_file(logs, tmp_path):
    with pytest.raises(FileNotFoundError, match="Inspect log not found"):
        read_inspect_log(tmp_path / "nothing.eval")


def test_files_of_other_kinds_are_refused_naming_what_they_look_like(logs, base, tmp_path):
    run_file = base.save(tmp_path / "cogeval.json")
    promptfoo = tmp_path / "promptfoo.json"
    promptfoo.write_text(json.dumps({"evalId": "eval-1", "results": {"version": 3, "results": [], "prompts": [],
                                                                     "stats": {}}, "config": {}}))
    harness = tmp_path / "harness.json"
    harness.write_text(json.dumps({"results": {"arc": {"acc,none": 0.5}}, "versions": {"arc": 1}, "configs": {}}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": 1, "b": [2]}))
    array = tmp_path / "array.json"
    array.write_text("[1, 2]")
    assert refusal(run_file) == f"file '{run_file}' is not an Inspect log: it looks like a cogeval run file, use cogeval.load_run"
    assert refusal(promptfoo) == f"file '{promptfoo}' is not an Inspect log: it looks like a promptfoo output, use cogeval.importers.read_promptfoo"
    assert refusal(harness) == (f"file '{harness}' is not an Inspect log: it looks like an lm-evaluation-harness "
                                "results file, use cogeval.importers.read_lm_eval_samples on its samples files")
    assert refusal(other) == (f"file '{other}' is not an Inspect log: it is a JSON object with the keys 'a', 'b'; "
                              "an Inspect log has 'version', 'status', 'eval' and 'samples'")
    assert refusal(array) == f"file '{array}' is not an Inspect log: it holds a JSON array, not an object"


def test_files_that_are_no_log_at_all(logs, tmp_path):
    text = tmp_path / "broken.json"
    text.write_text('{"version": 2,\n  "eval": }')
    binary = tmp_path / "binary.eval"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    archive = tmp_path / "archive.eval"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("notes.txt", "hello")
    assert refusal(text) == f"file '{text}' is not an Inspect log: not valid JSON: line 2 column 11: Expecting value"
    assert refusal(binary) == (f"file '{binary}' is neither an Inspect .eval log (a zip archive) nor JSON text "
                               "(invalid start byte at byte 0)")
    assert refusal(archive) == (f"file '{archive}' is a zip archive but not an Inspect .eval log "
                                "(it has no header.json or _journal/start.json)")


def test_a_broken_eval_log_says_what_inspect_found(logs, tmp_path):
    incomplete, garbled = tmp_path / "incomplete.eval", tmp_path / "garbled.eval"
    with zipfile.ZipFile(incomplete, "w") as zipped:
        zipped.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}))
    with zipfile.ZipFile(garbled, "w") as zipped:
        zipped.writestr("_journal/start.json", "{not json")
    assert refusal(incomplete) == (f"Inspect log '{incomplete}' is invalid: eval.created: Field required; "
                                   "eval.dataset: Field required; eval.config: Field required")
    assert refusal(garbled) == (f"Inspect log '{garbled}' cannot be read: JSONDecodeError: Expecting property name "
                                "enclosed in double quotes: line 1 column 2 (char 1)")


def test_an_invalid_log_names_the_field(logs, tmp_path):
    data = json.loads(logs["head"].read_text())
    data["samples"][1]["epoch"] = "second"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert refusal(bad) == (f"Inspect log '{bad}' is invalid: samples[1].epoch: "
                            "Input should be a valid integer, unable to parse string as an integer")
    del data["eval"]["created"]
    data["samples"][1]["epoch"] = 2
    bad.write_text(json.dumps(data))
    assert refusal(bad) == f"Inspect log '{bad}' is invalid: eval.created: Field required"


def test_a_log_without_samples_is_refused(logs, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    header = tmp_path / "header.json"
    write_eval_log(read_eval_log(str(logs["head"]), header_only=True), str(header), format="json")
    assert refusal(header) == (f"Inspect log '{header}' holds no samples (was it written with log_samples=False?); "
                               "cogeval imports the scores of each sample")


def test_a_sample_metadata_key_inspect_is_refused(logs, tmp_path):
    data = json.loads(logs["head"].read_text())
    data["samples"][0]["metadata"]["inspect"] = "mine"
    bad = tmp_path / "clash.json"
    bad.write_text(json.dumps(data))
    sample_id = data["samples"][0]["id"]
    assert refusal(bad) == (f"Inspect log '{bad}' cannot be imported: sample {sample_id!r} has a metadata key "
                            "'inspect', which cogeval keeps the sample's id in")


# -- detection --------------------------------------------------------------------------------------


def test_looks_like_knows_an_inspect_log_from_other_json(logs, base):
    assert _looks_like(json.loads(logs["head"].read_text())) == "inspect"
    assert _looks_like({"eval": {"task": "t", "model": "m"}}) == "inspect"  # as header.json in a .eval zip
    assert _looks_like(base.to_dict()) is None
    assert _looks_like({"evalId": "x", "results": {}}) is None
    assert _looks_like([{"eval": {}}]) is None
    assert _looks_like(EvalRun) is None
