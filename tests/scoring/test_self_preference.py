"""A judge that is the model it judges is warned about (self-preference bias): suites, variants, pairwise runs."""

from __future__ import annotations

import json
import warnings

import pytest
from chat_server import completion, make_judge

import cogeval
from cogeval import (
    ChatTarget,
    EvalSuite,
    JudgeConfig,
    SelfPreferenceWarning,
    Variants,
    correctness,
    exact_match,
    pairwise_judge,
    run_pairwise,
    run_variants,
)
from cogeval.scoring.judge import self_preference_message

DATA = [{"input": "2+2?", "expected": "4"}]
WHY = ("a model judging answers it wrote tends to prefer them (self-preference bias), so it favours the target; "
       "use a judge from another model family")


def judge(model: str = "gpt-4o") -> JudgeConfig:
    return JudgeConfig(model, api_key="k", cache=False)


def chat(model: str) -> ChatTarget:
    return ChatTarget(model, api_key="k")


def test_the_message_names_the_model_and_what_to_do():
    assert self_preference_message(judge("gpt-4o"), chat("gpt-4o")) == (
        f"the judge is model 'gpt-4o', the same model as the target: {WHY}")


@pytest.mark.parametrize(("judge_side", "target_side"), [
    (judge(" GPT-4o "), chat("gpt-4o")),                                      # objects; case and spaces do not matter
    ({"model": "gpt-4o", "baseUrl": None}, {"type": "chat", "model": "GPT-4O"}),  # a run file's config.judge / target
    ({"kind": "judge", "judge": {"model": "gpt-4o"}}, chat("gpt-4o")),       # a pairwise comparator's description
    (pairwise_judge(judge("gpt-4o"), "Better?", "j"), {"model": "gpt-4o"}),  # a pairwise judge
])
def test_same_model_is_found_in_objects_and_run_file_dicts(judge_side, target_side):
    assert self_preference_message(judge_side, target_side, "variant 'b'").startswith(
        "the judge is model ")


@pytest.mark.parametrize(("judge_side", "target_side"), [
    (judge("gpt-4o"), chat("gpt-4o-mini")),                      # another model
    (judge("gpt-4o"), lambda q: q),                              # a function has no model
    (judge("gpt-4o"), {"type": "function", "name": "answer"}),  # nor does its description
    ({"model": None}, {"model": None}),                          # nothing to compare
    ({"model": " "}, {"model": " "}),
    (None, chat("gpt-4o")),
    (judge("gpt-4o"), 42),
])
def test_different_or_unknown_models_give_none(judge_side, target_side):
    assert self_preference_message(judge_side, target_side) is None


def test_the_warning_class_is_exported_with_the_others():
    assert cogeval.SelfPreferenceWarning is SelfPreferenceWarning and issubclass(SelfPreferenceWarning, UserWarning)
    assert "SelfPreferenceWarning" in cogeval.errors.__all__


def test_a_suite_whose_judge_is_its_target_model_warns_at_construction():
    with pytest.warns(SelfPreferenceWarning) as caught:
        EvalSuite(DATA, chat("gpt-4o"), metrics=[correctness()], judge=judge("GPT-4o"), progress=False)
    assert [str(w.message) for w in caught] == [f"the judge is model 'GPT-4o', the same model as the target: {WHY}"]
    assert caught[0].filename == __file__  # points at the caller's line


@pytest.mark.parametrize("target", [chat("gpt-4o-mini"), lambda q: "4"], ids=["other model", "function"])
def test_no_warning_for_another_model_or_a_function(target):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SelfPreferenceWarning)
        EvalSuite(DATA, target, metrics=[correctness()], judge=judge(), progress=False)


def test_no_warning_when_no_metric_uses_the_judge():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SelfPreferenceWarning)
        EvalSuite(DATA, chat("gpt-4o"), metrics=[exact_match()], judge=judge(), progress=False)


def test_run_variants_warns_for_the_variant_with_the_judges_model(chat_server, tmp_path):
    chat_server.responder = lambda body: completion(json.dumps({"score": 5, "reasoning": "fine"}))
    variants = Variants({"same": ChatTarget("judge-model", base_url=chat_server.url, api_key="k"),
                         "other": ChatTarget("other-model", base_url=chat_server.url, api_key="k")}, axis="model")
    with pytest.warns(SelfPreferenceWarning) as caught:
        board = run_variants(DATA, variants, [correctness()], judge=make_judge(chat_server, tmp_path), progress=False)
    assert [str(w.message) for w in caught if w.category is SelfPreferenceWarning] == [
        f"the judge is model 'judge-model', the same model as the target: {WHY}"]
    assert board is not None


def test_run_pairwise_warns_when_the_judge_is_a_compared_variants_model(chat_server, tmp_path):
    chat_server.responder = lambda body: completion(json.dumps({"reasoning": "same", "winner": "tie"}))
    mine = ChatTarget("Judge-Model", base_url=chat_server.url, api_key="k")
    comparator = pairwise_judge(make_judge(chat_server, tmp_path), "Which is better?", "quality")
    with pytest.warns(SelfPreferenceWarning) as caught:
        result = run_pairwise(DATA, lambda q: "4", mine, [comparator], names=("plain", "mine"))
    assert [str(w.message) for w in caught if w.category is SelfPreferenceWarning] == [
        "pairwise judge 'quality': the judge is model 'judge-model', the same model as variant 'mine': a model "
        "judging answers it wrote tends to prefer them (self-preference bias), so it favours variant 'mine'; use a "
        "judge from another model family"]
    assert caught[0].filename == __file__
    assert result.win_rate("quality").ties == 1


def test_run_pairwise_of_other_models_does_not_warn(chat_server, tmp_path):
    chat_server.responder = lambda body: completion(json.dumps({"reasoning": "same", "winner": "tie"}))
    comparator = pairwise_judge(make_judge(chat_server, tmp_path), "Which is better?", "quality")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SelfPreferenceWarning)
        run_pairwise(DATA, lambda q: "4", ChatTarget("other", base_url=chat_server.url, api_key="k"), [comparator])
