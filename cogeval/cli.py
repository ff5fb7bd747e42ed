"""The ``cogeval`` command: ``demo``, ``compare``, ``runs``, ``show``, ``merge`` and ``report``.

Errors in what the user gave (a missing file or folder, a file that is not a
run, a broken run, a bad option) print one line on stderr (``cogeval: error:
no such file: 'x.json'``) and exit with status 2; ``compare
--fail-on-regression`` exits 1 (:data:`EXIT_REGRESSION`) when a deciding
metric's verdict is ``worse``, and 2 (:data:`EXIT_NOT_COMPARED`) when no case
of base matched a case of head: a gate fails when it has no evidence.
Comparing a run with itself (both resolve to one run id, as ``cogeval compare
runs/ runs/`` does) or with a copy of itself warns.

Console output (``compare``, ``runs``, ``show``, ``import``) fits the width of
the terminal, else ``COLUMNS``, else 80 columns (CI logs), in one layout
(:mod:`cogeval.present.comparison_console`): a table leaves out its
low-priority columns and says which, or wraps its text; no name, number or
verdict is cut. ``--wide`` sets no width limit. ``cogeval --help`` imports no
pandas, plotly or scipy: each command imports what it needs.

Everything printed is inert (:mod:`cogeval._text`): text from a run (names,
metric names, metadata, messages) shows control characters and escape
sequences as escapes (``\\x1b``), and no printed line can start a GitHub
Actions workflow command (``::error``...).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pathlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from cogeval._numbers import number
from cogeval._text import printable, terminal_text, with_unit

EXIT_REGRESSION = 1
"""``compare --fail-on-regression``: a deciding metric's verdict is ``worse``."""
EXIT_NOT_COMPARED = 2
"""``compare --fail-on-regression``: no case of base matched a case of head, so nothing was compared (as a run
of no cases is a failed run, :data:`cogeval.evaluate.EXIT_RUN_FAILED`, and as bad input exits)."""


def _say(text: Any, file: TextIO | None = None) -> None:
    """Print ``text`` made inert (:func:`~cogeval._text.terminal_text`): every line the CLI prints goes through here."""
    print(terminal_text(str(text)), file=file or sys.stdout)


def _load(reference: str, shards: bool = False) -> Any:
    """A run from a run file or another tool's file (:func:`cogeval.importers.read_runs`), or the newest run
    in a store folder (a shard run too with ``shards``)."""
    from cogeval import RunStore
    from cogeval.errors import CogevalError
    from cogeval.importers import read_runs

    path = _existing(reference)
    if path.is_dir():
        store = RunStore(path, on_skip=_skip_reporter())
        run = store.latest(shards=shards)
        if run is None:
            found = _shard_runs(store)
            raise CogevalError(f"{reference!r} holds {found}" if found else f"no run files in folder {reference!r}")
        return run
    runs = read_runs(path)
    if len(runs) > 1:
        names = ", ".join(repr(r.name) for r in runs)
        raise CogevalError(f"{reference!r} holds {len(runs)} runs ({names}); `cogeval import {reference} --out runs/` "
                           "saves each as a run file to compare")
    return runs[0]


def _shard_runs(store: Any, advice: str = "merge them with `cogeval merge`, or pass --shards") -> str:
    """``"3 shard runs (shards 0, 1, 3 of 4); merge them with `cogeval merge`, or pass --shards"`` for the shard
    runs of ``store`` (``suite.run(shard=(i, n))``: parts of a run, which the store does not list as runs), then
    ``advice``; ``""`` when it has none."""
    from cogeval._numbers import count

    parts = [s["shard"] for s in store.list(shards=True) if "shard" in s]
    if not parts:
        return ""
    by_count: dict[int, list[int]] = {}
    for part in parts:
        by_count.setdefault(part["count"], []).append(part["index"])
    which = "; ".join(f"shard{'s' if len(found) > 1 else ''} {', '.join(map(str, sorted(found)))} of {total}"
                      for total, found in by_count.items())
    return f"{count(len(parts))} shard run{'s' if len(parts) > 1 else ''} ({which}); {advice}"


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
    from cogeval._numbers import count
    from cogeval.importers import read_runs
    from cogeval.present.comparison_console import console_width, wrap_parts

    store = RunStore(args.out)
    width = console_width(args.wide)
    for run in read_runs(args.path, args.kind):
        parts = [run.run_id, printable(run.name or "-"), f"{count(len(run.results))} results",
                 f"→ {printable(str(store.save(run)))}"]
        for line in wrap_parts(parts, width, sep="  "):  # the path on a line of its own when the line is too long
            _say(line)
    return 0


