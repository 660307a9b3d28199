"""Agents as their users run them: a command in its own process that prints the URL it listens on.

``agent_process`` starts ``nylorun-reference-agent`` for a test; ``AgentProcess`` is one that can be killed and
started again on the same database and log (the crash harness, ``tests/crash``); ``reference_headers`` and ``rpc``
are what a plain JSON-RPC request to it carries. The benchmarks start their agents with these too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from nylorun_a2a_kit.fixtures.gate.processes import Lingered, listening_process

REPO = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = Path(sys.executable).parent / "nylorun-reference-agent"
LISTENING = "reference agent listening on "  # the reference agent's start-up line, before its base URL
AGENT_ID = "support"  # the reference agent's Agent the kit checks
KEY = "kit-key"  # the reference agent's default key: any subject, sessions:own
TERMINAL = frozenset({"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"})
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0


@contextlib.contextmanager
def agent_process(db: Path, *args: str) -> Iterator[str]:
    """Start ``nylorun-reference-agent --port 0`` on ``db``; yield its base URL; stop it at the end."""
    command = [str(CONSOLE_SCRIPT), "--port", "0", "--db", str(db), *args]
    with listening_process(command, LISTENING) as url:
        yield url


def agent_url(base: str) -> str:
    """The reference agent's JSON-RPC endpoint under its base URL."""
    return f"{base}/v1/a2a/agents/{AGENT_ID}"


def reference_headers(subject: str = "bench") -> dict[str, str]:
    """Everything the reference agent wants on a JSON-RPC request (README: auth, subject, scopes, version)."""
    return {
        "Authorization": f"Bearer {KEY}",
        "Nylorun-Subject": subject,
        "Nylorun-Scopes": "sessions:own",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
    }


def rpc(method: str, params: Any, request_id: Any = 1) -> bytes:
    """A JSON-RPC request's body."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


# ---- a process whose output goes to a log file, started again at will --------------------------------------------


def spawn(command: Sequence[str], log: Path, *, append: bool = False) -> subprocess.Popen:
    """``command`` from the repository root, its output (unbuffered) into ``log`` (never a pipe, which a chatty
    process could fill and then block on), no standard input."""
    with open(log, "ab" if append else "wb") as out:
        return subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def wait_ready(
    process: subprocess.Popen,
    log: Path,
    ready: Callable[[str], str | None],
    *,
    what: str,
    offset: int = 0,
    poll_s: float = 0.05,
) -> str:
    """Poll ``log`` (from byte ``offset``) until ``ready(line)`` returns the base URL; raise once the process exits
    or START_TIMEOUT_S passes."""
    deadline = time.monotonic() + START_TIMEOUT_S
    text = ""
    while time.monotonic() < deadline:
        text = _read_from(log, offset)
        for line in text.splitlines():
            base = ready(line)
            if base:
                return base
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}: {text[-2000:]!r}")
        time.sleep(poll_s)
    raise RuntimeError(f"{what} did not start within {START_TIMEOUT_S} s: {text[-2000:]!r}")


def _read_from(log: Path, offset: int) -> str:
    if not log.exists():
        return ""
    with open(log, "rb") as handle:
        handle.seek(offset)
        return handle.read().decode(errors="replace")


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, and wait until it is gone; one still running STOP_TIMEOUT_S later is killed and raises Lingered."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)
        raise Lingered(f"{process.args[0]} (pid {process.pid}) did not stop within {STOP_TIMEOUT_S:.0f} s") from None


def announced(prefix: str) -> Callable[[str], str | None]:
    """``ready`` for a process that prints ``prefix`` and then its base URL."""
    return lambda line: line[len(prefix) :].strip() if line.startswith(prefix) else None


class AgentProcess:
    """A reference agent process that can be killed and started again on the same database and log.

    Its output is appended to ``log`` (never a pipe); ``launcher`` is the command before the agent's own
    arguments (default: ``python -m nylorun_a2a_kit.reference_agent``).
    """

    def __init__(self, db: Path, args: Iterable[str], log: Path, *, launcher: Sequence[str] | None = None):
        self.db, self.args, self.log = db, list(args), log
        self.launcher = list(launcher or [sys.executable, "-m", "nylorun_a2a_kit.reference_agent"])
        self.process: subprocess.Popen | None = None
        self.base = ""
        self.started_at = self.listening_at = 0.0

    def command(self) -> list[str]:
        return [*self.launcher, "--host", "127.0.0.1", "--port", "0", "--db", str(self.db), *self.args]

    def start(self) -> str:
        """Start it; the base URL it announced once it listens."""
        offset = self.log.stat().st_size if self.log.exists() else 0
        self.started_at = time.time()
        self.process = spawn(self.command(), self.log, append=True)
        try:
            self.base = wait_ready(
                self.process, self.log, announced(LISTENING), what="the reference agent", offset=offset, poll_s=0.02
            )
        except RuntimeError:
            self.stop()
            raise
        self.listening_at = time.time()
        return self.base

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> float:
        """SIGKILL: no shutdown code runs. The wall-clock time of the kill."""
        assert self.process is not None
        killed_at = time.time()
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT_S)
        return killed_at

    def wait_exit(self, timeout_s: float) -> int | None:
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


__all__ = [
    "AGENT_ID",
    "CONSOLE_SCRIPT",
    "KEY",
    "LISTENING",
    "TERMINAL",
    "AgentProcess",
    "agent_process",
    "agent_url",
    "announced",
    "listening_process",
    "reference_headers",
    "rpc",
    "spawn",
    "stop",
    "wait_ready",
]
