"""Run the shipped suites in a subprocess, as a user would, and read the verdicts from JUnit XML."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.plugin.verdicts import SHOULD_NOT_MET as SHOULD_WORDING

REPO = Path(__file__).resolve().parent.parent
SUITES = REPO / "suites"


SHOULD_NOT_MET = "should-not-met"


@dataclass
class Verdicts:
    returncode: int
    output: str
    outcomes: dict[str, str] = field(default_factory=dict)  # test id → passed | failed | error | skipped
    requirements: dict[str, list[str]] = field(default_factory=dict)  # test id → requirement ids
    messages: dict[str, str] = field(default_factory=dict)  # test id → failure or skip message

    def with_outcome(self, outcome: str) -> list[str]:
        return sorted(t for t, o in self.outcomes.items() if o == outcome)

    def failed_requirements(self) -> set[str]:
        return {r for t in self.with_outcome("failed") for r in self.requirements.get(t, [])}

    def published(self) -> dict[str, str]:
        """The outcomes as the peers' verdicts keep them: a SHOULD not met (reported as an expected failure,
        which JUnit writes as a skip) is ``should-not-met``, never mistaken for a check not applicable."""
        return {
            test: SHOULD_NOT_MET if outcome == "skipped" and SHOULD_WORDING in self.messages[test] else outcome
            for test, outcome in sorted(self.outcomes.items())
        }

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for outcome in self.outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        return ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "no tests"


def run_suites(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout_s: float = 600, lean: bool = False
) -> Verdicts:
    """Run the suites; ``lean`` loads only the plugins a verdict needs (a run then starts in half the time)."""
    junit = tmp_path / f"junit-{len(list(tmp_path.glob('junit-*.xml')))}.xml"
    command = [sys.executable, "-m", "pytest", str(SUITES), "-q", f"--junitxml={junit}", *args]
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_XDIST"))}
    if lean:
        environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        # The kit's own plugin, and xdist's: the project's addopts name an xdist option.
        command[4:4] = ["-p", "nylorun_a2a_kit.fixtures.plugin", "-p", "xdist.plugin"]
    environment.update(env or {})
    done = subprocess.run(
        command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    verdicts = Verdicts(done.returncode, done.stdout + done.stderr)
    if junit.exists():
        _read_junit(junit, verdicts)
    return verdicts


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A directory every xdist worker of this session sees (the session's own when there are no workers)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # a worker's basetemp is a directory of the session's
    where = base / name
    where.mkdir(parents=True, exist_ok=True)
    return where


def run_once(shared: Path, name: str, run: Callable[[], Verdicts]) -> Verdicts:
    """``run()``'s verdicts, run by whichever process of the session asks first; the others read them.

    The runner holds an exclusive lock on the run's lock file until its verdicts are written, so a process
    asking meanwhile blocks on the lock (no polling) and then reads them. A runner that died without
    writing them leaves the lock free and no verdicts: the next one to ask runs it again.
    """
    result = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return Verdicts(**json.loads(result.read_text()))
        (shared / name).mkdir(exist_ok=True)
        verdicts = run()
        partial = result.with_suffix(".part")
        partial.write_text(json.dumps(asdict(verdicts)))
        partial.replace(result)
        return verdicts


def read_outcomes(path: Path) -> dict[str, str]:
    """Each test id of a JUnit file and its outcome (passed | failed | error | skipped)."""
    verdicts = Verdicts(returncode=0, output="")
    _read_junit(path, verdicts)
    return verdicts.outcomes


def _read_junit(path: Path, verdicts: Verdicts) -> None:
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = found.get("message", "")
                break
        verdicts.outcomes[test_id] = outcome
        verdicts.messages[test_id] = message
        verdicts.requirements[test_id] = [
            p.get("value") for p in case.iter("property") if p.get("name") == "requirement"
        ]
