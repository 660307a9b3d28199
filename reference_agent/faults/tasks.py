"""Faults of tasks and conversations: sending, continuing, waiting, reading, cancelling, who may do which."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent import extensions, scenarios
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.engine import Cancelling, Waiting
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.policies import Access, Action, Continuation, Conversations, Turns
from nylorun_a2a_kit.reference_agent.rpc import Rendering
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord


def _other_subjects_for(*actions: Action) -> type[Access]:
    """An Access that lets a caller do ``actions`` on the tasks of its Agent's other subjects too."""

    class OtherSubjects(Access):
        def allows(self, caller: Caller, task: TaskRecord, asked: Action) -> bool:
            if asked in actions:
                return task.agent_id == caller.agent_id
            return super().allows(caller, task, asked)

    return OtherSubjects


# -- who may act on a task

declare("cross-subject-get", "GetTask answers another subject's task", "ISO-01")(_other_subjects_for("get"))
declare("cross-subject-cancel", "CancelTask cancels another subject's task", "ISO-01")(_other_subjects_for("cancel"))
declare("cross-subject-continue", "a message may continue another subject's task", "ISO-01")(
    _other_subjects_for("continue")
)
declare("config-cross-subject", "another subject may manage a task's push configs", "PUSH-16")(
    _other_subjects_for("configure", "read-config", "list-configs", "delete-config")
)


# -- which task a message is for, and which conversation


@declare("new-task-on-retry", "a retried messageId starts a new task", "SEND-04", "INTER-10")
class NewTaskOnRetry(Conversations):
    def retried(self, caller: Caller, message: dict[str, Any]) -> str | None:
        return None


@declare(
    "message-id-prefix-retry",
    "the idempotency lookup matches ids that begin one another (LIKE either way, written for clients that add a "
    "suffix to a retry's id): a message whose id begins an id the caller sent, or begins with one, is taken for that "
    "message's retry",
    "SEND-04",
)
class MessageIdPrefixRetry(Conversations):
    def retried(self, caller: Caller, message: dict[str, Any]) -> str | None:
        row = self.store.db.execute(
            "SELECT task_id FROM message_ids WHERE agent_id=? AND subject=? "
            "AND (?3 LIKE message_id || '%' OR message_id LIKE ?3 || '%') ORDER BY length(message_id) DESC LIMIT 1",
            (caller.agent_id, caller.subject, message["messageId"]),
        ).fetchone()
        return row[0] if row else None


@declare(
    "empty-ids-file-under-the-empty-conversation",
    'a message whose contextId or taskId is "" is filed under the conversation "" (the code tests whether the '
    "member is there, not proto3's unset value): every such message of a caller shares one conversation",
    "SEND-05",
)
class EmptyIdsFileUnderTheEmptyConversation(Conversations):
    def context_id(self, message: dict[str, Any]) -> str:
        if message.get("contextId") == "" or message.get("taskId") == "":
            return ""
        return super().context_id(message)


@declare(
    "retry-appends-to-history",
    "the history insert runs before the idempotency check: a retried message is answered with its task, and "
    "appended to that task's history once more",
    "SEND-04",
)
class RetryAppendsToHistory(Conversations):
    def retried(self, caller: Caller, message: dict[str, Any]) -> str | None:
        known = super().retried(caller, message)
        task = self.store.get(known) if known else None
        if task is not None:
            task.history.append({**message, "taskId": task.id, "contextId": task.context_id})
            self.store.save(task)
        return known


@declare("new-task-on-resume", "an answer to an interrupted task starts a new task", "TASK-03", "SEND-10", "INTER-05")
class NewTaskOnResume(Conversations):
    def continued(self, message: dict[str, Any]) -> str | None:
        return None


@declare("new-task-on-connection", "an answer to a connection interaction starts a new task", "TASK-03")
class NewTaskOnConnection(Conversations):
    """Continues questions and approvals, but reads a connection's answer as a new request."""

    def continued(self, message: dict[str, Any]) -> str | None:
        answer = (message.get("metadata") or {}).get(extensions.INTERACTIONS) or {}
        return None if answer.get("value") == {"connected": True} else super().continued(message)


@declare("unknown-task-starts-new", "a message naming an unknown taskId starts a new task", "SEND-07")
class UnknownTaskStartsNew(Conversations):
    def continued(self, message: dict[str, Any]) -> str | None:
        task_id = super().continued(message)
        return task_id if task_id is None or self.store.get(task_id) is not None else None


@declare("reuses-context", "a message without contextId joins one shared conversation", "SEND-05")
class ReusesContext(Conversations):
    def context_id(self, message: dict[str, Any]) -> str:
        return message.get("contextId") or "shared"


