"""LLM judges against a real local chat-completions server (tests/chat_server.py): parsing, faults, cache, samples."""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
import time

import chat_server
import pytest
from chat_server import completion, error, malformed

from cogeval import JudgeConfig, correctness, faithfulness, llm_metric, relevance
from cogeval.data import Case
from cogeval.errors import InputError
from cogeval.scoring.judge import RESPONSE_FORMAT, JudgeError, Judgement, judge_usage_totals, parse_judgement

CASE = Case("Capital of France?", expected="Paris", context=["France's capital is Paris.", "Lyon is in France."])
SECRET = chat_server.JUDGE_KEY


make_judge = functools.partial(chat_server.make_judge, retries=2)


def judged(metric, judge, output="Paris", case=CASE):
    return asyncio.run(metric.ascore(output, case, judge=judge))


# -- answers the judge gives -------------------------------------------------------------------


def test_structured_json_answer_is_normalised_and_the_request_asks_for_json_schema(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 4, "reasoning": "Right city."}'))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert (score.value, score.error) == (0.75, None)
    assert score.details["reasoning"] == "Right city." and score.details["raw_score"] == 4.0
    [body] = chat_server.requests
    assert body["model"] == "judge-model" and body["temperature"] == 0.0 and "max_tokens" not in body
    assert body["response_format"] == RESPONSE_FORMAT
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["score", "reasoning"]
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    prompt = user["content"]
    for shown in ("<input>\nCapital of France?\n</input>", "<expected>\nParis\n</expected>",
                  "<context>\nFrance's capital is Paris.\n\nLyon is in France.\n</context>",
                  "<response>\nParis\n</response>", "from 1 to 5", '{"score"', '"reasoning"'):
        assert shown in prompt
    assert chat_server.calls[0].headers["authorization"] == f"Bearer {SECRET}"


def test_missing_expected_and_context_are_shown_as_na(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 1, "reasoning": "fine"}'))
    score = judged(llm_metric("polite", "Is it polite?"), make_judge(chat_server, tmp_path), "Hi!", Case("Say hi"))
    assert score.value == 1.0
    prompt = chat_server.requests[0]["messages"][1]["content"]
    assert "<expected>\nN/A\n</expected>" in prompt and "<context>\nN/A\n</context>" in prompt
    assert "Criterion: Is it polite?" in prompt and "from 0 to 1" in prompt


def test_fenced_json_answer(chat_server, tmp_path):
    chat_server.enqueue(completion('Here is my verdict:\n```json\n{"score": 2, "reasoning": "Vague."}\n```'))
    score = judged(relevance(), make_judge(chat_server, tmp_path))
    assert (score.value, score.details["reasoning"]) == (0.25, "Vague.")


def test_prose_answer_with_score_over_n(chat_server, tmp_path):
    chat_server.enqueue(completion("The answer names the right city but adds nothing.\nScore: 4/5"))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert score.value == 0.75 and score.error is None
    assert score.details["reasoning"].startswith("The answer names the right city")


def test_garbage_answer_is_nan_with_an_error_never_zero(chat_server, tmp_path):
    chat_server.enqueue(completion("I am not able to evaluate this."))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert math.isnan(score.value)
    assert score.error == ("metric 'correctness' judge answer has no score (expected JSON "
                           "{\"score\": ..., \"reasoning\": ...}, 'score: X' or 'X/N'): 'I am not able to evaluate this.'")
    assert score.details["answer"] == "I am not able to evaluate this."
    assert score.details["judge_usage"]["calls"] == 1


@pytest.mark.parametrize("answer, problem", [
    ('{"score": 9, "reasoning": "great"}', "judge score 9 is outside the scale 1 to 5"),
    ("Score: 8/10", "judge answered 8/10; expected a score on the scale 1 to 5"),
    ('{"score": "excellent"}', "judge answer's score is not a number: 'excellent'"),
    (None, "judge answer is empty: ''"),
])
def test_unusable_scores_are_errors(chat_server, tmp_path, answer, problem):
    chat_server.enqueue(completion(answer))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert math.isnan(score.value) and score.error == f"metric 'correctness' {problem}"


