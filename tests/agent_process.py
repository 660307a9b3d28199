"""Agents as their users run them: a command in its own process that prints the URL it listens on."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from nylorun_a2a_kit.fixtures.gate.processes import listening_process

CONSOLE_SCRIPT = Path(sys.executable).parent / "nylorun-reference-agent"


@contextlib.contextmanager
def agent_process(db: Path, *args: str) -> Iterator[str]:
    """Start ``nylorun-reference-agent --port 0`` on ``db``; yield its base URL; stop it at the end."""
    command = [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), *args]
    with listening_process(command, "reference agent listening on ") as url:
        yield url


__all__ = ["CONSOLE_SCRIPT", "agent_process", "listening_process"]
