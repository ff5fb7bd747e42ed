"""An ``on_progress`` callback that raises does not throw away a finished run (Cogitator's onProgress is a display)."""

from __future__ import annotations

import warnings

from cogeval import EvalSuite, exact_match


def test_a_raising_on_progress_warns_once_and_every_case_is_kept():
    calls = []

    def progress(update):
        calls.append(update["completed"])
        raise ValueError(f"display broke at {update['completed']}")

    data = [{"input": str(i), "expected": str(i)} for i in range(3)]
    suite = EvalSuite(data, lambda q: q, metrics=[exact_match()], on_progress=progress, concurrency=1, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = suite.run()
    assert sorted(calls) == [1, 2, 3]
    assert [str(w.message) for w in caught if w.category is RuntimeWarning] == [
        "on_progress raised ValueError: display broke at 1; the run goes on and keeps every case "
        "(further errors of this callback are not reported)"
    ]
    assert [r.output for r in result.results] == ["0", "1", "2"]
    assert result.aggregated["exact_match"].mean == 1.0

