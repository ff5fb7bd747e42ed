"""Guard rails: the public surface, the weight of `import cogeval`, and the layer rule (DESIGN §1)."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import cogeval

PACKAGE = pathlib.Path(cogeval.__file__).parent

# Layers of DESIGN §1: a module may import its own layer and lower ones, never higher.
# stats is special: it imports the core (L0) only, so it is a leaf every layer may use.
# present (L6: present/, cli, examples) is a leaf: nothing below it imports it, not even inside
# a function. Convenience methods on results (`result.report()`, `.plot()`) reach it by name
# through the one dispatch, cogeval._backend.presenter (see docs/notebooks.md).
# Within L5 the packages stack in this order, each importing only those before it (PACKAGE_ORDER;
# test_no_package_imports_another_in_a_circle keeps the arrows one way): the store shows
# compare's rule for a run's metric (cogeval.compare.summary), and variants and pairwise save into it.
LAYERS = {
    "errors": 0, "_columns": 0, "_check": 0, "_html": 0, "_files": 0, "_text": 0, "_numbers": 0, "_backend": 0,
    "data": 1, "importers": 1,
    "execution": 2,
    "scoring": 3,
    "stats": 4,
    "evaluate": 5, "compare": 5, "store": 5, "variants": 5, "pairwise": 5,
    "present": 6, "cli": 6, "examples": 6,
}
PACKAGE_ORDER = ("evaluate", "compare", "store", "variants", "pairwise")

HEAVY = ("plotly", "ipywidgets", "statsmodels", "openai", "jinja2", "rich", "scipy.stats")


def test_all_is_sorted_and_resolves():
    assert cogeval.__all__ == sorted(cogeval.__all__)
    assert len(set(cogeval.__all__)) == len(cogeval.__all__)
    missing = [name for name in cogeval.__all__ if not hasattr(cogeval, name)]
    assert missing == []


def test_all_holds_no_private_names():
    assert [name for name in cogeval.__all__ if name.startswith("_")] == []


def test_import_cogeval_stays_light():
    code = (
        "import sys, json, cogeval\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert loaded == []


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "cogeval" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def _imports(path: pathlib.Path) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function) for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested = {
        id(inner) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, id(node) in nested) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"cogeval.{a.name}" for a in node.names if node.module == "cogeval"]
            found += [(node.lineno, name, id(node) in nested) for name in names]
    return found


def test_every_module_belongs_to_a_layer():
    unknown = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent != PACKAGE
        if _layer("cogeval." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)) is None
    )
    assert unknown == []


def test_no_module_imports_a_higher_layer():
    violations = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).with_suffix("")
        if relative.parts == ("__init__",):
            continue
        own = _layer("cogeval." + ".".join(relative.parts))
        for line, target, _ in _imports(path):
            theirs = _layer(target)
            if theirs is None or theirs == own:
                continue
            allowed = theirs == 0 if relative.parts[0] == "stats" else theirs < own or theirs == 4
            if not allowed:
                violations.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert violations == []


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the cogeval modules it imports: at load time, inside functions and under ``TYPE_CHECKING`` alike.

    ``from cogeval.data import EvalRun`` is an edge to the package ``cogeval.data`` (its
    ``__init__`` runs); ``from cogeval import _columns`` to the module ``cogeval._columns``;
    relative imports are resolved. Importing a module also runs its parent packages'
    ``__init__``, which is not counted as an edge of the importer (every package would
    otherwise be in a circle with its own modules).
    """
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {known(a.name) for a in node.names if a.name.split(".")[0] == "cogeval"}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                if base.split(".")[0] != "cogeval":
                    continue
                edges |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else known(base) for a in node.names}
        graph[name] = edges - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (its modules in order, the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_the_import_graph_finds_edges_and_circles():
    graph = import_graph()
    assert {"cogeval.data.run", "cogeval.data.records", "cogeval._backend"} <= graph["cogeval.data.run"] | {"cogeval.data.run"}
    assert "cogeval.scoring.judge" in graph["cogeval.compare.runs"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_another_in_a_circle():
    # cogeval/__init__.py re-exports every layer and nothing in the package imports it back;
    # the circle check covers it like any other module.
    assert _cycle(import_graph()) == []


def package_graph() -> dict[str, set[str]]:
    """Top-level part of cogeval (``compare``, ``store``, ``_check``...) → the other parts its modules import."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        part = module.split(".")[1] if "." in module else module
        graph.setdefault(part, set()).update(t.split(".")[1] if "." in t else t for t in targets)
    return {part: targets - {part} for part, targets in graph.items()}


def test_no_package_imports_another_in_a_circle():
    # Module circles are not enough: cogeval.compare re-exporting a store that reads cogeval.compare.summary
    # would be no module circle, yet `import cogeval.store` would run compare's __init__ half-way through.
    graph = package_graph()
    graph.pop("cogeval")  # the facade re-exports every part; nothing imports it back but cli, above it all
    assert _cycle(graph) == []


def test_the_layer_five_packages_import_only_those_before_them():
    graph = package_graph()
    backwards = sorted(f"{part} imports {target}" for i, part in enumerate(PACKAGE_ORDER)
                       for target in graph.get(part, ()) if target in PACKAGE_ORDER[i + 1:])
    assert backwards == []
    assert sorted(part for part, layer in LAYERS.items() if layer == 5) == sorted(PACKAGE_ORDER)


def test_nothing_outside_the_presentation_layer_imports_it():
    importers = sorted(
        f"{module} imports {target}" for module, targets in import_graph().items() for target in targets
        if target.startswith("cogeval.present") and _layer(module) != 6 and module != "cogeval.present"
    )
    assert importers == []


def test_only_the_dispatch_imports_by_name():
    """``.plot()``, ``.report()`` and the labelling UIs reach present through cogeval._backend alone."""
    by_name = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
    )
    assert by_name == ["_backend.py", "present/__init__.py"]


# DESIGN §3: the public names independent checks call.
DESIGN_NAMES = [
    "Case", "Dataset", "EvalSuite", "EvalBuilder", "EvalSuiteResult", "ChatTarget", "TargetResponse",
    "exact_match", "contains", "regex", "json_valid", "metric", "latency", "cost", "token_usage",
    "faithfulness", "relevance", "correctness", "llm_metric", "JudgeConfig", "threshold", "no_regression", "assertion",
    "EvalRun", "load_run", "RunStore", "compare_runs", "RunComparison",
    "EvalComparison", "ComparisonResult", "report_comparison", "comparison_markdown", "comparison_html",
    "Variants", "run_variants", "Leaderboard", "run_pairwise", "pairwise_judge", "human_pairwise",
    "export_pairwise_cases", "human_labels", "evaluate_pairwise", "DirectoryTraceSource",
    "paired_t_test", "mcnemars_test", "wilcoxon_test", "adjust_p_values", "bootstrap_ci",
    "cohens_d", "wilson_interval", "cohen_kappa", "bradley_terry", "Interval",
    "aggregate", "mean", "median", "std_dev", "percentile", "canonical_json",
]


def test_every_design_name_is_public():
    assert [name for name in DESIGN_NAMES if name not in cogeval.__all__] == []
