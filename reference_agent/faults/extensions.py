"""Faults of the profile's extensions: who sees their data, status messages, telemetry, interactions, files."""

from __future__ import annotations

import hashlib
from typing import Any

from aiohttp import web

from nylorun_a2a_kit.reference_agent.edge import FILE_ROUTE
from nylorun_a2a_kit.reference_agent.extensions import (
    EFFECTS,
    FILES,
    INTERACTIONS,
    PROGRESS,
    TELEMETRY,
    Disclosure,
    activate,
)
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.interactions import Interactions
from nylorun_a2a_kit.reference_agent.keys import serving
from nylorun_a2a_kit.reference_agent.policies import Turns
from nylorun_a2a_kit.reference_agent.status import StatusReport
from nylorun_a2a_kit.reference_agent.store import INTERRUPTED, Store, TaskRecord
from nylorun_a2a_kit.reference_agent.turn import Files

Message = dict[str, Any]

# -- who sees extension data


@declare("data-without-activation", "extension data is answered to callers that did not activate it", "TIER-04")
class DataWithoutActivation(Disclosure):
    def visible(self, method: str, result: Any, active: frozenset[str]) -> Any:
        return result


@declare(
    "retry-renders-first-activation",
    "a SendMessage answer shows its task with the extensions the task's first message activated, not the request's "
    "own: a retry sent with none gets the first request's extension data",
    "TIER-04",
    "TIER-06",
)
class RetryRendersFirstActivation(Disclosure):
    def __init__(self) -> None:
        self.first: dict[str, frozenset[str]] = {}  # each task's first SendMessage activation

    def visible(self, method: str, result: Any, active: frozenset[str]) -> Any:
        task = result.get("task") if method == "SendMessage" and isinstance(result, dict) else None
        if isinstance(task, dict) and isinstance(task.get("id"), str):
            active = self.first.setdefault(task["id"], active)
        return super().visible(method, result, active)


@declare("core-gets-plan", "plan steps and totals reach callers that activated no extension", "TIER-05")
class CoreGetsPlan(Disclosure):
    def shown(self, activated: frozenset[str]) -> frozenset[str]:
        return super().shown(activated) | {PROGRESS, TELEMETRY}


@declare(
    "core-question-generic",
    "a caller that activated no extension gets a paused turn's question as a generic text, not its prompt",
    "TIER-07",
)
class CoreQuestionGeneric(Disclosure):
    def visible(self, method: str, result: Any, active: frozenset[str]) -> Any:
        shown = super().visible(method, result, active)
        task = (shown.get("task") if method == "SendMessage" else shown) if isinstance(shown, dict) else None
        message = ((task or {}).get("status") or {}).get("message") if not active else None
        if isinstance(message, dict) and task["status"].get("state") in (
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_AUTH_REQUIRED",
        ):
            task["status"] = {**task["status"], "message": {**message, "parts": [{"text": "Please answer."}]}}
        return shown


# -- status messages


@declare("extension-data-in-parts", "extension data rides in a data part instead of metadata", "EXT-03")
class ExtensionDataInParts(StatusReport):
    def message(self, task: TaskRecord, state: str, text: str | None, data: dict[str, Any]) -> Message | None:
        out = super().message(task, state, text, data)
        if out is not None and data:
            out["parts"].append({"data": out.pop("metadata")})
            del out["extensions"]
        return out


@declare("message-extensions-missing", "a message with extension data does not list the URIs", "EXT-04")
class MessageExtensionsMissing(StatusReport):
    def message(self, task: TaskRecord, state: str, text: str | None, data: dict[str, Any]) -> Message | None:
        out = super().message(task, state, text, data)
        if out is not None:
            out.pop("extensions", None)
        return out


@declare("prompt-only-in-metadata", "an interaction's prompt is not in the status message's text", "TIER-01", "TIER-03")
class PromptOnlyInMetadata(StatusReport):
    def message(self, task: TaskRecord, state: str, text: str | None, data: dict[str, Any]) -> Message | None:
        out = super().message(task, state, text, data)
        if out is not None and INTERACTIONS in data:
            out["parts"] = [{"data": {"waiting": True}}]
        return out


# -- telemetry/v1


def _telemetry_without(name: str) -> type[StatusReport]:
    class Without(StatusReport):
        def telemetry(self, scenario: dict[str, Any]) -> dict[str, Any]:
            return {key: value for key, value in super().telemetry(scenario).items() if key != name}

    return Without


declare("telemetry-without-totals", "telemetry/v1 carries no totals", "TEL-01")(_telemetry_without("totals"))
declare("telemetry-missing-trace-id", "telemetry/v1 carries no trace id", "TEL-02")(_telemetry_without("traceId"))


@declare("trace-id-uppercase", "telemetry/v1 traceId is written in uppercase hex", "EXT-07")
class TraceIdUppercase(StatusReport):
    def telemetry(self, scenario: dict[str, Any]) -> dict[str, Any]:
        data = super().telemetry(scenario)
        data["traceId"] = data["traceId"].upper()
        return data


