"""The benchmarks' own options reach the runs they start (the runs themselves are minutes long, never a test).

A benchmark is a command, run here as one (``--dry-run`` prints each run's command and starts nothing); the kit's
tests never import the benchmarks.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from tests.suite_runs import REPO


def _dry_run(*argv: str) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_XDIST"))}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.failing_speed", *argv, "--dry-run"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def _holds(command: list[str], part: list[str]) -> bool:
    """Whether ``part`` is in ``command``, in one piece."""
    return any(command[i : i + len(part)] == part for i in range(len(command) - len(part) + 1))


def test_failing_speed_hands_its_options_to_every_run(tmp_path):
    argv = ["--quick", "-n", "2", "--a2a-property-profile", "quick", "--peers", "python-plain", "--keep", str(tmp_path)]
    lines = _dry_run(*argv)
    shared = shlex.split(next(line for line in lines if line.startswith("options of every run: ")).split(": ", 1)[1])
    assert "-k" in shared and shared[-3:] == ["-n", "2", "--a2a-property-profile=quick"], shared
    commands = {
        label.removeprefix("run "): shlex.split(command)
        for label, _, command in (line.partition(": ") for line in lines if line.startswith("run "))
    }
    assert list(commands) == ["reference", "python-plain"], lines
    for label, command in commands.items():
        assert command[:3] == [sys.executable, "-m", "pytest"], command  # the command a user types, in a process
        assert _holds(command, shared), f"{label}: {command}"
        assert f"--junitxml={tmp_path / f'{label}.xml'}" in command
    peer = commands["python-plain"]
    assert _holds(peer, ["--a2a-key=peer-key", "--a2a-push-time-scale=0.0001", "--a2a-push-wait-s=5"]), peer
    assert [a for a in peer if a.startswith("--target-url=")] == ["--target-url=http://<peer>/a2a"]
    assert not [a for a in commands["reference"] if a.startswith(("--target-url", "--a2a-key"))]
    assert not list(tmp_path.iterdir()), "a dry run starts nothing"


def test_failing_speed_runs_the_whole_suites_serially_by_default(tmp_path):
    lines = _dry_run("--peers", "python-plain", "js-plain", "--keep", str(tmp_path))
    shared = next(line for line in lines if line.startswith("options of every run: "))
    assert "(none: the full suites, serial, property profile ci)" in shared
    commands = [shlex.split(line.partition(": ")[2]) for line in lines if line.startswith("run ")]
    assert len(commands) == 3
    for command in commands:
        assert _holds(command, ["--pyargs", "nylorun_a2a_kit.suites"]), command
        assert not [a for a in command if a in ("-n", "-k") or a.startswith("--a2a-property-profile")], command


def test_remote_pace_times_each_run_at_the_kits_own_default():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.remote_pace", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    commands = [shlex.split(line.split(": ", 1)[1]) for line in done.stdout.splitlines()]
    assert len(commands) == 3 and all(_holds(command, ["-n", "auto"]) for command in commands), commands
    assert "--a2a-reference-mutant=allowed/answer/distant,allowed/turn/slow" in commands[-1], commands[-1]
