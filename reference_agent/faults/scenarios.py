"""Faults of the scenarios' work: what a turn publishes, echoes, plans, reads, and how it ends."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from nylorun_a2a_kit.reference_agent.extensions import EFFECTS, PROGRESS
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.scenarios import REPORTS, Scenarios
from nylorun_a2a_kit.reference_agent.turn import Turn

Parts = list[dict[str, Any]]


@declare("complete-without-url-part", "the complete scenario publishes no url part", "PART-02")
class CompleteWithoutUrlPart(Scenarios):
    reports = tuple(report for report in REPORTS if not report[2])


@declare(
    "url-part-unfetchable", "a url part names a file the Agent does not serve (404); every kind is there", "PART-02"
)
@wire.answers
def url_part_unfetchable(call: wire.Call) -> None:
    for task in call.tasks():
        for part in (p for a in task.get("artifacts") or [] for p in a.get("parts") or []):
            if "url" in part:
                part["url"] += ".gone"


@declare("fail-reported-completed", "a failed turn ends TASK_STATE_COMPLETED", "TASK-13")
class FailReportedCompleted(Scenarios):
    async def fail(self, turn: Turn) -> None:
        turn.set_state("TASK_STATE_COMPLETED", "The scenario failed, as asked.")


@declare("refusal-approves", "approved: false runs the action as if approved", "INTER-05")
class RefusalApproves(Scenarios):
    def approves(self, answer: dict[str, Any]) -> bool:
        return True


# -- the echo's parts


@declare("drops-raw-parts", "raw parts are dropped from echoed artifacts", "PART-01")
class DropsRawParts(Scenarios):
    def echoed(self, parts: Parts) -> Parts:
        return [p for p in super().echoed(parts) if "raw" not in p] or [{"text": ""}]


def _echoing_as(kind: str, change: Any) -> type[Scenarios]:
    """Scenarios whose echo answers each part of ``kind`` (text, url, data) as ``change(part)``."""

    class Echoing(Scenarios):
        def echoed(self, parts: Parts) -> Parts:
            return [change(part) if kind in part else part for part in super().echoed(parts)]

    return Echoing


declare("text-parts-ascii-only", "text parts lose their non-ASCII characters", "PART-01")(
    _echoing_as("text", lambda part: {**part, "text": part["text"].encode("ascii", "replace").decode()})
)
declare("url-parts-as-text", "url parts come back as text parts holding the URL", "PART-01")(
    _echoing_as("url", lambda part: {"text": part["url"]})
)
declare("data-parts-as-text", "data parts come back as text parts holding JSON", "PART-01")(
    _echoing_as("data", lambda part: {"text": json.dumps(part["data"])})
)


# -- effects/v1: a lost outcome


@declare("uncertain-marked-failed", "a lost outcome fails the task instead of keeping it WORKING", "EFF-01")
class UncertainMarkedFailed(Scenarios):
    async def uncertain(self, turn: Turn) -> None:
        turn.step()
        turn.set_state("TASK_STATE_FAILED", "The payment's outcome is unknown.")


@declare("uncertain-without-id", "a lost outcome carries no effects/v1 data", "EFF-01")
class UncertainWithoutId(Scenarios):
    def uncertain_data(self, turn: Turn) -> dict[str, Any]:
        return {}


@declare("uncertain-empty-id", "effects/v1 uncertain is an empty string", "EFF-02", "EXT-06")
class UncertainEmptyId(Scenarios):
    def uncertain_data(self, turn: Turn) -> dict[str, Any]:
        return {EFFECTS: {"uncertain": ""}}


# -- progress/v1: the plan


@declare("plan-21-steps", "a long plan shows more than 20 steps", "PROG-01")
class Plan21Steps(Scenarios):
    def plan_limit(self, labels: list[str]) -> int:
        return len(labels)


@declare("plan-step-without-state", "plan steps carry no state", "PROG-02", "EXT-07")
class PlanStepWithoutState(Scenarios):
    def plan_view(self, labels: list[str], done: int) -> dict[str, Any]:
        view = super().plan_view(labels, done)
        for step in view["steps"]:
            del step["state"]
        return view


@declare("no-plan", "a turn with a plan answers no progress/v1 data", "PROG-01")
class NoPlan(Scenarios):
    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {}


@declare("stale-plan-on-get", "GetTask carries the first plan, not the latest", "PROG-03")
class StalePlanOnGet(Scenarios):
    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return {PROGRESS: view}, {PROGRESS: first_view}


# -- reading input, using tools


@declare("url-input-ignored", "a url file part in a message is not read", "FILE-04")
class UrlInputIgnored(Scenarios):
    async def fetch(self, session: aiohttp.ClientSession, url: str) -> tuple[int, bytes]:
        status, _ = await super().fetch(session, url)
        return status, b""


@declare("leaks-tool-call", "a tool call and its result appear in the task's history", "PROG-04")
class LeaksToolCall(Scenarios):
    def use_tool(self, turn: Turn, call: dict[str, Any], result: dict[str, Any]) -> None:
        super().use_tool(turn, call, result)
        turn.add_agent_message([{"data": {"toolCall": call, "toolResult": result}}])
