"""Suite speed: the full conformance run against the embedded reference agent, serial and with ``-n 2``.

Each run is the runs room's command (``python -m pytest -p no:cacheprovider -q --junitxml=<file> --pyargs
nylorun_a2a_kit.suites --durations=10 [-n 2]``, plus ``--a2a-summary-dir`` into a temporary directory, so the
shared ``reports/out`` is left alone) in a process of its own from the repository root, timed as a user's (no
--target-url, so each worker starts the embedded agent). Reported: cases (passed / skipped / xfailed / failed),
wall time, cases per second, and the ten slowest tests from the JUnit times (setup + call + teardown) with the
lines of each test that wait for something real (a scaled retry clock, a slow scenario, a2aWaitMs, a "stays"
window …), found by reading the test's source.

The goal reported against: ≥ 500 cases in ≤ 60 s with ``-n 2``.

    .venv/bin/python -m benchmarks.suite_speed [--quick]
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
import sys
import tempfile
from pathlib import Path

from benchmarks import common, timed
from nylorun_a2a_kit.fixtures.gate.fold import JunitCase

REPO = common.REPO
QUICK_FILES = ("suites/test_card.py", "suites/test_versioning.py")
GOAL_CASES, GOAL_SECONDS = 500, 60.0
RUN_TIMEOUT_S = 1800
# What a line of a test waits on, when it waits on something real.
WAITS = (
    (re.compile(r"stays\("), "a 'stays' window (polls until a deadline to prove nothing changes)"),
    (re.compile(r"quiet_for\("), "a quiet window on the push receiver"),
    (re.compile(r"scenario\(\s*\"slow\"|scenario slow|\"slow\""), "a slow scenario / a slow receiver answer"),
    (
        re.compile(r"scaled\(|time_scale|SCHEDULE|Retry-After|\"503|\"500|\"close\"|down_port"),
        "the push retry clock",
    ),
    (re.compile(r"wait_ms|WAIT_MS|a2aWaitMs|blocking"), "a2aWaitMs (the longest blocking SendMessage)"),
    (re.compile(r"wait_for\(|_until|settle\("), "waits for a task state or a delivery"),
    (re.compile(r"_uncertain\(|\"uncertain\"|\"plan\"|rate.limit"), "a timed scenario or a rate-limit window"),
    (re.compile(r"hypothesis|@given|settings\("), "property-based examples (hypothesis)"),
    (re.compile(r"time\.sleep\("), "a sleep"),
)


def waits_of(case: JunitCase) -> list[str]:
    """The lines of the test (and the helpers it names from its own module) that wait on something real."""
    file, _, test = timed.check_id(case).partition("::")
    path = REPO / file
    if not path.exists():
        return []
    source = path.read_text()
    tree = ast.parse(source)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    base = test.split("[", 1)[0]
    seen, queue, lines = set(), [base], []
    lines_of = source.splitlines()
    while queue and len(seen) < 8:
        name = queue.pop(0)
        if name in seen or name not in functions:
            continue
        seen.add(name)
        node = functions[name]
        decorators = [d.lineno for d in node.decorator_list]
        start = min([node.lineno, *decorators])
        for number in range(start, (node.end_lineno or node.lineno) + 1):
            line = lines_of[number - 1].strip()
            for rank, (pattern, why) in enumerate(WAITS):
                if pattern.search(line) and not line.startswith(("#", '"""', "pytest.fail", 'f"')):
                    lines.append((rank, number, f"{file}:{number} [{why}] {line[:110]}"))
                    break
        for call in ast.walk(node):  # helpers of the same module the test calls, and its fixtures
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                queue.append(call.func.id)
        queue += [a.arg for a in node.args.args]
    return [text for _, _, text in sorted(set(lines))]


def report(run: timed.Timed) -> list[str]:
    total = len(run.cases)
    out = [
        f"{run.label}: {total} cases ({run.count('passed')} passed, {run.count('skipped')} skipped, "
        f"{run.count('xfailed')} xfailed, {len(run.failed())} failed) in "
        f"{run.wall_s:.1f} s wall = {total / run.wall_s:.2f} cases/s; pytest exit {run.returncode}",
        f"  pytest: {run.closing()}",
        f"  command: {shlex.join(run.command)}",
        f"  sum of case times {sum(map(timed.seconds, run.cases)):.1f} s; ten slowest (JUnit time):",
    ]
    for case in run.slowest(10):
        out.append(f"    {timed.seconds(case):6.2f} s  {timed.check_id(case)}  [{timed.outcome(case)}]")
        out += [f"             {line}" for line in waits_of(case)[:4]]
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m benchmarks.suite_speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_FILES)}")
    p.add_argument("--only", choices=("serial", "n2"), help="run only one of the two")
    args = p.parse_args(argv)
    files = QUICK_FILES if args.quick else ()
    common.print_heading("benchmarks.suite_speed", argv)
    with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
        collect = timed.run("collect", ["--collect-only", *files], Path(tmp), timeout_s=600)
        collected = [line for line in collect.outcomes.output.splitlines() if line.strip()][-1:]
        print(f"\ncollection alone: {collect.wall_s:.1f} s ({collected[0] if collected else '?'})")
        done = []
        for label, workers in (("serial", None), ("n2", 2)):
            if args.only and args.only != label:
                continue
            workers_args = ["-n", str(workers)] if workers else []
            run = timed.run(label, ["--durations=10", *workers_args, *files], Path(tmp), timeout_s=RUN_TIMEOUT_S)
            done.append(run)
            print()
            print("\n".join(report(run)))
    parallel = next((r for r in done if r.label == "n2"), None)
    if parallel is not None and parallel.cases:
        rate = len(parallel.cases) / parallel.wall_s
        print(
            f"\ngoal ≥ {GOAL_CASES} cases in ≤ {GOAL_SECONDS:.0f} s with -n 2: {len(parallel.cases)} cases in "
            f"{parallel.wall_s:.1f} s; at {rate:.2f} cases/s, {GOAL_CASES} cases would take {GOAL_CASES / rate:.0f} s "
            f"(the goal needs {GOAL_CASES / GOAL_SECONDS:.2f} cases/s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
