"""docs/release-ci.md is a test: its commands, run exactly as written, give the verdict it promises.

The rehearsal's shell blocks are read out of the page and run in order, in a fresh folder, with the kit's
wheel (built from this checkout) named by ``NYLORUN_A2A_KIT`` as the page says: a fresh virtual environment
(its install block, run once for the session: the relay's rehearsal and the installed-kit tests use the same one),
the reference agent with its defaults in real time as the stand-in Runtime, the release's list, the gate. The
workflow's gate step must be the rehearsal's gate command, to the letter.
"""

from __future__ import annotations

import contextlib
import gzip
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
from tests.sarif_schema import valid_sarif
from tests.suite_runs import REPO, made_once, shared_dir
from tests.test_secrets import _encodings
from tests.wheel import session_wheel

pytestmark = pytest.mark.slow

PAGE = REPO / "docs" / "release-ci.md"
REHEARSAL = "## Rehearse the gate against the reference agent"
REJUDGE = "## Re-judge a published verdict"
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


def page_environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the page's blocks run in: none of the kit's or pytest's own variables, no active virtual
    environment, and the kit's wheel (built from this checkout) in ``NYLORUN_A2A_KIT``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_", "VIRTUAL_ENV"))}
    environment["NYLORUN_A2A_KIT"] = str(session_wheel(tmp_path_factory))
    return environment


def kit_installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The virtual environment the rehearsal's first block makes, run as written with the kit's wheel named by
    ``NYLORUN_A2A_KIT``: made once for the whole session (pip takes 15 CPU-seconds), in a folder of its own; each
    rehearsal then runs the page's other blocks with it as its ``.venv`` (the relay's rehearsal is "with the kit
    installed as above"), and the installed-kit tests read it. Nothing that uses it installs anything into it."""
    install = rehearsal_blocks(PAGE.read_text(encoding="utf-8"))[0]
    assert "python3 -m venv .venv" in install and "NYLORUN_A2A_KIT" in install, install

    def run_install(folder: Path) -> None:
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + install],
            cwd=folder,
            env=page_environment(tmp_path_factory),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    folder = made_once(shared_dir(tmp_path_factory, "kit-installed"), "as-the-release-page-installs-it", run_install)
    return folder / ".venv"


def with_the_kit_installed(work: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``work``, a fresh folder, with the session's installed kit as its ``.venv``."""
    (work / ".venv").symlink_to(kit_installed(tmp_path_factory), target_is_directory=True)


def rehearse(work: Path, environment: dict[str, str], blocks: list[str], stop: str) -> tuple[subprocess.Popen, str]:
    """The page's ``blocks`` run in order in ``work``, then, whatever they said, its ``stop`` block, which stops what
    they started and waits until each pid is gone; the shell that ran the blocks and what it printed."""
    shell = subprocess.Popen(
        ["bash", "-c", "set -euo pipefail\n" + "\n".join(blocks)],
        cwd=work,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=RUN_BUDGET_S)
        stopped = subprocess.run(["bash", "-c", "set -euo pipefail\n" + stop], cwd=work, timeout=STOP_BUDGET_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)  # whatever a failed rehearsal left running
    assert stopped.returncode == 0, "the page's stop block failed"
    return shell, output


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
    with_the_kit_installed(work, tmp_path_factory)  # the page's first block, run once for the session
    environment = page_environment(tmp_path_factory)
    if allure_command():
        environment["NYLORUN_ALLURE"] = allure_command()[0]
    step_summary = tmp_path / "github-step-summary.md"  # what GitHub Actions names for the workflow's step
    environment["GITHUB_STEP_SUMMARY"] = str(step_summary)
    shell, output = rehearse(work, environment, blocks[1:-1], blocks[-1])  # the stand-in, the list, the gate; stop
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
    code_scanning = valid_sarif(results / "a2a.sarif")["runs"][0]
    assert code_scanning["results"] == [] and code_scanning["properties"]["verdict"] == "pass", "nothing to alert"
    assert step_summary.read_text(encoding="utf-8") == text, "the job's summary page shows summary.md"
    if allure_command():
        assert (results / "allure-report" / "index.html").is_file(), output[-2000:]
    secrets = [line.split("=", 1)[1] for line in blocks[1].splitlines() if line.startswith("export NYLORUN_A2A_")]
    assert len(secrets) == 3, blocks[1]
    written = [output.encode(), *(_published(p) for p in results.rglob("*") if p.is_file())]
    leaked = [s for s in secrets if any(form in data for data in written for form in _encodings(s))]
    assert not leaked, "the rehearsal published a credential"
    [rejudge] = re.findall(r"```sh\n(.*?)```", _section(PAGE.read_text(encoding="utf-8"), REJUDGE), flags=re.S)
    again = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + rejudge], cwd=work, env=environment, capture_output=True, text=True
    )  # the stand-in Runtime is gone: the bundle alone
    said = "re-judged: the same verdict, pass (tier reached: profile-v2), every judgement as recorded"
    assert again.returncode == 0 and said in again.stdout, again.stdout[-3000:] + again.stderr[-2000:]
    assert said in _section(PAGE.read_text(encoding="utf-8"), REJUDGE).replace("\n", " "), (
        "the page says what it prints"
    )


