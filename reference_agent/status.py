"""Status messages and telemetry: what a status change says, and the totals a turn reports at its end."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord

TOKENS_PER_STEP = 180
USD_PER_TOKEN = 0.000002
DEFAULT_TEXT = {
    "TASK_STATE_WORKING": "Working on it.",
    "TASK_STATE_COMPLETED": "Done.",
    "TASK_STATE_FAILED": "Failed.",
    "TASK_STATE_CANCELED": "Canceled.",
    "TASK_STATE_INPUT_REQUIRED": "Input is needed.",
    "TASK_STATE_AUTH_REQUIRED": "Authorization is needed.",
}


def update_event(task: TaskRecord) -> dict[str, Any]:
    """The StreamResponse a push delivers for the task's latest status change."""
    status: dict[str, Any] = {"state": task.state, "timestamp": task.status_ts}
    if task.status_message:
        status["message"] = task.status_message
    return {"statusUpdate": {"taskId": task.id, "contextId": task.context_id, "status": status}}


def artifact_event(task: TaskRecord, artifact: dict[str, Any]) -> dict[str, Any]:
    """The StreamResponse a push delivers for a new artifact."""
    update = {"taskId": task.id, "contextId": task.context_id, "artifact": artifact, "append": False, "lastChunk": True}
    return {"artifactUpdate": update}


class StatusReport:
    """What a status change says: its status message, and the turn's telemetry at its end."""

    def carries_telemetry(self, state: str) -> bool:
        return state in TERMINAL

    def telemetry(self, scenario: dict[str, Any]) -> dict[str, Any]:
        """The turn's telemetry/v1 data: totals so far and the trace it belongs to."""
        steps = scenario.get("steps", 0)
        tokens = steps * TOKENS_PER_STEP
        return {
            "totals": {"steps": steps, "tokens": tokens, "costUsd": round(tokens * USD_PER_TOKEN, 6)},
            "traceId": scenario.get("trace_id") or "",
        }

    def message(self, task: TaskRecord, state: str, text: str | None, data: dict[str, Any]) -> dict[str, Any] | None:
        """The status message of a change: its text, and extension data keyed by URI in its metadata."""
        if text is None and not data:
            return None
        out: dict[str, Any] = {
            "messageId": f"{task.id}-status-{task.seq}",
            "role": "ROLE_AGENT",
            "parts": [{"text": text if text is not None else DEFAULT_TEXT.get(state, "")}],
            "contextId": task.context_id,
            "taskId": task.id,
        }
        if data:
            out["metadata"] = data
            out["extensions"] = sorted(data)
        return out
