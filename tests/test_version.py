"""cogeval.__version__ is the installed distribution's version, known without importing anything heavy."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import cogeval


def test_the_version_is_pyprojects_and_the_installed_ones():
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cogeval.__version__ == project["version"] == importlib.metadata.version("cogeval")


def test_the_version_is_there_in_a_fresh_process_without_loading_the_statistics():
    code = "import sys, cogeval; print(cogeval.__version__, 'scipy.stats' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [cogeval.__version__, "False", "False"]
