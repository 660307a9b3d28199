"""Faults of queued messages: refused instead of queued, lost, taken out of order or twice, shown as tasks."""

from __future__ import annotations

import copy
import sqlite3
from typing import Any

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.engine import Cancelling
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.listing import Page, Paging
from nylorun_a2a_kit.reference_agent.policies import (
    Access,
    Conversations,
    Queueing,
    context_busy,
    delivery,
    unsupported,
)
from nylorun_a2a_kit.reference_agent.queue import MessageQueue, Queued
from nylorun_a2a_kit.reference_agent.rpc import Problems, Reading
from nylorun_a2a_kit.reference_agent.store import Store, TaskFilter, TaskRecord, from_row


@declare("busy-refused", "a message to a busy context is refused CONTEXT_BUSY instead of queued", "QUEUE-01")
class BusyRefused(Queueing):
    def refusal(self, params: dict[str, Any], busy: TaskRecord) -> RpcError | None:
        return super().refusal(params, busy) or context_busy(busy)


@declare("explicit-queue-refused", 'delivery "queue" given explicitly is refused CONTEXT_BUSY', "QUEUE-01")
class ExplicitQueueRefused(Queueing):
    """Reads any delivery given as a wish not to wait: only a message without one is queued."""

    def refusal(self, params: dict[str, Any], busy: TaskRecord) -> RpcError | None:
        return context_busy(busy) if delivery(params) is not None else super().refusal(params, busy)


@declare("queued-retry-queued-again", "a retried messageId of a queued message is queued again as another", "SEND-04")
class QueuedRetryQueuedAgain(Conversations):
    """Knows the ids of messages turns have taken, not of messages still waiting: a retry of one is queued as
    a message of its own (under an id of the agent's, since the caller's is taken)."""

    def retried(self, caller: Caller, message: dict[str, Any]) -> str | None:
        known = super().retried(caller, message)
        waiting = self.queue.find(caller.agent_id, caller.subject, message["messageId"])
        if waiting is None or waiting.taken_by:
            return known
        message["messageId"] += "-again"
        return None


@declare("reject-ignored", 'delivery "reject" is queued like any other message', "QUEUE-06")
class RejectIgnored(Queueing):
    def refusal(self, params: dict[str, Any], busy: TaskRecord) -> RpcError | None:
        return None


@declare("reject-without-reason", 'delivery "reject" is refused with reason BUSY, not CONTEXT_BUSY', "QUEUE-06")
class RejectWithoutReason(Queueing):
    def refusal(self, params: dict[str, Any], busy: TaskRecord) -> RpcError | None:
        refusal = super().refusal(params, busy)
        if refusal is not None:
            refusal.reason = "BUSY"
        return refusal


@declare("queued-id-unknown", "GetTask does not know a queued message's task id", "QUEUE-02")
class QueuedIdUnknown(Access):
    def find(self, caller: Caller, task_id: str) -> TaskRecord | None:
        return self.store.get(task_id)


@declare("queued-listed", "ListTasks lists queued messages and counts them in totalSize", "QUEUE-03")
class QueuedListed(Paging):
    def __init__(self, store: Store):
        super().__init__(store)
        self.queue = MessageQueue(store.db)

    def page(self, caller: Caller, params: dict[str, Any]) -> Page:
        tasks, token, page_size, total = super().page(caller, params)
        if params.get("pageToken"):
            return tasks, token, page_size, total
        context_id = self.task_filter(caller, params).context_id
        queued = [q.as_task() for q in self.queue.waiting(caller.agent_id, caller.subject, context_id)]
        return queued + tasks, token, page_size, total + len(queued)


@declare("queued-cancelable", "CancelTask cancels a queued message", "QUEUE-04")
class QueuedCancelable(Cancelling):
    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if not task.scenario.get("queued"):
            return await super().cancel(task)
        self.engine.store.db.execute(
            "DELETE FROM queued WHERE agent_id=? AND subject=? AND message_id=?", (task.agent_id, task.subject, task.id)
        )
        task.state = "TASK_STATE_CANCELED"
        return task


@declare("queue-lifo", "queued messages are taken newest first", "QUEUE-05")
class QueueLifo(MessageQueue):
    def next(self, agent_id: str, subject: str, context_id: str) -> Queued | None:
        waiting = self.waiting(agent_id, subject, context_id)
        return waiting[-1] if waiting else None


@declare("queued-run-twice", "a queued message is taken by two turns", "QUEUE-05")
class QueuedRunTwice(MessageQueue):
    def __init__(self, db: sqlite3.Connection):
        super().__init__(db)
        self._taken_once: set[int] = set()

    def taken(self, queued: Queued, task_id: str) -> None:
        if queued.position in self._taken_once:
            super().taken(queued, task_id)
        else:  # its first turn leaves it waiting, for a second one to take
            self._taken_once.add(queued.position)


