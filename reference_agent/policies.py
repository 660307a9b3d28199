"""The engine's decisions about messages, conversations and tasks, each a strategy the engine calls through.

Every policy sees the store, the message queue and the configuration; the engine keeps the flow (what is
written together, who is woken, which turn runs) and asks its policies what to do at each step.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import uuid
from typing import Any, Literal

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params, task_not_found, unsupported
from nylorun_a2a_kit.reference_agent.queue import MessageQueue
from nylorun_a2a_kit.reference_agent.store import ACTIVE, TERMINAL, Store, TaskRecord

# What a caller does with a task it names: each is allowed only on the caller's own tasks.
# The config methods each name their own: one may be guarded apart from the others.
Action = Literal["get", "send", "continue", "cancel", "configure", "read-config", "list-configs", "delete-config"]
TRACEPARENT_VERSION = "00"


class Policy:
    def __init__(self, store: Store, queue: MessageQueue, config: AgentConfig):
        self.store, self.queue, self.config = store, queue, config


class Access(Policy):
    """Which task a caller's task id names, and whether the caller may act on it."""

    def find(self, caller: Caller, task_id: str) -> TaskRecord | None:
        """A task, or a queued message's: the task that took it, or the task it waits to be. A queued message's id is
        its caller's messageId, which may be another caller's task id too: the caller's own comes first."""
        task = self.store.get(task_id)
        if task is None or (task.agent_id, task.subject) != (caller.agent_id, caller.subject):
            queued = self.queue.find(caller.agent_id, caller.subject, task_id)
            if queued is not None:
                task = self.store.get(queued.taken_by) if queued.taken_by else queued.as_task()
        return task

    def sent_to(self, caller: Caller, message_id: str, task_id: str) -> TaskRecord | None:
        """The task a message the caller sent before went to: a message queued under its own id is found in the
        queue first, since the caller may hold a task of that id too."""
        if task_id == message_id:
            queued = self.queue.find(caller.agent_id, caller.subject, message_id)
            if queued is not None:
                return self.store.get(queued.taken_by) if queued.taken_by else queued.as_task()
        return self.find(caller, task_id)

    def allows(self, caller: Caller, task: TaskRecord, action: Action) -> bool:
        """Only on the caller's own tasks: its Agent's and its subject's."""
        return task.agent_id == caller.agent_id and task.subject == caller.subject

    def not_found(self, task_id: str, task: TaskRecord | None, action: Action) -> RpcError:
        """The answer for a task the caller may not ``action``: one that does not exist, or is not the caller's,
        answers the same (the caller cannot tell them apart)."""
        return task_not_found(task_id)


class Conversations(Policy):
    """Which task a message is for, and which conversation a new turn joins."""

    def retried(self, caller: Caller, message: dict[str, Any]) -> str | None:
        """The task a message with this messageId already went to: a retry answers it again."""
        return self.store.task_for_message(caller.agent_id, caller.subject, message["messageId"])

    def continued(self, message: dict[str, Any]) -> str | None:
        """The task a message continues: the one it names."""
        return message.get("taskId")

    def context_id(self, message: dict[str, Any]) -> str:
        """The conversation a new turn joins: the one the message names, or a new one."""
        return message.get("contextId") or str(uuid.uuid4())

    def running(self, caller: Caller, context_id: str) -> TaskRecord | None:
        """The task that keeps the caller's conversation busy, if any."""
        return self.store.active_in_context(caller.agent_id, caller.subject, context_id)


class Continuation(Policy):
    """When a message may continue a task, and where the task's turn picks up."""

    def check(self, task: TaskRecord, message: dict[str, Any]) -> None:
        """Raises unless the message may continue ``task``."""
        self.check_context(task, message)
        self.check_state(task)

    def check_context(self, task: TaskRecord, message: dict[str, Any]) -> None:
        if message.get("contextId") and message["contextId"] != task.context_id:
            raise invalid_params([("message.contextId", "does not match the context of message.taskId")])

    def check_state(self, task: TaskRecord) -> None:
        if task.state in TERMINAL:
            raise unsupported("The task has ended; start a new task.", "TASK_TERMINAL", taskId=task.id)
        if task.state in ACTIVE:
            raise unsupported("The task is still running.", "CONTEXT_BUSY", taskId=task.id, contextId=task.context_id)

    def picks_up(self, task: TaskRecord, message: dict[str, Any]) -> None:
        """The paused turn goes on from its answered stage; a new stage records its own outputs."""
        task.scenario.update(stage="answered", outputs=0)


class Queueing(Policy):
    """Whether a message to a busy conversation is queued or refused."""

    def refusal(self, params: dict[str, Any], busy: TaskRecord) -> RpcError | None:
        """Refused only when the caller asked for delivery "reject"."""
        if delivery(params) != "reject":
            return None
        return context_busy(busy)


class Turns(Policy):
    """How a new turn begins: the trace it joins, and its task's id."""

    def trace_id(self, traceparent: Any) -> str:
        """The caller's trace when it names a valid one, else a new trace."""
        return (trace_id_of(traceparent) if isinstance(traceparent, str) else None) or secrets.token_hex(16)

    def task_id(self, caller: Caller, context_id: str, turn: int) -> str:
        """A digest of the Agent, subject, context and turn number: made from them, yet telling nothing."""
        digest = hashlib.sha256(f"{caller.agent_id}\n{caller.subject}\n{context_id}\n{turn}".encode())
        return "t-" + base64.b32encode(digest.digest()[:15]).decode().lower()

    def insert(self, task: TaskRecord) -> None:
        self.store.insert(task)


def trace_id_of(traceparent: str | None) -> str | None:
    """The trace id of a W3C ``traceparent`` (``00-<32 hex>-<16 hex>-<2 hex>``), if it is a valid one."""
    parts = (traceparent or "").strip().split("-")  # W3C: lowercase hex only
    if len(parts) != 4 or parts[0] != TRACEPARENT_VERSION:
        return None
    trace_id, span_id = parts[1], parts[2]
    valid = len(trace_id) == 32 and len(span_id) == 16 and all(c in "0123456789abcdef" for c in trace_id + span_id)
    return trace_id if valid and set(trace_id) != {"0"} and set(span_id) != {"0"} else None


def delivery(params: dict[str, Any]) -> str | None:
    """``delivery`` from the message's metadata, or else the request's (the pages name only "metadata")."""
    for metadata in ((params.get("message") or {}).get("metadata"), params.get("metadata")):
        if isinstance(metadata, dict) and isinstance(metadata.get("delivery"), str):
            return metadata["delivery"]
    return None


def context_busy(busy: TaskRecord) -> RpcError:
    """The refusal of a message to a conversation whose task is still running."""
    return unsupported(
        "The conversation is busy with a running task.", "CONTEXT_BUSY", taskId=busy.id, contextId=busy.context_id
    )
