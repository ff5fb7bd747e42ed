"""Head-to-head: win rates, flips, agreement, the pairwise judge (against a real local chat server), humans, files."""

from __future__ import annotations

import asyncio
import doctest
import json
import math
import pathlib
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from chat_server import completion, error, make_judge, malformed

import cogeval
from cogeval import (
    Case,
    JudgeConfig,
    PairwiseResult,
    RunStore,
    bradley_terry,
    human_pairwise,
    load_pairwise,
    pairwise_judge,
    run_pairwise,
    wilson_interval,
)
from cogeval.errors import InputError, RunFileError
from cogeval.pairwise import (
    PAIRWISE_COLUMNS,
    PAIRWISE_FORMAT,
    Comparator,
    PairTask,
    Preference,
    Verdict,
    arun_pairwise,
    parse_preference,
)
from cogeval.scoring.judge import JudgeError

DOCS = pathlib.Path(__file__).parents[2] / "docs" / "pairwise.md"
RUN_ID = "20260101T000000000Z-0000abcd"
Z_95 = 1.96


def result_of(verdicts: dict[str, list[Verdict]], swap: bool = True, names=("a", "b")) -> PairwiseResult:
    n = len(next(iter(verdicts.values())))
    tasks = tuple(PairTask(f"t{i}", f"k{i}", Case(f"q{i}"), f"A{i}", f"B{i}") for i in range(n))
    kinds = {key: {"kind": "judge", "swap": swap} for key in verdicts}
    return PairwiseResult(RUN_ID, "2026-01-01T00:00:00.000Z", names, tasks, verdicts, kinds)


def winners(*values: str | None) -> list[Verdict]:
    return [Verdict(v, error=None if v else "judge call failed") for v in values]


