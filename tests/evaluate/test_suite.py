"""EvalSuite end to end with function targets: validation, scoring, errors, trials, stats."""

from __future__ import annotations

import asyncio
import math

import pytest

from cogeval import (
    Case,
    Dataset,
    EvalSuite,
    InputError,
    contains,
    exact_match,
    latency,
    metric,
    threshold,
    token_usage,
)
from cogeval.data.records import ConfigRecord

DATA = Dataset.from_records([
    {"input": "2+2", "expected": "4"},
    {"input": "3+3", "expected": "6"},
    {"input": "boom", "expected": "x"},
    {"input": "5+5", "expected": "11"},
])


def calculator(question: str) -> str:
    if question == "boom":
        raise RuntimeError("kaboom")
    return str(eval(question))


def suite(**options):
    options.setdefault("progress", False)
    return EvalSuite(DATA, calculator, **options)


def test_every_case_is_scored_and_a_failure_loses_nothing():
    result = suite(metrics=[exact_match()]).run()
    assert [r.case.input for r in result.results] == ["2+2", "3+3", "boom", "5+5"]
    assert [r.output for r in result.results] == ["4", "6", "", "10"]
    assert result.results[2].error == "RuntimeError: kaboom"
    # the failed case is still scored (as a wrong answer), so the mean is 2 of 4
    assert [r.scores["exact_match"].value for r in result.results] == [1.0, 1.0, 0.0, 0.0]
    assert result.aggregated["exact_match"].mean == 0.5
    assert result.stats.total == 4 and result.stats.errors == 1 and result.stats.metric_errors == 0
    assert math.isnan(result.stats.cost_usd)


def test_a_metric_that_raises_marks_the_cell_nan_and_counts_it():
    @metric("picky")
    def picky(output, case):
        if output == "6":
            raise ValueError("no sixes")
        return 1.0

    result = suite(metrics=[picky]).run()
    cells = [r.scores["picky"] for r in result.results]
    assert math.isnan(cells[1].value) and "no sixes" in cells[1].error
    assert result.stats.metric_errors == 1
    assert result.aggregated["picky"].count == 3 and result.aggregated["picky"].missing == 1


def test_trials_run_every_case_k_times_in_order():
    result = suite(metrics=[exact_match()], trials=3).run()
    assert [(r.case.input, r.trial) for r in result.results][:4] == [("2+2", 0), ("2+2", 1), ("2+2", 2), ("3+3", 0)]
    assert result.stats.total == 12
    assert len(result.scores) == 12


def test_max_cases_limits_results_aggregates_stats_and_progress():
    seen = []
    result = suite(metrics=[exact_match()], on_progress=seen.append).run(max_cases=2)
    assert result.stats.total == 2 and result.aggregated["exact_match"].count == 2
    assert [p["completed"] for p in seen] == [1, 2] and {p["total"] for p in seen} == {2}
    assert {p["current_case"].input for p in seen} == {"2+2", "3+3"}
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match=r"^max_cases must be an integer >= 1; got "):
            suite().run(max_cases=bad)


def test_statistical_metrics_and_directions():
    result = suite(metrics=[exact_match()], statistical_metrics=[latency(), token_usage()]).run()
    assert result.directions == {"exact_match": True, "latency": False, "token_usage": False}
    assert result.aggregated["latency"].count == 4
    assert result.aggregated["token_usage"].count == 0 and result.aggregated["token_usage"].missing == 4


def test_assertions_use_the_aggregates_and_set_the_exit_code():
    result = suite(metrics=[exact_match()], assertions=[threshold("exact_match", 0.5), threshold("exact_match", 0.9)]).run()
    assert [a.passed for a in result.assertions] == [True, False]
    assert not result.passed and result.exit_code == 1


def test_async_targets_and_targets_taking_the_case():
    async def echo_expected(question, case):
        await asyncio.sleep(0)
        return case.expected

    result = EvalSuite(DATA, echo_expected, metrics=[exact_match()], progress=False).run()
    assert result.aggregated["exact_match"].mean == 1.0


