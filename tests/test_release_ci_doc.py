"""docs/release-ci.md is a test: its commands, run exactly as written, give the verdict it promises.

The rehearsal's shell blocks are read out of the page and run in order, in a fresh folder, with the kit's
wheel (built from this checkout) named by ``NYLORUN_A2A_KIT`` as the page says: a fresh virtual environment,
the reference agent with its defaults in real time as the stand-in Runtime, the release's list, the gate. The
workflow's gate step must be the rehearsal's gate command, to the letter.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from nylorun_a2a_kit.fixtures.gate.allure import allure_command
from tests.suite_runs import REPO
from tests.test_secrets import _encodings
from tests.wheel import session_wheel

pytestmark = pytest.mark.slow

PAGE = REPO / "docs" / "release-ci.md"
REHEARSAL = "## Rehearse the gate against the reference agent"
RUN_BUDGET_S = 1500
STOP_BUDGET_S = 10  # the reference agent stops within a few seconds of SIGTERM
STAND_IN_PORT = 8080  # the page's --port


def running(pid: int) -> bool:
    """Whether the process ``pid`` still runs (one that ended and is not yet reaped, a zombie, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start : following if following >= 0 else len(text)]


def rehearsal_blocks(text: str) -> list[str]:
    """The shell blocks of the rehearsal, in order."""
    return re.findall(r"```sh\n(.*?)```", _section(text, REHEARSAL), flags=re.S)


def workflow_gate_step(text: str) -> str:
    """The ``run`` of the workflow's Gate step, as the shell gets it."""
    workflow = re.search(r"```yaml\n(.*?)```", _section(text, "## The workflow"), flags=re.S).group(1)
    step = workflow[workflow.index("- name: Gate") :]
    run = step[step.index("run: |\n") + len("run: |\n") :]
    lines = []
    for line in run.splitlines():
        if line.strip() and not line.startswith(" " * 10):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines)).strip() + "\n"


def gate_block(blocks: list[str]) -> str:
    [gate] = [block for block in blocks if "nylorun-a2a-release" in block]
    return gate


def test_the_workflow_runs_the_rehearsed_gate_to_the_letter():
    text = PAGE.read_text(encoding="utf-8")
    assert workflow_gate_step(text) == gate_block(rehearsal_blocks(text)), (
        "the workflow's gate step is not the rehearsal's"
    )


def test_the_rehearsal_as_written_gives_a_release_that_is_not_blocked(tmp_path, tmp_path_factory):
    blocks = rehearsal_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 5 and blocks[-2] == gate_block(blocks) and "runtime.pid" in blocks[-1], blocks
    work = tmp_path / "runtime-repo"
    work.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_", "VIRTUAL_ENV"))}
    environment["NYLORUN_A2A_KIT"] = str(session_wheel(tmp_path_factory))
    if allure_command():
        environment["NYLORUN_ALLURE"] = allure_command()[0]
    script = "set -euo pipefail\n" + "\n".join(blocks[:-1])  # the stand-in, the list, the gate
    shell = subprocess.Popen(
        ["bash", "-c", script],
        cwd=work,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=RUN_BUDGET_S)
        # Whatever the gate said, the page's last block stops the stand-in and waits until its pid is gone.
        stopped = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + blocks[-1]], cwd=work, timeout=STOP_BUDGET_S, check=False
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)  # whatever a failed rehearsal left running
    assert stopped.returncode == 0, "the page's stop block failed"
    pid = int((work / "runtime.pid").read_text())
    assert not running(pid), f"the stand-in (pid {pid}) is still running"
    assert port_is_free(STAND_IN_PORT), f"port {STAND_IN_PORT} is still taken after the stand-in stopped"
    assert shell.returncode == 0, output[-5000:]
    assert "release gate: not blocked; tier reached: Profile v2" in output, output[-3000:]
    results = work / "a2a-results"
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "pass" and summary["target"]["tier_reached"] == "profile-v2", summary["tiers"]
    assert all(u["accepted"] for u in summary["unverified"]), summary["unverified"]
    text = (results / "summary.md").read_text(encoding="utf-8")
    assert summary["not_checked"], "a real-time Runtime leaves some checks not checked; the summary names them"
    for item in summary["not_checked"]:
        assert item["reason"] and f"`{item['test']}`" in text, item
    assert (results / "junit.xml").is_file()
    if allure_command():
        assert (results / "allure-report" / "index.html").is_file(), output[-2000:]
    secrets = [line.split("=", 1)[1] for line in blocks[1].splitlines() if line.startswith("export NYLORUN_A2A_")]
    assert len(secrets) == 3, blocks[1]
    written = [output.encode(), *(p.read_bytes() for p in results.rglob("*") if p.is_file())]
    leaked = [s for s in secrets if any(form in data for data in written for form in _encodings(s))]
    assert not leaked, "the rehearsal published a credential"