def wilson_by_roots(rate: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """Independent Wilson limits: the roots in p of (rate - p)^2 = z^2 p (1 - p) / n."""
    k = z * z / n
    low, high = sorted(np.roots([1 + k, -(2 * rate + k), rate * rate]).real)
    return low, high


# -- win rate ----------------------------------------------------------------------------------


def test_one_win_one_loss_two_ties_is_an_even_rate():
    win = result_of({"j": winners("b", "a", "tie", "tie")}).win_rate("j")
    assert (win.rate, win.wins, win.losses, win.ties, win.n, win.p_value, win.missing) == (0.5, 1, 1, 2, 4, 1.0, 0)
    assert win.ci == pytest.approx(wilson_by_roots(0.5, 4), abs=1e-12)


def test_half_integer_successes_use_the_wilson_formula_on_the_proportion():
    win = result_of({"j": winners("b", "b", "b", "a", "a", "tie")}).win_rate()  # 3.5 of 6
    assert win.rate == pytest.approx(3.5 / 6)
    z2 = Z_95**2
    centre, half = (3.5 + z2 / 2) / (6 + z2), Z_95 * math.sqrt(3.5 * 2.5 / 6 + z2 / 4) / (6 + z2)
    assert win.ci == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert win.ci == pytest.approx(wilson_by_roots(3.5 / 6, 6), abs=1e-12)


@pytest.mark.parametrize("wins, losses, expected", [
    (81, 182, (0.2553, 0.3662)),  # Newcombe (1998), Stat Med 17:857, table I, method 3: 81/263
    (15, 133, (0.0624, 0.1605)),  # ibid., 15/148
    (0, 20, (0.0, 0.1611)),       # ibid., 0/20
])
def test_integer_counts_match_published_wilson_intervals(wins, losses, expected):
    win = result_of({"j": winners(*["b"] * wins, *["a"] * losses)}).win_rate("j")
    assert [round(limit, 4) for limit in win.ci] == list(expected)
    confidence = 2 * 0.975 - 1  # the same z through wilson_interval, to float precision
    reference = wilson_interval(wins, wins + losses, confidence=confidence)
    assert win.ci == pytest.approx(reference, abs=1e-4)


def test_no_verdict_gives_nan_and_no_interval_and_is_never_a_tie():
    win = result_of({"j": winners(None, None)}).win_rate("j")
    assert math.isnan(win.rate) and win.ci is None and (win.n, win.ties, win.missing, win.p_value) == (0, 0, 2, 1.0)
    row = win.to_frame()
    assert list(row.columns) == ["test", "n", "statistic", "p_value", "rate", "ci_low", "ci_high", "wins", "losses",
                                 "ties", "missing"]
    assert row[["ci_low", "ci_high"]].isna().all(axis=None)


def test_sign_test_leaves_ties_out():
    # R: binom.test(8, 9)$p.value = 0.0390625
    plain = result_of({"j": winners(*"bbbbbbbba")}).win_rate()
    tied = result_of({"j": winners(*"bbbbbbbba", *["tie"] * 5, None)}).win_rate()
    assert plain.p_value == tied.p_value == pytest.approx(0.0390625, abs=1e-12)
    assert (tied.n, tied.ties, tied.missing) == (14, 5, 1)


def test_unknown_or_ambiguous_key_is_named():
    result = result_of({"x": winners("a"), "y": winners("b")})
    with pytest.raises(InputError) as caught:
        result.win_rate("z")
    assert str(caught.value) == "no comparator has the key 'z'; the keys are 'x', 'y'"
    with pytest.raises(InputError) as caught:
        result.win_rate()
    assert str(caught.value) == "this result has several comparators ('x', 'y'); name one"


# -- flips and agreement -----------------------------------------------------------------------


def test_flips_count_disagreeing_orders_and_test_position_bias():
    verdicts = [
        Verdict("tie", ab="a", ba="b"),    # picked position 1 both times: toward the first
        Verdict("tie", ab="a", ba="tie"),  # a win against a tie: toward the first
        Verdict("tie", ab="tie", ba="b"),  # toward the first (B shown first in B/A)
        Verdict("tie", ab="b", ba="a"),    # position 2 both times: toward the second
        Verdict("tie", ab="tie", ba="tie"),  # a consistent tie is no flip
        Verdict("b", ab="b", ba="b"),
        Verdict(None, error="order B/A: boom"),
    ]
    flips = result_of({"j": verdicts}).flips("j")
    assert (flips.n, flips.flips, flips.toward_first, flips.toward_second) == (6, 4, 3, 1)
    assert flips.rate == pytest.approx(4 / 6)
    assert flips.p_value == pytest.approx(0.625)  # R: binom.test(3, 4)$p.value
    assert flips.task_ids == ("t0", "t1", "t2", "t3")
    assert list(flips.to_frame().columns) == ["test", "n", "statistic", "p_value", "flips", "rate", "toward_first",
                                              "toward_second"]


def test_flips_need_both_orders():
    result = result_of({"human": winners("a")}, swap=False)
    with pytest.raises(InputError) as caught:
        result.flips("human")
    assert str(caught.value) == ("comparator 'human' saw each pair in one order only; flips need both orders: "
                                 "pairwise_judge(..., swap=True)")


def test_agreement_matches_a_textbook_kappa_over_cases_both_judged():
    # 2x2 table: both "a" 20, x "a" y "b" 5, x "b" y "a" 10, both "b" 15: po = 0.7, pe = 0.5, kappa = 0.4
    x = ["a"] * 25 + ["b"] * 25 + ["a", None]
    y = ["a"] * 20 + ["b"] * 5 + ["a"] * 10 + ["b"] * 15 + [None, "tie"]
    agreement = result_of({"x": winners(*x), "y": winners(*y)}).agreement("x", "y")
    assert (agreement.rate, agreement.n) == (0.7, 50)
    assert agreement.cohen_kappa == pytest.approx(0.4, abs=1e-12)


def test_agreement_without_common_verdicts_is_nan():
    agreement = result_of({"x": winners("a", None), "y": winners(None, "b")}).agreement("x", "y")
    assert math.isnan(agreement.rate) and math.isnan(agreement.cohen_kappa) and agreement.n == 0


# -- tables, display, files --------------------------------------------------------------------


def test_to_frame_is_one_row_per_case_and_comparator():
    result = result_of({"x": [Verdict("b", ab="b", ba="b", reasoning="r")], "y": winners(None)})
    frame = result.to_frame()
    assert tuple(frame.columns) == PAIRWISE_COLUMNS == (
        "task_id", "case_key", "input", "output_a", "output_b", "comparator", "winner", "verdict_ab", "verdict_ba",
        "flipped", "reasoning", "error")
    assert frame.to_dict("records") == [
        {"task_id": "t0", "case_key": "k0", "input": "q0", "output_a": "A0", "output_b": "B0", "comparator": "x",
         "winner": "b", "verdict_ab": "b", "verdict_ba": "b", "flipped": False, "reasoning": "r", "error": None},
        {"task_id": "t0", "case_key": "k0", "input": "q0", "output_a": "A0", "output_b": "B0", "comparator": "y",
         "winner": None, "verdict_ab": None, "verdict_ba": None, "flipped": False, "reasoning": None,
         "error": "judge call failed"},
    ]


def test_pairs_feed_bradley_terry():
    frames = [
        result_of({"j": winners(*"bbba")}, names=("x", "y")).pairs("j"),
        result_of({"j": winners(*"bbab")}, names=("y", "z")).pairs("j"),
        result_of({"j": winners(*"bbab", None)}, names=("x", "z")).pairs("j"),
    ]
    assert frames[0].to_dict("records")[0] == {"a": "x", "b": "y", "winner": "b"}
    assert len(frames[2]) == 4  # no verdict, no pair
    ranking = bradley_terry(pd.concat(frames, ignore_index=True), seed=0, n_bootstrap=50)
    assert list(ranking["variant"]) == ["z", "y", "x"]


def test_display_is_escaped():
    result = result_of({"<b>j</b>": winners("b")}, names=("<script>a</script>", "b"))
    html = result._repr_html_()
    assert "&lt;script&gt;a&lt;/script&gt; (A)" in html and "<script>a" not in html and "&lt;b&gt;j&lt;/b&gt;" in html
    assert "could not display" not in html


def test_save_and_load_next_to_run_files(tmp_path):
    store = RunStore(tmp_path)
    result = result_of({"j": [Verdict("tie", ab="a", ba="b", reasoning="r", details={"judge_usage": {"calls": 2}})]})
    path = result.save(store)
    assert path == tmp_path / f"{RUN_ID}.pairwise.json"
    assert result.path is None  # a result never changes: saving it does not either
    document = json.loads(path.read_text())
    assert (document["format"], document["version"], document["names"]) == ("cogeval.pairwise", 1, ["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the store passes over it silently
        assert store.list() == []
    loaded = load_pairwise(path)
    assert loaded == result and loaded.win_rate("j") == result.win_rate("j") and loaded.flips().flips == 1
    assert loaded.path == path
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cogeval-index", path.name]  # atomic: no temporary file left


def test_loading_something_else_names_the_file(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "cogitator.eval-run"}')
    with pytest.raises(RunFileError) as caught:
        load_pairwise(path)
    assert str(caught.value) == f"pairwise file '{path}' has format 'cogitator.eval-run'; expected 'cogeval.pairwise'"
    path.write_text('{"format": "cogeval.pairwise", "version": 1, "tasks": []}')
    with pytest.raises(RunFileError) as caught:
        load_pairwise(path)
    assert str(caught.value) == (f"pairwise file '{path}' is invalid: id: Field required; created_at: Field required; "
                                 "names: Field required; and 2 more errors")


# -- run_pairwise ------------------------------------------------------------------------------

DATA = [{"input": "2+2", "expected": "4"}, {"input": "3+3", "expected": "6"}, {"input": "2+2", "expected": "4"}]


def pick_correct(case, response_1, response_2):
    good = [r == case.expected for r in (response_1, response_2)]
    return "tie" if good[0] == good[1] else ("1" if good[0] else "2")


def test_run_pairwise_runs_both_targets_and_asks_each_comparator(tmp_path):
    calls = []

    def a(q):
        calls.append(("a", q))
        return "4" if q == "2+2" else "?"

    def b(q):
        calls.append(("b", q))
        return str(eval(q))

    result = run_pairwise(DATA, a, b, [human_pairwise("human", ask=pick_correct, seed=1)], store=tmp_path,
                          names=("old", "new"))
    assert sorted(calls) == [("a", "2+2"), ("a", "2+2"), ("a", "3+3"), ("b", "2+2"), ("b", "2+2"), ("b", "3+3")]
    key = Case("2+2", expected="4").key
    assert [t.task_id for t in result.tasks] == [key, Case("3+3", expected="6").key, f"{key}#1"]
    assert [v.winner for v in result.verdicts["human"]] == ["tie", "b", "tie"]
    assert result.comparators == {"human": {"kind": "human", "seed": 1}}
    assert result.path.parent == tmp_path and load_pairwise(result.path) == result


def test_a_failed_target_loses_without_asking_and_both_failing_is_no_verdict():
    asked = []

    def ask(case, one, two):
        asked.append(case.input)
        return "tie"

    def a(q):
        if q != "ok":
            raise RuntimeError("a broke")
        return "x"

    def b(q):
        if q == "both":
            raise RuntimeError("b broke")
        return "y"

    result = run_pairwise([{"input": "ok"}, {"input": "a-fails"}, {"input": "both"}], a, b,
                          [human_pairwise("h", ask=ask)])
    assert asked == ["ok"]
    assert [(v.winner, v.reasoning, v.error) for v in result.verdicts["h"]] == [
        ("tie", None, None),
        ("b", "variant a failed: RuntimeError: a broke", None),
        (None, None, "both variants failed: a: RuntimeError: a broke; b: RuntimeError: b broke"),
    ]
    assert result.win_rate("h").missing == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"comparators": []}, "comparators must be a non-empty list of comparators (pairwise_judge(...), "
                          "human_pairwise(...), human_labels(...)); got []"),
    ({"comparators": ["judge"]}, "comparators must hold pairwise_judge(...), human_pairwise(...) or "
                                 "human_labels(...); got 'judge'"),
    ({"comparators": [human_pairwise("k"), human_pairwise("k")]},
     "two comparators have the key 'k'; give each its own key"),
    ({"names": ("x", "x")}, "names must be two different non-empty strings (A's, then B's); got ('x', 'x')"),
    ({"store": 3}, "store must be a RunStore, a folder path or None; got 3"),
])
def test_bad_arguments_fail_before_any_target_runs(kwargs, message):
    called = []
    options = {"comparators": [human_pairwise("h", ask=pick_correct)], **kwargs}
    with pytest.raises(InputError) as caught:
        run_pairwise(DATA, called.append, called.append, **options)
    assert str(caught.value) == message and called == []


