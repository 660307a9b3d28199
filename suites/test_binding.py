"""The binding: JSON-RPC 2.0 over HTTP, answered as JSON."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.scenarios import drivers

JSON_TYPES = ("application/json", "application/a2a+json")


@pytest.mark.req("BIND-02")
@pytest.mark.parametrize("method", ["ListTasks", "GetTask"])
def test_answer_is_a_jsonrpc_response_in_json(a2a_client: A2AClient, method: str):
    params = {"contextId": drivers.new_context()} if method == "ListTasks" else {"id": drivers.new_context()}
    exchange = a2a_client.call(method, params)
    media_type = exchange.response_headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in JSON_TYPES:
        exchange.fail(f"a JSON-RPC answer must be served as JSON ({' or '.join(JSON_TYPES)}), got {media_type!r}")
    body = exchange.json
    if body.get("jsonrpc") != "2.0" or ("result" in body) == ("error" in body):
        exchange.fail('a JSON-RPC 2.0 answer has jsonrpc "2.0" and exactly one of result and error')
