"""EvalRun: the run model, NaN <-> null, JSON-safe values, unknown keys, tidy tables and from_frame."""

from __future__ import annotations

import json
import math
import pathlib

import pandas as pd
import pytest
from pydantic import ValidationError

from cogeval import _columns as col
from cogeval.data import Case, Dataset, EvalRun, load_run
from cogeval.data.runfile import run_from_json
from cogeval.errors import InputError

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "runs"
RUN_ID = "20261022T101530123Z-1a2b3c4d"
KEY_2_PLUS_2 = "990ca836ae07956538faa8d21968dd11a50566a118d4738b4fc0be2a4d632c2c"


def make(results=(), **fields) -> EvalRun:
    data = {"run_id": RUN_ID, "started_at": "2026-10-22T10:15:30.123Z", "finished_at": "2026-10-22T10:15:31.000Z"}
    return EvalRun.model_validate({**data, "results": list(results), **fields})


def result(key="k1", score=1.0, **fields):
    return {"case_key": key, "case": {"input": f"input of {key}"}, "output": "out",
            "scores": [{"metric": "m", "score": score}], **fields}


@pytest.fixture
def full() -> EvalRun:
    return load_run(FIXTURES / "full.json")


# -- building ------------------------------------------------------------------------------------


def test_snake_case_and_camel_case_keys_build_the_same_run():
    snake = make([result()], metadata={"model": "x"})
    camel = EvalRun.model_validate({
        "runId": RUN_ID, "startedAt": "2026-10-22T10:15:30.123Z", "finishedAt": "2026-10-22T10:15:31.000Z",
        "metadata": {"model": "x"},
        "results": [{"caseKey": "k1", "case": {"input": "input of k1"}, "output": "out",
                     "scores": [{"metric": "m", "score": 1}]}],
    })
    assert snake == camel
    assert snake.format == "cogitator.eval-run" and snake.version == 1


def test_derived_parts_when_not_given():
    run = make([result("k1", 1.0, usage={"cost": 0.5}), result("k2", None, error="boom"),
                result("k1", 0.0, trial=1, usage={"cost": 0.25})])
    cases = Dataset([Case("input of k1"), Case("input of k2")])
    assert (run.dataset.fingerprint, run.dataset.cases) == (cases.fingerprint, 2)
    assert run.fingerprint == cases.fingerprint
    assert run.aggregated["m"].mean == 0.5 and run.aggregated["m"].missing == 1
    assert (run.stats.total, run.stats.errors, run.stats.cost) == (3, 1, 0.75)
    assert math.isnan(run.stats.duration)
    assert run.prompts == {}


def test_prompts_are_collected_from_results():
    prompt = {"key": "qa", "version_id": "v1", "version": 2, "ab_test": None}
    run = make([result(prompt=prompt)])
    assert run.prompts["qa"].version == 2
    assert run.to_dict()["prompts"] == [{"key": "qa", "versionId": "v1", "version": 2, "abTest": None}]


def test_a_datetime_start_is_written_as_iso_utc():
    import datetime

    moment = datetime.datetime(2026, 10, 22, 12, 15, 30, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert make(started_at=moment).started_at == "2026-10-22T10:15:30.123Z"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"run_id": "../x"},
         "run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got '../x'"),
        ({"started_at": "yesterday"}, "must be an ISO 8601 time such as '2026-10-22T10:15:30.123Z'; got 'yesterday'"),
        ({"format": "other"}, "Input should be 'cogitator.eval-run'"),
        ({"version": 2}, "Input should be 1"),
    ],
)
def test_construction_refuses_bad_values(fields, message):
    with pytest.raises(ValidationError) as caught:
        make(**fields)
    assert message in str(caught.value)


def test_a_result_case_must_be_a_valid_case():
    with pytest.raises(ValidationError) as caught:
        make([{"case_key": "k", "case": {"expected": "4"}}])
    assert "Case field 'input' is required (or give 'turns' for a multi-turn case)" in str(caught.value)


# -- NaN <-> null ------------------------------------------------------------------------------------


def test_null_is_nan_in_memory():
    run = make([result(score=None)], stats={"total": 1, "errors": 0, "duration": None, "cost": None})
    assert math.isnan(run.results[0].scores[0].score)
    assert math.isnan(run.stats.duration) and math.isnan(run.stats.cost)
    assert math.isnan(run.aggregated["m"].mean)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_written_as_null(value):
    run = make([result(score=value, duration=value)], aggregated={"m": {"mean": value, "count": 0}})
    data = run.to_dict()
    assert data["results"][0]["scores"][0]["score"] is None
    assert data["results"][0]["duration"] is None
    assert data["aggregated"]["m"]["mean"] is None
    json.dumps(data, allow_nan=False)  # strict JSON