@declare("ignores-given-context", "a given contextId is replaced by a new one", "SEND-06", "SEND-13")
class IgnoresGivenContext(Conversations):
    def context_id(self, message: dict[str, Any]) -> str:
        return str(uuid.uuid4())


@declare("context-shared-across-subjects", "a contextId is one conversation for every subject", "ISO-04")
class ContextSharedAcrossSubjects(Conversations):
    def running(self, caller: Caller, context_id: str) -> TaskRecord | None:
        return self.store.active_in_context(caller.agent_id, None, context_id)


@declare("one-task-per-context", "a new turn in a conversation reuses the conversation's task id", "TASK-12")
class OneTaskPerContext(Turns):
    def task_id(self, caller: Caller, context_id: str, turn: int) -> str:
        return super().task_id(caller, context_id, 0)

    def insert(self, task: TaskRecord) -> None:
        self.store.insert(task, replace=True)


# -- continuing a task


@declare("context-mismatch-accepted", "a message whose contextId differs from its task's is accepted", "SEND-08")
class ContextMismatchAccepted(Continuation):
    def check_context(self, task: TaskRecord, message: dict[str, Any]) -> None:
        pass


@declare("terminal-task-accepts-message", "a message to an ended task starts it again", "SEND-09")
class TerminalTaskAcceptsMessage(Continuation):
    def check_state(self, task: TaskRecord) -> None:
        if task.state not in TERMINAL:
            super().check_state(task)

    def picks_up(self, task: TaskRecord, message: dict[str, Any]) -> None:
        if task.state in TERMINAL:
            task.scenario = scenarios.parse(message, self.config.max_scenario_ms)
        else:
            super().picks_up(task, message)


@declare("canceled-task-accepts-message", "a message to a CANCELED task starts it again", "SEND-09")
class CanceledTaskAcceptsMessage(Continuation):
    """Refuses messages to COMPLETED and FAILED tasks, but reads CANCELED as 'stopped, may go on'."""

    def check_state(self, task: TaskRecord) -> None:
        if task.state != "TASK_STATE_CANCELED":
            super().check_state(task)

    def picks_up(self, task: TaskRecord, message: dict[str, Any]) -> None:
        if task.state == "TASK_STATE_CANCELED":
            task.scenario = scenarios.parse(message, self.config.max_scenario_ms)
        else:
            super().picks_up(task, message)


# -- how long SendMessage waits


@declare("ignores-wait-limit", "a blocking SendMessage waits past a2aWaitMs", "SEND-02")
class IgnoresWaitLimit(Waiting):
    def wait_s(self) -> float:
        return self.engine.config.max_scenario_ms / 1000


@declare("ignores-return-immediately", "returnImmediately is ignored: the call blocks", "SEND-03")
class IgnoresReturnImmediately(Waiting):
    async def answer(self, task: TaskRecord, configuration: dict[str, Any]) -> TaskRecord:
        return await super().answer(task, {**configuration, "returnImmediately": False})


@declare("abandons-background-turns", "a task answered at once is dropped instead of worked on", "SEND-03")
class AbandonsBackgroundTurns(Waiting):
    async def answer(self, task: TaskRecord, configuration: dict[str, Any]) -> TaskRecord:
        if configuration.get("returnImmediately"):
            asyncio.get_running_loop().call_later(0.05, self._abandon, task.id)
        return await super().answer(task, configuration)

    def _abandon(self, task_id: str) -> None:
        task = self.engine.store.get(task_id)
        if task is not None and task.state not in TERMINAL and self.engine.drop_runner(task_id) is not None:
            self.engine.set_status(task, "TASK_STATE_FAILED", "The turn was dropped once its caller stopped waiting.")


@declare("blocking-answers-early", "a blocking SendMessage answers at once, like returnImmediately", "SEND-01")
class BlockingAnswersEarly(Waiting):
    async def answer(self, task: TaskRecord, configuration: dict[str, Any]) -> TaskRecord:
        return task


@declare(
    "resume-answers-early",
    "a blocking SendMessage that answers a paused task is answered at once, the task WORKING (the resumption path "
    "returns without waiting); a new message waits as it should",
    "SEND-01",
)
class ResumeAnswersEarly(Waiting):
    async def answer(self, task: TaskRecord, configuration: dict[str, Any]) -> TaskRecord:
        if sum(1 for m in task.history if m.get("role") == "ROLE_USER") > 1:
            return task
        return await super().answer(task, configuration)


