"""Every request with an id gets a JSON-RPC Response: for every method, with good params and with broken ones.

The other checks, when an answer they were due is no Response (an HTTP server failure, another body, a
dropped connection), report it here, under ERR-14, instead of failing a rule they could not judge.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from nylorun_a2a_kit import schemas
from nylorun_a2a_kit.fixtures.client import A2AClient, looks_like_jsonrpc, new_id
from nylorun_a2a_kit.fixtures.requirements import not_checked
from nylorun_a2a_kit.fixtures.scenarios import drivers

METHODS = sorted(schemas.method_names())


def _good_params(method: str) -> dict[str, Any]:
    """Params a correct Agent answers quickly, whatever it serves: a task that does not exist, an empty list."""
    task = new_id("task")
    if method == "SendMessage":
        message = {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": drivers.ORDINARY_TEXT}]}
        return {
            "message": {**message, "contextId": drivers.new_context()},
            "configuration": {"returnImmediately": True},
        }
    if method == "SendStreamingMessage":
        return {"message": {"messageId": new_id("msg"), "role": "ROLE_USER", "parts": [{"text": "hello"}]}}
    if method == "ListTasks":
        return {"contextId": drivers.new_context(), "pageSize": 1}
    if method in ("GetTask", "CancelTask", "SubscribeToTask"):
        return {"id": task}
    if method == "GetExtendedAgentCard":
        return {}
    if method == "CreateTaskPushNotificationConfig":
        return {"taskId": task, "url": "http://127.0.0.1:9/hook"}
    if method == "ListTaskPushNotificationConfigs":
        return {"taskId": task}
    return {"taskId": task, "id": new_id("config")}


def _required(method: str) -> list[str]:
    """The REQUIRED fields of the method's params, from its request object's schema."""
    params = schemas.resolve(f"methods/{method}.json#/$defs/params")
    if "$ref" in params:
        params = schemas.resolve(params["$ref"].removeprefix("../"))
    return list(params.get("required") or [])


def _without_a_required_field(method: str) -> dict[str, Any]:
    """The good params with their first required field left out (the message of SendMessage, a task's id)."""
    left_out = _required(method)[0]
    return {k: v for k, v in _good_params(method).items() if k != left_out}


def _with_a_field_of_the_wrong_type(method: str) -> dict[str, Any]:
    """The good params with their first required field a list (no A2A request field is one)."""
    return {**_good_params(method), _required(method)[0]: ["kit-wrong-type"]}


def _answered(client: A2AClient, method: str, params: dict[str, Any], request_id: Any = ...) -> Any:
    request_id = new_id("req") if request_id is ... else request_id
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    headers = {**client.headers(), "Accept": "application/json, text/event-stream"}
    exchange = client.post(body, method=method, headers=headers)
    if exchange.status is not None and 400 <= exchange.status < 500 and not looks_like_jsonrpc(exchange):
        not_checked(f"{method} got the HTTP refusal {exchange.status}, which the authentication checks judge")
    if not looks_like_jsonrpc(exchange):
        exchange.fail(f"{method} must be answered with a JSON-RPC Response (a result or an error), whatever it serves")
    task = exchange.json.get("result", {}) if isinstance(exchange.json, dict) else {}
    if method == "SendMessage" and isinstance(task, dict) and isinstance(task.get("task"), dict):
        drivers.cancel_quietly(client, task["task"].get("id", ""))
    return exchange


@pytest.mark.req("ERR-14")
@pytest.mark.parametrize("method", METHODS)
def test_every_method_answers_a_response(a2a_client: A2AClient, method: str):
    _answered(a2a_client, method, _good_params(method))


@pytest.mark.req("ERR-14")
@pytest.mark.parametrize("method", [m for m in METHODS if _required(m)])
def test_a_request_missing_a_required_field_gets_a_response(a2a_client: A2AClient, method: str):
    _answered(a2a_client, method, _without_a_required_field(method))


@pytest.mark.req("ERR-14")
@pytest.mark.parametrize("method", [m for m in METHODS if _required(m)])
def test_a_request_with_a_field_of_the_wrong_type_gets_a_response(a2a_client: A2AClient, method: str):
    _answered(a2a_client, method, _with_a_field_of_the_wrong_type(method))


@pytest.mark.req("ERR-14")
@pytest.mark.parametrize("method", METHODS)
def test_a_request_with_id_null_gets_a_response(a2a_client: A2AClient, method: str):
    # JSON-RPC 2.0 §4: an id is "a String, Number, or NULL value if included", and a notification is a request
    # without the id member (§4.1). A null id is discouraged, so any Response passes, a -32600 refusal included;
    # no Response (served as a notification), or one naming another id, does not.
    exchange = _answered(a2a_client, method, _good_params(method), request_id=None)
    answered = exchange.json.get("id", "no id")
    if answered is not None:
        exchange.fail(f"a request with id null is answered with id null (JSON-RPC 2.0 §5), got {answered!r}")
