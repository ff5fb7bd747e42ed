"""Every importer, and the commands that read other tools' files, in a fresh process (issue 23 item 2a).

As tests/data/test_fresh_process_readers.py does for run files: each file of another tool (the fixtures, and
an Inspect AI log made here by Inspect's mock model) is read first thing in a new interpreter by its
tool's reader, then by :func:`~cogeval.importers.read_runs`, :func:`~cogeval.importers.detect` and
``cogeval import / show / compare``, and the store the import wrote is listed; each generic reader is
called first thing on every file; a broken file of each kind comes first and must not stop the next.
The expected values are those tests/importers/test_*.py establish from the tools' own output.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
from fresh_process import ok, read_fresh

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
AG2 = ["brevity", "final_answer_matches", "no_tool_errors", "token_budget", "tool_called[lookup_capital]"]
ARITH, MC = ["exact_match,flexible-extract", "exact_match,strict-match"], ["acc", "acc_norm"]
LM_EVAL_SAMPLES = "lm_eval/acme__{model}/samples_cogeval_{task}_2026-12-01T{hour}-00-00.000001.jsonl"


@dataclass(frozen=True)
class Expected:
    """One run a file holds: its name, number of results and of cases, first case key (its start), metrics."""

    name: str
    results: int
    cases: int
    key: str
    scored: list[str]


FILES: dict[str, tuple[str, str, list[Expected]]] = {
    # file: (detected kind, the tool's reader, its runs)
    "ag2/mini.json": ("ag2", "read_ag2_run", [Expected("capitals", 6, 6, "00eac518599f", AG2)]),
    "ag2/large.json": ("ag2", "read_ag2_run", [Expected("capitals", 6, 6, "00eac518599f", AG2)]),
    "ag2/repeats.json": ("ag2", "read_ag2_run", [Expected("capitals", 4, 2, "00eac518599f", AG2)]),
    LM_EVAL_SAMPLES.format(model="small-v1", task="arith", hour="10"):
        ("lm-eval", "read_lm_eval_samples", [Expected("acme/small-v1", 8, 8, "2434ba680de0", ARITH)]),
    LM_EVAL_SAMPLES.format(model="small-v1", task="mc", hour="10"):
        ("lm-eval", "read_lm_eval_samples", [Expected("acme/small-v1", 4, 4, "d8df2427aff2", MC)]),
    LM_EVAL_SAMPLES.format(model="large-v2", task="arith", hour="11"):
        ("lm-eval", "read_lm_eval_samples", [Expected("acme/large-v2", 8, 8, "2434ba680de0", ARITH)]),
    LM_EVAL_SAMPLES.format(model="large-v2", task="mc", hour="11"):
        ("lm-eval", "read_lm_eval_samples", [Expected("acme/large-v2", 4, 4, "d8df2427aff2", MC)]),
    "promptfoo/two-prompts.json": ("promptfoo", "read_promptfoo", [
        Expected("terse / echo", 10, 5, "a95b110933d8", ["brevity", "mentions_topic", "pass", "score"]),
        Expected("verbose / echo", 10, 5, "a95b110933d8", ["brevity", "mentions_topic", "pass", "score"])]),
    "promptfoo/providers.json": ("promptfoo", "read_promptfoo", [
        Expected("prompt 6ee0d7b6b1f3 / echo", 5, 4, "15b14cdd4648", ["names_city", "pass", "score"]),
        Expected("prompt 6ee0d7b6b1f3 / flaky", 5, 4, "15b14cdd4648", ["names_city", "pass", "score"])]),
}
"""Every importer fixture that is a tool's run (lm-eval's ``results_*.json`` only go with their samples)."""
INSPECT = [Expected("sums (mockllm/model)", 2, 2, "990ca836ae07", ["match"])]
"""The Inspect logs :func:`inspect_logs` makes: two samples, both answered right."""
SOURCES = [*FILES, "inspect/sums.eval", "inspect/sums.json"]
GENERIC_READERS = ["read_runs", "detect", "cli import", "cli show", "cli compare"]

_MAKE_INSPECT_LOGS = r'''
import json, pathlib, shutil, sys
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match

def answer(messages, tools, tool_choice, config):
    output = ModelOutput.from_content("mockllm/model", str(2 * int(messages[-1].text[8])))
    output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)  # so Inspect fetches no tokenizer
    return output

folder = pathlib.Path(sys.argv[1])
samples = [Sample(id="a", input="What is 2+2?", target="4"), Sample(id="b", input="What is 3+3?", target="6")]
for kind in ("eval", "json"):
    task = Task(dataset=samples, scorer=match(), name="sums", model=get_model("mockllm/model", custom_outputs=answer))
    [log] = inspect_eval(task, log_format=kind, display="none", log_dir=str(folder / "logs"))
    shutil.move(log.location, folder / f"sums.{kind}")
'''


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> pathlib.Path:
    """A folder holding ``sums.eval`` and ``sums.json``, made by Inspect in its own process (none of its state
    stays in this one)."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (pip install 'cogeval[inspect]')")
    folder = tmp_path_factory.mktemp("inspect")
    done = subprocess.run([sys.executable, "-c", _MAKE_INSPECT_LOGS, str(folder)], capture_output=True, text=True,
                          timeout=110, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


@dataclass
class ToolFile:
    path: pathlib.Path
    kind: str
    reader: str
    runs: list[Expected]
    out: pathlib.Path


def _prepare(source: str, folder: pathlib.Path, inspect_logs: pathlib.Path | None) -> ToolFile:
    """``source`` copied into ``folder`` (with an lm-eval samples file's results file, as lm-eval writes them)."""
    if source.startswith("inspect/"):
        assert inspect_logs is not None
        original, (kind, reader, runs) = inspect_logs / source.partition("/")[2], ("inspect", "read_inspect_log", INSPECT)
    else:
        original, (kind, reader, runs) = FIXTURES / source, FILES[source]
    folder.mkdir(parents=True)
    siblings = [p for p in original.parent.glob("results_*.json")] if kind == "lm-eval" else []
    for path in [original, *siblings]:
        shutil.copyfile(path, folder / path.name)
    return ToolFile(folder / original.name, kind, reader, runs, folder / "imported")


def _reads(reader: str, tool_file: ToolFile) -> list[list[Any]]:
    path, out = tool_file.path, tool_file.out
    return {
        "tool": [[tool_file.reader, path]], "read_runs": [["read_runs", path]], "detect": [["detect", path]],
        "cli import": [["cli", "import", path, "--out", out, "--wide"]], "cli show": [["cli", "show", path, "--wide"]],
        "cli compare": [["cli", "compare", path, path, "--format", "json"]],
        "store": [["RunStore.list", out], ["RunStore.latest", out], ["cli", "runs", out, "--wide"]],  # after cli import
    }[reader]


def _matches(summary: dict[str, Any], expected: Expected) -> bool:
    return ((summary["name"], summary["results"], summary["first_case_key"][:12], summary["scored"])
            == (expected.name, expected.results, expected.key, expected.scored) and summary["metrics"] != [])


def _check(reader: str, answers: list[dict[str, Any]], tool_file: ToolFile) -> None:
    """That ``reader`` read ``tool_file`` as expected (``answers``: one per read of :func:`_reads`)."""
    runs = tool_file.runs
    value = ok(answers[0])
    if reader in ("tool", "read_runs"):
        summaries = value if isinstance(value, list) else [value]
        assert len(summaries) == len(runs) and all(map(_matches, summaries, runs)), summaries
    elif reader == "detect":
        assert value == tool_file.kind
    elif reader == "cli import":
        assert value["status"] == 0, value["err"]
        lines = _printed(value["out"])
        assert [line.split("  ")[1:3] for line in lines] == [[run.name, f"{run.results} results"] for run in runs]
        assert len(list(tool_file.out.glob("*.json"))) == len(runs)
    elif reader in ("cli show", "cli compare") and len(runs) > 1:
        assert value["status"] == 2 and f"holds {len(runs)} runs" in value["err"] and "cogeval import" in value["err"]
    elif reader == "cli show":
        assert value["status"] == 0, value["err"]
        lines = _printed(value["out"])
        assert lines[0].startswith("run ") and f"  name {runs[0].name}  started " in lines[0]
        assert lines[1].startswith(f"{runs[0].results} results, ") and f", {runs[0].cases} cases, " in lines[1]
    elif reader == "cli compare":
        assert value["status"] == 0, value["err"]
        document = json.loads(value["out"])
        assert document["head"]["name"] == runs[0].name and document["matched"] == runs[0].cases
        assert set(runs[0].scored) <= {row["metric"] for row in document["metrics"]}
    else:  # the store `cogeval import` wrote
        listed, latest, printed = value, ok(answers[1]), ok(answers[2])
        assert sorted(cases for _, cases, _ in listed) == sorted(run.cases for run in runs)
        assert any(_matches(latest, run) for run in runs) and latest["run_id"] in {run_id for run_id, _, _ in listed}
        assert printed["status"] == 0 and len(_printed(printed["out"])) == 1 + len(runs)


def _needs_inspect(sources: list[str], request: pytest.FixtureRequest) -> pathlib.Path | None:
    return request.getfixturevalue("inspect_logs") if any(s.startswith("inspect/") for s in sources) else None


def test_every_importer_fixture_is_listed():
    found = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("**/*.json*") if not p.name.startswith("results_")}
    assert found == set(FILES)


