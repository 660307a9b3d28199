"""The reference agent as its users run it: the console script, in its own process."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

CONSOLE_SCRIPT = Path(sys.executable).parent / "nylorun-reference-agent"
START_TIMEOUT_S = 20.0


@contextlib.contextmanager
def agent_process(db: Path, *args: str) -> Iterator[str]:
    """Start ``nylorun-reference-agent --port 0`` on ``db``; yield its base URL; stop it at the end."""
    command = [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), *args]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        yield _read_base_url(process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _read_base_url(process: subprocess.Popen) -> str:
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
        if line.startswith("reference agent listening on "):
            return line.split(" on ", 1)[1].strip()
    raise RuntimeError(f"the reference agent did not start: {''.join(seen)!r}")
