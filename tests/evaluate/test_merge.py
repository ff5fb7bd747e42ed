"""merge_runs refuses what is not the shards of one run, naming the shard (issue 26 item 2); `cogeval merge`
and the readers of shard and merged run files, each in a fresh process."""

from __future__ import annotations

import json
import re

import pytest
from fresh_process import ok, read_fresh

from cogeval import Case, Dataset, EvalSuite, InputError, exact_match, load_run, merge_runs, token_f1

DATA = Dataset([Case(f"question {i}", expected=f"QUESTION {i}") for i in range(12)])


def suite_of(data=DATA, **options):
    return EvalSuite(data, str.upper, metrics=[exact_match()], progress=False, name="merged", **options)


@pytest.fixture(scope="module")
def shards():
    made = [suite_of().run(shard=(i, 3)).run for i in range(3)]
    assert all(run.results for run in made)  # every shard holds cases: each refusal below has something to name
    return made


def label(position, run):
    return f"runs[{position}] (run {run.run_id}, shard {run.shard.index} of {run.shard.count})"


def refusal(runs):
    with pytest.raises(InputError) as refused:
        merge_runs(runs)
    return str(refused.value)


def test_a_run_that_is_no_shard_is_refused(shards):
    whole = suite_of().run().run
    assert refusal([shards[0], whole]) == (
        f"runs[1] (run {whole.run_id}) is not a shard run (it has no shard); merge_runs takes the shards of one "
        "suite run, each made with suite.run(shard=(index, count))")


def test_a_shard_given_twice_is_refused(shards):
    assert refusal([shards[0], shards[1], shards[0], shards[2]]) == (
        f"{label(2, shards[0])} is given twice: {label(0, shards[0])} is shard 0 too; give each shard once")
    rerun = suite_of().run(shard=(1, 3)).run  # the same shard run again: still twice
    assert refusal([*shards, rerun]).startswith(f"{label(3, rerun)} is given twice: {label(1, shards[1])}")


def test_a_missing_shard_is_refused(shards):
    assert refusal([shards[2], shards[0]]) == "shard 1 of 3 is missing (given: shards 0, 2); merge every shard of the run"
    assert refusal([shards[1]]) == "shard 0 of 3 is missing (given: shard 1); merge every shard of the run"


def test_shards_of_another_count_are_refused(shards):
    other = suite_of().run(shard=(0, 2)).run
    assert refusal([*shards, other]) == (
        f"runs[3] (run {other.run_id}, shard 0 of 2) is one of 2 shards, but {label(0, shards[0])} one of 3; "
        "the shards of one run share their count")


def test_a_shard_of_another_dataset_is_refused(shards):
    other = suite_of(Dataset([*DATA, Case("one more")])).run(shard=(1, 3)).run
    assert refusal([shards[0], other, shards[2]]) == (
        f"{label(1, other)} was made on another dataset (fingerprint {other.fingerprint[:12]}…, 13 cases) than "
        f"{label(0, shards[0])} ({shards[0].fingerprint[:12]}…, 12 cases)")


@pytest.mark.parametrize(("options", "field", "value", "expected"), [
    ({"trials": 2}, "config.trials", "2", "1"),
    ({"metadata": {"model": "b"}}, "metadata", "{'model': 'b'}", "{}"),
    ({"name": "other"}, "name", "'other'", "'merged'"),
])
def test_a_shard_made_otherwise_is_refused(shards, options, field, value, expected):
    made = {**{"name": "merged"}, **options}
    other = EvalSuite(DATA, str.upper, metrics=[exact_match()], progress=False, **made).run(shard=(2, 3)).run
    assert refusal([*shards[:2], other]) == (
        f"{label(2, other)} was made with another configuration than {label(0, shards[0])}: "
        f"its {field} is {value}, not {expected}")


def test_a_shard_scored_by_other_metrics_is_refused(shards):
    other = EvalSuite(DATA, str.upper, metrics=[token_f1()], progress=False, name="merged").run(shard=(1, 3)).run
    assert re.fullmatch(re.escape(f"{label(1, other)} was made with another configuration than {label(0, shards[0])}: "
                                  "its config.metrics is [{'name': 'token_f1',") + ".*", refusal([shards[0], other, shards[2]]))


