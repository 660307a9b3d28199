"""Suite speed: the full conformance run against the embedded reference agent, serial and with ``-n 2``.

Each run is ``.venv/bin/pytest -q -p no:cacheprovider --durations=10 --junitxml=<file> [-n 2]`` (plus
``--a2a-summary-dir`` into a temporary directory, so the shared ``reports/out`` is left alone) in a subprocess
from the repository root (testpaths: ``suites``; no --target-url, so each worker starts the embedded agent).
Reported: cases (passed / skipped / xfailed / failed), wall time, cases per second, and the ten slowest tests
from the JUnit times (setup + call + teardown) with the lines of each test that wait for something real (a
scaled retry clock, a slow scenario, a2aWaitMs, a "stays" window …), found by reading the test's source.

The goal reported against: ≥ 500 cases in ≤ 60 s with ``-n 2``.

    .venv/bin/python -m benchmarks.suite_speed [--quick]
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from benchmarks import common

REPO = common.REPO
PYTEST = common.PYTHON.parent / "pytest"
QUICK_FILES = ("suites/test_card.py", "suites/test_versioning.py")
GOAL_CASES, GOAL_SECONDS = 500, 60.0
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


@dataclass
class Case:
    nodeid: str
    file: str
    name: str
    seconds: float
    outcome: str


@dataclass
class Run:
    label: str
    command: list[str]
    wall_s: float
    returncode: int
    cases: list[Case] = field(default_factory=list)
    summary: str = ""

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome)


def pytest_run(label: str, workdir: Path) -> tuple[list[str], Path]:
    """The command of a run named ``label``, which writes its JUnit and its summary into ``workdir`` (not the
    shared reports/out); and where its JUnit goes."""
    junit = workdir / f"{label}.xml"
    command = [str(PYTEST), "-q", "-p", "no:cacheprovider", "--durations=10", f"--junitxml={junit}"]
    return [*command, f"--a2a-summary-dir={workdir / label}"], junit


def logged_to(out: IO[bytes]) -> dict[str, Any]:
    """How a run's process is started: from the repository, unbuffered, all its output into ``out``."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return {"cwd": REPO, "stdout": out, "stderr": subprocess.STDOUT, "stdin": subprocess.DEVNULL, "env": environment}


def run_suite(label: str, workers: int | None, workdir: Path, files: tuple[str, ...] = ()) -> Run:
    command, junit = pytest_run(label, workdir)
    if workers:
        command += ["-n", str(workers)]
    command += list(files)
    log = workdir / f"{label}.log"
    started = time.perf_counter()
    with open(log, "wb") as out:
        process = subprocess.run(command, timeout=1800, **logged_to(out))
    wall = time.perf_counter() - started
    text = log.read_text(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    run = Run(label, command, wall, process.returncode, summary=lines[-1] if lines else "")
    run.cases = parse_junit(junit)
    return run


def parse_junit(path: Path) -> list[Case]:
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        module = classname.split(".")
        file = "/".join(module[:2]) + ".py" if len(module) >= 2 else classname
        outcome = "passed"
        for child in case:
            if child.tag == "skipped":
                outcome = "xfailed" if "xfail" in (child.get("type", "") + child.get("message", "")) else "skipped"
            elif child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
        cases.append(Case(f"{file}::{name}", file, name, float(case.get("time", 0) or 0), outcome))
    return cases


def waits_of(case: Case) -> list[str]:
    """The lines of the test (and the helpers it names from its own module) that wait on something real."""
    path = REPO / case.file
    if not path.exists():
        return []
    source = path.read_text()
    tree = ast.parse(source)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    base = case.name.split("[", 1)[0]
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
                    lines.append((rank, number, f"{case.file}:{number} [{why}] {line[:110]}"))
                    break
        for call in ast.walk(node):  # helpers of the same module the test calls, and its fixtures
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                queue.append(call.func.id)
        queue += [a.arg for a in node.args.args]
    return [text for _, _, text in sorted(set(lines))]


def report(run: Run) -> list[str]:
    total = len(run.cases)
    out = [
        f"{run.label}: {total} cases ({run.count('passed')} passed, {run.count('skipped')} skipped, "
        f"{run.count('xfailed')} xfailed, {run.count('failed') + run.count('error')} failed) in "
        f"{run.wall_s:.1f} s wall = {total / run.wall_s:.2f} cases/s; pytest exit {run.returncode}",
        f"  pytest: {run.summary}",
        f"  command: {' '.join(run.command)}",
        f"  sum of case times {sum(c.seconds for c in run.cases):.1f} s; ten slowest (JUnit time):",
    ]
    for case in sorted(run.cases, key=lambda c: -c.seconds)[:10]:
        out.append(f"    {case.seconds:6.2f} s  {case.nodeid}  [{case.outcome}]")
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
        started = time.perf_counter()
        collect = subprocess.run(
            [str(PYTEST), "-q", "-p", "no:cacheprovider", "--collect-only", f"--a2a-summary-dir={tmp}/collect", *files],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        collect_s = time.perf_counter() - started
        collected = [line for line in collect.stdout.splitlines() if line.strip()][-1:]
        print(f"\ncollection alone: {collect_s:.1f} s ({collected[0] if collected else '?'})")
        runs = []
        for label, workers in (("serial", None), ("n2", 2)):
            if args.only and args.only != label:
                continue
            run = run_suite(label, workers, Path(tmp), files)
            runs.append(run)
            print()
            print("\n".join(report(run)))
    parallel = next((r for r in runs if r.label == "n2"), None)
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