def test_human_orders_are_seeded_blinded_and_kept():
    shown = []

    async def ask(case, response_1, response_2):  # async asks are awaited
        shown.append((response_1, response_2))
        return 1 if response_1 == "B" else "2"  # always prefers B, wherever it is shown

    data = [{"input": str(i)} for i in range(8)]
    result = run_pairwise(data, lambda q: "A", lambda q: "B", [human_pairwise("h", ask=ask, seed=42)])
    firsts = ["a" if draw == 0 else "b" for draw in np.random.default_rng(42).integers(0, 2, size=8)]
    assert shown == [("A", "B") if first == "a" else ("B", "A") for first in firsts]
    assert {v.winner for v in result.verdicts["h"]} == {"b"}
    assert [v.details["first"] for v in result.verdicts["h"]] == firsts
    assert [v.ab is not None for v in result.verdicts["h"]] == [first == "a" for first in firsts]
    again = run_pairwise(data, lambda q: "A", lambda q: "B", [human_pairwise("h", ask=ask, seed=42)])
    assert shown[8:] == shown[:8] and again.win_rate().rate == 1.0


def test_an_unreadable_human_answer_names_the_task():
    with pytest.raises(InputError) as caught:
        run_pairwise([{"input": "q"}], str, str, [human_pairwise("h", ask=lambda case, x, y: "maybe")])
    assert str(caught.value) == (f"human_pairwise 'h': ask returned 'maybe' for task {Case('q').key!r}; "
                                 "expected '1', '2' or 'tie'")


