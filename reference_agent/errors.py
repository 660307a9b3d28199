"""JSON-RPC errors as the reference agent answers them: an A2A code with a ``google.rpc`` detail."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit.schemas import error_code

# The domain A2A gives its errors (§9.5's example; §10.6 and §11.6 fix it for the other bindings).
ERROR_DOMAIN = "a2a-protocol.org"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


class RpcError(Exception):
    """An error answer: ``name`` is the error's name in ``schemas/jsonrpc/error-codes.json``."""

    def __init__(
        self,
        name: str,
        message: str,
        *,
        reason: str,
        metadata: dict[str, Any] | None = None,
        violations: list[tuple[str, str]] | None = None,
    ):
        super().__init__(message)
        self.name = name
        self.code = error_code(name)
        self.message = message
        self.reason = reason
        # Metadata echoes what the caller sent; bounded so a huge id is not sent back whole.
        self.metadata = {k: str(v)[:256] for k, v in (metadata or {}).items()}
        self.violations = violations or []

    def to_json(self) -> dict[str, Any]:
        data: list[dict[str, Any]] = [
            {"@type": ERROR_INFO, "reason": self.reason, "domain": ERROR_DOMAIN, "metadata": self.metadata}
        ]
        if self.violations:
            violations = [{"field": field, "description": description} for field, description in self.violations]
            data.append({"@type": BAD_REQUEST, "fieldViolations": violations})
        return {"code": self.code, "message": self.message, "data": data}


def invalid_params(violations: list[tuple[str, str]]) -> RpcError:
    fields = ", ".join(field for field, _ in violations[:5])
    return RpcError(
        "InvalidParamsError",
        f"Invalid parameters: {fields}",
        reason="INVALID_ARGUMENT",
        violations=violations,
    )


def task_not_found(task_id: str) -> RpcError:
    return RpcError("TaskNotFoundError", "Task not found", reason="TASK_NOT_FOUND", metadata={"taskId": task_id})


def unsupported(message: str, reason: str, **metadata: Any) -> RpcError:
    return RpcError("UnsupportedOperationError", message, reason=reason, metadata=metadata)
