"""A store reads only regular files in its folder, of a bounded size (issue 24 item 7): a FIFO named
``*.json`` would hang a listing, a link to ``/dev/zero`` would fill memory, a link out of the folder would
read what the store does not hold. Each is skipped with a reason; ``load`` of one raises naming it."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from cogeval import RunStore
from cogeval.errors import RunFileError
from cogeval.store import run_store as store_module

RUN = pathlib.Path(__file__).parents[1] / "data" / "fixtures" / "runs" / "full.json"
RUN_ID = "20261022T101530123Z-0badcafe"
OTHER_ID = "20261022T101531123Z-0badcafe"


def _skipped(folder: pathlib.Path) -> tuple[list[str], dict[str, str]]:
    reasons: dict[str, str] = {}
    store = RunStore(folder, on_skip=lambda event: reasons.__setitem__(pathlib.Path(event["path"]).name, event["reason"]))
    return [summary["id"] for summary in store.list()], reasons


def test_fifos_devices_and_links_out_of_the_folder_are_skipped_with_a_reason(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(RUN, folder / f"{RUN_ID}.json")
    os.mkfifo(folder / "20261022T101532123Z-00000001.json")
    (folder / "20261022T101533123Z-00000002.json").symlink_to("/dev/zero")
    outside = tmp_path / "elsewhere.json"
    shutil.copy(RUN, outside)
    (folder / "20261022T101534123Z-00000003.json").symlink_to(outside)
    (folder / "inside.json").symlink_to(folder / f"{RUN_ID}.json")  # a link within the folder is read
    ids, reasons = _skipped(folder)
    assert ids == [RUN_ID, RUN_ID]
    assert reasons == {
        "20261022T101532123Z-00000001.json": "is not a regular file (a FIFO, a device or a socket)",
        "20261022T101533123Z-00000002.json": "is a link to a file outside the store's folder",
        "20261022T101534123Z-00000003.json": "is a link to a file outside the store's folder",
    }
    with pytest.raises(RunFileError) as info:
        RunStore(folder).load("20261022T101532123Z-00000001")
    assert str(info.value) == (f"run file '{folder}/20261022T101532123Z-00000001.json' is not a regular file "
                               "(a FIFO, a device or a socket)")


def test_a_file_larger_than_a_store_reads_is_skipped(tmp_path, monkeypatch):
    shutil.copy(RUN, tmp_path / f"{RUN_ID}.json")
    monkeypatch.setattr(store_module, "_MAX_RUN_FILE_BYTES", RUN.stat().st_size - 1)
    ids, reasons = _skipped(tmp_path)
    assert ids == []
    assert reasons == {f"{RUN_ID}.json": f"holds {RUN.stat().st_size:,} bytes, more than a store reads "
                                         f"({RUN.stat().st_size - 1:,}); read it with load_run"}
