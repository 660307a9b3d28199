"""A warm run's xdist workers are forked by the warm server too (fixtures/runs/launch_worker.py): each is the server's
child, not a process the run started cold, and a worker's launcher killed takes the worker with it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate import command as commands
from nylorun_a2a_kit.fixtures.runs import warm

pytestmark = pytest.mark.slow  # a warm server of their own, its preload collects the suites

CHECKS = """
import json, os, time
from pathlib import Path

def test_where_it_runs():
    Path(os.environ["WORKERS_SAY"], os.environ["PYTEST_XDIST_WORKER"]).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "parent": os.getppid(),
                "cwd": os.getcwd(),
                "marked": os.environ["MARK"],
                "long": len(os.environ["LONG"]),
            }
        )
    )
    time.sleep(float(os.environ["HOLD_S"]))

test_second = test_where_it_runs
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[warm.Server, Path]]:
    log = tmp_path_factory.mktemp("warm-log") / "runs.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm.LOG_ENV, str(log))
        started = warm.serve(tmp_path_factory.mktemp("warm-from"), slots=2)
    yield started, log
    started.stop()


LONG = 100_000


def _run(server: warm.Server, where: Path, hold_s: float) -> warm.Started:
    (where / "test_where.py").write_text(CHECKS, encoding="utf-8")
    (where / "said").mkdir()
    # LONG: a launcher's request longer than a socket hands over at once, its streams with the first piece
    environment = {"WORKERS_SAY": str(where / "said"), "HOLD_S": str(hold_s), "MARK": where.name, "LONG": "x" * LONG}
    env = commands.environment(environment)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    args = ["-p", "xdist.plugin", "-p", "no:cacheprovider", "-n", "2", "--dist", "load", "test_where.py"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm.SOCKET_ENV, str(server.path))
        return warm.start(args, where, env, where / "output.txt")


def _said(where: Path, deadline_s: float) -> list[dict]:
    deadline = time.monotonic() + deadline_s
    while len(list((where / "said").iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    return [json.loads(path.read_text()) for path in sorted((where / "said").iterdir())]


def test_a_warm_runs_workers_are_the_servers_children_in_the_runs_directory_and_environment(server, tmp_path):
    started, log = server
    run = _run(started, tmp_path, hold_s=0)
    assert run.wait(60) == 0, (tmp_path / "output.txt").read_text()
    said = _said(tmp_path, 5)
    assert len(said) == 2 and {one["parent"] for one in said} == {started.process.pid}, said
    assert all(one["cwd"] == str(tmp_path) and one["marked"] == tmp_path.name for one in said), said
    assert all(one["long"] == LONG for one in said), "the whole environment of a long request"
    forked = {line["pid"] for line in map(json.loads, log.read_text().splitlines()) if line["what"] == "worker"}
    assert {one["pid"] for one in said} <= forked


def test_a_launcher_killed_takes_its_warm_worker_with_it(server, tmp_path):
    """As a cold worker is the process xdist started: killed by xdist (a worker that outlives its teardown) or with
    its run's process group, it is gone. Here its run lives on, holding the worker's streams open."""
    started, _ = server
    run = _run(started, tmp_path, hold_s=120)
    said = _said(tmp_path, 30)
    assert len(said) == 2, (tmp_path / "output.txt").read_text()
    launchers = _launchers_of(started.path)
    assert len(launchers) == 2, launchers
    for pid in launchers:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2
    alive = [one["pid"] for one in said]
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        time.sleep(0.02)
    run.wait(timeout_s=0.1)  # the run, if xdist has not ended it: killed
    assert not alive, f"workers {alive} outlived their launchers"


def _launchers_of(socket_path: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            command = (entry / "cmdline").read_bytes().split(b"\0")
            if any(part.endswith(b"launch_worker.py") for part in command) and str(socket_path).encode() in command:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
