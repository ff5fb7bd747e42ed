"""read_promptfoo: promptfoo's `promptfoo eval -o results.json` output as runs, on files made by promptfoo 0.121.20.

Fixtures (tests/importers/fixtures/promptfoo/README.md says how to make them again):
- two-prompts.json: prompts `terse` and `verbose` × the echo provider × 5 tests, `--repeat 2`;
- providers.json: one unlabelled prompt × the echo provider and a local flaky one (tokens, cost, errors) × 3 tests.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import pathlib

import pytest

import cogeval
from cogeval.data import Case, load_run
from cogeval.errors import InputError, RunFileError
from cogeval.importers.promptfoo import _looks_like, read_promptfoo

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "promptfoo"
TWO_PROMPTS = FIXTURES / "two-prompts.json"
PROVIDERS = FIXTURES / "providers.json"
FRANCE = {"question": "What is the capital of France?", "topic": "geography"}
SAY_HI = {"question": "Say hi", "topic": "greeting"}
RIVER = {"question": "Name a river in Egypt", "topic": "geography"}
THROWS = {"question": "What is 2+2?", "topic": "arithmetic"}


@pytest.fixture(scope="module")
def two() -> list[cogeval.EvalRun]:
    return read_promptfoo(TWO_PROMPTS)


@pytest.fixture(scope="module")
def providers() -> list[cogeval.EvalRun]:
    return read_promptfoo(PROVIDERS)


def scores(run, vars_, metric, occurrence=0):
    """The scores of one case's trials, in trial order."""
    key = Case(vars_).key
    return [s.score for r in run.results if r.case_key == key and r.occurrence == occurrence
            for s in r.scores if s.metric == metric]


def score_record(run, vars_, metric, trial=0):
    key = Case(vars_).key
    result = next(r for r in run.results if r.case_key == key and r.trial == trial)
    return next(s for s in result.scores if s.metric == metric)


# -- one run per prompt × provider ---------------------------------------------------------------


def test_one_run_per_prompt_and_provider_in_file_order(two, providers):
    assert [r.name for r in two] == ["terse / echo", "verbose / echo"]
    assert [r.run_id for r in two] == ["20261201T011707982Z-a3ac9736", "20261201T011707982Z-e02027ef"]
    assert [r.name for r in providers] == ["prompt 6ee0d7b6b1f3 / echo", "prompt 6ee0d7b6b1f3 / flaky"]


def test_run_ids_are_the_same_on_every_read(two):
    assert [r.run_id for r in read_promptfoo(TWO_PROMPTS)] == [r.run_id for r in two]


def test_cases_trials_and_occurrences(two):
    terse = two[0]
    assert terse.dataset.cases == 5 and terse.config.trials == 2 and len(terse.results) == 20 // 2
    assert [(r.case.input, r.occurrence, r.trial) for r in terse.results] == [
        (FRANCE, 0, 0), (FRANCE, 0, 1), (SAY_HI, 0, 0), (SAY_HI, 0, 1), (RIVER, 0, 0), (RIVER, 0, 1),
        (THROWS, 0, 0), (THROWS, 0, 1), (FRANCE, 1, 0), (FRANCE, 1, 1),  # the 5th test repeats the 1st's vars
    ]
    assert two[0].fingerprint == two[1].fingerprint


def test_a_tests_own_repeat_and_its_var_combinations(providers):
    echo = providers[0]
    assert [(r.case.input, r.trial) for r in echo.results] == [
        ({"city": "Paris"}, 0), ({"city": "Rome"}, 0), ({"city": "Atlantis"}, 0), ({"city": "Atlantis"}, 1),
        ({"city": "Lemuria"}, 0),
    ]
    assert echo.dataset.cases == 4 and echo.config.trials == 2


def test_metrics_and_directions(two):
    assert two[0].metric_names == ["pass", "score", "mentions_topic", "brevity"]
    assert two[0].directions == {"pass": True, "score": True, "mentions_topic": True, "brevity": True,
                                 "latency": False, "cost": False, "token_usage": False}
    assert [m.params for m in two[0].config.metrics] == [
        {"promptfoo": "success"}, {"promptfoo": "score"},
        {"promptfoo": "namedScores", "name": "mentions_topic"}, {"promptfoo": "namedScores", "name": "brevity"},
    ]