def _skip_reporter() -> Callable[[dict[str, str]], None]:
    """A store's ``on_skip`` that prints each skipped file once on stderr, however often the command scans."""
    said: set[str] = set()

    def report(skip: dict[str, str]) -> None:
        if skip["path"] not in said:
            said.add(skip["path"])
            _say(f"skipped {printable(skip['path'])}: {printable(skip['reason'])}", file=sys.stderr)

    return report


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
        print(f"  {name}: exact_match {number(result.aggregated['exact_match'].mean)}\n    saved {path}")  # 80 columns
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

    base, head = _load(args.base, args.shards), _load(args.head, args.shards)
    comparison = compare_runs(base, head, alpha=args.alpha, test=args.test,
                              seed=args.seed, metrics=_names(args.metrics), decide_on=_names(args.decide_on),
                              margins=dict(args.margin), cluster=args.cluster)
    if args.format == "json":
        from cogeval.data.jsonable import json_text

        document = {
            "base": comparison.base, "head": comparison.head, "verdict": comparison.verdict,
            "headline": comparison.headline(), "winner": comparison.winner,
            "matched": comparison.matched, "n_added": comparison.n_added, "n_removed": comparison.n_removed,
            "metrics": comparison.to_frame().to_dict("records"),
            "changes": comparison.changes.to_dict("records"), "warnings": list(comparison.warnings),
            "changed": comparison.changed, "errored": comparison.errored.to_dict("records"),
            "cluster": comparison.cluster, "clusters": comparison.clusters,
        }
        text = json_text(document, indent=2)
        if args.out:
            from cogeval._files import report_paths, write_text_atomic

            [target] = report_paths(args.out, [".json"], default_name="eval-comparison", known=[".md", ".html"])
            _say(write_text_atomic(target, text + "\n"))
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
    from cogeval import RunStore
    from cogeval._numbers import count, number
    from cogeval.errors import CogevalError
    from cogeval.present.comparison_console import (
        Column,
        console_table,
        console_width,
        dropping,
        fit_columns,
        left_out,
        print_lines,
        rendered,
        wrap_parts,
    )

    if not _existing(args.folder).is_dir():
        raise CogevalError(f"{args.folder!r} is a file; `cogeval runs` lists the run files in a folder")
    store = RunStore(args.folder, on_skip=_skip_reporter())
    summaries = store.list(shards=args.shards)
    if not summaries:
        shards = "" if args.shards else _shard_runs(store)
        _say(f"no runs in {printable(args.folder)}" + (f"; it holds {shards}" if shards else ""))
        return 0
    shards = "" if args.shards else _shard_runs(store, "--shards lists them")
    metrics = list(dict.fromkeys(name for s in summaries for name in s["metrics"]))
    rows = [{"id": s["id"], "name": _text_or_missing(s["name"]) + _shard_label(s),
             "started_at": _text_or_missing(s["started_at"]),
             "finished_at": _text_or_missing(s["finished_at"]), "cases": count(s["cases"]),
             **{f"metric:{m}": number(s["metrics"].get(m)) for m in metrics}} for s in summaries]
    columns = [Column("id", justify="left"), Column("name", justify="left", wraps=1),
               Column("started_at", justify="left"), Column("finished_at", justify="left"), Column("cases"),
               *(Column(f"metric:{m}", with_unit(str(m), str(m))) for m in metrics)]
    width = console_width(args.wide)
    drops = ["finished_at", "started_at", *(f"metric:{m}" for m in reversed(metrics))]

    def draw(console: Any) -> None:
        shown, widths = fit_columns(dropping(columns, drops), rows, width)
        console.print(console_table(shown, widths, rows))
        print_lines(console, left_out(columns, shown, width, "cogeval runs --wide shows every column"))
        if shards:
            print_lines(console, wrap_parts([f"and {shards}"], width))

    _say(rendered(draw, width))
    return 0


def _shard_label(summary: dict[str, Any]) -> str:
    """`` (shard 1 of 4)`` after the name of a shard run in ``cogeval runs --shards``; ``""`` for a run."""
    shard = summary.get("shard")
    return "" if shard is None else f" (shard {shard['index']} of {shard['count']})"


def _text_or_missing(value: Any) -> str:
    """A text field of a run for a table: ``–`` when the run has none."""
    return "–" if value is None or value != value else printable(str(value))


_SHOW_DROPS = ["p99", "p50", "min", "max", "p95", "std_dev", "median"]
"""``cogeval show``: the metric table's columns left out, in turn, when the table is wider than the terminal."""