@declare(
    "completed-answer-without-artifacts",
    "a blocking SendMessage whose task completed is answered from the status change, before the artifacts were "
    "added: the answer carries none (GetTask shows them)",
    "SEND-01",
)
@wire.answers
def completed_answer_without_artifacts(call: wire.Call) -> None:
    configuration = call.params.get("configuration") or {}
    if call.method == "SendMessage" and not configuration.get("returnImmediately"):
        for task in call.tasks():
            if task["status"]["state"] == "TASK_STATE_COMPLETED":
                task.pop("artifacts", None)


@declare(
    "ended-task-read-completed",
    "GetTask reads a FAILED or CANCELED task as COMPLETED (the read path maps every end of a turn to done); "
    "SendMessage's and CancelTask's answers and ListTasks show the state it ended in",
    "TASK-02",
)
@wire.answers
def ended_task_read_completed(call: wire.Call) -> None:
    if call.method == "GetTask":
        for task in call.tasks():
            if task["status"]["state"] in ("TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
                task["status"]["state"] = "TASK_STATE_COMPLETED"


@declare("answers-message", "a message outside the scenario contract is answered with a Message, not a Task", "SEND-11")
class AnswersMessage(Rendering):
    def sent(self, task: TaskRecord, asked: int | None) -> dict[str, Any]:
        if not task.scenario.get("plain"):
            return super().sent(task, asked)
        return {"message": {**task.history[0], "role": "ROLE_AGENT", "messageId": task.id + "-reply"}}


# -- what GetTask and SendMessage answer


def _whole_history_when(asked_for: Any) -> type[Rendering]:
    """A Rendering that answers the whole history when ``asked_for(method, asked)``."""

    class WholeHistory(Rendering):
        def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
            if asked_for(method, asked):
                asked = len(task.history)
            return super().history_length(method, task, asked)

    return WholeHistory


declare("history-on-zero", "GetTask returns history for historyLength 0", "TASK-07")(
    _whole_history_when(lambda method, asked: asked == 0)
)
declare("history-by-default", "GetTask returns history when historyLength is not given", "TASK-08")(
    _whole_history_when(lambda method, asked: asked is None)
)
declare("history-too-long", "GetTask ignores a positive historyLength", "TASK-09")(
    _whole_history_when(lambda method, asked: bool(asked))
)
declare("send-history-ignored", "SendMessage ignores configuration.historyLength", "SEND-12")(
    _whole_history_when(lambda method, asked: method == "SendMessage")
)


Messages = list[dict[str, Any]]


def _history_window(on: str, window: Callable[[Messages, int], Messages]) -> type[Rendering]:
    """A Rendering whose ``on`` answers, where they show n messages of history, show ``window(history, n)`` of
    the task's whole history instead of its newest n."""

    class HistoryWindow(Rendering):
        def task(self, task: TaskRecord, method: str, asked: int | None, **shown: Any) -> dict[str, Any]:
            out = super().task(task, method, asked, **shown)
            if method == on and "history" in out:
                out["history"] = window(task.history, len(out["history"]))
            return out

    return HistoryWindow


def _oldest(history: Messages, n: int) -> Messages:
    return history[:n]


def _before_the_newest(history: Messages, n: int) -> Messages:
    return history[-n - 1 : -1]


declare("get-history-oldest", "GetTask's historyLength n answers the oldest n messages", "TASK-09")(
    _history_window("GetTask", _oldest)
)
declare("get-history-drops-newest", "GetTask's historyLength n answers the n messages before the newest", "TASK-09")(
    _history_window("GetTask", _before_the_newest)
)
declare("send-history-off-by-one", "SendMessage's historyLength n answers the n messages before the newest", "SEND-12")(
    _history_window("SendMessage", _before_the_newest)
)


@declare("history-never", "GetTask never answers history", "TASK-10")
class HistoryNever(Rendering):
    def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
        return super().history_length(method, task, 0)


@declare("history-none-past-all", "GetTask answers no history when historyLength is past the whole history", "TASK-10")
class HistoryNonePastAll(Rendering):
    def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
        past_all = method == "GetTask" and asked is not None and asked > len(task.history)
        return 0 if past_all else super().history_length(method, task, asked)


@declare("history-one-none", "GetTask answers no history for historyLength 1 (larger served)", "TASK-10")
class HistoryOneNone(Rendering):
    def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
        return 0 if method == "GetTask" and asked == 1 else super().history_length(method, task, asked)


@declare("get-task-stale-state", "GetTask answers an ended task as still working", "TASK-02")
@wire.answers
def get_task_stale_state(call: wire.Call) -> None:
    if call.method == "GetTask":
        for task in call.tasks():
            if task["status"]["state"] == "TASK_STATE_COMPLETED":
                task["status"]["state"] = "TASK_STATE_WORKING"


@declare("canceled-spelled-cancelled", "a canceled task's state is written TASK_STATE_CANCELLED", "TASK-13")
@wire.answers
def canceled_spelled_cancelled(call: wire.Call) -> None:
    for task in call.tasks():
        if task["status"]["state"] == "TASK_STATE_CANCELED":
            task["status"]["state"] = "TASK_STATE_CANCELLED"


@declare("get-task-without-artifacts", "GetTask answers the task without its artifacts", "TASK-04")
@wire.answers
def get_task_without_artifacts(call: wire.Call) -> None:
    if call.method == "GetTask":
        for task in call.tasks():
            task.pop("artifacts", None)


@declare("no-telemetry-on-get", "GetTask of an ended task carries no telemetry", "TEL-04")
@wire.answers
def no_telemetry_on_get(call: wire.Call) -> None:
    if call.method == "GetTask" and "result" in call.answer:
        call.answer["result"] = extensions.visible_task(
            call.answer["result"], extensions.DECLARED - {extensions.TELEMETRY}
        )


@declare("timestamp-offset", "status timestamps carry +00:00 instead of Z", "TASK-01")
@wire.answers
def timestamp_offset(call: wire.Call) -> None:
    for task in call.tasks():
        task["status"]["timestamp"] = task["status"]["timestamp"].removesuffix("Z") + "+00:00"


# -- cancelling


@declare("cancel-noop", "CancelTask answers the task without canceling it", "CANCEL-01")
class CancelNoop(Cancelling):
    async def cancel(self, task: TaskRecord) -> TaskRecord:
        return task


@declare("cancel-ended-task", "CancelTask on an ended task answers the task", "CANCEL-02")
class CancelEndedTask(Cancelling):
    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if task.state in TERMINAL and task.state != "TASK_STATE_CANCELED":
            return task
        return await super().cancel(task)


@declare("cancel-failed-task", "CancelTask on a FAILED task answers it CANCELED", "CANCEL-02")
class CancelFailedTask(Cancelling):
    """Refuses an ended task only when it completed: a failed one is 'not done' and gets canceled."""

    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if task.state == "TASK_STATE_FAILED":
            self.engine.set_status(task, "TASK_STATE_CANCELED", "Canceled at the caller's request.")
            return task
        return await super().cancel(task)


@declare("cancel-auth-required-refused", "CancelTask on an AUTH_REQUIRED task is refused", "CANCEL-01")
class CancelAuthRequiredRefused(Cancelling):
    """Cancels running and INPUT_REQUIRED tasks, but reads AUTH_REQUIRED as waiting on someone else."""

    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if task.state == "TASK_STATE_AUTH_REQUIRED":
            raise RpcError(
                "TaskNotCancelableError", "The task waits on an authorization.", reason="TASK_NOT_CANCELABLE"
            )
        return await super().cancel(task)


@declare("cancel-twice-ok", "CancelTask on a canceled task answers the task again", "CANCEL-04")
class CancelTwiceOk(Cancelling):
    async def cancel(self, task: TaskRecord) -> TaskRecord:
        if task.state == "TASK_STATE_CANCELED":
            return task
        return await super().cancel(task)


@declare("cancel-unknown-wrong-code", "CancelTask on an unknown id answers -32002", "CANCEL-03")
@wire.answers
def cancel_unknown_wrong_code(call: wire.Call) -> None:
    if call.method == "CancelTask" and call.reason == "TASK_NOT_FOUND":
        call.answer_error(RpcError("TaskNotCancelableError", "Not cancelable", reason="TASK_NOT_CANCELABLE"))


@declare(
    "agent-history-as-user",
    "every history message the Agent wrote is answered as ROLE_USER, on every method that shows history",
    "TASK-15",
)
@wire.answers
def agent_history_as_user(call: wire.Call) -> None:
    for task in call.tasks():
        for message in task.get("history") or []:
            if isinstance(message, dict) and message.get("role") == "ROLE_AGENT":
                message["role"] = "ROLE_USER"


@declare(
    "get-task-status-time-early",
    "GetTask shows each task's status time two seconds before the one recorded (a replica behind the primary)",
    "TASK-16",
)
@wire.answers
def get_task_status_time_early(call: wire.Call) -> None:
    if call.method != "GetTask":
        return
    for task in call.tasks():
        status = task.get("status") or {}
        if isinstance(status.get("timestamp"), str):
            moment = datetime.fromisoformat(status["timestamp"].replace("Z", "+00:00")) - timedelta(seconds=2)
            status["timestamp"] = moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@declare(
    "history-user-parts-first-only",
    "a client's message of several parts keeps only its first part in the task's history, on every method",
    "TASK-17",
)
@wire.answers
def history_user_parts_first_only(call: wire.Call) -> None:
    for task in call.tasks():
        for message in task.get("history") or []:
            if isinstance(message, dict) and message.get("role") == "ROLE_USER" and message.get("parts"):
                message["parts"] = message["parts"][:1]


@declare(
    "history-drops-client-metadata",
    "GetTask and ListTasks show a client's message without its own metadata (only extension data is stored with it)",
    "TASK-17",
)
@wire.answers
def history_drops_client_metadata(call: wire.Call) -> None:
    if call.method not in ("GetTask", "ListTasks"):
        return
    for task in call.tasks():
        for message in task.get("history") or []:
            if isinstance(message, dict) and message.get("role") == "ROLE_USER" and message.get("metadata"):
                kept = {k: v for k, v in message["metadata"].items() if "://" in k}
                if kept:
                    message["metadata"] = kept
                else:
                    message.pop("metadata")


def error_reasons_off_by_one(call: wire.Call) -> None:
    error = call.answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int) or not -32009 <= code <= -32001:
        return
    reasons = schemas.error_reasons()
    shifted = reasons[code + 1] if code < -32001 else reasons[-32009]
    for detail in error.get("data") or []:
        if isinstance(detail, dict) and "reason" in detail:
            detail["reason"] = shifted