def test_equality_is_nan_aware():
    assert make([result(score=math.nan)]) == make([result(score=None)])
    assert make([result(score=0.5)]) != make([result(score=None)])


# -- values JSON cannot hold ----------------------------------------------------------------------------


def test_values_json_cannot_hold_become_text():
    circular: dict = {"name": "loop"}
    circular["self"] = circular
    run = make([result(output=b"raw", tool_calls=[{"args": b"\x00bytes", "ids": {1}}, circular],
                       scores=[{"metric": "m", "score": 1, "details": circular}])],
               metadata={"loop": circular, "tags": {"a"}})
    data = run.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert data["results"][0]["output"] == "b'raw'"
    assert data["results"][0]["toolCalls"] == [
        {"args": "b'\\x00bytes'", "ids": "{1}"}, {"name": "loop", "self": "[Circular]"},
    ]
    assert data["results"][0]["scores"][0]["details"] == {"name": "loop", "self": "[Circular]"}
    assert data["metadata"] == {"loop": {"name": "loop", "self": "[Circular]"}, "tags": "{'a'}"}
    assert "[Circular]" in text


def test_values_set_after_construction_are_still_written():
    run = make([result()])
    circular: list = []
    circular.append(circular)
    run.results[0].tool_calls = circular
    assert run.to_dict()["results"][0]["toolCalls"] == ["[Circular]"]


# -- unknown keys -----------------------------------------------------------------------------------------


def test_unknown_keys_are_kept_at_every_level(full):
    data = full.to_dict()
    assert data["producer"] == {"name": "cogitator", "version": "3.2.0"}
    assert data["results"][1]["annotations"] == {"reviewer": "ana", "flag": "check"}
    assert data["config"]["timeoutS"] == 30 and data["config"]["retries"] == 2
    assert data["config"]["judge"]["baseUrl"] == "https://api.openai.com/v1"


def test_optional_fields_absent_from_a_file_stay_absent():
    data = make([result(turns=[{"input": "a", "output": "b"}])]).to_dict()
    assert "error" not in data["results"][0]["turns"][0]
    assert set(data["stats"]) == {"total", "errors", "duration", "cost", "targetCost"}
    assert data["results"][0]["case"] == {"input": "input of k1"}
    assert "statisticalValues" not in data["results"][0]


def test_statistical_values_keep_nan_as_null_and_come_after_the_scores():
    run = make([result(statisticalValues={"tool_calls": 3, "pages": None})])
    assert run.results[0].statistical_values["tool_calls"] == 3.0 and math.isnan(run.results[0].statistical_values["pages"])
    data = run.to_dict()["results"][0]
    assert data["statisticalValues"] == {"tool_calls": 3.0, "pages": None}
    assert list(data)[-2:] == ["scores", "statisticalValues"]
    assert run_from_json(run.to_dict(), "run") == run
    with pytest.raises(ValidationError, match=r"statisticalValues.tool_calls"):
        make([result(statisticalValues={"tool_calls": "many"})])
    for fixture in ("minimal.json", "full.json"):  # files without the key load as before
        assert all(r.statistical_values is None for r in load_run(FIXTURES / fixture).results)


# -- the full fixture ----------------------------------------------------------------------------------------


def test_the_full_fixture_loads_every_part(full):
    assert full.run_id == "20261022T101530123Z-0badcafe"
    assert full.name == "gpt-4o-mini · prompt v3"
    assert full.fingerprint == Dataset([r.case.to_case() for r in full.results]).fingerprint
    assert [r.case_key for r in full.results] == [r.case.to_case().key for r in full.results]
    assert full.directions == {"exact_match": True, "correctness": True, "latency": False, "cost": False}
    assert full.metric_names == ["exact_match", "correctness"]
    assert full.config.target["type"] == "chat"
    assert full.prompts["qa-system"].version_id == "pv_123"
    assert full.results[0].tool_calls[0]["function"]["name"] == "calculator"
    assert [t.output for t in full.results[2].turns] == ["Hello Ana!", "Your name is Ana."]
    assert full.results[2].turns[1].usage.input_tokens == 28
    assert math.isnan(full.aggregated["cost"].mean) and full.aggregated["cost"].missing == 3
    assert math.isnan(full.results[1].scores[1].score)
    assert full.results[1].scores[1].error == "judge timed out after 30 s"
    assert full.stats.judge_errors == 1 and math.isnan(full.stats.cost)
    assert full.assertions[1].passed is False
    assert full.inputs[KEY_2_PLUS_2] == "What is 2+2?"


