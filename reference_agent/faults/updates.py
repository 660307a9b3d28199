"""Faults of the extension data a task's status updates carry through its life: the plan on every update of a
turn that has one, telemetry on the terminal update of every way a turn ends."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.scenarios import Scenarios
from nylorun_a2a_kit.reference_agent.status import StatusReport
from nylorun_a2a_kit.reference_agent.store import TERMINAL


@declare("plan-missing-on-terminal-update", "the terminal status update of a plan carries no plan", "PROG-01")
class PlanMissingOnTerminalUpdate(Scenarios):
    """The last update only says the turn is done; the task itself still carries the plan."""

    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        data, task_data = super().plan_data(view, first_view)
        finished = all(step["state"] == "done" for step in view["steps"])
        return ({} if finished else data), task_data


@declare("plan-skipped-on-a-step", "the status update after a plan's first step carries no plan", "PROG-01")
class PlanSkippedOnAStep(Scenarios):
    """One working update is written by the step's own code, which leaves the plan out."""

    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        data, task_data = super().plan_data(view, first_view)
        one_done = sum(step["state"] == "done" for step in view["steps"]) == 1
        return ({} if one_done else data), task_data


@declare("no-telemetry-on-cancel", "a canceled turn ends with no telemetry", "TEL-01", "TEL-02", "TEL-04")
class NoTelemetryOnCancel(StatusReport):
    """Totals are written where a turn finishes its work; a cancel ends it elsewhere."""

    def carries_telemetry(self, state: str) -> bool:
        return state in TERMINAL and state != "TASK_STATE_CANCELED"
