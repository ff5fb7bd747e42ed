"""Values a run cannot hold fail their case, never the run (issue 24 item 4).

A token count past int64 from a target or server, a cost past the float range, a metric's int past the
float range: each becomes an error on that case, named, and the run keeps and saves every other case.
"""

from __future__ import annotations

from cogeval import EvalSuite, TargetResponse, exact_match, load_run, metric


def test_odd_numbers_fail_only_their_case_and_the_run_saves(tmp_path):
    def target(text):
        usage = {"b": {"input_tokens": 2**64}, "c": {"cost_usd": 10**400}}.get(text, {"input_tokens": 3})
        return TargetResponse(text, usage=usage)

    @metric("huge")
    def huge(output, case):
        return 10**400 if output == "d" else 1

    result = EvalSuite([{"input": t, "expected": t} for t in "abcd"], target, metrics=[exact_match(), huge],
                       progress=False).run()
    by_input = {r.case.input: r for r in load_run(result.save_run(tmp_path)).results}
    assert by_input["a"].error is None and by_input["a"].usage.input_tokens == 3
    assert by_input["b"].error == ("TargetResponse.usage['input_tokens'] must be a count from 0 to 2**63 - 1 "
                                   "(what a run holds); got 18446744073709551616")
    assert by_input["c"].error.startswith("TargetResponse.usage['cost_usd'] must be a finite number or None; got 1000")
    [score] = [s for s in by_input["d"].scores if s.metric == "huge"]
    assert score.error.startswith("metric 'huge' returned 1000") and "beyond the range of a float" in score.error
    assert result.run.stats.errors == 2