def test_the_fixture_aggregates_match_cogeval_stats(full):
    for name in ("exact_match", "correctness"):
        written = full.aggregated[name]
        computed = make(full.to_dict()["results"]).aggregated[name]
        assert written.count == computed.count and written.missing == computed.missing
        assert written.mean == pytest.approx(computed.mean)
        assert written.p95 == pytest.approx(computed.p95)
    # correctness scores 0.9, (judge timed out), 1: sd(c(0.9, 1)) = 0.1 / sqrt(2)
    assert full.aggregated["correctness"].to_aggregate().std_dev == pytest.approx(0.1 / math.sqrt(2))


def test_summary(full):
    assert full.summary() == {
        "id": "20261022T101530123Z-0badcafe", "name": "gpt-4o-mini · prompt v3",
        "metadata": {"model": "gpt-4o-mini", "commit": "a1b2c3d", "tags": ["nightly"]},
        "started_at": "2026-10-22T10:15:30.123Z", "finished_at": "2026-10-22T10:15:34.500Z", "cases": 3,
        "metrics": {"exact_match": pytest.approx(1 / 3), "correctness": 0.95, "latency": pytest.approx((0.8 + 1.2 + 2.1) / 3),  # the three durations
                    "cost": pytest.approx(math.nan, nan_ok=True)},
    }


# -- tables ------------------------------------------------------------------------------------------------------


def test_tables_have_exactly_the_design_columns(full):
    assert tuple(full.results_frame.columns) == col.RESULTS_COLUMNS
    assert tuple(full.scores.columns) == col.SCORES_COLUMNS
    assert tuple(full.cases_frame.columns) == (*col.CASES_COLUMNS, col.TURNS)
    assert list(full.to_frame().columns) == [
        *col.RESULTS_COLUMNS[:4], col.INPUT, col.EXPECTED, *col.RESULTS_COLUMNS[4:], "exact_match", "correctness",
    ]
    empty = make()
    assert tuple(empty.results_frame.columns) == col.RESULTS_COLUMNS and len(empty.results_frame) == 0
    assert tuple(empty.scores.columns) == col.SCORES_COLUMNS


def test_results_frame_values(full):
    frame = full.results_frame
    assert frame[col.DURATION_S].tolist() == [0.8, 1.2, 2.1]
    assert frame[col.INPUT_TOKENS].tolist() == [21, 18, 40]
    assert str(frame[col.INPUT_TOKENS].dtype) == "Int64"
    assert frame[col.COST_USD].iloc[0] == 0.000004 and frame[col.COST_USD].iloc[1:].isna().all()
    assert (frame[col.RUN_ID] == full.run_id).all()


def test_scores_keep_nan_and_errors(full):
    scores = full.scores
    assert scores[col.SCORE].dtype == float
    assert len(scores) == 6
    missing = scores[scores[col.SCORE].isna()]
    assert missing[[col.METRIC, col.ERROR]].values.tolist() == [["correctness", "judge timed out after 30 s"]]


def test_cases_frame_has_one_row_per_case_and_occurrence():
    run = make([result("k1"), result("k1", trial=1), result("k1", occurrence=1), result("k2")])
    frame = run.cases_frame
    assert frame[[col.CASE_KEY, col.OCCURRENCE]].values.tolist() == [["k1", 0], ["k1", 1], ["k2", 0]]
    assert frame[col.INPUT].tolist() == ["input of k1", "input of k1", "input of k2"]
    assert run.dataset.cases == 3


def test_to_frame_has_one_column_per_metric(full):
    frame = full.to_frame()
    assert frame["input"].tolist() == ["What is 2+2?", "Capital of France?", None]
    assert frame["exact_match"].tolist() == [1.0, 0.0, 0.0]
    assert frame["correctness"].iloc[[0, 2]].tolist() == [0.9, 1.0] and math.isnan(frame["correctness"].iloc[1])


def test_repr_html_is_escaped_and_never_raises(full):
    html = make([result()], name="<script>alert(1)</script>")._repr_html_()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert RUN_ID in html
    assert "correctness" in full._repr_html_()
    broken = make([result()])
    broken.stats = None  # type: ignore[assignment]
    assert "could not display" in broken._repr_html_()


# -- from_frame ----------------------------------------------------------------------------------------------------


