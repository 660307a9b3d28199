"""Turns and tasks: accepting messages, running scenarios, waiting, cancelling, listing.

One task per turn; its id is a digest of the Agent, subject, context and turn number, so it is made from
the context and the turn yet tells a caller nothing. An interrupted task continues on the same id.

The engine owns the flow: what is written in one transaction, who is woken, which turn runs next. What it
decides at each step (which task a message is for, whether a busy conversation queues it, how long a
caller waits, …) it asks a strategy, made through its :class:`~reference_agent.seams.Seams`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from nylorun_a2a_kit.reference_agent import extensions, push, scenarios
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.delivery import Sender
from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params
from nylorun_a2a_kit.reference_agent.extensions import TELEMETRY
from nylorun_a2a_kit.reference_agent.interactions import Interactions
from nylorun_a2a_kit.reference_agent.listing import Page, Paging
from nylorun_a2a_kit.reference_agent.policies import Access, Action, Continuation, Conversations, Queueing, Turns
from nylorun_a2a_kit.reference_agent.queue import MessageQueue, Queued
from nylorun_a2a_kit.reference_agent.scenarios import Scenarios
from nylorun_a2a_kit.reference_agent.seams import CORRECT, Seams
from nylorun_a2a_kit.reference_agent.status import StatusReport, update_event
from nylorun_a2a_kit.reference_agent.store import ACTIVE, INTERRUPTED, TERMINAL, Store, TaskRecord
from nylorun_a2a_kit.reference_agent.streaming import Streaming
from nylorun_a2a_kit.reference_agent.turn import Files, Turn

__all__ = ["Caller", "Engine"]
log = logging.getLogger("reference_agent")


class Engine:
    def __init__(self, store: Store, config: AgentConfig, seams: Seams = CORRECT):
        self.store, self.config = store, config
        self._changed: dict[str, asyncio.Event] = {}
        self._runners: dict[str, asyncio.Task] = {}
        self._closing = False
        self.queue = seams.make(MessageQueue, store.db)
        self.push_configs = seams.make(push.PushConfigs, store.db, seams.make(push.Destinations, config.push_allowed))
        self.sender = Sender(store.db, self.push_configs, config, seams)
        parts = (store, self.queue, config)
        self.access, self.conversations = seams.make(Access, *parts), seams.make(Conversations, *parts)
        self.continuation, self.queueing = seams.make(Continuation, *parts), seams.make(Queueing, *parts)
        self.turns = seams.make(Turns, *parts)
        self.waiting, self.cancelling = seams.make(Waiting, self), seams.make(Cancelling, self)
        self.paging = seams.make(Paging, store)
        self.interactions = seams.make(Interactions)
        self.scenarios = seams.make(Scenarios, self.interactions)
        self.report, self.files = seams.make(StatusReport), seams.make(Files)
        self.streams = seams.make(Streaming)

    # -- life cycle

    async def start(self) -> None:
        """Take up the turns a stopped process left running: they run again from their stored stage."""
        for task in self.store.unfinished():
            self._start_runner(task, task.scenario.get("base_url", ""))
        for agent_id, subject, context_id in self.queue.contexts_waiting():
            self._take_next(agent_id, subject, context_id)
        self.sender.start()

    async def stop(self) -> None:
        # Wake every blocked SendMessage so the server can answer it and shut down without waiting.
        self._closing = True
        self.streams.close_all()
        for event in self._changed.values():
            event.set()
        for runner in list(self._runners.values()):
            runner.cancel()
        for runner in list(self._runners.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        await self.sender.stop()

    def announce(self, task: TaskRecord, event: dict[str, Any]) -> None:
        """Queue a StreamResponse event for every push config of the task, as each config's caller sees it, and
        for every stream open on it."""
        for config in self.push_configs.deliverable(task):
            self.sender.enqueue(task.id, extensions.visible_event(event, config.extensions), config)
        self.streams.publish(task.id, event)

    def _start_runner(self, task: TaskRecord, base_url: str) -> None:
        runner = asyncio.get_running_loop().create_task(self._run(task, base_url))
        self._runners[task.id] = runner
        runner.add_done_callback(lambda done, task_id=task.id: self._forget_runner(task_id, done))

    def _forget_runner(self, task_id: str, done: asyncio.Task) -> None:
        if self._runners.get(task_id) is done:  # a newer runner of the same task may have taken its place
            del self._runners[task_id]

    def drop_runner(self, task_id: str) -> asyncio.Task | None:
        """Stop running ``task_id``'s turn: its runner, canceled (await it to see it end), or None."""
        runner = self._runners.pop(task_id, None)
        if runner is not None:
            runner.cancel()
        return runner

    async def _run(self, task: TaskRecord, base_url: str) -> None:
        if self.store.get(task.id) is None:  # its transaction rolled back after the runner was made
            return
        try:
            await self.scenarios.run(Turn(self, task, base_url))
        except asyncio.CancelledError:
            raise
        except Exception:  # a scenario bug must end its task, never the agent
            log.exception("scenario failed on task %s", task.id)
            self.set_status(task, "TASK_STATE_FAILED", "The agent hit an internal error.")

    # -- status changes and waiting

    def set_status(
        self,
        task: TaskRecord,
        state: str,
        text: str | None,
        *,
        data: dict[str, Any] | None = None,
        task_data: dict[str, Any] | None = None,
    ) -> None:
        """Record a status change: ``data`` rides on the status message, ``task_data`` on the task."""
        was_running = task.state in ACTIVE
        task.seq, task.status_ts = self.store.next_status()
        task.state = state
        data, task_data = dict(data or {}), dict(task_data or {})
        if self.report.carries_telemetry(state):
            data[TELEMETRY] = self.report.telemetry(task.scenario)
            if state in TERMINAL:
                task_data[TELEMETRY] = data[TELEMETRY]
        if task_data:
            task.metadata = {**(task.metadata or {}), **task_data}
        task.status_message = self.report.message(task, state, text, data)
        if task.status_message and (state in INTERRUPTED or state in TERMINAL):
            task.history.append(task.status_message)
        with self.store.transaction():  # the change and its push events: both or neither survive a crash
            self.store.save(task)
            self.announce(task, update_event(task))
        event = self._changed.pop(task.id, None)
        if event:
            event.set()
        if was_running and state not in ACTIVE:  # the turn ended or paused: the conversation may take the next
            asyncio.get_running_loop().call_soon(self._take_next, task.agent_id, task.subject, task.context_id)

    async def wait_settled(self, task_id: str, timeout_s: float) -> TaskRecord:
        """The task once it ended or paused, or as it stands when ``timeout_s`` runs out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            task = self.store.get(task_id)
            assert task is not None
            remaining = deadline - loop.time()
            if task.state in TERMINAL or task.state in INTERRUPTED or remaining <= 0 or self._closing:
                return task
            event = self._changed.setdefault(task_id, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):  # not wait_for, which may lose a cancel (Sender._run)
                    await event.wait()

    # -- methods

    def owned(self, caller: Caller, task_id: str, action: Action = "get") -> TaskRecord:
        task = self.access.find(caller, task_id)
        if task is None or not self.access.allows(caller, task, action):
            raise self.access.not_found(task_id, task, action)
        return task

    async def send(self, caller: Caller, params: dict[str, Any]) -> TaskRecord:
        message = dict(params["message"])
        configuration = params.get("configuration") or {}
        push_config = configuration.get("taskPushNotificationConfig")
        if push_config is not None:
            if not self.config.push_enabled:
                raise push.not_supported("SendMessage")
            if not self.push_configs.destinations.allows(push_config.get("url", "")):
                raise invalid_params(
                    [("configuration.taskPushNotificationConfig.url", "is not an allowed destination")]
                )
        # The task and its inline push config commit together: a crash in between would leave a task whose
        # events nobody is told of, and a retry of the message would not create the config again.
        with self.store.transaction():
            known = self.conversations.retried(caller, message)
            continued = None if known else self.conversations.continued(message)
            if known:
                task = self.access.sent_to(caller, message["messageId"], known)
                if task is None or not self.access.allows(caller, task, "send"):
                    raise self.access.not_found(known, task, "send")
            elif continued:
                task = self._continue(caller, message, continued)
            else:
                task = self._new_turn(caller, message, params)
            queued = bool(task.scenario.get("queued"))
            # Not twice on a retry; a queued message's config is created when a turn takes it.
            if push_config is not None and not known and not queued:
                self.push_configs.create(task, push_config, caller.extensions)
        if queued:  # answered at once with the task that will take it
            return task
        return await self.waiting.answer(task, configuration)

    def _continue(self, caller: Caller, message: dict[str, Any], task_id: str) -> TaskRecord:
        task = self.owned(caller, task_id, "continue")
        self.continuation.check(task, message)
        # An answer is judged before anything is recorded, so a refused one changes nothing.
        verdict = self.interactions.on_reply(task.scenario, message, caller.extensions)
        message.update(taskId=task.id, contextId=task.context_id)
        with self.store.transaction():
            task.history.append(message)
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], task.id)
            if verdict == self.interactions.STAY:
                data = self.interactions.open_data(task.scenario)
                self.set_status(task, task.state, self.interactions.reminder(task.scenario), data=data)
                return task
            self.continuation.picks_up(task, message)
            self.set_status(task, "TASK_STATE_WORKING", None)
        self._start_runner(task, caller.base_url)
        return task

    def _new_turn(self, caller: Caller, message: dict[str, Any], params: dict[str, Any]) -> TaskRecord:
        context_id = message["contextId"] = self.conversations.context_id(message)
        running = self.conversations.running(caller, context_id)
        waiting = self.queue.waiting(caller.agent_id, caller.subject, context_id)
        if running is not None or waiting:
            return self._queue(caller, {**params, "message": message}, running or waiting[0].as_task())
        return self._start_turn(caller, message, params.get("metadata"))

    def _queue(self, caller: Caller, params: dict[str, Any], busy: TaskRecord) -> TaskRecord:
        """Queue a message for a busy conversation, or refuse it when the caller asked for delivery "reject"."""
        refusal = self.queueing.refusal(params, busy)
        if refusal is not None:
            raise refusal
        message = params["message"]
        remembered = {
            "base_url": caller.base_url,
            "extensions": sorted(caller.extensions),
            "traceparent": caller.traceparent,
        }
        with self.store.transaction():
            self.queue.add(
                caller.agent_id, caller.subject, message["contextId"], params, remembered, self.store.peek_timestamp()
            )
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], message["messageId"])
        queued = self.queue.find(caller.agent_id, caller.subject, message["messageId"])
        assert queued is not None
        return queued.as_task()

    def _take_next(self, agent_id: str, subject: str, context_id: str) -> None:
        """Give the oldest queued message of an idle conversation its turn."""
        if self._closing or self.store.active_in_context(agent_id, subject, context_id) is not None:
            return
        queued = self.queue.next(agent_id, subject, context_id)
        if queued is None:
            return
        remembered = queued.caller
        caller = Caller(
            agent_id,
            subject,
            remembered["base_url"],
            frozenset(remembered["extensions"]),
            remembered.get("traceparent"),
        )
        params = queued.params
        push_config = (params.get("configuration") or {}).get("taskPushNotificationConfig")
        # The turn, the message taken and its push configs commit together, or a crash could leave the
        # configs on a message no longer waiting and the task's events told to nobody.
        with self.store.transaction():
            task = self._start_turn(caller, dict(params["message"]), params.get("metadata"), queued=queued)
            self.push_configs.move(queued.position, task.id)
            if push_config is not None and self.push_configs.destinations.allows(push_config.get("url", "")):
                self.push_configs.create(task, push_config, caller.extensions)

    def _start_turn(
        self, caller: Caller, message: dict[str, Any], metadata: dict[str, Any] | None, *, queued: Queued | None = None
    ) -> TaskRecord:
        context_id = message["contextId"]
        scenario = scenarios.parse(message, self.config.max_scenario_ms)
        scenario["base_url"] = caller.base_url
        scenario["started_at"] = self.store.peek_timestamp()
        # The W3C traceparent header, or metadata.traceparent of the request or the message, names the trace.
        scenario["trace_id"] = self.turns.trace_id(
            caller.traceparent
            or (metadata or {}).get("traceparent")
            or (message.get("metadata") or {}).get("traceparent")
        )
        with self.store.transaction():
            turn = self.store.next_turn(caller.agent_id, caller.subject, context_id)
            task_id = self.turns.task_id(caller, context_id, turn)
            message.update(taskId=task_id, contextId=context_id)
            seq, ts = self.store.next_status()
            task = TaskRecord(
                id=task_id,
                agent_id=caller.agent_id,
                subject=caller.subject,
                context_id=context_id,
                turn=turn,
                state="TASK_STATE_SUBMITTED",
                status_message=None,
                status_ts=ts,
                seq=seq,
                history=[message],
                metadata=extensions.callers_own(metadata),
                scenario=scenario,
            )
            self.turns.insert(task)
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], task_id)
            if queued is not None:
                self.queue.taken(queued, task_id)
        self._start_runner(task, caller.base_url)
        return task

    def get(self, caller: Caller, task_id: str) -> TaskRecord:
        return self.owned(caller, task_id, "get")

    async def cancel(self, caller: Caller, task_id: str) -> TaskRecord:
        return await self.cancelling.cancel(self.owned(caller, task_id, "cancel"))

    def list(self, caller: Caller, params: dict[str, Any]) -> Page:
        return self.paging.page(caller, params)


class Waiting:
    """How a SendMessage answers: at once with returnImmediately, else once the task settles (a2aWaitMs at most)."""

    def __init__(self, engine: Engine):
        self.engine = engine

    async def answer(self, task: TaskRecord, configuration: dict[str, Any]) -> TaskRecord:
        if configuration.get("returnImmediately"):
            return task
        return await self.engine.wait_settled(task.id, self.wait_s())

    def wait_s(self) -> float:
        """The longest a blocking SendMessage waits: a2aWaitMs."""
        return self.engine.config.a2a_wait_ms / 1000


class Cancelling:
    """CancelTask: a running or paused task is canceled; a queued message or an ended task is refused."""

    def __init__(self, engine: Engine):
        self.engine = engine

    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if task.scenario.get("queued"):
            raise RpcError(
                "TaskNotCancelableError",
                "The message is queued; it can be canceled once a turn takes it.",
                reason="TASK_NOT_CANCELABLE",
                metadata={"taskId": task.id, "state": task.state, "queued": "true"},
            )
        if task.state in TERMINAL:
            raise RpcError(
                "TaskNotCancelableError",
                "The task has already ended.",
                reason="TASK_NOT_CANCELABLE",
                metadata={"taskId": task.id, "state": task.state},
            )
        runner = self.engine.drop_runner(task.id)
        if runner is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        task = self.engine.store.get(task.id)
        assert task is not None
        self.engine.set_status(task, "TASK_STATE_CANCELED", "Canceled at the caller's request.")
        return task
