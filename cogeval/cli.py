"""The ``cogeval`` command: ``demo``, ``compare``, ``runs``, ``show`` and ``report``.

Errors in what the user gave (a missing file or folder, a file that is not a
run, a broken run, a bad option) print one line on stderr (``cogeval: error:
no such file: 'x.json'``) and exit with status 2; ``compare
--fail-on-regression`` exits 1 (:data:`EXIT_REGRESSION`) when a deciding
metric's verdict is ``worse``, and 2 (:data:`EXIT_NOT_COMPARED`) when no case
of base matched a case of head: a gate fails when it has no evidence.
Comparing a run with itself (both resolve to one run id, as ``cogeval compare
runs/ runs/`` does) or with a copy of itself warns.

Console output fits the terminal (``COLUMNS`` respected, 80 columns at least);
``compare --wide`` prints every column. ``cogeval --help`` imports no pandas,
plotly or scipy: each command imports what it needs.

Everything printed is inert (:mod:`cogeval._text`): text from a run (names,
metric names, metadata, messages) shows control characters and escape
sequences as escapes (``\\x1b``), and no printed line can start a GitHub
Actions workflow command (``::error``...).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from cogeval._text import printable, terminal_text, with_unit

EXIT_REGRESSION = 1
"""``compare --fail-on-regression``: a deciding metric's verdict is ``worse``."""
EXIT_NOT_COMPARED = 2
"""``compare --fail-on-regression``: no case of base matched a case of head, so nothing was compared (as a run
of no cases is a failed run, :data:`cogeval.evaluate.EXIT_RUN_FAILED`, and as bad input exits)."""


def _say(text: Any, file: TextIO | None = None) -> None:
    """Print ``text`` made inert (:func:`~cogeval._text.terminal_text`): every line the CLI prints goes through here."""
    print(terminal_text(str(text)), file=file or sys.stdout)


def _load(reference: str) -> Any:
    """A run from a run file or another tool's file (:func:`cogeval.importers.read_runs`), or the newest run
    in a store folder."""
    from cogeval import RunStore
    from cogeval.errors import CogevalError
    from cogeval.importers import read_runs

    path = _existing(reference)
    if path.is_dir():
        run = RunStore(path, on_skip=_report_skip).latest()
        if run is None:
            raise CogevalError(f"no run files in folder {reference!r}")
        return run
    runs = read_runs(path)
    if len(runs) > 1:
        names = ", ".join(repr(r.name) for r in runs)
        raise CogevalError(f"{reference!r} holds {len(runs)} runs ({names}); `cogeval import {reference} --out runs/` "
                           "saves each as a run file to compare")
    return runs[0]


def _existing(reference: str) -> pathlib.Path:
    """``reference`` as a path; a :class:`~cogeval.errors.CogevalError` naming it when nothing is there."""
    from cogeval.errors import CogevalError

    path = pathlib.Path(reference)
    if not path.exists():
        raise CogevalError(f"no such file or folder: {reference!r}")
    return path


