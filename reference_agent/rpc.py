"""The JSON-RPC 2.0 binding: envelope checks, version check, dispatch, params validated by the schemas."""

from __future__ import annotations

import json
import logging
from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent import extensions, push
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.engine import Caller, Engine
from nylorun_a2a_kit.reference_agent.errors import RpcError, ServerFailure, invalid_params, unsupported
from nylorun_a2a_kit.reference_agent.store import TaskRecord

log = logging.getLogger("reference_agent")
SUPPORTED_VERSIONS = ("1.0",)
UNSERVED = {
    "SendStreamingMessage": "Streaming is not served; use push notifications and GetTask.",
    "SubscribeToTask": "Streaming is not served; use push notifications and GetTask.",
    "GetExtendedAgentCard": "There is no extended Agent Card; use the public card.",
}
PUSH_METHODS = (
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
)


def render_task(
    task: TaskRecord,
    config: AgentConfig,
    *,
    history_length: int | None,
    include_artifacts: bool = True,
    artifacts_always: bool = False,
) -> dict[str, Any]:
    """A stored task as A2A ``Task`` JSON. History only when asked for (the profile's choice)."""
    timestamp = task.status_ts
    if config.fault("timestamp-offset"):
        timestamp = timestamp.removesuffix("Z") + "+00:00"
    status: dict[str, Any] = {"state": task.state, "timestamp": timestamp}
    if task.status_message:
        status["message"] = task.status_message
    out: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
    if include_artifacts and (task.artifacts or artifacts_always):
        out["artifacts"] = task.artifacts
    if config.fault("history-never"):
        history_length = 0
    if history_length is None and config.fault("history-by-default"):
        history_length = len(task.history)
    if history_length == 0 and config.fault("history-on-zero"):
        history_length = len(task.history)
    if history_length and config.fault("history-too-long"):
        history_length = len(task.history)
    if history_length:
        out["history"] = task.history[-history_length:]
    if task.metadata:
        out["metadata"] = task.metadata
    return out


def parse_version(value: str | None) -> str | None:
    """``Major.Minor`` of an A2A-Version value; patch numbers are ignored (A2A §3.6). Empty means 0.3."""
    if not value or not value.strip():
        return "0.3"
    parts = value.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]):
        return None
    return f"{int(parts[0])}.{int(parts[1])}"


