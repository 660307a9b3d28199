"""Mutants of the read axis: a read (or a refused write) that changes what later reads show.

From the requirements' ``reads`` (fixtures/requirements/axes.py): each member names the read, and its mutant lets
the agent answer it as it would, then changes the stored task, its configs or the feed behind the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.feed import Feed
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.mutants.catalog import Mutant, mutant
from nylorun_a2a_kit.reference_agent.store import TaskRecord


def derive(requirements: dict[str, Any]) -> Iterator[Mutant]:
    for requirement in requirements.values():
        for member in requirement.reads:
            description, behaviour = BUILDERS[member]
            yield mutant(f"read/{member}/{TAILS[member]}", description, behaviour, breaks=(requirement.id,))


def _engine(call: wire.Call) -> Any:
    return serving(call.http.app).engine


def _after(method: str, change: Callable[[Any, wire.Call], None], *, refused: int | None = None) -> Any:
    """Answer ``method`` as the agent does, then ``change(engine, call)`` (after a refusal with code ``refused``)."""

    def answered(call: wire.Call) -> None:
        if call.method != method:
            return
        code = (call.answer.get("error") or {}).get("code")
        if (refused is None and "result" in call.answer) or (refused is not None and code == refused):
            with _engine(call).store.transaction():
                change(_engine(call), call)

    return wire.answers(answered)


def _stored(engine: Any, call: wire.Call) -> list[TaskRecord]:
    tasks = [engine.store.get(task["id"]) for task in call.tasks()]
    if call.method in ("CancelTask", "SendMessage") and not tasks:
        task_id = call.params.get("id") or (call.params.get("message") or {}).get("taskId")
        tasks = [engine.store.get(task_id)] if task_id else []
    return [task for task in tasks if task is not None]


def _history_cut(engine: Any, call: wire.Call) -> None:
    asked = call.params.get("historyLength")
    if isinstance(asked, int) and asked > 0:
        for task in _stored(engine, call):
            task.history = task.history[-asked:]
            engine.store.save(task)


def _artifacts_dropped(engine: Any, call: wire.Call) -> None:
    if not call.params.get("includeArtifacts"):
        for task in _stored(engine, call):
            task.artifacts = []
            engine.store.save(task)


def _status_touched(engine: Any, call: wire.Call) -> None:
    for task in _stored(engine, call):
        task.seq, task.status_ts = engine.store.next_status()
        engine.store.save(task)


def _others_canceled(engine: Any, call: wire.Call) -> None:
    """The conversation's running task, which the refused CancelTask did not name, is canceled."""
    for task in _stored(engine, call):
        running = engine.store.active_in_context(task.agent_id, task.subject, task.context_id)
        if running is not None and running.id != task.id:
            engine.set_status(running, "TASK_STATE_CANCELED", "Canceled.")


def _message_kept(engine: Any, call: wire.Call) -> None:
    message = call.params.get("message") or {}
    for task in _stored(engine, call):
        task.history = [*task.history, {**message, "taskId": task.id}]
        engine.store.save(task)


def _config_deleted(engine: Any, call: wire.Call) -> None:
    task = engine.store.get(call.params.get("taskId", ""))
    if task is not None:
        engine.push_configs.delete(task, call.params.get("id", ""))


def _first_config_deleted(engine: Any, call: wire.Call) -> None:
    task = engine.store.get(call.params.get("taskId", ""))
    configs = engine.push_configs.list(task) if task is not None else []
    if configs:
        engine.push_configs.delete(task, configs[0].id)


class _FeedReadOnce(Feed):
    """A page read after a cursor is handed out once: the same cursor read again finds no turn after it."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.read: set[tuple[str | None, str | None]] = set()

    def page(self, query: dict[str, str], subjects: set[str] | None) -> dict[str, Any]:
        page = super().page(query, subjects)
        key = (query.get("changedAfter"), query.get("sessionId"))
        if query.get("changedAfter") and key in self.read:
            return {"turns": [], "cursor": query["changedAfter"], "hasMore": False}
        self.read.add(key)
        return page


BUILDERS: dict[str, tuple[str, Any]] = {
    "GetTask.historyLength": (
        "GetTask with historyLength n keeps only the n messages it answered",
        _after("GetTask", _history_cut),
    ),
    "GetTask.status": (
        "GetTask counts as a status change: the task moves to the head of the list",
        _after("GetTask", _status_touched),
    ),
    "ListTasks.historyLength": (
        "ListTasks with historyLength n keeps only the n messages it answered of each task",
        _after("ListTasks", _history_cut),
    ),
    "ListTasks.includeArtifacts": (
        "ListTasks without includeArtifacts drops the listed tasks' artifacts",
        _after("ListTasks", _artifacts_dropped),
    ),
    "ListTasks.status": (
        "ListTasks counts as a status change of each task it lists",
        _after("ListTasks", _status_touched),
    ),
    "feed.changedAfter": (
        "a feed page after a cursor is read once: the same cursor again gives no turn",
        _FeedReadOnce,
    ),
    "GetTaskPushNotificationConfig": (
        "GetTaskPushNotificationConfig deletes the config it answers",
        _after("GetTaskPushNotificationConfig", _config_deleted),
    ),
    "ListTaskPushNotificationConfigs": (
        "ListTaskPushNotificationConfigs deletes the first config it lists",
        _after("ListTaskPushNotificationConfigs", _first_config_deleted),
    ),
    "CancelTask.refused": (
        "a CancelTask refused for an ended task counts as a status change of it",
        _after("CancelTask", _status_touched, refused=-32002),
    ),
    "CancelTask.refused.unnamed": (
        "a CancelTask refused for an ended task cancels the conversation's other, running task",
        _after("CancelTask", _others_canceled, refused=-32002),
    ),
    "SendMessage.refused": (
        "a message refused for an ended task is kept in its history",
        _after("SendMessage", _message_kept, refused=-32004),
    ),
}
TAILS = {
    "GetTask.historyLength": "history-cut",
    "GetTask.status": "status-touched",
    "ListTasks.historyLength": "history-cut",
    "ListTasks.includeArtifacts": "artifacts-dropped",
    "ListTasks.status": "status-touched",
    "feed.changedAfter": "read-once",
    "GetTaskPushNotificationConfig": "config-deleted",
    "ListTaskPushNotificationConfigs": "first-config-deleted",
    "CancelTask.refused": "status-touched",
    "CancelTask.refused.unnamed": "others-canceled",
    "SendMessage.refused": "message-kept",
}
