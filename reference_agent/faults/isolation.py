"""Faults of isolation: a task another subject owns told apart from one that does not exist, by one method."""

from __future__ import annotations

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import RpcError, task_not_found
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.policies import Access, Action
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord


@declare(
    "foreign-ended-task-told-apart",
    "a message naming another subject's ended task answers -32004 (the task has ended), not -32001",
    "ISO-01",
)
class ForeignEndedTaskToldApart(Access):
    """The ended-task check runs before the owner check, for messages only: the refusal shows the task exists."""

    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        ended_elsewhere = action == "continue" and task.agent_id == caller.agent_id and task.state in TERMINAL
        return ended_elsewhere or super().allows(caller, task, action)


@declare(
    "foreign-cancel-told-apart",
    "CancelTask of another subject's task answers -32001 with a message saying it is another caller's",
    "ISO-01",
)
class ForeignCancelToldApart(Access):
    def not_found(self, task_id: str, task: TaskRecord | None, action: Action) -> RpcError:
        if task is None or action != "cancel":
            return super().not_found(task_id, task, action)
        error = task_not_found(task_id)
        error.message = "Task belongs to another caller"
        return error
