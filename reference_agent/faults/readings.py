"""Readings A2A 1.0 leaves open, as deviations of the reference agent: each fails only under --a2a-strict-spec, the
option that asks the kit's preferred reading, and passes without it (the kit's tests prove both)."""

from __future__ import annotations

from typing import Any

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.reference_agent.errors import RpcError
from nylorun_a2a_kit.reference_agent.faults import wire
from nylorun_a2a_kit.reference_agent.faults.catalog import declare
from nylorun_a2a_kit.reference_agent.rpc import Problems, Reading

STRICT = ("--a2a-strict-spec=yes",)
OLD_NAMES = {"message/send": "SendMessage", "tasks/get": "GetTask", "tasks/cancel": "CancelTask"}
CONTENTS = ("text", "raw", "url", "data")
HISTORY_CAP = 10


@declare(
    "a2a-0.3-method-names-served",
    "A2A 0.3's method names (message/send, tasks/get, tasks/cancel) are served as the 1.0 methods they became, as an "
    "Agent serving both versions may (extra methods: --a2a-strict-spec asks 1.0's names alone)",
    "ERR-05",
    run_with=STRICT,
)
class OldMethodNamesServed(Reading):
    def envelope(self, request: Any) -> tuple[Any, Problems]:
        request, problems = super().envelope(request)
        method = request.get("method") if isinstance(request, dict) else None
        if not problems and method in OLD_NAMES:
            request = {**request, "method": OLD_NAMES[method]}
        return request, problems


def _two_contents(params: dict[str, Any]) -> bool:
    message = params.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return isinstance(parts, list) and any(
        isinstance(part, dict) and sum(name in part for name in CONTENTS) > 1 for part in parts
    )


@declare(
    "message-content-refused-as-content-type",
    "a message with a part of two contents is refused with ContentTypeNotSupportedError (-32005), which A2A §5.4 maps "
    "to INVALID_ARGUMENT as it maps -32602 (--a2a-strict-spec asks -32602, A2A §3.3.2's example code)",
    "ERR-06",
    run_with=STRICT,
)
@wire.answers
def message_content_refused_as_content_type(call: wire.Call) -> None:
    error = call.answer.get("error") or {}
    refused = error.get("code") == schemas.error_code("InvalidParamsError")
    if call.method in ("SendMessage", "SendStreamingMessage") and refused and _two_contents(call.params):
        reason = schemas.error_reasons()[schemas.error_code("ContentTypeNotSupportedError")]
        call.answer_error(RpcError("ContentTypeNotSupportedError", "A part carries exactly one content", reason=reason))


def _asked(method: str, params: dict[str, Any]) -> Any:
    if method in ("SendMessage", "SendStreamingMessage"):
        configuration = params.get("configuration")
        return configuration.get("historyLength") if isinstance(configuration, dict) else None
    return params.get("historyLength")


@declare(
    "history-length-past-a-cap-refused",
    f"a historyLength above {HISTORY_CAP} is refused with -32602 ('cannot exceed {HISTORY_CAP}'), on every method "
    "that takes one: a lower limit of the Agent's own, which a2a.proto lets a server apply (--a2a-strict-spec asks "
    "it served, capped)",
    "TASK-09",
    "SEND-12",
    "LIST-11",
    run_with=STRICT,
)
class HistoryLengthPastACapRefused(Reading):
    def params(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Problems]:
        params, problems = super().params(method, params)
        asked = _asked(method, params)
        if isinstance(asked, int) and not isinstance(asked, bool) and asked > HISTORY_CAP:
            problems = [*problems, ("historyLength", f"historyLength cannot exceed {HISTORY_CAP}")]
        return params, problems
