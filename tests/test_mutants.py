"""The mutants room: what it derives from the schemas and the requirements, how it names them, what they keep."""

from __future__ import annotations

import re

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.requirements import load
from nylorun_a2a_kit.fixtures.requirements.axes import AXES as REQUIREMENT_AXES
from nylorun_a2a_kit.reference_agent.mutants import AXES, catalog, check_mutants, operators
from nylorun_a2a_kit.reference_agent.mutants.channels import DATA

AXIS = "fault|channel|spelling|several|combined|read|allowed"
NAME = re.compile(rf"^({AXIS})/[^/\s]+/[^/\s@]+(@[a-z]+)?$|^setup/[a-z-]+$")
# The profile's data as the reference agent answers it, one instance of each extension's definition.
INSTANCES = {
    "interactions": {"interactionId": "int-1", "kind": "approval", "prompt": "May I?", "detail": {"order": "d-1"}},
    "effects": {"uncertain": "effect-1"},
    "progress": {
        "steps": [{"label": "Step 1", "state": "done", "note": ""}, {"label": "Step 2", "state": "active", "note": "x"}]
    },
    "telemetry": {
        "totals": {"steps": 2, "tokens": 360, "costUsd": 0.00072},
        "traceId": "1be53b4e2b2c40bf43fda0a67ba09ab3",
    },
    "files": {
        "kind": "file",
        "version": 1,
        "size": 133,
        "sha256": "6c2f5992bbb022a6c0399ce7b36a5dc01b1b875d59d40ea94d67abc42bbc6263",
        "path": "report.bin",
    },
}


def test_every_mutant_is_named_by_axis_what_and_how():
    mutants = catalog()
    assert {m.axis for m in mutants.values()} == set(AXES) - {"source"}  # made on demand: tests/test_source_mutants.py
    wrong = [name for name in mutants if not NAME.match(name)]
    assert not wrong, f"names outside <axis>/<what>/<how>[@<where>]: {wrong}"
    check_mutants(list(mutants))
    with pytest.raises(ValueError, match="unknown mutant"):
        check_mutants(["channel/nothing/here"])


def test_every_member_of_every_axis_has_its_mutant():
    """Each member a requirement lists on an axis is broken alone by a mutant of that requirement, or read by an
    equivalent one (a spelling the kit must take)."""
    mutants = catalog()
    covered = {rid for m in mutants.values() for rid in (*m.breaks, *m.read)}
    for requirement in load().values():
        for axis in REQUIREMENT_AXES:
            if getattr(requirement, axis) and axis != "channels":
                assert requirement.id in covered, f"{requirement.id} lists {axis} no mutant breaks or reads"
    # A channel member of each rule is broken by a mutant of its own; PROG-02's rule (a step's label, state and
    # note) is its schema's, which every mutant keeps, so its channels are proven by the plan-step-without-state fault.
    channel_rules = {rid for m in mutants.values() if m.axis == "channel" for rid in m.breaks}
    assert {r.id for r in load().values() if r.channels} - {"PROG-02"} <= channel_rules


@pytest.mark.parametrize("extension", DATA)
def test_every_channel_operator_keeps_the_data_valid(extension: str):
    definition, _ = DATA[extension]
    ref = f"extensions/{extension}-v1.json#/$defs/{definition}"
    assert schemas.is_valid(INSTANCES[extension], ref)
    for field in operators.fields(extension, definition):
        for operator in field.operators:
            changed = operators.apply(INSTANCES[extension], field.path, operator)
            if changed is operators.DROP:
                assert not field.path and operator.name == "dropped"
                continue
            assert changed != INSTANCES[extension], f"{extension}.{field.label} {operator.name} changes nothing"
            problems = schemas.violations(changed, ref)
            assert not problems, f"{extension}.{field.label} {operator.name} breaks the schema: {problems[0]}"


def test_every_equivalent_mutant_says_why_and_what_was_read():
    for one in catalog().values():
        if one.equivalent:
            assert len(one.equivalent) > 30 and one.read and not one.breaks, one.name