def test_exact_scores_of_named_cases(two):
    terse, verbose = two
    assert scores(terse, SAY_HI, "pass") == [1.0, 1.0]  # equals "Answer briefly: Say hi"
    assert scores(verbose, SAY_HI, "pass") == [0.0, 0.0]
    assert scores(terse, FRANCE, "brevity") == [40 / 46, 40 / 46]  # Math.min(1, 40 / output.length)
    assert scores(verbose, FRANCE, "brevity") == [40 / 98, 40 / 98]
    assert scores(terse, FRANCE, "score") == [(1 + 40 / 46) / 2] * 2
    assert scores(terse, RIVER, "score") == [1 / 3, 1 / 3]  # icontains "nile" (weight 2) fails, contains passes
    assert scores(terse, THROWS, "brevity") == [0.0, 0.0]  # promptfoo scores an assertion that throws 0
    assert scores(terse, FRANCE, "mentions_topic", occurrence=1) == [1.0, 1.0]


def test_means_are_promptfoos_column_totals(two):
    for run in two:
        totals = run.metadata["column_metrics"]
        assert run.aggregated["pass"].mean == totals["testPassCount"] / 10
        assert run.aggregated["score"].mean == pytest.approx(totals["score"] / 10)
        assert run.aggregated["brevity"].mean == pytest.approx(totals["namedScores"]["brevity"] / 6)


def test_a_metric_a_test_does_not_score_is_nan_with_the_reason(two, providers):
    missing = score_record(two[0], SAY_HI, "mentions_topic")
    assert math.isnan(missing.score)
    assert missing.error == "not scored: the test has no assertion with this metric"
    errored = score_record(providers[1], {"city": "Atlantis"}, "names_city")
    assert math.isnan(errored.score) and errored.error == "not scored: the test errored"


def test_grading_details(two):
    failed = score_record(two[1], SAY_HI, "pass")
    assert failed.details == {"reason": 'Expected output "You are a helpful geography tutor. Question: Say hi '
                                        'Please answer in full." to equal "Answer briefly: Say hi"'}
    grading = score_record(two[0], THROWS, "score").details
    assert grading["componentResults"][0]["reason"].startswith("Custom function threw error: grader exploded\n")
    assert score_record(two[0], FRANCE, "brevity").details == {"weight": 1}


def test_outputs_durations_and_usage(providers):
    echo, flaky = providers
    paris = flaky.results[0]
    assert (paris.output, paris.error, paris.duration) == ("WHERE IS PARIS?", None, 2.0)  # latencyMs, as the file
    assert (paris.usage.input_tokens, paris.usage.output_tokens, paris.usage.cost) == (12, 9, 0.00042)
    assert (echo.results[0].usage.input_tokens, echo.results[0].usage.cost) == (0, 0.0)
    assert flaky.stats.total == 5 and flaky.stats.errors == 3 and flaky.stats.cost == pytest.approx(0.00084)


def test_provider_errors_are_the_results_error(providers):
    flaky = providers[1]
    atlantis, lemuria = flaky.results[2], flaky.results[4]
    assert (atlantis.output, atlantis.error) == ("", "API error: 503 Service Unavailable")
    assert lemuria.error.startswith("Error: connection reset by peer\n    at FlakyProvider.callApi")
    assert (atlantis.usage.input_tokens, atlantis.usage.output_tokens) == (None, None)
    assert [s.score for s in atlantis.scores][:2] == [0.0, 0.0]  # promptfoo's success and score, as it counts them
    assert score_record(flaky, {"city": "Atlantis"}, "pass").details is None


def test_assertion_failures_are_not_target_errors(two):
    assert [r.error for r in two[1].results] == [None] * 10


def test_case_metadata_holds_the_test(two, providers):
    france = two[0].results[0].case.metadata
    assert france == {
        "difficulty": "easy", "description": "capital of France",
        "assert": [{"type": "contains", "value": "France", "metric": "mentions_topic"},
                   {"type": "javascript", "value": "Math.min(1, 40 / output.length)", "metric": "brevity"}],
    }
    lemuria = providers[0].results[4].case.metadata
    assert lemuria["options"] == {"provider": {"id": "echo", "config": {"apiKey": "[redacted]"}}}