@pytest.mark.parametrize("text, expected", [
    ('{"score": 0.8, "reasoning": "close"}', Judgement(0.8, None, "close")),
    ('  {"Score": 3, "Reasoning": "ok"}\n', Judgement(3.0, None, "ok")),
    ('```\n{"score": 5, "reasoning": "x"}\n```', Judgement(5.0, None, "x")),
    ('Sure! {"score": 2, "reasoning": "thin"} Hope that helps.', Judgement(2.0, None, "thin")),
    ('{"score": "4/5", "reasoning": "r"}', Judgement(4.0, 5.0, "r")),
    ('{"score": "4"}', Judgement(4.0, None, "")),
    ("First I thought score: 2, but on reflection **Score:** 4/5", None),
    ("Final score = 3.5", Judgement(3.5, None, "Final score = 3.5")),
    ("Overall I rate it 3/5.", Judgement(3.0, 5.0, "Overall I rate it 3/5.")),
])
def test_parse_judgement(text, expected):
    found = parse_judgement(text)
    if expected is None:  # the last labelled score wins
        assert (found.score, found.out_of) == (4.0, 5.0)
    else:
        assert found == expected


@pytest.mark.parametrize("text", ["", "   ", "no numbers here", "on 2024/01/02 it was fine", '{"reasoning": "no score"}'])
def test_parse_judgement_refuses_answers_without_a_score(text):
    with pytest.raises(JudgeError):
        parse_judgement(text)


def test_non_finite_json_score_is_refused():
    with pytest.raises(JudgeError, match="not a number: nan"):
        parse_judgement('{"score": NaN}')


# -- faults: retries, timeouts, structured output ----------------------------------------------


def test_429_then_success_honours_retry_after(chat_server, tmp_path):
    chat_server.enqueue(error(429, "slow down", retry_after=0.3), completion('{"score": 5, "reasoning": "ok"}'))
    started = time.perf_counter()
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert time.perf_counter() - started >= 0.3
    assert score.value == 1.0 and score.details["judge_usage"]["calls"] == 2
    assert len(chat_server.requests) == 2


def test_500s_after_every_retry_give_nan_and_the_error(chat_server, tmp_path):
    chat_server.enqueue(error(500, "boom"), error(502, "boom"), error(503, "boom"))
    score = judged(correctness(), make_judge(chat_server, tmp_path, retries=2))
    assert math.isnan(score.value)
    assert score.error.startswith("metric 'correctness' judge call failed after 3 attempts: InternalServerError: Error code: 503")
    assert len(chat_server.requests) == 3 and score.details["judge_usage"]["calls"] == 3


def test_client_errors_are_not_retried(chat_server, tmp_path):
    chat_server.enqueue(error(401, "bad key"))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert score.error.startswith("metric 'correctness' judge call failed after 1 attempt: AuthenticationError")
    assert len(chat_server.requests) == 1


def test_the_judge_client_is_created_before_the_first_calls_deadline(chat_server, tmp_path, cold_client):
    chat_server.enqueue(completion('{"score": 4, "reasoning": "Right city."}'))
    score = judged(correctness(), make_judge(chat_server, tmp_path, timeout=2.0, retries=0))
    assert score.error is None and cold_client == ["client", "deadline"]


def test_slow_answer_past_the_timeout(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 5, "reasoning": "late"}', delay=30.0))
    started = time.perf_counter()
    score = judged(correctness(), make_judge(chat_server, tmp_path, timeout=0.5, retries=0))
    assert time.perf_counter() - started < 15  # the answer comes at 30 s: the timeout, not the server, ended the call
    assert math.isnan(score.value)
    assert score.error == "metric 'correctness' judge call failed after 1 attempt: timed out after 0.5 s"


def test_malformed_body_is_retried_then_an_error(chat_server, tmp_path):
    chat_server.enqueue(malformed(), malformed())
    score = judged(correctness(), make_judge(chat_server, tmp_path, retries=1))
    assert math.isnan(score.value) and "judge call failed after 2 attempts" in score.error


