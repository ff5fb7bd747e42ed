"""read_lm_eval_samples: lm-eval's own --log_samples output (fixtures/lm_eval/make_fixtures.py) as runs."""

from __future__ import annotations

import json
import math
import pathlib
import shutil

import pytest

import cogeval
from cogeval.data import Case, load_run
from cogeval.errors import InputError, RunFileError
from cogeval.importers.lm_eval import _looks_like, read_lm_eval_samples

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "lm_eval"
SMALL_DIR, LARGE_DIR = FIXTURES / "acme__small-v1", FIXTURES / "acme__large-v2"
SMALL = SMALL_DIR / "samples_cogeval_arith_2026-12-01T10-00-00.000001.jsonl"
LARGE = LARGE_DIR / "samples_cogeval_arith_2026-12-01T11-00-00.000001.jsonl"
SMALL_MC = SMALL_DIR / "samples_cogeval_mc_2026-12-01T10-00-00.000001.jsonl"
SMALL_RESULTS = SMALL_DIR / "results_2026-12-01T10-00-00.000001.json"
STRICT, FLEXIBLE = "exact_match,strict-match", "exact_match,flexible-extract"
QUESTIONS = ["What is 2 + 3?", "What is 7 * 6?", "What is 10 - 4?", "What is 9 + 9?", "What is 12 / 3?",
             "What is 5 * 5?", "What is 100 - 1?", "What is 8 + 7?"]


def lines(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: pathlib.Path, objects: list) -> pathlib.Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def error_of(path, **kwargs) -> str:
    with pytest.raises(RunFileError) as caught:
        read_lm_eval_samples(path, **kwargs)
    return str(caught.value)


def scores(run, metric: str) -> list[float]:
    return run.to_frame()[metric].tolist()


# -- the mapping -----------------------------------------------------------------------------------------


def test_a_samples_file_is_a_run_of_its_docs():
    run = read_lm_eval_samples(SMALL)
    assert len(run.results) == 8 and run.dataset.cases == 8 and run.config.trials == 1
    assert [r.case.input for r in run.results] == QUESTIONS
    assert [r.case.expected for r in run.results] == ["5", "42", "6", "18", "4", "25", "99", "15"]
    assert run.metric_names == [STRICT, FLEXIBLE]
    assert run.directions == {STRICT: True, FLEXIBLE: True}
    assert scores(run, STRICT) == [1, 0, 0, 0, 0, 0, 0, 0]
    assert scores(run, FLEXIBLE) == [1, 0, 1, 1, 0, 1, 1, 1]
    assert run.aggregated[STRICT].mean == 0.125 and run.aggregated[FLEXIBLE].mean == 0.75
    assert all(r.case_key == Case(r.case.input, expected=r.case.expected).key for r in run.results)
    assert [(r.occurrence, r.trial, r.error) for r in run.results] == [(0, 0, None)] * 8


def test_the_run_carries_model_task_and_times_from_the_results_file():
    run = read_lm_eval_samples(SMALL)
    assert run.name == "acme/small-v1"
    assert run.config.target == {"type": "lm-eval", "model": "acme/small-v1", "task": "cogeval_arith"}
    assert {k: v for k, v in run.metadata.items() if k != "lm_eval"} == {
        "source": "lm-eval", "task": "cogeval_arith", "model": "acme/small-v1", "num_fewshot": 0,
        "task_version": 1.0, "samples_file": SMALL.name, "results_file": SMALL_RESULTS.name,
    }
    kept = run.metadata["lm_eval"]
    assert kept["results"] == {"cogeval_arith": {
        "name": "cogeval_arith", "alias": "cogeval_arith", "sample_len": 8, STRICT: 0.125,
        "exact_match_stderr,strict-match": "N/A", FLEXIBLE: 0.75, "exact_match_stderr,flexible-extract": "N/A"}}
    assert list(kept["configs"]) == ["cogeval_arith"] and kept["lm_eval_version"] == "0.4.13"
    assert kept["config"]["model_args"] == "pretrained=acme/small-v1"
    assert (run.started_at, run.finished_at) == ("2026-12-01T02:00:00.000Z", "2026-12-01T02:00:12.500Z")
    assert run.stats.duration_s == 12.5 and run.stats.total == 8 and run.stats.errors == 0
    assert run.run_id.startswith("20261201T020000000Z-") and read_lm_eval_samples(SMALL).run_id == run.run_id


