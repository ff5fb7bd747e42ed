"""The public surface, package by package: ``__all__`` lists exactly the public names each package offers.

Tier 1 is ``cogeval`` (DESIGN §3); tier 2 the subpackages below, whose ``__all__`` is documented API too.
"Both ways": every name in ``__all__`` resolves, and every public (not underscored) name a package binds,
other than a submodule, is in its ``__all__``, so nothing is reachable by accident.

Modules declare no surface of their own: only packages, ``cogeval.errors`` (the exceptions, DESIGN §1)
and the two facades that gather a package's parts under one import path have an ``__all__``, and a name a module defines but nothing else uses
carries an underscore.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PUBLIC_PACKAGES = ["cogeval", "cogeval.compare", "cogeval.data", "cogeval.evaluate", "cogeval.execution", "cogeval.importers",
                   "cogeval.pairwise", "cogeval.present", "cogeval.scoring", "cogeval.stats", "cogeval.store",
                   "cogeval.variants"]
PUBLIC_MODULES = ["cogeval.errors"]
FACADES = {"cogeval/data/run.py", "cogeval/scoring/judge.py"}


def modules() -> list[pathlib.Path]:
    return sorted(p for p in (ROOT / "cogeval").rglob("*.py") if p.name != "__init__.py")


def defined_names(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


@pytest.mark.parametrize("name", PUBLIC_PACKAGES + PUBLIC_MODULES)
def test_all_lists_exactly_the_public_names(name):
    package = importlib.import_module(name)
    exported = set(package.__all__)
    assert len(exported) == len(package.__all__), f"{name}.__all__ repeats a name"
    assert sorted(n for n in exported if not hasattr(package, n)) == [], f"{name}.__all__ names what it lacks"
    bound = {n for n, value in vars(package).items()
             if not n.startswith("_") and not isinstance(value, types.ModuleType) and n != "annotations"}
    assert sorted(bound - exported) == [], f"{name} binds public names its __all__ does not list"


def test_every_package_is_public_or_private():
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "cogeval").rglob("__init__.py")}
    assert packages == set(PUBLIC_PACKAGES) | {"cogeval.examples"}


def test_only_packages_and_facades_declare_all():
    declaring = [str(p.relative_to(ROOT)) for p in modules() if re.search(r"^__all__\b", p.read_text(), re.M)]
    assert sorted(declaring) == sorted(FACADES | {"cogeval/errors.py"})


def test_a_name_nothing_else_uses_is_private():
    sources = {p: p.read_text() for pattern in ("cogeval/**/*.py", "tests/**/*.py", "benchmarks/**/*.py",
                                                "docs/*.md", "notebooks/*.ipynb", "README.md")
               for p in ROOT.glob(pattern)}
    lonely = [f"{p.relative_to(ROOT)}: {name}" for p in modules()
              for name in defined_names(ast.parse(sources[p]))
              if not any(re.search(rf"\b{name}\b", text) for q, text in sources.items() if q != p)]
    assert lonely == [], "public names only their own module uses; give them an underscore"


def test_documented_async_forms_are_exported():
    import cogeval

    assert {"arescore", "arun_pairwise", "arun_variants", "aevaluate_pairwise"} <= set(cogeval.__all__)
