"""Requirements are data: well formed, each with a check (or a named later area), each check able to fail."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

from nylorun_a2a_kit.fixtures.requirements import catalog as requirements
from nylorun_a2a_kit.fixtures.requirements.axes import AXES
from nylorun_a2a_kit.reference_agent import mutants
from nylorun_a2a_kit.reference_agent.faults import FAULTS
from nylorun_a2a_kit.reference_agent.mutants.source import REPLACED_FAULTS
from tests.suite_runs import REPO, SUITES

# Areas whose checks land with later work; this list only shrinks, and every entry is a promise.
LATER_AREAS: set[str] = set()
KIT_TESTS = Path(__file__).resolve().parent
TIERS = {"core", "profile-v1", "profile-v2"}
LEVELS = {"MUST", "SHOULD", "MAY"}
# Checks that a fault of the reference agent cannot reach, each with the reason.
NOT_FAULTABLE: dict[str, str] = {}


def named_in_suites(folder: Path = SUITES) -> Counter[str]:
    """Requirement ids named by ``pytest.mark.req(...)`` anywhere in the suites (or another folder)."""
    named: Counter[str] = Counter()
    for path in folder.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "req"
                and ast.unparse(node.func.value) == "pytest.mark"
            ):
                named.update(arg.value for arg in node.args if isinstance(arg, ast.Constant))
    return named


def test_requirements_are_well_formed():
    raw = tomllib.loads(requirements.PATH.read_text(encoding="utf-8"))
    known = requirements.load()
    assert len(known) == len(raw["requirement"])
    for requirement in known.values():
        assert requirement.tier in TIERS, requirement.id
        assert requirement.level in LEVELS, requirement.id
        assert requirement.page in requirements.PAGES, requirement.id
        assert requirement.statement.strip() and requirement.row.strip(), requirement.id
        assert requirement.later is None or requirement.later in LATER_AREAS, requirement.id
        assert requirement.checked_by in (None, "kit"), requirement.id
        assert requirement.id.split("-")[0].isupper()


def test_every_requirement_has_a_check_or_a_later_area():
    named = named_in_suites()
    target_rules = [r for r in requirements.load().values() if r.checked_by is None]
    unchecked = sorted(r.id for r in target_rules if r.later is None and r.id not in named)
    assert not unchecked, f"requirements without a check and without a later area: {unchecked}"


def test_rules_on_the_kit_are_proven_by_its_own_tests():
    kit_rules = {r.id for r in requirements.load().values() if r.checked_by == "kit"}
    assert kit_rules, "the release gate's own rules are requirements too"
    assert not kit_rules & set(named_in_suites()), "a rule on the kit is not checked against a target"
    unproven = sorted(kit_rules - set(named_in_suites(KIT_TESTS)))
    assert not unproven, f"rules on the kit without a kit test naming them: {unproven}"


def test_checks_name_known_requirements():
    unknown = sorted(set(named_in_suites()) - set(requirements.load()))
    assert not unknown, f"checks name requirements that do not exist: {unknown}"


def test_faults_name_checked_requirements():
    named = named_in_suites()
    for name, fault in FAULTS.items():
        assert fault.breaks, name
        missing = [r for r in fault.breaks if r not in named]
        assert not missing, f"fault {name} breaks {missing}, which no check names"


def test_every_checked_requirement_has_a_fault():
    broken = {r for fault in FAULTS.values() for r in fault.breaks}
    broken |= {r for one in mutants.catalog().values() for r in one.breaks}
    broken |= {r for _, breaks in REPLACED_FAULTS.values() for r in breaks}  # source mutants that replaced faults
    uncovered = sorted(set(named_in_suites()) - broken - set(NOT_FAULTABLE))
    assert not uncovered, f"no reference-agent fault or mutant proves these checks can fail: {uncovered}"


def test_mutants_name_checked_requirements():
    named = named_in_suites()
    for name, one in mutants.catalog().items():
        missing = [r for r in one.breaks if r not in named]
        assert not missing, f"mutant {name} breaks {missing}, which no check names"


def test_every_axis_member_has_a_check(tmp_path):
    """Each member a requirement lists on an axis (its channels, spellings, several, combines, reads) is covered by
    a check of that requirement marked member(axis, name), and a check marks only members its requirement lists."""
    out = tmp_path / "members.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES), "--collect-only", "-q", "-p", "tests.collected_members"],
        cwd=REPO,
        env={**os.environ, "NYLORUN_KIT_MEMBERS_OUT": str(out)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = json.loads(out.read_text(encoding="utf-8"))
    covered = {
        (rid, axis, name) for item in collected.values() for rid in item["req"] for axis, name in item["members"]
    }
    listed = {(r.id, axis, name) for r in requirements.load().values() for axis in AXES for name in getattr(r, axis)}
    assert not sorted(listed - covered), f"members no check of their requirement covers: {sorted(listed - covered)}"
    stray = {
        (nodeid, axis, name)
        for nodeid, item in collected.items()
        for axis, name in item["members"]
        if not any((rid, axis, name) in listed for rid in item["req"])
    }
    assert not stray, f"checks mark members their requirements do not list: {sorted(stray)[:10]}"
    # --a2a-req leaves a module that names none of its requirements uncollected: each check's requirements are
    # written in its module's source.
    unwritten = {
        nodeid: rid
        for nodeid, item in collected.items()
        for rid in item["req"]
        if rid not in requirements.named_in(SUITES / nodeid.split("::", 1)[0].removeprefix("suites/"))
    }
    assert collected and not unwritten, f"checks whose requirement their module does not write: {unwritten}"
