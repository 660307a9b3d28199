"""A run of the suites as a user types it, timed: the runs room's command (or the gate's) in a process of its own.

The command is the runs room's (``runs.command.command``: what the gate and the kit's tests run too), or the
gate's own, started cold from the repository with the room's environment, so the wall time is the one a user
gets. Its outcomes are read with the room's reader (``runs.Outcomes.read``) and each case's time and tag with the
gate's JUnit reader (``fold.junit_cases``). A benchmark that does not time the command itself uses ``runs.run``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import REPO, CpuWatch
from nylorun_a2a_kit.fixtures import runs
from nylorun_a2a_kit.fixtures.gate import fold
from nylorun_a2a_kit.fixtures.requirements import check_ids

# pytest's closing line ("38 failed, 89 passed, 239 skipped in 469.12s (0:07:49)"), wherever the output puts it.
CLOSING = re.compile(r"^=*\s*(\d+ \w+(, )?)+ in [\d.]+s")
FAILED = ("failure", "error")


@dataclass
class Timed:
    """One timed run: its command, wall time and outcomes, each case (with its JUnit time and tag: passed, failure,
    error, skipped, xfailed), and the CPU the rest of the machine used meanwhile, in cores (when watched)."""

    label: str
    command: list[str]
    wall_s: float
    outcomes: runs.Outcomes
    cases: list[fold.JunitCase] = field(default_factory=list)
    other_cores: float = 0.0

    @property
    def returncode(self) -> int:
        return self.outcomes.returncode

    def count(self, *tags: str) -> int:
        return sum(1 for case in self.cases if case.tag in tags)

    def failed(self) -> list[fold.JunitCase]:
        return [case for case in self.cases if case.tag in FAILED]

    def slowest(self, count: int = 10) -> list[fold.JunitCase]:
        return sorted(self.cases, key=lambda case: -seconds(case))[:count]

    def closing(self) -> str:
        """pytest's closing line, as it printed it."""
        lines = [line for line in self.outcomes.output.splitlines() if CLOSING.match(line)]
        return lines[-1].strip("= ") if lines else "(no closing line)"


def outcome(case: fold.JunitCase) -> str:
    """A case's outcome: passed, failed, error, skipped or xfailed."""
    return "failed" if case.tag == "failure" else case.tag


def seconds(case: fold.JunitCase) -> float:
    """A case's JUnit time (setup + call + teardown)."""
    return float(case.time or 0)


def check_id(case: fold.JunitCase) -> str:
    """A case's check id, ``suites/<module>.py::<test>``."""
    return check_ids.canonical(case.test)


def spelt(label: str, args: Sequence[str], where: Path) -> list[str]:
    """The command of the run named ``label``: the runs room's, its JUnit and (unless ``args`` name a folder for
    it) its summary into ``where``."""
    if not any(a.startswith("--a2a-summary-dir") for a in args):
        args = [*args, f"--a2a-summary-dir={where / label}"]
    return runs.command.command(args, junit=where / f"{label}.xml")


def run(
    label: str,
    args: Sequence[str],
    where: Path,
    *,
    env: Mapping[str, str] | None = None,
    watch: Sequence[int] | None = None,
    timeout_s: float = 3600,
) -> Timed:
    """The suites with ``args``, in a process of their own, timed; their JUnit, output and summary go into ``where``
    under ``label``. ``watch``: pids (besides the run's) whose CPU is the run's own when counting the rest of the
    machine's. A run still going after ``timeout_s`` is killed (with what it started)."""
    command = spelt(label, args, where)
    return run_command(label, command, where / f"{label}.xml", where, env=env, watch=watch, timeout_s=timeout_s)


def run_command(
    label: str,
    command: Sequence[str],
    junit: Path,
    where: Path,
    *,
    env: Mapping[str, str] | None = None,
    watch: Sequence[int] | None = None,
    timeout_s: float = 3600,
) -> Timed:
    """``command``, a run of the suites that writes its JUnit to ``junit`` (the runs room's, or the gate's), timed as
    :func:`run` times one; its output goes to ``where`` under ``label``."""
    where.mkdir(parents=True, exist_ok=True)
    log = where / f"{label}.log"
    command = list(command)
    environment = runs.command.environment({"PYTHONUNBUFFERED": "1", **(env or {})})
    with open(log, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        cpu = CpuWatch([process.pid, *watch]) if watch is not None else None
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            returncode = -signal.SIGKILL
        wall = time.perf_counter() - started
        other = cpu.other_cores() if cpu is not None else 0.0
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what the run left behind, or the run itself past its time
        process.wait()
    output = log.read_text(encoding="utf-8", errors="replace")
    outcomes = runs.Outcomes.read(junit, returncode, output, wall)
    cases = fold.junit_cases(junit) if junit.exists() and junit.stat().st_size else []
    return Timed(label, command, wall, outcomes, cases, other)