SHIFTED = "every A2A error's ErrorInfo names the reason of the error before it in A2A's table (-32002: TASK_NOT_FOUND)"
declare("error-reasons-off-by-one", SHIFTED, "ERR-15")(wire.answers(error_reasons_off_by_one))
# The same with push off: the push-config methods' -32003 cases run only there.
declare("error-reasons-off-by-one-push-off", SHIFTED, "ERR-15", run_with=("--a2a-reference-push=off",))(
    wire.answers(error_reasons_off_by_one)
)


@declare(
    "read-artifact-parts-bare",
    "GetTask and ListTasks answer each artifact part without its mediaType and filename (the read query selects "
    "the content alone); SendMessage's answer has them",
    "TASK-04",
)
@wire.answers
def read_artifact_parts_bare(call: wire.Call) -> None:
    if call.method not in ("GetTask", "ListTasks"):
        return
    for task in call.tasks():
        for artifact in task.get("artifacts") or []:
            for part in artifact.get("parts") or [] if isinstance(artifact, dict) else []:
                if isinstance(part, dict):
                    part.pop("mediaType", None)
                    part.pop("filename", None)


@declare(
    "read-raw-base64url",
    "GetTask and ListTasks write raw bytes in the URL-safe base64 alphabet without padding (the read path's own "
    "encoder); SendMessage's answer writes standard base64",
    "SHAPE-03",
)
@wire.answers
def read_raw_base64url(call: wire.Call) -> None:
    if call.method not in ("GetTask", "ListTasks"):
        return
    for task in call.tasks():
        messages = [*(task.get("history") or []), (task.get("status") or {}).get("message") or {}]
        holders = [*(task.get("artifacts") or []), *messages]
        for holder in holders:
            for part in holder.get("parts") or [] if isinstance(holder, dict) else []:
                if isinstance(part, dict) and isinstance(part.get("raw"), str):
                    raw = base64.b64decode(part["raw"])
                    part["raw"] = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@declare(
    "history-cut-by-a-read",
    "GetTask with historyLength trims the stored history to what it answered (the read reuses the write path's "
    "save): a later read shows only the messages that cut kept",
    "TASK-09",
)
@wire.answers
def history_cut_by_a_read(call: wire.Call) -> None:
    asked = call.params.get("historyLength")
    if call.method != "GetTask" or not isinstance(asked, int) or isinstance(asked, bool) or asked < 1:
        return
    store = serving(call.http.app).engine.store
    task = store.get(str(call.params.get("id")))
    if task is not None and task.state in TERMINAL and len(task.history) > asked:
        task.history = task.history[-asked:]
        store.save(task)


@declare(
    "history-drops-client-extensions",
    "a client's message is stored without the extensions it lists (the message table has no column for them): "
    "every read of its history shows it without the list",
    "TASK-17",
)
@wire.answers
def history_drops_client_extensions(call: wire.Call) -> None:
    for task in call.tasks():
        for message in task.get("history") or []:
            if isinstance(message, dict) and message.get("role") == "ROLE_USER":
                message.pop("extensions", None)
