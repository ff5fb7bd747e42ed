"""The public surface, package by package: ``__all__`` lists exactly the public names each package offers.

Tier 1 is ``cogeval`` (DESIGN §3); tier 2 the subpackages below, whose ``__all__`` is documented API too.
"Both ways": every name in ``__all__`` resolves, and every public (not underscored) name a package binds,
other than a submodule, is in its ``__all__``, so nothing is reachable by accident.
"""

from __future__ import annotations

import importlib
import types

import pytest

PUBLIC_PACKAGES = ["cogeval", "cogeval.data", "cogeval.execution", "cogeval.pairwise", "cogeval.present",
                   "cogeval.scoring", "cogeval.stats"]


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    package = importlib.import_module(name)
    exported = set(package.__all__)
    assert len(exported) == len(package.__all__), f"{name}.__all__ repeats a name"
    assert sorted(n for n in exported if not hasattr(package, n)) == [], f"{name}.__all__ names what it lacks"
    bound = {n for n, value in vars(package).items()
             if not n.startswith("_") and not isinstance(value, types.ModuleType) and n != "annotations"}
    assert sorted(bound - exported) == [], f"{name} binds public names its __all__ does not list"


def test_documented_async_forms_are_exported():
    import cogeval

    assert {"arescore", "arun_pairwise", "arun_variants", "aevaluate_pairwise"} <= set(cogeval.__all__)
