"""Issue 23 in the comparison reports: what changed, errored cases apart, deciding metrics first, slice notes."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from cogeval import EvalRun, compare_runs, comparison_html, comparison_markdown, report_comparison
from cogeval.present.comparison_console import print_console

CHAT = {"type": "chat", "model": "gpt-a", "system": "Be brief.", "temperature": 0.0}
CHANGED = "model 'gpt-a' → 'gpt-b'; system prompt sha256:213c22ed → sha256:5499befb"


def configured(frame, **config):
    r = EvalRun.from_frame(frame, directions={"latency": False} if "latency" in frame else None)
    return r.model_copy(update={"config": r.config.model_copy(update=config)}) if config else r


def errored_comparison():
    """Cases a..h: head's target failed on b, c, d, base's on e, both on f; g regressed, h improved. Latency informs
    (a, g slower, h faster); the model and the system prompt changed."""
    frame = pd.DataFrame({"input": list("abcdefgh"), "exact_match": [1.0] * 7 + [0.0], "latency": [1.0] * 8})
    base = configured(frame.assign(error=[None, None, None, None, "boom", "boom", None, None]), target=CHAT)
    head = configured(frame.assign(exact_match=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
                                   latency=[2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0, 0.5],
                                   error=[None, "timeout", "timeout", "timeout", None, "boom", None, None]),
                      target={**CHAT, "model": "gpt-b", "system": "Be kind."})
    return compare_runs(base, head, decide_on=["exact_match"])


@pytest.fixture(scope="module")
def comparison():
    return errored_comparison()


def test_markdown_counts_errors_apart_and_lists_what_changed(comparison):
    text = comparison_markdown(comparison)
    lines = text.splitlines()
    assert lines[4] == ("Verdict: **inconclusive** · 1 metric decides, 1 informs · 8 matched cases, 0 added, 0 removed, "
                        "4 cases errored in head, 2 in base · α = 0.05")
    assert lines[6] == ("Changed: model 'gpt-a' → 'gpt-b'; system prompt sha256:213c22ed → sha256:5499befb")
    # regressions are the deciding metric's own moves (g), never the failures
    assert "#### Regressed cases (1 case)" in text and "<summary>Improved cases (1 case)</summary>" in text
    start = lines.index("#### Errored cases (4 cases errored in head, 2 in base)")
    assert lines[start + 2] == "The target failed on these cases: their scores count as failures, not as changes."
    assert lines[start + 4].startswith("| case | input | errored in |")  # then each run's answer, when compared runs
    rows = [re.match(r"\| [0-9a-f]{8} \| (\w) \| (\w+) \|", line) for line in lines[start + 6:start + 11]]
    assert [row.groups() for row in rows] == [("b", "head"), ("c", "head"), ("d", "head"), ("e", "base"),
                                              ("f", "both")]
    summary = ("<summary>Cases moved on informing metrics, which do not decide (latency: 2 regressed, 1 improved; "
               "1 case moved on these only)</summary>")  # a: latency alone; g and h moved on exact_match too
    assert text.index("#### Regressed cases") < text.index("#### Errored cases") < text.index(summary)


def test_html_shows_errors_and_informing_metrics_apart(comparison):
    page = comparison_html(comparison, figure=False)
    assert "· <b>4 cases errored in head, 2 in base</b> · α" in page
    assert ('<p class="facts changed">Changed: <b>model &#39;gpt-a&#39; → &#39;gpt-b&#39;; system prompt '
            "sha256:213c22ed → sha256:5499befb</b></p>") in page
    headings = re.findall(r"<h2>([^<]*)(?:<span class=\"count\">([^<]*)</span>)?</h2>", page)
    assert headings[-4:] == [("Regressed cases ", "· 1 case"), ("Improved cases ", "· 1 case"),
                             ("Errored cases ", "· 4 cases errored in head, 2 in base"),
                             ("Cases moved on informing metrics ",
                              "· latency: 2 regressed, 1 improved; 1 case moved on these only")]
    assert re.findall(r'<tr class="bad"><td class="t key" title="[0-9a-f]+">[0-9a-f]{8}</td><td data-label="input" '
                      r'class="text">(\w)</td><td data-label="errored in" class="t">(\w+)</td>.*?</tr>', page) == [("b", "head"), ("c", "head"), ("d", "head"),
                                                                  ("e", "base"), ("f", "both")]
    informing = page[page.index("Cases moved on informing metrics"):]
    assert informing.count("<details>") == 2 and "<details open>" not in informing  # folded
    assert page[:page.index("Cases moved on informing")].count("<details open>") == 1  # exact_match regressed


def test_console_shows_changed_errors_and_deciding_first(comparison, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    report_comparison(comparison, "console")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    words = " ".join(out.split())  # rich wraps at 80 columns
    assert f"changed: {CHANGED}" in words and "4 cases errored in head, 2 in base" in words
    order = [out.index(s) for s in ("regressed cases on deciding metrics: 1 case", "improved cases on deciding metrics",
                                    "errored cases: 4 cases errored in head, 2 in base (failures, not changes)",
                                    "moved on informing metrics, which do not decide: latency")]
    assert order == sorted(order)
    print_console(comparison, brief=True)
    brief = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    # issue 25: a line breaks between the things that changed, not inside one
    assert brief[2] == "  errored in head, 2 in base, scored 0"  # the headline's clause (issue 34)
    assert brief[3:5] == ["changed: model 'gpt-a' → 'gpt-b';", "  system prompt sha256:213c22ed → sha256:5499befb"]


def test_nothing_changed_is_said_and_a_name_is_escaped():
    frame = pd.DataFrame({"input": [f"q{i}" for i in range(12)], "exact_match": [1.0, 0.0] * 6})
    same = compare_runs(configured(frame, target=CHAT), configured(frame, target=CHAT))
    said = "nothing recorded differs (target, system prompt, temperature, trials, judge, metric parameters, prompts, dataset)"
    assert f"Changed: {said}" in comparison_markdown(same)
    assert f"Changed: <b>{said}</b>" in comparison_html(same, figure=False)
    odd = compare_runs(configured(frame, target={"type": "function", "name": "<b>v1</b>"}),
                       configured(frame, target={"type": "function", "name": "v2|*x*"}))
    assert odd.changed == ["target (name '<b>v1</b>' → 'v2|*x*')"]
    assert "Changed: target (name '&lt;b&gt;v1&lt;/b&gt;' → 'v2\\|\\*x\\*')" in comparison_markdown(odd)
    assert "<b>v1</b>" not in comparison_html(odd, figure=False)


def test_a_comparison_of_score_tables_says_what_changed_is_not_recorded():
    from cogeval.compare.engine import compare_scores

    rows = lambda s: pd.DataFrame({"run_id": "r", "case_key": list("abcd"), "occurrence": 0, "trial": 0,  # noqa: E731
                                   "metric": "m", "score": s, "error": None, "case_error": False})
    c = compare_scores(rows([0.0, 1, 0, 1]), rows([1.0, 1, 0, 1]), directions={"m": True})
    assert "Changed: not recorded (no run configurations were compared)" in comparison_markdown(c)


def test_the_json_of_cogeval_compare_has_changed_and_errored(tmp_path, capsys):
    from cogeval import RunStore
    from cogeval.cli import main

    frame = pd.DataFrame({"input": [f"q{i}" for i in range(12)], "exact_match": [1.0, 0.0] * 6})
    store = RunStore(tmp_path)
    base = store.save(configured(frame, target=CHAT))
    head = store.save(configured(frame.assign(error=["boom"] + [None] * 11), target={**CHAT, "temperature": 0.7}))
    assert main(["compare", str(base), str(head), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["changed"] == ["temperature 0.0 → 0.7"]
    assert [row["errored"] for row in document["errored"]] == ["head"]


def test_slice_notes_in_markdown_and_html():
    rng = np.random.default_rng(0)
    base = rng.normal(0.5, 0.1, 40).round(3)
    head = base.copy()
    head[:20] += 0.17  # slice "same": every paired difference +0.17
    head[20:] += rng.normal(0.0, 0.1, 20).round(3)
    frame = lambda s: pd.DataFrame({"input": [f"q{i}" for i in range(40)], "m": s,  # noqa: E731
                                    "metadata": [{"topic": "same" if i < 20 else "spread"} for i in range(40)]})
    c = compare_runs(*(EvalRun.from_frame(frame(s), directions={"m": True}) for s in (base, head)), by="topic")
    note = "every paired difference is +0.17: tested by the exact sign test, p = 2^(1 − 20)"
    text = comparison_markdown(c)
    assert "| slice | metric | n | base | head | difference | interval | p | adjusted p | verdict | note |" in text
    same = next(line for line in text.splitlines() if line.startswith("| same | m ↑"))
    # binom.test(20, 20)$p.value = 2^-19 = 1.9e-06; Holm over the 2 slices: 3.8e-06
    assert same.endswith("| +0.17 | \\[+0.17, +0.17\\] | 1.9e-06 | 3.8e-06 | 🟢 better | " + note + " |")  # never cut
    page = comparison_html(c, figure=False)
    # in HTML under the table, marked by a * on the slice's verdict (a column of sentences would not fit)
    assert f'<li>* <b>same · m ↑</b> — {note.replace(chr(39), "&#39;")}</li>' in page
    assert page.count(' *</span>') == len([r for r in c.slices.itertuples() if isinstance(r.note, str)])
