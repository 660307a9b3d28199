"""Faults of what a task shows through its life: the plan on every update of a turn that has one, telemetry on the
terminal update of every way a turn ends, and an ended task answered at once to a message instead of refused."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.reference_agent.extensions import TELEMETRY
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.rpc import Rendering
from nylorun_a2a_kit.reference_agent.scenarios import Scenarios
from nylorun_a2a_kit.reference_agent.status import StatusReport
from nylorun_a2a_kit.reference_agent.store import TERMINAL, TaskRecord


@declare("plan-missing-on-terminal-update", "the terminal status update of a plan carries no plan", "PROG-01")
class PlanMissingOnTerminalUpdate(Scenarios):
    """The last update only says the turn is done; the task itself still carries the plan."""

    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        data, task_data = super().plan_data(view, first_view)
        finished = all(step["state"] == "done" for step in view["steps"])
        return ({} if finished else data), task_data


@declare("plan-skipped-on-a-step", "the status update after a plan's first step carries no plan", "PROG-01")
class PlanSkippedOnAStep(Scenarios):
    """One working update is written by the step's own code, which leaves the plan out."""

    def plan_data(self, view: dict[str, Any], first_view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        data, task_data = super().plan_data(view, first_view)
        one_done = sum(step["state"] == "done" for step in view["steps"]) == 1
        return ({} if one_done else data), task_data


@declare("no-telemetry-on-cancel", "a canceled turn ends with no telemetry", "TEL-01", "TEL-02", "TEL-04")
class NoTelemetryOnCancel(StatusReport):
    """Totals are written where a turn finishes its work; a cancel ends it elsewhere."""

    def carries_telemetry(self, state: str) -> bool:
        return state in TERMINAL and state != "TASK_STATE_CANCELED"


@declare(
    "at-once-reply-skips-the-state-check",
    "a message asking returnImmediately that names an ended task is answered with the task as it is, not refused: "
    "the at-once path answers before the task's state is checked",
    "SEND-09",
)
@wire.answers
def at_once_reply_skips_the_state_check(call: wire.Call) -> None:
    task = _ended_task_refused(call)
    if task is not None and (call.params.get("configuration") or {}).get("returnImmediately") is True:
        call.answer.pop("error")
        call.answer["result"] = {"task": Rendering().task(task, "SendMessage", None)}


def _ended_task_refused(call: wire.Call) -> TaskRecord | None:
    """The ended task a SendMessage named and was refused (-32004) for; None for any other call."""
    task_id = (call.params.get("message") or {}).get("taskId")
    refused = (call.answer.get("error") or {}).get("code") == -32004
    if call.method != "SendMessage" or not refused or not isinstance(task_id, str):
        return None
    task = serving(call.http.app).engine.store.get(task_id)
    return task if task is not None and task.state in TERMINAL else None


@declare(
    "ended-task-takes-messages",
    "a message to an ended task is refused, yet recorded in its history (written before the state is checked, in "
    "a commit of its own)",
    "SEND-09",
)
@wire.answers
def ended_task_takes_messages(call: wire.Call) -> None:
    task, message = _ended_task_refused(call), call.params.get("message") or {}
    if task is not None and all(m.get("messageId") != message.get("messageId") for m in task.history):
        task.history.append({**message, "role": "ROLE_USER", "contextId": task.context_id})
        serving(call.http.app).engine.store.save(task)


_LATEST_TRACE: dict[str, tuple[str, str]] = {}  # trace-overwritten-by-later-turn: each context's latest ended trace id


@declare(
    "refused-message-stamps-ended-task",
    "a message refused because its task ended still stamps the task's status time (the row's update time is the "
    "status time, and the refusal path touches the row)",
    "TASK-18",
)
@wire.answers
def refused_message_stamps_ended_task(call: wire.Call) -> None:
    task = _ended_task_refused(call)
    if task is not None:
        store = serving(call.http.app).engine.store
        task.seq, task.status_ts = store.next_status()
        store.save(task)


@declare(
    "trace-overwritten-by-later-turn",
    "the trace id is kept on the conversation, overwritten by each turn as it ends, and read from there: every ended "
    "task of a conversation reports the trace id of its latest ended turn, not its own",
    "TEL-03",
    "EXT-09",
)
@wire.answers
def trace_overwritten_by_later_turn(call: wire.Call) -> None:
    ended = [t for t in call.tasks() if t["status"]["state"] in TERMINAL and isinstance(t.get("contextId"), str)]
    for task in ended:
        for data in _telemetry_of(task):
            stamp = str(task["status"].get("timestamp"))
            if isinstance(data.get("traceId"), str) and stamp >= _LATEST_TRACE.get(task["contextId"], ("", ""))[0]:
                _LATEST_TRACE[task["contextId"]] = (stamp, data["traceId"])
    for task in ended:
        for data in _telemetry_of(task):
            if task["contextId"] in _LATEST_TRACE:
                data["traceId"] = _LATEST_TRACE[task["contextId"]][1]


def _telemetry_of(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The telemetry/v1 data a task carries: on the task, and on its status message."""
    holders = [task.get("metadata"), (task["status"].get("message") or {}).get("metadata")]
    return [h[TELEMETRY] for h in holders if isinstance(h, dict) and isinstance(h.get(TELEMETRY), dict)]
