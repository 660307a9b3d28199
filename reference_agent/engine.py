"""Turns and tasks: accepting messages, running scenarios, waiting, cancelling, listing.

One task per turn; its id is a digest of the Agent, subject, context and turn number, so it is made from
the context and the turn yet tells a caller nothing. An interrupted task continues on the same id.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from nylorun_a2a_kit.reference_agent import extensions, interactions, listing, push, scenarios, status
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params, task_not_found, unsupported
from nylorun_a2a_kit.reference_agent.extensions import TELEMETRY
from nylorun_a2a_kit.reference_agent.queue import MessageQueue, Queued
from nylorun_a2a_kit.reference_agent.store import ACTIVE, INTERRUPTED, TERMINAL, Store, TaskRecord
from nylorun_a2a_kit.reference_agent.turn import Turn, new_trace_id, trace_id_of

log = logging.getLogger("reference_agent")


@dataclass(frozen=True)
class Caller:
    agent_id: str
    subject: str
    base_url: str  # where this Agent's endpoint is reachable, for the URLs it hands out
    extensions: frozenset[str] = frozenset()  # what this request activated
    traceparent: str | None = None


class Engine:
    def __init__(self, store: Store, config: AgentConfig):
        self.store, self.config = store, config
        self._changed: dict[str, asyncio.Event] = {}
        self._runners: dict[str, asyncio.Task] = {}
        self._closing = False
        self.push_configs = push.PushConfigs(store.db, config)
        self.sender = push.Sender(store.db, self.push_configs, config)
        self.queue = MessageQueue(store.db)

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
        for event in self._changed.values():
            event.set()
        for runner in list(self._runners.values()):
            runner.cancel()
        for runner in list(self._runners.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        await self.sender.stop()

    def announce(self, task: TaskRecord, event: dict[str, Any]) -> None:
        """Queue a StreamResponse event for every push config of the task, as each config's caller sees it."""
        for config in self.push_configs.deliverable(task.id):
            body = extensions.visible_event(event, config.extensions)
            if self.config.fault("push-body-bare-task") and "statusUpdate" in body:
                body = {"id": task.id, "contextId": task.context_id, "status": body["statusUpdate"]["status"]}
            self.sender.enqueue(task.id, body, config)

    def _start_runner(self, task: TaskRecord, base_url: str) -> None:
        runner = asyncio.get_running_loop().create_task(self._run(task, base_url))
        self._runners[task.id] = runner
        runner.add_done_callback(lambda done, task_id=task.id: self._forget_runner(task_id, done))

    def _forget_runner(self, task_id: str, done: asyncio.Task) -> None:
        if self._runners.get(task_id) is done:  # a newer runner of the same task may have taken its place
            del self._runners[task_id]

    async def _run(self, task: TaskRecord, base_url: str) -> None:
        if self.store.get(task.id) is None:  # its transaction rolled back after the runner was made
            return
        try:
            await scenarios.run(Turn(self, task, base_url))
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
        fault = self.config.fault
        was_running = task.state in ACTIVE
        task.seq, task.status_ts = self.store.next_status()
        task.state = state
        data, task_data = dict(data or {}), dict(task_data or {})
        if state in TERMINAL or (fault("telemetry-before-end") and state == "TASK_STATE_WORKING"):
            data[TELEMETRY] = status.telemetry(task.scenario, fault)
            if state in TERMINAL:
                task_data[TELEMETRY] = data[TELEMETRY]
        if task_data:
            task.metadata = {**(task.metadata or {}), **task_data}
        task.status_message = status.message(task, state, text, data, fault)
        if task.status_message and (state in INTERRUPTED or state in TERMINAL):
            task.history.append(task.status_message)
        with self.store.transaction():  # the change and its push events: both or neither survive a crash
            self.store.save(task)
            if not (state in INTERRUPTED and fault("interrupted-not-pushed")):
                self.announce(task, status.update_event(task))
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
                await asyncio.wait_for(event.wait(), remaining)

    # -- methods

    def owned(self, caller: Caller, task_id: str, *, ignore_subject: bool = False) -> TaskRecord:
        task = self.store.get(task_id)
        if task is None and not self.config.fault("queued-id-unknown"):
            queued = self.queue.find(caller.agent_id, caller.subject, task_id)
            if queued is not None:
                task = self.store.get(queued.taken_by) if queued.taken_by else self.queued_task(queued)
        if task is None or task.agent_id != caller.agent_id or (task.subject != caller.subject and not ignore_subject):
            raise task_not_found(task_id)
        return task

    async def send(self, caller: Caller, params: dict[str, Any]) -> TaskRecord:
        message = dict(params["message"])
        configuration = params.get("configuration") or {}
        fault = self.config.fault
        push_config = configuration.get("taskPushNotificationConfig")
        if push_config is not None:
            if not self.config.push_enabled:
                raise push.not_supported("SendMessage")
            if not push.allowed(push_config.get("url", ""), self.config):
                raise invalid_params(
                    [("configuration.taskPushNotificationConfig.url", "is not an allowed destination")]
                )
        # The task and its inline push config commit together: a crash in between would leave a task whose
        # events nobody is told of, and a retry of the message would not create the config again.
        with self.store.transaction():
            known = self.store.task_for_message(caller.agent_id, caller.subject, message["messageId"])
            if known and not fault("new-task-on-retry"):
                task = self.owned(caller, known)
            elif message.get("taskId") and not fault("new-task-on-resume"):
                if fault("unknown-task-starts-new") and self.store.get(message["taskId"]) is None:
                    message.pop("taskId")
                    task = self._new_turn(caller, message, params)
                else:
                    task = self._continue(caller, message)
            else:
                task = self._new_turn(caller, message, params)
            queued = bool(task.scenario.get("queued"))
            # Not twice on a retry; a queued message's config is created when a turn takes it.
            if push_config is not None and not known and not queued and not fault("inline-config-ignored"):
                self.push_configs.create(task, push_config, caller.extensions)
        if queued:  # answered at once with the task that will take it
            return task
        immediate = configuration.get("returnImmediately") and not fault("ignores-return-immediately")
        if immediate and fault("abandons-background-turns"):
            asyncio.get_running_loop().call_later(0.05, self._abandon, task.id)
        if immediate or fault("blocking-answers-early"):
            return task
        wait_ms = self.config.max_scenario_ms if fault("ignores-wait-limit") else self.config.a2a_wait_ms
        return await self.wait_settled(task.id, wait_ms / 1000)

    def _continue(self, caller: Caller, message: dict[str, Any]) -> TaskRecord:
        task = self.owned(caller, message["taskId"], ignore_subject=self.config.fault("cross-subject-continue"))
        mismatch = message.get("contextId") and message["contextId"] != task.context_id
        if mismatch and not self.config.fault("context-mismatch-accepted"):
            raise invalid_params([("message.contextId", "does not match the context of message.taskId")])
        if task.state in TERMINAL:
            if not self.config.fault("terminal-task-accepts-message"):
                raise unsupported("The task has ended; start a new task.", "TASK_TERMINAL", taskId=task.id)
        elif task.state in ACTIVE:
            raise unsupported("The task is still running.", "CONTEXT_BUSY", taskId=task.id, contextId=task.context_id)
        # An answer is judged before anything is recorded, so a refused one changes nothing.
        verdict = interactions.on_reply(task.scenario, message, caller.extensions, self.config.fault)
        message.update(taskId=task.id, contextId=task.context_id)
        with self.store.transaction():
            task.history.append(message)
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], task.id)
            if verdict == interactions.STAY:
                data = interactions.open_data(task.scenario, self.config.fault)
                self.set_status(task, task.state, interactions.reminder(task.scenario), data=data)
                return task
            if task.state in TERMINAL:  # only under the fault above
                task.scenario = scenarios.parse(message, self.config.max_scenario_ms)
            else:
                task.scenario.update(stage="answered", outputs=0)  # a new stage records its own outputs
            self.set_status(task, "TASK_STATE_WORKING", None)
        self._start_runner(task, caller.base_url)
        return task

    def _new_turn(self, caller: Caller, message: dict[str, Any], params: dict[str, Any]) -> TaskRecord:
        fault = self.config.fault
        context_id = message.get("contextId") or ("shared" if fault("reuses-context") else str(uuid.uuid4()))
        if fault("ignores-given-context"):
            context_id = str(uuid.uuid4())
        message["contextId"] = context_id
        shared = fault("context-shared-across-subjects")
        running = self.store.active_in_context(caller.agent_id, None if shared else caller.subject, context_id)
        waiting = self.queue.waiting(caller.agent_id, caller.subject, context_id)
        if running is not None or waiting:
            return self._queue(caller, {**params, "message": message}, running or self.queued_task(waiting[0]))
        return self._start_turn(caller, message, params.get("metadata"))

    def _queue(self, caller: Caller, params: dict[str, Any], busy: TaskRecord) -> TaskRecord:
        """Queue a message for a busy conversation, or refuse it when the caller asked for delivery "reject"."""
        fault = self.config.fault
        message = params["message"]
        if (_delivery(params) == "reject" and not fault("reject-ignored")) or fault("busy-refused"):
            reason = "BUSY" if fault("reject-without-reason") else "CONTEXT_BUSY"
            raise unsupported(
                "The conversation is busy with a running task.", reason, taskId=busy.id, contextId=busy.context_id
            )
        remembered = {
            "base_url": caller.base_url,
            "extensions": sorted(caller.extensions),
            "traceparent": caller.traceparent,
        }
        with self.store.transaction():
            self.queue.add(
                caller.agent_id,
                caller.subject,
                message["contextId"],
                params,
                remembered,
                self.store.peek_timestamp(),
                replace_waiting=fault("queue-keeps-newest"),
            )
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], message["messageId"])
        queued = self.queue.find(caller.agent_id, caller.subject, message["messageId"])
        assert queued is not None
        return self.queued_task(queued)

    def queued_task(self, queued: Queued) -> TaskRecord:
        """A queued message as the task that will take it, under the message's own id."""
        message = {**queued.params["message"], "taskId": queued.message_id}
        return TaskRecord(
            id=queued.message_id,
            agent_id=queued.agent_id,
            subject=queued.subject,
            context_id=queued.context_id,
            turn=0,
            state="TASK_STATE_SUBMITTED",
            status_message=None,
            status_ts=queued.queued_ts,
            seq=0,
            history=[message],
            scenario={"queued": True},
        )

    def _take_next(self, agent_id: str, subject: str, context_id: str) -> None:
        """Give the oldest queued message of an idle conversation its turn."""
        if self._closing or self.store.active_in_context(agent_id, subject, context_id) is not None:
            return
        waiting = self.queue.waiting(agent_id, subject, context_id, newest_first=self.config.fault("queue-lifo"))
        if not waiting:
            return
        queued = waiting[0]
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
            self.push_configs.move(agent_id, subject, queued.message_id, task.id)
            if push_config is not None and push.allowed(push_config.get("url", ""), self.config):
                self.push_configs.create(task, push_config, caller.extensions)

    def _start_turn(
        self, caller: Caller, message: dict[str, Any], metadata: dict[str, Any] | None, *, queued: Queued | None = None
    ) -> TaskRecord:
        fault = self.config.fault
        context_id = message["contextId"]
        scenario = scenarios.parse(message, self.config.max_scenario_ms)
        scenario["base_url"] = caller.base_url
        scenario["started_at"] = self.store.peek_timestamp()
        # The W3C traceparent header, or metadata.traceparent of the request or the message, names the trace.
        traceparent = (
            caller.traceparent
            or (metadata or {}).get("traceparent")
            or (message.get("metadata") or {}).get("traceparent")
        )
        joined = (
            None if fault("traceparent-ignored") else trace_id_of(traceparent if isinstance(traceparent, str) else None)
        )
        scenario["trace_id"] = joined or new_trace_id()
        with self.store.transaction():
            turn = self.store.next_turn(caller.agent_id, caller.subject, context_id)
            made_from = 0 if fault("one-task-per-context") else turn
            digest = hashlib.sha256(f"{caller.agent_id}\n{caller.subject}\n{context_id}\n{made_from}".encode())
            task_id = "t-" + base64.b32encode(digest.digest()[:15]).decode().lower()
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
            self.store.insert(task, replace=fault("one-task-per-context"))
            self.store.remember_message(caller.agent_id, caller.subject, message["messageId"], task_id)
            if queued is not None:
                self.queue.taken(queued, task_id, keep_waiting=fault("queued-run-twice") and queued.takes == 0)
        self._start_runner(task, caller.base_url)
        return task

    def _abandon(self, task_id: str) -> None:
        runner = self._runners.pop(task_id, None)
        task = self.store.get(task_id)
        if runner is not None and task is not None and task.state not in TERMINAL:
            runner.cancel()
            self.set_status(task, "TASK_STATE_FAILED", "The turn was dropped once its caller stopped waiting.")

    def get(self, caller: Caller, task_id: str) -> TaskRecord:
        return self.owned(caller, task_id, ignore_subject=self.config.fault("cross-subject-get"))

    async def cancel(self, caller: Caller, task_id: str) -> TaskRecord:
        if self.config.fault("cancel-unknown-wrong-code") and self.store.get(task_id) is None:
            raise RpcError("TaskNotCancelableError", "Not cancelable", reason="TASK_NOT_CANCELABLE")
        task = self.owned(caller, task_id, ignore_subject=self.config.fault("cross-subject-cancel"))
        if self.config.fault("cancel-noop"):
            return task
        if task.scenario.get("queued"):
            if self.config.fault("queued-cancelable"):
                self.queue.drop(caller.agent_id, caller.subject, task.id)
                task.state = "TASK_STATE_CANCELED"
                return task
            raise RpcError(
                "TaskNotCancelableError",
                "The message is queued; it can be canceled once a turn takes it.",
                reason="TASK_NOT_CANCELABLE",
                metadata={"taskId": task_id, "state": task.state, "queued": "true"},
            )
        if task.state in TERMINAL:
            if self.config.fault("cancel-ended-task") and task.state != "TASK_STATE_CANCELED":
                return task
            if self.config.fault("cancel-twice-ok") and task.state == "TASK_STATE_CANCELED":
                return task
            raise RpcError(
                "TaskNotCancelableError",
                "The task has already ended.",
                reason="TASK_NOT_CANCELABLE",
                metadata={"taskId": task_id, "state": task.state},
            )
        runner = self._runners.pop(task_id, None)
        if runner is not None:
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        task = self.store.get(task_id)
        assert task is not None
        self.set_status(task, "TASK_STATE_CANCELED", "Canceled at the caller's request.")
        return task

    def list(self, caller: Caller, params: dict[str, Any]) -> tuple[list[TaskRecord], str, int, int]:
        return listing.list_tasks(self, caller, params)


def _delivery(params: dict[str, Any]) -> str | None:
    """``delivery`` from the message's metadata, or else the request's (the pages name only "metadata")."""
    for metadata in ((params.get("message") or {}).get("metadata"), params.get("metadata")):
        if isinstance(metadata, dict) and isinstance(metadata.get("delivery"), str):
            return metadata["delivery"]
    return None
