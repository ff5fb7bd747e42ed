"""Writing never fails: lone surrogates, deep nesting, unprintable objects, unusual keys (docs/run-files.md)."""

import json
import pathlib

import pytest

from cogeval import EvalRun, EvalSuite, TargetResponse, exact_match, load_run
from cogeval.data import json_limits
from cogeval.data.jsonable import MAX_DEPTH, VALUE_DEPTH, json_text, jsonable
from cogeval.data.run_id import check_run_id
from cogeval.errors import InputError

RUN = {"runId": "20261022T101530123Z-1a2b3c4d", "startedAt": "2026-10-22T10:15:30.123Z",
       "finishedAt": "2026-10-22T10:15:31.000Z"}


class Unprintable:
    def __str__(self):
        raise RuntimeError("no str")

    __repr__ = __str__


class BrokenMapping(dict):
    def items(self):
        raise RuntimeError("cannot list")

    def __repr__(self):
        return "BrokenMapping(...)"


def nested(levels, leaf="x"):
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def depth(value):
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def test_unusual_keys_become_their_string_form():
    assert jsonable({(1, 2): "a", None: "b", 3: "c", b"k": "d", 1.5: "e", True: "f", Unprintable(): "g"}) == {
        "(1, 2)": "a", "None": "b", "3": "c", "b'k'": "d", "1.5": "e", "True": "f", "<unprintable Unprintable>": "g"}


def test_objects_whose_str_raises_become_a_marker():
    assert jsonable({"bad": Unprintable(), "list": [Unprintable()]}) == {
        "bad": "<unprintable Unprintable>", "list": ["<unprintable Unprintable>"]}
    assert jsonable(BrokenMapping(a=1)) == "BrokenMapping(...)"  # a container that cannot be read: its text


def test_nesting_deeper_than_max_depth_is_cut_to_its_repr():
    assert MAX_DEPTH == json_limits.MAX_DEPTH == 100 and VALUE_DEPTH == 95  # the readers' limit
    assert jsonable(nested(3), max_depth=2) == [["[Too deep] ['x']"]]
    assert jsonable({"a": {"b": {"c": 1}}}, max_depth=2) == {"a": {"b": "[Too deep] {'c': 1}"}}
    kept = jsonable(nested(MAX_DEPTH))
    assert kept == nested(MAX_DEPTH)
    cut = jsonable(nested(600))
    assert depth(cut) == MAX_DEPTH
    inner = cut
    for _ in range(MAX_DEPTH - 1):
        [inner] = inner
    assert inner == ["[Too deep] " + repr(nested(600 - MAX_DEPTH))]
    # so deep that repr itself gives up: the marker says so
    assert jsonable(nested(5000)) == nested(MAX_DEPTH, "[Too deep] <unprintable list>")


def test_lone_surrogates_are_kept_and_written_as_json_escapes():
    assert jsonable({"o": "cut \ud83d"}) == {"o": "cut \ud83d"}
    text = json_text({"o": "cut \ud83d", "k\udc80": ["\ud83d\ude00"]})
    assert text == '{"o": "cut \\ud83d", "k\\udc80": ["\\ud83d\\ude00"]}'
    assert text.encode("utf-8")  # any UTF-8 writer takes it
    assert json.loads(text)["o"] == "cut \ud83d"


def test_integers_longer_than_readers_take_become_hex():
    big = 1 << 20_000
    assert jsonable([big]) == [hex(big)]
    assert jsonable(10**20) == 10**20
    assert jsonable(10**4299) == 10**4299 and jsonable(-(10**4299)) == -(10**4299)  # 4300 digits: readers take them
    assert jsonable(10**4300) == hex(10**4300)


def test_a_run_with_a_lone_surrogate_saves_and_loads_back_equal(tmp_path):
    run = EvalRun.model_validate({**RUN, "name": "cut \ud83d", "results": [
        {"case_key": "k", "case": {"input": "q \ud83d"}, "output": "answer \ud83d",
         "scores": [{"metric": "m", "score": 1.0}]}]})
    path = run.save(tmp_path)
    assert b'"output": "answer \\ud83d"' in path.read_bytes()
    loaded = load_run(path)
    assert loaded == run and loaded.results[0].output == "answer \ud83d"


def test_a_run_with_deep_unprintable_and_oddly_keyed_values_saves(tmp_path):
    run = EvalRun.model_validate({**RUN, "metadata": {"m": {(1, 2): "t", None: 1, b"k": 2}}, "results": [
        {"case_key": "k", "case": {"input": "q"}, "output": Unprintable(),
         "tool_calls": [{"deep": nested(600), "bad": Unprintable()}]}]})
    path = run.save(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert depth(document) <= MAX_DEPTH  # cut to what readers accept (values at VALUE_DEPTH), and read back
    json_limits.loads(path.read_text(encoding="utf-8"), "run file")
    assert document["metadata"] == {"m": {"(1, 2)": "t", "None": 1, "b'k'": 2}}
    assert document["results"][0]["output"] == "<unprintable Unprintable>"
    assert document["results"][0]["toolCalls"][0]["bad"] == "<unprintable Unprintable>"
    assert load_run(path).to_dict() == run.to_dict()


def test_a_suite_whose_answer_ends_in_half_an_emoji_saves_and_reports(tmp_path):
    def target(question):
        return TargetResponse(output="hi \ud83d", tool_calls=[{"deep": nested(600), "bad": Unprintable()}])

    result = EvalSuite([{"input": "a", "expected": "a"}], target, metrics=[exact_match()], progress=False).run()
    path = result.save_run(tmp_path / "runs/")
    loaded = load_run(path)
    # The tool calls are cut to VALUE_DEPTH levels when the run is built, so the file holds them as memory does
    assert loaded.to_dict() == result.run.to_dict()
    assert loaded.results[0].output == "hi \ud83d"
    [report] = result.report("json", tmp_path / "report.json")
    assert json.loads(pathlib.Path(report).read_text(encoding="utf-8"))["results"][0]["output"] == "hi \ud83d"


def test_a_prompt_with_a_tuple_key_and_a_value_between_the_depths_load_back_equal(tmp_path):
    def target(question):
        return TargetResponse("a", prompt={("k", 1): "v", "key": "p"}, tool_calls=nested(VALUE_DEPTH + 2))

    result = EvalSuite([{"input": "a", "expected": "a"}], target, metrics=[exact_match()], progress=False).run()
    loaded = load_run(result.save_run(tmp_path))
    assert loaded == result.run
    assert json.loads(loaded.results[0].prompt.model_dump_json(by_alias=True)) == {
        "key": "p", "versionId": None, "version": None, "abTest": None, "('k', 1)": "v"}


@pytest.mark.parametrize("run_id", ["20261022T101530123Z-1a2b3c4d\n", "20261022T101530123Z-1a2b3c4d\r\n",
                                    "\n20261022T101530123Z-1a2b3c4d", "٢٠٢٦١٠٢٢T101530123Z-1a2b3c4d"])
def test_a_run_id_must_match_whole_with_ascii_digits(run_id):
    with pytest.raises(InputError, match=r"^run_id must look like"):
        check_run_id(run_id)
    assert check_run_id("20261022T101530123Z-1a2b3c4d") == "20261022T101530123Z-1a2b3c4d"