class Dispatcher:
    def __init__(self, engine: Engine, config: AgentConfig):
        self.engine, self.config = engine, config

    def error(self, request_id: Any, err: RpcError) -> dict[str, Any]:
        fault = self.config.fault
        if fault("wrong-error-code") and err.reason == "TASK_NOT_FOUND":
            err.code = schemas.error_code("InvalidParamsError")
        if fault("not-found-wrong-reason") and err.reason == "TASK_NOT_FOUND":
            err.reason = "NOT_FOUND"
        with_details = True
        if fault("no-error-info") and err.code > -32100 and err.code < -32000:
            with_details = False
        body = err.to_json(with_details=with_details)
        if fault("error-code-as-string"):
            body["code"] = str(body["code"])
        if fault("no-bad-request-detail") and err.code == schemas.error_code("InvalidParamsError"):
            body.pop("data", None)
        return {"jsonrpc": "2.0", "id": self._answer_id(request_id), "error": body}

    async def handle(self, body: bytes, version_header: str | None, caller: Caller) -> dict[str, Any]:
        try:
            request = parse_json(body)
        except ValueError:
            return self.error(None, RpcError("JSONParseError", "Invalid JSON payload", reason="PARSE_ERROR"))
        if self.config.fault("non-object-body-500") and not isinstance(request, dict):
            raise ServerFailure("(not an object)")
        request_id = request.get("id") if isinstance(request, dict) else None
        # An id the envelope schema admits is echoed as sent: a string, or a number without a fraction, which
        # JSON may spell 1.0 (json reads that as a float). Any other id is unusable and answered as null.
        whole = isinstance(request_id, float) and request_id.is_integer()
        if not (isinstance(request_id, str | int) or whole) or isinstance(request_id, bool):
            request_id = None
        problems = schemas.violations(request, "jsonrpc/Request.json")
        if self.config.fault("envelope-not-validated") and isinstance(request, dict):
            request = {"jsonrpc": "2.0", "id": request_id, "method": str(request.get("method", "")), "params": {}}
            problems = []
        if problems or "id" not in request:
            detail = [(p.path.removeprefix("$."), p.message) for p in problems] or [("id", "is required")]
            return self.error(
                request_id,
                RpcError(
                    "InvalidRequestError",
                    "Request payload validation error",
                    reason="INVALID_REQUEST",
                    violations=detail,
                ),
            )
        try:
            result = await self._dispatch(request, version_header, caller)
        except RpcError as err:
            return self.error(request_id, err)
        except ServerFailure:
            raise
        except Exception:  # a bug answers -32603 for this request, never an HTTP failure
            log.exception("method %s failed", request.get("method"))
            return self.error(request_id, RpcError("InternalError", "Internal error", reason="INTERNAL"))
        if not self.config.fault("data-without-activation"):
            result = extensions.visible(request["method"], result, self._shown(caller))
        return {"jsonrpc": "2.0", "id": self._answer_id(request_id), "result": result}

    def _shown(self, caller: Caller) -> frozenset[str]:
        """The extensions whose data this caller sees: the ones its request activated."""
        if self.config.fault("core-gets-plan"):
            return caller.extensions | {extensions.PROGRESS, extensions.TELEMETRY}
        return caller.extensions

    def _answer_id(self, request_id: Any) -> Any:
        if self.config.fault("wrong-response-id") and request_id is not None:
            return f"{request_id}-answer"
        return request_id

    async def _dispatch(self, request: dict[str, Any], version_header: str | None, caller: Caller) -> Any:
        version = parse_version(version_header)
        fault = self.config.fault
        excused = (
            (version_header is None and fault("no-version-check"))
            or (version == "0.3" and bool(version_header) and fault("accepts-0.3"))
            or (version not in (None, "0.3") and fault("accepts-any-version"))
        )
        if (version not in SUPPORTED_VERSIONS or fault("version-1.0-refused")) and not excused:
            raise RpcError(
                "VersionNotSupportedError",
                f"A2A version {version_header or '0.3 (no A2A-Version header)'} is not supported; send "
                "A2A-Version: 1.0",
                reason="VERSION_NOT_SUPPORTED",
                metadata={"requestedVersion": version_header or "", "supportedVersions": "1.0"},
            )
        method = request["method"]
        if fault("v1-client-refused") and caller.extensions == extensions.V1:
            raise RpcError(
                "ExtensionSupportRequiredError", "Activate every profile v2 extension.", reason="EXTENSION_REQUIRED"
            )
        if method in UNSERVED:
            if method == "SendStreamingMessage" and fault("streaming-method-not-found"):
                raise RpcError("MethodNotFoundError", "Method not found", reason="METHOD_NOT_FOUND")
            if method == "SubscribeToTask" and fault("subscribe-method-not-found"):
                raise RpcError("MethodNotFoundError", "Method not found", reason="METHOD_NOT_FOUND")
            if method == "GetExtendedAgentCard" and fault("extended-card-not-configured"):
                raise RpcError(
                    "ExtendedAgentCardNotConfiguredError", "No extended card", reason="EXTENDED_CARD_NOT_CONFIGURED"
                )
            raise unsupported(UNSERVED[method], "OPERATION_NOT_SUPPORTED", method=method)
        if method in PUSH_METHODS and not self.config.push_enabled:
            if fault("push-unsupported-wrong-code"):
                raise RpcError("MethodNotFoundError", "Method not found", reason="METHOD_NOT_FOUND")
            raise push.not_supported(method)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            if self.config.fault("method-not-found-wrong-code"):
                raise RpcError("InvalidRequestError", "Invalid request", reason="INVALID_REQUEST")
            raise RpcError(
                "MethodNotFoundError",
                "Method not found",
                reason="METHOD_NOT_FOUND",
                metadata={"method": method},
            )
        params = request.get("params", {})
        history = params.get("historyLength")
        if fault("negative-history-accepted") and isinstance(history, int) and history < 0:
            del params["historyLength"]
        oversized = params.pop("pageSize", None) if fault("page-size-unbounded") else None
        problems = (
            [] if fault("no-params-validation") else schemas.violations(params, f"methods/{method}.json#/$defs/params")
        )
        if oversized is not None:
            params["pageSize"] = oversized
        if fault("rejects-unknown-fields"):
            problems += [_Unknown(name) for name in params if name not in _param_names(method)]
        if problems and fault("500-on-wrong-type") and any(p.rule == "type" for p in problems):
            raise ServerFailure(method)
        if problems and fault("invalid-params-as-invalid-request"):
            raise RpcError("InvalidRequestError", "Request payload validation error", reason="INVALID_REQUEST")
        if problems:
            raise invalid_params([(_field(p.path), p.message) for p in problems])
        return await handler(caller, _whole_numbers(params))

    async def _m_SendMessage(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        if params["message"].get("role") != "ROLE_USER":
            raise invalid_params([("message.role", "a caller's message must have role ROLE_USER")])
        task = await self.engine.send(caller, params)
        history_length = (params.get("configuration") or {}).get("historyLength")
        if self.config.fault("send-history-ignored"):
            history_length = len(task.history)
        if self.config.fault("answers-message") and task.scenario.get("plain"):
            return {"message": {**task.history[0], "role": "ROLE_AGENT", "messageId": task.id + "-reply"}}
        return {"task": render_task(task, self.config, history_length=history_length)}

    # -- push notification configs

    def _push_task(self, caller: Caller, params: dict[str, Any]):
        return self.engine.owned(caller, params["taskId"], ignore_subject=self.config.fault("config-cross-subject"))

    async def _m_CreateTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params)
        with self.engine.store.transaction():
            return self.engine.push_configs.create(task, params, caller.extensions).to_json()

    async def _m_GetTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params)
        config = self.engine.push_configs.get(task.id, params["id"])
        if config is None and self.config.fault("get-after-delete-found"):
            config = self.engine.push_configs.get(task.id, params["id"], include_deleted=True)
        if config is None:
            raise RpcError(
                "TaskNotFoundError",
                "Push notification config not found",
                reason="PUSH_CONFIG_NOT_FOUND",
                metadata={"taskId": task.id, "id": params["id"]},
            )
        return config.to_json()

    async def _m_ListTaskPushNotificationConfigs(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        configs = self.engine.push_configs.list(self._push_task(caller, params).id)
        if self.config.fault("list-missing-config"):
            configs = configs[:-1]
        return {"configs": [c.to_json() for c in configs], "nextPageToken": ""}

    async def _m_DeleteTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params)
        with self.engine.store.transaction():
            self.engine.push_configs.delete(task.id, params["id"])
        return {}

    async def _m_GetTask(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self.engine.get(caller, params["id"])
        rendered = render_task(task, self.config, history_length=params.get("historyLength"))
        if self.config.fault("get-task-without-artifacts"):
            rendered.pop("artifacts", None)
        if self.config.fault("no-telemetry-on-get"):
            rendered = extensions.visible_task(rendered, extensions.DECLARED - {extensions.TELEMETRY})
        if self.config.fault("get-task-stale-state") and task.state == "TASK_STATE_COMPLETED":
            rendered["status"]["state"] = "TASK_STATE_WORKING"
        return rendered

    async def _m_CancelTask(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = await self.engine.cancel(caller, params["id"])
        return render_task(task, self.config, history_length=None)

    async def _m_ListTasks(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        tasks, token, page_size, total = self.engine.list(caller, params)
        include = bool(params.get("includeArtifacts"))
        always = self.config.fault("artifacts-always-listed")
        out: dict[str, Any] = {
            "tasks": [
                render_task(
                    t,
                    self.config,
                    history_length=len(t.history)
                    if self.config.fault("list-history-ignored")
                    else params.get("historyLength"),
                    include_artifacts=include or always,
                    artifacts_always=include,
                )
                for t in tasks
            ],
            "nextPageToken": token,
            "pageSize": page_size,
            "totalSize": total,
        }
        if not include and self.config.fault("artifacts-empty-array"):
            for listed in out["tasks"]:
                listed["artifacts"] = []
        if not token and self.config.fault("last-page-token-missing"):
            del out["nextPageToken"]
        return out


class _Unknown:
    """A params field a fault pretends not to know, in the shape of a schema violation."""

    def __init__(self, name: str):
        self.path, self.message = f"$.{name}", "is not a known field"


def _param_names(method: str) -> set[str]:
    """The fields a method's params schema names (its request message's properties)."""
    ref = schemas.resolve(f"methods/{method}.json#/$defs/params").get("$ref", "")
    return set(schemas.resolve("a2a/" + ref.rsplit("/", 1)[-1]).get("properties", {})) if ref else set()


def parse_json(body: bytes) -> Any:
    """The body as JSON (RFC 8259), or ValueError: no NaN or Infinity, no lone surrogate, no nesting past
    the parser (a lone surrogate parses but is no Unicode text: it could not be stored or answered)."""
    try:
        value = json.loads(body, parse_constant=_not_json)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (RecursionError, UnicodeEncodeError) as exc:
        raise ValueError(str(exc)) from None
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _whole_numbers(params: dict[str, Any]) -> dict[str, Any]:
    """``2.0`` is a valid int32 in JSON; the methods use it as ``2``."""
    out = dict(params)
    for name in ("historyLength", "pageSize"):
        if isinstance(out.get(name), float):
            out[name] = int(out[name])
    if isinstance(out.get("configuration"), dict):
        out["configuration"] = _whole_numbers(out["configuration"])
    return out


def _field(path: str) -> str:
    """A JSON path from the validator as a BadRequest field name: ``$.message.parts[0]`` → ``message.parts[0]``."""
    return path.removeprefix("$").removeprefix(".") or "params"
