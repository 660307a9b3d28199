"""Faults of streaming, which the profile does not serve: an Agent that serves it anyway, rightly or not.

Each streamed fault's Agent says ``streaming: true`` on its card and serves both stream methods; all but
``card-streaming`` then break one member of one stream rule (one terminal state, one kind of task, one
kind of event), the way an implementation that got the common case right would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.engine import Engine
from nylorun_a2a_kit.reference_agent.errors import RpcError, task_not_found, unsupported
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.rpc import Reading
from nylorun_a2a_kit.reference_agent.status import update_event
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord
from nylorun_a2a_kit.reference_agent.streaming import METHODS as STREAM_METHODS
from nylorun_a2a_kit.reference_agent.streaming import Event, Render, Streaming


def _says_streaming(card: dict[str, Any], request: web.Request, config: AgentConfig) -> None:
    card["capabilities"]["streaming"] = True


def _serves_both(self: Streaming, method: str) -> bool:
    return True


def streamed(name: str, description: str, *breaks: str) -> Callable[[type], type]:
    """A fault of an Agent whose card declares streaming and that serves both stream methods; apply it to the
    Streaming variant that serves them (rightly, or with its one rule broken), and to any other part it changes."""
    fault = declare(name, description, *breaks)
    fault(wire.cards(_says_streaming))

    def served(variant: type) -> type:
        if issubclass(variant, Streaming):
            variant.serves = _serves_both
        return fault(variant)

    return served


@streamed(
    "card-streaming",
    "the card says streaming: true, and SendStreamingMessage and SubscribeToTask are served as A2A has them",
    "CARD-03",
    "UNSRV-01",
    "UNSRV-02",
)
class Served(Streaming):
    """Both stream methods, served as A2A has them."""


@streamed(
    "stream-open-after-failed",
    "a SendStreamingMessage stream stays open once its task failed (it closes at the other terminal states)",
    "STREAM-01",
)
class OpenAfterFailed(Streaming):
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
    def closes_at(self, state: str, method: str) -> bool:
        return super().closes_at(state, method) and state != "TASK_STATE_CANCELED"


@streamed(
    "stream-closes-at-auth-required",
    "a stream closes when its task pauses for authorization (AUTH_REQUIRED), as at a terminal state",
    "STREAM-07",
)
class ClosesAtAuthRequired(Streaming):
    def closes_at(self, state: str, method: str) -> bool:
        return super().closes_at(state, method) or state == "TASK_STATE_AUTH_REQUIRED"


@streamed(
    "stream-artifact-of-another-task",
    "artifact updates on a stream name the context id as their taskId (status updates name the task)",
    "STREAM-01",
)
class ArtifactOfAnotherTask(Streaming):
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
    def first(self, task: TaskRecord, method: str, render: Render) -> Event:
        event = super().first(task, method, render)
        if method == "SubscribeToTask":
            status = event["task"]["status"]
            event["task"]["status"] = {"state": "TASK_STATE_SUBMITTED", "timestamp": status["timestamp"]}
        return event


def _ended_streams(state: str):
    """A variant whose SubscribeToTask streams a task ended ``state`` (its Task, then the stream closes)."""

    class EndedStreams(Streaming):
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


# -- the errors of the stream methods (A2A §3.1.2 and §3.1.6 Errors)


Send = Callable[[Engine, Caller, dict[str, Any]], Awaitable[TaskRecord]]


def _streamed_despite(
    refusal: str, instead: Callable[[Send, Engine, Caller, dict[str, Any]], Awaitable[TaskRecord | None]]
) -> type[Streaming]:
    """A variant whose SendStreamingMessage, where SendMessage refuses the message with ``refusal``, streams
    the task ``instead(send, engine, caller, params)`` answers (``send``: the stream's own), if it answers one."""

    class StreamedDespite(Streaming):
        async def send(self, engine: Engine, caller: Caller, params: dict[str, Any]) -> TaskRecord:
            try:
                return await super().send(engine, caller, params)
            except RpcError as refused:
                task = await instead(super().send, engine, caller, params) if refused.name == refusal else None
                if task is None:
                    raise
                return task

    StreamedDespite.__name__ = StreamedDespite.__qualname__ = f"StreamedDespite{refusal}"
    return StreamedDespite


async def _the_ended_task(send: Send, engine: Engine, caller: Caller, params: dict[str, Any]) -> TaskRecord | None:
    """The task the message continues, when that task is in a terminal state."""
    ended = engine.store.get(params["message"].get("taskId") or "")
    return ended if ended is not None and ended.state in TERMINAL else None


async def _a_new_task(send: Send, engine: Engine, caller: Caller, params: dict[str, Any]) -> TaskRecord:
    """A new task of the message, its taskId left out."""
    message = {k: v for k, v in params["message"].items() if k != "taskId"}
    return await send(engine, caller, {**params, "message": message})


streamed(
    "stream-continues-ended-task",
    "SendStreamingMessage continuing a task in a terminal state answers a stream of the task instead of "
    "UnsupportedOperationError (SendMessage refuses it)",
    "STREAM-06",
)(_streamed_despite("UnsupportedOperationError", _the_ended_task))
streamed(
    "stream-unknown-task-starts-new",
    "SendStreamingMessage naming a taskId that does not exist starts a new task and streams it (SendMessage "
    "refuses it)",
    "STREAM-06",
)(_streamed_despite("TaskNotFoundError", _a_new_task))


@streamed(
    "subscribe-unknown-task-unsupported",
    "SubscribeToTask on a task id that does not exist answers UnsupportedOperationError, not TaskNotFoundError",
    "STREAM-06",
)
class UnknownTaskUnsupported(Streaming):
    def subscribed(self, engine: Engine, caller: Caller, task_id: str) -> TaskRecord:
        if engine.store.get(task_id) is None:
            raise unsupported("No such task to subscribe to.", "OPERATION_NOT_SUPPORTED", taskId=task_id)
        return super().subscribed(engine, caller, task_id)


# -- several streams of one task (A2A §3.5.2)


@streamed(
    "second-stream-misses-artifacts",
    "with two streams open on a task, artifact updates reach only the first (status updates reach both)",
    "STREAM-05",
)
class SecondStreamMissesArtifacts(Streaming):
    def publish(self, task_id: str, event: Event) -> None:
        if "artifactUpdate" not in event:
            return super().publish(task_id, event)
        for queue in self._open.get(task_id, ())[:1]:
            queue.put_nowait(event)


@streamed(
    "closing-a-stream-ends-all",
    "closing one stream of a task unsubscribes all of them: the others stay open but get no further events",
    "STREAM-05",
)
class ClosingOneEndsAll(Streaming):
    def closed(self, task_id: str, queue: Any) -> None:
        self._open.pop(task_id, None)


# -- a notification to a stream method (JSON-RPC 2.0 §4.1)

streamed_notifications = streamed(
    "notification-streams-answered",
    "a notification to a stream method gets its stream of responses (with id null); other notifications get no reply",
    "ERR-12",
)


@streamed_notifications
class NotificationStreamsServed(Streaming):
    """Both stream methods, served as A2A has them."""


@streamed_notifications
class NotificationStreamsAnswered(Reading):
    def replies(self, request: dict[str, Any], error: RpcError | None) -> bool:
        streams = error is None and request.get("method") in STREAM_METHODS
        return streams or super().replies(request, error)
