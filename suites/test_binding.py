"""The binding: JSON-RPC 2.0 over HTTP, every method's answer a JSON-RPC response served as JSON."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient
from nylorun_a2a_kit.fixtures.requirements import axes, not_applicable
from nylorun_a2a_kit.fixtures.scenarios import methods

JSON_TYPES = ("application/json", "application/a2a+json")


@pytest.mark.req("BIND-02")
@pytest.mark.parametrize("method", methods.EVERY)
def test_answer_is_a_jsonrpc_response_in_json(a2a_client: A2AClient, method: str):
    # Each method's answer to a task nobody has: a result (ListTasks, SendMessage) or the method's own error.
    _judge_answer(methods.Harmless(method).post(a2a_client), method)


@pytest.mark.req("BIND-02")
@pytest.mark.parametrize("spelling", axes.members("BIND-02", "spellings"))
@pytest.mark.parametrize("method", methods.SERVED)
def test_every_spelling_of_the_media_type_is_served(a2a_client: A2AClient, method: str, spelling: str):
    """The request's Content-Type as a client may write it is a JSON request all the same; the answer's is read
    as a media type is: in any case, its parameters ignored, application/a2a+json a JSON type too."""
    call = methods.Harmless(method)
    headers = call.headers(a2a_client)
    if axes.subject(spelling) in ("request", "Content-Type"):
        headers = methods.respelled(headers, "Content-Type", axes.kind(spelling))
    _judge_answer(a2a_client.post(call.body(), method=method, headers=headers), method)


def _judge_answer(exchange, method: str) -> None:
    exchange.no_response_if_server_failed()  # no Response at all is ERR-14's; this rule is how a Response is served
    media_type = exchange.response_headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type == "text/event-stream" and method in ("SendStreamingMessage", "SubscribeToTask"):
        not_applicable(f"the Agent answers {method} as a stream (A2A §9.4.2), which STREAM-01 judges")
    if media_type not in JSON_TYPES:
        exchange.fail(f"a JSON-RPC answer must be served as JSON ({' or '.join(JSON_TYPES)}), got {media_type!r}")
    body = exchange.json
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or ("result" in body) == ("error" in body):
        exchange.fail('a JSON-RPC 2.0 answer has jsonrpc "2.0" and exactly one of result and error')