def test_run_works_inside_a_running_event_loop_and_arun_is_awaitable():
    async def main():
        inside = suite(metrics=[exact_match()]).run()  # as in a Jupyter cell
        awaited = await suite(metrics=[exact_match()]).arun()
        return inside, awaited

    inside, awaited = asyncio.run(main())
    assert inside.aggregated["exact_match"].mean == awaited.aggregated["exact_match"].mean == 0.5


def test_run_identity_and_metadata():
    result = suite(name="calc", metadata={"model": "v2", "dropped": None}).run()
    assert result.name == "calc" and result.metadata == {"model": "v2"}
    assert result.run_id[:8] == result.started_at[:10].replace("-", "")
    assert result.started_at <= result.finished_at


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "^concurrency must be an integer >= 1; got 0$"),
        ({"retries": 11}, "^retries must be an integer from 0 to 10; got 11$"),
        ({"retries": -1}, "^retries must be an integer from 0 to 10; got -1$"),
        ({"timeout": 0}, "^timeout must be a finite number > 0; got 0$"),
        ({"trials": 0}, "^trials must be an integer >= 1; got 0$"),
        ({"metrics": [exact_match(), exact_match()]}, "^metrics has two metrics named 'exact_match'; give one of them another name$"),
        ({"metrics": [exact_match], }, r"^metrics\[0\] is the function exact_match, which makes a metric: call it, "
         r"exact_match\(\)$"),
        ({"statistical_metrics": [latency]}, r"^statistical_metrics\[0\] is the function latency, which makes a "
         r"metric: call it, latency\(\)$"),
        ({"metrics": [len]}, r"^metrics must hold metrics \(made with metric\(\.\.\.\) or the built-ins\); got "
         r"<built-in function len>; a function of \(output, case\) becomes one with @metric\(\"name\"\)$"),
        # A metric of the wrong kind, or a single item for a list, is refused before any case runs
        # (it used to fail with AttributeError/TypeError only after every target call).
        ({"metrics": [latency()]}, r"^metrics\[0\] must be one of the per-case metrics such as exact_match\(\) or ones "
         r"made with metric\(\.\.\.\); got StatisticalMetric\('latency'\) \(it belongs in statistical_metrics=\)$"),
        ({"statistical_metrics": [exact_match()]}, r"^statistical_metrics\[0\] must be one of the run-level metrics "
         r"such as latency\(\), cost\(\) or token_usage\(\); got Metric\('exact_match', case_sensitive=False\) "
         r"\(it belongs in metrics=\)$"),
        ({"metrics": exact_match()}, r"^metrics must be a list of per-case metrics"),
        ({"assertions": threshold("exact_match", 0.5)}, r"^assertions must be a list of threshold\(\.\.\.\)"),
        ({"assertions": [lambda aggregated: True]}, r"^assertions\[0\] must be made with threshold\(\.\.\.\), "
         r"no_regression\(\.\.\.\) or assertion\(\.\.\.\); got <function"),
        ({"metadata": {"when": object()}}, r"^metadata\['when'\] must be a JSON value"),
        ({"metadata": {"score": math.inf}}, r"^metadata\['score'\] must be a finite number"),
    ],
)
def test_construction_is_validated(options, message):
    with pytest.raises(InputError, match=message):
        suite(**options)


def test_a_target_must_be_callable():
    with pytest.raises(InputError, match=r"^target must be a callable, a ChatTarget or \{\"fn\": callable\}; got 'not a function'$"):
        EvalSuite(DATA, "not a function")


def test_datasets_may_be_lists_of_cases_or_records():
    from_cases = EvalSuite([Case("a", expected="a")], lambda q: q, metrics=[contains()], progress=False).run()
    from_records = EvalSuite([{"input": "a", "expected": "a"}], lambda q: q, metrics=[contains()], progress=False).run()
    assert from_cases.results[0].case_key == from_records.results[0].case_key


