"""The servers the benchmarks measure, each in its own process on a free loopback port.

Every server runs on 127.0.0.1 (port 0: the server picks a free one) with its output in a log file (never a
pipe, which a chatty server could fill and then block on), and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import PYTHON, REPO
from tests.agent_process import (  # noqa: F401 - AGENT_ID, AgentProcess, agent_url: the benchmarks' agents
    AGENT_ID,
    CONSOLE_SCRIPT,
    LISTENING,
    AgentProcess,
    agent_url,
    announced,
    spawn,
    stop,
    wait_ready,
)


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


def reference_agent(workdir: Path, *args: str, db: Path | None = None):
    """The reference agent as users run it (``nylorun-reference-agent --port 0 --db F``)."""
    db = db or workdir / "reference-agent.sqlite3"
    command = [str(CONSOLE_SCRIPT), "--host", "127.0.0.1", "--port", "0", "--db", str(db), *args]
    return server_process("reference-agent", command, announced(LISTENING), agent_url, workdir)


PEERS = {
    "python-plain": [str(PYTHON), "-m", "peers.python.agent", "--plain", "--port", "0"],
    "js-plain": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--plain", "--port", "0"],
}
PLAIN_PEERS = ("python-plain", "js-plain")


def peer(workdir: Path, name: str):
    """A plain SDK peer (no scenario contract, JSON-RPC at ``/a2a``); its endpoint is the URL it prints."""
    prefix = "listening "
    return server_process(
        name,
        PEERS[name],
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix + "http") else None,
        lambda base: base,
        workdir,
    )