@declare("queue-keeps-newest", "a context keeps only its newest queued message: earlier ones are lost", "QUEUE-05")
class QueueKeepsNewest(MessageQueue):
    def add(self, agent_id: str, subject: str, context_id: str, *rest: Any) -> None:
        self.db.execute(
            "DELETE FROM queued WHERE agent_id=? AND subject=? AND context_id=? AND taken_by IS NULL",
            (agent_id, subject, context_id),
        )
        super().add(agent_id, subject, context_id, *rest)


@declare(
    "reject-when-conversation-has-tasks",
    'delivery "reject" is refused CONTEXT_BUSY whenever the conversation has a task, running or not (the busy test '
    "checks for a task row, not its state)",
    "QUEUE-06",
)
@wire.answers
def reject_when_conversation_has_tasks(call: wire.Call) -> None:
    earlier = _beside_a_rejectable_message(call)
    if earlier:
        call.answer_error(context_busy(earlier[0]))


def _beside_a_rejectable_message(call: wire.Call) -> list[TaskRecord] | None:
    """For a new message with delivery "reject" that was served a task: the other tasks of its conversation (a
    few); None for any other call."""
    message = call.params.get("message") or {}
    task = (call.answer.get("result") or {}).get("task")
    if call.method != "SendMessage" or delivery(call.params) != "reject" or message.get("taskId") or not task:
        return None
    found = TaskFilter(
        call.http.match_info.get("agent_id"), call.http.headers.get("Nylorun-Subject"), task["contextId"]
    )
    return [t for t in serving(call.http.app).engine.store.page(found, before_seq=None, limit=5) if t.id != task["id"]]


@declare(
    "reject-refused-in-a-new-conversation",
    'delivery "reject" to a conversation that has had no task yet is refused CONTEXT_BUSY (the busy test reads a '
    "conversation with no finished turn as busy)",
    "QUEUE-06",
)
@wire.answers
def reject_refused_in_a_new_conversation(call: wire.Call) -> None:
    if _beside_a_rejectable_message(call) == []:
        context = call.answer["result"]["task"]["contextId"]
        call.answer_error(unsupported("The conversation is busy.", "CONTEXT_BUSY", contextId=context))


_PLACEHOLDERS: dict[str, dict[str, Any]] = {}  # queued-id-kept-submitted: each queued answer, by its task id


@declare(
    "queued-id-kept-submitted",
    "GetTask of a queued message's id looks in the queue before the tasks, without 'not yet taken': once a turn "
    "took the message, its id still answers the queued placeholder, SUBMITTED",
    "QUEUE-02",
)
@wire.answers
def queued_id_kept_submitted(call: wire.Call) -> None:
    for task in call.tasks():
        if call.method == "SendMessage" and task["status"]["state"] == "TASK_STATE_SUBMITTED":
            _PLACEHOLDERS.setdefault(task["id"], copy.deepcopy(task))
    if call.method == "GetTask" and call.params.get("id") in _PLACEHOLDERS:
        call.answer.pop("error", None)
        call.answer["result"] = copy.deepcopy(_PLACEHOLDERS[call.params["id"]])


def _text_only(params: dict[str, Any]) -> dict[str, Any]:
    """The params with the message's parts cut to its text parts (one part at least kept)."""
    message = params.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        return params
    texts = [p for p in message["parts"] if isinstance(p, dict) and "text" in p]
    return {**params, "message": {**message, "parts": texts or message["parts"][:1]}} if texts else params


PARTS_TEXT_ONLY_OFF_THE_FIRST_PATH = declare(
    "parts-text-only-off-the-first-path",
    "a message queued in a busy conversation, or replying to a paused task, keeps only its text parts (the queue row "
    "and the reply path store the text; a message that starts a turn keeps every part)",
    "TASK-17",
)


@PARTS_TEXT_ONLY_OFF_THE_FIRST_PATH
class QueuedPartsTextOnly(MessageQueue):
    def add(self, agent_id: str, subject: str, context_id: str, params: dict[str, Any], *rest: Any) -> None:
        super().add(agent_id, subject, context_id, _text_only(params), *rest)


@PARTS_TEXT_ONLY_OFF_THE_FIRST_PATH
class ReplyPartsTextOnly(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        if method == "SendMessage" and isinstance((served.get("message") or {}).get("taskId"), str):
            served = _text_only(served)
        return served, problems


@declare(
    "queued-answer-history-uncut",
    "the answer to a queued message is rendered by its own serializer, from the conversation: it shows the running "
    "turn's history and the message, whatever historyLength asked",
    "SEND-12",
)
@wire.answers
def queued_answer_history_uncut(call: wire.Call) -> None:
    message = call.params.get("message") or {}
    if call.method != "SendMessage" or "historyLength" not in (call.params.get("configuration") or {}):
        return
    for task in call.tasks():
        if task.get("id") != message.get("messageId"):
            continue
        store = serving(call.http.app).engine.store
        row = store.db.execute(
            "SELECT * FROM tasks WHERE context_id=? AND state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') "
            "ORDER BY seq DESC LIMIT 1",
            (task.get("contextId"),),
        ).fetchone()
        running = from_row(TaskRecord, row).history if row else []
        task["history"] = [*running, {**message, "role": "ROLE_USER"}]
