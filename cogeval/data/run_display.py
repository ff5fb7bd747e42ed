"""The notebook display of a run: one function for :class:`~cogeval.data.EvalRun` and the suite results holding one.

>>> from cogeval.data import EvalRun
>>> run = EvalRun.model_validate({"runId": "20261022T101530123Z-1a2b3c4d", "startedAt": "2026-10-22T10:15:30.123Z",
...     "finishedAt": "2026-10-22T10:15:31.000Z", "results": [{"caseKey": "k", "case": {"input": "<b>"},
...     "scores": [{"metric": "m", "score": 1}]}]})
>>> "<caption>EvalRun &lt;b&gt;</caption>" in run_html(run, "EvalRun <b>")
True
"""

from __future__ import annotations

from typing import Any

from cogeval import _columns as col
from cogeval._html import badge, html_table, key_value_table


def run_html(run: Any, title: str) -> str:
    """The notebook display of a run (an :class:`EvalRun`, or a suite result holding one) under ``title``.

    Its identity and counts, one row per metric with its direction, the errors (``errors_frame``,
    ``metric_errors_frame``: the 10 most frequent messages of each) when there are any, and the
    assertions as pass / fail badges; every value escaped. It reads the run's
    attributes through ``run`` so that a holder's display fails (and shows
    :func:`~cogeval._html.safe_html`'s short message) as its own.
    """
    stats = run.stats
    head = key_value_table(title, {
        "run id": run.run_id, "started": run.started_at, "finished": run.finished_at,
        "cases": run.dataset.cases, "results": stats.total, "errors": stats.errors,
        "duration (s)": stats.duration_s, "cost (USD)": stats.cost_usd,
    })
    directions = run.directions
    rows = [
        {col.METRIC: name, "direction": {True: "↑", False: "↓"}.get(directions.get(name), ""), **agg.model_dump()}
        for name, agg in run.aggregated.items()
    ]
    checks = html_table(
        [{"assertion": a.name, "result": badge("pass", "good") if a.passed else badge("fail", "bad"), "message": a.message}
         for a in run.assertions],
        ["assertion", "result", "message"], raw_columns=["result"],
    ) if run.assertions else ""
    errors = "".join(
        html_table([{**row, "examples": " · ".join(row["examples"])} for row in frame.to_dict("records")],
                   list(frame.columns), caption=caption, max_rows=10)
        for caption, frame in (("errors", run.errors_frame), ("metric errors", run.metric_errors_frame)) if len(frame)
    )
    return (head + html_table(rows, [col.METRIC, "direction", "mean", "p50", "p95", "min", "max", "count", "missing"])
            + errors + checks)
