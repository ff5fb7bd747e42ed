"""The docs' examples run as doctests in the test suite, each in a fresh temporary folder (they write files)."""

import pytest


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
