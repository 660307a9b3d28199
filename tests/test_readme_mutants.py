"""The README's mutants section is a test: its commands, run exactly as written, do what it says they do. Its
quick score is a fixed, seeded sample of the mutants: it keeps every one that breaks a rule killed and every
equivalent one passed, so the score cannot drop unseen."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest

from nylorun_a2a_kit.fixtures.gate.processes import listening_process
from tests.suite_runs import REPO

pytestmark = pytest.mark.slow

SECTION = "## Mutants and the mutation score"


def _commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) : text.index("\n## ", text.index(SECTION) + 1)]
    return [shlex.split(line) for line in re.findall(r"^    (\.venv/bin/\S.*)$", section, flags=re.M)]


def _run(command: list[str], timeout_s: float, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NYLORUN_", "PYTEST_XDIST"))} | env
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout_s)


def test_the_section_shows_its_commands():
    names = [" ".join(command[:3]) for command in _commands()]
    assert len(names) == 8, names


def test_the_mutants_are_listed_served_and_killed_as_written(tmp_path):
    listing, serving, killing, *_ = _commands()
    listed = _run(listing, 60)
    assert listed.returncode == 0 and listed.stdout.count("\n") > 150 and "equivalent:" in listed.stdout
    with listening_process(
        [*serving[:-1], serving[-1], "--db", str(tmp_path / "agent.sqlite3")], "reference agent listening on "
    ) as url:
        assert url.startswith("http://127.0.0.1:")
    killed = _run(killing, 300)
    assert killed.returncode == 1 and "PUSH-08" in killed.stdout, killed.stdout[-2000:]


def test_the_quick_score_runs_as_written():
    quick = _commands()[4]
    scored = _run(quick, 900)
    assert scored.returncode == 0, scored.stdout[-3000:]
    assert "every axis at 95% or above; every equivalent mutant passed" in scored.stdout


def test_the_engines_command_runs_shows_and_lists_as_written(tmp_path):
    """run judges a fault killed and a variation passed; results lists both verdicts, kept; show prints the record and
    its verdict; run again reads them from the cache (a cache of the test's own, not the checkout's)."""
    run, results, show = _commands()[5:]
    cache = {"NYLORUN_MUTATION_CACHE": str(tmp_path / "cache")}
    judged = _run(run, 600, **cache)
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-2000:]
    assert re.search(r"killed +fault/\S+/wrong-error-code", judged.stdout), judged.stdout
    assert re.search(r"passed +allowed/list/short-pages", judged.stdout), judged.stdout
    listed = _run(results, 60, **cache)
    assert listed.returncode == 0 and "2 verdict(s) kept for this code; 2 shown" in listed.stdout, listed.stdout
    shown = _run(show, 60, **cache)
    assert shown.returncode == 0 and "breaks: " in shown.stdout and "verdict: killed" in shown.stdout, shown.stdout
    again = _run(run, 60, **cache)
    assert again.returncode == 0 and again.stdout.count(", kept)") == 2, again.stdout
    unknown = _run([*run[:2], "no-such-deviation"], 60, **cache)
    assert unknown.returncode == 4 and unknown.stderr.count("\n") == 1 and "unknown mutant" in unknown.stderr
