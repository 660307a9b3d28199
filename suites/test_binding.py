"""The binding: JSON-RPC 2.0 over HTTP, every method's answer a JSON-RPC response served as JSON."""

from __future__ import annotations

import pytest

from nylorun_a2a_kit.fixtures.client import A2AClient, looks_like_jsonrpc
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
    _judge_answer(a2a_client.post(call.body(a2a_client), method=method, headers=headers), method)


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


# The methods a harmless call gets an error from (a task nobody has, a method a Profile v2 Agent does not serve); the
# answers served with a result are judged by the oracle on every exchange of the run.
REFUSED_HARMLESS = [m for m in methods.EVERY if m not in ("SendMessage", "ListTasks")]


@pytest.mark.req("BIND-03")
@pytest.mark.parametrize("method", REFUSED_HARMLESS)
def test_a_json_rpc_answer_is_no_http_refusal(a2a_client: A2AClient, method: str):
    """A profile client reads a 4xx or 5xx as the Runtime's refusal (401, 404 an unknown Agent, 429): the Agent's
    own answer, a result or an error such as a task not found, comes with a 2xx (a profile rule: a target that claims
    core only is not judged, as BIND-03's tier says)."""
    exchange = methods.Harmless(method).post(a2a_client)
    if exchange.status is not None and not 200 <= exchange.status < 300 and looks_like_jsonrpc(exchange):
        exchange.fail(
            f"the JSON-RPC answer to {method} came with HTTP {exchange.status}, which a client reads as a refusal"
        )