@declare("telemetry-before-end", "working status updates carry telemetry", "TEL-05")
class TelemetryBeforeEnd(StatusReport):
    def carries_telemetry(self, state: str) -> bool:
        return state == "TASK_STATE_WORKING" or super().carries_telemetry(state)


@declare("traceparent-ignored", "a turn starts a new trace instead of joining the caller's", "TEL-03")
class TraceparentIgnored(Turns):
    def trace_id(self, traceparent: Any) -> str:
        return super().trace_id(None)


@declare(
    "traceparent-kept-per-caller",
    "the trace context lives in a variable the request handler never resets: a turn started without a traceparent "
    "joins the last trace an earlier request named",
    "TEL-03",
)
class TraceparentKeptPerCaller(Turns):
    last: str | None = None

    def trace_id(self, traceparent: Any) -> str:
        if isinstance(traceparent, str):
            TraceparentKeptPerCaller.last = traceparent
        return super().trace_id(traceparent or TraceparentKeptPerCaller.last)


# -- interactions/v1


@declare("approval-as-input-required", "an approval pauses the task as INPUT_REQUIRED", "INTER-01")
class ApprovalAsInputRequired(Interactions):
    def state(self, kind: str) -> str:
        return "TASK_STATE_INPUT_REQUIRED" if kind == "approval" else super().state(kind)


@declare("question-as-auth-required", "a question pauses the task as AUTH_REQUIRED", "INTER-02")
class QuestionAsAuthRequired(Interactions):
    def state(self, kind: str) -> str:
        return "TASK_STATE_AUTH_REQUIRED" if kind == "question" else super().state(kind)


@declare("connection-kind-approval", "a missing connection is shown as an approval", "INTER-03")
class ConnectionKindApproval(Interactions):
    def shown_kind(self, kind: str) -> str:
        return "approval" if kind == "connection" else super().shown_kind(kind)


@declare("interaction-without-id", "an open interaction has no interactionId", "EXT-06", "INTER-04")
class InteractionWithoutId(Interactions):
    def open_data(self, scenario: dict[str, Any]) -> dict[str, Any]:
        data = super().open_data(scenario)
        del data[INTERACTIONS]["interactionId"]
        return data


@declare(
    "interaction-answer-ignored",
    "an answer under interactions/v1 in the reply's metadata is ignored",
    "EXT-05",
    "INTER-05",
    "INTER-06",
)
class InteractionAnswerIgnored(Interactions):
    def answer_in(self, message: dict[str, Any], active: frozenset[str]) -> Any:
        return None


@declare("connection-not-resolved", "value {connected: true} leaves the connection waiting", "INTER-07")
class ConnectionNotResolved(Interactions):
    def connected(self, answer: dict[str, Any]) -> bool:
        return False


