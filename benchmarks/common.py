"""Shared helpers of the benchmarks: server processes on free loopback ports, requests, figures and tables.

Every server runs in its own process on 127.0.0.1 (port 0: the server picks a free one) with its output in a
log file (never a pipe, which a chatty server could fill and then block on), and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
CONSOLE_SCRIPT = PYTHON.parent / "nylorun-reference-agent"
KEY = "kit-key"  # the reference agent's default key: any subject, sessions:own
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0


def reference_headers(subject: str = "bench") -> dict[str, str]:
    """Everything the reference agent wants on a JSON-RPC request (README: auth, subject, scopes, version)."""
    return {
        "Authorization": f"Bearer {KEY}",
        "Nylorun-Subject": subject,
        "Nylorun-Scopes": "sessions:own",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
    }


PLAIN_HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


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
    with open(log, "wb") as out:
        process = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        base = _wait_ready(process, log, ready)
        yield Server(name, base, endpoint(base), process, log)
    finally:
        stop(process)


def _wait_ready(process: subprocess.Popen, log: Path, ready: Callable[[str], str | None]) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        for line in text.splitlines():
            base = ready(line)
            if base:
                return base
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}: {text[-2000:]!r}")
        time.sleep(0.05)
    raise RuntimeError(f"{process.args[0]} did not start within {START_TIMEOUT_S} s: {log.read_text()[-2000:]!r}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


def reference_agent(workdir: Path, *args: str, db: Path | None = None, profile: Path | None = None):
    """The reference agent as users run it (``nylorun-reference-agent --port 0 --db F``), optionally under cProfile."""
    db = db or workdir / "reference-agent.sqlite3"
    if profile is None:
        command = [str(CONSOLE_SCRIPT)]
    else:
        command = [str(PYTHON), "-m", "cProfile", "-o", str(profile), "-m", "nylorun_a2a_kit.reference_agent"]
    command += ["--host", "127.0.0.1", "--port", "0", "--db", str(db), *args]
    prefix = "reference agent listening on "
    return server_process(
        "reference-agent",
        command,
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix) else None,
        lambda base: f"{base}/v1/a2a/agents/support",
        workdir,
    )


def sdk_peer(workdir: Path):
    """The a2a-sdk 1.3 peer (``python -m peers.python.agent --port 0``); its endpoint is the URL it prints."""
    prefix = "listening "
    return server_process(
        "sdk-peer",
        [str(PYTHON), "-m", "peers.python.agent", "--port", "0"],
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix + "http") else None,
        lambda base: base,
        workdir,
    )


PLAIN_PEERS = {
    "python-plain": [str(PYTHON), "-m", "peers.python.agent", "--plain", "--port", "0"],
    "js-plain": ["node", str(REPO / "peers" / "js" / "agent.mjs"), "--plain", "--port", "0"],
}


def plain_peer(workdir: Path, name: str):
    """A plain SDK peer (``--plain``: no scenario contract, JSON-RPC at ``/a2a``); its endpoint is what it prints."""
    prefix = "listening "
    return server_process(
        name,
        PLAIN_PEERS[name],
        lambda line: line[len(prefix) :].strip() if line.startswith(prefix + "http") else None,
        lambda base: base,
        workdir,
    )


@contextlib.contextmanager
def workdir(prefix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)


def rss_kib(pid: int) -> int | None:
    """VmRSS of a process in KiB (from /proc/<pid>/status), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def percentile(ordered: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of an already sorted sequence, nearest-rank; NaN when empty."""
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.1f}"  # NaN → "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: bool = True) -> str:
    """A plain text table; numbers are right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if right and i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )

    out = [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells[1:]]
    return "\n".join(out)


def machine() -> dict[str, str]:
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def machine_line() -> str:
    m = machine()
    return f"{m['date']}; nproc {m['nproc']}; CPU {m['cpu']}; Python {m['python']}; {m['platform']}"


def reproduce(module: str, argv: Sequence[str]) -> str:
    """The command that reproduces a run, from the repository root."""
    return shlex.join([".venv/bin/python", "-m", module, *argv])


def rpc(method: str, params: Any, request_id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


def echo_message(message_id: str, context_id: str | None = None, text: str = "benchmark payload") -> dict[str, Any]:
    """The quick ``scenario echo`` workload: the scenario text part and one text part to echo."""
    message: dict[str, Any] = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": "scenario echo"}, {"text": text}],
    }
    if context_id:
        message["contextId"] = context_id
    return message


class Deadline:
    """A wall-clock bound: ``left()`` seconds remain; ``passed`` once it ran out."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    @property
    def passed(self) -> bool:
        return self.left() <= 0


class CpuWatch:
    """CPU the rest of the machine used while ours ran: all busy time (/proc/stat) less that of ``pids``.

    ``other_cores()`` is that foreign use, in cores (1.0 = one core busy the whole time) since ``start()``:
    near 0 when the machine was ours alone; a figure measured while it is large is disturbed.
    """

    def __init__(self, pids: Sequence[int]):
        self.pids = list(pids)
        self.hz = os.sysconf("SC_CLK_TCK")
        self.start()

    def start(self) -> None:
        self._t0, self._busy0, self._ours0 = time.monotonic(), _busy_jiffies(), self._ours()

    def _ours(self) -> int:
        return sum(_process_jiffies(pid) for pid in self.pids)

    def other_cores(self) -> float:
        elapsed = time.monotonic() - self._t0
        if elapsed <= 0:
            return 0.0
        foreign = (_busy_jiffies() - self._busy0) - (self._ours() - self._ours0)
        return max(0.0, foreign / self.hz / elapsed)


def _busy_jiffies() -> int:
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal (guest is inside user)


def _process_jiffies(pid: int) -> int:
    """utime + stime of a process and of its children it waited for."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
