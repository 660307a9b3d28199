"""Status messages and telemetry: what a status change says, and the totals a turn reports at its end."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.extensions import INTERACTIONS
from nylorun_a2a_kit.reference_agent.store import TaskRecord

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


def telemetry(scenario: dict[str, Any], fault) -> dict[str, Any]:
    """The turn's telemetry/v1 data: totals so far and the trace it belongs to."""
    steps = scenario.get("steps", 0)
    tokens = steps * TOKENS_PER_STEP
    data: dict[str, Any] = {}
    if not fault("telemetry-without-totals"):
        data["totals"] = {"steps": steps, "tokens": tokens, "costUsd": round(tokens * USD_PER_TOKEN, 6)}
    if not fault("telemetry-missing-trace-id"):
        trace_id = scenario.get("trace_id") or ""
        data["traceId"] = trace_id.upper() if fault("trace-id-uppercase") else trace_id
    return data


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


def message(task: TaskRecord, state: str, text: str | None, data: dict[str, Any], fault) -> dict[str, Any] | None:
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
        if fault("prompt-only-in-metadata") and INTERACTIONS in data:
            out["parts"] = [{"data": {"waiting": True}}]
        if fault("extension-data-in-parts"):
            out["parts"].append({"data": data})
        else:
            out["metadata"] = data
            if not fault("message-extensions-missing"):
                out["extensions"] = sorted(data)
    return out