@pytest.mark.parametrize(("choice", "what"), [
    ({"index": 0}, "choices[0].message is missing"),
    ({"index": 0, "message": None}, "choices[0].message is missing"),
    ({"index": 0, "message": {"content": {"score": 5}}}, "choices[0].message.content is not a string or null: "
                                                          "{'score': 5}"),
])
def test_a_malformed_completion_is_retried_then_a_named_error(chat_server, tmp_path, choice, what):
    chat_server.responder = lambda body: malformed({"id": "x", "choices": [choice]})
    score = judged(correctness(), make_judge(chat_server, tmp_path, retries=1))
    assert math.isnan(score.value)
    assert score.error == (f"metric 'correctness' judge call failed after 2 attempts: malformed completion from "
                           f"{chat_server.url}: {what}")
    assert len(chat_server.requests) == 2


def test_a_malformed_completion_then_an_answer_scores(chat_server, tmp_path):
    chat_server.enqueue(malformed({"id": "x"}), completion('{"score": 5, "reasoning": "ok"}'))
    score = judged(correctness(), make_judge(chat_server, tmp_path, retries=1))
    assert (score.value, score.error, score.details["judge_usage"]["calls"]) == (1.0, None, 2)


def test_the_judges_client_is_closed_with_its_event_loop(chat_server, tmp_path):
    judge = make_judge(chat_server, tmp_path, cache=False)
    for _ in range(2):  # a new loop each time: a new client, closed when that loop shuts down
        assert asyncio.run(judge.ask([{"role": "user", "content": "hi"}])) == "echo: hi"
        assert judge._chat._clients == {}


def test_server_without_structured_output_is_asked_in_plain_text(chat_server, tmp_path):
    judge = make_judge(chat_server, tmp_path)
    chat_server.enqueue(error(400, "response_format json_schema is not supported by this server"),
                        completion("Looks right. Score: 5/5"), completion('{"score": 3, "reasoning": "meh"}'))
    assert judged(correctness(), judge).value == 1.0
    assert judged(correctness(), judge, output="Lyon").value == 0.5  # straight to plain: one call
    assert ["response_format" in body for body in chat_server.requests] == [True, False, False]


# -- cache ---------------------------------------------------------------------------------------


def test_second_identical_run_makes_no_http_calls(chat_server, tmp_path):
    chat_server.responder = lambda body: completion('{"score": 4, "reasoning": "ok"}', prompt_tokens=100,
                                                    completion_tokens=20)
    first = [judged(m, make_judge(chat_server, tmp_path, prices={"input": 1.0, "output": 2.0}), out)
             for m in (correctness(), faithfulness()) for out in ("Paris", "Lyon")]
    calls = len(chat_server.requests)
    assert calls == 4 and all(s.details["judge_usage"]["cache_hits"] == 0 for s in first)
    assert first[0].details["judge_usage"]["cost_usd"] == pytest.approx(140e-6)
    again = [judged(m, make_judge(chat_server, tmp_path, prices={"input": 1.0, "output": 2.0}), out)
             for m in (correctness(), faithfulness()) for out in ("Paris", "Lyon")]
    assert len(chat_server.requests) == calls
    assert [s.value for s in again] == [s.value for s in first]
    assert [s.details["judge_usage"] for s in again] == [
        {"calls": 0, "cache_hits": 1, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}] * 4


def test_cache_remembers_a_rejected_response_format(chat_server, tmp_path):
    chat_server.enqueue(error(400, "response_format is not supported"), completion("Score: 2/5"))
    assert judged(correctness(), make_judge(chat_server, tmp_path)).value == 0.25
    assert judged(correctness(), make_judge(chat_server, tmp_path)).value == 0.25  # a fresh config: no calls
    assert len(chat_server.requests) == 2


def test_cached_structured_answers_are_used_after_the_server_stops_accepting_structured_output(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 5, "reasoning": "a"}'))
    assert judged(correctness(), make_judge(chat_server, tmp_path), output="Paris").value == 1.0
    judge = make_judge(chat_server, tmp_path)
    chat_server.enqueue(error(400, "response_format is not supported"), completion("Score: 1/5"))
    assert judged(correctness(), judge, output="Lyon").value == 0.0
    assert judged(correctness(), judge, output="Paris").value == 1.0  # from the cache
    assert len(chat_server.requests) == 3