def _show(args: argparse.Namespace) -> int:
    from cogeval._numbers import count, number
    from cogeval.present.comparison_console import (
        UNLIMITED,
        Column,
        console_table,
        console_width,
        dropping,
        fit_columns,
        left_out,
        print_lines,
        rendered,
        wrap_parts,
    )
    from cogeval.present.run_errors import error_lines

    run = _load(args.run, args.shards)
    for disagreement in run.stored_disagreements():  # what is shown comes from the results and scores
        _say(f"cogeval: warning: run {run.run_id}: {printable(disagreement)}", file=sys.stderr)
    width = console_width(args.wide)
    errors = sum(r.error is not None for r in run.results)
    metric_errors = sum(s.error is not None for r in run.results for s in r.scores)
    lines = wrap_parts([f"run {run.run_id}", f"name {printable(str(run.name))}", f"started {run.started_at}",
                        f"finished {run.finished_at}"], width, sep="  ")
    lines += wrap_parts([f"{count(len(run.results))} results", f"{count(errors)} errors",
                         f"{count(metric_errors)} metric errors", f"{count(run.dataset.cases)} cases",
                         f"fingerprint {printable(run.fingerprint[:12])}"], width, sep=", ")
    if run.metadata:
        lines.append(_metadata_line(run.metadata, width))
    aggregated = run.aggregated_from_scores()
    rows = [{"metric": with_unit(name, name), **{k: count(v) if k in ("count", "missing") else number(v)
                                                 for k, v in agg.model_dump().items()}}
            for name, agg in aggregated.items()]
    keys = list(rows[0]) if rows else []
    columns = [Column(k, justify="left" if k == "metric" else "right", wraps=int(k == "metric")) for k in keys]

    def draw(console: Any) -> None:
        print_lines(console, lines)
        if rows:
            shown, widths = fit_columns(dropping(columns, _SHOW_DROPS), rows, width)
            console.print(console_table(shown, widths, rows))
            print_lines(console, left_out(columns, shown, width, "cogeval show --wide shows every column"))
        print_lines(console, error_lines(run, width or UNLIMITED))
        for check in run.assertions:
            verdict = "PASS" if check.passed else "FAIL"
            print_lines(console, wrap_parts([f"{verdict}  {printable(check.name)}: {printable(check.message)}"], width))

    _say(rendered(draw, width))
    return 0


_METADATA_VALUE = 16
"""Characters of a metadata value (and key) in the one-line summary of ``cogeval show``."""


def _metadata_line(metadata: dict[str, Any], width: int | None) -> str:
    """``metadata {...}``: the run's metadata as JSON on one line when it fits ``width`` (always when ``width`` is
    None), else summarised on one line: ``metadata source=promptfoo · prompt={3 fields} · … 9 more fields (--wide)``:
    the fields that fit, in their order, each value cut to :data:`_METADATA_VALUE` characters, an object or a list
    as the count of its fields or items."""
    from rich.cells import cell_len

    from cogeval._text import cut, one_line
    from cogeval.data.jsonable import json_text

    whole = "metadata " + printable(json_text(metadata))
    if width is None or cell_len(whole) <= width:
        return whole

    def brief(value: Any) -> str:
        if isinstance(value, dict) and value:
            return f"{{{len(value)} {'field' if len(value) == 1 else 'fields'}}}"
        if isinstance(value, list | tuple) and value:
            return f"[{len(value)} {'item' if len(value) == 1 else 'items'}]"
        return cut(printable(one_line(value if isinstance(value, str) else json_text(value))), _METADATA_VALUE)

    fields = [f"{cut(printable(str(key)), _METADATA_VALUE)}={brief(value)}" for key, value in metadata.items()]
    head, room = "metadata ", width - cell_len(f" · … {len(fields)} more fields (--wide)")
    shown: list[str] = []
    for field in fields:  # the fields that fit, in their order; a long one is left for a shorter one after it
        if cell_len(head + " · ".join([*shown, field])) <= room:
            shown.append(field)
    rest = len(fields) - len(shown)
    more = f"… {rest} more {'field' if rest == 1 else 'fields'} (--wide)"
    return head + " · ".join([*shown, more] if rest else shown)


