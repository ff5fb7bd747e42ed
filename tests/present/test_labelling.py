"""The labelling UI of human_pairwise, driven through widget traits and scripted terminal input (no browser)."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from cogeval import Case
from cogeval.errors import ExecutionError
from cogeval.present.labelling import LabellingWidget, TerminalAsk, in_notebook

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def make(items, fail_on=None):
    got = []

    def on_label(index, choice):
        if index == fail_on:
            raise RuntimeError("<b>disk full</b>")
        got.append((index, choice))

    return LabellingWidget(items, on_label, title="quality"), got


def test_widget_shows_the_pair_side_by_side_escaped():
    widget, _ = make([(Case(SCRIPT), f"one {SCRIPT}", {"two": SCRIPT})])
    assert "Response 1" in widget.left.value and "Response 2" in widget.right.value
    for pane in (widget.prompt, widget.left, widget.right):
        assert ESCAPED in pane.value and "<script>" not in pane.value
    assert "&lt;script&gt;" in widget.right.value and "&quot;two&quot;" in widget.right.value
    row = widget.children[3]
    assert isinstance(row, widgets.HBox) and row.children == (widget.left, widget.right)
    assert [b.description for b in (widget.one, widget.two, widget.tie)] == ["1 is better", "2 is better", "tie"]
    assert widget.status.value == "<b>quality</b> · pair 1 of 1 · 0 labelled"


def test_clicks_label_each_pair_in_turn_and_track_progress():
    widget, got = make([(Case(f"q{i}"), f"r{i}", f"s{i}") for i in range(3)])
    widget.two.click()  # Button.click fires the on_click handlers synchronously, no kernel needed
    assert got == [(0, "2")] and widget.index == 1 and widget.progress.value == 1
    assert "q1" in widget.prompt.value and widget.status.value == "<b>quality</b> · pair 2 of 3 · 1 labelled"
    widget.tie.click()
    widget.one.click()
    assert got == [(0, "2"), (1, "tie"), (2, "1")] and widget.answers == ["2", "tie", "1"]
    assert widget.index is None and widget.progress.value == 3
    assert widget.status.value == "<b>quality</b> · all 3 pairs labelled"
    assert all(b.disabled for b in (widget.one, widget.two, widget.tie))
    widget.one.click()  # nothing left: ignored
    assert len(got) == 3


def test_a_failing_callback_is_shown_and_the_pair_stays():
    widget, got = make([(Case("q"), "r", "s")], fail_on=0)
    widget.one.click()
    assert widget.index == 0 and widget.answers == [None] and got == []
    assert "could not record the answer: RuntimeError: &lt;b&gt;disk full&lt;/b&gt;" in widget.status.value


def test_an_empty_widget_is_done():
    widget, _ = make([])
    assert widget.index is None and widget.one.disabled


def test_terminal_asks_again_until_it_can_read_the_answer():
    answers, shown = iter(["maybe", " TIE "]), []
    ask = TerminalAsk(2, title="quality", read=lambda prompt: next(answers), write=shown.append)
    assert ask(Case("2+2?", expected="4"), "4", "5") == "tie"
    assert shown == [
        "=== Pair 1 of 2 · quality ===\nInput:\n2+2?\nReference answer:\n4\n--- Response 1 ---\n4\n"
        "--- Response 2 ---\n5",
        "Please answer 1, 2 or tie (got 'maybe').",
    ]


def test_terminal_end_of_input_stops_with_a_message():
    def closed(prompt):
        raise EOFError

    ask = TerminalAsk(3, read=closed, write=lambda text: None)
    with pytest.raises(ExecutionError) as caught:
        ask(Case("q"), "a", "b")
    assert str(caught.value) == "labelling stopped at pair 1 of 3: end of input"


def test_terminal_is_the_default_outside_a_kernel(monkeypatch, capsys):
    from cogeval import human_pairwise, run_pairwise

    answers = iter(["2"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert not in_notebook()
    result = run_pairwise([{"input": "q"}], lambda q: "A", lambda q: "B", [human_pairwise("h", seed=0)])
    assert result.verdicts["h"][0].winner == ("b" if result.verdicts["h"][0].details["first"] == "a" else "a")
    assert "=== Pair 1 of 1 · h ===" in capsys.readouterr().out


@pytest.mark.slow
def test_in_a_real_kernel_the_widget_is_shown_and_clicks_fill_the_result(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from cogeval import human_pairwise, run_pairwise\n"
            "human = human_pairwise('h', seed=1)\n"
            "result = run_pairwise([{'input': '<b>x</b>'}, {'input': 'y'}], lambda q: 'A', lambda q: 'B', [human],\n"
            "                      store='runs')\n"
            "print(result.win_rate('h').missing, type(human.widget).__name__)"),
        nbformat.v4.new_code_cell(
            "human.widget.tie.click(); human.widget.tie.click()\n"
            "from cogeval import load_pairwise\n"
            "print(human.result.win_rate('h').ties, load_pairwise(result.path).win_rate('h').ties, "
            "result.win_rate('h').ties)"),
    ]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=60,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    first, second = (cell.outputs for cell in nb.cells)
    views = [o for o in first if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 1
    assert [o.text for o in first if o.output_type == "stream"] == ["2 LabellingWidget\n"]
    assert [o.text for o in second if o.output_type == "stream"] == ["2 2 0\n"]  # the returned result is unchanged