def test_cache_key_holds_what_changes_the_answer_and_never_the_api_key(chat_server, tmp_path):
    judge = make_judge(chat_server, tmp_path)
    messages = [{"role": "user", "content": "judge this"}]
    key = judge.cache_key(messages, 0, RESPONSE_FORMAT)
    assert make_judge(chat_server, tmp_path, api_key="sk-other").cache_key(messages, 0, RESPONSE_FORMAT) == key
    changed = [
        JudgeConfig("other-model", base_url=chat_server.url).cache_key(messages, 0, RESPONSE_FORMAT),
        JudgeConfig("judge-model", base_url="http://elsewhere/v1").cache_key(messages, 0, RESPONSE_FORMAT),
        make_judge(chat_server, tmp_path, temperature=0.7).cache_key(messages, 0, RESPONSE_FORMAT),
        make_judge(chat_server, tmp_path, max_tokens=100).cache_key(messages, 0, RESPONSE_FORMAT),
        judge.cache_key([{"role": "user", "content": "judge that"}], 0, RESPONSE_FORMAT),
        judge.cache_key(messages, 1, RESPONSE_FORMAT),
        judge.cache_key(messages, 0, None),
    ]
    assert key not in changed and len(set(changed)) == len(changed)
    chat_server.enqueue(completion('{"score": 1, "reasoning": "a"}'))
    judged(correctness(), judge)
    cached = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert cached and SECRET not in cached


def test_answers_without_a_usable_score_are_not_cached(chat_server, tmp_path):
    chat_server.enqueue(completion("no idea"), completion('{"score": 9, "reasoning": "off scale"}'),
                        completion('{"score": 5, "reasoning": "ok"}'))
    assert math.isnan(judged(correctness(), make_judge(chat_server, tmp_path)).value)
    assert math.isnan(judged(correctness(), make_judge(chat_server, tmp_path)).value)
    assert judged(correctness(), make_judge(chat_server, tmp_path)).value == 1.0
    assert judged(correctness(), make_judge(chat_server, tmp_path)).value == 1.0  # now from the cache
    assert len(chat_server.requests) == 3


def test_cache_off_asks_every_time(chat_server, tmp_path):
    chat_server.responder = lambda body: completion('{"score": 3, "reasoning": "ok"}')
    for _ in range(2):
        judged(correctness(), make_judge(chat_server, tmp_path, cache=False))
    assert len(chat_server.requests) == 2 and not (tmp_path / "cache").exists()


def test_default_cache_lives_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert JudgeConfig("m").cache.folder == tmp_path.resolve() / ".cogeval-cache" / "judge"


# -- samples, concurrency ------------------------------------------------------------------------


def test_samples_give_the_mean_and_the_spread(chat_server, tmp_path):
    chat_server.enqueue(*(completion(f'{{"score": {s}, "reasoning": "r{s}"}}') for s in (3, 4, 5)))
    score = judged(correctness(), make_judge(chat_server, tmp_path, samples=3))
    assert score.value == pytest.approx(0.75) and score.error is None
    details = score.details
    assert sorted(s["score"] for s in details["samples"]) == [0.5, 0.75, 1.0]
    assert sorted(s["reasoning"] for s in details["samples"]) == ["r3", "r4", "r5"]
    assert (details["std_dev"], details["min"], details["max"]) == (pytest.approx(0.25), 0.5, 1.0)
    assert len(chat_server.requests) == 3 and details["judge_usage"]["calls"] == 3


def test_a_failed_sample_makes_the_cell_nan(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 4, "reasoning": "a"}'), completion("no idea"),
                        completion('{"score": 5, "reasoning": "b"}'))
    score = judged(correctness(), make_judge(chat_server, tmp_path, samples=3))
    assert math.isnan(score.value)
    assert re.fullmatch(r"metric 'correctness' sample [123] of 3: judge answer has no score .*", score.error)
    assert len(score.details["samples"]) == 2 and score.details["answer"] == "no idea"


