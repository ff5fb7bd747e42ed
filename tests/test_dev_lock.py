"""requirements-dev.lock, which `make test` and CI install, pins what pyproject.toml asks for.

The lock is made by `make lock` (``uv pip compile pyproject.toml --extra dev --generate-hashes --universal``):
each line ``name==version`` (with an environment marker where the pin differs by Python version or
platform) and its hashes. A dependency added to pyproject.toml without `make lock` fails here, offline,
instead of as an import error somewhere in the suite.
"""

from __future__ import annotations

import pathlib
import re
import tomllib

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$", re.M)


def _pins() -> dict[str, Version]:
    """Each package the lock installs here (its marker, if any, true for this interpreter) → its version."""
    pins: dict[str, Version] = {}
    for name, version, marker in _PIN.findall((ROOT / "requirements-dev.lock").read_text(encoding="utf-8")):
        if not marker or Marker(marker).evaluate():
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _wanted() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]]


@pytest.mark.parametrize("requirement", _wanted(), ids=str)
def test_the_lock_pins_each_requirement_within_its_range(requirement):
    if requirement.marker is not None and not requirement.marker.evaluate():
        pytest.skip(f"{requirement} is not for this interpreter")
    pins = _pins()
    name = canonicalize_name(requirement.name)
    assert name in pins, f"requirements-dev.lock has no {requirement.name}: run `make lock` after changing pyproject.toml"
    assert requirement.specifier.contains(pins[name], prereleases=True), (
        f"requirements-dev.lock pins {requirement.name}=={pins[name]}, outside {requirement}: run `make lock`")


def test_the_lock_names_no_index_and_hashes_every_pin():
    text = (ROOT / "requirements-dev.lock").read_text(encoding="utf-8")
    assert "://" not in text and "--index-url" not in text
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert entries and all("--hash=sha256:" in entry for entry in entries if "==" in entry.split("\n")[0])