def test_metrics_record_how_lm_eval_made_them():
    run = read_lm_eval_samples(SMALL)
    assert run.config.metrics[0].params == {"metric": "exact_match", "filter": "strict-match", "aggregation": "mean",
                                            "ignore_case": True, "ignore_punctuation": False}
    assert run.config.metrics[1].params["filter"] == "flexible-extract"
    assert {m.kind for m in run.config.metrics} == {"case"}


def test_a_named_doc_keeps_its_doc_prompt_and_responses():
    result = read_lm_eval_samples(SMALL).results[1]  # doc 1: "The answer is 42." has no "#### 42"
    assert result.output == "[invalid]"  # the first filter's (strict-match) filtered response
    assert result.case.metadata == {
        "doc_id": 1, "doc": {"question": "What is 7 * 6?", "answer": "42"},
        "arguments": {"gen_args_0": {"arg_0": "Question: What is 7 * 6?\nAnswer:",
                                     "arg_1": {"until": ["Question:"], "do_sample": False}}},
        "doc_hash": "9f8524443c8fa183a44a2c492c6ae434f5d2f467385152bb64db3cbc21c9f136",
        "prompt_hash": "5438dce2c74909135823411b5d7f4dbf19f407d72fcccf3f8945cdacafd73970",
        "target_hash": "73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049",
    }
    strict, flexible = result.scores
    assert (strict.metric, strict.score, strict.error) == (STRICT, 0.0, None)
    assert strict.details == {"filter": "strict-match", "resps": [["The answer is 42."]], "filtered_resps": ["[invalid]"]}
    assert flexible.details == {"filter": "flexible-extract", "resps": [["The answer is 42."]], "filtered_resps": ["42."]}


def test_one_filter_keeps_bare_metric_names_and_several_requests_keep_every_response():
    run = read_lm_eval_samples(SMALL_MC)
    assert run.metric_names == ["acc", "acc_norm"] and run.directions == {"acc": True, "acc_norm": True}
    assert run.config.target["task"] == "cogeval_mc" and run.metadata["task_version"] == 2.0
    assert [r.case.input for r in run.results] == ["Capital of France?", "Largest planet?", "H2O is?", "Opposite of hot?"]
    assert [r.case.expected for r in run.results] == ["0", "1", "2", "0"]  # the choice index, as lm-eval wrote it
    assert scores(run, "acc") == [1, 0, 1, 1] and scores(run, "acc_norm") == [1, 0, 1, 1]
    assert run.results[1].output == [["-2.0", "False"], ["-3.0", "False"], ["-0.5", "True"]]  # one per choice
    assert run.results[1].scores[0].details["filter"] == "none"


def test_compare_runs_finds_the_planted_difference():
    small, large = read_lm_eval_samples(SMALL), read_lm_eval_samples(LARGE)
    assert large.name == "acme/large-v2" and scores(large, STRICT) == [1] * 8
    assert small.fingerprint == large.fingerprint  # same docs, same cases: paired one to one
    table = cogeval.compare_runs(small, large).to_frame().set_index("metric")
    # Exact McNemar: 7 discordant pairs all won by large, p = 2 * 0.5**7; Holm over the two metrics doubles it.
    assert table.loc[STRICT, ["difference", "p_value", "adjusted_p_value"]].tolist() == [0.875, 0.015625, 0.03125]
    assert bool(table.loc[STRICT, "significant"]) and table.loc[STRICT, "winner"] == "head"
    assert table.loc[FLEXIBLE, "difference"] == 0.25 and not bool(table.loc[FLEXIBLE, "significant"])


