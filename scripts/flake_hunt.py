"""Run the conformance suites N times (alternately serial and with -n 2) and report every check whose outcome
differs between runs.

    .venv/bin/python scripts/flake_hunt.py --runs 20 [-- extra pytest args]

Each run is the runs room's (``runs.run``): the command a user types, in a process of its own from the repository
root, its outcomes read from its JUnit by the gate's reader. Exit status 0 when every check had the same outcome in
every run, 1 when one did not.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from nylorun_a2a_kit.fixtures import runs

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 1800


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    seen: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(args.runs):
            mode = [] if run % 2 == 0 else ["-n", "2"]
            where = Path(scratch) / f"run-{run}"
            done = runs.run([*mode, *args.pytest_args], where, cwd=ROOT, timeout_s=RUN_TIMEOUT_S, cold=True)
            for test, outcome in done.outcomes.items():
                seen[test][outcome].append(run)
            label = "serial" if not mode else "-n 2"
            print(
                f"run {run + 1}/{args.runs} ({label}): exit {done.returncode}, {len(done.outcomes)} checks, "
                f"{done.seconds:.1f} s",
                flush=True,
            )
    flaky = {test: dict(by) for test, by in seen.items() if len(by) > 1 or sum(map(len, by.values())) != args.runs}
    for test, by in sorted(flaky.items()):
        detail = "; ".join(f"{outcome} in runs {[r + 1 for r in which]}" for outcome, which in sorted(by.items()))
        print(f"FLAKY {test}: {detail}")
    print(f"{len(seen)} checks, {args.runs} runs, {len(flaky)} with differing outcomes")
    return 1 if flaky else 0


if __name__ == "__main__":
    sys.exit(main())
