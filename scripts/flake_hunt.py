"""Run the conformance suites N times (alternately serial and with -n 2) and report every check whose outcome
differs between runs.

    .venv/bin/python scripts/flake_hunt.py --runs 20 [-- extra pytest args]

Exit status 0 when every check had the same outcome in every run, 1 when one did not.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def outcomes(junit: Path) -> dict[str, str]:
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
                break
        found[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    seen: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(args.runs):
            mode = [] if run % 2 == 0 else ["-n", "2"]
            junit = Path(scratch) / f"run-{run}.xml"
            started = time.monotonic()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"--junitxml={junit}",
                    f"--a2a-summary-dir={scratch}/summary",
                    *mode,
                    *args.pytest_args,
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            )
            found = outcomes(junit) if junit.exists() else {}
            for test, outcome in found.items():
                seen[test][outcome].append(run)
            label = "serial" if not mode else "-n 2"
            print(
                f"run {run + 1}/{args.runs} ({label}): exit {done.returncode}, {len(found)} checks, "
                f"{time.monotonic() - started:.1f} s",
                flush=True,
            )
    flaky = {test: dict(by) for test, by in seen.items() if len(by) > 1 or sum(map(len, by.values())) != args.runs}
    for test, by in sorted(flaky.items()):
        detail = "; ".join(f"{outcome} in runs {[r + 1 for r in runs]}" for outcome, runs in sorted(by.items()))
        print(f"FLAKY {test}: {detail}")
    print(f"{len(seen)} checks, {args.runs} runs, {len(flaky)} with differing outcomes")
    return 1 if flaky else 0


if __name__ == "__main__":
    sys.exit(main())