@pytest.mark.parametrize("source", SOURCES)
def test_every_reader_reads_the_tools_file_first_thing_in_a_fresh_process(source, tmp_path, request):
    tool_file = _prepare(source, tmp_path / "file", _needs_inspect([source], request))
    order = ["tool", "read_runs", "detect", "cli import", "cli show", "cli compare", "store"]  # its reader first
    reads = [_reads(reader, tool_file) for reader in order]
    answers = iter(read_fresh([read for group in reads for read in group]))
    for reader, group in zip(order, reads):
        _check(reader, [next(answers) for _ in group], tool_file)


@pytest.mark.slow
@pytest.mark.parametrize("reader", GENERIC_READERS)
def test_each_reader_first_thing_in_a_fresh_process_reads_every_tools_file(reader, tmp_path, request):
    inspect_logs = _needs_inspect(SOURCES, request)
    files = [_prepare(source, tmp_path / f"file{i}", inspect_logs) for i, source in enumerate(SOURCES)]
    answers = read_fresh([read for tool_file in files for read in _reads(reader, tool_file)])
    for tool_file, answer in zip(files, answers):
        _check(reader, [answer], tool_file)


def _broken_ag2(data: Any) -> Any:
    data["tasks"][0]["feedback"][1]["score"] = "yes"
    return data