def test_overlapping_shards_are_refused(shards):
    borrowed = shards[1].results[0]
    swollen = shards[2].model_copy(update={"results": [*shards[2].results, borrowed]})
    assert refusal([shards[0], shards[1], swollen]) == (
        f"{label(2, swollen)} and {label(1, shards[1])} both hold the case at position {borrowed.case_index} "
        f"({borrowed.case_key[:12]}…, occurrence 0); the shards of one run hold disjoint cases")


def test_shards_that_lack_a_case_of_their_dataset_are_refused(shards):
    short = shards[1].model_copy(update={"results": shards[1].results[1:]})
    theirs = Dataset([c for c in DATA if c.key != shards[1].results[0].case_key]).fingerprint  # the 11 cases, in order
    assert refusal([shards[0], short, shards[2]]) == (
        f"the shards' 11 cases do not make up the dataset they name (12 cases, fingerprint {DATA.fingerprint[:12]}…; "
        f"theirs: {theirs[:12]}…)")


def test_an_interrupted_shard_and_a_result_without_its_position_are_refused(shards):
    stopped = shards[1].model_copy(update={"status": "interrupted"})
    assert refusal([shards[0], stopped, shards[2]]) == (
        f"{label(1, stopped)} is interrupted; finish it first with suite.run(shard=(1, 3), resume=<its file>)")
    edited = shards[0].model_copy(update={"results": [shards[0].results[0].model_copy(update={"case_index": None})]})
    assert refusal([edited, *shards[1:]]) == (
        f"{label(0, edited)}: results[0] has no caseIndex, which a shard run writes for every result (was the file edited?)")


@pytest.mark.parametrize("runs", [[], "runs/", None])
def test_something_that_is_no_list_of_runs_is_refused(runs):
    assert refusal(runs).startswith("runs must be a non-empty list of shard runs (runs, suite results or run files); got ")


def test_cogeval_merge_in_a_fresh_process(shards, tmp_path):
    files = [str(run.save(tmp_path / "shards" / f"{run.run_id}.json")) for run in shards]
    out = tmp_path / "runs"
    merged, missing, readers = read_fresh([
        ["cli", "merge", *files[::-1], "--out", str(out)],
        ["cli", "merge", files[0], files[2], "--out", str(out)],
        ["load_run", files[1]],
    ])
    answer = ok(merged)
    assert answer["status"] == 0 and answer["err"] == ""
    [path] = out.glob("*.json")
    run = load_run(path)
    assert answer["out"] == (f"merged 3 shards (12 cases, 12 results) into run {run.run_id} → {path}\n")
    assert run.merged_from == [s.run_id for s in shards] and run.fingerprint == DATA.fingerprint
    assert [r.case.input for r in run.results] == [c.input for c in DATA]
    assert [r.model_dump() for r in run.results] == [r.model_dump() for r in merge_runs(shards).results]
    assert ok(missing) == {"status": 2, "out": "", "err": "cogeval: error: shard 1 of 3 is missing (given: shards 0, 2); "
                                                          "merge every shard of the run\n"}
    assert ok(readers)["run_id"] == shards[1].run_id
    assert json.loads(path.read_text())["mergedFrom"] == run.merged_from


def test_every_reader_reads_shard_and_merged_files_first_thing_in_a_fresh_process(shards, tmp_path):
    store = tmp_path / "store"
    files = [run.save(store / f"{run.run_id}.json") for run in shards]
    run = merge_runs(shards)
    merged = run.save(store / f"{run.run_id}.json")
    reads = [["load_run", files[0]], ["load_run", merged], ["RunStore.list", store], ["cli", "show", files[1]],
             ["cli", "show", merged], ["cli", "compare", merged, files[0]]]
    answers = read_fresh(reads)
    first, whole = ok(answers[0]), ok(answers[1])
    assert first["run_id"] == shards[0].run_id and first["results"] == len(shards[0].results)
    assert whole["results"] == 12 and whole["first_case_key"] == DATA[0].key
    assert ok(answers[2]) == [[merged.stem, 12, ["exact_match"]]]  # the shards are not listed next to their run
    assert ok(answers[3])["status"] == 0 and "12 cases" in ok(answers[3])["out"]
    assert ok(answers[4])["status"] == 0 and ok(answers[5])["status"] == 0