def test_human_widget_fills_verdicts_as_people_click_and_saves_when_done(tmp_path, capsys):
    human = human_pairwise("h", ask="widget", seed=3)
    result = run_pairwise([{"input": "x"}, {"input": "y"}], lambda q: "A", lambda q: "B", [human], store=tmp_path)
    assert [v.error for v in result.verdicts["h"]] == ["not labelled yet"] * 2
    assert result.win_rate("h").missing == 2 and load_pairwise(result.path).win_rate("h").n == 0
    widget = human.widget
    firsts = [v.details["first"] for v in result.verdicts["h"]]
    b_position = [widget.one if first == "b" else widget.two for first in firsts]
    b_position[0].click()  # each click makes a new result; the one returned stays as it was
    assert human.result.win_rate("h").wins == 1 and human.result.win_rate("h").missing == 1
    assert result.win_rate("h").missing == 2 and human.result.path is None
    b_position[1].click()
    assert human.result.win_rate("h").rate == 1.0 and widget.index is None
    assert result.win_rate("h").missing == 2
    assert human.result.path == result.path  # saved again once all were labelled
    assert load_pairwise(result.path).win_rate("h").wins == 2


def test_async_form_inside_a_running_loop():
    async def main():
        return await arun_pairwise([{"input": "q"}], str, str.upper, [human_pairwise("h", ask=lambda c, x, y: "2")])

    assert asyncio.run(main()).verdicts["h"][0].winner in ("a", "b")


# -- the pairwise judge, against a real local chat-completions server --------------------------


def shown_first(body) -> str:
    return re.search(r"<response_1>\n(.*?)\n</response_1>", body["messages"][1]["content"], re.S)[1]


def answer(winner, reasoning="because"):
    return completion(json.dumps({"reasoning": reasoning, "winner": winner}))