def _published(path: Path) -> bytes:
    """A published file's bytes, as a reader gets them (a gzip-compressed one decompressed)."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


RELAY = "## A Runtime the runner cannot be reached from: the push relay"


def relay_blocks(text: str) -> list[str]:
    """The shell blocks of the push relay's rehearsal, in order."""
    return re.findall(r"```sh\n(.*?)```", _section(text, RELAY), flags=re.S)


def test_the_relay_rehearsal_as_written_passes_the_push_checks_through_the_relay(tmp_path, tmp_path_factory):
    text = PAGE.read_text(encoding="utf-8")
    blocks = relay_blocks(text)
    assert len(blocks) == 4 and "nylorun-a2a-receiver" in blocks[0] and "relay.pid" in blocks[-1], blocks
    assert "with the kit installed as above" in _section(text, RELAY), "the page installs the kit once, above"
    work = tmp_path / "relayed-runtime"
    work.mkdir()
    with_the_kit_installed(work, tmp_path_factory)
    environment = page_environment(tmp_path_factory)
    shell, output = rehearse(work, environment, blocks[:-1], blocks[-1])  # the relay, the stand-in, the checks
    for name in ("relayed-runtime.pid", "relay.pid"):
        pid = int((work / name).read_text())
        assert not running(pid), f"{name} (pid {pid}) is still running"
    assert shell.returncode == 0, output[-5000:]
    checks = json.loads((work / "relay-check" / "summary.json").read_text(encoding="utf-8"))["checks"]
    delivered = [c for c, outcome in checks.items() if "test_push_core" in c and outcome == "passed"]
    assert len(delivered) >= 4 and "failed" not in checks.values(), checks
    secrets = [line.split("=", 1)[1] for b in blocks for line in b.splitlines() if line.startswith("export NYLORUN_")]
    assert len(secrets) == 3, blocks
    written = [output.encode(), (work / "relay.log").read_bytes()]
    written += [p.read_bytes() for p in (work / "relay-check").rglob("*") if p.is_file()]
    leaked = [s for s in secrets if any(form in data for data in written for form in _encodings(s))]
    assert not leaked, "the relay's rehearsal published a credential"
    assert "delivery 1: POST" in (work / "relay.log").read_text(), "the relay logs what came"


def test_the_relay_replaces_the_workflows_receiver_line_as_the_page_says():
    text = PAGE.read_text(encoding="utf-8")
    [replaced] = re.findall(r"the gate step's line `([^`]+)`", _section(text, RELAY))
    assert replaced in workflow_gate_step(text), "the page quotes the workflow's receiver line"
    assert "--a2a-push-relay" in _section(text, RELAY) and "NYLORUN_A2A_PUSH_RELAY_TOKEN" in _section(text, RELAY)
