"""Faults of the JSON-RPC binding: envelopes, params, error codes and details, ids, the methods it does not serve."""

from __future__ import annotations

import copy
import html
import json
from typing import Any

from aiohttp import web

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.errors import ERROR_INFO, RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.rpc import (
    Problems,
    Reading,
    Unserved,
    params_schema,
)
from nylorun_a2a_kit.reference_agent.store import TERMINAL

INVALID_PARAMS = schemas.error_code("InvalidParamsError")
TASK_STATES = tuple(schemas.resolve("a2a/TaskState.json")["enum"])

# -- envelopes and params


@declare("envelope-not-validated", "a request that is not a valid JSON-RPC envelope is served anyway", "ERR-03")
class EnvelopeNotValidated(Reading):
    def envelope(self, request: Any) -> tuple[Any, Problems]:
        if not isinstance(request, dict):
            return super().envelope(request)
        return {"jsonrpc": "2.0", "id": request.get("id"), "method": str(request.get("method", "")), "params": {}}, []


@declare("answers-notifications", "a request without id is refused with -32600 instead of getting no reply", "ERR-12")
class AnswersNotifications(Reading):
    def envelope(self, request: Any) -> tuple[Any, Problems]:
        request, problems = super().envelope(request)
        if not problems and "id" not in request:
            problems = [("id", "is required")]
        return request, problems


@declare(
    "id-null-as-notification",
    "a request whose id is null is served as a notification: HTTP 204, no Response",
    "ERR-14",
)
class IdNullAsNotification(Reading):
    def replies(self, request: dict[str, Any], error: RpcError | None) -> bool:
        return request.get("id") is not None


@declare(
    "notification-errors-answered",
    "a notification whose method fails gets the error (with id null); one that is served gets no reply",
    "ERR-12",
)
class NotificationErrorsAnswered(Reading):
    def replies(self, request: dict[str, Any], error: RpcError | None) -> bool:
        return error is not None or super().replies(request, error)


@declare(
    "ids-read-as-doubles",
    "the request is parsed with numbers as doubles: an integer id past 2^53 is answered as the nearest double",
    "ERR-16",
)
@wire.answers
def ids_read_as_doubles(call: wire.Call) -> None:
    sent = call.request.get("id") if isinstance(call.request, dict) else None
    if isinstance(sent, int) and not isinstance(sent, bool) and abs(sent) > 2**53:
        call.answer["id"] = int(float(sent))


@declare("method-names-case-insensitive", "method names are matched ignoring case: sendMessage is served", "ERR-05")
class MethodNamesCaseInsensitive(Reading):
    def envelope(self, request: Any) -> tuple[Any, Problems]:
        request, problems = super().envelope(request)
        method = request.get("method") if isinstance(request, dict) else None
        if not problems and isinstance(method, str):
            named = {name.lower(): name for name in schemas.method_names()}
            request = {**request, "method": named.get(method.lower(), method)}
        return request, problems


