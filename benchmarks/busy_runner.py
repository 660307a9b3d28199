"""The same verdicts on a busy runner: the suites with ``-n 2`` while a CPU hog runs on every core, check by check
against a quiet run's outcomes.

A quiet run first; then ``--runs`` runs (20 by default), one after the other, each while every core is loaded:
Debian's ``stress-ng --cpu <cores>`` when it is installed (``--hog stress-ng``), else one Python busy loop per core
(``--hog python``, the same load). Reported per run: wall time, return code, cases by outcome, errors (a teardown
error among them), and every check whose outcome differs from the quiet run's. Exit 1 when any run differs.

    .venv/bin/python -m benchmarks.busy_runner [--runs 20] [--hog stress-ng|python] [-n 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import common, timed
from tests.busy import HOGS, available, cores, cpu_hogs


def differences(quiet: dict[str, str], loaded: dict[str, str]) -> list[str]:
    """Each check whose outcome differs between the two runs: ``id: quiet → loaded``."""
    return [
        f"{test}: {quiet.get(test, 'absent')} → {loaded.get(test, 'absent')}"
        for test in sorted(set(quiet) | set(loaded))
        if quiet.get(test) != loaded.get(test)
    ]


def counts(run: timed.Timed) -> str:
    tags = ("passed", "skipped", "failure", "error")
    return " / ".join(f"{run.count(tag)} {tag}" for tag in tags)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="loaded runs, one after the other (default 20)")
    parser.add_argument("--hog", choices=HOGS, default="stress-ng" if available("stress-ng") else "python")
    parser.add_argument("-n", dest="workers", default="2", help="the suites' xdist workers (default 2)")
    options = parser.parse_args(argv)
    if not available(options.hog):
        parser.error("stress-ng is not installed (apt-get install stress-ng), or give --hog python")
    args = ["-n", options.workers]
    print(f"{common.machine_line()}; load: {options.hog} on {cores()} cores; the suites with -n {options.workers}")
    with common.workdir("busy-runner-") as where:
        quiet = timed.run("quiet", args, Path(where))
        print(f"quiet   {quiet.wall_s:7.1f} s  exit {quiet.returncode}  {counts(quiet)}", flush=True)
        differing = 0
        for number in range(1, options.runs + 1):
            with cpu_hogs(options.hog):
                loaded = timed.run(f"loaded-{number}", args, Path(where))
            changed = differences(quiet.outcomes.outcomes, loaded.outcomes.outcomes)
            differing += bool(changed) or loaded.returncode != quiet.returncode
            same = "same outcomes" if not changed else f"{len(changed)} differ"
            print(
                f"loaded {number:2d} {loaded.wall_s:6.1f} s  exit {loaded.returncode}  {counts(loaded)}  {same}",
                flush=True,
            )
            for line in changed[:20]:
                print(f"    {line}")
    print(f"{options.runs - differing} of {options.runs} loaded runs gave the quiet run's outcomes and exit code")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
