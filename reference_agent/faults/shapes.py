"""Faults in the shape of answers: what SHAPE-01's checks must find, whichever checks see the answers."""

from __future__ import annotations

import re
from typing import Any

from nylorun_a2a_kit.reference_agent.errors import ERROR_INFO
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare

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
