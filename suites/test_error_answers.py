"""What every JSON-RPC answer carries: the request's id on every method, and on every error its code, message
and details (google.rpc.ErrorInfo for the A2A errors); a notification, on any method, gets no reply."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from nylorun_a2a_kit.fixtures import oracle
from nylorun_a2a_kit.fixtures.client import A2AClient, Exchange, new_id, strict_json
from nylorun_a2a_kit.fixtures.requirements import not_applicable
from nylorun_a2a_kit.fixtures.scenarios import drivers, methods
from nylorun_a2a_kit.fixtures.target import Target

# Ids of every form JSON-RPC 2.0 allows; null, which some servers mistake for a notification, is ERR-14's
# (suites/test_responses.py).
REQUEST_IDS = {
    "string": "kit-string-id",
    "integer": 7,
    "zero": 0,
    "negative": -42,
    "largest-safe-integer": 2**53 - 1,
    "empty-string": "",
    "non-ascii-string": "идентификатор-✓",
    "uuid-string": "5f0c6a52-8a3e-4f0e-9a51-0c5d8f7e2b11",
    "numeric-string": "7",
    "long-string": "kit-long-id-" + "x" * 500,  # past any column or log line a server might keep ids in
}
EVERY_ID = pytest.mark.parametrize("request_id", list(REQUEST_IDS.values()), ids=list(REQUEST_IDS))
EVERY_METHOD = pytest.mark.parametrize("method", methods.EVERY)


@pytest.mark.req("ERR-01")
@EVERY_ID
@EVERY_METHOD
def test_answer_carries_the_request_id(a2a_client: A2AClient, method: str, request_id):
    methods.Harmless(method).send(a2a_client, request_id=request_id)  # call() checks the id, value and type


@pytest.mark.req("ERR-16")
@pytest.mark.parametrize("request_id", [2**53 + 1, -(2**53 + 1)], ids=["above", "below"])
@EVERY_METHOD
def test_an_id_past_double_precision_is_answered_exactly(a2a_client: A2AClient, method: str, request_id: int):
    methods.Harmless(method).send(a2a_client, request_id=request_id)  # call() checks the id, value and type


# Errors answered before any method runs: each must still carry the request's id. Each refusal is its own
# requirement's (the second of the pair): an answer that refuses nothing is judged there, not here.
REFUSALS = {
    "version-refused": (
        lambda client, rid: methods.Harmless("ListTasks").send(client, version="9.9", request_id=rid),
        "VER-04",
    ),
    "method-not-found": (lambda client, rid: client.call("KitNoSuchMethod", {}, request_id=rid), "ERR-05"),
    "invalid-params": (lambda client, rid: client.call("ListTasks", {"pageSize": "ten"}, request_id=rid), "ERR-06"),
}


@pytest.mark.req("ERR-01")
@EVERY_ID
@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_refusal_carries_the_request_id(a2a_client: A2AClient, refusal: str, request_id):
    send, owner = REFUSALS[refusal]
    send(a2a_client, request_id).expect_refusal(None, owner=owner)  # call() checked the id, value and type


@pytest.mark.req("ERR-01")
@EVERY_METHOD
def test_whole_number_id_written_with_a_fraction_is_echoed_or_refused(a2a_client: A2AClient, method: str):
    call = methods.Harmless(method)
    body = call.body(a2a_client, "ID").replace(b'"id": "ID"', b'"id": 1.0')
    exchange = a2a_client.post(body, method=method, headers=call.headers(a2a_client), schema="jsonrpc/Response.json")
    answered = exchange.json.get("id")
    refused = exchange.is_error and exchange.error.get("code") == -32600 and answered is None
    if not refused and (isinstance(answered, bool) or answered != 1):
        exchange.fail(
            "the id 1.0 is the number 1: echo it (as 1 or 1.0), or refuse the envelope with -32600 and id null"
        )


# -- the errors themselves


@dataclass(frozen=True)
class Provoked:
    """A call that draws the error ``name`` from any Agent the case applies to."""

    name: str
    provoke: Callable[[A2AClient], Exchange]
    owner: str  # the requirement that has the target answer ``name`` here: another answer is judged there
    needs: str = ""  # "push", "no-push", "no-streaming" or "no-extended-card": what the card must say


def _on_ended_task(method: str) -> Callable[[A2AClient], Exchange]:
    def provoke(client: A2AClient) -> Exchange:
        task = drivers.ordinary(client, ended=True)  # any turn that ended: no scenario needed
        if method == "CancelTask":
            return client.cancel(task["id"])
        return client.send(drivers.ORDINARY_TEXT, task_id=task["id"], context_id=task["contextId"])

    return provoke


def _harmless(method: str, version: str = "1.0") -> Callable[[A2AClient], Exchange]:
    return lambda client: methods.Harmless(method).send(client, version=version)


def _message_to_missing_task(client: A2AClient) -> Exchange:
    return client.send(drivers.ORDINARY_TEXT, task_id=new_id("kit-missing-task"))


def _envelope(method: str, params: dict, jsonrpc: str = "2.0") -> bytes:
    return json.dumps({"jsonrpc": jsonrpc, "id": 1, "method": method, "params": params}).encode()


NOT_FOUND, UNSUPPORTED = "TaskNotFoundError", "UnsupportedOperationError"
A2A_ERRORS = {
    "GetTask-missing-task": Provoked(NOT_FOUND, _harmless("GetTask"), "TASK-05"),
    "CancelTask-missing-task": Provoked(NOT_FOUND, _harmless("CancelTask"), "CANCEL-03"),
    "SendMessage-missing-task": Provoked(NOT_FOUND, _message_to_missing_task, "SEND-07"),
    **{f"{m}-missing-task": Provoked(NOT_FOUND, _harmless(m), "PUSH-17", "push") for m in methods.PUSH_CONFIG},
    **{
        f"{m}-without-push": Provoked("PushNotificationNotSupportedError", _harmless(m), "PUSH-03", "no-push")
        for m in methods.PUSH_CONFIG
    },
    "CancelTask-ended-task": Provoked("TaskNotCancelableError", _on_ended_task("CancelTask"), "CANCEL-02"),
    "SendMessage-ended-task": Provoked(UNSUPPORTED, _on_ended_task("SendMessage"), "SEND-09"),
    "SendStreamingMessage": Provoked(UNSUPPORTED, _harmless("SendStreamingMessage"), "STREAM-04", "no-streaming"),
    "SubscribeToTask": Provoked(UNSUPPORTED, _harmless("SubscribeToTask"), "STREAM-04", "no-streaming"),
    "GetExtendedAgentCard": Provoked(UNSUPPORTED, _harmless("GetExtendedAgentCard"), "CARD-11", "no-extended-card"),
    "version-9.9": Provoked("VersionNotSupportedError", _harmless("ListTasks", "9.9"), "VER-04"),
}
A2A_ERROR_CASES = [pytest.param(case, id=case) for case in A2A_ERRORS]
# Requests no method serves, which get the standard JSON-RPC errors (-32700, -32600, -32601, -32602).
STANDARD_ERRORS = {
    "parse-error": b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", ',
    "invalid-request": _envelope("ListTasks", {}, jsonrpc="1.0"),
    "method-not-found": _envelope("KitNoSuchMethod", {}),
    "invalid-params": _envelope("ListTasks", {"pageSize": "ten"}),
}
STANDARD_OWNERS = {"parse-error": "ERR-03", "invalid-request": "ERR-03", "method-not-found": "ERR-05"}
STANDARD_OWNERS["invalid-params"] = "ERR-06"
EVERY_ERROR_CASE = A2A_ERROR_CASES + [pytest.param(case, id=case) for case in STANDARD_ERRORS]


def _applies(a2a_target: Target, needs: str) -> None:
    capabilities = a2a_target.card.get("capabilities") or {}
    if needs == "push" and not capabilities.get("pushNotifications"):
        not_applicable("the card says pushNotifications false: the config methods answer -32003 instead")
    if needs == "no-push" and capabilities.get("pushNotifications"):
        not_applicable("the card says pushNotifications true (the Runtime has a push secret)")
    if needs == "no-streaming" and capabilities.get("streaming"):
        not_applicable("the card says streaming true: the streaming methods are served")
    if needs == "no-extended-card" and capabilities.get("extendedAgentCard"):
        not_applicable("the card says extendedAgentCard true: GetExtendedAgentCard is served")


def _error_answer(a2a_target: Target, a2a_client: A2AClient, case: str) -> tuple[Exchange, dict]:
    """The answer of one error case and its error object. That the case is refused, and with which code, is its own
    requirement's (an A2A error's owner, ERR-03, ERR-05, ERR-06): another answer leaves this check not checked."""
    if case in STANDARD_ERRORS:
        exchange = a2a_client.post(STANDARD_ERRORS[case], method=f"({case})", schema="jsonrpc/Response.json")
        return exchange, exchange.expect_refusal(None, owner=STANDARD_OWNERS[case])
    provoked = A2A_ERRORS[case]
    _applies(a2a_target, provoked.needs)
    exchange = provoked.provoke(a2a_client)
    return exchange, exchange.expect_refusal(provoked.name, owner=provoked.owner)


def _error_info(a2a_target: Target, a2a_client: A2AClient, case: str, missing: str) -> tuple[Exchange, dict]:
    """The answer of one A2A error case and its ErrorInfo detail; the check fails with ``missing`` without one."""
    exchange, _ = _error_answer(a2a_target, a2a_client, case)
    info = exchange.detail("ErrorInfo")
    if info is None:
        exchange.fail(missing)
    return exchange, info


ERROR_INFO_MISSING = "an A2A error must carry a google.rpc.ErrorInfo detail (reason, domain, metadata)"


@pytest.mark.req("ERR-02")
@pytest.mark.parametrize("case", A2A_ERROR_CASES)
def test_a2a_errors_carry_error_info(a2a_target: Target, a2a_client: A2AClient, case: str):
    exchange, info = _error_info(a2a_target, a2a_client, case, ERROR_INFO_MISSING)
    missing = [f for f in ("reason", "domain") if not isinstance(info.get(f), str) or not info[f]]
    if missing or not isinstance(info.get("metadata", {}), dict):
        exchange.fail(f"the ErrorInfo must have a reason, a domain and a metadata map; {missing or 'metadata'} wrong")


@pytest.mark.req("ERR-09")
@pytest.mark.parametrize("case", EVERY_ERROR_CASE)
def test_error_objects_carry_code_and_message(a2a_target: Target, a2a_client: A2AClient, case: str):
    exchange, error = _error_answer(a2a_target, a2a_client, case)  # the code is the one A2A maps the error to
    if not isinstance(error.get("message"), str):
        exchange.fail("every error object carries a message string")


A2A_DOMAIN = "a2a-protocol.org"


@pytest.mark.req("ERR-10")
@pytest.mark.parametrize("case", A2A_ERROR_CASES)
def test_a2a_errors_name_the_a2a_domain(a2a_target: Target, a2a_client: A2AClient, case: str):
    missing = f"an A2A error should carry a google.rpc.ErrorInfo with domain {A2A_DOMAIN!r} (A2A §9.5)"
    exchange, info = _error_info(a2a_target, a2a_client, case, missing)
    if info.get("domain") != A2A_DOMAIN:
        exchange.fail(f"the ErrorInfo domain should be {A2A_DOMAIN!r} (A2A §9.5), got {info.get('domain')!r}")


@pytest.mark.req("ERR-15")
@pytest.mark.parametrize("case", A2A_ERROR_CASES)
def test_a2a_errors_never_give_another_errors_reason(a2a_target: Target, a2a_client: A2AClient, case: str):
    """Each A2A error the kit can draw: an ErrorInfo reason that is another A2A error's own fails (the kit's model
    judges every other error answer of the run the same way)."""
    exchange, error = _error_answer(a2a_target, a2a_client, case)
    own = oracle.rules.a2a_reasons().get(error.get("code"))
    others = {reason for code, reason in oracle.rules.a2a_reasons().items() if code != error.get("code")}
    info = exchange.detail("ErrorInfo") or {}
    if info.get("reason") in others and info.get("domain") in (A2A_DOMAIN, None, ""):
        exchange.fail(f"the reason {info.get('reason')!r} is another A2A error's: a {error.get('code')} is {own}")


def _detail_problems(error: dict) -> list[str]:
    if "data" not in error:
        return []
    data = error["data"]
    if not isinstance(data, list):
        return [f"data is {type(data).__name__}, not the array of error details A2A §9.5 maps it to"]
    return [
        f"data[{i}] has no @type: {item!r}"[:200]
        for i, item in enumerate(data)
        if not isinstance(item, dict) or not isinstance(item.get("@type"), str) or not item["@type"]
    ]


@pytest.mark.req("ERR-11")
@pytest.mark.parametrize("case", EVERY_ERROR_CASE)
def test_error_details_carry_their_type(a2a_target: Target, a2a_client: A2AClient, case: str):
    exchange, error = _error_answer(a2a_target, a2a_client, case)
    problems = _detail_problems(error)  # the answer's schema already requires it; the check says so in its words
    if problems:
        exchange.fail(f"each error detail is an object with a @type (A2A §9.5): {'; '.join(problems)}")


@pytest.mark.req("ERR-12")
@EVERY_METHOD
def test_notification_gets_no_reply(a2a_client: A2AClient, method: str):
    # Each method's notification names a task nobody has: served, most would answer an error, which a
    # notification must not get either (JSON-RPC 2.0 §4.1: the server does not reply, whatever the outcome).
    call = methods.Harmless(method)
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": call.params}).encode()
    exchange = a2a_client.post(body, method=method, headers=call.headers(a2a_client))
    if exchange.status is not None and exchange.status >= 500:
        exchange.fail(f"a notification must not meet a server failure, got HTTP {exchange.status}")
    if exchange.events is not None:  # a stream: each event's data is a response (A2A §9.4.2), so any is a reply
        replies = [e for e in exchange.events if _is_response(e)]
        if replies:
            exchange.fail(
                "a request without id is a notification: JSON-RPC 2.0 §4.1 has the server send no reply, but it "
                f"was answered with a stream of {len(replies)} JSON-RPC response(s)"
            )
        return
    try:
        answered = strict_json(exchange.response_body) if exchange.response_body.strip() else None
    except ValueError:
        answered = None
    if _is_response(answered):
        exchange.fail("a request without id is a notification: JSON-RPC 2.0 §4.1 has the server send no reply")


def _is_response(body: object) -> bool:
    return isinstance(body, dict) and ("result" in body or "error" in body)
