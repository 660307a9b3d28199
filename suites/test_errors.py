"""JSON-RPC errors for what is not served: malformed requests, unknown methods and invalid params get the
standard codes."""

from __future__ import annotations

import json

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange
from nylorun_a2a_kit.fixtures.requirements import not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target

STANDARD_CODES = {-32700, -32600, -32601, -32602}
# A body past this may meet an Agent's size limit, and HTTP 413 is then a fitting answer; the pages set no
# limit, and common server defaults start at 100 kB.
SIZE_LIMIT_FLOOR = 64 * 1024
ENVELOPE = b'"jsonrpc": "2.0", "id": 1, "method": "ListTasks"'
# Each malformed request with the error it must get: a name fixes the code; STANDARD takes any standard code,
# where the pages leave the choice open; ANY_ERROR any JSON-RPC error (RFC 8259 §9 lets a parser limit depth
# and fixes no code); ANY_ANSWER a result too (RFC 8259 §9 lets a parser accept NaN and Infinity, §8.2 admits
# a lone surrogate, and A2A §5.7 has unknown fields ignored: the request may then be served). ERR-03's
# decision. Left out on purpose: a request without id (a JSON-RPC notification, which gets no answer at all)
# and batches (A2A does not say).
STANDARD, ANY_ERROR, ANY_ANSWER = "standard", "any-error", "any-answer"
# The kit's preferred readings where the rules leave a point open, held to with --a2a-strict-spec=yes.
STRICT = {"params-an-empty-list": STANDARD}
MALFORMED = {
    # not JSON (RFC 8259): -32700 with id null
    "not-json": (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", ', "JSONParseError"),
    "empty-body": (b"", "JSONParseError"),
    "whitespace-only": (b" \r\n\t ", "JSONParseError"),
    "truncated-string": (b'{"jsonrpc": "2.0", "id": 1, "method": "ListT', "JSONParseError"),
    "single-quotes": (b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ListTasks'}", "JSONParseError"),
    "trailing-garbage": (b"{" + ENVELOPE + b', "params": {}} }', "JSONParseError"),
    "unquoted-key": (b'{jsonrpc: "2.0", "id": 1, "method": "ListTasks"}', "JSONParseError"),
    "trailing-comma": (b"{" + ENVELOPE + b', "params": {},}', "JSONParseError"),
    "invalid-utf8": (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', STANDARD),
    "nan": (b"{" + ENVELOPE + b', "params": {"kitValue": NaN}}', ANY_ANSWER),
    "infinity": (b"{" + ENVELOPE + b', "params": {"kitValue": -Infinity}}', ANY_ANSWER),
    "lone-surrogate": (b"{" + ENVELOPE + b', "params": {"contextId": "\\ud800"}}', ANY_ANSWER),
    "nested-100k-deep": (b"[" * 100_000 + b"]" * 100_000, ANY_ERROR),
    # JSON, but not a Request object: -32600
    "null": (b"null", "InvalidRequestError"),
    "number": (b"1", "InvalidRequestError"),
    "string": (b'"ListTasks"', "InvalidRequestError"),
    "boolean": (b"true", "InvalidRequestError"),
    "empty-array": (b"[]", "InvalidRequestError"),
    "empty-object": (b"{}", "InvalidRequestError"),
    "no-method": (b'{"jsonrpc": "2.0", "id": 1, "params": {}}', "InvalidRequestError"),
    "no-jsonrpc": (b'{"id": 1, "method": "ListTasks", "params": {}}', "InvalidRequestError"),
    "wrong-jsonrpc-version": (
        b'{"jsonrpc": "1.0", "id": 1, "method": "ListTasks", "params": {}}',
        "InvalidRequestError",
    ),
    "jsonrpc-a-number": (b'{"jsonrpc": 2.0, "id": 1, "method": "ListTasks", "params": {}}', "InvalidRequestError"),
    "method-not-a-string": (b'{"jsonrpc": "2.0", "id": 1, "method": 7, "params": {}}', "InvalidRequestError"),
    "method-null": (b'{"jsonrpc": "2.0", "id": 1, "method": null, "params": {}}', "InvalidRequestError"),
    "method-a-list": (b'{"jsonrpc": "2.0", "id": 1, "method": ["ListTasks"], "params": {}}', "InvalidRequestError"),
    "id-an-object": (b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "ListTasks", "params": {}}', "InvalidRequestError"),
    "id-a-list": (b'{"jsonrpc": "2.0", "id": [1], "method": "ListTasks", "params": {}}', "InvalidRequestError"),
    "id-a-boolean": (b'{"jsonrpc": "2.0", "id": true, "method": "ListTasks", "params": {}}', "InvalidRequestError"),
    # params that are no object: a bad envelope and bad params at once, so -32600 or -32602
    "params-not-an-object": (b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": 3}', STANDARD),
    "params-a-string": (b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": "{}"}', STANDARD),
    "params-null": (b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": null}', STANDARD),
    # JSON-RPC 2.0 §4.2 allows params by position, and every ListTasks param is optional: an empty array may be
    # served as "no params". The kit's preferred reading (A2A's params are objects: refuse) is --a2a-strict-spec.
    "params-an-empty-list": (b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": []}', ANY_ANSWER),
}


@pytest.mark.req("ERR-03")
@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_request_gets_the_standard_error(a2a_client: A2AClient, a2a_target: Target, case: str):
    body, name = MALFORMED[case]
    if a2a_target.strict_spec and case in STRICT:
        name = STRICT[case]
    exchange = a2a_client.post(body, method="(malformed)", schema="jsonrpc/Response.json")
    if exchange.status == 413 and len(body) > SIZE_LIMIT_FLOOR:
        return  # the Agent's body size limit refused it first: a fitting refusal (ERR-03's decision)
    if exchange.status is not None and exchange.status >= 500 and not exchange.is_error:
        exchange.fail("a malformed request must get a JSON-RPC error, not a server failure")
    if name == ANY_ANSWER:
        if not exchange.is_error:
            exchange.ok()
    elif name == ANY_ERROR:
        exchange.expect_any_error()
    elif name == STANDARD:  # the pages fix no single code: any standard JSON-RPC error is a right answer
        if exchange.error.get("code") not in STANDARD_CODES:
            exchange.fail(f"expected a standard JSON-RPC error ({sorted(STANDARD_CODES)})")
    else:
        exchange.expect_error(name)
    if name == "JSONParseError" and exchange.json.get("id") is not None:
        exchange.fail("the answer to unparseable JSON must have id null")


def _answered(exchange: Exchange) -> str:
    """What an answer is, as far as the envelope decides: a result, or an error of its code."""
    return f"error {exchange.error.get('code')}" if exchange.is_error else "a result"


@pytest.mark.req("ERR-03")
def test_list_tasks_without_params_is_answered_as_with_empty_params(a2a_client: A2AClient, a2a_target: Target):
    """JSON-RPC 2.0 §4.2: params MAY be omitted, and every field of ListTasksRequest is optional (a2a.proto). A
    method's own signature may still ask for params: -32602 for none is a reading the rules leave open (an SDK
    peer answers so), and the kit's preferred one, served as params {}, is held to with --a2a-strict-spec=yes.
    Anything else (another error, an HTTP failure) fails. GetExtendedAgentCard without params is UNSRV-03's."""
    omitted = a2a_client.call("ListTasks", None)  # no params member at all
    empty = a2a_client.call("ListTasks", {})
    refused = omitted.is_error and omitted.error.get("code") == -32602
    if _answered(omitted) != _answered(empty) and (a2a_target.strict_spec or not refused):
        omitted.fail(
            f"JSON-RPC 2.0 §4.2 lets a request omit params: ListTasks without them is answered as with params {{}} "
            f"({_answered(empty)}){'' if a2a_target.strict_spec else ' or refused -32602'}, got {omitted.answer_line()}"
        )


# Names that are no A2A 1.0 method: A2A 0.3's, an A2A method in another case (JSON-RPC method names are
# strings, matched as written), a near miss, one nobody uses.
UNKNOWN_METHODS = {
    "0.3-message-send": "message/send",
    "0.3-tasks-get": "tasks/get",
    "0.3-tasks-cancel": "tasks/cancel",
    "camel-case": "sendMessage",
    "lower-case": "sendmessage",
    "upper-case": "GETTASK",
    "near-miss": "GetTasks",
    "made-up": "KitNoSuchMethod",
}

OLD_NAMES = ("message/send", "tasks/get", "tasks/cancel")  # an Agent serving 0.3 and 1.0 may keep these
A2A_CODES = frozenset(schemas.error_reasons())  # the codes of A2A's own errors


@pytest.mark.req("ERR-05")
@pytest.mark.parametrize("name", list(UNKNOWN_METHODS.values()), ids=list(UNKNOWN_METHODS))
def test_unknown_method_is_not_found(a2a_client: A2AClient, a2a_target: Target, name: str):
    # Params a method of that name could take (a message, a task id that does not exist), so that a name
    # served after all answers what the method answers, not -32601.
    params = {"id": drivers.new_context(), "message": methods.Harmless("SendMessage").params["message"]}
    exchange = a2a_client.call(name, params)
    error = exchange.json.get("error") if isinstance(exchange.json, dict) else None
    # Served: a result, or what a method answers (an A2A error, or -32602 on its params); never an envelope's error.
    served = not isinstance(error, dict) or error.get("code") in {*A2A_CODES, methods.INVALID_PARAMS}
    if name in OLD_NAMES and served and not a2a_target.strict_spec:
        not_applicable(
            f"the Agent serves {name}, A2A 0.3's name, as a method of its own ({exchange.answer_line()}): nothing in "
            "A2A 1.0 forbids a server extra methods, and ERR-05 is for a method it does not have (--a2a-strict-spec "
            "holds it to 1.0's names alone)"
        )
    exchange.expect_error("MethodNotFoundError")


@pytest.mark.req("ERR-06")
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "data": {}}]}}),
        ("SendMessage", {"message": {"messageId": 5, "role": "ROLE_USER", "parts": [{"text": "a"}]}}),
        ("GetTask", {"id": 42}),
        ("ListTasks", {"pageSize": "ten"}),
    ],
    ids=["send-part-two-contents", "send-message-id-not-a-string", "get-id-not-string", "list-page-size-not-a-number"],
)
def test_invalid_params_get_invalid_params(a2a_client: A2AClient, a2a_target: Target, method: str, params: dict):
    exchange = a2a_client.call(method, params)
    fitting = methods.validation_codes(method, a2a_target.strict_spec)
    if exchange.expect_any_error().get("code") not in fitting:
        exchange.fail(f"params that break {method}'s schema are refused with one of {sorted(fitting)} (ERR-06)")


