"""The kit as another project installs it: a wheel in a fresh virtual environment, outside this repository.

The project has its own ``fixtures`` and ``schemas`` packages, its own ``--release`` option and fixture in its
``conftest.py``, its own passing tests and a test that asks for a ``client`` fixture nobody defined. With the
kit installed, that project's run is byte for byte what it is without the kit's plugin (the plugin is a guest:
it claims no option or fixture name of the project's, and acts on none of its tests), and the undefined
``client`` still errors. From that project the kit checks a reference agent started as its users start it,
and the gate applies a known-failures list kept in the project, giving the same verdicts as the embedded run
in this repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.agent_process import listening_process
from tests.suite_runs import made_once, read_outcomes, run_suites, shared_dir
from tests.test_release_ci_doc import kit_installed

pytestmark = pytest.mark.slow

# One fault and a few areas whose checks need nothing but a key: the verdicts compared below.
FAULT = "wrong-error-code"
CHECKED = "--a2a-req=TASK-05,CARD-01,CARD-02,ERR-05,VER-01,LIST-01"
OWN_TEST = """
import fixtures
import schemas


def test_own_packages_are_the_projects():
    assert fixtures.OWNER == "project" and schemas.OWNER == "project"


def test_own_option_and_fixture(release, request):
    assert release == request.config.getoption("--release")
"""
# The project's own configuration: an option and a fixture whose names a careless plugin could take.
OWN_CONFTEST = """
import pytest


def pytest_addoption(parser):
    parser.addoption("--release", default="dev", help="the project's own release option")


@pytest.fixture
def release(request):
    return request.config.getoption("--release")
"""
# A test that asks for a fixture the project never defined: it must error, with the kit installed or not.
UNDEFINED_FIXTURE_TEST = """
def test_asks_for_a_client_nobody_defined(client):
    assert client
