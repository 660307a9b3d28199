"""Agents as their users run them: a command in its own process that prints the URL it listens on."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

CONSOLE_SCRIPT = Path(sys.executable).parent / "nylorun-reference-agent"
START_TIMEOUT_S = 30.0


@contextlib.contextmanager
def agent_process(db: Path, *args: str) -> Iterator[str]:
    """Start ``nylorun-reference-agent --port 0`` on ``db``; yield its base URL; stop it at the end."""
    command = [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), *args]
    with listening_process(command, "reference agent listening on ") as url:
        yield url


@contextlib.contextmanager
def listening_process(command: list[str], announces: str, cwd: Path | None = None) -> Iterator[str]:
    """Start ``command``; yield the URL on the first output line that begins with ``announces``; stop it."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        url = _announced_url(process, announces)
        # Keep reading what it prints: a full pipe would block the process at its next log line (a traceback
        # of a request nested 100,000 deep fills one), and every request it serves would hang.
        threading.Thread(target=_drain, args=(process,), daemon=True).start()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _announced_url(process: subprocess.Popen, announces: str) -> str:
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT_S
    seen = []
    while time.monotonic() < deadline:
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            break
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(announces):
            return line[len(announces) :].strip()
    raise RuntimeError(f"{process.args[0]} did not start: {''.join(seen)!r}")


def _drain(process: subprocess.Popen) -> None:
    with contextlib.suppress(OSError, ValueError):  # ValueError: the pipe was closed as the process stopped
        for _ in process.stdout:
            pass
