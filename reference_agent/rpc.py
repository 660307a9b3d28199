"""The JSON-RPC 2.0 binding: envelope checks, version check, dispatch, params validated by the schemas."""

from __future__ import annotations

import logging
from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent import extensions, push
from nylorun_a2a_kit.reference_agent.caller import Caller
from nylorun_a2a_kit.reference_agent.config import AgentConfig
from nylorun_a2a_kit.reference_agent.engine import Engine
from nylorun_a2a_kit.reference_agent.errors import RpcError, invalid_params, unsupported
from nylorun_a2a_kit.reference_agent.policies import Action
from nylorun_a2a_kit.reference_agent.seams import CORRECT, Seams
from nylorun_a2a_kit.reference_agent.store import TaskRecord
from nylorun_a2a_kit.reference_agent.streaming import METHODS as STREAM_METHODS
from nylorun_a2a_kit.reference_agent.streaming import Stream

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
Problems = list[tuple[str, str]]  # (field, what is wrong with it)


def parse_version(value: str | None) -> str | None:
    """``Major.Minor`` of an A2A-Version value; patch numbers are ignored (A2A §3.6). Empty means 0.3."""
    if not value or not value.strip():
        return "0.3"
    parts = value.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]):
        return None
    return f"{int(parts[0])}.{int(parts[1])}"


class Compatibility:
    """Which requests the binding serves: A2A-Version 1.0 (a missing header means 0.3), any extensions."""

    def serves(self, version_header: str | None, method: str) -> bool:
        """Whether a request of ``method`` asking for ``version_header`` is served (every method alike)."""
        return parse_version(version_header) in SUPPORTED_VERSIONS

    def check(self, version_header: str | None, caller: Caller, method: str) -> None:
        if not self.serves(version_header, method):
            raise RpcError(
                "VersionNotSupportedError",
                f"A2A version {version_header or '0.3 (no A2A-Version header)'} is not supported; send "
                "A2A-Version: 1.0",
                reason="VERSION_NOT_SUPPORTED",
                metadata={"requestedVersion": version_header or "", "supportedVersions": "1.0"},
            )


class Unserved:
    """What the methods the profile does not serve answer: UnsupportedOperationError, whatever their params name
    (A2A §3.3.4: the card says streaming and extendedAgentCard false)."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def refusal(self, caller: Caller, method: str, params: dict[str, Any]) -> RpcError:
        return unsupported(UNSERVED[method], "OPERATION_NOT_SUPPORTED", method=method)


class Reading:
    """How the binding reads a request: each step answers what it serves and what is wrong with it."""

    def envelope(self, request: Any) -> tuple[Any, Problems]:
        """What is wrong with the envelope. A valid one without ``id`` is a notification (JSON-RPC 2.0 §4.1)."""
        # The kit's Request schema describes the requests A2A clients send, which all carry an id; a
        # notification is checked as the request it would be with one.
        shown = {**request, "id": None} if isinstance(request, dict) and "id" not in request else request
        problems = [(p.path.removeprefix("$."), p.message) for p in schemas.violations(shown, "jsonrpc/Request.json")]
        return request, problems

    def replies(self, request: dict[str, Any], error: RpcError | None) -> bool:
        """Whether a valid request gets an answer, ``error`` or its result: all but a notification, whatever its
        outcome (JSON-RPC 2.0 §4.1)."""
        return "id" in request

    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        """The params against the method's schema, named as ``google.rpc.BadRequest`` fields."""
        return params, [(_field(p.path), p.message) for p in schemas.violations(params, params_schema(method))]


class Rendering:
    """Stored tasks as A2A ``Task`` JSON. History only when asked for (the profile's choice)."""

    def history_length(self, method: str, task: TaskRecord, asked: int | None) -> int | None:
        """How many of the task's latest messages the answer to ``method`` carries (None or 0: none)."""
        return asked

    def lists_artifacts(self, params: dict[str, Any]) -> bool:
        return bool(params.get("includeArtifacts"))

    def task(
        self, task: TaskRecord, method: str, asked: int | None, *, artifacts: bool = True, always: bool = False
    ) -> dict[str, Any]:
        """``artifacts``: with the task's artifacts; ``always``: as a list even when it has none."""
        status: dict[str, Any] = {"state": task.state, "timestamp": task.status_ts}
        if task.status_message:
            status["message"] = task.status_message
        out: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
        if artifacts and (task.artifacts or always):
            out["artifacts"] = task.artifacts
        history_length = self.history_length(method, task, asked)
        if history_length:
            out["history"] = task.history[-history_length:]
        if task.metadata:
            out["metadata"] = task.metadata
        return out

    def sent(self, task: TaskRecord, asked: int | None) -> dict[str, Any]:
        """SendMessage's result: always a Task."""
        return {"task": self.task(task, "SendMessage", asked)}