def test_consistent_judge_wins_and_both_orders_are_shown(chat_server, tmp_path):
    chat_server.enqueue(answer("2", "B is right"), answer("1", "B is still right"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Which answer is correct?", "correct")
    result = run_pairwise([{"input": "2+2", "expected": "4"}], lambda q: "5", lambda q: "4", [judge])
    [verdict] = result.verdicts["correct"]
    assert (verdict.winner, verdict.ab, verdict.ba, verdict.flipped) == ("b", "b", "b", False)
    assert verdict.reasoning == "A first: B is right\nB first: B is still right"
    assert verdict.details["judge_usage"]["calls"] == 2
    first, second = chat_server.requests
    assert (shown_first(first), shown_first(second)) == ("5", "4")
    assert first["response_format"] == PAIRWISE_FORMAT
    prompt = first["messages"][1]["content"]
    for part in ("Criterion: Which answer is correct?", "<input>\n2+2\n</input>", "<expected>\n4\n</expected>",
                 "<context>\nN/A\n</context>", "<response_2>\n4\n</response_2>"):
        assert part in prompt
    assert result.comparators["correct"] == {
        "kind": "judge", "criterion": "Which answer is correct?", "swap": True, "include_reference": True,
        "judge": judge.judge.describe()}


def test_a_judge_that_always_picks_the_first_shown_flips_every_case(chat_server, tmp_path):
    chat_server.responder = lambda body: answer("1")
    judge = pairwise_judge(make_judge(chat_server, tmp_path, cache=False), "Better?", "j")
    result = run_pairwise([{"input": str(i)} for i in range(6)], lambda q: "A" + q, lambda q: "B" + q, [judge])
    win, flips = result.win_rate("j"), result.flips("j")
    assert (win.ties, win.n, win.rate) == (6, 6, 0.5)
    assert (flips.flips, flips.toward_first, flips.toward_second) == (6, 6, 0)
    assert flips.p_value == pytest.approx(0.03125)  # R: binom.test(6, 6)$p.value


def test_a_win_against_a_tie_is_a_flip_and_a_tie(chat_server, tmp_path):
    chat_server.enqueue(answer("2"), answer("tie"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    verdict = result.verdicts["j"][0]
    assert (verdict.winner, verdict.ab, verdict.ba, verdict.flipped) == ("tie", "b", "tie", True)
    assert result.flips("j").toward_second == 1


def test_garbage_and_server_errors_leave_no_verdict_never_a_tie(chat_server, tmp_path):
    def responder(body):
        first = shown_first(body)
        if first.startswith("garbage"):
            return completion("I cannot decide.")
        if first.startswith("broken"):
            return error(500, "boom")
        return answer("1" if first.startswith("B") else "2")

    chat_server.responder = responder
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    data = [{"input": "ok"}, {"input": "garbage"}, {"input": "broken"}]

    def a(q):
        return {"ok": "A", "garbage": "garbage A", "broken": "broken A"}[q]

    result = run_pairwise(data, a, lambda q: "B", [judge])
    ok, garbage, broken = result.verdicts["j"]
    assert ok.winner == "b"
    assert garbage.winner is None and garbage.error == (
        "order A/B: judge answer has no winner (expected JSON {\"winner\": \"1\" | \"2\" | \"tie\", "
        "\"reasoning\": ...} or 'winner: 1'): 'I cannot decide.'")
    assert garbage.details["answer_ab"] == "I cannot decide."
    assert broken.winner is None
    assert broken.error.startswith("order A/B: judge call failed after 1 attempt: InternalServerError: Error code: 500")
    win = result.win_rate("j")
    assert (win.n, win.wins, win.ties, win.missing) == (1, 1, 0, 2)
    frame = result.to_frame()
    assert frame["error"].notna().sum() == 2 and frame["winner"].isna().sum() == 2


DEEP = "[" * 1000 + "]" * 1000


def test_a_deeply_nested_answer_fails_its_task_only(chat_server, tmp_path):
    def responder(body):
        first = shown_first(body)
        if first.startswith("deep"):
            return completion('{"reasoning": "r", "winner": ' + DEEP + "}")
        if first.startswith("huge"):
            return completion("[" * 200_000)
        return answer("1" if first.startswith("B") else "2")

    chat_server.responder = responder
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    data = [{"input": "deep"}, {"input": "ok"}, {"input": "huge"}, {"input": "fine"}]
    answers = {"deep": "deep A", "huge": "huge A"}
    result = run_pairwise(data, lambda q: answers.get(q, "A"), lambda q: "B", [judge])
    deep, ok, huge, fine = result.verdicts["j"]
    assert (ok.winner, fine.winner) == ("b", "b")
    assert deep.winner is None and deep.error == (
        "order A/B: judge answer nested deeper than 100 levels: '{\"reasoning\": \"r\", \"winner\": "
        f"{'[' * 27}...")
    assert huge.winner is None and huge.error == f"order A/B: judge answer nested deeper than 100 levels: '{'[' * 56}..."
    assert result.win_rate("j").missing == 2


def test_an_unexpected_error_fails_its_task_only(chat_server, tmp_path, monkeypatch):
    chat_server.responder = lambda body: answer("1" if shown_first(body) == "B" else "2")
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    real = type(judge)._verdict

    async def verdict(self, task):
        if task.output_a == "boom":
            raise RecursionError("maximum recursion depth exceeded")
        return await real(self, task)

    monkeypatch.setattr(type(judge), "_verdict", verdict)
    result = run_pairwise([{"input": "x"}, {"input": "boom"}], lambda q: "boom" if q == "boom" else "A",
                          lambda q: "B", [judge])
    assert [(v.winner, v.error) for v in result.verdicts["j"]] == [
        ("b", None), (None, "RecursionError: maximum recursion depth exceeded")]


@pytest.mark.parametrize("text", [
    DEEP,
    "[" * 200_000,
    '{"winner": "1", "reasoning": ' + DEEP + "}",
    'Here: {"winner": "2", "reasoning": {"a": ' + "[" * 150 + "}",
    "```json\n" + "{" * 101 + "\n```",
])
def test_parse_preference_refuses_json_nested_past_the_limit(text):
    with pytest.raises(JudgeError, match=r"^judge answer nested deeper than 100 levels: "):
        parse_preference(text)


def test_parse_preference_reads_json_nested_to_the_limit():
    # 100 levels: the answer object and 99 arrays; brackets inside strings and after the value do not count
    nested = "[" * 99 + "]" * 99
    assert parse_preference('{"winner": "2", "reasoning": ' + nested + "}") == Preference("2", nested)
    assert parse_preference('{"winner": "1", "reasoning": "' + "[" * 500 + '"}') == Preference("1", "[" * 500)
    assert parse_preference('{"winner": "tie"} ' + "[" * 500).winner == "tie"  # not JSON; read as prose


def test_parse_preference_reads_a_label_after_a_long_blank_run():
    # a pattern that backtracked over the blanks took minutes here (quadratic in their number)
    assert parse_preference("winner:" + " " * 100_000 + "2").winner == "2"
    with pytest.raises(JudgeError, match="has no winner"):
        parse_preference("winner:" + " " * 100_000 + "x")


def test_a_malformed_completion_is_a_named_judge_error(chat_server, tmp_path):
    chat_server.responder = lambda body: malformed({"id": "x", "choices": [{"index": 0, "message": None}]})
    judge = pairwise_judge(make_judge(chat_server, tmp_path, retries=1), "Better?", "j")
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    [verdict] = result.verdicts["j"]
    assert verdict.winner is None and verdict.error == (
        f"order A/B: judge call failed after 2 attempts: malformed completion from {chat_server.url}: "
        "choices[0].message is missing")
    assert len(chat_server.requests) == 2  # retried, as a 5xx is


def test_swap_false_asks_once(chat_server, tmp_path):
    chat_server.enqueue(answer("1", "A first wins"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j", swap=False)
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    verdict = result.verdicts["j"][0]
    assert (verdict.winner, verdict.ab, verdict.ba, verdict.reasoning) == ("a", "a", None, "A first wins")
    assert len(chat_server.requests) == 1


def test_server_without_structured_output_is_asked_in_plain_text(chat_server, tmp_path):
    chat_server.enqueue(error(400, "response_format json_schema is not supported"),
                        completion("B is clearly better.\nWinner: 2"), completion("**Winner:** Response 1"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    assert result.verdicts["j"][0].winner == "b"
    assert ["response_format" in body for body in chat_server.requests] == [True, False, False]


def test_samples_take_the_most_common_answer(chat_server, tmp_path):
    chat_server.enqueue(answer("2"), answer("1"), answer("2"), answer("tie"), answer("1"), answer("2"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path, samples=3), "Better?", "j")
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    verdict = result.verdicts["j"][0]
    assert (verdict.ab, verdict.ba, verdict.winner) == ("b", "tie", "tie")  # B/A: 1 each way → tie


def test_answers_are_cached(chat_server, tmp_path):
    chat_server.enqueue(answer("2"), answer("1"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Better?", "j")
    first = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    again = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [judge])
    assert first.verdicts["j"][0].winner == again.verdicts["j"][0].winner == "b"
    assert len(chat_server.requests) == 2 and again.verdicts["j"][0].details["judge_usage"]["cache_hits"] == 2


@pytest.mark.parametrize("text, expected", [
    ('{"winner": "1", "reasoning": "r"}', Preference("1", "r")),
    ('{"Winner": 2}', Preference("2", "")),
    ('```json\n{"reasoning": "close", "winner": "TIE"}\n```', Preference("tie", "close")),
    ('Sure: {"winner": "Response 2", "reasoning": "x"}', Preference("2", "x")),
    ("I weighed both.\nWinner: 1", Preference("1", "I weighed both.\nWinner: 1")),
])
def test_parse_preference(text, expected):
    assert parse_preference(text) == expected


@pytest.mark.parametrize("text, message", [
    ("", "judge answer is empty: ''"),
    ('{"winner": "3"}', "judge answer's winner is not \"1\", \"2\" or \"tie\": '3'"),
    ("no idea", "judge answer has no winner (expected JSON {\"winner\": \"1\" | \"2\" | \"tie\", \"reasoning\": "
                "...} or 'winner: 1'): 'no idea'"),
])
def test_parse_preference_refuses_answers_without_a_winner(text, message):
    with pytest.raises(JudgeError) as caught:
        parse_preference(text)
    assert str(caught.value) == message


def test_pairwise_judge_checks_its_arguments():
    with pytest.raises(InputError) as caught:
        pairwise_judge("gpt-4o", "Better?", "j")
    assert str(caught.value) == "judge must be a JudgeConfig(model=...); got 'gpt-4o'"
    with pytest.raises(InputError) as caught:
        pairwise_judge(JudgeConfig("m", api_key="k", cache=False), " ", "j")
    assert str(caught.value) == ("criterion must be a non-empty string saying what makes a response better; "
                                 "got ' '")


# -- nothing decided ---------------------------------------------------------------------------


class Broken(Comparator):
    """A comparator that fails on every task."""

    key = "broken"

    def describe(self):
        return {"kind": "custom"}

    async def decide(self, tasks, concurrency):
        return [Verdict(None, error="grader crashed") for _ in tasks]


def test_a_comparator_that_decided_no_pair_says_so_everywhere():
    def flaky(q):
        if q == "q2":
            raise RuntimeError("down")
        return q

    data = [{"input": f"q{i}"} for i in range(3)]
    with pytest.warns(UserWarning) as caught:
        result = run_pairwise(data, flaky, flaky, [Broken(), human_pairwise("h", ask=lambda c, x, y: "2", seed=0)])
    sentence = ("no pair was decided by 'broken' (3 of 3 tasks without a verdict: 2 comparator errors, "
                "1 where both variants failed, first: grader crashed)")
    assert [str(w.message) for w in caught] == [
        f"pairwise result {result.id}: {sentence}; its win rate is undefined (FAILED)"]
    assert caught[0].filename == __file__  # the caller's line
    assert result.warnings == [sentence]
    assert result.win_rate("broken").n == 0 and result.win_rate("h").n == 2
    assert result.win_rate("broken").failure == sentence and result.win_rate("h").failure is None
    assert repr(result).splitlines() == [
        f"PairwiseResult {result.id}: b (B) vs a (A), 3 tasks",
        f"  FAILED: {sentence}",
        # Wilson high for 0 of 2 at z = 1.96: 2 · 1.96² / 2 / (2 + 1.96²) = 0.658
        "  h: B's rate 0 [0, 0.6576], n = 2 (0 wins, 2 losses, 0 ties), p = 0.5, 1 without a verdict",
    ]
    html = result._repr_html_()
    assert f"<li><strong>FAILED</strong>: {sentence.replace(chr(39), '&#x27;')}</li>" in html
    # n, wins, losses, ties 0; rate, ci_low, ci_high and p_value not shown; 3 missing; no flips (one order)
    assert ('<tr><td class="s">broken</td><td>0</td><td>0</td><td>0</td><td>0</td><td>–</td><td>–</td><td>–</td>'
            "<td>–</td><td>3</td><td>–</td></tr>") in html
    frame = result.to_frame()
    broken = frame[frame["comparator"] == "broken"]
    assert broken["winner"].isna().all() and broken["error"].notna().all()


def test_a_judge_that_always_fails_decides_no_pair(chat_server, tmp_path):
    chat_server.responder = lambda body: error(500, "judge overloaded")
    judge = pairwise_judge(make_judge(chat_server, tmp_path, cache=False), "Better?", "j")
    with pytest.warns(UserWarning, match="its win rate is undefined"):
        result = run_pairwise([{"input": "x"}, {"input": "y"}], lambda q: "A", lambda q: "B", [judge])
    assert result.warnings == [
        "no pair was decided by 'j' (2 of 2 tasks without a verdict: 2 judge errors, first: order A/B: judge call "
        "failed after 1 attempt: InternalServerError: Error code: 500 - judge overloaded)"]
    assert repr(result).splitlines()[1] == "  FAILED: " + result.warnings[0]


def test_a_comparator_with_a_verdict_has_no_warning():
    assert result_of({"j": winners("b", None)}).warnings == []
    assert result_of({"j": []}).warnings == ["no pair was decided by 'j': there were no tasks"]


# -- the docs --------------------------------------------------------------------------------


def test_the_pairwise_docs_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    failures, tried = doctest.testfile(str(DOCS), module_relative=False, globs={"cogeval": cogeval},
                                       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0



def test_win_rate_row_stacks_with_other_tests():
    # 15 wins, 133 losses: the sign test is R's binom.test(15, 148), p-value < 2.2e-16; statistic = wins
    from scipy import stats

    row = result_of({"j": winners(*["b"] * 15, *["a"] * 133)}).win_rate("j").to_frame()
    assert row.loc[0, ["test", "n", "statistic"]].tolist() == ["sign", 148, 15]
    assert row.loc[0, "p_value"] == pytest.approx(stats.binomtest(15, 148).pvalue, rel=1e-9)


# -- AG2's include_reference and label (issue 14) --------------------------------------------------


def test_include_reference_false_hides_the_expected_answer_as_in_ag2(chat_server, tmp_path):
    # AG2's pairwise_judge(..., include_reference=False) renders no "## Reference" section, so the golden answer
    # cannot leak into criteria the responses must meet on their own.
    chat_server.enqueue(answer("2"), answer("1"))
    judge = pairwise_judge(make_judge(chat_server, tmp_path), "Which is grounded?", "grounded", include_reference=False)
    data = [{"input": "2+2", "expected": "four, exactly", "context": "Arithmetic."}]
    result = run_pairwise(data, lambda q: "5", lambda q: "4", [judge])
    assert result.verdicts["grounded"][0].winner == "b"
    for body in chat_server.requests:
        prompt = body["messages"][1]["content"]
        assert "<expected>" not in prompt and "four, exactly" not in prompt and "expected answer" not in prompt
        assert "<context>\nArithmetic.\n</context>" in prompt and "<input>\n2+2\n</input>" in prompt
    assert result.comparators["grounded"]["include_reference"] is False
    assert repr(judge).startswith("PairwiseJudge(key='grounded', criterion='Which is grounded?', swap=True, "
                                  "include_reference=False, judge=")
    with pytest.raises(InputError) as caught:
        pairwise_judge(JudgeConfig("m", api_key="k", cache=False), "Better?", "j", include_reference="no")
    assert str(caught.value) == "include_reference must be True or False; got 'no'"


def test_a_label_names_the_comparison_in_the_result_and_its_file(tmp_path):
    # AG2's evaluate_pairwise(..., label=...) records "a shared identifier" on the run and in its saved dict.
    result = run_pairwise(DATA, lambda q: "?", lambda q: str(eval(q)), [human_pairwise("human", ask=pick_correct)],
                          store=tmp_path, names=("old", "new"), label="prompt v2 vs v1")
    assert result.label == "prompt v2 vs v1"
    assert repr(result).splitlines()[0].endswith("'prompt v2 vs v1': new (B) vs old (A), 3 tasks")
    assert json.loads(result.path.read_text())["label"] == "prompt v2 vs v1"
    loaded = load_pairwise(result.path)
    assert loaded == result and loaded.label == "prompt v2 vs v1"
    assert "prompt v2 vs v1" in result._repr_html_()
    unnamed = run_pairwise(DATA, lambda q: "?", lambda q: "4", [human_pairwise("human", ask=pick_correct)])
    assert unnamed.label is None and "label" not in unnamed.to_dict()  # files without a label are as before


@pytest.mark.parametrize("label", ["", " ", 3])
def test_a_bad_label_fails_before_any_target_runs(label):
    called = []
    with pytest.raises(InputError) as caught:
        run_pairwise(DATA, called.append, called.append, [human_pairwise("h", ask=pick_correct)], label=label)
    assert str(caught.value) == f"label must be None or a non-empty string naming the comparison; got {label!r}"
    assert called == []