def _merge(args: argparse.Namespace) -> int:
    from cogeval import RunStore, load_run
    from cogeval._numbers import count
    from cogeval.evaluate.merge import merge_runs

    merged = merge_runs([load_run(_existing(file)) for file in args.shards])
    path = RunStore(args.out).save(merged)
    _say(f"merged {count(len(args.shards))} shards ({count(merged.dataset.cases)} cases, "
         f"{count(len(merged.results))} results) into run {merged.run_id} → {printable(str(path))}")
    return 0


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
                         help="console: no width limit: every column of the metric table (effect size, test, mde, "
                              "n needed), no line wrapped")
    compare.add_argument("--out", help="report path: its suffix is the format's (.md, .html, .json), a folder "
                                       "(ending in /) gets eval-comparison.<suffix> (default: eval-comparison)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    compare.add_argument("--seed", type=int, default=0, help="seed recorded with the comparison (default: 0)")
    compare.add_argument("--test", choices=["t", "wilcoxon"], default="t", help="test for non-binary metrics")
    compare.add_argument("--metrics", help="comma-separated metrics to compare (default: those both runs have)")
    compare.add_argument("--decide-on", metavar="METRICS",
                         help="comma-separated metrics that decide the verdict (default: every per-case quality "
                              "metric; latency, cost and tokens only inform)")
    compare.add_argument("--margin", type=_margin, action="append", default=[], metavar="METRIC=NUMBER",
                         help="smallest difference that matters, in the metric's units (repeatable), e.g. latency=0.05")
    compare.add_argument("--cluster", metavar="FIELD",
                         help="case-metadata field whose cases are not independent (questions on one passage, turns "
                              "of one conversation): whole clusters are tested, e.g. --cluster passage")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when the verdict of any deciding metric is 'worse', "
                              "2 when no case of base matched a case of head")
    compare.add_argument("--shards", action="store_true", help="a folder's newest run may be a shard run (suite.run(shard=(i, n)): a part of a run, "
                                             "left out by default; `cogeval merge` makes the shards one run)")
    compare.set_defaults(handler=_compare)

    imports = commands.add_parser("import", help="save the runs of another tool's file as run files "
                                                 "(Inspect AI, lm-eval, promptfoo, AG2)")
    imports.add_argument("path", help="an Inspect .eval/.json log, lm-eval samples .jsonl, promptfoo results.json "
                                      "or AG2 run file")
    imports.add_argument("--from", dest="kind", choices=["inspect", "lm-eval", "promptfoo", "ag2", "cogeval"],
                         help="the kind of file (default: recognised from its content)")
    imports.add_argument("--out", default="runs", help="the store folder the run files go in (default: runs)")
    imports.add_argument("--wide", action="store_true", help="no width limit: one line per run")
    imports.set_defaults(handler=_import)

    runs = commands.add_parser("runs", help="list the runs in a folder, newest first")
    runs.add_argument("folder", help="a store folder of run files")
    runs.add_argument("--wide", action="store_true", help="no width limit: every column (each metric, the times)")
    runs.add_argument("--shards", action="store_true",
                      help="list shard runs too (suite.run(shard=(i, n)): parts of a run, each named with its shard)")
    runs.set_defaults(handler=_runs)

    show = commands.add_parser("show", help="summarise one run file")
    show.add_argument("run", help="a run file, or a folder of runs (its newest)")
    show.add_argument("--wide", action="store_true",
                      help="no width limit: the whole metadata as JSON, every column of the metric table")
    show.add_argument("--shards", action="store_true", help="a folder's newest run may be a shard run (suite.run(shard=(i, n)): a part of a run, "
                                             "left out by default; `cogeval merge` makes the shards one run)")
    show.set_defaults(handler=_show)

    merge = commands.add_parser("merge", help="merge the shard runs of one suite run (suite.run(shard=(i, n))) "
                                              "into one run file")
    merge.add_argument("shards", nargs="+", metavar="SHARD_FILE", help="the run file of each shard, every shard once")
    merge.add_argument("--out", default="runs", help="the store folder the merged run goes in (default: runs)")
    merge.set_defaults(handler=_merge)

    report = commands.add_parser("report", help="execute a notebook and write it as one self-contained, offline HTML file")
    report.add_argument("notebook", help="the .ipynb file; it runs in its own folder")
    report.add_argument("--out", default="exports/",
                        help="the HTML file, or a folder for it (default: exports/, as <notebook name>.html)")
    report.add_argument("--timeout", type=float, default=120.0, help="seconds each cell may run (default: 120)")
    report.set_defaults(handler=_report)
    return parser


def _replace_unencodable() -> None:
    """Make stdout and stderr print what their encoding cannot (cp1252 on a redirected Windows console, ASCII
    under ``LANG=C``) as ``?`` rather than raise ``UnicodeEncodeError`` after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):  # not a text stream, or closed
            if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
                stream.reconfigure(errors="replace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    _replace_unencodable()
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