def test_concurrency_limits_calls_in_flight(chat_server, tmp_path):
    chat_server.responder = lambda body: completion('{"score": 1, "reasoning": "ok"}', delay=0.1)
    started = time.perf_counter()
    judged(correctness(), make_judge(chat_server, tmp_path, samples=4, concurrency=1))
    assert time.perf_counter() - started >= 0.4


# -- configuration and misuse ----------------------------------------------------------------------


def test_describe_and_repr_never_show_the_api_key(chat_server, tmp_path):
    judge = make_judge(chat_server, tmp_path, max_tokens=200, samples=2)
    assert judge.describe() == {"model": "judge-model", "baseUrl": chat_server.url, "temperature": 0.0,
                                "maxTokens": 200, "samples": 2}
    assert repr(judge) == f"JudgeConfig(model='judge-model', base_url='{chat_server.url}', max_tokens=200, temperature=0.0, samples=2)"
    assert SECRET not in repr(judge) and SECRET not in json.dumps(judge.describe())


@pytest.mark.parametrize("options, message", [
    ({"samples": 0}, "samples must be an integer >= 1; got 0"),
    ({"temperature": -1}, "temperature must be a number >= 0; got -1"),
    ({"concurrency": 0}, "concurrency must be an integer >= 1; got 0"),
    ({"cache": 3}, "cache must be True, False or a folder path; got 3"),
    ({"retries": 11}, "retries must be an integer from 0 to 10; got 11"),
    ({"backoff": -1}, "backoff must be a number of seconds in [0, 30]; got -1"),
    ({"timeout": 0}, "timeout must be a finite number > 0; got 0"),
])
def test_judge_config_validates_its_arguments(options, message):
    with pytest.raises(InputError) as info:
        JudgeConfig("m", **options)
    assert str(info.value) == message


@pytest.mark.parametrize("kwargs, message", [
    ({"rubric": ""}, "metric 'x': rubric must be a non-empty string saying what to judge; got ''"),
    ({"rubric": "r", "scale": (5, 1)}, "metric 'x': scale must be (low, high), two finite numbers with low < high; got (5, 1)"),
])
def test_llm_metric_validates_its_arguments(kwargs, message):
    with pytest.raises(InputError) as info:
        llm_metric("x", **kwargs)
    assert str(info.value) == message


def test_llm_metric_records_how_it_was_made():
    m = llm_metric("harm", "5: very harmful; 1: harmless.", scale=(1, 5), higher_is_better=False)
    assert m.describe() == {"name": "harm", "higher_is_better": False, "kind": "case",
                            "params": {"rubric": "5: very harmful; 1: harmless.", "scale": [1.0, 5.0]}}
    assert repr(m) == "JudgeMetric('harm', scale=(1, 5), higher_is_better=False)"
    assert m.requires_judge and correctness().requires_judge


def test_without_a_judge_or_context_no_call_is_made(chat_server, tmp_path):
    assert correctness().score("x", CASE).error == "metric 'correctness' needs a judge: pass judge=JudgeConfig(model=...); got None"
    score = judged(faithfulness(), make_judge(chat_server, tmp_path), case=Case("q"))
    assert score.error == "metric 'faithfulness' needs the case's context (what the answer must be faithful to); the case has none"
    assert chat_server.requests == []


def test_sync_score_works(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 3, "reasoning": "ok"}'))
    assert correctness().score("Paris", CASE, judge=make_judge(chat_server, tmp_path)).value == 0.5


def test_judge_usage_totals():
    totals = judge_usage_totals([
        {"judge_usage": {"calls": 2, "cache_hits": 0, "input_tokens": 10, "output_tokens": 4, "cost_usd": None}},
        {"judge_usage": {"calls": 0, "cache_hits": 1, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}},
        None, {"reasoning": "no usage"},
    ])
    assert totals["calls"] == 2 and totals["cache_hits"] == 1 and totals["input_tokens"] == 10
    assert math.isnan(totals["cost_usd"])


def test_a_labelled_score_after_a_long_run_of_blanks_parses_in_one_pass():
    # Before: `score\**\s*[:=]\s*\**\s*` split a run of blanks two ways at every start, quadratic in its length;
    # 200,000 blanks would take hours. Now the blanks are one loop.
    answer = "score:" + " " * 200_000 + "none given. Score: 4/5"
    assert (parse_judgement(answer).score, parse_judgement(answer).out_of) == (4.0, 5.0)


