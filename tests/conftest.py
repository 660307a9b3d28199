"""The kit's own test session: one warm run server for every process of it, and the runs it shares.

The session's first process (xdist's controller, or the only one) starts the server of :mod:`runs.warm
<nylorun_a2a_kit.fixtures.runs.warm>` before any worker starts; the workers inherit its socket, so every run of
the suites a test asks for is forked warm by that one server, which keeps the cores busy and no busier.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.runs import warm

REPO = Path(__file__).resolve().parent.parent
_SERVER = pytest.StashKey[warm.Server]()


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
    server = config.stash.get(_SERVER, None)
    if server is not None:
        os.environ.pop(warm.SOCKET_ENV, None)
        server.stop()
