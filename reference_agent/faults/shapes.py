"""Faults in the shape of answers: what SHAPE-01's checks must find, whichever checks see the answers."""

from __future__ import annotations

import re
from typing import Any

from nylorun_a2a_kit.reference_agent.errors import ERROR_INFO
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.status import StatusReport
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord

CONFIG_RESULTS = ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig")


def _snake(value: Any) -> Any:
    """The value with every object key written in snake_case (contextId → context_id)."""
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): _snake(member) for key, member in value.items()}
    if isinstance(value, list):
        return [_snake(item) for item in value]
    return value


@declare("snake-case-results", "results name their fields in snake_case (context_id), not camelCase", "SHAPE-01")
@wire.answers
def snake_case_results(call: wire.Call) -> None:
    if "result" in call.answer:
        call.answer["result"] = _snake(call.answer["result"])


@declare("error-info-metadata-lists", "ErrorInfo metadata values are lists, not strings", "SHAPE-01")
@wire.answers
def error_info_metadata_lists(call: wire.Call) -> None:
    for detail in (call.answer.get("error") or {}).get("data") or []:
        if detail.get("@type") == ERROR_INFO and isinstance(detail.get("metadata"), dict):
            detail["metadata"] = {key: [value] for key, value in detail["metadata"].items()}


@declare("push-config-without-url", "push config answers leave out the config's url", "SHAPE-01")
@wire.answers
def push_config_without_url(call: wire.Call) -> None:
    result = call.answer.get("result")
    if call.method in CONFIG_RESULTS and isinstance(result, dict):
        result.pop("url", None)


@declare(
    "terminal-status-without-context",
    "the status message of a task's terminal state carries no contextId (its other messages do)",
    "SHAPE-02",
)
class TerminalStatusWithoutContext(StatusReport):
    def message(self, task: TaskRecord, state: str, text: str | None, data: dict[str, Any]) -> dict[str, Any] | None:
        shown = super().message(task, state, text, data)
        if shown is not None and state in TERMINAL:
            shown.pop("contextId", None)
        return shown


@declare("artifact-id-repeated", "a task with three or more artifacts repeats its second artifact's id", "SHAPE-02")
@wire.answers
def artifact_id_repeated(call: wire.Call) -> None:
    for task in call.tasks():
        artifacts = task.get("artifacts") or []
        if len(artifacts) >= 3:
            artifacts[2]["artifactId"] = artifacts[1]["artifactId"]


@declare(
    "agent-message-other-context",
    "GetTask shows the Agent's history messages under another conversation's contextId",
    "SHAPE-02",
)
@wire.answers
def agent_message_other_context(call: wire.Call) -> None:
    if call.method != "GetTask":
        return
    for task in call.tasks():
        for message in task.get("history") or []:
            if isinstance(message, dict) and message.get("role") == "ROLE_AGENT":
                message["contextId"] = f"{task.get('contextId')}-other"
