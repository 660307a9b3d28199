"""The kit's JSON Schemas: well-formed, fully resolvable, faithful to a2a.proto, and right about examples.

Good examples come from the A2A 1.0 specification (``tests/schema_examples/*.json``, each naming its section
and any adaptation) and from realistic instances written here; bad examples each break one named rule and
say which JSON Schema keyword must report it.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import jsonschema
import pytest

import schemas

EXAMPLES_DIR = Path(__file__).resolve().parent / "schema_examples"
PROTO = Path(os.environ.get("A2A_PROTO", "/work/shared/reference/a2a-1.0/a2a.proto"))
DIALECT = "https://json-schema.org/draft/2020-12/schema"

METHODS = {
    "SendMessage": False,
    "SendStreamingMessage": True,
    "GetTask": False,
    "ListTasks": False,
    "CancelTask": False,
    "SubscribeToTask": True,
    "CreateTaskPushNotificationConfig": False,
    "GetTaskPushNotificationConfig": False,
    "ListTaskPushNotificationConfigs": False,
    "DeleteTaskPushNotificationConfig": False,
    "GetExtendedAgentCard": False,
}

NAMED_ERROR_CODES = {
    "JSONParseError": -32700,
    "InvalidRequestError": -32600,
    "MethodNotFoundError": -32601,
    "InvalidParamsError": -32602,
    "InternalError": -32603,
    "TaskNotFoundError": -32001,
    "TaskNotCancelableError": -32002,
    "PushNotificationNotSupportedError": -32003,
    "UnsupportedOperationError": -32004,
    "ContentTypeNotSupportedError": -32005,
    "InvalidAgentResponseError": -32006,
    "ExtendedAgentCardNotConfiguredError": -32007,
    "ExtensionSupportRequiredError": -32008,
    "VersionNotSupportedError": -32009,
}

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"

# --------------------------------------------------------------------------------------------- helpers

DROP = object()


def edit(base: Any, *changes: tuple[str, Any]) -> Any:
    """A deep copy of ``base`` with each ``(dotted.path, value)`` applied; ``DROP`` deletes the member."""
    out = copy.deepcopy(base)
    for path, value in changes:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node = out
        for part in parents:
            node = node[part]
        if value is DROP:
            del node[last]
        else:
            node[last] = copy.deepcopy(value)
    return out


def rpc_ok(result: Any, id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def rpc_error(code: int, message: str, *data: dict[str, Any], id_: Any = 1) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = list(data)
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def rpc_request(method: str, params: Any = DROP, id_: Any = 1) -> dict[str, Any]:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not DROP:
        request["params"] = params
    return request


def load_examples() -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(EXAMPLES_DIR.glob("*.json"))}


SPEC = load_examples()


def spec(name: str) -> Any:
    return copy.deepcopy(SPEC[name]["instance"])


# --------------------------------------------------------------------------------------------- realistic instances

TIMESTAMP = "2025-10-28T10:30:00.000Z"
TASK_ID = "7d3c5a1e-2f4b-4c8e-9a6d-1b2c3d4e5f60"
CONTEXT_ID = "c295ea44-7543-4f78-b524-7a38915ad6e4"

TEXT_PART = {"text": "Summarise the attached quarterly report."}
RAW_PART = {"raw": "JVBERi0xLjQKJcfsj6IKNSAwIG9iago=", "filename": "q3.pdf", "mediaType": "application/pdf"}
URL_PART = {"url": "https://files.example.com/reports/q3.pdf", "filename": "q3.pdf", "mediaType": "application/pdf"}
DATA_PART = {"data": {"revenue": 1250000, "currency": "EUR", "growth": 0.12}, "mediaType": "application/json"}

USER_MESSAGE = {
    "messageId": "5b0c7f8e-4d1a-4a2b-8c3d-9e0f1a2b3c4d",
    "role": "ROLE_USER",
    "parts": [TEXT_PART, RAW_PART],
}
AGENT_MESSAGE = {
    "messageId": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
    "contextId": CONTEXT_ID,
    "taskId": TASK_ID,
    "role": "ROLE_AGENT",
    "parts": [{"text": "Working on it: extracting the figures."}],
    "referenceTaskIds": ["0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b"],
}
ARTIFACT = {
    "artifactId": "summary",
    "name": "Q3 summary",
    "description": "Key figures of the Q3 report",
    "parts": [{"text": "Revenue grew 12% to EUR 1.25M."}, DATA_PART],
    "metadata": {"pages": 14},
}
STATUS_WORKING = {"state": "TASK_STATE_WORKING", "message": AGENT_MESSAGE, "timestamp": TIMESTAMP}
STATUS_COMPLETED = {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:31:12.5Z"}
TASK = {
    "id": TASK_ID,
    "contextId": CONTEXT_ID,
    "status": STATUS_COMPLETED,
    "artifacts": [ARTIFACT],
    "history": [USER_MESSAGE, AGENT_MESSAGE],
    "metadata": {"priority": "high", "tags": ["finance"], "retries": 0, "reviewer": None},
}
TASK_MINIMAL = {"id": TASK_ID, "status": {"state": "TASK_STATE_SUBMITTED"}}
STATUS_UPDATE = {"taskId": TASK_ID, "contextId": CONTEXT_ID, "status": STATUS_WORKING, "metadata": {"step": 2}}
ARTIFACT_UPDATE = {
    "taskId": TASK_ID,
    "contextId": CONTEXT_ID,
    "artifact": ARTIFACT,
    "append": False,
    "lastChunk": True,
}
AUTHENTICATION = {"scheme": "Bearer", "credentials": "s3cr3t-push-token"}
PUSH_CONFIG = {
    "id": "push-1",
    "taskId": TASK_ID,
    "url": "https://client.example.com/a2a/webhook",
    "token": "client-verification-token",
    "authentication": AUTHENTICATION,
}
INTERFACE = {"url": "https://agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
SKILL = {
    "id": "report-summary",
    "name": "Report summariser",
    "description": "Summarises financial reports into key figures.",
    "tags": ["finance", "summary"],
    "examples": ["Summarise this PDF"],
    "inputModes": ["application/pdf", "text/plain"],
    "outputModes": ["text/plain", "application/json"],
    "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
}
EXTENSION = {
    "uri": "https://nylorun.example/extensions/audit/v1",
    "description": "Adds an audit trail to artifacts",
    "required": True,
    "params": {"retentionDays": 30},
}
CAPABILITIES = {"streaming": True, "pushNotifications": False, "extensions": [EXTENSION], "extendedAgentCard": False}
SIGNATURE = spec("agent-card-signature-spec-8.4.2")
AGENT_CARD = spec("agent-card-spec-8.5")

OAUTH_AUTH_CODE = {
    "authorizationUrl": "https://auth.example.com/authorize",
    "tokenUrl": "https://auth.example.com/token",
    "refreshUrl": "https://auth.example.com/refresh",
    "scopes": {"tasks:read": "Read tasks", "tasks:write": "Create tasks"},
    "pkceRequired": True,
}
OAUTH_CLIENT_CREDENTIALS = {"tokenUrl": "https://auth.example.com/token", "scopes": {}}
OAUTH_DEVICE_CODE = {
    "deviceAuthorizationUrl": "https://auth.example.com/device",
    "tokenUrl": "https://auth.example.com/token",
    "scopes": {"tasks:read": "Read tasks"},
}
SECURITY_SCHEMES = {
    "api-key": {"apiKeySecurityScheme": {"description": "Tenant key", "location": "header", "name": "X-API-Key"}},
    "http-bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
    "oauth2-authorization-code": {
        "oauth2SecurityScheme": {
            "flows": {"authorizationCode": OAUTH_AUTH_CODE},
            "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
        }
    },
    "oauth2-client-credentials": {"oauth2SecurityScheme": {"flows": {"clientCredentials": OAUTH_CLIENT_CREDENTIALS}}},
    "oauth2-device-code": {"oauth2SecurityScheme": {"flows": {"deviceCode": OAUTH_DEVICE_CODE}}},
    "oauth2-implicit-deprecated": {
        "oauth2SecurityScheme": {"flows": {"implicit": {"authorizationUrl": "https://auth.example.com/authorize"}}}
    },
    "oauth2-password-deprecated": {
        "oauth2SecurityScheme": {"flows": {"password": {"tokenUrl": "https://auth.example.com/token", "scopes": {}}}}
    },
    "openid-connect": spec("security-scheme-spec-6.9"),
    "mtls": {"mtlsSecurityScheme": {"description": "Client certificate issued by the Nylorun CA"}},
}
AGENT_CARD_FULL = edit(
    AGENT_CARD,
    ("supportedInterfaces", [dict(INTERFACE, tenant="acme"), {**INTERFACE, "url": "grpc.example.com:443"}]),
    ("securitySchemes", SECURITY_SCHEMES),
    ("securityRequirements", [{"schemes": {"http-bearer": {"list": []}}}, {"schemes": {"mtls": {}}}]),
    ("capabilities", CAPABILITIES),
    ("skills", [SKILL]),
)
SEND_CONFIGURATION = {
    "acceptedOutputModes": ["text/plain", "application/json"],
    "taskPushNotificationConfig": {"url": "https://client.example.com/a2a/webhook", "token": "tok-1"},
    "historyLength": 0,
    "returnImmediately": True,
}
SEND_REQUEST = {
    "tenant": "acme",
    "message": USER_MESSAGE,
    "configuration": SEND_CONFIGURATION,
    "metadata": {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736"},
}
LIST_TASKS_REQUEST = {
    "contextId": CONTEXT_ID,
    "status": "TASK_STATE_COMPLETED",
    "pageSize": 25,
    "pageToken": "eyJvZmZzZXQiOjI1fQ",
    "historyLength": 2,
    "statusTimestampAfter": "2025-10-01T00:00:00Z",
    "includeArtifacts": True,
}
LIST_TASKS_RESPONSE = {
    "tasks": [TASK, TASK_MINIMAL],
    "nextPageToken": "eyJvZmZzZXQiOjUwfQ",
    "pageSize": 25,
    "totalSize": 57,
}
EMPTY_TASK_PAGE = {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}
ERROR_INFO_DETAIL = {
    "@type": ERROR_INFO,
    "reason": "TASK_NOT_FOUND",
    "domain": "a2a-protocol.org",
    "metadata": {"taskId": TASK_ID},
}
BAD_REQUEST_DETAIL = {
    "@type": BAD_REQUEST,
    "fieldViolations": [
        {
            "field": "pageSize",
            "description": "Must be between 1 and 100 inclusive, got 150",
            "reason": "OUT_OF_RANGE",
            "localizedMessage": {"locale": "en-US", "message": "Page size must be at most 100."},
        }
    ],
}
TASK_NOT_FOUND = rpc_error(-32001, "Task not found", ERROR_INFO_DETAIL)

# Per method: realistic params and result, keyed by the method's name.
METHOD_EXAMPLES: dict[str, dict[str, Any]] = {
    "SendMessage": {"params": SEND_REQUEST, "result": {"task": TASK}},
    "SendStreamingMessage": {"params": {"message": USER_MESSAGE}, "result": {"statusUpdate": STATUS_UPDATE}},
    "GetTask": {"params": {"id": TASK_ID, "historyLength": 5}, "result": TASK},
    "ListTasks": {"params": LIST_TASKS_REQUEST, "result": LIST_TASKS_RESPONSE},
    "CancelTask": {
        "params": {"id": TASK_ID, "metadata": {"reason": "user request"}},
        "result": edit(TASK, ("status", {"state": "TASK_STATE_CANCELED", "timestamp": TIMESTAMP})),
    },
    "SubscribeToTask": {"params": {"id": TASK_ID}, "result": {"task": edit(TASK, ("status", STATUS_WORKING))}},
    "CreateTaskPushNotificationConfig": {
        "params": {"taskId": TASK_ID, "url": "https://client.example.com/a2a/webhook", "token": "tok-1"},
        "result": PUSH_CONFIG,
    },
    "GetTaskPushNotificationConfig": {"params": {"taskId": TASK_ID, "id": "push-1"}, "result": PUSH_CONFIG},
    "ListTaskPushNotificationConfigs": {
        "params": {"taskId": TASK_ID, "pageSize": 10},
        "result": {"configs": [PUSH_CONFIG], "nextPageToken": ""},
    },
    "DeleteTaskPushNotificationConfig": {"params": {"taskId": TASK_ID, "id": "push-1"}, "result": {}},
    "GetExtendedAgentCard": {"params": {}, "result": AGENT_CARD_FULL},
}

# --------------------------------------------------------------------------------------------- good examples

GOOD: list[tuple[str, str, Any]] = [
    # shared types
    ("Timestamp/no-fraction", "a2a/Timestamp.json", "2024-03-15T10:15:00Z"),
    ("Timestamp/milliseconds", "a2a/Timestamp.json", TIMESTAMP),
    ("Timestamp/nanoseconds", "a2a/Timestamp.json", "2025-10-28T10:30:00.123456789Z"),
    ("Timestamp/leap-day", "a2a/Timestamp.json", "2024-02-29T23:59:59Z"),
    ("Bytes/empty", "a2a/Bytes.json", ""),
    ("Bytes/standard-padded", "a2a/Bytes.json", "aGVsbG8gd29ybGQ="),
    ("Bytes/standard-unpadded", "a2a/Bytes.json", "aGVsbG8gd29ybGQ"),
    ("Bytes/standard-plus-slash", "a2a/Bytes.json", "+/+/"),
    ("Bytes/url-safe", "a2a/Bytes.json", "-_-_aGk"),
    ("Struct/empty", "a2a/Struct.json", {}),
    ("Struct/nested", "a2a/Struct.json", {"a": None, "b": [1, "x", {"c": True}], "d": 1.5}),
    ("Value/null", "a2a/Value.json", None),
    ("Value/number", "a2a/Value.json", 3.25),
    ("Value/array", "a2a/Value.json", [1, "two", {"three": 3}]),
    ("Value/object", "a2a/Value.json", {"k": "v"}),
    # enums
    *(
        (f"TaskState/{state}", "a2a/TaskState.json", state)
        for state in ("TASK_STATE_UNSPECIFIED", "TASK_STATE_AUTH_REQUIRED")
    ),
    ("Role/ROLE_AGENT", "a2a/Role.json", "ROLE_AGENT"),
    ("Role/ROLE_UNSPECIFIED-enum-itself", "a2a/Role.json", "ROLE_UNSPECIFIED"),
    # core objects
    ("Part/text", "a2a/Part.json", TEXT_PART),
    ("Part/empty-text", "a2a/Part.json", {"text": ""}),
    ("Part/raw", "a2a/Part.json", RAW_PART),
    ("Part/url", "a2a/Part.json", URL_PART),
    ("Part/data-object", "a2a/Part.json", DATA_PART),
    ("Part/data-array", "a2a/Part.json", {"data": [1, 2, 3]}),
    ("Part/data-null", "a2a/Part.json", {"data": None}),
    ("Part/legacy-kind-member-ignored", "a2a/Part.json", {"kind": "text", "text": "Hello, world!"}),
    (
        "Part/spec-A.2.1-file",
        "a2a/Part.json",
        {"raw": "iVBORw0KGgo=", "filename": "diagram.png", "mediaType": "image/png"},
    ),
    ("Message/user", "a2a/Message.json", USER_MESSAGE),
    ("Message/agent", "a2a/Message.json", AGENT_MESSAGE),
    ("Message/unknown-member-ignored", "a2a/Message.json", edit(USER_MESSAGE, ("x-trace", "abc"))),
    ("Artifact/full", "a2a/Artifact.json", ARTIFACT),
    ("TaskStatus/working", "a2a/TaskStatus.json", STATUS_WORKING),
    ("TaskStatus/state-only", "a2a/TaskStatus.json", {"state": "TASK_STATE_REJECTED"}),
    ("Task/full", "a2a/Task.json", TASK),
    ("Task/minimal", "a2a/Task.json", TASK_MINIMAL),
    ("Task/empty-artifacts", "a2a/Task.json", edit(TASK, ("artifacts", []))),
    ("TaskStatusUpdateEvent/working", "a2a/TaskStatusUpdateEvent.json", STATUS_UPDATE),
    ("TaskArtifactUpdateEvent/last-chunk", "a2a/TaskArtifactUpdateEvent.json", ARTIFACT_UPDATE),
    ("AuthenticationInfo/bearer", "a2a/AuthenticationInfo.json", AUTHENTICATION),
    ("AuthenticationInfo/scheme-only", "a2a/AuthenticationInfo.json", {"scheme": "Basic"}),
    ("TaskPushNotificationConfig/full", "a2a/TaskPushNotificationConfig.json", PUSH_CONFIG),
    ("TaskPushNotificationConfig/url-only", "a2a/TaskPushNotificationConfig.json", {"url": "https://h.example/w"}),
    # discovery
    ("AgentInterface/jsonrpc", "a2a/AgentInterface.json", INTERFACE),
    ("AgentInterface/grpc-host-port", "a2a/AgentInterface.json", {**INTERFACE, "url": "grpc.example.com:443"}),
    ("AgentInterface/grpc-ip-port", "a2a/AgentInterface.json", {**INTERFACE, "url": "10.0.0.5:50051"}),
    (
        "AgentInterface/spec-5.8-custom-binding",
        "a2a/AgentInterface.json",
        {
            "url": "wss://agent.example.com/a2a/websocket",
            "protocolBinding": "https://example.com/bindings/websocket/v1",
            "protocolVersion": "1.0",
        },
    ),
    ("AgentProvider/spec-8.5", "a2a/AgentProvider.json", AGENT_CARD["provider"]),
    ("AgentCapabilities/full", "a2a/AgentCapabilities.json", CAPABILITIES),
    ("AgentCapabilities/empty", "a2a/AgentCapabilities.json", {}),
    ("AgentExtension/full", "a2a/AgentExtension.json", EXTENSION),
    ("AgentExtension/empty", "a2a/AgentExtension.json", {}),
    ("AgentSkill/full", "a2a/AgentSkill.json", SKILL),
    ("AgentSkill/spec-8.5", "a2a/AgentSkill.json", AGENT_CARD["skills"][0]),
    ("AgentCardSignature/with-header", "a2a/AgentCardSignature.json", {**SIGNATURE, "header": {"kid": "key-1"}}),
    ("SecurityRequirement/spec-8.5", "a2a/SecurityRequirement.json", AGENT_CARD["securityRequirements"][0]),
    ("SecurityRequirement/no-scopes", "a2a/SecurityRequirement.json", {"schemes": {"mtls": {}}}),
    *((f"SecurityScheme/{name}", "a2a/SecurityScheme.json", scheme) for name, scheme in SECURITY_SCHEMES.items()),
    ("AgentCard/all-security-schemes", "a2a/AgentCard.json", AGENT_CARD_FULL),
    ("AgentCard/legacy-member-ignored", "a2a/AgentCard.json", {**AGENT_CARD, "supportsExtendedAgentCard": True}),
    # requests and responses
    ("SendMessageConfiguration/full", "a2a/SendMessageConfiguration.json", SEND_CONFIGURATION),
    ("SendMessageRequest/full", "a2a/SendMessageRequest.json", SEND_REQUEST),
    ("SendMessageResponse/message", "a2a/SendMessageResponse.json", {"message": AGENT_MESSAGE}),
    ("StreamResponse/message", "a2a/StreamResponse.json", {"message": AGENT_MESSAGE}),
    ("StreamResponse/artifact-update", "a2a/StreamResponse.json", {"artifactUpdate": ARTIFACT_UPDATE}),
    ("GetTaskRequest/spec-9.4.3", "a2a/GetTaskRequest.json", {"id": "task-uuid", "historyLength": 10}),
    ("GetTaskRequest/history-zero", "a2a/GetTaskRequest.json", {"id": TASK_ID, "historyLength": 0}),
    ("ListTasksRequest/full", "a2a/ListTasksRequest.json", LIST_TASKS_REQUEST),
    ("ListTasksRequest/empty", "a2a/ListTasksRequest.json", {}),
    ("ListTasksRequest/status-unspecified", "a2a/ListTasksRequest.json", {"status": "TASK_STATE_UNSPECIFIED"}),
    ("ListTasksRequest/page-size-1", "a2a/ListTasksRequest.json", {"pageSize": 1}),
    ("ListTasksRequest/page-size-100", "a2a/ListTasksRequest.json", {"pageSize": 100}),
    ("ListTasksResponse/next-page", "a2a/ListTasksResponse.json", LIST_TASKS_RESPONSE),
    ("ListTasksResponse/empty-page", "a2a/ListTasksResponse.json", EMPTY_TASK_PAGE),
    ("CancelTaskRequest/spec-9.4.5", "a2a/CancelTaskRequest.json", {"id": "task-uuid"}),
    ("SubscribeToTaskRequest/with-tenant", "a2a/SubscribeToTaskRequest.json", {"tenant": "acme", "id": TASK_ID}),
    (
        "GetTaskPushNotificationConfigRequest/ids",
        "a2a/GetTaskPushNotificationConfigRequest.json",
        {"taskId": TASK_ID, "id": "push-1"},
    ),
    (
        "DeleteTaskPushNotificationConfigRequest/ids",
        "a2a/DeleteTaskPushNotificationConfigRequest.json",
        {"tenant": "acme", "taskId": TASK_ID, "id": "push-1"},
    ),
    (
        "ListTaskPushNotificationConfigsRequest/paged",
        "a2a/ListTaskPushNotificationConfigsRequest.json",
        {"taskId": TASK_ID, "pageSize": 0, "pageToken": "p2"},
    ),
    (
        "ListTaskPushNotificationConfigsResponse/one",
        "a2a/ListTaskPushNotificationConfigsResponse.json",
        {"configs": [PUSH_CONFIG], "nextPageToken": "p2"},
    ),
    ("ListTaskPushNotificationConfigsResponse/none", "a2a/ListTaskPushNotificationConfigsResponse.json", {}),
    ("GetExtendedAgentCardRequest/empty", "a2a/GetExtendedAgentCardRequest.json", {}),
    ("GetExtendedAgentCardRequest/tenant", "a2a/GetExtendedAgentCardRequest.json", {"tenant": "acme"}),
    # JSON-RPC
    ("Request/string-id", "jsonrpc/Request.json", rpc_request("GetTask", {"id": TASK_ID}, id_="req-7")),
    ("Request/null-id", "jsonrpc/Request.json", rpc_request("GetTask", {"id": TASK_ID}, id_=None)),
    ("Request/no-params", "jsonrpc/Request.json", rpc_request("GetExtendedAgentCard")),
    ("Response/result", "jsonrpc/Response.json", rpc_ok({"anything": True}, id_="req-7")),
    ("Response/null-result", "jsonrpc/Response.json", rpc_ok(None)),
    ("Response/error-null-id", "jsonrpc/Response.json", rpc_error(-32700, "Invalid JSON payload", id_=None)),
    ("ErrorObject/no-data", "jsonrpc/ErrorObject.json", {"code": -32603, "message": "Internal error"}),
    (
        "ErrorObject/both-details-and-unknown-type",
        "jsonrpc/ErrorObject.json",
        {
            "code": -32602,
            "message": "Invalid parameters",
            "data": [
                ERROR_INFO_DETAIL,
                BAD_REQUEST_DETAIL,
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "5s"},
            ],
        },
    ),
    ("ErrorObject/custom-auth-code", "jsonrpc/ErrorObject.json", {"code": 401, "message": "Unauthenticated"}),
    ("ErrorInfo/spec-9.5", "jsonrpc/ErrorInfo.json", spec("response-spec-9.5-task-not-found")["error"]["data"][0]),
    ("ErrorInfo/no-metadata", "jsonrpc/ErrorInfo.json", {"@type": ERROR_INFO, "reason": "A1", "domain": "x"}),
    ("ErrorInfo/reason-63-chars", "jsonrpc/ErrorInfo.json", {**ERROR_INFO_DETAIL, "reason": "A" * 63}),
    ("BadRequest/full", "jsonrpc/BadRequest.json", BAD_REQUEST_DETAIL),
    ("BadRequest/no-violations", "jsonrpc/BadRequest.json", {"@type": BAD_REQUEST}),
    *((f"error-codes/{name}", "jsonrpc/error-codes.json", code) for name, code in NAMED_ERROR_CODES.items()),
    ("error-codes/server-error-lowest", "jsonrpc/error-codes.json", -32099),
    ("error-codes/server-error-highest", "jsonrpc/error-codes.json", -32000),
    ("error-codes/server-error-custom", "jsonrpc/error-codes.json", -32050),
]

for _method, _example in METHOD_EXAMPLES.items():
    _doc = f"methods/{_method}.json"
    GOOD += [
        (f"{_method}/params", f"{_doc}#/$defs/params", _example["params"]),
        (f"{_method}/result", f"{_doc}#/$defs/result", _example["result"]),
        (f"{_method}/request", f"{_doc}#/$defs/request", rpc_request(_method, _example["params"], id_=42)),
        (f"{_method}/response", f"{_doc}#/$defs/response", rpc_ok(_example["result"], id_=42)),
        (f"{_method}/response-as-document", _doc, rpc_ok(_example["result"], id_="r-42")),
        (f"{_method}/error-response", f"{_doc}#/$defs/response", TASK_NOT_FOUND),
        *((f"{_method}/errors/{code}", f"{_doc}#/$defs/errors", code) for code in (-32602, -32009)),
    ]

GOOD += [
    ("SendMessage/result-message", "methods/SendMessage.json#/$defs/result", {"message": AGENT_MESSAGE}),
    ("SendStreamingMessage/result-task", "methods/SendStreamingMessage.json#/$defs/result", {"task": TASK}),
    (
        "SendStreamingMessage/result-artifact-update",
        "methods/SendStreamingMessage.json#/$defs/result",
        {"artifactUpdate": ARTIFACT_UPDATE},
    ),
    ("SubscribeToTask/error-terminal-task", "methods/SubscribeToTask.json#/$defs/errors", -32004),
    ("CancelTask/errors/not-cancelable", "methods/CancelTask.json#/$defs/errors", -32002),
    (
        "DeleteTaskPushNotificationConfig/result-null",
        "methods/DeleteTaskPushNotificationConfig.json#/$defs/result",
        None,
    ),
    (
        "DeleteTaskPushNotificationConfig/response-null-result",
        "methods/DeleteTaskPushNotificationConfig.json#/$defs/response",
        rpc_ok(None),
    ),
    (
        "GetExtendedAgentCard/request-empty-params",
        "methods/GetExtendedAgentCard.json#/$defs/request",
        rpc_request("GetExtendedAgentCard", {}),
    ),
    (
        "GetExtendedAgentCard/request-no-params",
        "methods/GetExtendedAgentCard.json#/$defs/request",
        rpc_request("GetExtendedAgentCard"),
    ),
    (
        "GetExtendedAgentCard/errors/not-configured",
        "methods/GetExtendedAgentCard.json#/$defs/errors",
        -32007,
    ),
]

# Spec examples kept verbatim or adapted, one file each (tests/schema_examples/<name>.json).
GOOD += [(f"spec:{name}", ex["schema"], ex["instance"]) for name, ex in SPEC.items() if ex["valid"]]

# --------------------------------------------------------------------------------------------- bad examples
# (id, schema, instance, the JSON Schema keyword that must report it)

BAD: list[tuple[str, str, Any, str]] = [
    # Timestamp
    ("Timestamp/offset-plus-01:00", "a2a/Timestamp.json", "2025-10-28T10:30:00+01:00", "pattern"),
    ("Timestamp/offset-plus-00:00", "a2a/Timestamp.json", "2025-10-28T10:30:00+00:00", "pattern"),
    ("Timestamp/invalid-date-2025-13-40", "a2a/Timestamp.json", "2025-13-40T00:00:00Z", "format"),
    ("Timestamp/invalid-time-25h", "a2a/Timestamp.json", "2025-10-28T25:00:00Z", "format"),
    ("Timestamp/feb-29-non-leap", "a2a/Timestamp.json", "2025-02-29T00:00:00Z", "format"),
    ("Timestamp/no-zone", "a2a/Timestamp.json", "2025-10-28T10:30:00", "pattern"),
    ("Timestamp/lowercase-z", "a2a/Timestamp.json", "2025-10-28T10:30:00z", "pattern"),
    ("Timestamp/space-separator", "a2a/Timestamp.json", "2025-10-28 10:30:00Z", "pattern"),
    ("Timestamp/ten-fraction-digits", "a2a/Timestamp.json", "2025-10-28T10:30:00.1234567890Z", "pattern"),
    ("Timestamp/date-only", "a2a/Timestamp.json", "2025-10-28", "pattern"),
    ("Timestamp/epoch-number", "a2a/Timestamp.json", 1761647400, "type"),
    # Bytes
    ("Bytes/not-base64", "a2a/Bytes.json", "not base64!!", "pattern"),
    ("Bytes/length-4n+1", "a2a/Bytes.json", "aGVsb", "pattern"),
    ("Bytes/triple-padding", "a2a/Bytes.json", "aGVsbG8===", "pattern"),
    ("Bytes/mixed-alphabets", "a2a/Bytes.json", "ab+_", "pattern"),
    ("Bytes/padding-in-middle", "a2a/Bytes.json", "aG=sbG8=", "pattern"),
    ("Bytes/byte-array", "a2a/Bytes.json", [104, 105], "type"),
    # Struct
    ("Struct/array", "a2a/Struct.json", [1, 2], "type"),
    ("Struct/string", "a2a/Struct.json", "{}", "type"),
    # enums
    ("TaskState/unknown-TASK_STATE_RUNNING", "a2a/TaskState.json", "TASK_STATE_RUNNING", "enum"),
    ("TaskState/legacy-lowercase", "a2a/TaskState.json", "completed", "enum"),
    ("TaskState/number", "a2a/TaskState.json", 3, "type"),
    ("Role/legacy-user", "a2a/Role.json", "user", "enum"),
    # TaskStatus
    ("TaskStatus/state-missing", "a2a/TaskStatus.json", {"timestamp": TIMESTAMP}, "required"),
    ("TaskStatus/state-UNSPECIFIED", "a2a/TaskStatus.json", {"state": "TASK_STATE_UNSPECIFIED"}, "not"),
    ("TaskStatus/state-unknown", "a2a/TaskStatus.json", {"state": "TASK_STATE_RUNNING"}, "enum"),
    ("TaskStatus/state-as-number", "a2a/TaskStatus.json", {"state": 3}, "type"),
    (
        "TaskStatus/timestamp-+01:00",
        "a2a/TaskStatus.json",
        edit(STATUS_COMPLETED, ("timestamp", "2025-10-28T11:31:12+01:00")),
        "pattern",
    ),
    (
        "TaskStatus/timestamp-invalid-date",
        "a2a/TaskStatus.json",
        edit(STATUS_COMPLETED, ("timestamp", "2025-13-40T00:00:00Z")),
        "format",
    ),
    ("TaskStatus/message-invalid", "a2a/TaskStatus.json", edit(STATUS_WORKING, ("message.parts", [])), "minItems"),
    # Task
    ("Task/id-missing", "a2a/Task.json", edit(TASK, ("id", DROP)), "required"),
    ("Task/id-empty", "a2a/Task.json", edit(TASK, ("id", "")), "minLength"),
    ("Task/id-number", "a2a/Task.json", edit(TASK, ("id", 42)), "type"),
    ("Task/status-missing", "a2a/Task.json", edit(TASK, ("status", DROP)), "required"),
    ("Task/status-as-string", "a2a/Task.json", edit(TASK, ("status", "TASK_STATE_COMPLETED")), "type"),
    ("Task/artifacts-null", "a2a/Task.json", edit(TASK, ("artifacts", None)), "type"),
    ("Task/contextId-null", "a2a/Task.json", edit(TASK, ("contextId", None)), "type"),
    ("Task/history-object", "a2a/Task.json", edit(TASK, ("history", {"0": USER_MESSAGE})), "type"),
    ("Task/metadata-array", "a2a/Task.json", edit(TASK, ("metadata", ["x"])), "type"),
    (
        "Task/status-under-another-name",
        "a2a/Task.json",
        {"id": TASK_ID, "task_status": STATUS_COMPLETED},
        "required",
    ),
    # Part
    ("Part/two-contents-text-and-raw", "a2a/Part.json", {"text": "hi", "raw": "aGk="}, "oneOf"),
    ("Part/two-contents-url-and-data", "a2a/Part.json", {"url": "https://x.example/a", "data": {}}, "oneOf"),
    ("Part/no-content", "a2a/Part.json", {"filename": "a.txt", "mediaType": "text/plain"}, "required"),
    ("Part/empty-object", "a2a/Part.json", {}, "required"),
    ("Part/raw-not-base64", "a2a/Part.json", {"raw": "not base64!!"}, "pattern"),
    ("Part/raw-spec-6.7-elided", "a2a/Part.json", {"raw": "iVBORw0KGgoAAAANSUhEUgAAAAUA..."}, "pattern"),
    ("Part/url-not-uri", "a2a/Part.json", {"url": "not a url"}, "format"),
    ("Part/url-relative", "a2a/Part.json", {"url": "/files/q3.pdf"}, "format"),
    ("Part/text-number", "a2a/Part.json", {"text": 42}, "type"),
    (
        "Part/legacy-v0.3-file-part",
        "a2a/Part.json",
        {"kind": "file", "file": {"name": "d.png", "fileWithBytes": "aGk="}},
        "required",
    ),
    ("Part/metadata-string", "a2a/Part.json", {"text": "hi", "metadata": "x"}, "type"),
    # Message
    ("Message/messageId-missing", "a2a/Message.json", edit(USER_MESSAGE, ("messageId", DROP)), "required"),
    ("Message/messageId-empty", "a2a/Message.json", edit(USER_MESSAGE, ("messageId", "")), "minLength"),
    (
        "Message/snake_case-message_id",
        "a2a/Message.json",
        edit(USER_MESSAGE, ("message_id", USER_MESSAGE["messageId"]), ("messageId", DROP)),
        "required",
    ),
    ("Message/role-missing", "a2a/Message.json", edit(USER_MESSAGE, ("role", DROP)), "required"),
    ("Message/role-UNSPECIFIED", "a2a/Message.json", edit(USER_MESSAGE, ("role", "ROLE_UNSPECIFIED")), "not"),
    ("Message/role-unknown", "a2a/Message.json", edit(USER_MESSAGE, ("role", "ROLE_SYSTEM")), "enum"),
    ("Message/role-legacy-lowercase", "a2a/Message.json", edit(USER_MESSAGE, ("role", "user")), "enum"),
    ("Message/parts-empty", "a2a/Message.json", edit(USER_MESSAGE, ("parts", [])), "minItems"),
    ("Message/parts-missing", "a2a/Message.json", edit(USER_MESSAGE, ("parts", DROP)), "required"),
    (
        "Message/part-with-two-contents",
        "a2a/Message.json",
        edit(USER_MESSAGE, ("parts.0.url", "https://x.example/")),
        "oneOf",
    ),
    ("Message/extensions-not-uri", "a2a/Message.json", edit(USER_MESSAGE, ("extensions", ["geolocation"])), "format"),
    ("Message/referenceTaskIds-string", "a2a/Message.json", edit(USER_MESSAGE, ("referenceTaskIds", TASK_ID)), "type"),
    # Artifact
    ("Artifact/artifactId-missing", "a2a/Artifact.json", edit(ARTIFACT, ("artifactId", DROP)), "required"),
    ("Artifact/parts-empty", "a2a/Artifact.json", edit(ARTIFACT, ("parts", [])), "minItems"),
    (
        "Artifact/snake_case-artifact_id",
        "a2a/Artifact.json",
        edit(ARTIFACT, ("artifact_id", "a"), ("artifactId", DROP)),
        "required",
    ),
    # events
    (
        "TaskStatusUpdateEvent/contextId-missing",
        "a2a/TaskStatusUpdateEvent.json",
        edit(STATUS_UPDATE, ("contextId", DROP)),
        "required",
    ),
    (
        "TaskStatusUpdateEvent/taskId-empty",
        "a2a/TaskStatusUpdateEvent.json",
        edit(STATUS_UPDATE, ("taskId", "")),
        "minLength",
    ),
    (
        "TaskStatusUpdateEvent/status-UNSPECIFIED",
        "a2a/TaskStatusUpdateEvent.json",
        edit(STATUS_UPDATE, ("status.state", "TASK_STATE_UNSPECIFIED")),
        "not",
    ),
    (
        "TaskStatusUpdateEvent/snake_case-task_id",
        "a2a/TaskStatusUpdateEvent.json",
        edit(STATUS_UPDATE, ("task_id", TASK_ID), ("taskId", DROP)),
        "required",
    ),
    (
        "TaskArtifactUpdateEvent/artifact-missing",
        "a2a/TaskArtifactUpdateEvent.json",
        edit(ARTIFACT_UPDATE, ("artifact", DROP)),
        "required",
    ),
    (
        "TaskArtifactUpdateEvent/append-string",
        "a2a/TaskArtifactUpdateEvent.json",
        edit(ARTIFACT_UPDATE, ("append", "true")),
        "type",
    ),
    (
        "TaskArtifactUpdateEvent/lastChunk-number",
        "a2a/TaskArtifactUpdateEvent.json",
        edit(ARTIFACT_UPDATE, ("lastChunk", 1)),
        "type",
    ),
    # push notification
    ("AuthenticationInfo/scheme-missing", "a2a/AuthenticationInfo.json", {"credentials": "x"}, "required"),
    ("AuthenticationInfo/scheme-empty", "a2a/AuthenticationInfo.json", {"scheme": ""}, "minLength"),
    ("AuthenticationInfo/legacy-schemes-array", "a2a/AuthenticationInfo.json", {"schemes": ["Bearer"]}, "required"),
    (
        "TaskPushNotificationConfig/url-missing",
        "a2a/TaskPushNotificationConfig.json",
        edit(PUSH_CONFIG, ("url", DROP)),
        "required",
    ),
    (
        "TaskPushNotificationConfig/url-relative",
        "a2a/TaskPushNotificationConfig.json",
        edit(PUSH_CONFIG, ("url", "/webhook")),
        "format",
    ),
    (
        "TaskPushNotificationConfig/url-empty",
        "a2a/TaskPushNotificationConfig.json",
        edit(PUSH_CONFIG, ("url", "")),
        "minLength",
    ),
    (
        "TaskPushNotificationConfig/authentication-invalid",
        "a2a/TaskPushNotificationConfig.json",
        edit(PUSH_CONFIG, ("authentication", {})),
        "required",
    ),
    # discovery
    (
        "AgentInterface/protocolVersion-missing",
        "a2a/AgentInterface.json",
        edit(INTERFACE, ("protocolVersion", DROP)),
        "required",
    ),
    (
        "AgentInterface/protocolBinding-empty",
        "a2a/AgentInterface.json",
        edit(INTERFACE, ("protocolBinding", "")),
        "minLength",
    ),
    ("AgentInterface/url-not-uri", "a2a/AgentInterface.json", edit(INTERFACE, ("url", "agent dot example")), "format"),
    ("AgentInterface/url-relative-path", "a2a/AgentInterface.json", edit(INTERFACE, ("url", "/a2a/v1")), "format"),
    ("AgentProvider/organization-missing", "a2a/AgentProvider.json", {"url": "https://example.com"}, "required"),
    ("AgentProvider/url-not-uri", "a2a/AgentProvider.json", {"url": "example dot com", "organization": "X"}, "format"),
    ("AgentCapabilities/streaming-string", "a2a/AgentCapabilities.json", {"streaming": "yes"}, "type"),
    ("AgentCapabilities/extension-invalid", "a2a/AgentCapabilities.json", {"extensions": [{"required": "no"}]}, "type"),
    ("AgentExtension/uri-not-uri", "a2a/AgentExtension.json", {"uri": "citations v1"}, "format"),
    ("AgentSkill/tags-empty", "a2a/AgentSkill.json", edit(SKILL, ("tags", [])), "minItems"),
    ("AgentSkill/description-missing", "a2a/AgentSkill.json", edit(SKILL, ("description", DROP)), "required"),
    ("AgentSkill/name-empty", "a2a/AgentSkill.json", edit(SKILL, ("name", "")), "minLength"),
    (
        "AgentCardSignature/signature-missing",
        "a2a/AgentCardSignature.json",
        edit(SIGNATURE, ("signature", DROP)),
        "required",
    ),
    (
        "AgentCardSignature/protected-standard-base64",
        "a2a/AgentCardSignature.json",
        edit(SIGNATURE, ("protected", "eyJ+/w==")),
        "pattern",
    ),
    (
        "SecurityRequirement/legacy-openapi-list",
        "a2a/SecurityRequirement.json",
        {"schemes": {"google": ["openid"]}},
        "type",
    ),
    (
        "SecurityRequirement/scopes-not-strings",
        "a2a/SecurityRequirement.json",
        {"schemes": {"google": {"list": [1]}}},
        "type",
    ),
    ("SecurityScheme/none", "a2a/SecurityScheme.json", {}, "required"),
    (
        "SecurityScheme/legacy-openapi-shape",
        "a2a/SecurityScheme.json",
        {"type": "openIdConnect", "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"},
        "required",
    ),
    (
        "SecurityScheme/two-schemes",
        "a2a/SecurityScheme.json",
        {**SECURITY_SCHEMES["api-key"], **SECURITY_SCHEMES["mtls"]},
        "oneOf",
    ),
    (
        "SecurityScheme/api-key-location-body",
        "a2a/SecurityScheme.json",
        edit(SECURITY_SCHEMES["api-key"], ("apiKeySecurityScheme.location", "body")),
        "enum",
    ),
    (
        "SecurityScheme/api-key-name-missing",
        "a2a/SecurityScheme.json",
        edit(SECURITY_SCHEMES["api-key"], ("apiKeySecurityScheme.name", DROP)),
        "required",
    ),
    (
        "SecurityScheme/http-scheme-missing",
        "a2a/SecurityScheme.json",
        {"httpAuthSecurityScheme": {"bearerFormat": "JWT"}},
        "required",
    ),
    (
        "SecurityScheme/oauth2-flows-missing",
        "a2a/SecurityScheme.json",
        {"oauth2SecurityScheme": {"description": "x"}},
        "required",
    ),
    ("SecurityScheme/oauth2-no-flow", "a2a/SecurityScheme.json", {"oauth2SecurityScheme": {"flows": {}}}, "required"),
    (
        "SecurityScheme/oauth2-two-flows",
        "a2a/SecurityScheme.json",
        {"oauth2SecurityScheme": {"flows": {"authorizationCode": OAUTH_AUTH_CODE, "deviceCode": OAUTH_DEVICE_CODE}}},
        "oneOf",
    ),
    (
        "SecurityScheme/authorization-code-tokenUrl-missing",
        "a2a/SecurityScheme.json",
        {"oauth2SecurityScheme": {"flows": {"authorizationCode": edit(OAUTH_AUTH_CODE, ("tokenUrl", DROP))}}},
        "required",
    ),
    (
        "SecurityScheme/client-credentials-scopes-missing",
        "a2a/SecurityScheme.json",
        {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://auth.example.com/token"}}}},
        "required",
    ),
    (
        "SecurityScheme/device-code-scope-description-number",
        "a2a/SecurityScheme.json",
        {"oauth2SecurityScheme": {"flows": {"deviceCode": edit(OAUTH_DEVICE_CODE, ("scopes", {"read": 1}))}}},
        "type",
    ),
    (
        "SecurityScheme/openid-connect-url-not-uri",
        "a2a/SecurityScheme.json",
        {"openIdConnectSecurityScheme": {"openIdConnectUrl": "accounts.google.com"}},
        "format",
    ),
    ("AgentCard/version-missing", "a2a/AgentCard.json", edit(AGENT_CARD, ("version", DROP)), "required"),
    ("AgentCard/capabilities-missing", "a2a/AgentCard.json", edit(AGENT_CARD, ("capabilities", DROP)), "required"),
    ("AgentCard/skills-empty", "a2a/AgentCard.json", edit(AGENT_CARD, ("skills", [])), "minItems"),
    (
        "AgentCard/supportedInterfaces-empty",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("supportedInterfaces", [])),
        "minItems",
    ),
    (
        "AgentCard/defaultOutputModes-empty",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("defaultOutputModes", [])),
        "minItems",
    ),
    (
        "AgentCard/snake_case-default_input_modes",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("default_input_modes", ["text/plain"]), ("defaultInputModes", DROP)),
        "required",
    ),
    ("AgentCard/name-empty", "a2a/AgentCard.json", edit(AGENT_CARD, ("name", "")), "minLength"),
    ("AgentCard/iconUrl-not-uri", "a2a/AgentCard.json", edit(AGENT_CARD, ("iconUrl", "icon.png")), "format"),
    ("AgentCard/documentationUrl-number", "a2a/AgentCard.json", edit(AGENT_CARD, ("documentationUrl", 1)), "type"),
    (
        "AgentCard/security-scheme-invalid",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("securitySchemes.google", {})),
        "required",
    ),
    (
        "AgentCard/signature-invalid",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("signatures.0.protected", "")),
        "minLength",
    ),
    ("AgentCard/skill-tags-missing", "a2a/AgentCard.json", edit(AGENT_CARD, ("skills.1.tags", DROP)), "required"),
    ("AgentCard/provider-url-missing", "a2a/AgentCard.json", edit(AGENT_CARD, ("provider.url", DROP)), "required"),
    (
        "AgentCard/interface-url-missing",
        "a2a/AgentCard.json",
        edit(AGENT_CARD, ("supportedInterfaces.2.url", DROP)),
        "required",
    ),
    # requests
    (
        "SendMessageConfiguration/historyLength-negative",
        "a2a/SendMessageConfiguration.json",
        {"historyLength": -1},
        "minimum",
    ),
    (
        "SendMessageConfiguration/returnImmediately-string",
        "a2a/SendMessageConfiguration.json",
        {"returnImmediately": "true"},
        "type",
    ),
    (
        "SendMessageConfiguration/push-config-url-missing",
        "a2a/SendMessageConfiguration.json",
        {"taskPushNotificationConfig": {"token": "t"}},
        "required",
    ),
    (
        "SendMessageRequest/message-missing",
        "a2a/SendMessageRequest.json",
        edit(SEND_REQUEST, ("message", DROP)),
        "required",
    ),
    (
        "SendMessageRequest/message-parts-empty",
        "a2a/SendMessageRequest.json",
        edit(SEND_REQUEST, ("message.parts", [])),
        "minItems",
    ),
    ("SendMessageRequest/message-as-string", "a2a/SendMessageRequest.json", {"message": "hello"}, "type"),
    ("GetTaskRequest/id-missing", "a2a/GetTaskRequest.json", {"historyLength": 1}, "required"),
    (
        "GetTaskRequest/historyLength-negative",
        "a2a/GetTaskRequest.json",
        {"id": TASK_ID, "historyLength": -1},
        "minimum",
    ),
    ("GetTaskRequest/historyLength-fraction", "a2a/GetTaskRequest.json", {"id": TASK_ID, "historyLength": 1.5}, "type"),
    ("GetTaskRequest/historyLength-quoted", "a2a/GetTaskRequest.json", {"id": TASK_ID, "historyLength": "10"}, "type"),
    (
        "GetTaskRequest/historyLength-over-int32",
        "a2a/GetTaskRequest.json",
        {"id": TASK_ID, "historyLength": 2**31},
        "maximum",
    ),
    ("ListTasksRequest/pageSize-0", "a2a/ListTasksRequest.json", {"pageSize": 0}, "minimum"),
    ("ListTasksRequest/pageSize-101", "a2a/ListTasksRequest.json", {"pageSize": 101}, "maximum"),
    ("ListTasksRequest/historyLength-negative", "a2a/ListTasksRequest.json", {"historyLength": -5}, "minimum"),
    ("ListTasksRequest/status-unknown", "a2a/ListTasksRequest.json", {"status": "TASK_STATE_RUNNING"}, "enum"),
    (
        "ListTasksRequest/statusTimestampAfter-offset",
        "a2a/ListTasksRequest.json",
        {"statusTimestampAfter": "2025-10-01T00:00:00-05:00"},
        "pattern",
    ),
    ("ListTasksRequest/includeArtifacts-string", "a2a/ListTasksRequest.json", {"includeArtifacts": "false"}, "type"),
    (
        "ListTasksResponse/tasks-missing",
        "a2a/ListTasksResponse.json",
        edit(EMPTY_TASK_PAGE, ("tasks", DROP)),
        "required",
    ),
    (
        "ListTasksResponse/nextPageToken-missing",
        "a2a/ListTasksResponse.json",
        edit(EMPTY_TASK_PAGE, ("nextPageToken", DROP)),
        "required",
    ),
    (
        "ListTasksResponse/nextPageToken-null",
        "a2a/ListTasksResponse.json",
        edit(EMPTY_TASK_PAGE, ("nextPageToken", None)),
        "type",
    ),
    (
        "ListTasksResponse/totalSize-missing",
        "a2a/ListTasksResponse.json",
        edit(EMPTY_TASK_PAGE, ("totalSize", DROP)),
        "required",
    ),
    (
        "ListTasksResponse/totalSize-negative",
        "a2a/ListTasksResponse.json",
        edit(EMPTY_TASK_PAGE, ("totalSize", -1)),
        "minimum",
    ),
    ("ListTasksResponse/pageSize-0", "a2a/ListTasksResponse.json", edit(EMPTY_TASK_PAGE, ("pageSize", 0)), "minimum"),
    (
        "ListTasksResponse/task-invalid",
        "a2a/ListTasksResponse.json",
        edit(LIST_TASKS_RESPONSE, ("tasks.1.status", {})),
        "required",
    ),
    ("CancelTaskRequest/id-empty", "a2a/CancelTaskRequest.json", {"id": ""}, "minLength"),
    ("SubscribeToTaskRequest/id-missing", "a2a/SubscribeToTaskRequest.json", {"tenant": "acme"}, "required"),
    (
        "SubscribeToTaskRequest/snake_case-task_id-for-id",
        "a2a/SubscribeToTaskRequest.json",
        {"task_id": TASK_ID},
        "required",
    ),
    (
        "GetTaskPushNotificationConfigRequest/id-missing",
        "a2a/GetTaskPushNotificationConfigRequest.json",
        {"taskId": TASK_ID},
        "required",
    ),
    (
        "GetTaskPushNotificationConfigRequest/snake_case-task_id",
        "a2a/GetTaskPushNotificationConfigRequest.json",
        {"task_id": TASK_ID, "id": "p"},
        "required",
    ),
    (
        "DeleteTaskPushNotificationConfigRequest/taskId-missing",
        "a2a/DeleteTaskPushNotificationConfigRequest.json",
        {"id": "push-1"},
        "required",
    ),
    (
        "ListTaskPushNotificationConfigsRequest/taskId-missing",
        "a2a/ListTaskPushNotificationConfigsRequest.json",
        {"pageSize": 5},
        "required",
    ),
    (
        "ListTaskPushNotificationConfigsRequest/pageSize-negative",
        "a2a/ListTaskPushNotificationConfigsRequest.json",
        {"taskId": TASK_ID, "pageSize": -1},
        "minimum",
    ),
    (
        "ListTaskPushNotificationConfigsResponse/configs-object",
        "a2a/ListTaskPushNotificationConfigsResponse.json",
        {"configs": PUSH_CONFIG},
        "type",
    ),
    (
        "ListTaskPushNotificationConfigsResponse/config-url-missing",
        "a2a/ListTaskPushNotificationConfigsResponse.json",
        {"configs": [{"id": "p"}]},
        "required",
    ),
    ("GetExtendedAgentCardRequest/tenant-number", "a2a/GetExtendedAgentCardRequest.json", {"tenant": 7}, "type"),
    # responses
    (
        "SendMessageResponse/task-and-message",
        "a2a/SendMessageResponse.json",
        {"task": TASK, "message": AGENT_MESSAGE},
        "oneOf",
    ),
    ("SendMessageResponse/neither", "a2a/SendMessageResponse.json", {}, "required"),
    ("SendMessageResponse/legacy-bare-task", "a2a/SendMessageResponse.json", {"kind": "task", **TASK}, "required"),
    (
        "SendMessageResponse/task-invalid",
        "a2a/SendMessageResponse.json",
        {"task": edit(TASK, ("status.state", "done"))},
        "enum",
    ),
    ("StreamResponse/two-members", "a2a/StreamResponse.json", {"task": TASK, "statusUpdate": STATUS_UPDATE}, "oneOf"),
    ("StreamResponse/none", "a2a/StreamResponse.json", {}, "required"),
    (
        "StreamResponse/legacy-kind-status-update",
        "a2a/StreamResponse.json",
        {"kind": "status-update", **STATUS_UPDATE},
        "required",
    ),
    (
        "StreamResponse/statusUpdate-invalid",
        "a2a/StreamResponse.json",
        {"statusUpdate": edit(STATUS_UPDATE, ("status", DROP))},
        "required",
    ),
    # JSON-RPC Request
    (
        "Request/jsonrpc-1.0",
        "jsonrpc/Request.json",
        {**rpc_request("GetTask", {"id": TASK_ID}), "jsonrpc": "1.0"},
        "const",
    ),
    (
        "Request/jsonrpc-missing",
        "jsonrpc/Request.json",
        edit(rpc_request("GetTask", {}), ("jsonrpc", DROP)),
        "required",
    ),
    ("Request/jsonrpc-number", "jsonrpc/Request.json", {**rpc_request("GetTask", {}), "jsonrpc": 2.0}, "const"),
    ("Request/method-missing", "jsonrpc/Request.json", {"jsonrpc": "2.0", "id": 1, "params": {}}, "required"),
    ("Request/method-empty", "jsonrpc/Request.json", rpc_request("", {}), "minLength"),
    (
        "Request/id-missing-notification",
        "jsonrpc/Request.json",
        edit(rpc_request("GetTask", {}), ("id", DROP)),
        "required",
    ),
    ("Request/id-fraction", "jsonrpc/Request.json", rpc_request("GetTask", {}, id_=1.5), "type"),
    ("Request/id-object", "jsonrpc/Request.json", rpc_request("GetTask", {}, id_={"n": 1}), "type"),
    ("Request/params-by-position", "jsonrpc/Request.json", rpc_request("GetTask", [TASK_ID]), "type"),
    # JSON-RPC Response
    ("Response/result-and-error", "jsonrpc/Response.json", {**rpc_ok({}), "error": TASK_NOT_FOUND["error"]}, "oneOf"),
    ("Response/neither-result-nor-error", "jsonrpc/Response.json", {"jsonrpc": "2.0", "id": 1}, "required"),
    ("Response/id-missing", "jsonrpc/Response.json", {"jsonrpc": "2.0", "result": {}}, "required"),
    ("Response/jsonrpc-wrong", "jsonrpc/Response.json", {**rpc_ok({}), "jsonrpc": "2"}, "const"),
    ("Response/error-code-as-string", "jsonrpc/Response.json", edit(TASK_NOT_FOUND, ("error.code", "-32001")), "type"),
    (
        "Response/error-is-string",
        "jsonrpc/Response.json",
        {"jsonrpc": "2.0", "id": 1, "error": "Task not found"},
        "type",
    ),
    # ErrorObject
    ("ErrorObject/code-as-string", "jsonrpc/ErrorObject.json", {"code": "-32001", "message": "Task not found"}, "type"),
    ("ErrorObject/code-fraction", "jsonrpc/ErrorObject.json", {"code": -32001.5, "message": "x"}, "type"),
    ("ErrorObject/message-missing", "jsonrpc/ErrorObject.json", {"code": -32001}, "required"),
    (
        "ErrorObject/data-object",
        "jsonrpc/ErrorObject.json",
        {"code": -32001, "message": "x", "data": ERROR_INFO_DETAIL},
        "type",
    ),
    (
        "ErrorObject/data-item-without-@type",
        "jsonrpc/ErrorObject.json",
        {"code": -32001, "message": "x", "data": [{"reason": "X"}]},
        "required",
    ),
    (
        "ErrorObject/data-item-string",
        "jsonrpc/ErrorObject.json",
        {"code": -32001, "message": "x", "data": ["TASK_NOT_FOUND"]},
        "type",
    ),
    (
        "ErrorObject/ErrorInfo-detail-missing-domain",
        "jsonrpc/ErrorObject.json",
        {"code": -32001, "message": "Task not found", "data": [edit(ERROR_INFO_DETAIL, ("domain", DROP))]},
        "required",
    ),
    (
        "ErrorObject/ErrorInfo-detail-lowercase-reason",
        "jsonrpc/ErrorObject.json",
        {"code": -32001, "message": "Task not found", "data": [edit(ERROR_INFO_DETAIL, ("reason", "task_not_found"))]},
        "pattern",
    ),
    (
        "ErrorObject/BadRequest-violation-missing-description",
        "jsonrpc/ErrorObject.json",
        {
            "code": -32602,
            "message": "Invalid parameters",
            "data": [edit(BAD_REQUEST_DETAIL, ("fieldViolations.0.description", DROP))],
        },
        "required",
    ),
    (
        "Response/ErrorInfo-detail-missing-reason",
        "jsonrpc/Response.json",
        edit(TASK_NOT_FOUND, ("error.data.0.reason", DROP)),
        "required",
    ),
    # ErrorInfo / BadRequest
    (
        "ErrorInfo/lowercase-reason",
        "jsonrpc/ErrorInfo.json",
        edit(ERROR_INFO_DETAIL, ("reason", "task_not_found")),
        "pattern",
    ),
    (
        "ErrorInfo/camelCase-reason",
        "jsonrpc/ErrorInfo.json",
        edit(ERROR_INFO_DETAIL, ("reason", "TaskNotFound")),
        "pattern",
    ),
    (
        "ErrorInfo/reason-trailing-underscore",
        "jsonrpc/ErrorInfo.json",
        edit(ERROR_INFO_DETAIL, ("reason", "TASK_NOT_FOUND_")),
        "pattern",
    ),
    (
        "ErrorInfo/reason-leading-digit",
        "jsonrpc/ErrorInfo.json",
        edit(ERROR_INFO_DETAIL, ("reason", "1TASK")),
        "pattern",
    ),
    ("ErrorInfo/reason-single-char", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("reason", "A")), "pattern"),
    ("ErrorInfo/reason-64-chars", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("reason", "A" * 64)), "maxLength"),
    ("ErrorInfo/domain-missing", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("domain", DROP)), "required"),
    ("ErrorInfo/domain-empty", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("domain", "")), "minLength"),
    (
        "ErrorInfo/metadata-number-value",
        "jsonrpc/ErrorInfo.json",
        edit(ERROR_INFO_DETAIL, ("metadata.retries", 3)),
        "type",
    ),
    ("ErrorInfo/wrong-@type", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("@type", BAD_REQUEST)), "const"),
    ("ErrorInfo/@type-missing", "jsonrpc/ErrorInfo.json", edit(ERROR_INFO_DETAIL, ("@type", DROP)), "required"),
    (
        "BadRequest/violation-field-missing",
        "jsonrpc/BadRequest.json",
        edit(BAD_REQUEST_DETAIL, ("fieldViolations.0.field", DROP)),
        "required",
    ),
    (
        "BadRequest/localizedMessage-string",
        "jsonrpc/BadRequest.json",
        edit(BAD_REQUEST_DETAIL, ("fieldViolations.0.localizedMessage", "Trop grand")),
        "type",
    ),
    (
        "BadRequest/violation-description-missing",
        "jsonrpc/BadRequest.json",
        {"@type": BAD_REQUEST, "fieldViolations": [{"field": "x"}]},
        "required",
    ),
    ("BadRequest/wrong-@type", "jsonrpc/BadRequest.json", edit(BAD_REQUEST_DETAIL, ("@type", ERROR_INFO)), "const"),
    # error codes
    ("error-codes/code-as-string", "jsonrpc/error-codes.json", "-32001", "type"),
    ("error-codes/below-server-range", "jsonrpc/error-codes.json", -32100, "minimum"),
    ("error-codes/above-server-range", "jsonrpc/error-codes.json", -31999, "maximum"),
    ("error-codes/reserved-unnamed-32768", "jsonrpc/error-codes.json", -32768, "minimum"),
    ("error-codes/http-status", "jsonrpc/error-codes.json", 404, "maximum"),
    # methods
    ("SendMessage/params-message-missing", "methods/SendMessage.json#/$defs/params", {"configuration": {}}, "required"),
    (
        "SendMessage/result-task-and-message",
        "methods/SendMessage.json#/$defs/result",
        {"task": TASK, "message": AGENT_MESSAGE},
        "oneOf",
    ),
    ("SendMessage/response-bare-task", "methods/SendMessage.json#/$defs/response", rpc_ok(TASK), "required"),
    (
        "SendMessage/response-result-and-error",
        "methods/SendMessage.json",
        {**rpc_ok({"task": TASK}), "error": TASK_NOT_FOUND["error"]},
        "oneOf",
    ),
    (
        "SendMessage/request-params-missing",
        "methods/SendMessage.json#/$defs/request",
        rpc_request("SendMessage"),
        "required",
    ),
    (
        "SendMessage/request-wrong-method",
        "methods/SendMessage.json#/$defs/request",
        rpc_request("message/send", SEND_REQUEST),
        "const",
    ),
    ("SendMessage/errors-unlisted", "methods/SendMessage.json#/$defs/errors", -32002, "enum"),
    (
        "SendStreamingMessage/result-two-members",
        "methods/SendStreamingMessage.json#/$defs/result",
        {"task": TASK, "message": AGENT_MESSAGE},
        "oneOf",
    ),
    (
        "SendStreamingMessage/response-event-invalid",
        "methods/SendStreamingMessage.json#/$defs/response",
        rpc_ok({"statusUpdate": {"taskId": TASK_ID}}),
        "required",
    ),
    (
        "GetTask/params-historyLength-negative",
        "methods/GetTask.json#/$defs/params",
        {"id": TASK_ID, "historyLength": -1},
        "minimum",
    ),
    ("GetTask/result-is-message", "methods/GetTask.json#/$defs/result", AGENT_MESSAGE, "required"),
    ("GetTask/response-wrapped-task", "methods/GetTask.json#/$defs/response", rpc_ok({"task": TASK}), "required"),
    (
        "GetTask/document-error-code-string",
        "methods/GetTask.json",
        edit(TASK_NOT_FOUND, ("error.code", "TASK_NOT_FOUND")),
        "type",
    ),
    ("ListTasks/params-pageSize-0", "methods/ListTasks.json#/$defs/params", {"pageSize": 0}, "minimum"),
    ("ListTasks/params-pageSize-101", "methods/ListTasks.json#/$defs/params", {"pageSize": 101}, "maximum"),
    ("ListTasks/result-bare-array", "methods/ListTasks.json#/$defs/result", [TASK], "type"),
    (
        "ListTasks/response-nextPageToken-missing",
        "methods/ListTasks.json#/$defs/response",
        rpc_ok(edit(EMPTY_TASK_PAGE, ("nextPageToken", DROP))),
        "required",
    ),
    ("CancelTask/params-id-missing", "methods/CancelTask.json#/$defs/params", {}, "required"),
    (
        "CancelTask/result-state-UNSPECIFIED",
        "methods/CancelTask.json#/$defs/result",
        edit(TASK, ("status.state", "TASK_STATE_UNSPECIFIED")),
        "not",
    ),
    ("SubscribeToTask/params-id-empty", "methods/SubscribeToTask.json#/$defs/params", {"id": ""}, "minLength"),
    ("SubscribeToTask/response-bare-task", "methods/SubscribeToTask.json#/$defs/response", rpc_ok(TASK), "required"),
    (
        "CreateTaskPushNotificationConfig/params-taskId-missing",
        "methods/CreateTaskPushNotificationConfig.json#/$defs/params",
        {"url": "https://client.example.com/w"},
        "required",
    ),
    (
        "CreateTaskPushNotificationConfig/params-taskId-empty",
        "methods/CreateTaskPushNotificationConfig.json#/$defs/params",
        {"taskId": "", "url": "https://client.example.com/w"},
        "minLength",
    ),
    (
        "CreateTaskPushNotificationConfig/params-url-missing",
        "methods/CreateTaskPushNotificationConfig.json#/$defs/params",
        {"taskId": TASK_ID},
        "required",
    ),
    (
        "CreateTaskPushNotificationConfig/params-legacy-nested-config",
        "methods/CreateTaskPushNotificationConfig.json#/$defs/params",
        {"taskId": TASK_ID, "pushNotificationConfig": {"url": "https://client.example.com/w"}},
        "required",
    ),
    (
        "GetTaskPushNotificationConfig/params-id-missing",
        "methods/GetTaskPushNotificationConfig.json#/$defs/params",
        {"taskId": TASK_ID},
        "required",
    ),
    (
        "GetTaskPushNotificationConfig/result-url-missing",
        "methods/GetTaskPushNotificationConfig.json#/$defs/result",
        {"id": "push-1"},
        "required",
    ),
    (
        "ListTaskPushNotificationConfigs/result-bare-array",
        "methods/ListTaskPushNotificationConfigs.json#/$defs/result",
        [PUSH_CONFIG],
        "type",
    ),
    (
        "DeleteTaskPushNotificationConfig/params-id-missing",
        "methods/DeleteTaskPushNotificationConfig.json#/$defs/params",
        {"taskId": TASK_ID},
        "required",
    ),
    (
        "DeleteTaskPushNotificationConfig/result-true",
        "methods/DeleteTaskPushNotificationConfig.json#/$defs/result",
        True,
        "type",
    ),
    (
        "DeleteTaskPushNotificationConfig/result-string",
        "methods/DeleteTaskPushNotificationConfig.json#/$defs/result",
        "deleted",
        "type",
    ),
    (
        "DeleteTaskPushNotificationConfig/response-result-array",
        "methods/DeleteTaskPushNotificationConfig.json",
        rpc_ok([]),
        "type",
    ),
    (
        "GetExtendedAgentCard/params-tenant-number",
        "methods/GetExtendedAgentCard.json#/$defs/params",
        {"tenant": 1},
        "type",
    ),
    (
        "GetExtendedAgentCard/request-params-array",
        "methods/GetExtendedAgentCard.json#/$defs/request",
        rpc_request("GetExtendedAgentCard", []),
        "type",
    ),
    (
        "GetExtendedAgentCard/result-skills-missing",
        "methods/GetExtendedAgentCard.json#/$defs/result",
        edit(AGENT_CARD, ("skills", DROP)),
        "required",
    ),
    (
        "GetExtendedAgentCard/response-spec-6.9-partial-card",
        "methods/GetExtendedAgentCard.json#/$defs/response",
        rpc_ok({"name": "Extended Agent with Additional Skills", "skills": []}),
        "required",
    ),
]

# Spec examples that must fail as printed (tests/schema_examples/<name>.json with "valid": false).
BAD += [(f"spec:{name}", ex["schema"], ex["instance"], ex["rule"]) for name, ex in SPEC.items() if not ex["valid"]]


# --------------------------------------------------------------------------------------------- tests: documents


def _walk(node: Any, pointer: str = ""):
    """Yield (json-pointer, schema-object) for every object inside a document."""
    if isinstance(node, dict):
        yield pointer, node
        for key, value in node.items():
            yield from _walk(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{pointer}/{index}")


DOCUMENTS = schemas.documents()
DOCUMENT_IDS = sorted(DOCUMENTS)


def _short(uri: str) -> str:
    return uri.removeprefix(schemas.BASE)


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_document_is_a_valid_2020_12_schema(uri):
    document = DOCUMENTS[uri]
    assert document["$schema"] == DIALECT
    assert isinstance(document.get("description"), str) and document["description"]
    jsonschema.Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_every_ref_resolves(uri):
    resolver = schemas.registry().resolver()
    refs = [(pointer, node["$ref"]) for pointer, node in _walk(DOCUMENTS[uri]) if "$ref" in node]
    for pointer, ref in refs:
        assert not ref.startswith(("http://", "https://")), f"{pointer}: refs are written relative, got {ref}"
        target = urljoin(uri, ref)
        try:
            resolver.lookup(target)
        except Exception as error:  # referencing raises several Unresolvable subclasses
            pytest.fail(f"{_short(uri)}{pointer}: $ref {ref!r} does not resolve ({error!r})")


@pytest.mark.parametrize("uri", DOCUMENT_IDS, ids=_short)
def test_documents_are_indented_json_with_exact_id(uri):
    path = schemas.ROOT / _short(uri)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text)["$id"] == uri
    indents = {len(line) - len(line.lstrip(" ")) for line in text.splitlines()}
    assert all(indent % 2 == 0 for indent in indents), "2-space indentation"
    assert "\t" not in text


def test_no_schema_forbids_unknown_members():
    offenders = [
        f"{_short(uri)}{pointer}"
        for uri, document in DOCUMENTS.items()
        for pointer, node in _walk(document)
        if node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False
    ]
    assert offenders == []
    assert "additionalProperties" in DOCUMENTS[schemas.BASE + "a2a/Task.json"]["$comment"]


# --------------------------------------------------------------------------------------------- tests: examples


def _describe(found) -> str:
    return "\n".join(str(v) for v in found) or "(no violation)"


@pytest.mark.parametrize(("ref", "instance"), [pytest.param(r, i, id=n) for n, r, i in GOOD])
def test_good_example_validates(ref, instance):
    found = schemas.violations(instance, ref)
    assert found == [], _describe(found)
    assert schemas.is_valid(instance, ref)


@pytest.mark.parametrize(("ref", "instance", "rule"), [pytest.param(r, i, k, id=n) for n, r, i, k in BAD])
def test_bad_example_is_rejected_for_its_reason(ref, instance, rule):
    assert not schemas.is_valid(instance, ref)
    found = schemas.violations(instance, ref)
    assert found, "is_valid said no, violations() found nothing"
    assert rule in {v.rule for v in found}, f"expected a {rule!r} violation, got:\n{_describe(found)}"


def test_example_ids_are_unique():
    names = [n for n, *_ in GOOD] + [n for n, *_ in BAD]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_format_checker_is_on():
    # The date is well-formed for the pattern; only the format checker can reject it.
    assert re.fullmatch(schemas.resolve("a2a/Timestamp.json")["pattern"], "2025-13-40T00:00:00Z")
    assert not schemas.is_valid("2025-13-40T00:00:00Z", "a2a/Timestamp.json")


def _targets(examples) -> set[str]:
    return {ref for _, ref, *_ in examples}


@pytest.mark.parametrize("uri", [u for u in DOCUMENT_IDS if not _short(u).startswith("methods/")], ids=_short)
def test_every_a2a_and_jsonrpc_document_has_good_examples(uri):
    assert _short(uri) in _targets(GOOD)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_has_good_and_bad_examples(method):
    good = _targets(GOOD)
    for part in ("params", "result", "request", "response"):
        assert f"methods/{method}.json#/$defs/{part}" in good
    assert any(ref.startswith(f"methods/{method}.json") for ref in _targets(BAD))


# --------------------------------------------------------------------------------------------- tests: methods


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_document_shape(method):
    document = schemas.resolve(f"methods/{method}.json")
    assert document["x-a2a"] == {"method": method, "streaming": METHODS[method]}
    assert set(document["$defs"]) >= {"params", "result", "errors", "response"}
    codes = document["$defs"]["errors"]["enum"]
    assert len(codes) == len(set(codes))
    assert set(codes) <= set(NAMED_ERROR_CODES.values())
    assert {-32700, -32600, -32601, -32602, -32603} <= set(codes)


SPEC_ERRORS = {
    "SendMessage": {-32001, -32004, -32005},
    "SendStreamingMessage": {-32001, -32004, -32005},
    "GetTask": {-32001},
    "ListTasks": set(),
    "CancelTask": {-32001, -32002},
    "SubscribeToTask": {-32001, -32004},
    "CreateTaskPushNotificationConfig": {-32001, -32003},
    "GetTaskPushNotificationConfig": {-32001, -32003},
    "ListTaskPushNotificationConfigs": {-32001, -32003},
    "DeleteTaskPushNotificationConfig": {-32001, -32003},
    "GetExtendedAgentCard": {-32004, -32007},
}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_errors_are_those_of_spec_section_3_1(method):
    codes = set(schemas.resolve(f"methods/{method}.json#/$defs/errors")["enum"])
    standard = {-32700, -32600, -32601, -32602, -32603}
    cross_cutting = {-32008, -32009}
    assert codes == standard | cross_cutting | SPEC_ERRORS[method]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_streaming_methods_answer_stream_responses(method):
    result = schemas.resolve(f"methods/{method}.json#/$defs/result")
    assert (result.get("$ref") == "../a2a/StreamResponse.json") == METHODS[method]


# --------------------------------------------------------------------------------------------- tests: error codes


def test_error_codes_are_the_14_named_ones():
    assert schemas.error_codes() == NAMED_ERROR_CODES
    assert schemas.error_code("TaskNotFoundError") == -32001


def test_error_code_defs_are_exactly_const_and_description():
    defs = schemas.resolve("jsonrpc/error-codes.json")["$defs"]
    for name, entry in defs.items():
        assert set(entry) == {"const", "description"}, name
        assert isinstance(entry["const"], int) and entry["description"]


# --------------------------------------------------------------------------------------------- tests: proto


def _json_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _proto_messages() -> dict[str, dict[str, Any]]:
    """Top-level messages of a2a.proto: fields (json name -> REQUIRED?) and oneofs (name -> json names)."""
    text = PROTO.read_text(encoding="utf-8")
    text = re.sub(r"//[^\n]*", "", text)
    messages: dict[str, dict[str, Any]] = {}
    for match in re.finditer(r"^message (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        name, body = match.groups()
        fields: dict[str, bool] = {}
        oneofs: dict[str, list[str]] = {}
        for oneof in re.finditer(r"oneof (\w+) \{(.*?)\}", body, re.S):
            oneofs[oneof.group(1)] = [_json_name(f) for f in re.findall(r"(\w+) = \d+", oneof.group(2))]
        for field in re.finditer(r"^\s*(?:optional |repeated )?(?:map<[^>]+>|[\w.]+) (\w+) = \d+([^;]*);", body, re.M):
            fields[_json_name(field.group(1))] = "REQUIRED" in field.group(2)
        messages[name] = {"fields": fields, "oneofs": oneofs}
    return messages


def _proto_enums() -> dict[str, list[str]]:
    text = re.sub(r"//[^\n]*", "", PROTO.read_text(encoding="utf-8"))
    return {
        m.group(1): re.findall(r"(\w+) = \d+;", m.group(2))
        for m in re.finditer(r"^enum (\w+) \{(.*?)^\}", text, re.M | re.S)
    }


def _schema_for(message: str) -> str:
    if (schemas.ROOT / "a2a" / f"{message}.json").exists():
        return f"a2a/{message}.json"
    if message == "StringList":
        return "a2a/SecurityRequirement.json#/$defs/StringList"
    return f"a2a/SecurityScheme.json#/$defs/{message}"


needs_proto = pytest.mark.skipif(not PROTO.exists(), reason=f"a2a.proto not found at {PROTO} (set A2A_PROTO)")
PROTO_MESSAGES = _proto_messages() if PROTO.exists() else {}


@needs_proto
@pytest.mark.parametrize("message", sorted(PROTO_MESSAGES))
def test_schema_matches_proto_message(message):
    proto = PROTO_MESSAGES[message]
    schema = schemas.resolve(_schema_for(message))
    assert set(schema["properties"]) == set(proto["fields"]), "camelCase json names of every proto field"
    required = {name for name, is_required in proto["fields"].items() if is_required}
    assert set(schema.get("required", [])) == required
    oneofs = list(proto["oneofs"].values())
    if oneofs:
        (members,) = oneofs
        assert schema["oneOf"] == [{"required": [member]} for member in members]


@needs_proto
def test_schema_enums_match_proto():
    enums = _proto_enums()
    assert set(enums) == {"TaskState", "Role"}
    for name, values in enums.items():
        assert schemas.resolve(f"a2a/{name}.json")["enum"] == values