@declare("no-params-validation", "params are not validated before the method runs", "ERR-06", "ERR-13")
class NoParamsValidation(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        return params, []


@declare(
    "cancel-params-without-metadata",
    "CancelTask's params schema was written from A2A 0.3's TaskIdParams: a cancel with metadata is refused as "
    "invalid params",
    "CANCEL-01",
)
class CancelParamsWithoutMetadata(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        params, problems = super().params(method, params)
        if method == "CancelTask" and "metadata" in params and not problems:
            problems = [("metadata", "is not a member of CancelTask's params")]
        return params, problems


@declare(
    "input-text-sanitized",
    "an input sanitizer trims each text part a client sends and escapes its HTML before it is stored: the text "
    "echoed and kept in history is not the text sent (text with no blanks around it and no markup is unchanged)",
    "PART-01",
    "TASK-17",
)
class InputTextSanitized(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        params, problems = super().params(method, params)
        message = params.get("message") if method in ("SendMessage", "SendStreamingMessage") else None
        for part in (message.get("parts") or []) if isinstance(message, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = html.escape(part["text"].strip(), quote=False)
        return params, problems


@declare("rejects-unknown-fields", "params with a field the Agent does not know are refused", "ERR-08")
class RejectsUnknownFields(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        known = _param_names(method)
        return served, problems + [(name, "is not a known field") for name in params if name not in known]


def _param_names(method: str) -> set[str]:
    """The fields a method's params schema names (its request message's properties)."""
    ref = schemas.resolve(params_schema(method)).get("$ref", "")
    return set(schemas.resolve("a2a/" + ref.rsplit("/", 1)[-1]).get("properties", {})) if ref else set()


@declare("negative-history-accepted", "a negative historyLength is read as no limit", "TASK-11")
class NegativeHistoryAccepted(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        history = params.get("historyLength")
        if isinstance(history, int) and history < 0:
            params = {**params, "historyLength": 2**31 - 1}  # every message
        return super().params(method, params)


@declare(
    "unknown-status-ignored",
    "ListTasks drops an unknown status filter and lists unfiltered, as a ProtoJSON parser ignoring unknown enum "
    "values does (right by default; --strict-spec asks the refusal)",
    "ERR-13",
    run_with=("--a2a-strict-spec=yes",),
)
class UnknownStatusIgnored(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        status = params.get("status")
        if method == "ListTasks" and isinstance(status, str) and status not in TASK_STATES:
            params = {name: v for name, v in params.items() if name != "status"}
        return super().params(method, params)


@declare("page-size-unbounded", "ListTasks accepts and uses a pageSize above 100", "LIST-09")
class PageSizeUnbounded(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        size = params.get("pageSize")
        if not isinstance(size, int) or isinstance(size, bool) or size <= 100:
            return super().params(method, params)
        served, problems = super().params(method, {**params, "pageSize": 100})  # the rest validated as ever
        return {**served, "pageSize": size}, problems


def _invalid_params(call: wire.Call) -> list[schemas.ShapeViolation]:
    """What is wrong with the params, when the answer refuses them for it (-32602 from the schema)."""
    if (call.answer.get("error") or {}).get("code") != INVALID_PARAMS:
        return []
    return schemas.violations(call.params, params_schema(call.method))


@declare(
    "invalid-params-as-invalid-request",
    "params that break the method's schema are refused -32600 (Invalid Request), not -32602",
    "ERR-06",
    "ERR-13",
)
@wire.answers
def invalid_params_as_invalid_request(call: wire.Call) -> None:
    if _invalid_params(call):
        call.answer_error(RpcError("InvalidRequestError", "Request payload validation error", reason="INVALID_REQUEST"))


@declare("500-on-wrong-type", "a params field of the wrong JSON type gets HTTP 500", "ERR-14")
@wire.responses
def http_500_on_wrong_type(call: wire.Call, response: web.Response) -> web.Response | None:
    return wire.server_error() if any(p.rule == "type" for p in _invalid_params(call)) else None


@declare(
    "missing-field-500",
    "a request whose params lack a REQUIRED field gets HTTP 500 (its handler crashes), not a JSON-RPC error",
    "ERR-14",
)
@wire.responses
def missing_field_500(call: wire.Call, response: web.Response) -> web.Response | None:
    return wire.server_error() if any(p.rule == "required" for p in _invalid_params(call)) else None


# -- error codes and details


@declare("wrong-error-code", "answers a missing task with -32602 instead of -32001", "TASK-05", "PUSH-17")
@wire.answers
def wrong_error_code(call: wire.Call) -> None:
    if call.reason == "TASK_NOT_FOUND":
        call.answer["error"]["code"] = INVALID_PARAMS


@declare("not-found-wrong-reason", "a missing task's ErrorInfo reason is NOT_FOUND", "TASK-06")
@wire.answers
def not_found_wrong_reason(call: wire.Call) -> None:
    for detail in call.answer.get("error", {}).get("data", []):
        if detail.get("@type") == ERROR_INFO and detail.get("reason") == "TASK_NOT_FOUND":
            detail["reason"] = "NOT_FOUND"


@declare("no-error-info", "A2A errors carry no google.rpc.ErrorInfo detail", "ERR-02")
@wire.answers
def no_error_info(call: wire.Call) -> None:
    error = call.answer.get("error")
    if error and -32100 < error["code"] < -32000:
        error.pop("data", None)


@declare("error-domain-vendor", "the ErrorInfo domain is the vendor's own, not a2a-protocol.org", "ERR-10")
@wire.answers
def error_domain_vendor(call: wire.Call) -> None:
    for detail in call.answer.get("error", {}).get("data", []):
        if detail.get("@type") == ERROR_INFO:
            detail["domain"] = "a2a.nylorun.example"


@declare("error-detail-untyped", "the google.rpc.BadRequest detail of -32602 has no @type", "ERR-11")
@wire.answers
def error_detail_untyped(call: wire.Call) -> None:
    for detail in call.answer.get("error", {}).get("data", []):
        if "fieldViolations" in detail:
            detail.pop("@type", None)


@declare("no-bad-request-detail", "-32602 carries no google.rpc.BadRequest detail", "ERR-07")
@wire.answers
def no_bad_request_detail(call: wire.Call) -> None:
    error = call.answer.get("error")
    if error and error["code"] == INVALID_PARAMS:
        error.pop("data", None)


@declare(
    "version-error-without-error-info",
    "VersionNotSupportedError (-32009) carries no google.rpc.ErrorInfo; every other A2A error does",
    "ERR-02",
    "ERR-10",
)
@wire.answers
def version_error_without_error_info(call: wire.Call) -> None:
    if call.reason == "VERSION_NOT_SUPPORTED":
        call.answer["error"].pop("data", None)


@declare("unsupported-domain-vendor", "UnsupportedOperationError's ErrorInfo domain is the vendor's own", "ERR-10")
@wire.answers
def unsupported_domain_vendor(call: wire.Call) -> None:
    if (call.answer.get("error") or {}).get("code") == schemas.error_code("UnsupportedOperationError"):
        for detail in call.answer["error"].get("data", []):
            detail["domain"] = "a2a.nylorun.example"


@declare("error-data-an-object", "an error's data is its ErrorInfo object, not an array of details", "ERR-11", "ERR-02")
@wire.answers
def error_data_an_object(call: wire.Call) -> None:
    error = call.answer.get("error")
    if error and isinstance(error.get("data"), list) and error["data"]:
        error["data"] = error["data"][0]


@declare(
    "not-cancelable-as-unsupported",
    "CancelTask of an ended task answers UnsupportedOperationError (-32004), not TaskNotCancelableError (-32002)",
    "CANCEL-02",
)
@wire.answers
def not_cancelable_as_unsupported(call: wire.Call) -> None:
    if call.method == "CancelTask" and call.reason == "TASK_NOT_CANCELABLE":
        call.answer["error"]["code"] = schemas.error_code("UnsupportedOperationError")


@declare("error-code-as-string", "error codes are sent as strings", "ERR-09")
@wire.answers
def error_code_as_string(call: wire.Call) -> None:
    if "error" in call.answer:
        call.answer["error"]["code"] = str(call.answer["error"]["code"])


@declare("wrong-response-id", "answers with an id other than the request's", "ERR-01")
@wire.answers
def wrong_response_id(call: wire.Call) -> None:
    if call.answer["id"] is not None:
        call.answer["id"] = f"{call.answer['id']}-answer"


@declare("falsy-id-null", 'a request id of 0 or "" is answered with id null', "ERR-01")
@wire.answers
def falsy_id_null(call: wire.Call) -> None:
    sent = call.request.get("id") if isinstance(call.request, dict) else None
    if sent in (0, "") and not isinstance(sent, bool):
        call.answer["id"] = None


@declare("version-error-id-null", "VersionNotSupportedError is answered with id null, not the request's id", "ERR-01")
@wire.answers
def version_error_id_null(call: wire.Call) -> None:
    if call.reason == "VERSION_NOT_SUPPORTED":
        call.answer["id"] = None


@declare("method-not-found-wrong-code", "answers an unknown method with -32600", "ERR-05")
@wire.answers
def method_not_found_wrong_code(call: wire.Call) -> None:
    if call.reason == "METHOD_NOT_FOUND":
        call.answer_error(RpcError("InvalidRequestError", "Invalid request", reason="INVALID_REQUEST"))


# -- methods the binding does not serve


def _unserved_answered(method: str, error: RpcError):
    """A rewrite: ``method``, which is not served (-32004), is answered ``error`` instead."""

    def rewrite(call: wire.Call) -> None:
        if call.method == method and call.reason == "OPERATION_NOT_SUPPORTED":
            call.answer_error(error)

    return wire.answers(rewrite)


@declare(
    "subscribe-refused-only-when-ended",
    "SubscribeToTask answers -32004 for an ended task only (as A2A §9.4.6 has a streaming Agent do), and -32601 "
    "for one still running or paused",
    "UNSRV-02",
)
class SubscribeRefusedOnlyWhenEnded(Unserved):
    def refusal(self, caller: Caller, method: str, params: dict[str, Any]) -> RpcError:
        task = self.engine.access.find(caller, str(params.get("id", ""))) if method == "SubscribeToTask" else None
        if task is not None and task.state not in TERMINAL:
            return wire.METHOD_NOT_FOUND
        return super().refusal(caller, method, params)


@declare(
    "streaming-refusal-as-stream",
    "SendStreamingMessage's -32004 comes as a text/event-stream of one event when the client accepts a stream",
    "UNSRV-01",
)
@wire.responses
def streaming_refusal_as_stream(call: wire.Call, response: web.Response) -> web.Response | None:
    accepts_stream = "text/event-stream" in call.http.headers.get("Accept", "")
    if call.method != "SendStreamingMessage" or not accepts_stream or call.reason != "OPERATION_NOT_SUPPORTED":
        return None
    return web.Response(body=f"data: {json.dumps(call.answer)}\n\n".encode(), content_type="text/event-stream")


@declare(
    "extended-card-without-params-invalid",
    "GetExtendedAgentCard sent without params answers -32602, not -32004",
    "UNSRV-03",
)
@wire.answers
def extended_card_without_params_invalid(call: wire.Call) -> None:
    request = call.request if isinstance(call.request, dict) else {}
    if call.method == "GetExtendedAgentCard" and "params" not in request:
        call.answer_error(RpcError("InvalidParamsError", "params are required", reason="INVALID_ARGUMENT"))


declare("streaming-method-not-found", "SendStreamingMessage answers -32601 instead of -32004", "UNSRV-01", "STREAM-04")(
    _unserved_answered("SendStreamingMessage", wire.METHOD_NOT_FOUND)
)
declare("subscribe-method-not-found", "SubscribeToTask answers -32601 instead of -32004", "UNSRV-02", "STREAM-04")(
    _unserved_answered("SubscribeToTask", wire.METHOD_NOT_FOUND)
)
declare("extended-card-not-configured", "GetExtendedAgentCard answers -32007 instead of -32004", "UNSRV-03", "CARD-11")(
    _unserved_answered(
        "GetExtendedAgentCard",
        RpcError("ExtendedAgentCardNotConfiguredError", "No extended card", reason="EXTENDED_CARD_NOT_CONFIGURED"),
    )
)


# The strings a client chooses that a store keeps, by method: each cut at a column of 255 characters.
_KEPT_STRINGS = {
    "SendMessage": (
        ("message", "messageId"),
        ("message", "contextId"),
        ("configuration", "taskPushNotificationConfig", "id"),
        ("configuration", "taskPushNotificationConfig", "token"),
    ),
    "CreateTaskPushNotificationConfig": (("id",), ("token",)),
}
_COLUMN = 255


@declare(
    "client-strings-cut-at-255",
    "the ids and tokens a client chooses (messageId, contextId, a push config's id and token) are kept in columns "
    "of 255 characters: a longer one is cut",
    "SEND-06",
    "TASK-17",
    "PUSH-08",
    "PUSH-01",
)
class ClientStringsCutAt255(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        served, problems = super().params(method, params)
        served = copy.deepcopy(served)
        for path in _KEPT_STRINGS.get(method, ()):
            holder: Any = served
            for step in path[:-1]:
                holder = holder.get(step) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and isinstance(holder.get(path[-1]), str):
                holder[path[-1]] = holder[path[-1]][:_COLUMN]
        return served, problems


@declare(
    "parse-error-without-jsonrpc",
    "the answer to unparseable JSON (-32700) is built on its own early path and has no jsonrpc member; every other "
    'answer carries jsonrpc "2.0"',
    "ERR-03",
)
@wire.answers
def parse_error_without_jsonrpc(call: wire.Call) -> None:
    if (call.answer.get("error") or {}).get("code") == schemas.error_code("JSONParseError"):
        call.answer.pop("jsonrpc", None)