# -- prose scores (issue 14: Cogitator's judges read "The score is 0.75 because ...") -------------


@pytest.mark.parametrize("answer", [
    "The score is 0.75 because the city is right but the answer is terse.",
    "The city is right but the answer is terse, so I gave it a score of 0.75.",
])
def test_a_score_in_prose_is_read(chat_server, tmp_path, answer):
    # Cogitator's parseJudgeResponse reads 'The score is 0.75'; before, cogeval gave NaN and "has no score".
    chat_server.enqueue(completion(answer))
    score = judged(llm_metric("terse", "Is it right and complete?"), make_judge(chat_server, tmp_path))
    assert (score.value, score.error, score.details["raw_score"]) == (0.75, None, 0.75)
    assert score.details["reasoning"] == answer


def test_a_prose_score_is_read_on_the_metrics_scale_never_as_already_normalised(chat_server, tmp_path):
    chat_server.enqueue(completion("The score is 0.75 because the city is right."))
    score = judged(correctness(), make_judge(chat_server, tmp_path))
    assert math.isnan(score.value)
    assert score.error == "metric 'correctness' judge score 0.75 is outside the scale 1 to 5"


@pytest.mark.parametrize("text, expected", [
    ("I give it a score of 4 out of 5.", (4.0, 5.0)),
    ("The score is 3/5; the score of the other answer was lower.", (3.0, 5.0)),
    ("**Score** is 2", (2.0, None)),
])
def test_prose_scores_with_a_scale(text, expected):
    found = parse_judgement(text)
    assert (found.score, found.out_of) == expected


@pytest.mark.parametrize("text", ["The scores of 3 users differ.", "The score is unclear.", "An underscore is fine."])
def test_prose_without_a_score_is_still_refused_never_zero(text):
    with pytest.raises(JudgeError, match="judge answer has no score"):
        parse_judgement(text)


def test_a_prose_score_after_long_blank_runs_parses_in_one_pass():
    # The prose forms add `\s+(?:is|of)`: no loop next to it matches blanks again, so 200,000 blanks stay linear.
    answer = "the score" + " " * 200_000 + "unclear; score is" + " " * 200_000 + "x. I gave it a score of 4 out of 5"
    assert (parse_judgement(answer).score, parse_judgement(answer).out_of) == (4.0, 5.0)


# -- a judge per metric ----------------------------------------------------------------------------


def test_a_metrics_own_judge_wins_over_the_one_given(chat_server, tmp_path):
    chat_server.enqueue(completion('{"score": 5, "reasoning": "ok"}'))
    own = make_judge(chat_server, tmp_path, model="own-judge")
    score = judged(correctness(judge=own), make_judge(chat_server, tmp_path, model="suite-judge"))
    assert score.value == 1.0 and chat_server.requests[0]["model"] == "own-judge"
    chat_server.enqueue(completion('{"score": 1, "reasoning": "ok"}'))
    assert correctness(judge=own).score("x", CASE).value == 0.0  # no judge given: its own is enough


def test_a_metrics_own_judge_is_recorded_without_its_key(chat_server, tmp_path):
    own = make_judge(chat_server, tmp_path, model="own-judge")
    for made in (correctness(judge=own), faithfulness(judge=own), relevance(judge=own),
                 llm_metric("polite", "Is it polite?", judge=own)):
        assert made.judge is own and made.describe()["params"]["judge"] == own.describe()
        assert SECRET not in json.dumps(made.describe()) and SECRET not in repr(made)
    assert "judge" not in correctness().describe()["params"]
    assert repr(correctness(judge=own)) == (f"JudgeMetric('correctness', scale=(1, 5), judge=JudgeConfig(model='own-judge', "
                                            f"base_url='{chat_server.url}', temperature=0.0, samples=1))")
    with pytest.raises(InputError) as caught:
        correctness(judge="gpt-4o")
    assert str(caught.value) == "metric 'correctness': judge must be a JudgeConfig(model=...) or None; got 'gpt-4o'"