@declare("both-approved-and-value-accepted", "an answer with both approved and value resolves", "INTER-08")
class BothApprovedAndValueAccepted(Interactions):
    def check_fields(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        pass


@declare("text-approves", "a text reply approves a pending approval", "INTER-09", "TIER-02")
class TextApproves(Interactions):
    def text_answers(self, kind: str) -> bool:
        return True


@declare("wrong-interaction-id-accepted", "an answer naming another interactionId resolves", "INTER-11")
class WrongInteractionIdAccepted(Interactions):
    def check_id(self, answer: dict[str, Any], interaction: dict[str, Any]) -> None:
        pass


# -- files/v1


@declare("file-metadata-missing", "file artifacts carry no files/v1 data", "FILE-01")
class FileMetadataMissing(Files):
    def metadata(self, path: str, version: int, data: bytes) -> dict[str, Any] | None:
        return None


@declare(
    "file-url-serves-latest-version",
    "a file's URL serves the latest version at its path in the conversation (one blob per path, overwritten by each "
    "version): an earlier version's URL answers bytes its files/v1 size and sha256 do not describe",
    "FILE-02",
)
@wire.served(FILE_ROUTE)
def file_url_serves_latest_version(request: web.Request, response: web.Response) -> None:
    store = serving(request.app).engine.store
    task = store.get(request.match_info["task_id"])
    row = store.db.execute(
        "SELECT data FROM files WHERE agent_id=? AND subject=? AND context_id=? AND path=? ORDER BY version DESC",
        (task.agent_id, task.subject, task.context_id, request.match_info["name"]),
    ).fetchone()
    if row is not None:
        response.body = bytes(row["data"])


@declare("wrong-sha256", "files/v1 sha256 is not the digest of the file's bytes", "FILE-02")
class WrongSha256(Files):
    def metadata(self, path: str, version: int, data: bytes) -> dict[str, Any] | None:
        metadata = super().metadata(path, version, data)
        if metadata is not None:
            metadata[FILES]["sha256"] = hashlib.sha256(data + b"x").hexdigest()
        return metadata


_FIRST_DIGEST: dict[str, dict[str, Any]] = {}  # file-digest-of-first-version: each path's first size and sha256


@declare(
    "file-digest-of-first-version",
    "a changed file's files/v1 size and sha256 are those of the first version published at its path (the digest "
    "cached by path)",
    "FILE-02",
)
class FileDigestOfFirstVersion(Files):
    def metadata(self, path: str, version: int, data: bytes) -> dict[str, Any] | None:
        metadata = super().metadata(path, version, data)
        if metadata is not None:
            first = _FIRST_DIGEST.setdefault(path, {k: metadata[FILES][k] for k in ("size", "sha256")})
            metadata[FILES].update(first)
        return metadata


@declare("file-size-as-string", "files/v1 size is sent as a string", "EXT-07")
class FileSizeAsString(Files):
    def metadata(self, path: str, version: int, data: bytes) -> dict[str, Any] | None:
        metadata = super().metadata(path, version, data)
        if metadata is not None:
            metadata[FILES]["size"] = str(metadata[FILES]["size"])
        return metadata


@declare("version-not-growing", "a changed file keeps version 1", "FILE-05")
class VersionNotGrowing(Files):
    def version(self, store: Store, task: TaskRecord, path: str, data: bytes) -> int:
        return 1


_OPENED: dict[str, Any] = {}  # interaction-kept-after-answer: each task's last open interaction answered


@declare(
    "interaction-kept-after-answer",
    "once answered, a task's later status messages still carry the interactions/v1 interaction it paused on (status "
    "metadata merged, not replaced), on every method that shows the task",
    "INTER-12",
)
@wire.answers
def interaction_kept_after_answer(call: wire.Call) -> None:
    for task in call.tasks():
        status = task.get("status") or {}
        message = status.get("message")
        if not isinstance(message, dict) or not isinstance(task.get("id"), str):
            continue
        opened = (message.get("metadata") or {}).get(INTERACTIONS)
        if status.get("state") in INTERRUPTED and opened is not None:
            _OPENED[task["id"]] = opened
        elif task["id"] in _OPENED:
            message.setdefault("metadata", {})[INTERACTIONS] = _OPENED[task["id"]]


@declare(
    "plan-needs-telemetry",
    "a caller that activated progress/v1 without telemetry/v1 gets no plan (one block, gated on telemetry/v1, "
    "attaches both)",
    "EXT-10",
)
class PlanNeedsTelemetry(Disclosure):
    def shown(self, activated: frozenset[str]) -> frozenset[str]:
        shown = super().shown(activated)
        return shown if TELEMETRY in activated else shown - {PROGRESS}


@declare(
    "extension-data-only-with-all-five",
    "a caller gets extension data only when it activated all five extensions (the gate tests the profile v2 set, not "
    "each extension)",
    "EXT-10",
)
class ExtensionDataOnlyWithAllFive(Disclosure):
    def shown(self, activated: frozenset[str]) -> frozenset[str]:
        shown = super().shown(activated)
        return shown if {INTERACTIONS, EFFECTS, PROGRESS, TELEMETRY, FILES} <= activated else frozenset()


@declare(
    "connection-any-value-connects",
    "a connection answered with any value counts as made ({connected: false} too: the value object is tested, not "
    "its connected member)",
    "INTER-07",
)
class ConnectionAnyValueConnects(Interactions):
    def connected(self, answer: dict[str, Any]) -> bool:
        return bool(answer.get("value"))


_FIRST_TRACE: dict[Any, str] = {}  # trace-kept-per-conversation: each conversation's first trace id answered


@declare(
    "trace-kept-per-conversation",
    "a conversation's later turns report the trace its first turn joined, whatever trace their traceparent names "
    "(the trace context cached per conversation), on every method that shows a task",
    "TEL-03",
)
@wire.answers
def trace_kept_per_conversation(call: wire.Call) -> None:
    for task in call.tasks():
        message = (task.get("status") or {}).get("message")
        for holder in (task, message if isinstance(message, dict) else {}):
            data = (holder.get("metadata") or {}).get(TELEMETRY)
            if isinstance(data, dict) and isinstance(data.get("traceId"), str):
                data["traceId"] = _FIRST_TRACE.setdefault(task.get("contextId"), data["traceId"])


@declare(
    "status-message-lists-every-activated-uri",
    "a status message that carries some extension data lists every extension the request activated in its "
    "extensions, those it carries no data for too",
    "EXT-11",
)
@wire.answers
def status_message_lists_every_activated_uri(call: wire.Call) -> None:
    active = sorted(activate(call.http.headers.getall("A2A-Extensions", [])))
    for task in call.tasks():
        message = (task.get("status") or {}).get("message")
        if isinstance(message, dict) and set(message.get("metadata") or {}) & set(active):
            message["extensions"] = active
