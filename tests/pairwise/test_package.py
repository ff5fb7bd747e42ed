"""The head-to-head package: its surface, its one way to the labelling UIs, immutable results, the seed rule."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

import cogeval
import cogeval.pairwise as pairwise
from cogeval import Case, human_pairwise, load_pairwise, run_pairwise
from cogeval.errors import InputError
from cogeval.pairwise import PairTask, PairwiseResult, Verdict, labelling_ui

RUN_ID = "20260101T000000000Z-0000abcd"


def isort_style(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions, each in alphabetical order (as ruff's RUF022 sorts ``__all__``)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2), name


def test_all_is_sorted_resolves_and_matches_the_top_level_names():
    assert pairwise.__all__ == sorted(pairwise.__all__, key=isort_style)
    assert len(set(pairwise.__all__)) == len(pairwise.__all__)
    assert [name for name in pairwise.__all__ if not hasattr(pairwise, name)] == []
    shared = [name for name in cogeval.__all__ if name in pairwise.__all__]
    assert sorted(shared) == ["Agreement", "DirectoryTraceSource", "Flips", "PairwiseResult", "WinRate",
                              "aevaluate_pairwise", "arun_pairwise", "evaluate_pairwise", "export_pairwise_cases", "human_labels", "human_pairwise",
                              "load_pairwise", "pairwise_judge", "run_pairwise"]
    assert all(getattr(cogeval, name) is getattr(pairwise, name) for name in shared)


def test_importing_the_package_never_loads_the_presentation_layer():
    code = ("import sys, json, cogeval.pairwise\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('cogeval.present', 'ipywidgets')))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert loaded == []


def test_the_labelling_uis_are_found_by_name_in_present():
    ui = labelling_ui()
    assert ui.__name__ == pairwise.human.LABELLING_UI == "cogeval.present.labelling"
    assert callable(ui.in_notebook) and callable(ui.TerminalAsk) and callable(ui.show_labelling_widget)


def test_the_widget_is_reached_through_labelling_ui(monkeypatch):
    shown = []

    class FakeUI:
        @staticmethod
        def in_notebook():
            return True

        @staticmethod
        def show_labelling_widget(items, on_label, title):
            shown.append((items, title))
            return "a widget"

    monkeypatch.setattr(pairwise.human, "labelling_ui", lambda: FakeUI)
    human = human_pairwise("h", seed=0)  # ask=None in a notebook: the widget
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [human])
    assert human.widget == "a widget" and [v.error for v in result.verdicts["h"]] == ["not labelled yet"]
    [(items, title)] = shown
    assert title == "h: which response is better?" and items[0][0] == Case("q")


def result_of(n: int = 2) -> PairwiseResult:
    tasks = [PairTask(f"t{i}", f"k{i}", Case(f"q{i}"), f"A{i}", f"B{i}") for i in range(n)]
    verdicts = {"h": [Verdict(None, error="not labelled yet", details={"first": "ab"[i % 2]}) for i in range(n)]}
    return PairwiseResult(RUN_ID, "2026-01-01T00:00:00.000Z", ("a", "b"), tasks, verdicts, {"h": {"kind": "human"}})


def test_a_result_does_not_change_when_its_inputs_do():
    tasks = [PairTask("t0", "k0", Case("q"), "A", "B")]
    verdicts = {"j": [Verdict("a")]}
    result = PairwiseResult(RUN_ID, "2026-01-01T00:00:00.000Z", ["a", "b"], tasks, verdicts, {"j": {"kind": "judge"}})
    verdicts["j"][0] = Verdict("b")
    tasks.clear()
    assert result.verdicts["j"] == (Verdict("a"),) and len(result.tasks) == 1 and result.names == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdicts = {}  # type: ignore[misc]


def test_with_labels_returns_a_new_result():
    result = result_of()
    labelled = result.with_labels("h", {"t0": "2", "t1": 1})  # t0 showed A first, t1 B first
    assert [v.winner for v in labelled.verdicts["h"]] == ["b", "b"]
    assert [v.winner for v in result.verdicts["h"]] == [None, None]
    assert labelled.verdicts["h"][0] == Verdict("b", ab="b", details={"first": "a"})
    assert labelled.id == result.id and labelled.tasks == result.tasks and labelled.path is None


@pytest.mark.parametrize("key, labels, message", [
    ("h", {"t9": "1"}, "no task has the id 't9'; label the task ids of result.tasks"),
    ("h", {"t0": "maybe"}, "the label of task 't0' must be '1', '2' or 'tie'; got 'maybe'"),
    ("x", {"t0": "1"}, "no comparator has the key 'x'; the keys are 'h'"),
])
def test_with_labels_names_what_is_wrong(key, labels, message):
    with pytest.raises(InputError) as caught:
        result_of().with_labels(key, labels)
    assert str(caught.value) == message


def test_only_verdicts_with_a_recorded_order_can_be_labelled():
    result = dataclasses.replace(result_of(1), verdicts={"h": [Verdict(None, error="judge call failed")]})
    with pytest.raises(InputError) as caught:
        result.with_labels("h", {"t0": "1"})
    assert str(caught.value) == ("comparator 'h' did not record which variant was shown first on task 't0'; "
                                 "only a person's verdicts can be labelled")


def test_a_result_needs_one_verdict_per_task_and_a_description():
    with pytest.raises(InputError) as caught:
        dataclasses.replace(result_of(2), verdicts={"h": [Verdict("a")]})
    assert str(caught.value) == ("comparator 'h' needs a description in comparators and one verdict per task "
                                 "(1 verdicts for 2 tasks)")


def test_two_widgets_of_one_run_label_one_result(tmp_path):
    first, second = human_pairwise("x", ask="widget", seed=0), human_pairwise("y", ask="widget", seed=1)
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [first, second], store=tmp_path)
    first.widget.tie.click()
    second.widget.tie.click()
    assert first.result is second.result  # one latest result for the run, each click a new one
    assert [first.result.win_rate(k).ties for k in ("x", "y")] == [1, 1]
    assert [result.win_rate(k).ties for k in ("x", "y")] == [0, 0]
    saved = load_pairwise(result.path)
    assert [saved.win_rate(k).ties for k in ("x", "y")] == [1, 1]


def test_seeds_follow_the_one_seed_rule():
    with pytest.raises(InputError) as caught:
        human_pairwise("h", seed=-1)
    assert str(caught.value) == "seed must be None, an integer >= 0, a string or a numpy Generator; got -1"
    with pytest.raises(InputError) as caught:
        cogeval.export_pairwise_cases([], [], "c", "out.jsonl", seed=1.5)
    assert str(caught.value) == "seed must be None, an integer >= 0, a string or a numpy Generator; got 1.5"
    shown = []
    human = human_pairwise("h", ask=lambda case, x, y: shown.append(x) or "1", seed=np.random.default_rng(42))
    run_pairwise([{"input": str(i)} for i in range(6)], lambda q: "A", lambda q: "B", [human])
    firsts = ["a" if d == 0 else "b" for d in np.random.default_rng(42).integers(0, 2, size=6)]
    assert shown == [first.upper() for first in firsts]