"""
LISTED = """
[[known]]
test = "suites/test_tasks.py::test_unknown_task_is_not_found"
reason = "the release answers -32602 for a missing task"
link = "https://tracker.example/runtime/7"
"""


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> dict[str, Path]:
    """A wheel of the kit, installed into a fresh virtual environment as the release page installs it, beside a
    project of its own (both made once for the whole session; the tests only read them)."""
    environment = kit_installed(tmp_path_factory)
    root = made_once(shared_dir(tmp_path_factory, "installed"), "project", _project)
    return {
        "python": environment / "bin" / "python",
        "bin": environment / "bin",
        "project": root / "project",
        "root": root,
    }


def _project(root: Path) -> None:
    project = root / "project"
    for package in ("fixtures", "schemas"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text('OWNER = "project"\n', encoding="utf-8")
    (project / "tests").mkdir()
    (project / "tests" / "test_own.py").write_text(OWN_TEST, encoding="utf-8")
    (project / "tests" / "test_undefined.py").write_text(UNDEFINED_FIXTURE_TEST, encoding="utf-8")
    (project / "conftest.py").write_text(OWN_CONFTEST, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n', encoding="utf-8"
    )
    (project / "reports" / "known-failures").mkdir(parents=True)
    (project / "reports" / "known-failures" / "rc1.toml").write_text(LISTED, encoding="utf-8")


def _run(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_", "VIRTUAL_ENV"))}
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)


def test_only_one_top_level_name_is_installed(installed):
    listing = _run(
        [
            str(installed["python"]),
            "-c",
            "import importlib.metadata as m; "
            "print('\\n'.join(str(f) for f in m.distribution('nylorun-a2a-kit').files))",
        ],
        cwd=installed["root"],
    )
    assert listing.returncode == 0, listing.stderr
    top = {line.split("/", 1)[0] for line in listing.stdout.split()}
    top = {name for name in top if not name.endswith(".dist-info") and name != ".."}
    assert top == {"nylorun_a2a_kit"}, top


def test_every_command_answers_version(installed):
    for command in ("nylorun-reference-agent", "nylorun-a2a-release", "nylorun-a2a-tck"):
        done = _run([str(installed["bin"] / command), "--version"], cwd=installed["project"])
        assert done.returncode == 0 and re.fullmatch(rf"{command} \S+\n", done.stdout), (command, done)


# Every way the project's run could show the plugin: verbose names, fixtures set up, every outcome's summary.
OWN_RUN = ("-p", "no:cacheprovider", "-v", "--setup-show", "-rA", "--release", "1.4.0")


def test_the_projects_own_test_run_is_unchanged(installed):
    project, pytest_bin = installed["project"], str(installed["bin"] / "pytest")
    with_kit = _run([pytest_bin, *OWN_RUN], cwd=project)
    without = _run([pytest_bin, *OWN_RUN, "-p", "no:nylorun_a2a_kit"], cwd=project)
    assert with_kit.returncode == without.returncode == 1, with_kit.stdout[-3000:] + with_kit.stderr[-3000:]

    def comparable(output: str) -> str:
        # The one line that may differ: pytest lists the installed plugins, the kit among them.
        lines = [line for line in output.splitlines() if not line.startswith("plugins:")]
        return re.sub(r" in \d+\.\d+s", "", "\n".join(lines))

    assert comparable(with_kit.stdout) == comparable(without.stdout)
    assert with_kit.stderr == without.stderr == ""
    assert "2 passed, 1 error" in with_kit.stdout, with_kit.stdout[-2000:]
    assert "fixture 'client' not found" in with_kit.stdout, "an undefined client must still error"
    assert not (project / "reports" / "out").exists(), "the inert plugin wrote a summary"


def test_installed_kit_gives_the_embedded_verdicts(installed, tmp_path):
    project, bin_dir = tmp_path / "project", installed["bin"]
    shutil.copytree(installed["project"], project)  # its runs write into the project: a copy of the session's
    embedded = run_suites(tmp_path, f"--a2a-reference-mutant={FAULT}", CHECKED, "-p", "no:randomly")
    assert embedded.outcomes, embedded.output[-3000:]
    agent = [
        str(bin_dir / "nylorun-reference-agent"),
        "--port",
        "0",
        "--db",
        str(tmp_path / "agent.sqlite3"),
        "--key",
        "kit-key",
        "--mutant",
        FAULT,
    ]
    with listening_process(agent, "reference agent listening on ") as base:
        url = f"{base}/v1/a2a/agents/support"
        junit = tmp_path / "installed.xml"
        remote = _run(
            [
                str(bin_dir / "pytest"),
                "--pyargs",
                "nylorun_a2a_kit.suites",
                f"--target-url={url}",
                "--a2a-key=kit-key",
                f"--a2a-other-agent-url={base}/v1/a2a/agents/billing",  # the embedded agent's second Agent, too
                CHECKED,
                "-p",
                "no:cacheprovider",
                f"--junitxml={junit}",
                "--a2a-summary-dir=out",
            ],
            cwd=project,
        )
        assert remote.returncode == 1, remote.stdout[-3000:] + remote.stderr[-3000:]
        assert read_outcomes(junit) == embedded.outcomes
        gate = _run(
            [
                str(bin_dir / "nylorun-a2a-release"),
                "--release",
                "rc1",
                "--no-html",
                "--out",
                "gate",
                "--",
                f"--target-url={url}",
                "--a2a-key=kit-key",
                CHECKED,
                "--a2a-enforce-claim=no",
            ],
            cwd=project,
        )
        alone = _run([str(bin_dir / "pytest"), f"--target-url={url}", "--a2a-key=kit-key", CHECKED, "-q"], cwd=project)
    assert alone.returncode == 1 and "test_own_packages" not in alone.stdout, alone.stdout[-3000:]
    assert "suites/test_tasks.py::test_unknown_task_is_not_found" in alone.stdout, "a target alone runs the suites"
    assert gate.returncode == 0, gate.stdout[-3000:] + gate.stderr[-3000:]
    summary = json.loads((project / "gate" / "summary.json").read_text(encoding="utf-8"))
    [entry] = summary["known_failures"]
    assert entry["state"] == "failed as expected", entry
    assert summary["new_failures"] == []


def test_the_shipped_example_list_is_found_anywhere(installed):
    done = _run(
        [
            str(installed["bin"] / "pytest"),
            "--pyargs",
            "nylorun_a2a_kit.suites",
            "--a2a-release=example",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=installed["root"],
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
