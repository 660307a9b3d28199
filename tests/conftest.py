"""The kit's own test session: one warm run server for every process of it, the longest tests first.

The session's first process (xdist's controller, or the only one) starts the server of :mod:`runs.warm
<nylorun_a2a_kit.fixtures.runs.warm>` before any worker starts; the workers inherit its socket, so every run of
the suites a test asks for is forked warm by that one server, which keeps the cores busy and no busier.

Most of the slow tests wait (on a run the server forks, on an agent, a wheel build, a deadline), so ``-n auto``
gives twice as many workers as cores, and the tests that took longest (tests/run_costs.json) are dealt first:
xdist's ``loadgroup`` deals the tests one at a time, in collection order, to the worker that is free.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.runs import warm

REPO = Path(__file__).resolve().parent.parent
_SERVER = pytest.StashKey[warm.Server]()
COSTS_FILE = REPO / "tests" / "run_costs.json"
UPDATE_COSTS = "NYLORUN_UPDATE_RUN_COSTS"  # =1: write the tests' costs from this session's durations
_TOOK: Counter[str] = Counter()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return 2 * (os.cpu_count() or 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    costs = json.loads(COSTS_FILE.read_text(encoding="utf-8"))["tests"]
    items.sort(key=lambda item: -costs.get(item.nodeid, 0))  # stable: the rest keep pytest's order


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get(UPDATE_COSTS) == "1":
        _TOOK[report.nodeid] += report.duration


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get(warm.SOCKET_ENV):
        return  # a worker uses its controller's server; a nested session, its parent's
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


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get(UPDATE_COSTS) == "1" and not hasattr(config, "workerinput") and _TOOK:
        document = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        document["tests"] = {test: round(took) for test, took in sorted(_TOOK.items()) if took >= 5}
        COSTS_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    server = config.stash.get(_SERVER, None)
    if server is not None:
        os.environ.pop(warm.SOCKET_ENV, None)
        server.stop()