class Dispatcher:
    def __init__(self, engine: Engine, config: AgentConfig, seams: Seams = CORRECT):
        self.engine, self.config = engine, config
        self.compatibility = seams.make(Compatibility)
        self.reading = seams.make(Reading)
        self.rendering = seams.make(Rendering)
        self.disclosure = seams.make(extensions.Disclosure)
        self.unserved = seams.make(Unserved, engine)

    def error(self, request_id: Any, err: RpcError) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "error": err.to_json()}

    async def handle(self, body: bytes, version_header: str | None, caller: Caller) -> dict[str, Any] | Stream | None:
        """The answer to one request body (a stream's answers, for a stream method served); None for a
        notification, which is served but gets no reply."""
        try:
            request = parse_json(body)
        except ValueError:
            return self.error(None, RpcError("JSONParseError", "Invalid JSON payload", reason="PARSE_ERROR"))
        request_id = request.get("id") if isinstance(request, dict) else None
        # An id the envelope schema admits is echoed as sent: a string, or a number without a fraction, which
        # JSON may spell 1.0 (json reads that as a float). Any other id is unusable and answered as null.
        whole = isinstance(request_id, float) and request_id.is_integer()
        if not (isinstance(request_id, str | int) or whole) or isinstance(request_id, bool):
            request_id = None
        request, problems = self.reading.envelope(request)
        if problems:
            return self.error(
                request_id,
                RpcError(
                    "InvalidRequestError",
                    "Request payload validation error",
                    reason="INVALID_REQUEST",
                    violations=problems,
                ),
            )
        try:
            result = await self._dispatch(request, version_header, caller)
        except RpcError as err:
            return self.error(request_id, err) if self.reading.replies(request, err) else None
        except Exception:  # a bug answers -32603 for this request, never an HTTP failure
            log.exception("method %s failed", request.get("method"))
            err = RpcError("InternalError", "Internal error", reason="INTERNAL")
            return self.error(request_id, err) if self.reading.replies(request, err) else None
        if isinstance(result, Stream):
            if not self.reading.replies(request, None):
                result.close()
                return None
            return self._answers(request_id, result, self.disclosure.shown(caller.extensions))
        if not self.reading.replies(request, None):
            return None
        result = self.disclosure.visible(request["method"], result, self.disclosure.shown(caller.extensions))
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _answers(self, request_id: Any, stream: Stream, shown: frozenset[str]) -> Stream:
        """A stream's events as JSON-RPC responses to the request (A2A §9.4.2), as the caller sees them."""

        async def answers():
            try:
                async for event in stream.events:
                    visible = None if event is None else extensions.visible_event(event, shown)
                    yield None if visible is None else {"jsonrpc": "2.0", "id": request_id, "result": visible}
            except Exception:  # a bug past the stream's headers still ends in a JSON-RPC error, as handle()'s do
                log.exception("stream of request %r failed", request_id)
                yield self.error(request_id, RpcError("InternalError", "Internal error", reason="INTERNAL"))

        return Stream(answers(), stream.close)

    async def _dispatch(self, request: dict[str, Any], version_header: str | None, caller: Caller) -> Any:
        method = request["method"]
        self.compatibility.check(version_header, caller, method)
        if method in UNSERVED and not (method in STREAM_METHODS and self.engine.streams.serves(method)):
            params = request.get("params")
            raise self.unserved.refusal(caller, method, params if isinstance(params, dict) else {})
        if method in PUSH_METHODS and not self.config.push_enabled:
            raise push.not_supported(method)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            raise RpcError(
                "MethodNotFoundError",
                "Method not found",
                reason="METHOD_NOT_FOUND",
                metadata={"method": method},
            )
        params, problems = self.reading.params(method, request.get("params", {}))
        if problems:
            raise invalid_params(problems)
        return await handler(caller, _whole_numbers(params))

    async def _m_SendMessage(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        if params["message"].get("role") != "ROLE_USER":
            raise invalid_params([("message.role", "a caller's message must have role ROLE_USER")])
        task = await self.engine.send(caller, params)
        return self.rendering.sent(task, (params.get("configuration") or {}).get("historyLength"))

    # -- streams, when served

    async def _m_SendStreamingMessage(self, caller: Caller, params: dict[str, Any]) -> Stream:
        if params["message"].get("role") != "ROLE_USER":
            raise invalid_params([("message.role", "a caller's message must have role ROLE_USER")])
        # A stream answers at once, whatever returnImmediately says (A2A §3.2.2).
        configuration = {**(params.get("configuration") or {}), "returnImmediately": True}
        task = await self.engine.streams.send(self.engine, caller, {**params, "configuration": configuration})
        asked = configuration.get("historyLength")
        return self._stream(task, "SendStreamingMessage", asked)

    async def _m_SubscribeToTask(self, caller: Caller, params: dict[str, Any]) -> Stream:
        task = self.engine.streams.subscribed(self.engine, caller, params["id"])
        refusal = self.engine.streams.refusal(task)
        if refusal is not None:
            raise refusal
        return self._stream(task, "SubscribeToTask", None)

    def _stream(self, task: TaskRecord, method: str, asked: int | None) -> Stream:
        # A queued message has no turn yet, so nothing is announced under its id: its stream is the Task alone.
        queued = bool(task.scenario.get("queued"))
        current = task if queued else self.engine.store.get(task.id) or task

        def render(shown: TaskRecord) -> dict[str, Any]:
            return self.rendering.task(shown, method, asked)

        return self.engine.streams.open(current, method, render, ends=queued)

    # -- push notification configs

    def _push_task(self, caller: Caller, params: dict[str, Any], action: Action) -> TaskRecord:
        # a2a.proto leaves TaskPushNotificationConfig.task_id optional (the HTTP binding carries it in the path);
        # on JSON-RPC a config that names no task cannot be attached to one.
        if not params.get("taskId"):
            raise invalid_params([("taskId", "must name the task the push notification config is for")])
        return self.engine.owned(caller, params["taskId"], action)

    async def _m_CreateTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params, "configure")
        with self.engine.store.transaction():
            return self.engine.push_configs.create(task, params, caller.extensions).to_json()

    async def _m_GetTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params, "read-config")
        config = self.engine.push_configs.get(task, params["id"])
        if config is None:
            raise RpcError(
                "TaskNotFoundError",
                "Push notification config not found",
                reason="PUSH_CONFIG_NOT_FOUND",
                metadata={"taskId": task.id, "id": params["id"]},
            )
        return config.to_json()

    async def _m_ListTaskPushNotificationConfigs(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        configs = self.engine.push_configs.list(self._push_task(caller, params, "list-configs"))
        return {"configs": [c.to_json() for c in configs], "nextPageToken": ""}

    async def _m_DeleteTaskPushNotificationConfig(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self._push_task(caller, params, "delete-config")
        with self.engine.store.transaction():
            self.engine.push_configs.delete(task, params["id"])
        return {}

    async def _m_GetTask(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = self.engine.get(caller, params["id"])
        return self.rendering.task(task, "GetTask", params.get("historyLength"))

    async def _m_CancelTask(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        task = await self.engine.cancel(caller, params["id"])
        return self.rendering.task(task, "CancelTask", None)

    async def _m_ListTasks(self, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
        tasks, token, page_size, total = self.engine.list(caller, params)
        include = bool(params.get("includeArtifacts"))
        artifacts = self.rendering.lists_artifacts(params)
        return {
            "tasks": [
                self.rendering.task(t, "ListTasks", params.get("historyLength"), artifacts=artifacts, always=include)
                for t in tasks
            ],
            "nextPageToken": token,
            "pageSize": page_size,
            "totalSize": total,
        }


parse_json = schemas.parse_json  # the one strict JSON reader


def params_schema(method: str) -> str:
    return f"methods/{method}.json#/$defs/params"


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