def test_a_doc_seen_again_under_a_filter_is_the_next_trial(tmp_path):
    both = write_lines(tmp_path / SMALL.name, lines(SMALL) + lines(LARGE))  # two runs' samples, one file
    run = read_lm_eval_samples(both)
    assert len(run.results) == 16 and run.config.trials == 2 and run.dataset.cases == 8
    assert [(r.case.input, r.trial) for r in run.results[:4]] == [
        (QUESTIONS[0], 0), (QUESTIONS[0], 1), (QUESTIONS[1], 0), (QUESTIONS[1], 1)]
    assert [r.output for r in run.results[2:4]] == ["[invalid]", "42"]
    assert run.aggregated[STRICT].mean == 9 / 16
    assert run.metadata["results_file"] is None and run.name is None  # no results file beside this one


def test_without_a_results_file_the_file_name_says_task_and_time(tmp_path):
    run = read_lm_eval_samples(shutil.copy(SMALL, tmp_path))
    assert run.metadata == {"source": "lm-eval", "task": "cogeval_arith", "model": None, "num_fewshot": None,
                            "task_version": None, "samples_file": SMALL.name, "results_file": None, "lm_eval": None}
    assert run.config.target == {"type": "lm-eval", "model": None, "task": "cogeval_arith"}
    assert run.started_at == "2026-12-01T10:00:00.000Z" and math.isnan(run.stats.duration)
    assert run.directions == {STRICT: True, FLEXIBLE: True}


def test_results_can_be_given_and_task_too(tmp_path):
    mine = shutil.copy(SMALL, tmp_path / "mine.jsonl")
    assert error_of(mine, results=SMALL_RESULTS) == (
        f"lm-eval samples file '{mine}' does not say its task (its name is not samples_<task>_<date>.jsonl) and "
        f"results file '{SMALL_RESULTS}' has several: ['cogeval_arith', 'cogeval_mc']; pass task=")
    run = read_lm_eval_samples(mine, results=SMALL_RESULTS, task="cogeval_arith")
    assert run.name == "acme/small-v1" and run.metadata["samples_file"] == "mine.jsonl"
    assert error_of(mine, results=SMALL_RESULTS, task="gsm8k") == (
        f"lm-eval results file '{SMALL_RESULTS}' has no task 'gsm8k' (its tasks: ['cogeval_arith', 'cogeval_mc']); "
        f"pass the results file of the run that wrote lm-eval samples file '{mine}'")
    with pytest.raises(InputError) as caught:
        read_lm_eval_samples(mine, task="")
    assert str(caught.value) == "task must be a task name (a non-empty string); got ''"


def results_with(tmp_path, change) -> pathlib.Path:
    folder = tmp_path / "run"
    shutil.copytree(SMALL_DIR, folder)
    path = folder / SMALL_RESULTS.name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder / SMALL.name


def test_directions_are_the_results_files(tmp_path):
    def lower_is_better(data):
        data["higher_is_better"]["cogeval_arith"]["exact_match"] = False
    assert read_lm_eval_samples(results_with(tmp_path, lower_is_better)).directions == {STRICT: False, FLEXIBLE: False}


def test_directions_fall_back_on_the_task_config(tmp_path):
    def only_in_config(data):
        del data["higher_is_better"]
        data["configs"]["cogeval_arith"]["metric_list"][0]["higher_is_better"] = False
    assert read_lm_eval_samples(results_with(tmp_path, only_in_config)).directions == {STRICT: False, FLEXIBLE: False}


