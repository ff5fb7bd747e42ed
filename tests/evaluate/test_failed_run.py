"""A failed run is not a passing run: every case errored, or a metric has no score on any case (docs/reports.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import warnings

import chat_server
import pytest
from chat_server import completion, error

from cogeval import Dataset, EvalSuite, Score, assertion, exact_match, faithfulness, metric, threshold
from cogeval.evaluate import arun_interleaved
from cogeval.evaluate.result import EXIT_ASSERTION_FAILED, EXIT_RUN_FAILED
from cogeval.present.reporters import render

DATA = [{"input": f"q{i}", "expected": f"q{i}", "context": "a document"} for i in range(3)]
make_judge = functools.partial(chat_server.make_judge, retries=0)


def down(question):
    raise RuntimeError("service down")


def first_lines(result):
    return {kind: first_line(render(result, kind)) for kind in ("console", "markdown", "ci")}


def first_line(text):
    """The first line of a report, joined to the lines the console wrapped it onto (issue 25: they go on two
    spaces in, and no line is wider than the terminal)."""
    first, *rest = text.splitlines()
    for line in rest:
        if not line.startswith("  "):
            break
        first += " " + line[2:]
    return first


def test_every_case_errored_is_a_failed_run():
    result = EvalSuite(DATA, down, metrics=[exact_match()], progress=False, name="demo").run()
    reason = "every case errored (3 of 3), first: RuntimeError: service down"
    assert result.failures == [reason]
    assert (result.passed, result.exit_code) == (False, EXIT_RUN_FAILED) and EXIT_RUN_FAILED == 2
    assert first_lines(result) == {
        "console": f"FAILED: {reason}",
        "markdown": f"**FAILED**: {reason}",
        "ci": f"::error title=cogeval run failed::FAILED: {reason}",
    }
    console = render(result, "console").splitlines()
    assert console[1] == f"demo · run {result.run_id}" and console[2].startswith("3 results, 3 errors, 0 metric errors · ")
    assert render(result, "markdown").splitlines()[2] == f"### demo — run `{result.run_id}`"
    ci = render(result, "ci").splitlines()
    assert ci[1] == "::notice title=cogeval::3 results, 3 errors, 0 metric errors; exact_match 0"
    assert ci[-1] == "cogeval: 0 of 0 assertions passed — FAILED (the run failed)"
    assert result.summary()["failures"] == [reason] and result.summary()["assertions_passed"] is True
    assert result._repr_html_().count(f"FAILED: {reason}") == 1


def test_a_run_failure_outranks_failed_assertions():
    result = EvalSuite(DATA, down, metrics=[exact_match()], assertions=[threshold("exact_match", 0.5)],
                       progress=False).run()
    assert not result.assertions[0].passed and result.exit_code == EXIT_RUN_FAILED


def test_a_judge_that_always_fails_leaves_its_metric_without_a_score(chat_server, tmp_path):
    chat_server.responder = lambda body: error(500, "judge overloaded")
    judge = make_judge(chat_server, tmp_path, cache=False)
    result = EvalSuite(DATA, lambda q: q, metrics=[exact_match(), faithfulness()], judge=judge, progress=False,
                       name="judged").run()
    assert result.stats.judge_errors == 3 and result.stats.errors == 0
    assert result.aggregated["faithfulness"].count == 0 and result.aggregated["exact_match"].mean == 1.0
    [reason] = result.failures
    assert reason == ("metric 'faithfulness' has no score on any case: 3 judge errors, first: judge call failed after "
                      "1 attempt: InternalServerError: Error code: 500 - judge overloaded")
    assert (result.passed, result.exit_code) == (False, EXIT_RUN_FAILED)
    lines = first_lines(result)
    assert lines["console"] == f"FAILED: {reason}"
    assert lines["markdown"].startswith("**FAILED**: metric 'faithfulness' has no score on any case: 3 judge errors")
    assert lines["ci"].startswith("::error title=cogeval run failed::FAILED: metric 'faithfulness' has no score")
    # the counts never read as a clean run: judge errors are shown next to the target's errors
    counts = "3 results, 0 errors, 0 metric errors, 3 judge errors"
    assert any(line.startswith(f"{counts} · ") for line in render(result, "console").splitlines())
    assert render(result, "markdown").splitlines()[4].startswith(f"{counts}, ")
    assert render(result, "ci").splitlines()[1].startswith(
        "::notice title=cogeval::3 results, 0 errors, 0 metric errors, 3 judge errors; exact_match 1; faithfulness –")


def test_a_metric_that_always_raises_fails_the_run():
    @metric("fragile")
    def fragile(output, case):
        raise ValueError("no parser for this output")

    result = EvalSuite(DATA, lambda q: q, metrics=[exact_match(), fragile], progress=False).run()
    assert result.failures == ["metric 'fragile' has no score on any case: 3 errors, first: raised ValueError: no "
                               "parser for this output"]
    assert result.exit_code == EXIT_RUN_FAILED
    assert render(result, "ci").splitlines()[1] == (
        "::notice title=cogeval::3 results, 0 errors, 3 metric errors; exact_match 1; fragile –")


def test_a_metric_that_is_nan_everywhere_fails_the_run():
    result = EvalSuite(DATA, lambda q: q, metrics=[metric("never")(lambda output, case: float("nan"))],
                       progress=False).run()
    assert result.failures == ["metric 'never' has no score on any case: 3 errors, first: returned nan; a score must "
                               "be a finite number"]
    # a NaN cell without an error (a result rebuilt by hand) is counted as such
    bare = [dataclasses.replace(r, scores={"never": Score(math.nan)}) for r in result.results[:2]]
    rebuilt = dataclasses.replace(result, results=[*bare, result.results[2]])
    assert rebuilt.failures == ["metric 'never' has no score on any case: 1 error and 2 NaN scores without an error, "
                                "first: returned nan; a score must be a finite number"]


def test_a_metric_that_failed_on_some_cases_only_is_counted_not_a_failed_run(chat_server, tmp_path):
    replies = iter([error(500, "judge overloaded"), completion('{"score": 5, "reasoning": "faithful"}'),
                    completion('{"score": 1, "reasoning": "made up"}')])
    chat_server.responder = lambda body: next(replies)
    judge = make_judge(chat_server, tmp_path, cache=False)
    result = EvalSuite(DATA, lambda q: q, metrics=[faithfulness()], judge=judge, concurrency=1, progress=False).run()
    assert result.stats.judge_errors == 1 and result.aggregated["faithfulness"].count == 2
    assert result.failures == [] and result.passed and result.exit_code == 0
    head, counts = render(result, "console").splitlines()[:2]
    assert head.startswith("eval · run ") and ", 0 metric errors, 1 judge errors · " in counts


def test_a_normal_run_passes_and_opens_its_reports_as_before():
    result = EvalSuite(DATA, lambda q: q, metrics=[exact_match()], progress=False, name="demo").run()
    assert result.failures == [] and result.passed and result.exit_code == 0
    lines = first_lines(result)
    assert lines["console"] == f"demo · run {result.run_id}"
    assert render(result, "console").splitlines()[1].startswith("3 results, 0 errors, 0 metric errors · ")
    assert lines["markdown"] == f"### demo — run `{result.run_id}`"
    assert lines["ci"] == "::notice title=cogeval::3 results, 0 errors, 0 metric errors; exact_match 1"
    assert render(result, "ci").splitlines()[-1] == "cogeval: 0 of 0 assertions passed"


def test_failed_assertions_alone_exit_1():
    result = EvalSuite(DATA, lambda q: "no", metrics=[exact_match()], assertions=[threshold("exact_match", 0.5)],
                       progress=False).run()
    assert result.failures == [] and not result.passed and result.exit_code == EXIT_ASSERTION_FAILED == 1
    assert render(result, "ci").splitlines()[0].startswith("::notice title=cogeval::")


NO_CASES = "the run has no cases: its dataset is empty, so nothing was evaluated"


@pytest.mark.parametrize("data", [[], Dataset([])], ids=["list", "Dataset"])
def test_a_run_of_no_cases_is_a_failed_run(data):
    result = EvalSuite(data, lambda q: q, metrics=[exact_match()], progress=False, name="empty").run()
    assert result.failures == [NO_CASES]  # not "every case errored (0 of 0)"
    assert not result.passed and result.exit_code == EXIT_RUN_FAILED == 2
    assert first_lines(result) == {"console": f"FAILED: {NO_CASES}", "markdown": f"**FAILED**: {NO_CASES}",
                                   "ci": f"::error title=cogeval run failed::FAILED: {NO_CASES}"}
    assert render(result, "ci").splitlines()[-1] == "cogeval: 0 of 0 assertions passed — FAILED (the run failed)"
    assert result.summary()["failures"] == [NO_CASES]


def test_a_run_of_no_cases_fails_whatever_its_assertions_say():
    passing = assertion("always", lambda aggregated: True, "nothing to check")
    result = EvalSuite([], lambda q: q, metrics=[exact_match()], assertions=[passing], progress=False).run()
    assert [a.passed for a in result.assertions] == [True]
    assert result.failures == [NO_CASES] and result.exit_code == EXIT_RUN_FAILED


def test_a_run_whose_stats_count_no_results_is_not_every_case_errored():
    result = EvalSuite(DATA, down, metrics=[exact_match()], progress=False).run()
    stats = result.stats.model_copy(update={"total": 0, "errors": 0})
    empty = dataclasses.replace(result, results=[], run=result.run.model_copy(update={"stats": stats}))
    assert empty.failures == [NO_CASES] and empty.exit_code == EXIT_RUN_FAILED


def test_failure_text_in_markdown_cannot_break_the_report():
    def hostile(question):
        raise RuntimeError("| <script>x</script>\n# heading")

    text = render(EvalSuite(DATA, hostile, metrics=[exact_match()], progress=False).run(), "markdown")
    assert text.splitlines()[0] == (
        "**FAILED**: every case errored (3 of 3), first: RuntimeError: \\| &lt;script&gt;x&lt;/script&gt; # heading")
    assert "<script>" not in text


@pytest.mark.parametrize("kind", ["console", "markdown", "ci"])
def test_long_errors_are_cut_on_one_line(kind):
    def verbose(question):
        raise RuntimeError("x" * 1000)

    text = render(EvalSuite(DATA, verbose, metrics=[exact_match()], progress=False).run(), kind)
    line = first_line(text)
    assert "FAILED" in line and line.endswith("x…") and len(line) < 300
    assert kind != "console" or max(len(line) for line in text.splitlines()) <= 80


# -- warned at the end of the run, FAILED in the repr (issue 34) ---------------------------------------------------


@metric("fragile")
def fragile(output, case):
    raise ValueError("no parser for this output")


def test_a_metric_with_no_score_warns_when_the_run_ends_naming_the_run():
    with pytest.warns(UserWarning) as caught:
        result = EvalSuite(DATA, lambda q: q, metrics=[exact_match(), fragile], progress=False, name="demo").run()
    [warned] = caught
    assert str(warned.message) == (
        f"run {result.run_id}: metric 'fragile' has no score on any case: 3 errors, first: raised ValueError: no "
        "parser for this output; the run failed (exit_code 2; see result.failures and result.metric_errors_frame)")
    assert warned.filename == __file__
    assert repr(result) == (f"EvalSuiteResult(run_id={result.run_id!r}, name='demo', results=3, FAILED: metric "
                            "'fragile' has no score on any case)")
    assert result._repr_html_().count("FAILED: metric &#x27;fragile&#x27; has no score on any case: 3 errors") == 1


def test_a_rerun_is_warned_again_under_pythons_default_filter():
    suite = EvalSuite(DATA, lambda q: q, metrics=[fragile], progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # as in a script or a notebook: a repeated warning is shown once
        ids = [suite.run().run_id for _ in range(2)]
    assert [str(w.message).split(":")[0] for w in caught] == [f"run {run_id}" for run_id in ids]


def test_arun_and_arun_interleaved_warn_too():
    suite = EvalSuite(DATA, lambda q: q, metrics=[fragile], progress=False)
    async def notebook_cell():
        return await suite.arun()

    with pytest.warns(UserWarning, match="metric 'fragile' has no score on any case") as caught:
        result = asyncio.run(notebook_cell())
    assert [w.filename for w in caught] == [__file__] and result.exit_code == EXIT_RUN_FAILED
    other = EvalSuite(DATA, lambda q: q, metrics=[exact_match()], progress=False)
    with pytest.warns(UserWarning) as caught:
        first, second = asyncio.run(arun_interleaved([suite, other]))
    assert [str(w.message).split(":")[0] for w in caught] == [f"run {first.run_id}"]
    assert "FAILED" in repr(first) and "FAILED" not in repr(second)


def test_a_run_without_a_failed_metric_warns_nothing_and_its_repr_is_plain():
    some = metric("some")(lambda output, case: 1.0 if case.input == "q0" else float("nan"))  # scored on one case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = EvalSuite(DATA, lambda q: q, metrics=[exact_match(), some], progress=False, name="demo").run()
    assert result.failures == [] and result.aggregated["some"].count == 1
    assert repr(result) == f"EvalSuiteResult(run_id={result.run_id!r}, name='demo', results=3)"


def test_a_run_failed_otherwise_says_so_in_its_repr_without_the_first_error():
    result = EvalSuite(DATA, down, metrics=[exact_match()], progress=False).run()
    assert repr(result).endswith("results=3, FAILED: every case errored (3 of 3))")