@pytest.mark.req("ERR-13")
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("SendMessage", {}),
        ("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        ("GetTask", {}),
        ("CancelTask", {}),
    ],
    ids=["send-no-message", "send-no-parts", "get-no-id", "cancel-no-id"],
)
def test_params_missing_what_is_required_get_invalid_params(a2a_client: A2AClient, method: str, params: dict):
    a2a_client.call(method, params).expect_error("InvalidParamsError")


@pytest.mark.req("ERR-13")
def test_an_unknown_status_filter_is_refused_or_ignored(a2a_client: A2AClient, a2a_target: Target):
    # A ProtoJSON parser set to ignore unknown fields drops an unknown enum value (A2A §5.7): the request is
    # then served as if unfiltered. The kit's preferred reading, a refusal (A2A §6.5's example), is --a2a-strict-spec.
    exchange = a2a_client.call("ListTasks", {"status": "TASK_STATE_RUNNING"})
    if a2a_target.strict_spec or exchange.is_error:
        exchange.expect_error("InvalidParamsError")


@pytest.mark.req("ERR-07")
def test_invalid_params_name_the_field(a2a_client: A2AClient):
    exchange = a2a_client.call("GetTask", {"id": "x", "historyLength": "five"})
    exchange.expect_error("InvalidParamsError")
    detail = exchange.detail("BadRequest")
    if detail is None:
        exchange.fail("-32602 should carry a google.rpc.BadRequest detail")
    fields = [v.get("field", "") for v in detail.get("fieldViolations", [])]
    if not any("historyLength" in f for f in fields):
        exchange.fail(f"the BadRequest detail should name historyLength, names {fields}")


@pytest.mark.req("ERR-08")
def test_unknown_fields_are_ignored(a2a_client: A2AClient):
    params = {"contextId": drivers.new_context(), "kitUnknownField": {"nested": [1, 2]}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}).encode()
    exchange = a2a_client.post(body, method="ListTasks", schema="methods/ListTasks.json#/$defs/response")
    if exchange.is_error:
        exchange.fail("an unknown field in params should be ignored (A2A §5.7), not refused")