def test_values_that_are_not_numbers_score_nan_and_say_why(tmp_path):
    objects = lines(SMALL)[:2]
    objects[0]["metrics"], objects[0]["bleu"] = ["exact_match", "bleu"], [["5"], "5"]  # a corpus metric's pair
    objects[1]["exact_match"] = None
    path = tmp_path / SMALL.name
    path.write_text(json.dumps(objects[0]) + "\n" + json.dumps(objects[1]).replace("null", "NaN") + "\n")
    run = read_lm_eval_samples(path)
    assert run.metric_names == ["exact_match", "bleu"]
    bleu = run.results[0].scores[1]
    assert math.isnan(bleu.score) and bleu.details["value"] == [["5"], "5"]
    assert bleu.error == ("not a number: lm-eval aggregates this metric over the whole task "
                          "(its value is in details, the task's in the run's metadata)")
    assert run.results[1].scores[0].error == "lm-eval logged nan, not a finite number"
    assert run.results[1].scores[1].error == "lm-eval logged no 'bleu' under filter 'strict-match' for this doc"


def test_a_run_saves_and_loads_unchanged(tmp_path):
    run = read_lm_eval_samples(SMALL_MC)
    assert load_run(run.save(tmp_path / "runs/")) == run


# -- refusing bad input -----------------------------------------------------------------------------------


def test_a_missing_file():
    with pytest.raises(FileNotFoundError):
        read_lm_eval_samples(FIXTURES / "nothing.jsonl")
    with pytest.raises(FileNotFoundError):
        read_lm_eval_samples(SMALL, results=FIXTURES / "nothing.json")


def bad_line(tmp_path, number: int, text: str) -> pathlib.Path:
    texts = SMALL.read_text(encoding="utf-8").splitlines()
    texts[number - 1] = text
    path = tmp_path / SMALL.name
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return path


def changed_line(tmp_path, number: int, change) -> pathlib.Path:
    data = lines(SMALL)[number - 1]
    change(data)
    return bad_line(tmp_path, number, json.dumps(data))


@pytest.mark.parametrize(("number", "text", "message"), [
    (2, "{bad", "line 2 is not valid JSON: column 2: Expecting property name enclosed in double quotes"),
    (3, "[1, 2]", "line 3 must hold a JSON object; got an array"),
    (4, '{"doc_id": 3, "doc": {}, "a": [' + "[" * 100 + "]" * 100 + "]}",
     ": a[0][0][0][0][0]…: nested deeper than 100 levels (line 4 column 130)"),
])
def test_a_line_that_is_not_a_json_object(tmp_path, number, text, message):
    path = bad_line(tmp_path, number, text)
    assert error_of(path) == f"lm-eval samples file '{path}'{message if message[0] == ':' else ' ' + message}"


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("filter"), "line 3 has no 'filter' field (lm-eval --log_samples output has doc_id, doc, target, "
                                "filtered_resps, filter, metrics on every line)"),
    (lambda d: d.pop("exact_match"), "line 3 lists metric 'exact_match' in 'metrics' but has no 'exact_match' field"),
    (lambda d: d.update(doc_id=-1), "line 3: doc_id must be an integer >= 0; got -1"),
    (lambda d: d.update(doc_id="2"), "line 3: doc_id must be an integer >= 0; got '2'"),
    (lambda d: d.update(filter=""), "line 3: filter must be a filter name (a non-empty string); got ''"),
    (lambda d: d.update(metrics="exact_match"), "line 3: metrics must be a list of metric names; got 'exact_match'"),
    (lambda d: d.update(doc_id=0), "line 3: doc_id 0 has another doc than on line 1 (samples of two tasks or datasets in one file?)"),
])
def test_a_line_missing_or_misshaping_a_field(tmp_path, change, message):
    path = changed_line(tmp_path, 3, change)
    assert error_of(path) == f"lm-eval samples file '{path}' {message}"


def test_empty_and_binary_files(tmp_path):
    empty = tmp_path / "samples_t_2026.jsonl"
    empty.write_text("\n\n")
    assert error_of(empty) == (f"lm-eval samples file '{empty}' is empty; expected lm-eval --log_samples output: one JSON "
                               "object per line with doc_id, doc, target, filtered_resps, filter and metrics")
    binary = tmp_path / "samples_t_2027.jsonl"
    binary.write_bytes(b'{"doc_id": 0, "doc": "\xff"}\n')
    assert error_of(binary) == f"lm-eval samples file '{binary}' is not UTF-8 text (invalid start byte at byte 22)"


