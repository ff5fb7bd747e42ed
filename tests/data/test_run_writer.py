"""RunFileWriter (a checkpoint's writes): the very text EvalRun.save writes, each result encoded once."""

from __future__ import annotations

import json

from cogeval import Case, EvalSuite, exact_match, latency
from cogeval.data.run_writer import RunFileWriter
from cogeval.execution import TargetResponse
from cogeval.scoring import StatisticalMetric


def _target(text, case):
    if text == "boom":
        raise RuntimeError("no answer")
    return TargetResponse(f"{text} ✓", usage={"input_tokens": 3, "output_tokens": 2, "cost_usd": 0.001},
                          prompt={"key": "support", "version_id": f"v{len(text) % 2}", "version": len(text) % 2})


def _run():
    cases = [Case("2+2", expected="4 ✓"), Case("boom"), Case("hi", metadata={"lang": "en"}),
             Case("hello", turns=["hello", "and again"], expected="x")]
    suite = EvalSuite(cases, _target, metrics=[exact_match()], statistical_metrics=[latency(), StatisticalMetric("length", lambda r: len(r.output))], progress=False)
    return suite.run().run


def _pieces(run, versions=None):
    versions = versions or {}
    made = []

    def record(at):
        made.append(at)
        return run.results[at]

    pieces = [(at, versions.get(at, run.results[at]), lambda at=at: record(at)) for at in range(len(run.results))]
    return pieces, made


def test_the_text_is_what_save_writes_for_the_same_run(tmp_path):
    run = _run()
    assert len({r.prompt.version_id for r in run.results if r.prompt}) == 2 and any(r.turns for r in run.results) and any(r.error for r in run.results)
    assert all(r.statistical_values for r in run.results)  # a statistical metric's per-case values too
    pieces, _ = _pieces(run)
    written = RunFileWriter().write(tmp_path / "a.json", run.model_copy(update={"results": []}), pieces)
    assert written.read_text(encoding="utf-8") == run.save(tmp_path / "b.json").read_text(encoding="utf-8")


def test_an_empty_run_is_written_as_save_writes_it(tmp_path):
    run = _run().model_copy(update={"results": []})
    written = RunFileWriter().write(tmp_path / "a.json", run, [])
    assert json.loads(written.read_text())["results"] == []
    assert written.read_text() == run.save(tmp_path / "b.json").read_text()


def test_only_new_or_changed_results_are_encoded_again(tmp_path):
    run, writer = _run(), RunFileWriter()
    head = run.model_copy(update={"results": []})
    pieces, made = _pieces(run.model_copy(update={"results": run.results[:2]}))
    writer.write(tmp_path / "a.json", head, pieces)
    assert made == [0, 1]
    changed = object()  # result 1 changed (scored since): another version
    pieces, made = _pieces(run, versions={0: pieces[0][1], 1: changed})
    writer.write(tmp_path / "a.json", head, pieces)
    assert made == [1, 2, 3]
    assert (tmp_path / "a.json").read_text() == run.save(tmp_path / "b.json").read_text()
