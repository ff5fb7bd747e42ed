"""Issue 23: what changed between two runs, errored cases, deciding metrics first, and slice notes."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval import EvalRun, compare_runs
from cogeval.compare.engine import compare_scores
from cogeval.compare.result import verdict_note
from cogeval.compare.runs import changes_between
from cogeval.data.records import MetricRecord, PromptRecord

FRAME = pd.DataFrame({"input": [f"q{i}" for i in range(30)], "exact_match": [1.0, 0.0] * 15})


def run(frame=FRAME, **config):
    """An EvalRun from a wide frame (input + one column per metric), with config fields set."""
    r = EvalRun.from_frame(frame)
    return r.model_copy(update={"config": r.config.model_copy(update=config)}) if config else r


def sha8(text):
    return hashlib.sha256(text.encode()).hexdigest()[:8]


CHAT = {"type": "chat", "model": "gpt-a", "system": "Be brief.", "temperature": 0.0}


# -- what changed --------------------------------------------------------------------------------------------------


def test_only_the_system_prompt_changed():
    c = compare_runs(run(target=CHAT), run(target={**CHAT, "system": "Be kind."}))
    assert sha8("Be brief.") == "213c22ed" and sha8("Be kind.") == "5499befb"
    assert c.changed == ["system prompt sha256:213c22ed → sha256:5499befb"]
    assert "Be brief" not in str(c.changed) and "Be kind" not in str(c.changed)  # a hash, never the text
    assert not [w for w in c.warnings if w.startswith("More than one thing changed")]


def test_only_the_temperature_changed():
    c = compare_runs(run(target=CHAT), run(target={**CHAT, "temperature": 0.7}))
    assert c.changed == ["temperature 0.0 → 0.7"]


def test_model_and_prompt_changed_is_two_entries_and_a_warning():
    c = compare_runs(run(target=CHAT), run(target={**CHAT, "model": "gpt-b", "system": "Be kind."}))
    assert c.changed == ["model 'gpt-a' → 'gpt-b'", "system prompt sha256:213c22ed → sha256:5499befb"]
    assert ("More than one thing changed between the runs: model 'gpt-a' → 'gpt-b'; system prompt sha256:213c22ed → "
            "sha256:5499befb. A difference cannot be put down to any one of them") in c.warnings


def test_a_system_prompt_added():
    no_system = {k: v for k, v in CHAT.items() if k != "system"}
    assert changes_between(run(target=no_system), run(target=CHAT)) == ["system prompt none → sha256:213c22ed"]


def test_nothing_recorded_differs():
    assert compare_runs(run(target=CHAT), run(target=CHAT)).changed == []


def test_every_other_thing_that_can_change_is_named():
    metrics = [MetricRecord(name="exact_match", params={"case_sensitive": False, "patterns": ["a", "b"]})]
    base = run(target={"type": "function", "name": "v1"}, trials=1, judge={"model": "judge-a"}, metrics=metrics)
    new_metrics = [MetricRecord(name="exact_match", params={"case_sensitive": True, "patterns": ["a"]})]
    other = FRAME.assign(input=[f"x{i}" for i in range(30)])
    head = run(other, target={"type": "function", "name": "v2"}, trials=3, judge={"model": "judge-b"},
               metrics=new_metrics)
    assert changes_between(base, head) == [
        "target (name 'v1' → 'v2')",
        "trials 1 → 3",
        "judge (model 'judge-a' → 'judge-b')",
        "parameters of exact_match (case_sensitive False → True, patterns)",  # a list: named, not shown
        f"dataset fingerprint {base.fingerprint[:8]} → {head.fingerprint[:8]}",
    ]
    assert changes_between(run(), run(judge={"model": "j"})) == ["judge only in the head run"]


def test_a_prompt_version_is_a_change():
    def prompted(version):
        r = run()
        for result in r.results:
            result.prompt = PromptRecord(key="qa", version=version)
        return r

    assert changes_between(prompted(1), prompted(2)) == ["prompt 'qa' v1 → v2"]
    assert changes_between(run(), prompted(1)) == ["prompt 'qa' only in the head run"]


def test_score_tables_alone_record_no_change():
    rows = lambda s: pd.DataFrame({"run_id": "r", "case_key": list("abcd"), "occurrence": 0, "trial": 0,  # noqa: E731
                                   "metric": "m", "score": s, "error": None, "case_error": False})
    assert compare_scores(rows([0.0, 1, 0, 1]), rows([1.0, 1, 0, 1]), directions={"m": True}).changed is None


# -- errored cases ---------------------------------------------------------------------------------------------------


def errored_runs():
    """Cases a..h; head's target failed on b, c, d, base's on e; both on f; g regressed, h improved."""
    frame = pd.DataFrame({"input": list("abcdefgh"), "exact_match": [1.0] * 7 + [0.0]})
    base = EvalRun.from_frame(frame.assign(error=[None, None, None, None, "boom", "boom", None, None]))
    head = EvalRun.from_frame(frame.assign(exact_match=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
                                           error=[None, "timeout", "timeout", "timeout", None, "boom", None, None]))
    return base, head


def test_errored_cases_are_marked_as_errors_and_counted():
    c = compare_runs(*errored_runs(), seed=0)
    changes = c.changes.set_index("input")
    assert changes.loc[["b", "c", "d", "e", "g", "h"], ["direction", "errored"]].values.tolist() == [
        ["error", "head"], ["error", "head"], ["error", "head"], ["error", "base"],
        ["regressed", None], ["improved", None]]
    assert changes.loc["e", ["base", "head"]].tolist() == [0.0, 1.0]  # a failure still scores 0 in the test
    m = c.metrics["exact_match"]
    assert (m.n, m.n_improved, m.n_regressed) == (7, 1, 1)  # f: both failed, left out
    assert m.regressed["input"].tolist() == ["g"] and m.improved["input"].tolist() == ["h"]
    assert c.errored[["input", "errored"]].values.tolist() == [["b", "head"], ["c", "head"], ["d", "head"],
                                                               ["e", "base"], ["f", "both"]]
    assert (c.n_errored_head, c.n_errored_base) == (4, 2)


# -- deciding metrics first ----------------------------------------------------------------------------------------


def test_changes_list_the_deciding_metrics_rows_first():
    frame = pd.DataFrame({"input": [f"q{i}" for i in range(4)], "quality": [0.5, 0.5, 0.5, 0.5],
                          "latency": [1.0, 1.0, 1.0, 1.0]})
    head = frame.assign(quality=[0.6, 0.5, 0.3, 0.5], latency=[9.0, 1.0, 1.0, 4.0])
    c = compare_runs(EvalRun.from_frame(frame, directions={"latency": False}),
                     EvalRun.from_frame(head, directions={"latency": False}), decide_on=["quality"])
    assert c.metrics["latency"].role == "informs"
    rows = c.changes[["input", "metric", "delta", "direction"]].values.tolist()
    assert rows == [["q2", "quality", pytest.approx(-0.2), "regressed"], ["q0", "quality", pytest.approx(0.1), "improved"],
                    ["q0", "latency", 8.0, "regressed"], ["q3", "latency", 3.0, "regressed"]]


# -- slice notes ---------------------------------------------------------------------------------------------------


def sliced(base_scores, head_scores, topics):
    frame = lambda s: pd.DataFrame({"input": [f"q{i}" for i in range(len(s))], "m": s,  # noqa: E731
                                    "metadata": [{"topic": t} for t in topics]})
    return compare_runs(EvalRun.from_frame(frame(base_scores)), EvalRun.from_frame(frame(head_scores)), by="topic")


def test_a_slice_whose_differences_are_all_the_same_is_decided_by_the_sign_test_and_says_so():
    rng = np.random.default_rng(0)
    base = rng.normal(0.5, 0.1, 60).round(3)
    head = base.copy()
    head[:30] += 0.25  # "a": every paired difference +0.25; "b": a real spread
    head[30:] += rng.normal(0.0, 0.1, 30).round(3)
    c = sliced(base, head, ["a"] * 30 + ["b"] * 30)
    notes = c.slices.set_index("slice")["note"]
    assert notes["a"] == "every paired difference is +0.25: tested by the exact sign test, p = 2^(1 − 30)"
    assert pd.isna(notes["b"])
    row = c.slices.set_index("slice").loc["a"]
    assert row["p_value"] == pytest.approx(stats.binomtest(30, 30).pvalue, rel=1e-12)  # R: binom.test(30, 30)
    assert (row["test"], row["verdict"], row["ci_low"], row["ci_high"]) == ("sign", "better", 0.25, 0.25)


def test_a_small_slice_says_it_has_little_power():
    rng = np.random.default_rng(1)
    base = rng.normal(0.5, 0.1, 45).round(3)
    head = (base + rng.normal(0.0, 0.1, 45)).round(3)
    c = sliced(base, head, ["big"] * 30 + ["small"] * 12 + ["tiny"] * 3)
    notes = c.slices.set_index("slice")["note"]
    assert pd.isna(notes["big"])
    assert notes["small"] == ("fewer than 30 paired cases: the test has little power, so 'inconclusive' may only "
                              "mean too few cases")
    assert notes["tiny"] == "too few cases to test: n = 3 < 10"


def test_a_binary_slice_with_few_discordant_pairs_says_so():
    base = [1.0, 0.0] * 20
    head = list(base)
    head[0], head[1], head[3] = 0.0, 1.0, 1.0  # 3 discordant pairs
    c = sliced(base, head, ["all"] * 40)
    assert c.slices["note"].tolist() == ["fewer than 10 discordant pairs (cases exactly one run got right): "
                                         "McNemar's test can say little"]


def test_the_whole_runs_note_names_the_sign_test_of_equal_differences():
    c = compare_runs(run(FRAME.assign(exact_match=0.25)), run(FRAME.assign(exact_match=0.5)))
    m = c.metrics["exact_match"]
    assert (m.test, m.verdict, tuple(m.ci)) == ("sign", "better", (0.25, 0.25))
    assert m.p_value == pytest.approx(stats.binomtest(30, 30).pvalue, rel=1e-12)  # R: binom.test(30, 30): 1.9e-09
    assert verdict_note(m) == "better"
    assert ("Metric 'exact_match': every paired difference is +0.25, so the t-test has no spread to use; the exact "
            "sign test decides (all 30 cases moved the same way: p = 2^(1 − 30) = 1.9e-09)") in c.warnings
