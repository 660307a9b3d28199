"""The kit's own test session: one warm run server for every process of it, the longest tests first.

The session's first process (xdist's controller, or the only one) starts the server of :mod:`runs.warm
<nylorun_a2a_kit.fixtures.runs.warm>` before any worker starts; the workers inherit its socket, so every run of
the suites a test asks for is forked warm by that one server, which keeps the cores busy and no busier.

Every process the session starts carries its mark in its environment; when the session ends, one still running
(an agent, a peer, a run, a server a test did not stop) is listed, killed, and fails the session.

Most of the slow tests wait (on a run the server forks, on an agent, a wheel build, a deadline), so ``-n auto``
gives four times as many workers as cores (the fast loop, ``-m "not slow"``, as many as cores), and the tests that
took longest (tests/run_costs.json) are dealt first: xdist's ``loadgroup`` deals the tests in collection order to the
worker that is free, except that behind a long test (:data:`LONG_S`) a worker holds one short test, not the next long
one (:class:`LongTestsAlone`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.requirements import load as load_requirements
from nylorun_a2a_kit.fixtures.runs import preload, warm
from nylorun_a2a_kit.reference_agent import mutants

# The kit's own tests are a caller of the mutants' registry: they give it the requirements to derive from.
mutants.use_requirements(load_requirements())

REPO = Path(__file__).resolve().parent.parent
_SERVER = pytest.StashKey[warm.Server]()
_MARK = pytest.StashKey[str]()
SESSION_MARK = "A2A_KIT_TESTS_SESSION"  # in the environment of every process the session starts
LEFT_RUNNING_GRACE_S = 10.0  # what is still stopping when the session ends gets this long
COSTS_FILE = REPO / "tests" / "run_costs.json"
UPDATE_COSTS = "NYLORUN_UPDATE_RUN_COSTS"  # =1: write the tests' costs from this session's durations
_TOOK: Counter[str] = Counter()


LONG_S = 60  # a test that took this long last time holds its worker: the test queued behind it is a short one


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    if "not slow" in (config.getoption("markexpr") or ""):
        return os.cpu_count() or 1  # the fast loop's tests compute: a worker more than the cores only collects again
    return 4 * (os.cpu_count() or 1)


@functools.cache
def _costs() -> dict[str, float]:
    return json.loads(COSTS_FILE.read_text(encoding="utf-8"))["tests"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: -_costs().get(item.nodeid, 0))  # stable: the rest keep pytest's order


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if not _runs_kit_tests(config):
        return None  # a run of the suites from the repository loads this file too: the kit schedules its checks
    from xdist.scheduler import LoadGroupScheduling

    from nylorun_a2a_kit.fixtures.plugin.schedule import LongChecksAlone

    class LongTestsAlone(LongChecksAlone, LoadGroupScheduling):
        """xdist's loadgroup, with the kit's rule for a worker running a long test: the one it holds behind it is a
        short one. A long test queued behind another (the variations' run behind the every-check proof) started
        minutes late, on the session's longest path."""

        def is_long(self, nodeid: str) -> bool:
            return _costs().get(nodeid.split("@", 1)[0], 0) >= LONG_S

    return LongTestsAlone(config, log)


@pytest.fixture(scope="session", autouse=True)
def _imported_before_pytester() -> None:
    """What a run imports at its start, imported before any test: a run pytester makes in this process puts
    ``sys.modules`` back after it, so a module imported first inside one (httpx's transport, the reference agent) is
    imported a second time later, and its errors are not the first copy's. httpx maps httpcore's errors by the classes
    it saw first: a refused connection raised the second httpcore's ConnectError, past every ``except
    httpx.HTTPError`` of a worker's later tests."""
    preload.warm_what_runs_use()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get(UPDATE_COSTS) == "1":
        _TOOK[report.nodeid] += report.duration


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get(warm.SOCKET_ENV):
        return  # a worker uses its controller's server; a nested session, its parent's
    if _runs_kit_tests(config) and SESSION_MARK not in os.environ:
        os.environ[SESSION_MARK] = f"{os.getpid()}-{time.time_ns()}"
        config.stash[_MARK] = os.environ[SESSION_MARK]
    if config.option.collectonly or not _runs_kit_tests(config):
        return  # pytest also loads this file in a run of the suites from the repository (test* folders)
    server = warm.serve(REPO)
    config.stash[_SERVER] = server
    os.environ[warm.SOCKET_ENV] = str(server.path)


def _runs_kit_tests(config: pytest.Config) -> bool:
    tests = REPO / "tests"
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if path == tests or tests in path.parents:
            return True
    return False


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    mark = session.config.stash.get(_MARK, None)
    if mark is None:
        return
    server = session.config.stash.get(_SERVER, None)
    if server is not None:
        server.stop()
    left = _still_running(mark, within_s=LEFT_RUNNING_GRACE_S)
    if left:
        for pid, _ in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        listed = "\n".join(f"  pid {pid}: {command}" for pid, command in left)
        session.config.get_terminal_writer().line(
            f"processes the kit's tests started and left running:\n{listed}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _still_running(mark: str, within_s: float) -> list[tuple[int, str]]:
    """The processes carrying ``mark`` (but this one) still running after ``within_s`` (a zombie has ended)."""
    deadline = time.monotonic() + within_s
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if f"{SESSION_MARK}={mark}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                    continue
                if (entry / "stat").read_text().rpartition(")")[2].split()[0] == "Z":
                    continue
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            found.append((int(entry.name), command[:200]))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get(UPDATE_COSTS) == "1" and not hasattr(config, "workerinput") and _TOOK:
        document = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        document["tests"] = {test: round(took) for test, took in sorted(_TOOK.items()) if took >= 5}
        COSTS_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    server = config.stash.get(_SERVER, None)
    if server is not None:
        os.environ.pop(warm.SOCKET_ENV, None)
        server.stop()  # stopped already when the session finished, unless it ended before
