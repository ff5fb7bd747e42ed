"""The format's own example, ``shared/formats/eval-run-example.json`` beside the repository (issue 23 item 2b).

It lives outside the repository (``../shared`` from its root). Outside CI a test that needs it skips when it
is missing; under ``CI`` (set and not ``0``/``false``/``no``) it fails saying where it looked, so CI never
passes without reading the example. ``tests/data/fixtures/runs/format-example.json`` is a verbatim copy.
"""

from __future__ import annotations

import os
import pathlib

import pytest

FORMAT_EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "formats" / "eval-run-example.json"


def in_ci() -> bool:
    """Whether the tests run in CI (as tests/browser/conftest.py decides)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def format_example() -> pathlib.Path:
    """The example's path; a missing file skips the calling test, or fails it under CI."""
    if FORMAT_EXAMPLE.is_file():
        return FORMAT_EXAMPLE
    message = (f"the format's own example is missing: expected {FORMAT_EXAMPLE} (shared/formats beside the "
               "repository's folder)")
    if in_ci():
        pytest.fail(f"{message}; CI must read it, so check out shared/ beside the repository", pytrace=False)
    pytest.skip(message)