def wrong_kind(tmp_path, data, name="samples_t_2026.jsonl") -> tuple[pathlib.Path, str]:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data, encoding="utf-8")
    return path, error_of(path)


@pytest.mark.parametrize(("source", "kind"), [
    (pathlib.Path(__file__).parents[1] / "data" / "fixtures" / "runs" / "minimal.json",
     "looks like a cogeval run file (read it with cogeval.load_run)"),
    (FIXTURES.parent / "ag2" / "mini.json",
     "looks like an AG2 ag2.eval run file (read it with cogeval.importers.read_ag2_run)"),
    (SMALL_RESULTS, "looks like an lm-eval results file (aggregated scores only; pass the samples_<task>_<date>.jsonl beside it)"),
])
def test_a_file_of_another_kind_is_refused_by_name(source, kind):
    assert error_of(source) == f"lm-eval samples file '{source}' {kind}, not lm-eval --log_samples output"


@pytest.mark.parametrize(("data", "what"), [
    ({"version": 2, "status": "success", "eval": {"task": "t"}, "samples": []},
     "looks like an Inspect AI log (read it with cogeval.importers.read_inspect_log)"),
    ({"evalId": "eval-1", "results": {"version": 3, "prompts": [], "results": []}},
     "looks like a promptfoo output (read it with cogeval.importers.read_promptfoo)"),
    ({"a": 1, "b": [2]}, "is not lm-eval --log_samples output (one JSON object per line with doc_id, doc, target, "
                         "filtered_resps, filter and metrics); its first object has keys ['a', 'b']"),
    ([1, 2], "is not lm-eval --log_samples output (one JSON object per line with doc_id, doc, target, "
             "filtered_resps, filter and metrics); it holds an array"),
    ('{"x": 1}\n{"x": 2}\n', "is not lm-eval --log_samples output (one JSON object per line with doc_id, doc, target, "
                             "filtered_resps, filter and metrics); its first object has keys ['x']"),
])
def test_other_json_is_refused_saying_what_it_looks_like(tmp_path, data, what):
    path, message = wrong_kind(tmp_path, data)
    suffix = ", not lm-eval --log_samples output" if what.startswith("looks like") else ""
    assert message == f"lm-eval samples file '{path}' {what}{suffix}"


def test_a_results_file_of_another_kind_is_refused(tmp_path):
    other = tmp_path / "results.json"
    other.write_text(json.dumps({"format": "cogitator.eval-run", "version": 1}))
    assert error_of(SMALL, results=other) == (
        f"lm-eval results file '{other}' looks like a cogeval run file (read it with cogeval.load_run), "
        "not an lm-eval results_<date>.json")
    other.write_text("{")
    assert error_of(SMALL, results=other) == (
        f"lm-eval results file '{other}' is not valid JSON: line 1 column 2: Expecting property name enclosed in double quotes")


def test_the_detector_names_lm_evals_samples_only():
    assert _looks_like(lines(SMALL)[0]) == "lm-eval"
    assert _looks_like(json.loads(SMALL_RESULTS.read_text(encoding="utf-8"))) is None  # the results: no per-doc scores
    assert _looks_like({"format": "cogitator.eval-run"}) is None and _looks_like([1]) is None


def test_a_direction_neither_file_gives_is_assumed_and_recorded_so(tmp_path):
    def no_direction(data):
        del data["higher_is_better"]
        del data["configs"]["cogeval_arith"]["metric_list"][0]["higher_is_better"]
    run = read_lm_eval_samples(results_with(tmp_path, no_direction))
    assert [(m.higher_is_better, m.direction_assumed) for m in run.config.metrics] == [(True, True), (True, True)]
    given = read_lm_eval_samples(results_with(tmp_path / "given", lambda data: None))
    assert not any(m.direction_assumed for m in given.config.metrics)
