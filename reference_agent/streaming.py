"""Streaming (A2A §3.1.2, §3.1.6, §9.4.2, §9.4.6), which the profile does not serve.

The card says ``streaming: false`` and both stream methods are refused with UnsupportedOperationError. The
streams are implemented all the same, so that the kit's streaming checks are proven against an Agent that
serves them: a fault's variant of :class:`Streaming` serves them (its card saying so), rightly or with one
rule broken. Every event a task announces (its status changes, its artifacts) reaches each stream open on
it, in the order announced; a stream closes once its task is terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import RpcError, unsupported
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord

METHODS = ("SendStreamingMessage", "SubscribeToTask")
# How long a stream stays quiet before the agent writes an SSE comment: a closed connection shows at once.
KEEPALIVE_S = 1.0
_END = object()  # put on every open stream when the agent stops

Event = dict[str, Any]
Render = Callable[[TaskRecord], dict[str, Any]]


class Engine(Protocol):
    """What a stream asks of the engine: the task a message goes to, and the caller's task of an id."""

    async def send(self, caller: Caller, params: dict[str, Any]) -> TaskRecord: ...

    def get(self, caller: Caller, task_id: str) -> TaskRecord: ...


@dataclass
class Stream:
    """The StreamResponses of one open stream, in order; ``None`` between them means nothing new yet.
    ``close`` ends the stream's subscription (the writer calls it whatever happened)."""

    events: AsyncIterator[Event | None]
    close: Callable[[], None]


class Streaming:
    """Which stream methods are served, and what their streams carry."""

    def __init__(self) -> None:
        self._open: dict[str, list[asyncio.Queue]] = {}

    def serves(self, method: str) -> bool:
        """Whether the stream method ``method`` (one of METHODS) is served."""
        return False

    async def send(self, engine: Engine, caller: Caller, params: dict[str, Any]) -> TaskRecord:
        """The task a SendStreamingMessage streams: as SendMessage's, with SendMessage's refusals."""
        return await engine.send(caller, params)

    def subscribed(self, engine: Engine, caller: Caller, task_id: str) -> TaskRecord:
        """The task a SubscribeToTask names: one of the caller's, else TaskNotFoundError."""
        return engine.get(caller, task_id)

    def refusal(self, task: TaskRecord) -> RpcError | None:
        """Why SubscribeToTask does not serve ``task``: it is in a terminal state (A2A §3.1.6)."""
        if task.state not in TERMINAL:
            return None
        message = "The task is in a terminal state; read it with GetTask."
        return unsupported(message, "TASK_TERMINAL", taskId=task.id, state=task.state)

    def first(self, task: TaskRecord, method: str, render: Render) -> Event:
        """A stream's first event: the Task as it stands (A2A §3.1.2, §3.1.6)."""
        return {"task": render(task)}

    def closes_at(self, state: str, method: str) -> bool:
        """Whether the stream ends after an event that shows ``state``: at a terminal state (A2A §3.1.2)."""
        return state in TERMINAL

    def shown(self, event: Event) -> Event:
        """An announced event as a stream carries it."""
        return event

    # -- the subscriptions

    def publish(self, task_id: str, event: Event) -> None:
        """``event`` to every stream open on the task: each gets all of them, in the order announced."""
        for queue in self._open.get(task_id, ()):
            queue.put_nowait(event)

    def closed(self, task_id: str, queue: asyncio.Queue) -> None:
        """One stream of the task ended: it gets no more events; the task's other streams go on."""
        queues = self._open.get(task_id, [])
        if queue in queues:
            queues.remove(queue)
        if not queues:
            self._open.pop(task_id, None)

    def close_all(self) -> None:
        for queues in self._open.values():
            for queue in queues:
                queue.put_nowait(_END)

    def open(self, task: TaskRecord, method: str, render: Render, *, ends: bool = False) -> Stream:
        """A stream of ``task`` from now on, beginning with the task as it stands; ``ends``: that alone."""
        queue: asyncio.Queue = asyncio.Queue()
        if not ends:  # a stream that ends with the task as it stands (a queued message's) hears of no later event
            self._open.setdefault(task.id, []).append(queue)
        return Stream(self._events(task, method, render, queue, ends), lambda: self.closed(task.id, queue))

    async def _events(
        self, task: TaskRecord, method: str, render: Render, queue: asyncio.Queue, ends: bool
    ) -> AsyncIterator[Event | None]:
        yield self.first(task, method, render)
        if ends or self.closes_at(task.state, method):
            return
        while True:
            try:
                async with asyncio.timeout(KEEPALIVE_S):  # not wait_for, which may lose a cancel (Sender._run)
                    event = await queue.get()
            except TimeoutError:
                yield None
                continue
            if event is _END:
                return
            yield self.shown(event)
            state = ((event.get("statusUpdate") or {}).get("status") or {}).get("state")
            if state and self.closes_at(state, method):
                return
