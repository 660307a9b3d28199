"""Turns and tasks: accepting messages, running scenarios, waiting, cancelling, listing.

One task per turn; its id is a digest of the Agent, subject, context and turn number, so it is made from
the context and the turn yet tells a caller nothing. An interrupted task continues on the same id.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from reference_agent import extensions, interactions, push, scenarios, status
from reference_agent.config import AgentConfig
from reference_agent.errors import RpcError, invalid_params, task_not_found, unsupported
from reference_agent.extensions import TELEMETRY
from reference_agent.store import ACTIVE, INTERRUPTED, TERMINAL, Store, TaskFilter, TaskRecord, format_timestamp
from reference_agent.turn import Turn, new_trace_id, trace_id_of

log = logging.getLogger("reference_agent")
DEFAULT_PAGE_SIZE = 50


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

    # -- life cycle

    async def start(self) -> None:
        """Take up the turns a stopped process left running: they run again from their stored stage."""
        for task in self.store.unfinished():
            self._start_runner(task, task.scenario.get("base_url", ""))
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
        self.store.save(task)
        if not (state in INTERRUPTED and fault("interrupted-not-pushed")):
            self.announce(task, status.update_event(task))
        event = self._changed.pop(task.id, None)
        if event:
            event.set()

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
        known = self.store.task_for_message(caller.agent_id, caller.subject, message["messageId"])
        if known and not fault("new-task-on-retry"):
            task = self.store.get(known)
        elif message.get("taskId") and not fault("new-task-on-resume"):
            if fault("unknown-task-starts-new") and self.store.get(message["taskId"]) is None:
                message.pop("taskId")
                task = self._new_turn(caller, message, params.get("metadata"))
            else:
                task = self._continue(caller, message)
        else:
            task = self._new_turn(caller, message, params.get("metadata"))
        assert task is not None
        if push_config is not None and not known and not fault("inline-config-ignored"):  # not twice on a retry
            with self.store.transaction():
                self.push_configs.create(task, push_config, caller.extensions)
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
                task.scenario["stage"] = "answered"
            self.set_status(task, "TASK_STATE_WORKING", None)
        self._start_runner(task, caller.base_url)
        return task

    def _new_turn(self, caller: Caller, message: dict[str, Any], metadata: dict[str, Any] | None) -> TaskRecord:
        fault = self.config.fault
        context_id = message.get("contextId") or ("shared" if fault("reuses-context") else str(uuid.uuid4()))
        if fault("ignores-given-context"):
            context_id = str(uuid.uuid4())
        shared = fault("context-shared-across-subjects")
        running = self.store.active_in_context(caller.agent_id, None if shared else caller.subject, context_id)
        if running is not None:
            raise unsupported(
                "The conversation is busy with a running task.",
                "CONTEXT_BUSY",
                taskId=running.id,
                contextId=context_id,
            )
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
        fault = self.config.fault
        state = params.get("status")
        flt = TaskFilter(
            agent_id=None if fault("cross-agent-list") else caller.agent_id,
            subject=None if fault("cross-subject-list") else caller.subject,
            context_id=None if fault("context-filter-ignored") else params.get("contextId") or None,
            state=None if state in (None, "TASK_STATE_UNSPECIFIED") or fault("status-filter-ignored") else state,
            status_after=_normalise_timestamp(params["statusTimestampAfter"])
            if params.get("statusTimestampAfter") and not fault("timestamp-filter-ignored")
            else None,
        )
        page_size = params.get("pageSize", 20 if fault("default-page-size-20") else DEFAULT_PAGE_SIZE)
        fingerprint = hashlib.sha256(json.dumps(flt.__dict__, sort_keys=True).encode()).hexdigest()[:16]
        before = _read_page_token(params.get("pageToken") or "", fingerprint)
        oldest_first = fault("list-oldest-first")
        tasks = self.store.page(flt, before_seq=before, limit=page_size + 1, oldest_first=oldest_first)
        more = len(tasks) > page_size
        tasks = tasks[: page_size + 1 if fault("page-overfills") else page_size]
        token = ""
        if more:
            cursor = tasks[-1].seq
            if fault("page-repeats-task"):
                cursor += -1 if oldest_first else 1
            token = _page_token(cursor, fingerprint)
        total = len(tasks) if fault("wrong-total-size") else self.store.count(flt)
        return tasks, token, page_size, total


def _page_token(seq: int, fingerprint: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"s": seq, "f": fingerprint}).encode()).decode().rstrip("=")


def _read_page_token(token: str, fingerprint: str) -> int | None:
    if not token:
        return None
    try:
        cursor = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        seq, used_with = int(cursor["s"]), cursor["f"]
    except (ValueError, KeyError, TypeError, OverflowError, binascii.Error):
        raise invalid_params([("pageToken", "is not a token this agent issued")]) from None
    if used_with != fingerprint:
        raise invalid_params([("pageToken", "was issued for other filters; start again without it")])
    return seq


def _normalise_timestamp(value: str) -> str:
    """A filter time in the stored form, rounded up to the millisecond so the filter is never wider."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if moment.microsecond % 1000:
        moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return format_timestamp(moment)
