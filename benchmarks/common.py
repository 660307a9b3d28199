"""Shared helpers of the benchmarks: requests, the machine, figures and tables (servers.py starts the servers)."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nylorun_a2a_kit.fixtures.push.verify import new_secret  # noqa: F401 - the benchmarks sign with it
from tests.agent_process import KEY, TERMINAL, reference_headers, rpc  # noqa: F401 - requests to the reference agent

REPO = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)


@contextlib.contextmanager
def workdir(prefix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)


def rss_kib(pid: int) -> int | None:
    """VmRSS of a process in KiB (from /proc/<pid>/status), or None once it is gone."""
    try:
        return memory_kib(pid, "VmRSS").get("VmRSS")
    except OSError:
        return None


def memory_kib(pid: int, *names: str) -> dict[str, int]:
    """The ``names`` lines (VmRSS, VmHWM …) of /proc/<pid>/status, in KiB; OSError once the process is gone."""
    found = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in names:
                found[name] = int(value.split()[0])
    return found


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


def parse(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    *,
    defaults: dict[str, tuple[Any, Any]] | None = None,
    at_most: dict[str, float] | None = None,
    error: str = "",
) -> argparse.Namespace:
    """The options of ``argv``. Each option named in ``defaults`` that was left out (or 0) takes its (quick, full)
    value as --quick says; each one named in ``at_most`` must be above 0 and at most its bound, else
    ``parser.error(error)``."""
    args = parser.parse_args(argv)
    for name, (quick, full) in (defaults or {}).items():
        setattr(args, name, getattr(args, name) or (quick if args.quick else full))
    if not all(0 < getattr(args, name) <= bound for name, bound in (at_most or {}).items()):
        parser.error(error)
    return args


def print_heading(module: str, argv: Sequence[str]) -> None:
    """The two lines a benchmark that reports as it goes starts with: the machine and the command."""
    print(f"machine: {machine_line()}")
    print(f"reproduce: {reproduce(module, argv)}")


def print_problems(problems: Sequence[str], none: str) -> None:
    """A closing list of problems, or the line ``none`` says when there are none."""
    print("\nproblems:" if problems else f"\n{none}")
    for problem in problems:
        print(f"  - {problem}")


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