def test_from_frame_long_form():
    frame = pd.DataFrame({
        "input": ["2+2", "2+2", "3+3", "3+3", "4+4", "4+4"],
        "expected": ["4", "4", "6", "6", "8", "8"],
        "metric": ["quality", "latency"] * 3,
        "score": [1.0, 0.30, 0.5, 0.70, None, 1.10],
        "error": [None, None, None, None, "judge failed", None],
    })
    run = EvalRun.from_frame(frame, name="csv", directions={"latency": False}, started_at="2026-10-22T10:15:30.123Z")
    assert run.run_id.startswith("20261022T101530123Z-")
    assert run.metric_names == ["quality", "latency"]
    assert run.directions == {"quality": True, "latency": False}
    # quality: 1.0, 0.5 and one missing -> mean 0.75; latency: (0.3 + 0.7 + 1.1) / 3 = 0.7
    assert run.aggregated["quality"].mean == 0.75 and run.aggregated["quality"].missing == 1
    assert run.aggregated["latency"].mean == pytest.approx(0.7)
    assert run.aggregated["latency"].median == 0.7
    assert run.results[0].case_key == Case("2+2", expected="4").key
    assert run.fingerprint == Dataset([Case("2+2", "4"), Case("3+3", "6"), Case("4+4", "8")]).fingerprint
    assert run.scores[col.ERROR].fillna("").tolist() == ["", "", "", "", "judge failed", ""]
    assert len(run.results) == 3 and run.stats.total == 3 and run.stats.errors == 0


def test_from_frame_wide_form_with_keys_trials_and_result_columns():
    frame = pd.DataFrame({
        "case_key": ["a", "a", "b", "b"],
        "trial": [0, 1, 0, 1],
        "output": ["x", "y", "z", ""],
        "error": [None, None, None, "timeout"],
        "duration_s": [1.0, 2.0, 3.0, 4.0],
        "accuracy": [1, 0, 1, 1],
        "f1": ["0.5", "0.25", "1", None],  # numeric text, as a CSV read as text gives
    })
    run = EvalRun.from_frame(frame, run_id=RUN_ID, metadata={"source": "other-tool"})
    assert run.run_id == RUN_ID and run.metadata == {"source": "other-tool"}
    assert run.config.trials == 2 and run.dataset.cases == 2
    # accuracy: (1 + 0 + 1 + 1) / 4 = 0.75; f1: (0.5 + 0.25 + 1) / 3 = 0.58333...
    assert run.aggregated["accuracy"].mean == 0.75
    assert run.aggregated["f1"].mean == pytest.approx(1.75 / 3)
    assert run.aggregated["f1"].missing == 1
    assert run.directions == {"accuracy": True, "f1": True}
    assert run.results_frame[col.DURATION_S].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert run.stats.errors == 1 and run.results[3].error == "timeout"
    assert run.inputs == {"a": "a", "b": "b"}  # only a key: it stands in for the input


def test_from_frame_reads_back_a_runs_wide_frame(full):
    again = EvalRun.from_frame(full.to_frame(), run_id=full.run_id)
    for name in ("exact_match", "correctness"):
        assert again.aggregated[name].mean == pytest.approx(full.aggregated[name].mean)
    assert again.scores[[col.CASE_KEY, col.METRIC]].values.tolist() == full.scores[[col.CASE_KEY, col.METRIC]].values.tolist()


def test_from_frame_defaults():
    run = EvalRun.from_frame(pd.DataFrame({"input": ["q"], "score": [0.5]}))
    assert run.metric_names == ["score"]  # no 'metric' column: the wide form, a metric called 'score'
    assert run.started_at == run.finished_at
    assert run.config.target == {"type": "frame"}


