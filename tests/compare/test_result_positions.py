"""Score rows that carry their result's position, and comparisons that find units by integers, against
row-by-row computations written here from the records."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from cogeval.compare import compare_runs, compare_scores, compare_slices
from cogeval.compare.pairing import UnitCodes, unit_values
from cogeval.compare.runs import score_frame, statistical_values
from cogeval.data import EvalRun, canonical_json
from cogeval.errors import InputError
from tests.compare.test_scale_paths import DIRECTIONS, check, long, r_mean, reference, wide

STATISTICAL = [{"name": "latency", "higher_is_better": False}, {"name": "cost", "higher_is_better": False}]


def run_of(results: list[dict], run_id: str = "20261022T101530123Z-1a2b3c4d", **config: object) -> EvalRun:
    return EvalRun.model_validate({"run_id": run_id, "started_at": "2026-10-22T10:15:30.123Z",
                                   "finished_at": "2026-10-22T10:15:31.000Z", "results": results, "config": config})


def make(seed: int, run_id: str, keys: range, statistical: bool = False) -> EvalRun:
    """Repeated cases whose copies differ in input, trials out of order, results without scores, failures,
    dict and multi-turn inputs, metadata of every kind (none, a list, a missing field), prompts and a lone surrogate."""
    rng = np.random.default_rng(seed)
    results = []
    for k in keys:
        for occurrence in range(2 if k % 4 == 0 else 1):
            for trial in (1, 0) if k % 3 == 0 else (0,):
                text = {"q": k, "seed": seed} if k == 8 else f"q{k}.{occurrence}.{seed} \ud83d"
                case = {"turns": ["hi", f"bye {seed}"]} if k == 7 else {"input": text, "expected": "a"}
                if k % 5 != 4:
                    case["metadata"] = {"topic": ["x", "y", ["a", "list"], None][k % 4], "seed": seed}
                scores = [{"metric": "acc", "score": float(rng.integers(0, 2))},
                          {"metric": "quality", "score": None if k == 2 else float(rng.normal())}]
                results.append({
                    "case_key": f"k{k}", "occurrence": occurrence, "trial": trial, "case": case,
                    "output": "o", "error": "boom" if k == 9 or rng.random() < 0.1 else None,
                    "duration": float(rng.gamma(2.0, 500.0)), "usage": {"cost": float(rng.random())},
                    "trace_id": None if k % 2 else f"t{k}.{occurrence}.{trial}.{seed}",
                    "prompt": [None, {"key": "p", "version": seed}, {"key": "p", "versionId": f"v{k}"}][k % 3],
                    "scores": [] if k % 11 == 10 else scores,
                })
    return run_of(results, run_id, metrics=[{"name": "acc"}, {"name": "quality"}],
                  statistical_metrics=STATISTICAL if statistical else [])


BASE = make(0, "20261022T101530123Z-1a2b3c4d", range(0, 30), statistical=True)
HEAD = make(1, "20261022T101530124Z-1a2b3c4e", range(3, 34), statistical=True)


def test_score_columns_give_each_scores_result():
    fields, result = HEAD._score_columns("metric", "score", "error")
    rows = [(i, s.metric, s.score, s.error) for i, r in enumerate(HEAD.results) for s in r.scores]
    assert result.tolist() == [i for i, *_ in rows]
    assert fields["metric"].tolist() == [m for _, m, _, _ in rows] and fields["error"].tolist() == [e for *_, e in rows]
    np.testing.assert_array_equal(fields["score"].to_numpy(), [s for _, _, s, _ in rows])


@pytest.mark.parametrize("run", [BASE, make(2, "20261022T101530125Z-1a2b3c4f", range(12))],
                         ids=["statistical", "plain"])
def test_score_frame_is_the_row_by_row_table(run):
    ident = [(r.case_key, r.occurrence, r.trial, r.error is not None) for r in run.results]
    rows = [(*ident[i], s.metric, s.score, s.error) for i, r in enumerate(run.results) for s in r.scores]
    counted = {i for i, r in enumerate(run.results) if r.scores}
    for metric in run.config.statistical_metrics:
        values = statistical_values(run, metric.name)
        if values is not None:
            rows += [(*ident[i], metric.name, values[i], None) for i in range(len(run.results))]
            counted = set(range(len(run.results)))
    rows += [(*ident[i], None, math.nan, None) for i in range(len(run.results)) if i not in counted]
    expected = pd.DataFrame(
        [(run.run_id, key, occurrence, trial, metric, score, error, failed)
         for key, occurrence, trial, failed, metric, score, error in rows],
        columns=["run_id", "case_key", "occurrence", "trial", "metric", "score", "error", "case_error"], dtype=object,
    ).astype({"occurrence": "int64", "trial": "int64", "score": float, "case_error": bool})
    pd.testing.assert_frame_equal(score_frame(run), expected)


def test_to_frame_takes_each_results_first_score_of_a_metric():
    scores = {"a": [("q", 1), ("q", 2)], "b": [], "c": [("r", 3), ("q", None)]}
    run = run_of([{"case_key": key, "case": {"input": key}, "scores": [{"metric": m, "score": v} for m, v in found]}
                  for key, found in scores.items()])
    frame = run.to_frame()
    for name in run.metric_names:
        expected = [next((s.score for s in r.scores if s.metric == name), math.nan) for r in run.results]
        np.testing.assert_array_equal(frame[name].to_numpy(), expected)
    assert run.metric_names == ["q", "r"]


def first(run: EvalRun, unit: tuple[str, int], *, lowest_trial: bool = False):
    """The unit's first result in the run (its lowest trial first), or None."""
    found = [r for r in run.results if (r.case_key, r.occurrence) == unit]
    return min(found, key=lambda r: r.trial) if lowest_trial and found else next(iter(found), None)


