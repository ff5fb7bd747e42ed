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
# Convenience methods on results (`result.report()`, `.plot()`) reach the present
# layer through an import inside the method, so that importing a result never loads it.
LAYERS = {
    "errors": 0, "_columns": 0, "_check": 0, "_html": 0, "_files": 0,
    "data": 1,
    "execution": 2,
    "scoring": 3,
    "stats": 4,
    "evaluate": 5, "compare": 5, "pairwise": 5,
    "present": 6, "cli": 6, "examples": 6,
}

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
        for line, target, in_function in _imports(path):
            theirs = _layer(target)
            if theirs is None or theirs == own:
                continue
            if relative.parts[0] == "stats":
                allowed = theirs == 0
            else:
                allowed = theirs < own or theirs == 4 or (theirs == 6 and in_function)
            if not allowed:
                violations.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert violations == []


# DESIGN §3: the public names independent checks call.
DESIGN_NAMES = """
Case Dataset EvalSuite EvalBuilder EvalSuiteResult ChatTarget TargetResponse
exact_match contains regex json_valid metric latency cost token_usage
faithfulness relevance correctness llm_metric JudgeConfig threshold no_regression assertion
EvalRun load_run RunStore compare_runs RunComparison
EvalComparison ComparisonResult report_comparison comparison_markdown comparison_html
Variants run_variants Leaderboard run_pairwise pairwise_judge human_pairwise
export_pairwise_cases human_labels evaluate_pairwise DirectoryTraceSource
paired_t_test mcnemars_test wilcoxon_test adjust_p_values bootstrap_ci
cohens_d wilson_interval cohen_kappa bradley_terry Interval
aggregate mean median std_dev percentile canonical_json
""".split()


def test_every_design_name_is_public():
    assert [name for name in DESIGN_NAMES if name not in cogeval.__all__] == []
