"""Run labels in the explorer's dropdowns: name, the metadata that tells runs apart, the start time."""

from cogeval.data import EvalRun
from cogeval.present.run_labels import run_labels


def run(suffix, started, **metadata):
    return EvalRun.model_validate({
        "run_id": f"20261201T{started.replace(':', '')}000Z-{suffix:0>8}", "name": "assistant",
        "started_at": f"2026-12-01T{started}.000Z", "finished_at": f"2026-12-01T{started}.000Z",
        "metadata": metadata, "results": []})


def test_metadata_that_differs_tells_runs_apart_and_shared_metadata_is_left_out():
    runs = [run("3", "11:00:00", version="v3", model="m", demo=True),
            run("2", "10:00:00", version="v2", model="m", demo=True),
            run("1", "09:00:00", version="v1", model="n", demo=True)]
    assert list(run_labels(runs).values()) == [
        "assistant · version=v3 · model=m · 2026-12-01 11:00",
        "assistant · version=v2 · model=m · 2026-12-01 10:00",
        "assistant · version=v1 · model=n · 2026-12-01 09:00",
    ]


def test_a_field_only_some_runs_have_tells_them_apart():
    labels = run_labels([run("2", "10:00:00", model="big"), run("1", "09:00:00")])
    assert list(labels.values()) == ["assistant · model=big · 2026-12-01 10:00", "assistant · 2026-12-01 09:00"]


def test_equal_labels_get_the_seconds_then_the_ids_suffix():
    runs = [run("a", "10:00:30"), run("b", "10:00:10"), run("c", "09:00:10"), run("d", "10:00:10")]
    assert run_labels(runs) == {
        runs[0].run_id: "assistant · 2026-12-01 10:00:30",
        runs[1].run_id: "assistant · 2026-12-01 10:00:10 · 0000000b",
        runs[2].run_id: "assistant · 2026-12-01 09:00",
        runs[3].run_id: "assistant · 2026-12-01 10:00:10 · 0000000d",
    }


def test_long_and_nested_metadata_are_not_labels():
    labels = run_labels([run("2", "10:00:00", config={"a": 1}, note="x" * 60, version="a" * 30),
                         run("1", "09:00:00", config={"a": 2}, note="y" * 60, version="b" * 30)])
    assert list(labels.values()) == [f"assistant · version={'a' * 23}… · 2026-12-01 10:00",
                                     f"assistant · version={'b' * 23}… · 2026-12-01 09:00"]
