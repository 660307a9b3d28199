"""The kit's tests' runs of the shipped suites: the runs room's, started in the repository (a test session's
runs are forked warm by the session's server, tests/conftest.py), and shared by the processes of one session."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

# The engine and the runner are imported here, in the session's own thread, not first in a thread of a test's pool:
# pytest rewrites a module it imports by parsing it, and CPython 3.11's ast module keeps one recursion count for
# every thread, which two parses at once break (a later parse then fails with "recursion depth mismatch").
from nylorun_a2a_kit.fixtures import mutation, runs
from nylorun_a2a_kit.fixtures.mutation import engine, records  # noqa: F401
from nylorun_a2a_kit.fixtures.runs import runner  # noqa: F401
from nylorun_a2a_kit.fixtures.runs.results import SHOULD_NOT_MET, Outcomes

REPO = Path(__file__).resolve().parent.parent
SUITES = REPO / "suites"
Verdicts = Outcomes

__all__ = [
    "HTTP_BESIDE_A_SETUP",
    "REPO",
    "SHOULD_NOT_MET",
    "SUITES",
    "Verdicts",
    "clean_run",
    "engine_cache",
    "made_once",
    "read_outcomes",
    "run_once",
    "run_suites",
    "shared_dir",
    "this_tests_cost",
]

# What HTTP stacks do to an answer (allowed/http/*) changes every exchange and no rule the kit judges: each is proven in
# the run of a whole setup (one where every check runs, tests/test_setups.py), not in a run of its own. With the clean
# run (no setup, none of them) and the run of every variation (the default setup, all of them), each pair of them, and
# each of them with each setup, is run both ways: together, and one without the other (a covering array of strength
# two), in three whole runs fewer.
HTTP_BESIDE_A_SETUP = {
    "single-agent,restarted": "allowed/http/chunked",
    "prefix-twins,older-database,restarted": "allowed/http/connection-close",
    "case-twins,several-subjects,https-allow-list,restarted": "allowed/http/charset",
}


def run_suites(
    where: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout_s: float = 600,
    lean: bool = False,
    cold: bool = False,
    priority: float | None = None,
) -> Outcomes:
    """The suites run with ``args`` from the repository, writing into ``where`` (see :func:`runs.run`); among runs
    waiting for the cores, the longest test's start first (``priority``: by default the asking test's cost)."""
    priority = this_tests_cost() if priority is None else priority
    return runs.run(args, where, cwd=REPO, env=env, timeout_s=timeout_s, lean=lean, cold=cold, priority=priority)


def this_tests_cost() -> float:
    """How long the running test took last time (tests/run_costs.json), 1 s if it is not listed: the priority of the
    runs it asks for, so that the runs of the longest tests start first."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    return float(_costs().get(test, 1))


@functools.cache
def _costs() -> dict[str, float]:
    return json.loads((REPO / "tests" / "run_costs.json").read_text(encoding="utf-8"))["tests"]


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A directory every xdist worker of this session sees (the session's own when there are no workers)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # a worker's basetemp is a directory of the session's
    where = base / name
    where.mkdir(parents=True, exist_ok=True)
    return where


def engine_cache(tmp_path_factory: pytest.TempPathFactory) -> mutation.Cache:
    """The mutation engine's cache for this test session: a verdict asked for by several of its processes is made
    once. It never outlives the session: the kit's tests prove the code as it is."""
    return mutation.Cache(shared_dir(tmp_path_factory, "deviations") / "verdicts.sqlite3")


def made_once(shared: Path, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``shared/name``, filled by ``make(folder)`` once for the whole session: the first process to
    ask makes it holding a lock the others wait on; one that died before it finished leaves it to the next."""
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            make(folder)
            done.touch()
    return folder


def run_once(shared: Path, name: str, run: Callable[[], Outcomes]) -> Outcomes:
    """``run()``'s outcomes, made once for the whole session (see :func:`runs.once`)."""
    return runs.once(shared, name, run)


def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    """The whole suites against the embedded reference agent, with no option: run once for the whole session."""
    where = shared_dir(tmp_path_factory, "runs")
    return run_once(where, "clean", lambda: run_suites(where / "clean", lean=True, priority=CLEAN_COST_S))


# The clean run starts before every other run: three tests wait on it (the every-check proof among them, whose second
# half starts once it and every fault's verdict are in), and it waits more than it computes (a whole run in one
# process, about 100 s at a quarter of a core): started after the faults' runs, it ran alone with the cores idle.
CLEAN_COST_S = 1000


def read_outcomes(path: Path) -> dict[str, str]:
    """Each test id of a JUnit file and its outcome (passed | failed | error | skipped)."""
    return Outcomes.read(path).outcomes