def test_progress_bar_counts_every_case(capsys):
    suite(progress=True, name="calc").run()
    err = capsys.readouterr().err
    assert "calc" in err and "4/4" in err


def test_a_failing_statistical_metric_keeps_every_result():
    from cogeval.scoring import StatisticalMetric

    def broken(outcome):
        raise ZeroDivisionError("no tokens")

    with pytest.warns(RuntimeWarning, match="statistical metric 'per_token' failed, its aggregate is NaN: "):
        result = suite(metrics=[exact_match()], statistical_metrics=[StatisticalMetric("per_token", broken)],
                       assertions=[threshold("per_token", 1.0)]).run()
    assert result.stats.total == 4 and result.aggregated["exact_match"].mean == 0.5
    assert result.aggregated["per_token"].count == 0 and math.isnan(result.aggregated["per_token"].mean)
    assert not result.assertions[0].passed


# --- several suites, interleaved ------------------------------------------------------------------


def test_interleaved_suites_give_each_the_result_its_own_run_gives():
    from cogeval.evaluate.suite import arun_interleaved
    from cogeval.execution import run_sync

    seen = []
    doubled = EvalSuite(DATA, lambda q: "4", metrics=[exact_match()], statistical_metrics=[latency()],
                        assertions=[threshold("exact_match", 0.5)], name="four", metadata={"v": 2}, progress=False,
                        on_progress=seen.append)
    plain = suite(metrics=[exact_match()], name="calc")
    four, calc = run_sync(arun_interleaved([doubled, plain], max_cases=3))
    alone = suite(metrics=[exact_match()], name="calc").run(max_cases=3)
    assert [r.output for r in calc.results] == [r.output for r in alone.results] == ["4", "6", ""]
    assert [r.output for r in four.results] == ["4", "4", "4"]
    assert (four.name, four.metadata, calc.name) == ("four", {"v": 2}, "calc")
    assert four.aggregated["exact_match"].mean == pytest.approx(1 / 3) and not four.passed
    assert four.config == ConfigRecord.model_validate(doubled.config())
    assert calc.config == ConfigRecord.model_validate(plain.config())
    assert four.run_id != calc.run_id and four.started_at == calc.started_at
    assert [(p["completed"], p["total"]) for p in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [r.case.input for r in four.results] == ["2+2", "3+3", "boom"]


def test_interleaved_suites_show_a_progress_bar_each(capsys):
    from cogeval.evaluate.suite import arun_interleaved
    from cogeval.execution import run_sync

    run_sync(arun_interleaved([suite(progress=True, name="left"), suite(progress=True, name="right")]))
    err = capsys.readouterr().err
    assert "left" in err and "right" in err and "4/4" in err


@pytest.mark.parametrize(("suites", "message"), [
    ([], "^suites must be a non-empty list of EvalSuite; got \\[\\]$"),
    ("calc", "^suites must be a non-empty list of EvalSuite; got 'calc'$"),
    ([suite(), "calc"], "^suites\\[1\\] must be an EvalSuite; got 'calc'$"),
    ([suite(), suite(trials=2)], "^suites\\[1\\] has trials=2 but suites\\[0\\] has 1; interleaved suites must share "
                                 "concurrency, timeout, retries, trials$"),
    ([suite(), suite(timeout=5)], "^suites\\[1\\] has timeout=5.0 but suites\\[0\\] has 30.0; "),
    ([suite(), EvalSuite(DATA[:2], calculator)], "^suites\\[1\\] has another dataset than suites\\[0\\]; "
                                                 "interleaved suites must run the same cases$"),
])
def test_interleaved_suites_must_share_their_cases_and_run_options(suites, message):
    from cogeval.evaluate.suite import arun_interleaved
    from cogeval.execution import run_sync

    with pytest.raises(InputError, match=message):
        run_sync(arun_interleaved(suites))
