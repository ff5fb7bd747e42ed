"""Checkpoint paths (issue 24 item 2): checked before the first call, never overwriting another run, and a
write that fails later costs a warning, never the run. ``resume=`` takes a checkpoint folder as well."""

from __future__ import annotations

import re
import shutil

import pytest

from cogeval import Case, EvalSuite, RunInterrupted, exact_match, load_run
from cogeval.errors import InputError

CASES = [Case(f"q{i}", expected=f"q{i}") for i in range(4)]
OTHER_RUN = "20261022T101530123Z-0badcafe"


def _suite(target=str):
    return EvalSuite(CASES, target, metrics=[exact_match()], concurrency=1, progress=False)


def _calls():
    calls: list[str] = []

    def target(text):
        calls.append(text)
        return text

    return calls, target


def test_a_checkpoint_that_cannot_be_written_is_refused_before_any_call():
    calls, target = _calls()
    with pytest.raises(InputError) as info:
        _suite(target).run(checkpoint="/sys/cogeval-checkpoint.json")
    assert str(info.value) == "checkpoint '/sys/cogeval-checkpoint.json' cannot be written: Permission denied"
    assert calls == []


def test_a_checkpoint_never_overwrites_another_run(tmp_path):
    path = tmp_path / "checkpoint.json"
    calls, target = _calls()
    earlier = _suite(target).run()
    earlier.run.save(path)
    before = path.read_bytes()
    calls.clear()
    with pytest.raises(InputError) as info:
        _suite(target).run(checkpoint=path)
    assert str(info.value) == (f"checkpoint {str(path)!r} already holds run {earlier.run.run_id!r}; resume it with "
                               "resume= that path, or choose another checkpoint path (it is never overwritten)")
    assert calls == [] and path.read_bytes() == before
    # resuming it into the same path is what a checkpoint is for
    assert _suite(target).run(resume=path, checkpoint=path).run.run_id == earlier.run.run_id
    assert calls == []


def test_a_checkpoint_never_overwrites_a_file_that_is_no_run(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"mine": true}', encoding="utf-8")
    with pytest.raises(InputError, match=r"already holds no run file; resume it with resume= that path"):
        _suite().run(checkpoint=path)
    assert path.read_text(encoding="utf-8") == '{"mine": true}'


def test_a_checkpoint_write_that_fails_later_warns_once_and_the_run_goes_on(tmp_path):
    folder = tmp_path / "checkpoints"

    def target(text):
        if text == "q1":  # the checkpoint folder becomes a file: every later write fails
            shutil.rmtree(folder)
            folder.write_text("in the way", encoding="utf-8")
        return text

    with pytest.warns(RuntimeWarning) as caught:
        result = _suite(target).run(checkpoint=f"{folder}/", checkpoint_every=0)
    said = [str(w.message) for w in caught if "checkpoint" in str(w.message)]
    [file] = {w.split("'")[1] for w in said}
    assert file.startswith(f"{folder}/") and file.endswith(f"{result.run.run_id}.json")
    [message] = said  # once; the reason is the OS's, as the folder went while a write was under way or before
    assert re.fullmatch(rf"checkpoint {re.escape(repr(file))} could not be written \((File exists|Not a directory|"
                        r"No such file or directory)\); the run goes on and keeps every answer in memory", message)
    assert folder.read_text(encoding="utf-8") == "in the way"
    assert len(result.run.results) == 4 and result.run.stats.errors == 0


def test_resume_takes_the_checkpoint_folder_it_wrote(tmp_path):
    folder = tmp_path / "checkpoints"
    calls: list[str] = []
    stop = ["q2"]

    def target(text):
        calls.append(text)
        if text in stop:
            raise KeyboardInterrupt  # as a Ctrl-C passed on by the target
        return text

    with pytest.raises(RunInterrupted):
        _suite(target).run(checkpoint=f"{folder}/", checkpoint_every=0)
    [written] = folder.glob("*.json")
    calls.clear()
    stop.clear()
    finished = _suite(target).run(resume=folder, checkpoint=folder)
    assert calls == ["q2", "q3"]
    assert finished.run.run_id == written.stem and len(load_run(written).results) == 4


def test_resume_of_a_folder_without_runs_names_it(tmp_path):
    with pytest.raises(InputError) as info:
        _suite().run(resume=tmp_path)
    assert str(info.value) == f"resume: folder {str(tmp_path)!r} holds no run file (<run id>.json)"