def test_run_metadata_and_target(two, providers):
    terse = two[0]
    assert terse.metadata["prompt"] == {
        "label": "terse", "id": "22ae9df4ee0c428c0d8b81b6db27dbf8aa18229b014fd9bc9c81609ba2222ed7",
        "sha256": hashlib.sha256(b"Answer briefly: {{question}}").hexdigest(),
    }
    assert terse.metadata["provider"] == {"id": "echo", "label": "echo"}
    assert (terse.metadata["source"], terse.metadata["eval_id"]) == ("promptfoo", "eval-H3U-2026-12-01T01:17:07")
    assert terse.metadata["promptfoo"]["promptfooVersion"] == "0.121.20"
    assert terse.config.target == {"type": "promptfoo", "provider": "echo", "providerLabel": "echo",
                                   "prompt": "terse", "promptId": terse.metadata["prompt"]["id"]}
    assert providers[1].config.target["provider"] == "file://flaky_provider.js"
    assert list(terse.prompts) == ["terse"]
    # results.timestamp, and that plus results.stats.durationMs (157)
    assert (terse.started_at, terse.finished_at) == ("2026-12-01T01:17:07.982Z", "2026-12-01T01:17:08.139Z")


def test_no_prompt_text_and_no_secret_is_copied(two, providers):
    text = json.dumps([r.to_dict() for r in [*two, *providers]])
    assert "Answer briefly: {{question}}" not in text and "Where is {{city}}?" not in text
    assert "sk-test" not in text and '"apiKey": "[redacted]"' in text
    assert providers[0].metadata["prompt"]["label"] is None  # promptfoo's default label is the prompt's text


def test_the_rest_of_each_record_is_kept(two):
    extra = two[0].results[0].model_extra["promptfoo"]
    assert set(extra) == {"id", "tokenUsage", "testIdx", "promptIdx", "failureReason", "response", "metadata"}
    assert extra["response"] == {"raw": "Answer briefly: What is the capital of France?", "cached": False,
                                 "isRefusal": False, "metadata": {}}


def test_runs_compare_save_and_load(two, tmp_path):
    comparison = cogeval.compare_runs(*two)
    frame = comparison.to_frame().set_index("metric")
    assert frame.loc["pass", ["base", "head", "n"]].tolist() == [0.6, 0.4, 5]
    # brevity pairs the 3 cases both runs score: France (occurrence 0), "Say hi" and the throwing one (0 and 0)
    assert frame.loc["brevity", "difference"] == pytest.approx(((40 / 98 - 40 / 46) + (40 / 74 - 1) + 0) / 3)
    assert frame.loc["brevity", "n"] == 3 and frame.loc["mentions_topic", "difference"] == 0
    assert frame.loc["score", "difference"] < 0
    assert "Prompt 'terse' is only in the base run" in comparison.warnings
    path = two[0].save(tmp_path / "runs/")
    assert load_run(path) == two[0]


def test_compare_providers(providers):
    frame = cogeval.compare_runs(*providers).to_frame().set_index("metric")
    assert frame.loc["pass", ["base", "head", "n"]].tolist() == [1.0, 0.5, 4]
    assert frame.loc["token_usage", "difference"] == 21


# -- choosing runs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "provider", "names"), [
    ("verbose", None, ["verbose / echo"]),
    ("fd343ae984ebf3846937a62224820fcdfc62b7b3666a18213da0e56e5363d27d", None, ["verbose / echo"]),
    (hashlib.sha256(b"Answer briefly: {{question}}").hexdigest(), "echo", ["terse / echo"]),
])
def test_prompt_and_provider_choose_runs(prompt, provider, names):
    assert [r.name for r in read_promptfoo(TWO_PROMPTS, prompt=prompt, provider=provider)] == names


@pytest.mark.parametrize("provider", ["flaky", "file://flaky_provider.js"])
def test_provider_by_label_or_id(provider):
    assert [r.name for r in read_promptfoo(PROVIDERS, provider=provider)] == ["prompt 6ee0d7b6b1f3 / flaky"]