def _version() -> str:
    """The installed cogeval's version, ``dev`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cogeval")
    except PackageNotFoundError:
        return "dev"


def _import(args: argparse.Namespace) -> int:
    from cogeval import RunStore
    from cogeval.importers import read_runs

    store = RunStore(args.out)
    for run in read_runs(args.path, args.kind):
        _say(f"{run.run_id}  {run.name or '-'}  {len(run.results)} results  → {store.save(run)}")
    return 0


def _report_skip(skip: dict[str, str]) -> None:
    _say(f"skipped {printable(skip['path'])}: {printable(skip['reason'])}", file=sys.stderr)


def _demo(args: argparse.Namespace) -> int:
    from cogeval import EvalSuite, RunStore, compare_runs, contains, exact_match, latency, token_f1
    from cogeval.examples import assistant_v1, assistant_v2, questions

    out = pathlib.Path(args.out)
    store = RunStore(out / "runs")
    dataset = questions()
    print(f"cogeval demo: {len(dataset)} bundled questions, two deterministic assistants, no network.")
    runs = []
    for name, target in (("assistant-v1", assistant_v1), ("assistant-v2", assistant_v2)):
        suite = EvalSuite(
            dataset, target, metrics=[exact_match(), contains(), token_f1()], statistical_metrics=[latency()],
            concurrency=8, name=name, metadata={"demo": True, "target": target.__name__}, progress=not args.quiet,
        )
        result = suite.run()
        path = store.save(result)
        print(f"  {name}: exact_match {result.aggregated['exact_match'].mean:.3f}, saved {path}")
        runs.append(result)
    comparison = compare_runs(runs[0], runs[1], seed=args.seed, by="topic")
    from cogeval.present.comparison_report import print_console

    print_console(comparison, brief=True)
    [markdown, html] = comparison.report(["markdown", "html"], out / "comparison")
    print(f"\nHTML report: {pathlib.Path(html).resolve()}\nMarkdown report: {pathlib.Path(markdown).resolve()}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from cogeval import compare_runs
    from cogeval.compare.runs import same_run_warnings

    base, head = _load(args.base), _load(args.head)
    comparison = compare_runs(base, head, alpha=args.alpha, test=args.test,
                              seed=args.seed, metrics=_names(args.metrics), decide_on=_names(args.decide_on),
                              margins=dict(args.margin))
    if args.format == "json":
        from cogeval.data.jsonable import json_text

        document = {
            "base": comparison.base, "head": comparison.head, "verdict": comparison.verdict,
            "headline": comparison.headline(), "winner": comparison.winner,
            "matched": comparison.matched, "n_added": comparison.n_added, "n_removed": comparison.n_removed,
            "metrics": comparison.to_frame().to_dict("records"),
            "changes": comparison.changes.to_dict("records"), "warnings": list(comparison.warnings),
            "changed": comparison.changed, "errored": comparison.errored.to_dict("records"),
        }
        text = json_text(document, indent=2)
        if args.out:
            from cogeval._files import write_text_atomic

            _say(write_text_atomic(pathlib.Path(args.out).with_suffix(".json"), text + "\n"))
        else:
            _say(text)
    else:
        from cogeval.present.comparison_report import report_comparison

        for path in report_comparison(comparison, args.format, args.out or "eval-comparison", wide=args.wide):
            _say(path)
    if args.format != "console":  # the console report lists every warning; the others are files or JSON
        for warning in same_run_warnings(base, head):
            _say(f"cogeval: warning: {printable(warning)}", file=sys.stderr)
    if args.fail_on_regression and comparison.matched == 0:
        _say("cogeval: no case of base matched a case of head, so nothing was compared and "
             "--fail-on-regression cannot pass it", file=sys.stderr)
        return EXIT_NOT_COMPARED
    if args.fail_on_regression and comparison.regressions:
        worse = ", ".join(printable(str(m)) for m in comparison.regressions)
        _say(f"cogeval: head is worse on {worse} (deciding metrics)", file=sys.stderr)
        return EXIT_REGRESSION
    return 0


def _names(text: str | None) -> list[str] | None:
    """A comma-separated list of metric names, or None."""
    return [m.strip() for m in text.split(",") if m.strip()] if text else None


def _margin(text: str) -> tuple[str, float]:
    """``metric=0.05`` → ("metric", 0.05), for ``--margin``."""
    name, equals, value = text.partition("=")
    try:
        if not equals or not name.strip():
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected METRIC=NUMBER such as latency=0.05; got {text!r}") from None


def _runs(args: argparse.Namespace) -> int:
    import pandas as pd

    from cogeval import RunStore
    from cogeval._text import terminal_width
    from cogeval.errors import CogevalError

    if not _existing(args.folder).is_dir():
        raise CogevalError(f"{args.folder!r} is a file; `cogeval runs` lists the run files in a folder")
    frame = RunStore(args.folder, on_skip=_report_skip).to_frame()
    if frame.empty:
        _say(f"no runs in {printable(args.folder)}")
    else:
        fixed = {"id", "name", "started_at", "finished_at", "cases", "path"}
        frame = frame.drop(columns=["path"]).rename(columns=lambda c: c if c in fixed else with_unit(str(c), str(c)))
        with pd.option_context("display.width", terminal_width(), "display.max_columns", 20, "display.max_colwidth", 40):
            _say(_inert_frame(frame).to_string(index=False))
    return 0


def _show(args: argparse.Namespace) -> int:
    from cogeval._text import terminal_width
    from cogeval.data.jsonable import json_text
    from cogeval.present.run_errors import error_lines

    run = _load(args.run)
    for disagreement in run.stored_disagreements():  # what is shown comes from the results and scores
        _say(f"cogeval: warning: run {run.run_id}: {printable(disagreement)}", file=sys.stderr)
    errors = sum(r.error is not None for r in run.results)
    metric_errors = sum(s.error is not None for r in run.results for s in r.scores)
    _say(f"run {run.run_id}  name {printable(str(run.name))}  started {run.started_at}  finished {run.finished_at}")
    _say(f"{len(run.results)} results, {errors} errors, {metric_errors} metric errors, {run.dataset.cases} cases, "
         f"fingerprint {printable(run.fingerprint[:12])}")
    if run.metadata:
        _say("metadata " + printable(json_text(run.metadata)))
    rows = [{"metric": with_unit(name, name), **agg.model_dump()} for name, agg in run.aggregated_from_scores().items()]
    if rows:
        import pandas as pd

        _say(_inert_frame(pd.DataFrame(rows)).to_string(index=False))
    for line in error_lines(run, terminal_width()):
        _say(line)
    for check in run.assertions:
        _say(f"{'PASS' if check.passed else 'FAIL'}  {printable(check.name)}: {printable(check.message)}")
    return 0


def _inert_frame(frame: Any) -> Any:
    """``frame`` with every text cell and column name made :func:`~cogeval._text.printable`, for printing."""
    frame = frame.rename(columns=lambda c: printable(str(c)))
    return frame.map(lambda v: printable(v) if isinstance(v, str) else v)


def _report(args: argparse.Namespace) -> int:
    from cogeval.errors import CogevalError
    from cogeval.present.notebook import export_html

    if pathlib.Path(args.notebook).is_dir():
        raise CogevalError(f"{args.notebook!r} is a folder; `cogeval report` takes a .ipynb file")
    try:
        path = export_html(args.notebook, args.out, timeout=args.timeout)
    except ModuleNotFoundError as error:
        _say(f"cogeval: error: {error}", file=sys.stderr)
        return 2
    _say(path)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cogeval", description="Evaluate LLM applications and compare runs with paired statistics.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the installed cogeval's version and exit")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="evaluate two bundled assistants offline, compare them, write an HTML report")
    demo.add_argument("--out", default="cogeval-demo", help="folder for the runs and reports (default: cogeval-demo)")
    demo.add_argument("--seed", type=int, default=0, help="seed recorded with the comparison (default: 0)")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(handler=_demo)

    compare = commands.add_parser("compare", help="compare two runs (run files, other tools' files, or store folders "
                                                  "for their newest run)")
    compare.add_argument("base", help="the base run: a run file, an Inspect/lm-eval/AG2 file, or a folder of runs (its newest)")
    compare.add_argument("head", help="the head run: a run file, an Inspect/lm-eval/AG2 file, or a folder of runs (its newest)")
    compare.add_argument("--format", choices=["console", "markdown", "html", "json"], default="console",
                         help="console (printed, fits the terminal), markdown, html or json (default: console)")
    compare.add_argument("--wide", action="store_true",
                         help="console: every column of the metric table (effect size, test, mde, n needed)")
    compare.add_argument("--out", help="report path without extension (default: eval-comparison)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    compare.add_argument("--seed", type=int, default=0, help="seed recorded with the comparison (default: 0)")
    compare.add_argument("--test", choices=["t", "wilcoxon"], default="t", help="test for non-binary metrics")
    compare.add_argument("--metrics", help="comma-separated metrics to compare (default: those both runs have)")
    compare.add_argument("--decide-on", metavar="METRICS",
                         help="comma-separated metrics that decide the verdict (default: every per-case quality "
                              "metric; latency, cost and tokens only inform)")
    compare.add_argument("--margin", type=_margin, action="append", default=[], metavar="METRIC=NUMBER",
                         help="smallest difference that matters, in the metric's units (repeatable), e.g. latency=0.05")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when the verdict of any deciding metric is 'worse', "
                              "2 when no case of base matched a case of head")
    compare.set_defaults(handler=_compare)

    imports = commands.add_parser("import", help="save the runs of another tool's file as run files "
                                                 "(Inspect AI, lm-eval, promptfoo, AG2)")
    imports.add_argument("path", help="an Inspect .eval/.json log, lm-eval samples .jsonl, promptfoo results.json "
                                      "or AG2 run file")
    imports.add_argument("--from", dest="kind", choices=["inspect", "lm-eval", "promptfoo", "ag2", "cogeval"],
                         help="the kind of file (default: recognised from its content)")
    imports.add_argument("--out", default="runs", help="the store folder the run files go in (default: runs)")
    imports.set_defaults(handler=_import)

    runs = commands.add_parser("runs", help="list the runs in a folder, newest first")
    runs.add_argument("folder", help="a store folder of run files")
    runs.set_defaults(handler=_runs)

    show = commands.add_parser("show", help="summarise one run file")
    show.add_argument("run", help="a run file, or a folder of runs (its newest)")
    show.set_defaults(handler=_show)

    report = commands.add_parser("report", help="execute a notebook and write it as one self-contained, offline HTML file")
    report.add_argument("notebook", help="the .ipynb file; it runs in its own folder")
    report.add_argument("--out", default="exports/",
                        help="the HTML file, or a folder for it (default: exports/, as <notebook name>.html)")
    report.add_argument("--timeout", type=float, default=120.0, help="seconds each cell may run (default: 120)")
    report.set_defaults(handler=_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    from cogeval.errors import CogevalError

    try:
        return args.handler(args)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
        what = {FileNotFoundError: "no such file", IsADirectoryError: "a folder, not a file"}.get(type(error), "not a folder")
        message = str(error) if error.filename is None else f"{what}: {str(error.filename)!r}"  # no "[Errno 2]"
        _say(f"cogeval: error: {printable(message)}", file=sys.stderr)
        return 2
    except CogevalError as error:
        _say(f"cogeval: error: {printable(str(error))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `cogeval runs | head -1`: the reader has what it wanted
        with contextlib.suppress(OSError, ValueError):  # so that the flush at exit meets no pipe
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:  # an output that cannot be written: read-only, a full disk, a file for a folder
        where = "" if error.filename is None else f": {str(error.filename)!r}"
        _say(f"cogeval: error: {printable(error.strerror or str(error))}{where}", file=sys.stderr)
        return 2


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
