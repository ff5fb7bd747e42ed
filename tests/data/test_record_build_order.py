"""Reading never depends on which records a process built first (issue 23 item 1).

pydantic builds a record's schema the first time it is needed and reuses it inside later records; a record
whose schema changed with what was built before it read some files only after others. Each check runs in
a fresh interpreter, builds one record first (or reads an invalid file first), then reads every fixture.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from cogeval.data import records

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "runs"
RUN_FILES = sorted(FIXTURES.glob("*.json"))
RECORDS = sorted(name for name, value in vars(records).items()
                 if isinstance(value, type) and issubclass(value, records._Record) and value is not records._Record)

_READ_ALL = """
import json, sys
from cogeval.data import records
first = sys.argv[1]
if first.endswith(".json"):
    try:
        import cogeval
        cogeval.load_run(first)
    except Exception as error:
        pass
else:
    getattr(records, first).model_rebuild(force=True)
import cogeval
print(json.dumps({path: len(cogeval.load_run(path).results) for path in sys.argv[2:]}))
"""


def _read_all_after(first: str, files: list[pathlib.Path]) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-c", _READ_ALL, first, *map(str, files)],
                          capture_output=True, text=True, timeout=120, cwd=pathlib.Path(__file__).parent)
    assert done.returncode == 0, done.stderr[-2000:]
    counts: dict[str, int] = json.loads(done.stdout)
    return counts


def _usage_free_run(tmp_path: pathlib.Path) -> pathlib.Path:
    """A run as Cogitator writes it for a function target: results without ``usage``."""
    data = json.loads((FIXTURES / "minimal.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        result.pop("usage", None)
    path = tmp_path / "no-usage.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_records_are_found():
    assert {"CaseRecord", "UsageRecord", "ResultRecord", "ScoreRecord", "StatsRecord"} <= set(RECORDS)


@pytest.mark.parametrize("first", RECORDS)
def test_every_fixture_reads_whichever_record_was_built_first(first, tmp_path):
    files = [*RUN_FILES, _usage_free_run(tmp_path)]
    counts = _read_all_after(first, files)
    assert counts[str(tmp_path / "no-usage.json")] == 1
    assert counts[str(FIXTURES / "minimal.json")] == 1
    assert counts[str(FIXTURES / "full.json")] == 3


def test_a_file_that_fails_to_load_never_stops_the_next(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "cogitator.eval-run", "version": 1, "results": [{"caseKey": 3}]}', encoding="utf-8")
    counts = _read_all_after(str(broken), [_usage_free_run(tmp_path), FIXTURES / "format-example.json"])
    assert list(counts.values()) == [1, 1]
