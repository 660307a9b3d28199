"""Faults of streaming, which the profile does not serve: an Agent that serves it anyway, rightly or not.

Each streamed fault's Agent says ``streaming: true`` on its card and serves both stream methods; all but
``card-streaming`` then break one member of one stream rule (one terminal state, one kind of task, one
kind of event), the way an implementation that got the common case right would.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.errors import RpcError, task_not_found
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import Fault, declare
from nylorun_a2a_kit.reference_agent.status import update_event
from nylorun_a2a_kit.reference_agent.store import TaskRecord
from nylorun_a2a_kit.reference_agent.streaming import Event, Render, Streaming


def _says_streaming(card: dict[str, Any], request: web.Request, config: AgentConfig) -> None:
    card["capabilities"]["streaming"] = True


def streamed(name: str, description: str, *breaks: str) -> Fault:
    """A fault of an Agent whose card declares streaming; apply it to the Streaming variant that serves it."""
    fault = declare(name, description, *breaks)
    fault(wire.cards(_says_streaming))
    return fault


@streamed(
    "card-streaming",
    "the card says streaming: true, and SendStreamingMessage and SubscribeToTask are served as A2A has them",
    "CARD-03",
    "UNSRV-01",
    "UNSRV-02",
)
class Served(Streaming):
    def serves(self, method: str) -> bool:
        return True


@streamed(
    "stream-open-after-failed",
    "a SendStreamingMessage stream stays open once its task failed (it closes at the other terminal states)",
    "STREAM-01",
)
class OpenAfterFailed(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def closes_at(self, state: str, method: str) -> bool:
        held = method == "SendStreamingMessage" and state == "TASK_STATE_FAILED"
        return super().closes_at(state, method) and not held


@streamed(
    "stream-open-after-cancel",
    "a stream stays open once its task is canceled (it closes at the other terminal states)",
    "STREAM-01",
    "STREAM-02",
)
class OpenAfterCancel(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def closes_at(self, state: str, method: str) -> bool:
        return super().closes_at(state, method) and state != "TASK_STATE_CANCELED"


@streamed(
    "stream-artifact-of-another-task",
    "artifact updates on a stream name the context id as their taskId (status updates name the task)",
    "STREAM-01",
)
class ArtifactOfAnotherTask(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def shown(self, event: Event) -> Event:
        update = event.get("artifactUpdate")
        if update is None:
            return event
        return {"artifactUpdate": {**update, "taskId": update["contextId"]}}


@streamed(
    "subscribe-starts-with-update",
    "SubscribeToTask on a working task begins with its latest status update, not the Task (a paused one's "
    "stream begins with the Task)",
    "STREAM-02",
)
class SubscribeStartsWithUpdate(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def first(self, task: TaskRecord, method: str, render: Render) -> Event:
        if method == "SubscribeToTask" and task.state == "TASK_STATE_WORKING":
            return update_event(task)
        return super().first(task, method, render)


@streamed(
    "subscribe-stale-snapshot",
    "the Task a SubscribeToTask stream begins with shows the task as it was submitted, not its current state",
    "STREAM-02",
)
class StaleSnapshot(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def first(self, task: TaskRecord, method: str, render: Render) -> Event:
        event = super().first(task, method, render)
        if method == "SubscribeToTask":
            status = event["task"]["status"]
            event["task"]["status"] = {"state": "TASK_STATE_SUBMITTED", "timestamp": status["timestamp"]}
        return event


def _ended_streams(state: str):
    """A variant whose SubscribeToTask streams a task ended ``state`` (its Task, then the stream closes)."""

    class EndedStreams(Streaming):
        def serves(self, method: str) -> bool:
            return True

        def refusal(self, task: TaskRecord) -> RpcError | None:
            return None if task.state == state else super().refusal(task)

    EndedStreams.__name__ = EndedStreams.__qualname__ = f"Streams{state.title().replace('_', '')}"
    return EndedStreams


streamed(
    "subscribe-completed-task-streams",
    "SubscribeToTask on a completed task answers a stream (the Task, then it closes) instead of "
    "UnsupportedOperationError; failed and canceled tasks are refused",
    "STREAM-03",
)(_ended_streams("TASK_STATE_COMPLETED"))
streamed(
    "subscribe-canceled-task-streams",
    "SubscribeToTask on a canceled task answers a stream (the Task, then it closes) instead of "
    "UnsupportedOperationError; completed and failed tasks are refused",
    "STREAM-03",
)(_ended_streams("TASK_STATE_CANCELED"))


@streamed(
    "subscribe-failed-task-not-found",
    "SubscribeToTask on a failed task answers TaskNotFoundError, as if it were gone; completed and canceled "
    "tasks get UnsupportedOperationError",
    "STREAM-03",
)
class FailedNotFound(Streaming):
    def serves(self, method: str) -> bool:
        return True

    def refusal(self, task: TaskRecord) -> RpcError | None:
        return task_not_found(task.id) if task.state == "TASK_STATE_FAILED" else super().refusal(task)


@declare(
    "subscribe-undeclared",
    "the card says streaming: false, yet SubscribeToTask on a running task answers a stream "
    "(SendStreamingMessage is refused)",
    "STREAM-04",
    "UNSRV-02",
)
class SubscribeUndeclared(Streaming):
    def serves(self, method: str) -> bool:
        return method == "SubscribeToTask"
