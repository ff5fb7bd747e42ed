"""What the command line does when its output goes wrong (issue 24 item 8), in fresh processes.

An output that cannot be written is one line naming the path, exit 2, no traceback; a reader that stops
reading (``cogeval runs | head -1``) ends the command quietly, exit 0.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

FULL_RUN = pathlib.Path(__file__).parent / "data" / "fixtures" / "runs" / "full.json"


def _cogeval(*args: str, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogeval.cli", *args], text=True, timeout=120, **options)


def test_an_output_folder_that_cannot_be_made_is_one_line_naming_it():
    done = _cogeval("import", str(FULL_RUN), "--out", "/sys/cogeval-cannot-write-here", capture_output=True)
    assert done.returncode == 2
    assert done.stderr == "cogeval: error: Operation not permitted: '/sys/cogeval-cannot-write-here'\n"


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    data = json.loads(FULL_RUN.read_text(encoding="utf-8"))
    for copy in range(300):  # enough lines that the listing is still writing when the reader has gone
        data["runId"] = f"20261022T10{copy // 60:02d}{copy % 60:02d}000Z-{copy:08x}"
        (tmp_path / f"{data['runId']}.json").write_text(json.dumps(data), encoding="utf-8")
    child = subprocess.Popen([sys.executable, "-m", "cogeval.cli", "runs", str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    child.stdout.close()  # `| head -0`
    _, errors = child.communicate(timeout=120)
    assert (child.returncode, errors) == (0, "")
