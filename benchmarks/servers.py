"""The servers the benchmarks measure, each in its own process on a free loopback port.

Every server runs on 127.0.0.1 (port 0: the server picks a free one) with its output in a log file (never a
pipe, which a chatty server could fill and then block on), and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import PYTHON, REPO

CONSOLE_SCRIPT = PYTHON.parent / "nylorun-reference-agent"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
AGENT_ID = "support"  # the reference agent's one Agent
LISTENING = "reference agent listening on "  # the reference agent's start-up line, before its base URL


@dataclass
class Server:
    """A server process: ``base`` is what it printed, ``url`` its JSON-RPC endpoint."""

    name: str
    base: str
    url: str
    process: subprocess.Popen
    log: Path
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


@contextlib.contextmanager
def server_process(
    name: str,
    command: Sequence[str],
    ready: Callable[[str], str | None],
    endpoint: Callable[[str], str],
    workdir: Path,
) -> Iterator[Server]:
    """Start ``command``; ``ready(line)`` returns the base URL from the line that announces it."""
    log = workdir / f"{name}.log"
    process = spawn(command, log)
    try:
        base = wait_ready(process, log, ready, what=str(process.args[0]))
        yield Server(name, base, endpoint(base), process, log)
    finally:
        stop(process)


def spawn(command: Sequence[str], log: Path, *, append: bool = False) -> subprocess.Popen:
    """``command`` from the repository root, its output (unbuffered) into ``log``, no standard input."""
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
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


def announced(prefix: str) -> Callable[[str], str | None]:
    """``ready`` for a server that prints ``prefix`` and then its base URL."""
    return lambda line: line[len(prefix) :].strip() if line.startswith(prefix) else None


def reference_agent(workdir: Path, *args: str, db: Path | None = None, profile: Path | None = None):
    """The reference agent as users run it (``nylorun-reference-agent --port 0 --db F``), optionally under cProfile."""
    db = db or workdir / "reference-agent.sqlite3"
    if profile is None:
        command = [str(CONSOLE_SCRIPT)]
    else:
        command = [str(PYTHON), "-m", "cProfile", "-o", str(profile), "-m", "nylorun_a2a_kit.reference_agent"]
    command += ["--host", "127.0.0.1", "--port", "0", "--db", str(db), *args]
    return server_process("reference-agent", command, announced(LISTENING), agent_url, workdir)


def agent_url(base: str) -> str:
    """The reference agent's JSON-RPC endpoint under its base URL."""
    return f"{base}/v1/a2a/agents/{AGENT_ID}"


PEERS = {
    "sdk-peer": [str(PYTHON), "-m", "peers.python.agent", "--port", "0"],
    "python-plain": [str(PYTHON), "-m", "peers.python.agent", "--plain", "--port", "0"],
    "js-plain": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--plain", "--port", "0"],
}
PLAIN_PEERS = ("python-plain", "js-plain")


def peer(workdir: Path, name: str = "sdk-peer"):
    """An SDK peer (the a2a-sdk 1.3 one by default; the plain ones have no scenario contract and serve JSON-RPC
    at ``/a2a``); its endpoint is the URL it prints."""
    prefix = "listening "
    return server_process(
        name,
        PEERS[name],
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix + "http") else None,
        lambda base: base,
        workdir,
    )


def sdk_peer(workdir: Path):
    return peer(workdir)


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
