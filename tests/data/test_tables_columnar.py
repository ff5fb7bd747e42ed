"""The run's tables, built column by column, against row-by-row tables written here from the records."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cogeval.compare import compare_runs
from cogeval.data import EvalRun
from cogeval.errors import InputError

PROMPTS = [None, {"key": "p", "version": 2, "versionId": "a"}, {"key": "p", "versionId": "b"}, {"key": "p"}]


def make(seed: int, run_id: str) -> EvalRun:
    """Repeated cases, several trials, a multi-turn case, missing and failed scores, prompts, usage, a lone surrogate."""
    rng = np.random.default_rng(seed)
    results = []
    for k in range(12):
        for occurrence in range(2 if k % 5 == 0 else 1):
            for trial in range(2 if k % 3 == 0 else 1):
                case = {"turns": ["hi", "bye"]} if k == 7 else {"input": f"q{k} \ud83d", "expected": "a"}
                if k % 4 == 0:
                    case["metadata"] = {"topic": ["x", "y"][k % 2], "n": k}
                scores = [{"metric": "acc", "score": float(rng.integers(0, 2))},
                          {"metric": "quality", "score": None if k == 2 else float(rng.normal())}]
                results.append({
                    "case_key": f"k{k}", "occurrence": occurrence, "trial": trial, "case": case,
                    "output": {"text": "o"} if k == 1 else f"out {k} \udc00", "error": "boom" if k == 9 else None,
                    "duration": 1234.5 * k, "trace_id": None if k % 2 else f"t{k}-{trial}",
                    "usage": {"input_tokens": None if k == 3 else k, "output_tokens": 2 * k, "cost": 0.01 * k},
                    "prompt": PROMPTS[k % 4], "scores": scores[: 0 if k == 11 else 2],
                })
    return EvalRun.model_validate({"run_id": run_id, "started_at": "2026-10-22T10:15:30.123Z",
                                   "finished_at": "2026-10-22T10:15:31.000Z", "results": results})


BASE, HEAD = make(0, "20261022T101530123Z-1a2b3c4d"), make(1, "20261022T101530124Z-1a2b3c4e")


def test_results_frame_is_the_row_by_row_table():
    rows = [{"run_id": BASE.run_id, "case_key": r.case_key, "occurrence": r.occurrence, "trial": r.trial,
             "output": r.output, "error": r.error, "duration_s": r.duration / 1000,
             "input_tokens": pd.NA if r.usage.input_tokens is None else r.usage.input_tokens,
             "output_tokens": r.usage.output_tokens, "cost_usd": r.usage.cost, "trace_id": r.trace_id}
            for r in BASE.results]
    expected = pd.DataFrame(rows, dtype=object).astype({"occurrence": "int64", "trial": "int64", "duration_s": float,
                                                        "cost_usd": float, "input_tokens": "Int64",
                                                        "output_tokens": "Int64"})
    pd.testing.assert_frame_equal(BASE.results_frame, expected)
    assert {"text": "o"} in BASE.results_frame["output"].tolist()


def test_scores_is_the_row_by_row_table():
    rows = [(BASE.run_id, r.case_key, r.occurrence, r.trial, s.metric, s.score, s.error)
            for r in BASE.results for s in r.scores]
    expected = pd.DataFrame(rows, columns=["run_id", "case_key", "occurrence", "trial", "metric", "score", "error"],
                            dtype=object).astype({"occurrence": "int64", "trial": "int64", "score": float})
    pd.testing.assert_frame_equal(BASE.scores, expected)
    assert len(EvalRun.model_construct(results=[]).scores) == 0


def test_result_columns_read_the_case_and_the_prompt_version():
    table = BASE.result_columns("input", "turns", "metadata", "prompt_version")
    assert table["input"].tolist() == [r.case.input for r in BASE.results]
    assert table["turns"].tolist() == [r.case.turns for r in BASE.results]
    assert table["metadata"].tolist() == [r.case.metadata for r in BASE.results]
    version_of_prompt = [None, 2, "b", None]  # PROMPTS: none, a version, only a version id, neither
    assert table["prompt_version"].tolist() == [version_of_prompt[int(r.case_key[1:]) % 4] for r in BASE.results]
    assert all(dtype == np.dtype(object) for dtype in table.dtypes)
    with pytest.raises(InputError, match="names must be one of 'run_id', 'case_key'"):
        BASE.result_columns("nope")


def same(got: object, expected: object) -> bool:
    """Equal, or missing where None was expected (a column of text holds a missing value as NaN)."""
    return got == expected or (expected is None and pd.isna(got))  # type: ignore[arg-type]


def test_changes_carry_each_units_first_trial_and_the_base_metadata():
    changes = compare_runs(BASE, HEAD).changes
    assert len(changes) > 0
    for row in changes.itertuples(index=False):
        for side, run in (("base", BASE), ("head", HEAD)):
            first = min((r for r in run.results if (r.case_key, r.occurrence) == (row.case_key, row.occurrence)),
                        key=lambda r: r.trial)
            version = None if first.prompt is None else (
                first.prompt.version if first.prompt.version is not None else first.prompt.version_id)
            assert same(getattr(row, f"{side}_trace_id"), first.trace_id)
            assert same(getattr(row, f"{side}_prompt_version"), version)
        case = next(r.case for r in BASE.results if (r.case_key, r.occurrence) == (row.case_key, row.occurrence))
        assert row.metadata == case.metadata
        assert row.input == ('["hi", "bye"]' if row.case_key == "k7" else case.input)


def test_from_frame_reads_number_columns_as_each_cell_alone():
    frame = pd.DataFrame({"input": ["a", "b", "c", "d"], "f": [1.5, np.nan, -0.0, 2.0], "b": [True, False, True, True],
                          "i": pd.array([1, None, 3, 4], dtype="Int64"), "s": ["1", "", " 2.5", None]})
    run = EvalRun.from_frame(frame)

    def cell(value: object) -> float:
        return math.nan if value is None or value is pd.NA or value == "" or value != value else float(value)  # type: ignore[arg-type]

    expected = [(m, cell(frame[m].astype(object).iloc[i])) for i in range(4) for m in ["f", "b", "i", "s"]]
    got = run.scores[["metric", "score"]].itertuples(index=False)
    for (metric, score), (m, value) in zip(got, expected, strict=True):
        assert metric == m and (score == value or (math.isnan(score) and math.isnan(value)))
    assert math.copysign(1, run.results[2].scores[0].score) == -1
    with pytest.raises(InputError, match=r"column 'f' in row 1 is not a finite number: inf"):
        EvalRun.from_frame(frame.assign(f=[1.0, np.inf, 0.0, 0.0]))