def test_a_choice_that_matches_nothing_lists_the_choices():
    with pytest.raises(InputError) as error:
        read_promptfoo(TWO_PROMPTS, prompt="v3")
    assert str(error.value) == f"prompt='v3' matches no prompt of promptfoo file '{TWO_PROMPTS}'; its prompts are ['terse', 'verbose']"
    with pytest.raises(InputError) as error:
        read_promptfoo(TWO_PROMPTS, provider="openai:gpt-4o")
    assert str(error.value) == f"provider='openai:gpt-4o' matches no provider of promptfoo file '{TWO_PROMPTS}'; its providers are ['echo']"


# -- recognising and refusing files ----------------------------------------------------------------


def test_looks_like():
    assert _looks_like(json.loads(TWO_PROMPTS.read_text())) == "promptfoo"
    assert _looks_like(json.loads(PROVIDERS.read_text())) == "promptfoo"
    for other in ({"format": "cogitator.eval-run", "version": 1}, {"eval": {}, "samples": []}, {"results": {}}, [], None):
        assert _looks_like(other) is None


def write(tmp_path, data, name="results.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def error_of(path):
    with pytest.raises(RunFileError) as error:
        read_promptfoo(path)
    return str(error.value).replace(str(path), "F")


def test_files_of_other_kinds_are_refused_by_what_they_look_like(two, tmp_path):
    run_file = two[0].save(tmp_path / "runs/")
    assert error_of(run_file) == "promptfoo file 'F' looks like a cogeval run file; read it with load_run"
    inspect_log = {"version": 2, "status": "success", "eval": {"task": "popularity"}, "samples": []}
    assert error_of(write(tmp_path, inspect_log)) == "promptfoo file 'F' looks like an Inspect AI log"
    harness = {"results": {"hellaswag": {"acc,none": 0.5}}, "configs": {}, "versions": {}}
    assert error_of(write(tmp_path, harness)) == "promptfoo file 'F' looks like lm-evaluation-harness results"
    config = {"prompts": ["Hi {{name}}"], "providers": ["echo"], "tests": []}
    assert error_of(write(tmp_path, config)) == (
        "promptfoo file 'F' looks like a promptfoo config, not its output; "
        "run `promptfoo eval -c CONFIG -o results.json` and read that")
    assert error_of(write(tmp_path, {"a": 1, "b": [2]})) == (
        "promptfoo file 'F' is not promptfoo eval output: expected an object with 'results.prompts' and "
        "'results.results' (what `promptfoo eval -o results.json` writes); got keys ['a', 'b']")
    assert error_of(write(tmp_path, [1, 2])) == "promptfoo file 'F' must hold a JSON object (promptfoo's eval output); got an array"


def test_unreadable_files(tmp_path):
    assert error_of(write(tmp_path, '{"results": ')) == (
        "promptfoo file 'F' is not valid JSON: line 1 column 13: Expecting value")
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"a": "caf\xe9"}')
    assert error_of(bad) == "promptfoo file 'F' is not UTF-8 text (invalid continuation byte at byte 10)"
    record = json.loads(TWO_PROMPTS.read_text())["results"]["results"][0]
    jsonl = write(tmp_path, json.dumps(record) + "\n" + json.dumps(record) + "\n", "results.jsonl")
    assert error_of(jsonl).endswith("; it looks like promptfoo's JSONL output, write JSON with -o results.json")
    with pytest.raises(FileNotFoundError):
        read_promptfoo(tmp_path / "missing.json")


