"""Faults of isolation: a task another subject owns told apart from one that does not exist, by one method; another
Agent's task taken for the caller's; a queued message's configs shared, or the message itself served, to whoever
names its id."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import RpcError, task_not_found
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.policies import Access, Action
from nylorun_a2a_kit.reference_agent.push import Config, PushConfigs
from nylorun_a2a_kit.reference_agent.queue import Queued
from nylorun_a2a_kit.reference_agent.rpc import Problems, Reading
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord, from_row


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


@declare(
    "foreign-agent-task-continued",
    "a message naming the caller's own task on another Agent of the Runtime continues that task",
    "ISO-05",
)
class ForeignAgentTaskContinued(Access):
    """The owner check of a message reads the subject only: the same subject's task on another Agent is its own."""

    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        return (action == "continue" and task.subject == caller.subject) or super().allows(caller, task, action)


@declare(
    "queued-configs-shared",
    "a queued message's push configs are held by its id alone: another subject or Agent that queues the same "
    "messageId reads the first's config, and its own replaces it",
    "ISO-06",
)
class QueuedConfigsShared(PushConfigs):
    """As the agent once kept them: a queued message's configs keyed by its id (the client's messageId) and the
    config's id, whoever queued it."""

    def create(self, task: Any, params: dict[str, Any], extensions: frozenset[str]) -> Config:
        if task.scenario.get("queued") and params.get("id"):
            self.db.execute(
                "UPDATE push_configs SET state='replaced' WHERE task_id=? AND queued!=0 AND id=?",
                (task.id, params["id"]),
            )
        return super().create(task, params, extensions)

    def get(self, task: Any, config_id: str) -> Config | None:
        if not task.scenario.get("queued"):
            return super().get(task, config_id)
        shared = self._shared(task, "AND id=?", config_id)
        return shared[-1] if shared else None

    def list(self, task: Any) -> list[Config]:
        return self._shared(task, "") if task.scenario.get("queued") else super().list(task)

    def _shared(self, task: Any, more: str, *args: str) -> list[Config]:
        rows = self.db.execute(
            f"SELECT * FROM push_configs WHERE task_id=? AND queued!=0 {more} AND state='active' ORDER BY key",
            (task.id, *args),
        )
        return [from_row(Config, row) for row in rows]


@declare(
    "queued-found-by-id-alone",
    "a queued message is found by its messageId alone and served to whoever names it: another subject or Agent "
    "that names the id reads it, cancels it, continues it and reads or writes its configs",
    "ISO-05",
    "ISO-06",
)
class QueuedFoundByIdAlone(Access):
    """The queue looked up by the client's messageId without its owner, and a queued message taken as the caller's."""

    def find(self, caller: Caller, task_id: str) -> TaskRecord | None:
        task = super().find(caller, task_id)
        if task is not None:
            return task
        row = self.queue.db.execute(
            "SELECT * FROM queued WHERE message_id=? AND taken_by IS NULL ORDER BY position DESC", (task_id,)
        ).fetchone()
        return from_row(Queued, row).as_task() if row else None

    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        return bool(task.scenario.get("queued")) or super().allows(caller, task, action)


_CONFIGURED: ContextVar[bool] = ContextVar("configured", default=False)  # the request is a configured SendMessage


CONFIGURED_SEND_SKIPS_THE_OWNER_CHECK = declare(
    "configured-send-skips-the-owner-check",
    "a SendMessage with a configuration (returnImmediately, historyLength, an inline push config…) goes the way of "
    "the configured path, which looks the task it names up by its id alone, queued messages too, and continues it "
    "whoever owns it",
    "ISO-01",
    "ISO-05",
    "ISO-06",
)


@CONFIGURED_SEND_SKIPS_THE_OWNER_CHECK
class ConfiguredSendRead(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        _CONFIGURED.set(method == "SendMessage" and bool(params.get("configuration")))
        return super().params(method, params)


@CONFIGURED_SEND_SKIPS_THE_OWNER_CHECK
class ConfiguredSendSkipsTheOwnerCheck(Access):
    def find(self, caller: Caller, task_id: str) -> TaskRecord | None:
        task = super().find(caller, task_id)
        if task is not None or not _CONFIGURED.get():
            return task
        row = self.queue.db.execute(
            "SELECT * FROM queued WHERE message_id=? ORDER BY position DESC", (task_id,)
        ).fetchone()
        return from_row(Queued, row).as_task() if row else None

    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        return (_CONFIGURED.get() and action in ("continue", "send")) or super().allows(caller, task, action)
