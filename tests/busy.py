"""A busy runner: a CPU hog on every core, as a shared CI runner has beside a run (Debian's stress-ng when it is
installed, else one Python busy loop per core: the same load)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator

HOGS = ("python", "stress-ng")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def hog_command(kind: str, count: int) -> list[list[str]]:
    """The processes that load ``count`` cores: one stress-ng with ``count`` CPU workers, or ``count`` loops."""
    if kind == "stress-ng":
        return [["stress-ng", "--cpu", str(count), "--quiet"]]
    return [[sys.executable, "-c", "while True: pass"] for _ in range(count)]


def available(kind: str) -> bool:
    return kind == "python" or shutil.which("stress-ng") is not None


@contextlib.contextmanager
def cpu_hogs(kind: str = "python", count: int | None = None) -> Iterator[list[int]]:
    """Every core loaded while the block runs; the hogs' pids. They run at the run's own priority, as another job's
    processes on a shared runner do, and are killed, with what they started, when the block ends."""
    started = [
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        for command in hog_command(kind, count or cores())
    ]
    try:
        yield [process.pid for process in started]
    finally:
        for process in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