@pytest.mark.parametrize(
    ("frame", "kwargs", "message"),
    [
        (pd.DataFrame({"a": [1], "b": [2]}), {},
         "from_frame needs a 'case_key' or 'input' column; got columns ['a', 'b']"),
        (pd.DataFrame({"input": ["q", "r", "s", "t", "u"], "metric": ["m"] * 5, "score": [1, 0, 1, 1, "abc"]}), {},
         "score in row 4 is not a number: 'abc'"),
        (pd.DataFrame({"input": ["q"], "metric": ["m"]}), {},
         "from_frame got a 'metric' column but no 'score' column: the long form needs both, "
         "the wide form has one column per metric and no 'metric' column"),
        (pd.DataFrame({"input": ["q", "q"], "quality": [1, 0]}), {},
         f"row 1 repeats case_key {Case('q').key!r} occurrence 0 trial 0; "
         "add an 'occurrence' or 'trial' column to tell repeated rows apart"),
        (pd.DataFrame({"case_key": ["k", "k"], "metric": ["m", "m"], "score": [1, 0]}), {},
         "row 1 repeats case_key 'k' occurrence 0 trial 0 metric 'm'; "
         "add an 'occurrence' or 'trial' column to tell repeated rows apart"),
        (pd.DataFrame({"case_key": ["k"], "metric": [None], "score": [1]}), {},
         "metric in row 0 must be a metric name (a non-empty string); got None"),
        (pd.DataFrame({"case_key": ["k"], "trial": [-1], "m": [1]}), {},
         "trial in row 0 must be an integer >= 0; got -1"),
        (pd.DataFrame({"case_key": ["k"], "m": [1]}), {"directions": {"latency": False}},
         "directions names 'latency', which is not a metric of the frame; its metrics are ['m']"),
        (pd.DataFrame({"case_key": ["k"], "m": [1]}), {"directions": {"m": "no"}},
         "directions['m'] must be True or False (higher is better); got 'no'"),
        (pd.DataFrame({"case_key": ["k"], "m": [1]}), {"run_id": "../x"},
         "run_id must look like '20261022T101530123Z-1a2b3c4d' (UTC start time, '-', 8 hex digits); got '../x'"),
        ([{"input": "q"}], {}, "from_frame needs a pandas DataFrame; got [{'input': 'q'}]"),
    ],
)
def test_from_frame_errors_name_the_column_and_row(frame, kwargs, message):
    with pytest.raises(InputError) as caught:
        EvalRun.from_frame(frame, **kwargs)
    assert str(caught.value) == message
    assert isinstance(caught.value, InputError)


def test_from_frame_keeps_text_columns_as_case_metadata():
    frame = pd.DataFrame({"input": ["q1", "q2"], "quality": [1.0, 0.0], "topic": ["billing", None],
                          "metadata": [{"source": "csv"}, None]})
    run = EvalRun.from_frame(frame)
    assert run.metric_names == ["quality"]
    assert [r.case.metadata for r in run.results] == [{"topic": "billing", "source": "csv"}, None]
    assert run.cases_frame["metadata"].tolist() == [{"topic": "billing", "source": "csv"}, None]


def test_from_frame_named_metrics_must_hold_numbers():
    with pytest.raises(InputError) as caught:
        EvalRun.from_frame(pd.DataFrame({"input": ["q"], "notes": ["hi"]}), metrics=["notes"])
    assert str(caught.value) == ("column 'notes' in row 0 is not a number: 'hi' (metrics= names it as a score column; "
                                 "leave it out and a text column is case metadata)")
    with pytest.raises(InputError, match=r"^metrics \['speed'\] are not columns of the frame \(it has: input, notes\)$"):
        EvalRun.from_frame(pd.DataFrame({"input": ["q"], "notes": ["hi"]}), metrics=["speed"])


def test_from_frame_reads_blank_text_cells_as_nan():
    # a CSV read as text (dtype=str, keep_default_na=False) has '' for its empty cells
    import io

    text = "input,metric,score\nx,m,1\ny,m, \nx,n,0.5\ny,n,\n"
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    run = EvalRun.from_frame(frame)
    scores = run.scores.set_index(["metric", "case_key"])["score"]
    x, y = Case("x").key, Case("y").key
    assert (scores["m", x], scores["n", x]) == (1.0, 0.5)
    assert math.isnan(scores["m", y]) and math.isnan(scores["n", y])
    assert (run.aggregated["m"].count, run.aggregated["m"].missing) == (1, 1)


def test_to_parquet_writes_each_table_and_reads_back_with_pandas(tmp_path):
    frame = pd.DataFrame({"input": ["q1", {"q": 2}], "quality": [1.0, 0.5], "topic": ["a", "b"]})
    run = EvalRun.from_frame(frame, run_id="20261022T101530123Z-1a2b3c4d")
    scores = pd.read_parquet(run.to_parquet(tmp_path / "scores.parquet"))
    pd.testing.assert_frame_equal(scores, run.scores, check_dtype=False)  # text read back as pandas' str dtype
    cases = pd.read_parquet(run.to_parquet(tmp_path / "cases.parquet", table="cases"))
    assert cases["input"].tolist() == ["q1", '{"q": 2}']  # one type per column: non-text as its JSON
    assert cases["metadata"].tolist() == ['{"topic": "a"}', '{"topic": "b"}']
    assert len(pd.read_parquet(run.to_parquet(tmp_path / "results.parquet", table="results"))) == 2
    with pytest.raises(InputError, match=r"^table must be one of"):
        run.to_parquet(tmp_path / "x.parquet", table="changes")
