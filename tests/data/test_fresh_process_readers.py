"""Every reader of run files, on every run-file fixture, in a fresh process (issue 23 item 2a).

A user's script reads one file first; a reader that works only after the test suite built some model in
the same process (``KeyError: 'schema'``) passed every in-process test. So here each file is read first
thing in a new interpreter (by ``load_run``, then by every other reader), each reader is called first
thing on every file, and a file that fails to load comes first and must not stop the files after it.
Expected values come from the file's JSON itself, not from cogeval.
"""

from __future__ import annotations

import json
import pathlib
import shutil
from dataclasses import dataclass
from typing import Any

import pytest
from formats_example import FORMAT_EXAMPLE, format_example, in_ci
from fresh_process import ok, read_fresh

TESTS = pathlib.Path(__file__).parents[1]


def _is_run_file(path: pathlib.Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("format") == "cogitator.eval-run"


RUN_FIXTURES = sorted(path for path in TESTS.glob("**/fixtures/**/*.json") if _is_run_file(path))
"""Every run file among the tests' fixtures (the other JSON fixtures are other tools' files: the importers')."""
SOURCES = [*((path, False) for path in RUN_FIXTURES), (FORMAT_EXAMPLE, False),
           *((path, True) for path in RUN_FIXTURES if '"usage"' in path.read_text(encoding="utf-8"))]
"""(file, strip ``usage`` from its results): a run made by a function target has no ``usage``."""
SOURCE_IDS = [("shared/formats/eval-run-example.json" if path == FORMAT_EXAMPLE else str(path.relative_to(TESTS)))
              + ("-no-usage" if strip else "") for path, strip in SOURCES]
READERS = ["load_run", "read_runs", "detect", "RunStore.list", "RunStore.runs", "RunStore.latest", "RunStore.load",
           "cli show", "cli compare", "cli runs", "cli import"]
"""Every way a user reads a run file: the functions, the store's methods, and the commands (``cogeval show``...)."""


@dataclass
class RunFile:
    """A run file to read, its store folder (the file alone, as ``<runId>.json``) and what its JSON says."""

    path: pathlib.Path
    store: pathlib.Path
    data: dict[str, Any]
    out: pathlib.Path

    @property
    def expected_run(self) -> dict[str, Any]:
        results, config = self.data["results"], self.data.get("config", {})
        return {"run_id": self.data["runId"], "name": self.data.get("name"), "results": len(results),
                "first_case_key": results[0]["caseKey"],
                "metrics": [m if isinstance(m, str) else m["name"] for m in config.get("metrics", [])],
                "scored": sorted({s["metric"] for result in results for s in result["scores"]})}

    @property
    def matched(self) -> int:
        return len({(r["caseKey"], r.get("occurrence", 0)) for r in self.data["results"]})


def _prepare(source: pathlib.Path, strip_usage: bool, folder: pathlib.Path) -> RunFile:
    if source == FORMAT_EXAMPLE:
        source = format_example()
    data = json.loads(source.read_text(encoding="utf-8"))
    folder.mkdir(parents=True)
    path = folder / source.name
    if strip_usage:
        for result in data["results"]:
            result.pop("usage", None)
        path.write_text(json.dumps(data), encoding="utf-8")  # ASCII: the fixtures hold lone surrogates
    else:
        shutil.copyfile(source, path)
    store = folder / "store"
    store.mkdir()
    shutil.copyfile(path, store / f"{data['runId']}.json")
    return RunFile(path, store, data, folder / "imported")


def _every_file(folder: pathlib.Path) -> list[RunFile]:
    """Every source prepared in ``folder``; outside CI without the shared example, the others."""
    sources = [(path, strip) for path, strip in SOURCES if path != FORMAT_EXAMPLE or path.is_file() or in_ci()]
    return [_prepare(source, strip, folder / f"file{i}") for i, (source, strip) in enumerate(sources)]


def _read(reader: str, run: RunFile) -> list[Any]:
    """The read of ``run`` by ``reader``, as :func:`fresh_process.read_fresh` takes it."""
    return {
        "load_run": ["load_run", run.path], "read_runs": ["read_runs", run.path], "detect": ["detect", run.path],
        "RunStore.list": ["RunStore.list", run.store], "RunStore.runs": ["RunStore.runs", run.store],
        "RunStore.latest": ["RunStore.latest", run.store],
        "RunStore.load": ["RunStore.load", run.store, run.data["runId"]],
        "cli show": ["cli", "show", run.path, "--wide"], "cli compare": ["cli", "compare", run.path, run.path, "--format", "json"],
        "cli runs": ["cli", "runs", run.store, "--wide"], "cli import": ["cli", "import", run.path, "--out", run.out, "--wide"],
    }[reader]


def _check(reader: str, answer: dict[str, Any], run: RunFile) -> None:
    """That ``reader`` read ``run`` as its JSON says."""
    value, expected = ok(answer), run.expected_run
    if reader in ("load_run", "RunStore.latest", "RunStore.load"):
        assert value == expected
    elif reader in ("read_runs", "RunStore.runs"):
        assert value == [expected]
    elif reader == "detect":
        assert value == "cogeval"
    elif reader == "RunStore.list":
        [(run_id, cases, metrics)] = value
        assert (run_id, cases) == (expected["run_id"], run.data.get("dataset", {}).get("cases", run.matched))
        assert set(expected["scored"]) <= set(metrics)
    else:
        assert value["status"] == 0, value["err"]
        lines = _printed(value["out"])
        if reader == "cli show":
            assert lines[0].startswith(f"run {expected['run_id']}  name {expected['name']}  started ")
            assert lines[1].startswith(f"{expected['results']} results, ")
        elif reader == "cli compare":
            document = json.loads(value["out"])
            assert document["head"]["run_id"] == expected["run_id"] and document["matched"] == run.matched
            assert set(expected["scored"]) <= {row["metric"] for row in document["metrics"]}
        elif reader == "cli runs":
            assert lines[0].split()[0] == "id" and lines[1].split()[0] == expected["run_id"] and len(lines) == 2
        else:
            [line] = lines
            assert line.startswith(f"{expected['run_id']}  ") and f"  {expected['results']} results  → " in line
            assert (run.out / f"{expected['run_id']}.json").is_file()


def test_the_run_fixtures_are_found():
    names = {str(path.relative_to(TESTS)) for path in RUN_FIXTURES}
    assert {"data/fixtures/runs/minimal.json", "data/fixtures/runs/format-example.json",
            "data/fixtures/runs/full.json", "evaluate/fixtures/suite-run.json"} <= names
    assert not any("importers" in name or "pairwise" in name for name in names)


@pytest.mark.parametrize(("source", "strip_usage"), SOURCES, ids=SOURCE_IDS)
def test_every_reader_reads_the_file_first_thing_in_a_fresh_process(source, strip_usage, tmp_path):
    run = _prepare(source, strip_usage, tmp_path / "file")
    answers = read_fresh([_read(reader, run) for reader in READERS])  # load_run first
    for reader, answer in zip(READERS, answers):
        _check(reader, answer, run)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
def test_each_reader_first_thing_in_a_fresh_process_reads_every_file(reader, tmp_path):
    runs = _every_file(tmp_path)
    runs.sort(key=lambda run: "usage" in json.dumps(run.data))  # files without usage first: they broke first
    answers = read_fresh([_read(reader, run) for run in runs])
    for run, answer in zip(runs, answers):
        _check(reader, answer, run)


INVALID = {
    "case-key-not-text": {"results": [{"caseKey": 3, "case": {"input": "q"}, "output": "a", "scores": []}]},
    "score-not-a-number": {"results": [{"caseKey": "k", "case": {"input": "q"}, "output": "a",
                                        "scores": [{"metric": "m", "score": "high"}]}]},
    "usage-not-a-count": {"results": [{"caseKey": "k", "case": {"input": "q"}, "output": "a", "scores": [],
                                       "usage": {"inputTokens": "many"}}]},
    "no-case": {"results": [{"caseKey": "k", "output": "a", "scores": []}]},
}
"""Run files that fail validation deep inside a result, where pydantic builds the nested models."""


def _check_refused(reader: str, answer: dict[str, Any], path: pathlib.Path) -> None:
    """That ``reader`` refused the invalid file at ``path`` as a user should see it: naming the file."""
    if reader == "detect":
        assert answer == {"ok": "cogeval"}
    elif reader == "RunStore.list" or reader == "RunStore.runs":
        assert answer == {"ok": []}  # skipped, with a warning naming it
    elif reader == "RunStore.latest":
        assert answer == {"ok": None}
    elif reader.startswith("cli "):
        value = ok(answer)
        if reader == "cli runs":
            assert value["status"] == 0 and value["out"].startswith("no runs in ") and "skipped " in value["err"]
        else:
            assert value["status"] == 2 and value["err"].startswith("cogeval: error: run file '")
            assert path.name in value["err"]
    else:
        assert answer["error"].startswith("RunFileError: run file '") and path.name in answer["error"]


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
def test_a_file_that_fails_to_load_never_stops_the_next_in_a_fresh_process(reader, tmp_path):
    broken = []
    for i, (name, body) in enumerate(INVALID.items()):
        data = {"format": "cogitator.eval-run", "version": 1, "runId": f"20261022T10153{i}123Z-0badf00d", **body}
        run = _prepare(TESTS / "data/fixtures/runs/minimal.json", False, tmp_path / name)  # then broken in place
        (run.store / f"{run.data['runId']}.json").unlink()
        for path in (run.path, run.store / f"{data['runId']}.json"):
            path.write_text(json.dumps(data), encoding="utf-8")
        run.data = data
        broken.append(run)
    good = _every_file(tmp_path)
    answers = read_fresh([_read(reader, run) for run in [*broken, *good]])
    for run, answer in zip(broken, answers):
        _check_refused(reader, answer, run.path if reader in ("load_run", "read_runs", "cli show", "cli compare",
                                                               "cli import") else run.store)
    for run, answer in zip(good, answers[len(broken):]):
        _check(reader, answer, run)


def _printed(out: str) -> list[str]:
    """The lines a CLI command printed, without a table's rule under its header (one line per row at --wide)."""
    return [line for line in out.splitlines() if line.strip() and set(line.strip()) != {"─"}]
