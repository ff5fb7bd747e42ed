"""The one dispatch from results to the presentation layer: cogeval._backend.presenter (DESIGN §1)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from present_runs import make_run

import cogeval
import cogeval.present
from cogeval import EvalSuite, InputError, RunStore, compare_runs, exact_match
from cogeval._backend import BACKEND, presenter
from cogeval.pairwise import labelling_ui


def test_every_name_of_present_is_found_by_name():
    for name in cogeval.present.__all__:
        found = presenter(name)
        assert found is getattr(cogeval.present, name)
        assert (found.__name__ == "cogeval.present.labelling") if name == "labelling" else callable(found)


def test_the_top_level_presentation_names_are_the_backends():
    assert cogeval.plot_scores is presenter("plot_scores")
    assert cogeval.report_comparison is presenter("report_comparison")


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(InputError) as caught:
        presenter("plot_everything")
    assert str(caught.value) == (
        f"the presentation layer {BACKEND!r} has no 'plot_everything'; it has " + ", ".join(cogeval.present.__all__))


def test_importing_the_presentation_package_loads_nothing_heavy():
    code = ("import sys, json, cogeval.present\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('plotly', 'rich', 'jinja2', 'ipywidgets'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert loaded == []


@pytest.fixture
def calls(monkeypatch):
    """Every presentation function replaced by a recorder: ``calls`` lists ``(name, args, kwargs)``."""
    seen = []
    for name in cogeval.present.__all__:
        def fake(*args, _name=name, **kwargs):
            seen.append((_name, args, kwargs))
            return _name
        monkeypatch.setattr(cogeval.present, name, fake)
    return seen


def test_every_convenience_reaches_its_presentation_function(calls, tmp_path):
    base, head = make_run("base"), make_run("head")
    result = EvalSuite([{"input": "a", "expected": "a"}], lambda q: q, metrics=[exact_match()], progress=False).run()
    comparison = compare_runs(base, head, seed=0)
    store = RunStore(tmp_path)
    assert base.plot("quality") == "plot_scores" and calls[-1] == ("plot_scores", (base, "quality"), {})
    assert result.plot("exact_match") == "plot_scores" and calls[-1] == ("plot_scores", (result.run, "exact_match"), {})
    assert result.report("ci", None) == "write_reports" and calls[-1] == ("write_reports", (result, "ci", None), {"keep_formulas": False})
    assert comparison.report("markdown", "x") == "report_comparison"
    assert calls[-1] == ("report_comparison", (comparison, "markdown", "x"), {})
    assert comparison.plot() == "plot_comparison" and calls[-1] == ("plot_comparison", (comparison,), {})
    assert comparison.plot_changes("quality") == "plot_changes"
    assert calls[-1] == ("plot_changes", (comparison, "quality"), {})
    assert store.plot("quality") == "plot_history"
    assert calls[-1] == ("plot_history", (store, "quality", None), {"confidence": 0.95, "seed": 0, "cluster": None})


def test_the_labelling_uis_come_through_the_dispatch(monkeypatch):
    monkeypatch.setattr(cogeval.present, "labelling", "the UIs")
    assert labelling_ui() == "the UIs"
