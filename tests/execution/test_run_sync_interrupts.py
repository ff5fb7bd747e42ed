"""Ctrl-C while a sync call runs a suite keeps every finished answer (issue 24 item 1), in a fresh process.

In a running event loop (a Jupyter cell; any program calling the sync API from a coroutine) the run goes on
in a thread; on Python 3.11 a ``Thread.join`` that Ctrl-C broke returned early the next time, so the caller
got a bare ``KeyboardInterrupt`` and lost the run. A second Ctrl-C while the partial run is kept is told to
wait; a third abandons it. The target presses Ctrl-C itself at a chosen case, so what finished is fixed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

_PROGRAM = textwrap.dedent("""
    import asyncio, os, signal, sys, time
    from cogeval import EvalSuite, RunInterrupted, exact_match

    presses = int(sys.argv[2])
    async def target(text):  # at q3, Ctrl-C; then `presses - 1` more, a little apart, while the run stops
        if text == "q3":
            os.kill(os.getpid(), signal.SIGINT)
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                for _ in range(presses - 1):
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.3)
                raise
        return text

    suite = EvalSuite([{"input": f"q{i}", "expected": f"q{i}"} for i in range(50)], target,
                      metrics=[exact_match()], progress=False, concurrency=1)

    def run():
        try:
            suite.run()
            print("finished")
        except RunInterrupted as stop:
            print("interrupted", sorted(r.case.input for r in stop.result.run.results))
        except KeyboardInterrupt:
            print("KeyboardInterrupt")

    async def in_a_loop(handler):
        if handler == "default":  # what ipykernel and plain Python have while a cell runs
            signal.signal(signal.SIGINT, signal.default_int_handler)
        run()  # the sync API from a running loop (asyncio.run's own SIGINT handler when not replaced)
        await asyncio.sleep(0)
        print("loop goes on")

    where = sys.argv[1]
    if where == "script":
        run()
    else:
        asyncio.run(in_a_loop(where))
""")

FINISHED = "interrupted ['q0', 'q1', 'q2']"


def _run(where: str, presses: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROGRAM, where, str(presses)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("where", ["script", "default", "asyncio"])
def test_one_ctrl_c_keeps_every_finished_answer(where):
    done = _run(where, 1)
    lines = done.stdout.splitlines()
    assert lines[0] == FINISHED, done.stdout + done.stderr
    assert lines[1:] == ([] if where == "script" else ["loop goes on"])


@pytest.mark.parametrize("where", ["script", "default"])
def test_a_second_ctrl_c_while_the_run_stops_is_told_to_wait(where):
    done = _run(where, 2)
    assert done.stdout.splitlines()[0] == FINISHED, done.stdout + done.stderr
    assert "cogeval: stopping and keeping the answers so far; Ctrl-C again to abandon them" in done.stderr


def test_a_third_ctrl_c_abandons_the_run_in_a_running_loop():
    done = _run("default", 3)
    assert done.stdout.splitlines()[0] == "KeyboardInterrupt", done.stdout + done.stderr


def test_the_callers_handler_is_back_after_the_run():
    program = textwrap.dedent("""
        import signal
        from cogeval import EvalSuite, exact_match
        def mine(signum, frame): pass
        signal.signal(signal.SIGINT, mine)
        EvalSuite([{"input": "a", "expected": "a"}], str, metrics=[exact_match()], progress=False).run()
        print(signal.getsignal(signal.SIGINT) is mine)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.slow
def test_interrupting_a_jupyter_kernel_keeps_every_finished_answer(tmp_path):
    """The real thing: a suite run in a cell of the project's ``python3`` kernel, interrupted as JupyterLab's
    Interrupt does (``interrupt_kernel``: SIGINT to the kernel) once the target has answered five cases."""
    from jupyter_client.manager import start_new_kernel

    marker = tmp_path / "five-answered"
    cell = textwrap.dedent(f"""
        import pathlib, time
        from cogeval import EvalSuite, RunInterrupted, exact_match
        answered = []
        def target(text):
            answered.append(text)
            if len(answered) == 5:
                pathlib.Path({str(marker)!r}).touch()
            time.sleep(0.2)
            return text
        suite = EvalSuite([{{"input": f"q{{i}}", "expected": f"q{{i}}"}} for i in range(300)], target,
                          metrics=[exact_match()], progress=False, concurrency=1)
        try:
            suite.run()
        except RunInterrupted as stop:
            print("kept", len(stop.result.run.results), len(answered))
    """)
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute(cell)
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the kernel never answered five cases"
        manager.interrupt_kernel()
        printed = []
        while True:
            message = client.get_iopub_msg(timeout=60)
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            elif message["msg_type"] == "error":
                printed.append(message["content"]["ename"])
            elif message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        kept, answered = map(int, "".join(printed).split()[1:3])
        assert kept >= 4 and answered - 1 <= kept <= answered, printed  # the answer under way at Ctrl-C may be lost
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


_TERMINATED = textwrap.dedent("""
    import asyncio, os, signal, sys
    from cogeval import EvalSuite, RunInterrupted, exact_match

    number = getattr(signal, sys.argv[1])
    if sys.argv[3] == "own handler":
        signal.signal(number, lambda *_: None)

    async def target(text):
        if text == "q3":
            os.kill(os.getpid(), number)  # as docker stop, a cancelled CI job or a closed terminal does
            await asyncio.sleep(3600)
        return text

    suite = EvalSuite([{"input": f"q{i}", "expected": f"q{i}"} for i in range(50)], target,
                      metrics=[exact_match()], progress=False, concurrency=1)
    try:
        suite.run(checkpoint=sys.argv[2], checkpoint_every=3600)
    except RunInterrupted as stop:
        print("interrupted", len(stop.result.run.results))
""")


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_terminating_signal_saves_the_checkpoint_then_ends_the_process_by_it(name, tmp_path):
    from cogeval import load_run

    checkpoint = tmp_path / "checkpoint.json"
    done = subprocess.run([sys.executable, "-c", _TERMINATED, name, str(checkpoint), "default"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == -getattr(signal, name), done.stderr  # ended by the signal: exit status 128 + its number
    assert done.stdout == ""
    assert done.stderr.endswith(f"cogeval: {name}: the run stopped; what finished is in its checkpoint, if it had one\n")
    saved = load_run(checkpoint)
    assert sorted(r.case.input for r in saved.results) == ["q0", "q1", "q2"] and saved.status == "interrupted"


def test_a_program_that_handles_sigterm_itself_gets_the_interrupted_run(tmp_path):
    done = subprocess.run([sys.executable, "-c", _TERMINATED, "SIGTERM", str(tmp_path / "c.json"), "own handler"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "interrupted 3\n"), done.stderr