def shown(key: str) -> str | None:
    """What changes, added and removed show of a case key: the base run's first result of the key, else the head's."""
    result = next(r for r in [*BASE.results, *HEAD.results] if r.case_key == key)
    value = result.case.input if result.case.input is not None else result.case.turns
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def test_changes_added_and_removed_show_what_the_records_hold():
    c = compare_runs(BASE, HEAD)
    assert len(c.changes) > 20
    for row in c.changes.itertuples(index=False):
        unit = (row.case_key, row.occurrence)
        for side, run in (("base", BASE), ("head", HEAD)):
            result = first(run, unit, lowest_trial=True)
            version = None if result.prompt is None else (
                result.prompt.version if result.prompt.version is not None else result.prompt.version_id)
            assert getattr(row, f"{side}_trace_id") == result.trace_id or (
                result.trace_id is None and pd.isna(getattr(row, f"{side}_trace_id")))
            assert getattr(row, f"{side}_prompt_version") == version
        assert row.metadata == first(BASE, unit).case.metadata
        assert row.input == shown(row.case_key)
    for table, only, other in ((c.added, HEAD, BASE), (c.removed, BASE, HEAD)):
        units = {(r.case_key, r.occurrence) for r in only.results if first(other, (r.case_key, r.occurrence)) is None}
        assert dict(zip(zip(table["case_key"], table["occurrence"]), table["input"])) == {
            unit: shown(unit[0]) for unit in units}


def labels_of(by) -> dict[tuple[str, int], object]:
    """Each unit's slice from the records: the first run that has the case decides; a list label is its JSON."""
    labels: dict[tuple[str, int], object] = {}
    for run in (BASE, HEAD):
        for r in run.results:
            if (r.case_key, r.occurrence) not in labels:
                label = (r.case.metadata or {}).get(by) if isinstance(by, str) else by(r.case.to_case())
                labels[(r.case_key, r.occurrence)] = canonical_json(label) if isinstance(label, list) else label
    return labels


