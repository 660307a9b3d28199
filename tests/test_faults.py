"""Every check can fail: the suites pass against the clean reference agent and fail under each fault."""

from __future__ import annotations

import pytest

from reference_agent.faults import FAULTS
from tests.suite_runs import run_suites


def test_clean_reference_agent_passes_everything(tmp_path):
    verdicts = run_suites(tmp_path)
    assert verdicts.returncode == 0, verdicts.output[-5000:]
    assert verdicts.outcomes, "no checks ran"
    assert set(verdicts.outcomes.values()) == {"passed"}, (
        "against the embedded reference agent every check applies and passes; "
        f"got {verdicts.summary()}: {verdicts.with_outcome('skipped') + verdicts.with_outcome('failed')}"
    )


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_is_caught_by_its_requirements(tmp_path, fault: str):
    breaks = FAULTS[fault].breaks
    verdicts = run_suites(tmp_path, f"--reference-fault={fault}", f"--req={','.join(breaks)}")
    assert verdicts.returncode == 1, (
        f"the run must fail under fault {fault}: {verdicts.summary()}\n{verdicts.output[-3000:]}"
    )
    caught = verdicts.failed_requirements()
    missed = [r for r in breaks if r not in caught]
    assert not missed, f"fault {fault} ({FAULTS[fault].description}) is not caught by {missed}: {verdicts.summary()}"
    assert not verdicts.with_outcome("error"), f"checks errored instead of failing: {verdicts.with_outcome('error')}"
