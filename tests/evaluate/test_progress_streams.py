"""A progress bar never fails a run (issue 24 item 3): a broken, closed or full stderr stops the bar only.

Each run is a fresh process whose stderr is broken in one way; it prints how many cases its run kept.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent("""
    import sys, time, warnings
    if sys.argv[1] == "closed":
        sys.stderr.close()
    from cogeval import EvalSuite, exact_match
    def target(text):
        time.sleep(0.002)
        return text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = EvalSuite([{"input": f"q{i}", "expected": f"q{i}"} for i in range(300)], target,
                           metrics=[exact_match()], progress=True).run()
    said = [str(w.message) for w in caught if "progress bar" in str(w.message)]
    print(len(result.run.results), result.run.stats.errors, said[0].split(" (")[0] if said else "no warning")
""")


@pytest.mark.parametrize("stream", ["broken pipe", "closed", "full"])
def test_the_run_keeps_every_case_whatever_happens_to_stderr(stream):
    if stream == "full":
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-c", _PROGRAM, stream], stdout=subprocess.PIPE, stderr=full,
                                  text=True, timeout=120)
    else:
        child = subprocess.Popen([sys.executable, "-c", _PROGRAM, stream], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        child.stderr.close()  # `python eval.py 2>&1 | head -c 0`: whatever the bar writes meets a broken pipe
        out, _ = child.communicate(timeout=120)
        done = subprocess.CompletedProcess(child.args, child.returncode, out)
    assert done.returncode == 0
    assert done.stdout.split()[:2] == ["300", "0"]
    assert done.stdout.strip().endswith("the progress bar stopped"), done.stdout


def test_a_working_stream_shows_the_bar_to_the_end():
    done = subprocess.run([sys.executable, "-c", _PROGRAM, "fine"], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["300", "0", "no", "warning"]
    assert "300/300" in done.stderr
