"""Start-up time: ``import cogeval`` and ``cogeval --help``, each against a floor, in fresh subprocesses.

Run by hand (not in CI):  .venv/bin/python benchmarks/bench_import.py [--repeat R]

Two ratios, each the fastest of ``--repeat`` fresh interpreters (the minimum is the most
stable figure on a loaded machine), measured alternately so load drifts hit both sides:

- ``import cogeval`` against ``import pandas, numpy, pydantic`` (what cogeval cannot avoid
  loading); goal: within 1.3x;
- ``python -m cogeval.cli --help`` against ``python -c pass`` (the bare interpreter).

Bytecode is cached for every child in a temporary ``PYTHONPYCACHEPREFIX`` (warmed once before
timing), so neither side pays for compiling sources, whatever ``PYTHONDONTWRITEBYTECODE`` says,
and the working tree gets no ``__pycache__``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "import pandas, numpy, pydantic": ["-c", "import pandas, numpy, pydantic"],
    "import cogeval": ["-c", "import cogeval"],
    "python -c pass": ["-c", "pass"],
    "python -m cogeval.cli --help": ["-m", "cogeval.cli", "--help"],
}
RATIOS = [("import cogeval", "import pandas, numpy, pydantic"), ("python -m cogeval.cli --help", "python -c pass")]


def run(arguments: list[str], env: dict[str, str]) -> float:
    """Wall time of one fresh interpreter running ``arguments``, in seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *arguments], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": cache}
        for arguments in COMMANDS.values():  # warm the bytecode cache and the OS file cache
            run(arguments, env)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(args.repeat):
            for name, arguments in COMMANDS.items():
                times[name].append(run(arguments, env))
    best = {name: min(values) for name, values in times.items()}
    print(f"Python {sys.version.split()[0]}, best of {args.repeat} fresh interpreters each")
    for name, value in best.items():
        print(f"  {name:<32} {value * 1000:7.1f} ms")
    for name, floor in RATIOS:
        print(f"  {name} / {floor}: {best[name] / best[floor]:.2f}x")


if __name__ == "__main__":
    main()
