"""Faults of the push config methods, each on one method or one case: a missing task, another subject's
task, an Agent without a push secret."""

from __future__ import annotations

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import invalid_params
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.policies import Access, Action
from nylorun_a2a_kit.reference_agent.rpc import PUSH_METHODS
from nylorun_a2a_kit.reference_agent.store import TaskRecord

PUSH_OFF = ("--a2a-reference-push=off",)


@declare(
    "config-list-cross-subject",
    "ListTaskPushNotificationConfigs lists the configs of another subject's task; the other methods refuse",
    "PUSH-16",
)
class ConfigListCrossSubject(Access):
    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        return (action == "list-configs" and task.agent_id == caller.agent_id) or super().allows(caller, task, action)


@declare(
    "inline-config-invalid-without-push",
    "without a push secret, a SendMessage carrying a push config is refused -32602, not -32003",
    "PUSH-03",
    run_with=PUSH_OFF,
)
@wire.refusals("PUSH_NOT_SUPPORTED", ("SendMessage",))
def inline_config_invalid_without_push(call: wire.Call) -> None:
    call.answer_error(invalid_params([("configuration.taskPushNotificationConfig", "is not a known field")]))


@declare(
    "push-unsupported-detail-untyped",
    "without a push secret, the -32003 of the config methods carries its ErrorInfo without @type",
    "ERR-02",
    "ERR-10",
    "ERR-11",
    run_with=PUSH_OFF,
)
@wire.refusals("PUSH_NOT_SUPPORTED", PUSH_METHODS)
def push_unsupported_detail_untyped(call: wire.Call) -> None:
    for detail in call.answer["error"]["data"]:
        detail.pop("@type", None)