@pytest.mark.parametrize("by", ["topic", lambda case: len(case.metadata or {})], ids=["field", "function"])
def test_slices_label_each_unit_as_its_first_case(by):
    c = compare_runs(BASE, HEAD, by=by)
    labels = labels_of(by)
    compared = {name: m.higher_is_better for name, m in c.metrics.items() if m.derived_from is None}
    expected = compare_slices(score_frame(BASE), score_frame(HEAD), lambda key, occurrence: labels[(key, occurrence)],
                              directions=compared, deciding=set(c.decide_on))
    pd.testing.assert_frame_equal(c.slices, expected)
    present = {label for label in labels.values() if label is not None}
    assert set(c.slices["slice"]) == present and len(present) >= 2


def test_slicing_by_a_field_only_unpaired_cases_have_gives_no_slice():
    def run(*metadata):
        return run_of([{"case_key": f"k{i}", "case": {"input": f"q{i}", "metadata": m},
                        "scores": [{"metric": "q", "score": i % 2}]} for i, m in enumerate(metadata)])

    comparison = compare_runs(run({"topic": "x"}, None), run({"topic": "x"}, None, {"rare": "yes"}), by="rare")
    assert comparison.slices.empty
    with pytest.raises(InputError, match="no case of either run has a metadata field 'nope'"):
        compare_runs(BASE, HEAD, by="nope")


def codes_of(*frames: pd.DataFrame) -> list[UnitCodes]:
    """Unit codes numbered with dictionaries, over the keys and occurrences of all the frames."""
    keys: dict[str, int] = {}
    occurrences: dict[int, int] = {}
    for frame in frames:
        for key, occurrence in zip(frame["case_key"], frame["occurrence"]):
            keys.setdefault(key, len(keys))
            occurrences.setdefault(occurrence, len(occurrences))
    width = len(occurrences) + 1
    ids = [[(keys[k] + 1) * width + occurrences[o] + 1 for k, o in zip(frame["case_key"], frame["occurrence"])]
           for frame in frames]
    return [UnitCodes(np.array(each), pd.Index(list(keys), dtype=object), pd.Index(list(occurrences))) for each in ids]


@pytest.mark.parametrize("trials", [1, 2])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_compare_scores_on_given_unit_codes_equals_the_pandas_reference(trials, test):
    base = long(wide(1, 0.0, trials, range(0, 70), 0.0), "b")
    head = long(wide(2, 0.15, trials, range(5, 75), 0.08), "h")
    lean = [frame[["metric", "score", "case_error"]] for frame in (base, head)]
    comparison = compare_scores(*lean, directions=DIRECTIONS, test=test, units=codes_of(base, head),
                                inputs=dict(zip(base["case_key"], base["case_key"] + "?")))
    check(comparison, *reference(base, head), test)
    assert (comparison.changes["input"] == comparison.changes["case_key"] + "?").all()
    assert set(comparison.added["case_key"]) == {f"k{k}" for k in range(70, 75)}
    assert comparison.added["input"].isna().all()


def test_units_coded_over_both_tables_are_the_units_of_each():
    base, head = long(wide(3, 0.0, 2, range(0, 20), 0.1), "b"), long(wide(4, 0.0, 1, range(10, 30), 0.1), "h")
    for frame, codes in zip((base, head), codes_of(base, head)):
        units, values, errored = unit_values(frame, DIRECTIONS, codes)
        assert list(units) == list(dict.fromkeys(zip(frame["case_key"], frame["occurrence"])))
        assert units.levels[0].tolist() == list(dict.fromkeys([*base["case_key"], *head["case_key"]]))
        failed = frame.groupby(["case_key", "occurrence"], sort=False)["case_error"].all()
        assert errored.tolist() == failed.tolist()
        for (key, occurrence, metric), rows in frame.groupby(["case_key", "occurrence", "metric"]):
            scores = rows["score"].where(~rows["case_error"], 0.0 if DIRECTIONS[metric] else np.nan)
            expected = 0.0 if DIRECTIONS[metric] and failed[(key, occurrence)] else r_mean(scores)
            np.testing.assert_equal(values.loc[(key, occurrence), metric], expected)