def broken(change):
    data = json.loads(TWO_PROMPTS.read_text())
    change(data)
    return data


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["results"]["results"][3].update(success="yes"),
     "is invalid: results.results[3].success: expected true or false; got 'yes'"),
    (lambda d: d["results"]["results"][0].pop("testIdx"),
     "is invalid: results.results[0].testIdx: expected an integer >= 0; got None"),
    (lambda d: d["results"]["results"][0].update(promptIdx=2),
     "is invalid: results.results[0].promptIdx: expected an index of results.prompts (0 to 1); got 2"),
    (lambda d: d["results"]["results"][5].update(namedScores={"brevity": "high"}),
     "is invalid: results.results[5].namedScores: expected an object of numbers; got {'brevity': 'high'}"),
    (lambda d: d["results"]["results"][1].update(latencyMs=-3),
     "is invalid: results.results[1].latencyMs: expected a number of milliseconds >= 0; got -3"),
    (lambda d: d["results"]["results"][2]["testCase"].update(vars=["q"]),
     "is invalid: results.results[2].testCase.vars: expected an object of the test's variables; got ['q']"),
    (lambda d: d["results"]["results"][2].update(testCase="q"),
     "is invalid: results.results[2].testCase: expected an object; got 'q'"),
    (lambda d: d["results"]["results"][0]["response"]["tokenUsage"].update(prompt=1.5),
     "is invalid: results.results[0].response.tokenUsage.prompt: expected a whole number >= 0; got 1.5"),
    (lambda d: d["results"]["results"].append(copy.deepcopy(d["results"]["results"][0])),
     "is invalid: results.results[20] repeats testIdx 0 of promptIdx 0 (results.results[0])"),
    (lambda d: d["results"]["prompts"][1].pop("raw"),
     "is invalid: results.prompts[1].raw: expected the prompt template (a string); got None"),
    (lambda d: (d["results"].update(timestamp="yesterday"), d["metadata"].pop("evaluationCreatedAt")),
     "is invalid: results.timestamp: expected an ISO 8601 time such as '2026-10-22T10:15:30.123Z'; got 'yesterday'"),
    (lambda d: d["results"]["results"][0].update(score=float("nan")),
     "is invalid: results.results[0].score: NaN is not a JSON number; write null for a missing number"),
])
def test_malformed_files_name_the_field(tmp_path, change, message):
    assert error_of(write(tmp_path, json.dumps(broken(change)))) == f"promptfoo file 'F' {message}"


def test_missing_optional_fields_are_unknown(tmp_path):
    def strip(data):
        for record in data["results"]["results"]:
            for key in ("latencyMs", "cost", "response", "namedScores", "gradingResult", "failureReason", "metadata"):
                record.pop(key, None)
    terse = read_promptfoo(write(tmp_path, broken(strip)))[0]
    first = terse.results[0]
    assert (first.output, first.error, math.isnan(first.duration), math.isnan(first.usage.cost)) == ("", None, True, True)
    assert terse.metric_names == ["pass", "score"]


def test_trials_come_from_the_configs_repeat_when_the_run_options_are_missing(tmp_path):
    def config_repeat(data):
        del data["runtimeOptions"]
        data["config"]["evaluateOptions"] = {"repeat": 2}
    terse = read_promptfoo(write(tmp_path, broken(config_repeat)))[0]
    assert [(r.occurrence, r.trial) for r in terse.results][-4:] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    without = read_promptfoo(write(tmp_path, broken(lambda d: d.pop("runtimeOptions"))))[0]
    assert [(r.occurrence, r.trial) for r in without.results][:4] == [(0, 0), (1, 0), (0, 0), (1, 0)]


def test_a_named_score_called_like_a_builtin_metric_is_renamed(tmp_path):
    def rename(data):
        for record in data["results"]["results"]:
            record["namedScores"] = {("pass" if k == "brevity" else k): v for k, v in record["namedScores"].items()}
    terse = read_promptfoo(write(tmp_path, broken(rename)))[0]
    assert terse.metric_names == ["pass", "score", "mentions_topic", "pass_named"]
    assert terse.config.metrics[3].params == {"promptfoo": "namedScores", "name": "pass"}
    assert scores(terse, FRANCE, "pass_named") == [40 / 46, 40 / 46]


def test_secrets_anywhere_in_a_record_are_redacted(tmp_path):
    def leak(data):
        data["results"]["results"][0]["response"]["metadata"] = {"headers": {"Authorization": "Bearer sk-live-1"}}
        data["results"]["results"][0]["testCase"]["options"] = {"provider": {"config": {"api_key": "sk-live-2"}}}
    runs = read_promptfoo(write(tmp_path, broken(leak)))
    text = json.dumps([r.to_dict() for r in runs])
    assert "sk-live" not in text
    first = next(r for r in runs[0].results if r.model_extra["promptfoo"]["response"]["metadata"])
    assert first.model_extra["promptfoo"]["response"]["metadata"] == {"headers": {"Authorization": "[redacted]"}}