def _broken_promptfoo(data: Any) -> Any:
    data["results"]["results"][3]["success"] = "yes"
    return data


def _broken_inspect(data: Any) -> Any:
    data["samples"][1]["epoch"] = "second"
    return data


BROKEN = {  # kind: (the file to break, how, the start of the reader's message)
    "ag2": ("ag2/mini.json", _broken_ag2, "RunFileError: AG2 run file '"),
    "promptfoo": ("promptfoo/two-prompts.json", _broken_promptfoo, "RunFileError: promptfoo file '"),
    "lm-eval": (LM_EVAL_SAMPLES.format(model="small-v1", task="mc", hour="10"), None,
                "RunFileError: lm-eval samples file '"),
    "inspect": ("inspect/sums.json", _broken_inspect, "RunFileError: Inspect log '"),
}


def _break(tool_file: ToolFile, kind: str) -> None:
    _, change, _ = BROKEN[kind]
    text = tool_file.path.read_text(encoding="utf-8")
    if change is None:  # JSON Lines: the second line's doc_id
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        lines[1]["doc_id"] = "two"
        text = "".join(json.dumps(line) + "\n" for line in lines)
    else:
        text = json.dumps(change(json.loads(text)))
    tool_file.path.write_text(text, encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_file_never_stops_the_next_in_a_fresh_process(kind, tmp_path, request):
    source, _, message = BROKEN[kind]
    inspect_logs = _needs_inspect([source], request)
    broken = _prepare(source, tmp_path / "broken", inspect_logs)
    _break(broken, kind)
    good = [_prepare(s, tmp_path / f"file{i}", inspect_logs) for i, s in enumerate(SOURCES)
            if (FILES[s][0] if s in FILES else "inspect") == kind]
    readers = ["tool", "read_runs", "cli import"]
    answers = read_fresh([read for tool_file in [broken, *good] for reader in readers
                          for read in _reads(reader, tool_file)])
    for answer in answers[:2]:
        assert answer["error"].startswith(message) and str(broken.path) in answer["error"], answer
    refused = ok(answers[2])
    assert refused["status"] == 2 and refused["err"].startswith(f"cogeval: error: {message.partition(': ')[2]}")
    assert not broken.out.exists() or not list(broken.out.glob("*.json"))
    for i, tool_file in enumerate(good, start=1):
        for j, reader in enumerate(readers):
            _check(reader, [answers[i * len(readers) + j]], tool_file)


def _printed(out: str) -> list[str]:
    """The lines a CLI command printed, without a table's rule under its header (one line per row at --wide)."""
    return [line for line in out.splitlines() if line.strip() and set(line.strip()) != {"─"}]
